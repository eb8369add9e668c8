"""The sixth round of issue 17's shortcuts (docs/performance.md) give what the general lines
give, and torch's results: the unbroadcast sum of a raw gradient without sum's op call, an
op's one int parameter bound without the general binding (``x.squeeze(0)``)."""
from __future__ import annotations

import re
import sys

import numpy as np
import pytest

import gradkit
from gradkit.autograd import observers
from gradkit.autograd.graph import SavedTensor
from gradkit.ops import _dispatch_general
from gradkit.ops._dispatch_general import _save
from gradkit.ops._dispatch_hot import _OPERANDS_AND_SHAPES, _save_operands_and_shapes
from gradkit.ops.linalg import matmul
from gradkit.ops._op import Op
from gradkit.ops._dispatch_general import seam, sum_to_shape

RNG = np.random.default_rng(0)


def _arrays():
    """Raw gradients the shortcut takes (float32/64, complex, C, transposed, strided, a
    batch of several leading dims) and ones it leaves to sum's op (float16, ints)."""
    base = RNG.standard_normal((6, 5, 4))
    yield "float32", base.astype(np.float32), (4,)
    yield "float64 to a matrix", base, (5, 4)
    yield "two leading dims", base.astype(np.float32), (4,)
    yield "complex64", (base + 1j * base[::-1]).astype(np.complex64), (5, 4)
    yield "transposed", base.astype(np.float32).transpose(2, 1, 0), (5, 6)
    yield "strided", base[::2, :, ::2], (5, 2)
    yield "special values", np.array([[np.inf, -0.0], [-np.inf, -0.0], [np.nan, 1.0]]), (2,)
    yield "float16", base.astype(np.float16), (4,)
    yield "int64", (base * 10).astype(np.int64), (4,)


@pytest.mark.parametrize("name,g,shape", list(_arrays()), ids=[a[0] for a in _arrays()])
def test_summing_a_raw_gradient_back_gives_sums_bits(name, g, shape):
    ours = sum_to_shape(g, shape)
    general = seam.sum(g, tuple(range(g.ndim - len(shape))))  # the op's own call
    assert type(ours) is type(general) and ours.dtype == general.dtype
    assert ours.shape == general.shape == shape
    assert ours.tobytes() == general.tobytes()  # the same bits, NaN and -0.0 included
    assert ours.flags.c_contiguous  # as torch allocates a reduction's result


def test_only_float_and_complex_arrays_skip_sums_call(monkeypatch):
    calls = []
    real_sum = seam.sum
    monkeypatch.setattr(seam, "sum", lambda *a, **k: calls.append(a[0].dtype) or real_sum(*a, **k))
    for _, g, shape in _arrays():
        sum_to_shape(g, shape)
    assert calls == [np.dtype(np.float16), np.dtype(np.int64)]
    monkeypatch.setattr(_dispatch_general, "_summed", lambda g, axes: 1 / 0)
    with pytest.raises(ZeroDivisionError):  # the shortcut is what runs for floats
        sum_to_shape(np.ones((2, 3)), (3,))


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64"])
def test_bias_gradients_match_torch(dtype):
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal((3, 7, 5)).astype(dtype)
    b = RNG.standard_normal(5).astype(dtype)
    results = []
    for lib in (gradkit, torch):
        xt, bt = lib.tensor(x, requires_grad=True), lib.tensor(b, requires_grad=True)
        y = xt * bt + bt
        (y * y.conj()).real.sum().backward() if dtype.startswith("complex") else \
            (y * y).sum().backward()
        results.append((bt.grad.numpy(), xt.grad.numpy()))
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5)
        assert ours.dtype == theirs.dtype


def _ops_with_an_int_lane():
    found = {}
    for name, module in sorted(sys.modules.items()):
        if name.startswith("gradkit.") and module is not None:
            for value in vars(module).values():
                if isinstance(value, Op) and value.int_first is not None:
                    found[value.name] = value
    return [found[name] for name in sorted(found)]


def _outcome(function, *args):
    try:
        out = function(*args)
    except Exception as error:  # noqa: BLE001 - compared with the general lines' error
        return type(error), str(error)
    outs = out if isinstance(out, tuple) else (out,)
    return [(type(o).__name__, getattr(o, "shape", None), str(getattr(o, "dtype", None)),
             getattr(getattr(o, "grad_fn", None), "__class__", type(None)).__name__,
             o.detach().numpy().tobytes() if isinstance(o, gradkit.Tensor) else repr(o))
            for o in outs]


def binds_alike(ops, calls, lane: str, monkeypatch) -> int:
    """Each op of one or two inputs called with each of ``calls`` (its extra positionals),
    function and method forms, gives the same outcome on its lane and with the ``lane``
    attribute switched off (the general binding); how many ops were checked."""
    x = gradkit.tensor(RNG.standard_normal((3, 1, 4)), requires_grad=True)
    checked = 0
    for op in ops:
        if op.n_inputs not in (1, 2):
            continue
        inputs = (x,) * op.n_inputs
        # (a property of that name, real/imag, is no method form: it refuses a real x)
        method = getattr(x, op.name) if callable(getattr(type(x), op.name, None)) else None
        for extra in calls:
            on_lane = _outcome(op, *inputs, *extra), \
                method and _outcome(method, *inputs[1:], *extra)
            with monkeypatch.context() as patch:
                patch.setattr(op, lane, None)  # the general binding
                general = _outcome(op, *inputs, *extra), \
                    method and _outcome(method, *inputs[1:], *extra)
            assert on_lane == general, (op.name, extra)
        checked += 1
    return checked


def test_an_int_parameter_binds_alike_on_the_lane_and_the_general_lines(monkeypatch):
    ops = _ops_with_an_int_lane()
    names = {op.name for op in ops}
    assert {"squeeze", "unsqueeze", "sum", "transpose", "select", "softmax"} <= names
    # 7: an out-of-range dim (an error on both lines)
    assert binds_alike(ops, [(0,), (1,), (-1,), (7,)], "int_first", monkeypatch) > 40


def test_the_lane_is_taken_only_for_a_bare_int(monkeypatch):
    from gradkit.ops.shape import squeeze, transpose
    calls = []
    real = squeeze.numbers
    monkeypatch.setattr(squeeze, "_numbers", lambda *a: calls.append(a) or real(*a))
    x = gradkit.ones(2, 1, 3, requires_grad=True)
    x.squeeze(1)  # a bare int: no hook called
    assert calls == []
    for arg in ((1, 0), True, gradkit.tensor(1), None):  # a list, a bool, a tensor, None
        try:
            x.squeeze(arg) if arg is not None else gradkit.squeeze(x, None)
        except TypeError:
            pass
    assert len(calls) == 4
    assert transpose.int_first is not None and gradkit.sum.int_first == "dim"


def test_lane_errors_and_results_are_torchs():
    torch = pytest.importorskip("torch")
    a = RNG.standard_normal((2, 1, 3)).astype(np.float32)
    for lib in (gradkit, torch):
        x = lib.tensor(a, requires_grad=True)
        y = x.unsqueeze(0).squeeze(2).sum(1).softmax(-1).select(1, 1)
        y.sum().backward()
        if lib is gradkit:
            ours = (y.detach().numpy(), x.grad.numpy(), type(y.grad_fn).__name__)
            with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be "
                                                 r"in range of \[-3, 2\], but got 3\)"):
                x.squeeze(3)
            with pytest.raises(TypeError, match=r"transpose\(\) missing 1 required"):
                gradkit.transpose(x, 0)
        else:
            theirs = (y.detach().numpy(), x.grad.numpy(), type(y.grad_fn).__name__)
            with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be "
                                                 r"in range of \[-3, 2\], but got 3\)"):
                x.squeeze(3)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-6)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-6)
    assert ours[2] == theirs[2]


@pytest.mark.parametrize("ndim", [0, 1, 3])
def test_dims_in_range_take_the_first_line_and_keep_torchs_errors(ndim):
    torch = pytest.importorskip("torch")
    from gradkit.ops.dims import normalize_dim
    shape = (2, 1, 3)[:ndim]
    x, t = gradkit.ones(shape), torch.ones(shape)
    for dim in (*range(-5, 5), True, np.int64(1), 2**63):
        try:
            expected = t.unsqueeze(-1).squeeze(int(dim) if type(dim) is np.int64 else dim)
        except Exception as error:  # noqa: BLE001 - the same error type and first line
            with pytest.raises(type(error), match=re.escape(str(error).split("\n")[0])):
                x.unsqueeze(-1).squeeze(dim)
            if type(dim) is int:
                with pytest.raises((IndexError, ValueError)):
                    normalize_dim(dim, ndim + 1)
            continue
        assert tuple(x.unsqueeze(-1).squeeze(dim).shape) == tuple(expected.shape)
        assert normalize_dim(dim, ndim + 1) == int(dim) % (ndim + 1)


def test_torchs_movedim_invalid_and_unbind_programs():
    """torch's test_shape_ops.py test_movedim_invalid (dims 5 out of range) and test_unbind
    (unbind along each dim is select at each index): int dims through both lines."""
    x = gradkit.tensor(RNG.standard_normal((5, 6, 7, 8)))
    for fn in (gradkit.movedim, gradkit.moveaxis):
        for args in ((5, 0), (0, 5)):
            with pytest.raises(IndexError, match="Dimension out of range"):
                fn(x, *args)
    y = gradkit.rand(2, 3, 4, 5)
    for dim in range(4):
        parts, method = gradkit.unbind(y, dim), y.unbind(dim)
        assert len(parts) == len(method) == y.size(dim)
        for i in range(dim):
            assert np.array_equal(y.select(dim, i).numpy(), parts[i].numpy())
            assert np.array_equal(y.select(dim, i).numpy(), method[i].numpy())


def test_an_int_index_in_bounds_takes_the_first_line_as_the_general_one():
    torch = pytest.importorskip("torch")
    a = RNG.standard_normal((3, 2))
    for k in (0, 2, -1, -3):
        results = []
        for lib in (gradkit, torch):
            x = lib.tensor(a, requires_grad=True)
            y, general = x[k], x[(k,)]  # a tuple key: the general lines
            (y * 2 + general).sum().backward()
            results.append((y.detach().numpy(), type(y.grad_fn).__name__,
                            type(general.grad_fn).__name__, y._base is x, x.grad.numpy()))
        ours, theirs = results
        assert ours[0].tobytes() == theirs[0].tobytes() and ours[1:4] == theirs[1:4]
        assert np.array_equal(ours[4], theirs[4])
    x, t = gradkit.ones(3, 2), torch.ones(3, 2)
    for k in (3, -4, 2**63):
        with pytest.raises(Exception) as error:
            t[k]
        with pytest.raises(type(error.value), match=re.escape(str(error.value))):
            x[k]
    with pytest.raises(IndexError, match="invalid index of a 0-dim tensor"):
        gradkit.tensor(1.0)[0]


def _saved_facts(saved: tuple) -> list:
    facts = []
    for s in saved:
        if isinstance(s, SavedTensor):
            facts.append((s.tensor, s.data is not None and s.data.tobytes(), s.version,
                          s.nbytes, s.output_nr, s.history))
        else:
            facts.append(s)
    return facts


@pytest.mark.parametrize("keep", [(), (True, False, True, True), (False, True, True, True),
                                  (False, False, True, False), (True, True, False, False)])
def test_matmuls_save_is_the_general_saves(keep, monkeypatch):
    """``_save_operands_and_shapes`` (x, y, x.shape, y.shape without the loop) holds what
    ``_save`` holds for every mask, and reports the same bytes to a memory watcher."""
    x = gradkit.tensor(RNG.standard_normal((3, 4)), requires_grad=True)
    y = gradkit.tensor(RNG.standard_normal((4, 5)).astype(np.float64)) * 1.0
    product, packs = x @ y, []
    monkeypatch.setattr(observers, "saved_watchers", (object(),))
    monkeypatch.setattr(observers, "saved_pack_held_by",
                        lambda owner, nbytes: packs.append((owner.nbytes, nbytes)))
    ours = _save_operands_and_shapes(x, y, x._data, y._data, keep)
    kept_by_the_hot_path = product.grad_fn._extras.kept_meta
    node = product.grad_fn
    _save(node, matmul, (x, y), (x._data, y._data), (product,), keep)
    assert _saved_facts(ours) == _saved_facts(node.saved)
    assert len(packs) in (0, 2) and packs[:1] == packs[1:]
    # the hot path's node (x needs a gradient, y not) kept what _save keeps past backward
    _save(node, matmul, (x, y), (x._data, y._data), (product,),
          () if matmul.saves_read is None else matmul.save_mask(1))
    assert kept_by_the_hot_path == node._extras.kept_meta
    assert _OPERANDS_AND_SHAPES == matmul.save_spec


@pytest.mark.parametrize("grads", [(True, True), (True, False), (False, True)])
def test_matmul_on_the_hot_path_saves_and_differentiates_as_torch(grads):
    torch = pytest.importorskip("torch")
    a, b = RNG.standard_normal((3, 4)), RNG.standard_normal((4, 2))
    results = []
    for lib in (gradkit, torch):
        x, y = lib.tensor(a, requires_grad=grads[0]), lib.tensor(b, requires_grad=grads[1])
        out = (x @ y).tanh()
        node = out.grad_fn.next_functions[0][0]
        saved = [getattr(node, name) for name in ("_saved_self", "_saved_mat2")]
        saved = [None if t is None else t.detach().numpy().copy() for t in saved]
        out.sum().backward()
        results.append((type(node).__name__, [t.grad is None or t.grad.numpy() for t in (x, y)],
                        saved))
    assert results[0][0] == results[1][0] == "MmBackward0"
    for ours, theirs in zip(results[0][1] + results[0][2], results[1][1] + results[1][2]):
        assert (ours is None) == (theirs is None)
        if ours is not None:
            np.testing.assert_allclose(ours, theirs, rtol=1e-12)
