"""The reviewed table of what tracecli makes of each OpInfo of torch's op database
(tests/opinfo/harness.py runs them, test_opinfo.py holds them to this table).

MODELED: OpInfos every sample of which traces without an opaque op, and agrees with
eager through both executors. NOT_MODELED: every other OpInfo, with its class
(harness.KINDS) and why: the opaque callables its traces call, tracecli's refusal, or, for
a crash or a wrong result, the defect, one line each, for someone to fix.

`python -m tests.opinfo.coverage --table` prints both tables as a run finds them (keeping
the reasons written here where the class has not changed): paste them over these and
review the diff.
"""

# The torch release whose op database this table describes.
TORCH_VERSION = "2.13"

MODELED = frozenset("""
H T __getitem__ __radd__ __rand__ __rdiv__ __rmatmul__ __rmod__ __rmul__ __ror__ __rpow__ __rsub__
__rxor__ abs acos acosh add addbmm addcdiv addcmul addmm addmm.decomposed addmv addr alias_copy all
amax amin aminmax angle any arange argmax argmin argsort argwhere asin asinh atan atan2 atanh
atleast_1d atleast_2d atleast_3d baddbmm bfloat16 bincount bitwise_and bitwise_left_shift
bitwise_not bitwise_or bitwise_right_shift bitwise_xor block_diag bmm bmm.triton_optimized bool
broadcast_shapes broadcast_tensors broadcast_to bucketize byte cartesian_prod cat cdist ceil char
cholesky cholesky_inverse cholesky_solve chunk clamp clamp_max clamp_min clone column_stack
combinations conj conj_physical constant_pad_nd contiguous copysign cos cosh count_nonzero cross
cummax cummin cumprod cumsum deg2rad diag diag_embed diagflat diagonal diagonal_copy diff digamma
dist div.floor_rounding div.no_rounding_mode div.trunc_rounding dot double dsplit dstack einsum
empty empty_like eq erf erfc erfinv exp exp2 expand expand_as expand_copy expm1 eye fft.fft fft.fft2
fft.fftn fft.fftshift fft.hfft fft.hfft2 fft.hfftn fft.ifft fft.ifft2 fft.ifftn fft.ifftshift
fft.ihfft fft.ihfft2 fft.ihfftn fft.irfft fft.irfft2 fft.irfftn fft.rfft fft.rfft2 fft.rfftn flatten
flip fliplr flipud float float_power floor floor_divide fmax fmin fmod frac full full_like gather
gcd ge geqrf gt half heaviside histc hsplit hstack hypot i0 igamma igammac index_add index_copy
index_fill index_put index_reduce.amax index_reduce.amin index_reduce.mean index_reduce.prod
index_select inner int isfinite isinf isnan isneginf isposinf isreal kron kthvalue lcm ldexp le lerp
lgamma linalg.cholesky linalg.cholesky_ex linalg.cond linalg.cross linalg.det linalg.diagonal
linalg.eig linalg.eigh linalg.eigvals linalg.eigvalsh linalg.householder_product linalg.inv
linalg.inv_ex linalg.ldl_factor linalg.ldl_factor_ex linalg.ldl_solve linalg.lstsq
linalg.lstsq.grad_oriented linalg.lu linalg.lu_factor linalg.lu_factor_ex linalg.lu_solve
linalg.matrix_power linalg.matrix_rank linalg.matrix_rank.hermitian linalg.multi_dot linalg.norm
linalg.norm.subgradients_at_zero linalg.pinv linalg.pinv.hermitian linalg.pinv.singular linalg.qr
linalg.slogdet linalg.solve linalg.solve_ex linalg.solve_triangular linalg.svd linalg.svdvals
linalg.tensorinv linalg.tensorsolve linalg.vander linalg.vecdot linalg.vector_norm linspace
linspace.tensor_overload log log10 log1p log2 log_softmax log_softmax.with_dtype logaddexp
logaddexp2 logcumsumexp logdet logical_and logical_not logical_or logical_xor logit logspace
logspace.tensor_overload logsumexp long lt lu lu_solve lu_unpack mH mT masked.amax masked.amin
masked.argmax masked.argmin masked.cumprod masked.cumsum masked.log_softmax masked.logaddexp
masked.logsumexp masked.mean masked.median masked.norm masked.normalize masked.prod masked.softmax
masked.softmin masked.std masked.sum masked.var masked_fill masked_scatter masked_select matmul
matrix_exp max.binary max.reduction_no_dim max.reduction_with_dim maximum mean median
meshgrid.list_of_tensors meshgrid.variadic_tensors min.binary min.reduction_no_dim
min.reduction_with_dim minimum mm mode movedim msort mul mv nan_to_num nanmean nanmedian nanquantile
nansum narrow_copy ne neg new_empty new_full new_ones new_zeros nextafter
nn.functional.adaptive_avg_pool1d nn.functional.adaptive_avg_pool2d
nn.functional.adaptive_avg_pool3d nn.functional.adaptive_max_pool1d
nn.functional.adaptive_max_pool2d nn.functional.adaptive_max_pool3d nn.functional.avg_pool1d
nn.functional.avg_pool2d nn.functional.avg_pool3d nn.functional.batch_norm nn.functional.bilinear
nn.functional.binary_cross_entropy nn.functional.binary_cross_entropy_with_logits nn.functional.celu
nn.functional.cross_entropy nn.functional.dropout nn.functional.elu nn.functional.embedding
nn.functional.embedding_bag nn.functional.feature_alpha_dropout.without_train nn.functional.gelu
nn.functional.glu nn.functional.group_norm nn.functional.hardshrink nn.functional.hardsigmoid
nn.functional.hardswish nn.functional.hardtanh nn.functional.hinge_embedding_loss
nn.functional.huber_loss nn.functional.interpolate.area nn.functional.interpolate.linear
nn.functional.interpolate.nearest nn.functional.interpolate.nearest-exact
nn.functional.interpolate.trilinear nn.functional.kl_div nn.functional.l1_loss
nn.functional.layer_norm nn.functional.leaky_relu nn.functional.linear
nn.functional.linear_cross_entropy nn.functional.local_response_norm nn.functional.logsigmoid
nn.functional.margin_ranking_loss nn.functional.max_pool1d nn.functional.max_pool2d
nn.functional.max_pool3d nn.functional.mish nn.functional.mse_loss
nn.functional.multi_head_attention_forward nn.functional.multilabel_soft_margin_loss
nn.functional.nll_loss nn.functional.normalize nn.functional.one_hot nn.functional.pad.circular
nn.functional.pad.constant nn.functional.pad.reflect nn.functional.pad.replicate
nn.functional.pad.replicate_negative nn.functional.pixel_shuffle nn.functional.pixel_unshuffle
nn.functional.poisson_nll_loss nn.functional.prelu nn.functional.relu nn.functional.relu6
nn.functional.rms_norm nn.functional.scaled_dot_product_attention nn.functional.selu
nn.functional.silu nn.functional.silu.complex nn.functional.smooth_l1_loss
nn.functional.soft_margin_loss nn.functional.softmin nn.functional.softmin.with_dtype
nn.functional.softplus nn.functional.softshrink nn.functional.softsign nn.functional.tanhshrink
nn.functional.threshold nn.functional.unfold nn.functional.upsample_nearest nonzero nonzero_static
norm norm.fro norm.inf normal normal.number_mean ones ones_like ormqr outer pca_lowrank permute
permute_copy pinverse polygamma.polygamma_n_0 polygamma.polygamma_n_1 polygamma.polygamma_n_2
polygamma.polygamma_n_3 polygamma.polygamma_n_4 positive pow prod put qr quantile rad2deg rand_like
randint randint_like randn randn_like ravel real reciprocal remainder renorm repeat
repeat_interleave reshape reshape_as resolve_conj resolve_neg roll rot90 round round.decimals_0
round.decimals_3 round.decimals_neg_3 rsqrt rsub scalar_tensor scatter scatter_add
scatter_reduce.amax scatter_reduce.amin scatter_reduce.mean scatter_reduce.prod scatter_reduce.sum
searchsorted select sgn short sigmoid sign signal.windows.bartlett signal.windows.blackman
signal.windows.cosine signal.windows.exponential signal.windows.gaussian
signal.windows.general_cosine signal.windows.general_hamming signal.windows.hamming
signal.windows.hann signal.windows.kaiser signal.windows.nuttall signbit sin sinc sinh softmax
softmax.with_dtype sort special.airy_ai special.bessel_j0 special.bessel_j1 special.bessel_y0
special.bessel_y1 special.chebyshev_polynomial_t special.chebyshev_polynomial_u
special.chebyshev_polynomial_v special.chebyshev_polynomial_w special.entr special.erfcx
special.hermite_polynomial_h special.hermite_polynomial_he special.i0e special.i1 special.i1e
special.laguerre_polynomial_l special.legendre_polynomial_p special.log_ndtr
special.modified_bessel_i0 special.modified_bessel_i1 special.modified_bessel_k0
special.modified_bessel_k1 special.ndtr special.ndtri special.polygamma.special_polygamma_n_0
special.scaled_modified_bessel_k0 special.scaled_modified_bessel_k1
special.shifted_chebyshev_polynomial_t special.shifted_chebyshev_polynomial_u
special.shifted_chebyshev_polynomial_v special.shifted_chebyshev_polynomial_w
special.spherical_bessel_j0 special.xlog1py special.zeta split split.list_args split_with_sizes
split_with_sizes_copy sqrt square squeeze squeeze.multiple squeeze_copy stack std std.unbiased
std_mean std_mean.unbiased sub sum svd svd_lowrank t t_copy take take_along_dim tan tanh tensordot
tile topk trace transpose transpose_copy triangular_solve tril tril_indices triu triu_indices
true_divide trunc unbind unbind_copy unflatten unfold unfold_copy unique unique_consecutive
unravel_index unsafe_split unsqueeze unsqueeze_copy var var.unbiased var_mean var_mean.unbiased vdot
view view_as view_copy vsplit vstack where xlogy zeros zeros_like
""".split())

NOT_MODELED = {
    "_batch_norm_with_update": ("opaque", "torch.ops.aten._batch_norm_with_update"),
    "_chunk_cat": ("opaque", "torch._chunk_cat"),
    "_native_batch_norm_legit": ("refused", "torch._native_batch_norm_legit cannot be traced: with training=False its meta kernel declares save_mean and save_invstd of the channel count, where the CPU kernel returns them empty; call torch.nn.functional.batch_norm instead"),
    "_segment_reduce.lengths": ("opaque", "torch.segment_reduce"),
    "_segment_reduce.offsets": ("opaque", "torch.segment_reduce"),
    "_softmax_backward_data": ("opaque", "torch.ops.aten._softmax_backward_data"),
    "_unsafe_masked_index": ("opaque", "torch._unsafe_masked_index"),
    "_unsafe_masked_index_put_accumulate": ("opaque", "torch._unsafe_masked_index_put_accumulate"),
    "_upsample_bilinear2d_aa": ("opaque", "torch.ops.aten._upsample_bilinear2d_aa"),
    "allclose": ("refused", "torch.allclose: its output depends on tensor values"),
    "as_strided": ("opaque", "torch.as_strided"),
    "as_strided.partial_views": ("opaque", "torch.as_strided"),
    "as_strided_copy": ("opaque", "torch.as_strided_copy"),
    "as_strided_scatter": ("opaque", "torch.as_strided_scatter"),
    "bernoulli": ("opaque", "torch.bernoulli"),
    "cauchy": ("opaque", "torch.Tensor.cauchy_"),
    "cdouble": ("opaque", "torch.Tensor.cdouble"),
    "cfloat": ("opaque", "torch.Tensor.cfloat"),
    "chalf": ("opaque", "torch.Tensor.chalf"),
    "complex": ("opaque", "torch.complex"),
    "corrcoef": ("refused", "torch.corrcoef: its output depends on tensor values"),
    "cov": ("refused", "torch.cov: its output depends on tensor values"),
    "cumulative_trapezoid": ("opaque", "torch.cumulative_trapezoid"),
    "diagonal_scatter": ("opaque", "torch.diagonal_scatter"),
    "empty_permuted": ("opaque", "torch.empty_permuted"),
    "empty_strided": ("opaque", "torch.empty_strided"),
    "equal": ("refused", "torch.equal: its output depends on tensor values"),
    "exponential": ("opaque", "torch.Tensor.exponential_"),
    "fill": ("opaque", "torch.fill"),
    "frexp": ("opaque", "torch.frexp"),
    "geometric": ("opaque", "torch.Tensor.geometric_"),
    "gradient": ("opaque", "torch.gradient"),
    "grid_sampler_2d": ("opaque", "torch.grid_sampler_2d"),
    "grid_sampler_3d": ("opaque", "torch.grid_sampler_3d"),
    "hash_tensor": ("opaque", "torch.hash_tensor"),
    "histogram": ("refused", "torch.histogram: no meta kernel"),
    "histogramdd": ("refused", "torch.histogramdd: no meta kernel"),
    "imag": ("opaque", "torch.imag"),
    "isclose": ("opaque", "torch.isclose"),
    "isin": ("opaque", "torch.isin"),
    "istft": ("refused", "torch.istft: its output depends on tensor values"),
    "item": ("refused", "Tensor.item needs the tensor's values"),
    "jiterator_2inputs_2outputs": ("skipped", "eager refuses every sample"),
    "jiterator_4inputs_with_extra_args": ("skipped", "eager refuses every sample"),
    "jiterator_binary": ("skipped", "eager refuses every sample"),
    "jiterator_binary_return_by_ref": ("skipped", "eager refuses every sample"),
    "jiterator_unary": ("skipped", "eager refuses every sample"),
    "linalg.matrix_norm": ("opaque", "torch.linalg.matrix_norm"),
    "log_normal": ("opaque", "torch.Tensor.log_normal_"),
    "max_pool2d_with_indices_backward": ("opaque", "torch.ops.aten.max_pool2d_with_indices_backward.default"),
    "multinomial": ("opaque", "torch.multinomial"),
    "mvlgamma.mvlgamma_p_1": ("opaque", "torch.mvlgamma"),
    "mvlgamma.mvlgamma_p_3": ("opaque", "torch.mvlgamma"),
    "mvlgamma.mvlgamma_p_5": ("opaque", "torch.mvlgamma"),
    "narrow": ("refused", "torch.narrow: its output depends on tensor values"),
    "native_batch_norm": ("refused", "torch.native_batch_norm cannot be traced: with training=False its meta kernel declares save_mean and save_invstd of the channel count, where the CPU kernel returns them empty; call torch.nn.functional.batch_norm instead"),
    "native_dropout_backward": ("opaque", "torch.ops.aten.native_dropout_backward.default"),
    "native_group_norm": ("opaque", "torch.native_group_norm"),
    "native_layer_norm": ("opaque", "torch.native_layer_norm"),
    "new_empty_strided": ("opaque", "torch.Tensor.new_empty_strided"),
    "nn.functional.alpha_dropout": ("opaque", "torch.nn.functional.alpha_dropout"),
    "nn.functional.channel_shuffle": ("opaque", "torch.channel_shuffle"),
    "nn.functional.conv1d": ("opaque", "torch.conv1d"),
    "nn.functional.conv2d": ("opaque", "torch.conv2d"),
    "nn.functional.conv3d": ("opaque", "torch.conv3d"),
    "nn.functional.conv_transpose1d": ("opaque", "torch.conv_transpose1d"),
    "nn.functional.conv_transpose2d": ("opaque", "torch.conv_transpose2d"),
    "nn.functional.conv_transpose3d": ("opaque", "torch.conv_transpose3d"),
    "nn.functional.cosine_embedding_loss": ("opaque", "torch.cosine_embedding_loss"),
    "nn.functional.cosine_similarity": ("opaque", "torch.cosine_similarity"),
    "nn.functional.ctc_loss": ("refused", "torch.ctc_loss: its output depends on tensor values"),
    "nn.functional.dropout2d": ("opaque", "torch.nn.functional.dropout2d"),
    "nn.functional.dropout3d": ("opaque", "torch.nn.functional.dropout3d"),
    "nn.functional.feature_alpha_dropout.with_train": ("opaque", "torch.nn.functional.feature_alpha_dropout"),
    "nn.functional.fractional_max_pool2d": ("opaque", "torch._C._nn.fractional_max_pool2d"),
    "nn.functional.fractional_max_pool3d": ("opaque", "torch._C._nn.fractional_max_pool3d"),
    "nn.functional.gaussian_nll_loss": ("refused", "torch.nn.functional.gaussian_nll_loss: its output depends on tensor values"),
    "nn.functional.grid_sample": ("opaque", "torch.grid_sampler"),
    "nn.functional.instance_norm": ("opaque", "torch.nn.functional.instance_norm"),
    "nn.functional.interpolate.bicubic": ("opaque", "torch.nn.functional.interpolate"),
    "nn.functional.interpolate.bilinear": ("opaque", "torch.nn.functional.interpolate"),
    "nn.functional.linear_cross_entropy.chunked": ("opaque", "torch.ops.torch_nn._linear_cross_entropy_batch_chunked.default"),
    "nn.functional.linear_cross_entropy.chunked_none": ("opaque", "torch.ops.torch_nn._linear_cross_entropy_batch_chunked_no_reduction.default"),
    "nn.functional.max_unpool1d": ("opaque", "torch._C._nn.max_unpool2d"),
    "nn.functional.max_unpool1d.grad": ("opaque", "torch._C._nn.max_unpool2d"),
    "nn.functional.max_unpool2d": ("opaque", "torch._C._nn.max_unpool2d"),
    "nn.functional.max_unpool2d.grad": ("opaque", "torch._C._nn.max_unpool2d"),
    "nn.functional.max_unpool3d": ("opaque", "torch._C._nn.max_unpool3d"),
    "nn.functional.max_unpool3d.grad": ("opaque", "torch._C._nn.max_unpool3d"),
    "nn.functional.multi_margin_loss": ("opaque", "torch._C._nn.multi_margin_loss"),
    "nn.functional.multilabel_margin_loss": ("opaque", "torch._C._nn.multilabel_margin_loss"),
    "nn.functional.pairwise_distance": ("opaque", "torch.pairwise_distance"),
    "nn.functional.pdist": ("opaque", "torch.pdist"),
    "nn.functional.rrelu": ("opaque", "torch.nn.functional.rrelu"),
    "nn.functional.triplet_margin_loss": ("opaque", "torch.triplet_margin_loss"),
    "nn.functional.triplet_margin_with_distance_loss": ("opaque", "torch.pairwise_distance"),
    "nn.functional.upsample_bilinear": ("opaque", "torch.nn.functional.interpolate"),
    "norm.nuc": ("opaque", "torch.norm"),
    "normal.in_place": ("opaque", "torch.Tensor.normal_"),
    "polar": ("opaque", "torch.polar"),
    "resize_": ("opaque", "torch.Tensor.resize_"),
    "resize_as_": ("opaque", "torch.resize_as_"),
    "select_scatter": ("opaque", "torch.select_scatter"),
    "slice": ("opaque", "torch.ops.aten.slice.Tensor"),
    "slice_scatter": ("opaque", "torch.slice_scatter"),
    "sparse.mm.reduce": ("refused", "input `tensors_0` is a sparse tensor (sparse_csr): sparse tensors are not traced; make it dense with .to_dense()"),
    "sparse.sampled_addmm": ("refused", "input `tensors_0` is a sparse tensor (sparse_csr): sparse tensors are not traced; make it dense with .to_dense()"),
    "stft": ("opaque", "torch.stft"),
    "sum_to_size": ("opaque", "torch.Tensor.sum_to_size"),
    "tensor_split": ("refused", "torch.tensor_split with a tensor of split points: its meta kernel wants that tensor on cpu"),
    "to": ("opaque", "torch.Tensor.to"),
    "to_sparse": ("refused", "torch.Tensor.to_sparse: no meta kernel"),
    "torch._scaled_mm": ("skipped", "eager refuses every sample"),
    "torch._scaled_mm_v2": ("skipped", "eager refuses every sample"),
    "torch.ops.aten._safe_softmax.default": ("opaque", "torch.ops.aten._safe_softmax.default"),
    "trapezoid": ("opaque", "torch.trapezoid"),
    "trapz": ("opaque", "torch.trapz"),
    "uniform": ("opaque", "torch.Tensor.uniform_"),
    "unsafe_chunk": ("opaque", "torch.unsafe_chunk"),
    "view_as_complex": ("opaque", "torch.view_as_complex"),
    "view_as_real": ("opaque", "torch.view_as_real"),
    "zero_": ("opaque", "torch.zero_"),
}

# The gradients of MODELED OpInfos (tests/opinfo/gradients.py) that are known not to
# match torch's, or to crash: name -> (class, why). Every other one must pass, be refused
# by the grad transform (an op without a backward rule), or be one torch does not
# differentiate. Never add a line here without saying why the gradient may differ.
GRAD_DEFECTS: dict[str, tuple[str, str]] = {}
