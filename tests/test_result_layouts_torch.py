"""LAPACK results are laid out as torch's: each matrix by columns, as LAPACK wrote it, so
``stride()``, ``is_contiguous()``, ``view`` and ops that refuse a layout (kron) agree with torch
(strided_breadth seed 1827154: kron of a legacy ``lu`` factor, which torch refuses). Compared
with torch 2.13 (skipped without torch)."""
import warnings

import numpy as np
import pytest
from fuzz.known import diff_program
from fuzz.programs import Leaf, Program, Step

import gradkit

torch = pytest.importorskip("torch")

RESULTS = {  # name: the call, of (lib, square a, right-hand side b, wide w, positive definite p)
    "lu": lambda m, a, b, w, p: m.lu(a, get_infos=True),
    "lu_factor": lambda m, a, b, w, p: m.linalg.lu_factor(a),
    "lu_factor_wide": lambda m, a, b, w, p: m.linalg.lu_factor(w),
    "linalg.lu": lambda m, a, b, w, p: m.linalg.lu(a),
    "qr": lambda m, a, b, w, p: m.linalg.qr(a),
    "qr_wide_complete": lambda m, a, b, w, p: m.linalg.qr(w, mode="complete"),
    "qr_tall_r": lambda m, a, b, w, p: m.linalg.qr(w.mT, mode="r"),
    "qr_legacy": lambda m, a, b, w, p: m.qr(w),
    "svd": lambda m, a, b, w, p: m.linalg.svd(w),
    "svd_reduced": lambda m, a, b, w, p: m.linalg.svd(w.mT, full_matrices=False),
    "svd_legacy": lambda m, a, b, w, p: m.svd(a),
    "inv": lambda m, a, b, w, p: m.linalg.inv(a),
    "inv_ex": lambda m, a, b, w, p: m.linalg.inv_ex(a.mT),
    "cholesky": lambda m, a, b, w, p: m.linalg.cholesky(p),
    "cholesky_upper": lambda m, a, b, w, p: m.linalg.cholesky_ex(p, upper=True),
    "eigh": lambda m, a, b, w, p: m.linalg.eigh(p, UPLO="U"),
    "eig": lambda m, a, b, w, p: m.linalg.eig(a),
    "solve": lambda m, a, b, w, p: m.linalg.solve(a, b),
    "solve_right": lambda m, a, b, w, p: m.linalg.solve(a, b.mT, left=False),
    "solve_vector": lambda m, a, b, w, p: m.linalg.solve(a, b[..., 0]),
    "solve_ex": lambda m, a, b, w, p: m.linalg.solve_ex(a, b),
    "lstsq_square": lambda m, a, b, w, p: m.linalg.lstsq(a, b).solution,
    "lstsq_tall": lambda m, a, b, w, p: m.linalg.lstsq(w.mT, w.mT[..., :2]).solution,
    "lstsq_wide": lambda m, a, b, w, p: m.linalg.lstsq(w, w[..., :1]).solution,
    "geqrf": lambda m, a, b, w, p: m.geqrf(w),
    "householder_product": lambda m, a, b, w, p: m.linalg.householder_product(*m.geqrf(a)),
    "lu_solve": lambda m, a, b, w, p: m.linalg.lu_solve(*m.linalg.lu_factor(a), b),
    "lu_solve_right": lambda m, a, b, w, p: m.linalg.lu_solve(*m.linalg.lu_factor(a), b.mT,
                                                               left=False),
    "lu_solve_adjoint": lambda m, a, b, w, p: m.linalg.lu_solve(*m.linalg.lu_factor(a), b,
                                                                 adjoint=True),
    "cholesky_solve": lambda m, a, b, w, p: m.cholesky_solve(b, m.linalg.cholesky(p)),
    "cholesky_inverse": lambda m, a, b, w, p: m.cholesky_inverse(m.linalg.cholesky(p)),
    "solve_triangular": lambda m, a, b, w, p: m.linalg.solve_triangular(a.triu(), b, upper=True),
    "triangular_solve": lambda m, a, b, w, p: m.triangular_solve(b, a.triu())[0],
    "ldl_factor": lambda m, a, b, w, p: m.linalg.ldl_factor(p),
    "ldl_solve": lambda m, a, b, w, p: m.linalg.ldl_solve(*m.linalg.ldl_factor(p), b),
    "matrix_power": lambda m, a, b, w, p: m.linalg.matrix_power(a, -2),
    "pinv": lambda m, a, b, w, p: m.linalg.pinv(a),
    "product_of_column_major": lambda m, a, b, w, p: m.linalg.inv(a) @ m.linalg.inv(a),
}


def _strides(lib, name, dtype, batch):
    rng = np.random.default_rng(3)

    def draw(*shape):
        values = rng.standard_normal(batch + shape)
        if dtype == "complex128":
            values = values + 1j * rng.standard_normal(batch + shape)
        return lib.tensor(values)
    a = draw(4, 4) + 4 * lib.eye(4)
    p = a @ a.mT.conj() + lib.eye(4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (torch's deprecation warnings of the legacy forms)
        out = RESULTS[name](lib, a, draw(4, 3), draw(2, 5), p)
    return [tuple(t.stride()) for t in (out if isinstance(out, tuple) else (out,))
            if hasattr(t, "stride")]


@pytest.mark.parametrize("batch", [(), (2,)], ids=["matrix", "batch"])
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("name", list(RESULTS))
def test_lapack_results_are_laid_out_as_torchs(name, dtype, batch):
    assert _strides(gradkit, name, dtype, batch) == _strides(torch, name, dtype, batch)


def test_viewing_a_column_major_factor_is_refused_as_torch_refuses_it():
    for lib in (gradkit, torch):
        inverse = lib.linalg.inv(lib.eye(3, dtype=lib.float64) * 2)
        assert not inverse.is_contiguous() and inverse.mT.is_contiguous()
        with pytest.raises(RuntimeError, match="view size is not compatible"):
            inverse.view(-1)


def test_kron_of_a_legacy_lu_factor_is_refused_as_torch_refuses_it():
    """strided_breadth seed 1827154: torch's kron views its product in its operands' stride
    order, which a column-major LU factor beside a row-major operand cannot be."""
    program = Program("strided_breadth", (Leaf((3, 3), "float32", True, False, "transposed"),), (
        Step("b_roll", (0,), {"shifts": -1, "dims": None}),
        Step("fb_lu_legacy", (1,), {"n": 3, "flag": False, "flag2": True}),
        Step("e_kron", (2, 1), {})), True, 1827154, backward=True)
    assert diff_program(program) == ([], None)


CONVOLUTIONS = {  # name: the call, of (lib, input (2, 4, 6, 6), weight (6, 4, 3, 3))
    "conv2d": lambda m, x, w: m.nn.functional.conv2d(x, w),
    "conv2d_grouped_strided": lambda m, x, w: m.nn.functional.conv2d(
        x, w[:, :2], groups=2, stride=(3, 2), padding=1),
    "conv2d_channels_last_input": lambda m, x, w: m.nn.functional.conv2d(
        x.contiguous(memory_format=m.channels_last), w),
    "conv2d_channels_last_weight": lambda m, x, w: m.nn.functional.conv2d(
        x, w.contiguous(memory_format=m.channels_last)),
    "conv1d_grouped": lambda m, x, w: m.nn.functional.conv1d(x[..., 0], w[:, :2, 0], groups=2),
    "conv3d": lambda m, x, w: m.nn.functional.conv3d(x[..., None], w[..., None]),
    "conv3d_channels_last": lambda m, x, w: m.nn.functional.conv3d(
        x[..., None].contiguous(memory_format=m.channels_last_3d), w[..., None]),
    "conv2d_module": lambda m, x, w: m.nn.Conv2d(4, 6, 3, groups=2, dtype=x.dtype)(x),
}


@pytest.mark.parametrize("dtype", ["float64", "float32", "complex64"])
@pytest.mark.parametrize("name", list(CONVOLUTIONS))
def test_convolution_results_are_laid_out_as_torchs(name, dtype):
    """C order, or channels last where the input or weight suggests it (3-d: not in float64):
    gradkit's einsum left the batch dim inside the channels, so `conv(x).view(n, -1)`, a
    network's flatten, raised."""
    rng = np.random.default_rng(0)

    def strides(lib):
        x, w = (lib.tensor(rng.standard_normal(s)).to(getattr(lib, dtype))
                for s in ((2, 4, 6, 6), (6, 4, 3, 3)))
        out = CONVOLUTIONS[name](lib, x, w)
        return out.stride(), out.is_contiguous()
    assert strides(gradkit) == strides(torch)


def test_flattening_a_convolution_by_view_works_as_in_torch():
    for lib in (gradkit, torch):
        features = lib.nn.functional.conv2d(lib.ones(2, 3, 8, 8), lib.ones(4, 3, 3, 3))
        assert features.view(2, -1).shape == (2, 144)


@pytest.mark.parametrize("call", [
    lambda m, x: m.kthvalue(x, 2), lambda m, x: m.kthvalue(x, 2, 0, True),
    lambda m, x: m.topk(x, 3, 1), lambda m, x: m.topk(x.mT, 3, 1, sorted=False),
    lambda m, x: m.sort(x.mT, 1), lambda m, x: m.median(x, 1), lambda m, x: m.mode(x, 0)])
def test_selected_values_and_indices_are_laid_out_as_torchs(call):
    """kthvalue's indices were a strided column of a sorting order, topk's (replayed) a
    transposed array: other strides than torch's dense ones."""
    x = np.random.default_rng(1).integers(0, 3, (5, 6, 5)).astype(float)
    assert [t.stride() for t in call(gradkit, gradkit.tensor(x))] == \
        [t.stride() for t in call(torch, torch.tensor(x))]
