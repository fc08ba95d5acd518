"""The family of each OpInfo, for the coverage table: read off its name alone, so that an
OpInfo stays in its row when tracecli's support for it changes.

An OpInfo named below is in that family; otherwise its namespace decides (`linalg.`,
`fft.`, `special.`, `masked.`, `signal.`, `sparse.`), then the kind of OpInfo torch
made it (elementwise unary and binary ops, reductions); anything else is "other".
"""

from __future__ import annotations

from torch.testing._internal.opinfo.core import BinaryUfuncInfo, OpInfo, ReductionOpInfo, UnaryUfuncInfo

NN = "nn.functional."


def _names(text: str, prefix: str = "") -> list[str]:
    return [prefix + name for name in text.split()]


_NAMED = {
    "shapes": _names("""
        H T mH mT alias_copy as_strided as_strided_copy atleast_1d atleast_2d atleast_3d broadcast_shapes
        broadcast_tensors broadcast_to cat chunk column_stack contiguous clone constant_pad_nd diag diag_embed
        diagflat diagonal diagonal_copy dsplit dstack expand expand_as expand_copy flatten flip fliplr flipud
        hsplit hstack meshgrid movedim narrow narrow_copy permute permute_copy ravel repeat repeat_interleave
        reshape reshape_as resize_ resize_as_ resolve_conj resolve_neg roll rot90 select slice split
        split_with_sizes split_with_sizes_copy squeeze squeeze_copy stack sum_to_size t t_copy tensor_split tile
        transpose transpose_copy tril triu unbind unbind_copy unflatten unfold unfold_copy unsafe_chunk
        unsafe_split unsqueeze unsqueeze_copy view view_as view_copy vsplit vstack _chunk_cat block_diag
        cartesian_prod combinations kron
    """) + _names("pad pixel_shuffle pixel_unshuffle channel_shuffle", NN),
    "indexing": _names("""
        __getitem__ _unsafe_masked_index _unsafe_masked_index_put_accumulate gather index_add index_copy
        index_fill index_put index_reduce index_select masked_fill masked_scatter masked_select put scatter
        scatter_add scatter_reduce select_scatter slice_scatter diagonal_scatter as_strided_scatter take
        take_along_dim where nonzero nonzero_static argwhere unravel_index
    """) + _names("embedding embedding_bag one_hot", NN),
    "selection": _names("""
        argsort sort msort topk kthvalue searchsorted bucketize unique unique_consecutive isin histc
        histogram histogramdd bincount
    """),
    "reductions": _names("""
        aminmax cummax cummin cumprod cumsum logcumsumexp logsumexp max min median mode nanmedian quantile
        nanquantile std_mean var_mean norm dist trace cumulative_trapezoid trapezoid trapz diff gradient renorm
        softmax log_softmax _softmax_backward_data torch.ops.aten._safe_softmax.default _segment_reduce cov corrcoef
    """) + _names("softmin", NN),
    "binary": _names("addcdiv addcmul lerp clamp logaddexp2 allclose equal"),
    "linalg": _names("""
        __rmatmul__ addbmm addmm addmv addr baddbmm bmm cdist cholesky cholesky_inverse cholesky_solve cross dot
        einsum geqrf inner logdet lu lu_solve lu_unpack matmul matrix_exp mm mv ormqr outer pca_lowrank pinverse
        qr svd svd_lowrank tensordot triangular_solve vdot torch._scaled_mm torch._scaled_mm_v2
    """) + _names("linear bilinear", NN),
    "factories": _names("""
        arange empty empty_like empty_permuted empty_strided eye full full_like linspace logspace new_empty
        new_empty_strided new_full new_ones new_zeros ones ones_like scalar_tensor tril_indices triu_indices
        zeros zeros_like fill zero_
    """),
    "random": _names("""
        bernoulli cauchy exponential geometric log_normal multinomial normal rand_like randint randint_like
        randn randn_like uniform native_dropout_backward
    """) + _names("dropout dropout2d dropout3d alpha_dropout feature_alpha_dropout", NN),
    "conversions": _names("""
        to bfloat16 bool byte cdouble cfloat chalf char double float half int long short view_as_complex
        view_as_real to_sparse item hash_tensor
    """),
    "fft": _names("stft istft"),
    "norms": _names("_batch_norm_with_update _native_batch_norm_legit native_batch_norm native_group_norm "
                    "native_layer_norm")
    + _names("batch_norm group_norm instance_norm layer_norm local_response_norm rms_norm normalize", NN),
    "activations": _names("""
        celu elu gelu glu hardshrink hardsigmoid hardswish hardtanh leaky_relu logsigmoid mish prelu relu relu6
        rrelu selu silu softplus softshrink softsign tanhshrink threshold
    """, NN),
    "losses": _names("""
        binary_cross_entropy binary_cross_entropy_with_logits cosine_embedding_loss cross_entropy ctc_loss
        gaussian_nll_loss hinge_embedding_loss huber_loss kl_div l1_loss linear_cross_entropy
        margin_ranking_loss mse_loss multi_margin_loss multilabel_margin_loss multilabel_soft_margin_loss
        nll_loss poisson_nll_loss smooth_l1_loss soft_margin_loss triplet_margin_loss
        triplet_margin_with_distance_loss cosine_similarity pairwise_distance pdist
    """, NN),
    "pooling": _names("""
        adaptive_avg_pool1d adaptive_avg_pool2d adaptive_avg_pool3d adaptive_max_pool1d adaptive_max_pool2d
        adaptive_max_pool3d avg_pool1d avg_pool2d avg_pool3d max_pool1d max_pool2d max_pool3d
        fractional_max_pool2d fractional_max_pool3d max_unpool1d max_unpool2d max_unpool3d
    """, NN) + _names("max_pool2d_with_indices_backward"),
    "conv": _names("conv1d conv2d conv3d conv_transpose1d conv_transpose2d conv_transpose3d unfold", NN),
    "attention": _names("scaled_dot_product_attention multi_head_attention_forward", NN),
    "resampling": _names("interpolate upsample_bilinear upsample_nearest grid_sample", NN)
    + _names("grid_sampler_2d grid_sampler_3d _upsample_bilinear2d_aa"),
}
FAMILY_OF_NAME = {name: family for family, names in _NAMED.items() for name in names}
NAMESPACES = ("linalg", "fft", "special", "masked", "signal", "sparse")


def family(op: OpInfo) -> str:
    named = FAMILY_OF_NAME.get(op.name)
    if named is not None:
        return named
    namespace = op.name.split(".")[0]
    if namespace in NAMESPACES:
        return namespace
    if isinstance(op, UnaryUfuncInfo):
        return "unary"
    if isinstance(op, BinaryUfuncInfo):
        return "binary"
    if isinstance(op, ReductionOpInfo):
        return "reductions"
    return "other"
