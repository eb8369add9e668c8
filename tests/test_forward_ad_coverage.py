"""Every op has its own jvp rule, and forward-over-reverse (Hessian-vector products) through the
ops that used to go through the double-vjp fallback agrees with torch.

The fallback (forward_ad._double_vjp) builds J t from fresh leaves, so its tangent has no history
back to the primal: forward-over-reverse through such an op silently loses the second-order
terms. These tests make sure no op in the op table relies on it.
"""
import sys

import numpy as np
import pytest

import gradkit
import gradkit.autograd.forward_ad as fwad
import gradkit.nn.functional as F  # noqa: N812 - torch's convention
from gradkit.ops._op import Op
from op_db import bind, cases, gradkit_tensor

# ops whose tangents are set by another mechanism, never by their own jvp (with the reason)
OWN_TANGENT_MECHANISM = {
    "copy_slices": "in-place writes: ops/inplace.py gives the written tensor its tangent",
}


def _declared_ops() -> list:
    """Every differentiable Op object defined in gradkit's op modules."""
    seen, found = set(), []
    for name, module in sorted(sys.modules.items()):
        if not name.startswith("gradkit.") or module is None:
            continue
        for value in vars(module).values():
            if isinstance(value, Op) and id(value) not in seen and value.differentiable:
                seen.add(id(value))
                found.append(value)
    return found


def _has_own_jvp(op: Op) -> bool:
    return op.jvps is not None or op.jvp_all is not None or (op.linear and op.outputs == 1)


def test_every_declared_op_has_a_jvp_rule():
    missing = sorted(op.name for op in _declared_ops()
                     if not _has_own_jvp(op) and op.name not in OWN_TANGENT_MECHANISM)
    assert missing == [], f"ops without a jvp rule (forward AD falls back to double vjp): {missing}"


def test_the_op_walk_finds_the_known_ops():
    names = {op.name for op in _declared_ops()}
    assert {"amax", "split", "scatter", "masked_fill", "max_dim", "mul", "copy_slices"} <= names


def _ops_using_fallback(monkeypatch) -> dict:
    """Run every op-table sample with dual inputs; map op name -> table entries that fell back."""
    used: dict = {}
    current = [None]
    real = fwad._double_vjp

    def spy(op, *args, **kwargs):
        used.setdefault(op.name, set()).add(current[0])
        return real(op, *args, **kwargs)

    monkeypatch.setattr(fwad, "_double_vjp", spy)
    for case_id, info, sample in cases():
        if "no_forward_ad" in info.extra:  # torch has none: the op refuses, as torch's
            continue
        current[0] = case_id
        leaves, call = bind(info.op, sample, gradkit_tensor)
        with fwad.dual_level():
            call(*[fwad.make_dual(x.detach(), gradkit.ones_like(x)) for x in leaves])
    return used


def test_no_op_in_the_op_table_uses_the_double_vjp_fallback(monkeypatch):
    used = _ops_using_fallback(monkeypatch)
    assert used == {}, f"ops using the double-vjp fallback: {used}"


def test_the_fallback_detector_sees_an_op_without_jvp(monkeypatch):
    # the detector itself must be able to fail: take amax's jvp away and it is reported
    from gradkit.ops.extremes import amax
    monkeypatch.setattr(amax, "jvps", None)
    used = _ops_using_fallback(monkeypatch)
    assert "amax" in used and any(c.startswith("amax-") for c in used["amax"])


# -- forward-over-reverse through each op, against torch ---------------------------------------

_rng = np.random.default_rng(7)
_DISTINCT = (_rng.permutation(24) * 0.13 - 1.4).reshape(2, 3, 4)


def _scatter(lib, x):
    index = lib.tensor([[0, 2, 1, 3]])
    return lib.scatter(lib.sin(x[0]), 1, index, lib.cos(x[1, :1]) * x[1, 1:2]).pow(2).sum()


def _masked_fill(lib, x):
    mask = lib.tensor([[[True, False, True, False]] * 3, [[False, True, False, False]] * 3])
    return lib.masked_fill(lib.sin(x), mask, (x ** 2).sum()).pow(2).sum()


def _split(lib, x):
    a, b = lib.split(x, [1, 3], dim=2)
    return (a.pow(3).sum() + (lib.sin(b) * b).sum())


def _chunk(lib, x):
    parts = lib.chunk(x, 2, dim=2)
    return sum((p.pow(3) * (i + 1)).sum() for i, p in enumerate(parts))


def _unbind(lib, x):
    return sum((p.pow(2) * p[0]).sum() for p in lib.unbind(x, 1))


def _max_values(lib, x):
    along_1 = lib.max(x.pow(3), 1).values
    along_last = lib.max(x, -1, keepdim=True).values
    return along_1.pow(2).sum() + along_last.pow(3).sum()


def _min_values(lib, x):
    return lib.min(lib.sin(x), 2).values.pow(2).sum()


def _embedding(lib, x):
    functional = _functional(lib)
    weight = x.reshape(6, 4)
    return functional.embedding(lib.tensor([[0, 5], [2, 2]]), weight).pow(3).sum()


def _layer_norm(lib, x):
    functional = _functional(lib)
    weight, bias = x[0, 0], x[1, 0]
    return functional.layer_norm(x * x, (4,), weight, bias).pow(2).sum()


def _max_pool2d(lib, x):
    return _functional(lib).max_pool2d(x.pow(3), 2, stride=1).pow(2).sum()


def _functional(lib):
    return F if lib is gradkit else lib.nn.functional


HVP_CASES = {
    "amax": lambda lib, x: lib.amax(x.pow(3), dim=(0, 2)).pow(2).sum(),
    "amin": lambda lib, x: lib.amin(lib.sin(x), dim=1, keepdim=True).pow(2).sum(),
    "amax_all": lambda lib, x: lib.amax(x * x.sum()),
    "max_dim": _max_values,
    "min_dim": _min_values,
    "split": _split,
    "chunk": _chunk,
    "unbind": _unbind,
    "scatter": _scatter,
    "masked_fill": _masked_fill,
    "embedding": _embedding,
    "layer_norm": _layer_norm,
    "max_pool2d": _max_pool2d,
}


def _gradkit_hvp(f, x0, v):
    """Forward-over-reverse: the tangent of grad(f) along v."""
    x = gradkit.tensor(x0, requires_grad=True)
    with fwad.dual_level():
        dual = fwad.make_dual(x, gradkit.tensor(v))
        g, = gradkit.autograd.grad(f(gradkit, dual), dual, create_graph=True)
        tangent = fwad.unpack_dual(g).tangent
    return g.detach().numpy(), tangent.detach().numpy()


@pytest.mark.parametrize("name", sorted(HVP_CASES))
def test_forward_over_reverse_hvp_matches_torch(name, monkeypatch):
    torch = pytest.importorskip("torch")
    f = HVP_CASES[name]
    monkeypatch.setattr(fwad, "_double_vjp", _no_fallback)
    v = np.random.default_rng(3).standard_normal(_DISTINCT.shape)
    grad, hv = _gradkit_hvp(f, _DISTINCT, v)
    expected_grad, expected_hv = torch.autograd.functional.hvp(
        lambda t: f(torch, t), torch.tensor(_DISTINCT), torch.tensor(v))
    np.testing.assert_allclose(grad, torch.func.grad(lambda t: f(torch, t))(
        torch.tensor(_DISTINCT)).numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(hv, expected_hv.numpy(), rtol=1e-9, atol=1e-10)
    assert np.abs(hv).max() > 1e-3  # the case does exercise second-order terms


def _no_fallback(op, *args, **kwargs):
    raise AssertionError(f"{op.name} went through the double-vjp fallback")


def test_amax_tangent_is_shared_among_ties_like_torch():
    torch = pytest.importorskip("torch")
    x0 = np.array([[1.0, 3.0, 3.0], [2.0, 0.5, 2.0]])
    v = np.array([[1.0, 2.0, 5.0], [4.0, 1.0, -1.0]])
    with fwad.dual_level():
        out = gradkit.amax(fwad.make_dual(gradkit.tensor(x0), gradkit.tensor(v)), dim=1)
        tangent = fwad.unpack_dual(out).tangent.numpy()
    _, expected = torch.func.jvp(lambda t: torch.amax(t, dim=1), (torch.tensor(x0),),
                                 (torch.tensor(v),))
    np.testing.assert_allclose(tangent, expected.numpy())
    np.testing.assert_allclose(tangent, [3.5, 1.5])  # means of the tied elements' tangents


def test_scatter_tangent_from_src_only():
    src = gradkit.tensor([[1.0, 2.0, 3.0]])
    with fwad.dual_level():
        out = gradkit.scatter(gradkit.zeros(2, 3, dtype=gradkit.float64), 0,
                              gradkit.tensor([[1, 0, 1]]),
                              fwad.make_dual(src.double(), gradkit.tensor([[4.0, 5.0, 6.0]])))
        tangent = fwad.unpack_dual(out).tangent.numpy()
    np.testing.assert_allclose(tangent, [[0.0, 5.0, 0.0], [4.0, 0.0, 6.0]])


def test_gather_with_an_index_smaller_than_the_input_reads_its_extent_like_torch():
    # found through scatter's src gradient: NumPy's take_along_axis broadcast the index
    torch = pytest.importorskip("torch")
    x0, index = np.arange(12.0).reshape(3, 4), np.array([[0, 2, 1, 3]])
    x = gradkit.tensor(x0, requires_grad=True)
    out = gradkit.gather(x, 1, gradkit.tensor(index))
    out.sum().backward()
    expected = torch.gather(torch.tensor(x0), 1, torch.tensor(index))
    np.testing.assert_array_equal(out.detach().numpy(), expected.numpy())
    np.testing.assert_array_equal(x.grad.numpy(), [[1.0] * 4, [0.0] * 4, [0.0] * 4])
