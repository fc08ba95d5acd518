"""The op tests line up with the op library.

tests/ops holds one module per op family, `test_<family>.py`, beside the family's
declarations in tracecli/ops/ltorch/<family>.py and tracecli/ops/prims/<family>.py, and
test_library.py for what spans families (test_declarations.py tests how ops are declared). A symbol's family is `Symbol.family`, the name
of the module that declares it. Checked here:

- every ltorch symbol has a case somewhere, and case ids are unique across the modules;
- the family modules are exactly the declared families;
- a family module holds only cases filed under its family: their first symbol's;
- every ltorch symbol has a case in its family's module;
- every prim is exercised by its family's module, in one of two ways:
  a case of the module records the prim once lowered (`check_case` runs every prim of
  the lowered trace and compares the type its implementation returns with the one its
  meta rule recorded), or the module checks the prim's meta rule against its
  implementation directly, in a test named `test_<prim>_meta_matches_impl` or in a
  `test_..._meta_matches_impl` parametrized over `name` with the prim among the names
  (for prims no decomposition uses yet, or only other families' do).

EXPECTED_FAMILIES and EXPECTED_PRIM_FAMILIES write down the assignment once more, so that
moving an op to another family shows in this file's diff.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

import pytest

from tracecli.frontend.tracer import trace_callable
from tracecli.ops import ltorch, prims
from tracecli.passes.lower import lower

# Modules about the library, not its cases: this one, and the declarations' own tests.
_NOT_CASES = {"test_coverage", "test_declarations"}
OP_MODULES = sorted(p.stem for p in Path(__file__).parent.glob("test_*.py") if p.stem not in _NOT_CASES)
FAMILY_MODULES = [name for name in OP_MODULES if name != "test_library"]


def _module(name: str) -> ModuleType:
    return importlib.import_module(f"tests.ops.{name}")


def _family_module(family: str) -> ModuleType:
    assert f"test_{family}" in FAMILY_MODULES, f"no tests/ops/test_{family}.py for the family {family!r}"
    return _module(f"test_{family}")


def _all_cases() -> list:
    return [case for name in OP_MODULES for case in _module(name).CASES]


def _by_name(table: dict[str, str]) -> dict[str, str]:
    return {name: family for family, names in table.items() for name in names.split()}


EXPECTED_FAMILIES = _by_name({
    "elementwise": "add sub rsub mul true_divide floor_divide trunc_divide pow maximum minimum eq ne lt le gt ge neg "
                   "abs exp log sin cos tanh sqrt rsqrt erf reciprocal where clamp",
    "elementwise_unary": "floor ceil trunc round frac sign sgn signbit isnan isinf isfinite isposinf isneginf isreal "
                         "nan_to_num angle log1p expm1 log2 log10 exp2 tan asin acos atan sinh cosh asinh acosh atanh "
                         "square deg2rad rad2deg sinc logit",
    "elementwise_binary": "fmod remainder atan2 copysign hypot nextafter heaviside fmax fmin logaddexp logaddexp2 xlogy "
                          "xlog1py addcmul addcdiv lerp float_power ldexp gcd lcm",
    "elementwise_special": "erfc erfinv erfcx ndtri ndtr log_ndtr lgamma digamma polygamma igamma igammac entr i0 i0e "
                           "i1 i1e airy_ai bessel_j0 bessel_j1 bessel_y0 bessel_y1 modified_bessel_i0 "
                           "modified_bessel_i1 modified_bessel_k0 modified_bessel_k1 scaled_modified_bessel_k0 "
                           "scaled_modified_bessel_k1 spherical_bessel_j0 chebyshev_polynomial_t "
                           "chebyshev_polynomial_u chebyshev_polynomial_v chebyshev_polynomial_w "
                           "shifted_chebyshev_polynomial_t shifted_chebyshev_polynomial_u shifted_chebyshev_polynomial_v "
                           "shifted_chebyshev_polynomial_w hermite_polynomial_h hermite_polynomial_he "
                           "laguerre_polynomial_l legendre_polynomial_p zeta",
    "activations": "sigmoid relu gelu silu hardtanh relu6 leaky_relu rrelu prelu threshold elu selu celu softplus mish "
                   "logsigmoid softsign tanhshrink hardsigmoid hardswish softshrink hardshrink glu softmin",
    "logical": "bitwise_and bitwise_or bitwise_xor bitwise_left_shift bitwise_right_shift bitwise_not logical_and "
               "logical_or logical_xor logical_not",
    "reductions": "sum mean amax amin max_all min_all var softmax log_softmax all any cumsum prod nansum nanmean count_nonzero "
                  "aminmax std var_mean std_mean logsumexp trace cumprod logcumsumexp cummax cummin",
    "reductions_order": "median nanmedian mode kthvalue quantile nanquantile",
    "reductions_norms": "vector_norm dist renorm norm_except_dim weight_norm",
    "shapes": "reshape permute transpose unsqueeze squeeze expand cat pad ravel select diagonal unfold narrow_copy "
              "diag diag_embed diagflat",
    "movement": "split chunk unbind stack unflatten repeat repeat_interleave triu tril diff flip roll rot90 "
                "tril_indices triu_indices",
    "movement_joins": "hstack vstack dstack column_stack block_diag cartesian_prod combinations kron",
    "indexing": "getitem index_select gather take_along_dim take one_hot masked_fill masked_select narrow",
    "indexing_scatter": "scatter scatter_add scatter_reduce index_add index_copy index_fill index_reduce index_put put "
                        "masked_scatter masked_scatter_ index_fill_ embedding_bag",
    "selection": "max min argmax argmin sort argsort topk searchsorted bucketize histc nonzero_static nonzero argwhere "
                 "unique unique_consecutive bincount",
    "linalg": "matmul linear addmm baddbmm outer einsum mv dot vdot addmv addbmm addr bilinear",
    "linalg_products": "tensordot inner linalg_multi_dot chain_matmul linalg_matrix_power linalg_vecdot linalg_cross cross "
                       "linalg_vander linalg_diagonal cdist",
    "linalg_solvers": "linalg_det linalg_slogdet slogdet logdet linalg_inv linalg_inv_ex cholesky_inverse "
                      "linalg_matrix_exp linalg_solve linalg_solve_ex linalg_solve_triangular triangular_solve "
                      "cholesky_solve linalg_lu_solve lu_solve linalg_ldl_solve linalg_lstsq linalg_pinv pinverse "
                      "linalg_matrix_rank linalg_cond linalg_tensorinv linalg_tensorsolve",
    "linalg_decompositions": "linalg_cholesky cholesky linalg_cholesky_ex linalg_lu linalg_lu_factor "
                             "linalg_lu_factor_ex lu lu_unpack linalg_qr qr geqrf ormqr linalg_householder_product "
                             "linalg_svd linalg_svdvals svd linalg_eig linalg_eigvals linalg_eigh linalg_eigvalsh "
                             "linalg_ldl_factor linalg_ldl_factor_ex",
    "factories": "zeros ones full arange rand randn rand_like randn_like zeros_like ones_like manual_seed get_rng_state "
                 "set_rng_state empty "
                 "empty_like full_like scalar_tensor eye tensor linspace logspace randint randint_like randperm normal",
    "conversions": "to clone contiguous detach",
    "nn": "embedding dropout layer_norm rms_norm batch_norm group_norm instance_norm local_response_norm normalize",
    "conv": "conv1d conv2d conv3d conv_transpose1d conv_transpose2d conv_transpose3d im2col",
    "pooling": "max_pool1d max_pool2d avg_pool1d avg_pool2d adaptive_avg_pool1d adaptive_avg_pool2d adaptive_avg_pool3d "
                "max_pool3d avg_pool3d max_pool1d_with_indices max_pool2d_with_indices max_pool3d_with_indices "
                "adaptive_max_pool1d adaptive_max_pool2d adaptive_max_pool3d adaptive_max_pool1d_with_indices "
                "adaptive_max_pool2d_with_indices adaptive_max_pool3d_with_indices",
    "sampling": "interpolate pixel_shuffle pixel_unshuffle",
    "losses": "nll_loss cross_entropy mse_loss l1_loss smooth_l1_loss huber_loss binary_cross_entropy "
              "binary_cross_entropy_with_logits kl_div soft_margin_loss margin_ranking_loss hinge_embedding_loss "
              "poisson_nll_loss",
    "attention": "scaled_dot_product_attention",
    "fft": "fft_fft fft_ifft fft_rfft fft_irfft fft_hfft fft_ihfft fft_fft2 fft_ifft2 fft_rfft2 fft_irfft2 fft_hfft2 "
           "fft_ihfft2 fft_fftn fft_ifftn fft_rfftn fft_irfftn fft_hfftn fft_ihfftn fft_fftshift fft_ifftshift "
           "fft_fftfreq fft_rfftfreq",
    "fft_windows": "hann_window hamming_window bartlett_window blackman_window kaiser_window stft",
    "inplace": "add_ sub_ mul_ div_ copy_ set_data_ fill_ zero_ masked_fill_ setitem_",
    "checks": "check_all check_size",
    "autograd": "set_grad set_grad_enabled restore_grad_enabled",
    "state": "store_item store_attr store_cell store_extend delete_item delete_attr",
})
EXPECTED_PRIM_FAMILIES = _by_name({
    "elementwise": "neg abs exp log log1p expm1 sin cos tan tanh sqrt rsqrt erf sign floor ceil round reciprocal "
                   "trunc asin acos atan sinh cosh asinh acosh atanh log2 log10 exp2 "
                   "add sub mul div pow maximum minimum fmod remainder atan2 copysign nextafter hypot gcd "
                   "eq ne lt le gt ge where",
    "elementwise_special": "erfc erfinv lgamma digamma polygamma igamma igammac i0 i0e i1 i1e erfcx ndtri airy_ai "
                           "bessel_j0 bessel_j1 bessel_y0 bessel_y1 modified_bessel_i0 modified_bessel_i1 "
                           "modified_bessel_k0 modified_bessel_k1 scaled_modified_bessel_k0 scaled_modified_bessel_k1 "
                           "spherical_bessel_j0 zeta chebyshev_polynomial_t chebyshev_polynomial_u "
                           "chebyshev_polynomial_v chebyshev_polynomial_w shifted_chebyshev_polynomial_t "
                           "shifted_chebyshev_polynomial_u shifted_chebyshev_polynomial_v "
                           "shifted_chebyshev_polynomial_w hermite_polynomial_h hermite_polynomial_he "
                           "laguerre_polynomial_l legendre_polynomial_p",
    "logical": "bitwise_and bitwise_or bitwise_xor bitwise_not logical_not bitwise_left_shift bitwise_right_shift",
    "reductions": "sum prod amax amin max_all min_all var cumsum cumprod logcumsumexp cummax cummin",
    "reductions_order": "median nanmedian mode kthvalue",
    "shapes": "broadcast_in_dim reshape transpose flip slice cat pad slice_scatter shape",
    "indexing": "take gather index_put one_hot",
    "movement": "repeat_index",
    "indexing_scatter": "scatter scatter_add scatter_reduce",
    "selection": "argmax argmin sort topk searchsorted histc nonzero nonzero_flat unique unique_consecutive bincount",
    "linalg": "matmul",
    "linalg_products": "vander cdist",
    "linalg_solvers": "det slogdet inv inv_ex matrix_exp solve solve_ex solve_triangular triangular_solve cholesky_solve "
                      "cholesky_inverse lu_solve ldl_solve lstsq pinv matrix_rank cond",
    "linalg_decompositions": "cholesky cholesky_ex lu lu_factor_ex lu_unpack qr geqrf householder_product ormqr svd "
                             "svdvals eig eigvals eigh eigvalsh ldl_factor_ex",
    "factories": "full iota empty tensor linspace logspace uniform normal bernoulli randint randperm manual_seed "
                 "get_rng_state set_rng_state",
    "fft": "fft_c2c fft_r2c fft_c2r conj",
    "conversions": "convert_element_type device_put clone copy_to",
    "conv": "convolution convolution_transpose",
    "checks": "check_all check_size",
    "autograd": "set_grad set_grad_enabled restore_grad_enabled",
    "state": "store_item store_attr store_cell store_extend delete_item delete_attr",
})


# Removals from Python state: a case runs three times (eagerly, then its trace at two
# levels), and only the first finds what it removes. tests/test_python_state.py runs them
# through a script's calls, each of which finds the state as eager leaves it.
TESTED_ELSEWHERE = frozenset({"delete_item", "delete_attr"})


def test_every_ltorch_symbol_has_a_case():
    covered = {symbol for case in _all_cases() for symbol in case.symbols}
    missing = sorted(set(ltorch.ALL) - covered - TESTED_ELSEWHERE)
    assert not missing, f"ltorch symbols without a test case: {missing}"


def test_case_ids_are_unique():
    # Ids name the failing case in pytest's output: two cases with one id would hide one.
    ids = [case.id for case in _all_cases()]
    assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})


@pytest.mark.parametrize(("declared", "expected"), [(ltorch.ALL, EXPECTED_FAMILIES), (prims.ALL, EXPECTED_PRIM_FAMILIES)],
                         ids=["ltorch", "prims"])
def test_declared_families_are_the_documented_ones(declared, expected):
    assert {name: sym.family for name, sym in declared.items()} == expected


def test_the_family_modules_are_the_declared_families():
    declared = {sym.family for sym in ltorch.ALL.values()} | {sym.family for sym in prims.ALL.values()}
    assert sorted(f"test_{family}" for family in declared) == FAMILY_MODULES


def test_cases_are_filed_under_their_first_symbols_family():
    misfiled = [(name, case.id) for name in FAMILY_MODULES for case in _module(name).CASES
                if f"test_{ltorch.ALL[case.symbols[0]].family}" != name]
    assert not misfiled, misfiled


def test_every_ltorch_symbol_has_a_case_in_its_family_module():
    missing = [name for name, sym in ltorch.ALL.items() if name not in TESTED_ELSEWHERE
               and not any(name in case.symbols for case in _family_module(sym.family).CASES)]
    assert not missing, f"ltorch symbols without a case in their family's module: {missing}"


def _lowered_prims(module: ModuleType) -> set[str]:
    used = set()
    for case in module.CASES:
        trace = trace_callable(case.fn, case.make_args(), name="fn").trace
        used |= {bsym.symbol.name for bsym in lower(trace).trace.bsyms}
    return used


def _meta_checked_prims(module: ModuleType) -> set[str]:
    checked = set()
    for name, test in vars(module).items():
        if not (name.startswith("test_") and name.endswith("_meta_matches_impl") and callable(test)):
            continue
        checked.add(name.removeprefix("test_").removesuffix("_meta_matches_impl"))
        for mark in getattr(test, "pytestmark", []):
            if mark.name == "parametrize" and mark.args[0] == "name":
                checked.update(mark.args[1])
    return checked


def test_every_prim_is_exercised_by_its_family_module():
    by_family: dict[str, set[str]] = {}
    for name, sym in prims.ALL.items():
        by_family.setdefault(sym.family, set()).add(name)
    missing = {}
    for family, names in sorted(by_family.items()):
        module = _family_module(family)
        unexercised = names - _meta_checked_prims(module)
        if unexercised:  # lowering every case costs about a second: only when needed
            unexercised -= _lowered_prims(module)
        if unexercised:
            missing[family] = sorted(unexercised)
    assert not missing, f"prims their family's test module does not exercise: {missing}"
