"""matmul's gradient rules take one product of raw arrays in a plain backward of real 2-D
operands (ops/linalg.py, ``_plain_matrices``) and the general lines otherwise: both give the
same bits as each other (create_graph=True runs the general lines on Tensors) and torch's
values."""
from __future__ import annotations

import numpy as np
import pytest

import gradkit
from gradkit.ops import linalg

torch = pytest.importorskip("torch")

_RNG = np.random.default_rng(0)
_SIGNED_ZEROS = np.array([[-0.0], [2.0], [0.0]]), np.array([[3.0, -0.0, -1.0, 0.5]])
CASES = {  # name: (x, y, which operands require grad); "fast": the one-product lines
    "fast 2-D float32": (_RNG.standard_normal((3, 4)).astype("float32"),
                         _RNG.standard_normal((4, 5)).astype("float32"), (True, True)),
    "fast 2-D float64, x only": (_RNG.standard_normal((3, 4)),
                                 _RNG.standard_normal((4, 5)), (True, False)),
    "fast 2-D float64, y only": (_RNG.standard_normal((3, 4)),
                                 _RNG.standard_normal((4, 5)), (False, True)),
    "fast outer product (k=1), signed zeros": (*_SIGNED_ZEROS, (True, True)),
    "fast transposed operands": (np.ascontiguousarray(_RNG.standard_normal((4, 3))).T,
                                 np.ascontiguousarray(_RNG.standard_normal((5, 4))).T,
                                 (True, True)),
    "general 1-D @ 2-D": (_RNG.standard_normal(4), _RNG.standard_normal((4, 5)), (True, True)),
    "general 2-D @ 1-D": (_RNG.standard_normal((3, 4)), _RNG.standard_normal(4), (True, True)),
    "general batched": (_RNG.standard_normal((2, 3, 4)), _RNG.standard_normal((4, 5)),
                        (True, True)),
    "general complex": (_RNG.standard_normal((3, 4)) + 1j * _RNG.standard_normal((3, 4)),
                        _RNG.standard_normal((4, 5)) + 1j * _RNG.standard_normal((4, 5)),
                        (True, True)),
}


def _grads(lib, x, y, needs, create_graph: bool):
    transposed = x.ndim == 2 and not x.flags.c_contiguous  # the case's arrays are .T views
    if transposed:  # leaves in their own layout, multiplied through their transposes
        x, y = x.T, y.T
    xt = lib.tensor(np.ascontiguousarray(x), requires_grad=needs[0])
    yt = lib.tensor(np.ascontiguousarray(y), requires_grad=needs[1])
    a, b = (xt.t(), yt.t()) if transposed else (xt, yt)
    out = a @ b
    seed = lib.tensor(np.cos(np.arange(out.numel()).reshape(tuple(out.shape))).astype(
        np.asarray(out.detach().numpy()).dtype))
    inputs = [t for t, n in zip((xt, yt), needs) if n]
    grads = (gradkit if lib is gradkit else torch).autograd.grad(
        out, inputs, seed, create_graph=create_graph)
    return [g.detach().numpy() for g in grads]


@pytest.mark.parametrize("name", list(CASES))
def test_plain_and_general_lines_agree_with_each_other_and_torch(name, monkeypatch):
    x, y, needs = CASES[name]
    general_calls = []
    original = linalg._as_matrix_grad
    monkeypatch.setattr(linalg, "_as_matrix_grad",
                        lambda *a: general_calls.append(a) or original(*a))
    plain = _grads(gradkit, x, y, needs, create_graph=False)
    assert (not general_calls) == name.startswith("fast")  # which lines the plain pass took
    general = _grads(gradkit, x, y, needs, create_graph=True)
    assert general_calls  # create_graph runs the general lines on Tensors
    theirs = _grads(torch, x, y, needs, create_graph=False)
    for p, g, t in zip(plain, general, theirs):
        assert p.dtype == g.dtype == t.dtype and p.shape == g.shape == t.shape
        assert p.tobytes() == g.tobytes()  # the same bits, signed zeros included
        np.testing.assert_allclose(p, t, rtol=1e-5 if p.dtype == np.float32 else 1e-12)


_FORWARD_CASES = {  # name: (x, y); "fast": real matrices with k > 1 (matmul's first line)
    "fast float32": (_RNG.standard_normal((3, 4)).astype("float32"),
                     _RNG.standard_normal((4, 5)).astype("float32")),
    "fast float64, transposed operand": (_RNG.standard_normal((4, 3)).T,
                                         _RNG.standard_normal((4, 5))),
    "fast float16": (_RNG.standard_normal((2, 3)).astype("float16"),
                     _RNG.standard_normal((3, 2)).astype("float16")),
    "fast signed zeros summed": (np.array([[-0.0, -0.0]]), np.array([[1.0], [1.0]])),
    "general k=1, signed zeros": _SIGNED_ZEROS,
    "general int64": (np.arange(6).reshape(2, 3), np.arange(6).reshape(3, 2)),
    "general complex": (_RNG.standard_normal((2, 3)) + 0j, _RNG.standard_normal((3, 2)) + 0j),
    "general 1-D @ 2-D": (_RNG.standard_normal(3), _RNG.standard_normal((3, 2))),
}


@pytest.mark.parametrize("name", list(_FORWARD_CASES))
def test_forward_of_real_matrices_and_the_general_lines_give_torch_bits(name):
    x, y = _FORWARD_CASES[name]
    ours = gradkit.matmul(gradkit.tensor(x), gradkit.tensor(y)).numpy()
    theirs = torch.matmul(torch.tensor(x), torch.tensor(y)).numpy()
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    if name.startswith("fast"):  # the first line is NumPy's product itself
        assert ours.tobytes() == np.matmul(x, y).tobytes()
    np.testing.assert_allclose(ours, theirs, rtol=1e-3 if ours.dtype == np.float16 else 1e-6)
    parts = (ours.real, ours.imag, theirs.real, theirs.imag) if ours.dtype.kind == "c" else \
        (ours, np.zeros(0), theirs, np.zeros(0))
    assert np.array_equal(np.signbit(parts[0]), np.signbit(parts[2]))  # signed zeros as torch
    assert np.array_equal(np.signbit(parts[1]), np.signbit(parts[3]))


@pytest.mark.parametrize("x, y, message", [
    (np.ones((2, 3), "float32"), np.ones((3, 2)),
     "expected m1 and m2 to have the same dtype, but got: float != double"),
    (np.ones((2, 3)), np.ones((4, 2)),
     r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x2\)"),
])
def test_real_matrices_that_do_not_fit_the_first_line_raise_torchs_errors(x, y, message):
    with pytest.raises(RuntimeError, match=message):
        gradkit.matmul(gradkit.tensor(x), gradkit.tensor(y))
    with pytest.raises(RuntimeError, match=message):
        torch.matmul(torch.tensor(x), torch.tensor(y))
