"""Complex infinities and NaNs in products, as torch 2.13's CPU kernels compute them
(``gradkit/ops/complex_products.py``), checked in closed form and against torch on a slice of
``tests/fuzz/complex_special.py``'s grid."""
import numpy as np
import pytest

import gradkit

INF, NAN = float("inf"), float("nan")
DTYPES = [np.complex64, np.complex128]


def _parts(z) -> tuple:
    """Real and imaginary part of each entry, NaN as the string "nan" (so == compares it)."""
    return tuple(("nan" if np.isnan(p) else float(p)) for v in np.ravel(z)
                 for p in (v.real, v.imag))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("product", [
    lambda x, y: gradkit.dot(x, y), lambda x, y: x @ y, lambda x, y: gradkit.inner(x, y),
    lambda x, y: gradkit.einsum("i,i->", x, y), lambda x, y: gradkit.vdot(x.conj(), y)])
def test_a_dot_product_sums_c_products(dtype, product):
    """(-inf + 0j)(2 + 3j) = -inf - infj as C multiplies: no 0 * inf (NumPy's BLAS gave
    nan - infj; the fuzzer's mixed seed 6488199)."""
    x = gradkit.tensor(np.array([1 + 2j, complex(-INF, 0)], dtype))
    y = gradkit.tensor(np.array([0.5 - 1j, 2 + 3j], dtype))
    assert _parts(product(x, y).numpy()) == (-INF, -INF)


@pytest.mark.parametrize("dtype, columns, row", [
    (np.complex64, 2, ("nan", "nan")), (np.complex64, 4, (INF, INF)),
    (np.complex128, 15, ("nan", "nan")), (np.complex128, 16, (INF, INF))])
def test_a_small_gemm_scales_the_left_matrix_first(dtype, columns, row):
    """MKL's small gemm multiplies mat1 by alpha = 1 + 0j first: inf + 0j becomes inf + nanj,
    and its row NaN; from 2 (complex64) or 4 (complex128) rows, 4 or 2 inner and 4 or 16
    columns it sums the products as they are: (inf + 0j)(1 + 1j) = inf + infj."""
    a = np.ones((4, 4), dtype)
    a[0, 0] = complex(INF, 0)
    out = (gradkit.tensor(a) @ gradkit.tensor(np.full((4, columns), 1 + 1j, dtype))).numpy()
    assert _parts(out[0]) == row * columns
    assert np.isfinite(out[1:]).all()


def test_gemv_and_a_small_baddbmm_scale_the_sum_by_one():
    """alpha * sum with alpha = 1 + 0j as a C product: an infinite part makes the other NaN."""
    m = gradkit.tensor(np.array([[complex(INF, 0), 1], [1, 1]]))
    v = gradkit.tensor(np.array([1 + 1j, 1]))
    assert _parts(gradkit.mv(m, v).numpy()[0]) == ("nan", "nan")
    out = gradkit.baddbmm(gradkit.zeros(1, 2, 2, dtype=gradkit.complex128), m[None], m[None])
    assert _parts(out.numpy()[0, 1, 1]) == (2.0, 0.0)
    assert _parts(out.numpy()[0, 0, 0]) == ("nan", "nan")  # (inf * inf + 1) * (1 + 0j)
    assert _parts(gradkit.bmm(m[None], m[None]).numpy()[0, 0, 0]) == (INF, "nan")


def test_real_and_finite_products_keep_numpys_kernel():
    """Only complex operands with a non-finite entry take the parts route."""
    a = np.arange(6.0).reshape(2, 3) * (1 + 1j)
    b = np.arange(6.0).reshape(3, 2) * (1 - 2j)
    np.testing.assert_allclose((gradkit.tensor(a) @ gradkit.tensor(b)).numpy(), a @ b)
    assert (gradkit.tensor(a.real) @ gradkit.tensor(b.real)).dtype == gradkit.float64


torch = pytest.importorskip("torch")
from cpu_kernels import torch_runs_avx512_kernels  # noqa: E402
from fuzz.complex_special import (  # noqa: E402
    GRID, PRODUCTS, _operand, scan_elementwise, scan_product, BINARY, UNARY)

SLICE = GRID[::4]  # 13 values: 0, -0, 1, -1.5, inf, -inf and NaN parts all among them
# torch's kernels that follow one of complex_products' rules at the scanner's size 2
FOLLOWED = ["dot", "vdot", "matmul_1d", "einsum_dot", "inner", "outer", "mv", "vm", "mm",
            "bmm", "matmul_batched", "einsum_mm", "tensordot", "addmm", "addmv", "baddbmm"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", FOLLOWED)
def test_products_at_special_values_match_torch(name, dtype):
    """Values and gradients of each pair of the grid's slice (169 pairs), part by part."""
    if name == "matmul_batched" and torch_runs_avx512_kernels():
        pytest.skip("pins MKL's AVX2 batched complex gemm (CI's CPUs): its AVX-512 one gives "
                    "NaN where that one gives an infinity")
    found = scan_product(name, dtype, grads=True, size=2, grid=SLICE)
    assert found == [], found[:3]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name, shapes", [("mm", ((2, 3), (3, 4))), ("mm", ((5, 3), (3, 20))),
                                          ("mm", ((1, 3), (3, 3))), ("mv", ((3, 3), (3,))),
                                          ("bmm", ((2, 3, 3), (2, 3, 3)))])
def test_products_of_other_sizes_match_torch(name, shapes, dtype):
    """The rules on both sides of MKL's size thresholds, one special first entry at a time
    (MKL's blocked gemm scales some entries at the end of a row: Known)."""
    if shapes == ((5, 3), (3, 20)) and torch_runs_avx512_kernels():
        pytest.skip("pins MKL's AVX2 blocked complex gemm (CI's CPUs); its AVX-512 one gives "
                    "other infinities and NaNs at this size")
    fn = PRODUCTS[name][1]
    for special in (complex(INF, 0), complex(0, -INF), complex(NAN, 1), complex(-INF, INF)):
        for side in (0, 1):
            arrays = [_operand(s, special if k == side else 1 + 1j, dtype, k)
                      for k, s in enumerate(shapes)]
            with np.errstate(all="ignore"):
                theirs = fn(torch, *map(torch.from_numpy, arrays)).numpy()
                mine = fn(gradkit, *map(gradkit.tensor, arrays)).numpy()
            assert _parts(mine) == _parts(theirs), (special, side)


@pytest.mark.parametrize("name", ["mul", "div", "pow", "exp", "log", "sqrt", "reciprocal",
                                  "abs", "sgn"])
def test_elementwise_ops_one_element_at_a_time_match_torch(name):
    """torch's scalar loop (one-element tensors) at every grid value or pair of the slice:
    gradkit's elementwise complex ops agree with it part by part (its vector loop differs:
    docs/torch_expectations.md, Known)."""
    kind = "binary" if name in BINARY else "unary"
    fn = {**UNARY, **BINARY}[name]
    found = scan_elementwise(name, fn, kind, np.complex128, grads=False, scalar=True)
    assert found == [], found[:3]


def test_known_torchs_vector_loop_negates_a_complex_zero_to_plus_zero():
    """Known: torch's vectorized complex neg is 0 - x (+0.0 for a zero part) and its scalar
    tail -x; gradkit's is -x everywhere, as C and NumPy."""
    values = np.zeros(7, np.complex128)  # 3 vectors of 2, then one in the scalar tail
    theirs = (-torch.from_numpy(values)).numpy()
    assert not np.signbit(theirs.imag[0]) and np.signbit(theirs.imag[-1])
    assert np.signbit((-torch.from_numpy(values[:1])).numpy().imag[0])
    mine = (-gradkit.tensor(values)).numpy()
    assert np.signbit(mine.imag).all() and np.signbit(mine.real).all()


def test_known_torchs_vector_loop_sgn_of_an_infinite_imaginary_part():
    """Known: torch's vectorized sgn of 0 + infj is 0 + nanj, its scalar loop's nan + nanj
    (inf / inf); gradkit gives the scalar loop's everywhere."""
    values = np.full(16, complex(0, INF))
    assert _parts(torch.sgn(torch.from_numpy(values)).numpy()[0]) == (0.0, "nan")
    assert _parts(torch.sgn(torch.from_numpy(values[:1])).numpy()) == ("nan", "nan")
    assert _parts(gradkit.sgn(gradkit.tensor(values)).numpy()[0]) == ("nan", "nan")
