"""expand's one-call view of a C-contiguous array (ops/expand_view.py, docs/performance.md)
gives what the general lines (broadcast_to then as_strided) give, and torch's sizes, strides,
values, gradients and errors; one value bound without the general lines (``Op.__call__``),
a method's bare int bound without ``Op.__call__`` and a node saving only ``x.shape`` (the
hot path) give what the general lines give."""
from __future__ import annotations

import numpy as np
import pytest

import gradkit
from gradkit.ops import _dispatch_hot, expand_view
from gradkit.ops._op import Op
from gradkit.ops.shape import expand, unsqueeze
from gradkit.storage_owner import storage_of
from tests.test_speed_shortcuts import _ops_with_an_int_lane, binds_alike

RNG = np.random.default_rng(0)

CASES = [  # (input shape, how it is laid out, sizes)
    ((3, 1), "c", (3, 4)), ((1, 4), "c", (2, 3, 4)), ((3, 4), "c", (2, 3, 4)),
    ((3, 4), "c", (1, 1, 3, 4)), ((2, 1), "c", (1, 2, 1)), ((1, 4), "c", (3, -1)),
    ((), "c", (2, 3)), ((), "c", ()), ((1,), "c", (0,)), ((1, 4), "c", (0, 4)),
    ((3, 1), "t", (2, 3, 5)), ((5, 2, 1, 3), "strided", (2, 5, 4, 3)),
    ((1, 4), "readonly", (3, 4)), ((1, 4), "readonly", (1, 4)), ((2, 1), "c", (2, 1)),
]


def _input(shape, layout, dtype="float64"):
    a = RNG.standard_normal(shape).astype(dtype)
    if layout == "t":
        a = np.ascontiguousarray(a.T).T
    elif layout == "strided":
        a = a[:, 0]
    elif layout == "readonly":
        a.setflags(write=False)
    return a


def _facts(out: np.ndarray):
    return (out.shape, out.strides, out.flags.writeable, out.dtype, out.tobytes())


@pytest.mark.parametrize("shape,layout,sizes", CASES)
def test_one_call_view_is_the_general_lines_view(shape, layout, sizes, monkeypatch):
    a = _input(shape, layout)
    ours = expand.forward(np, a, sizes=sizes)
    one_call = expand_view.expanded_view(a, sizes)
    assert (one_call is not None) == a.flags.c_contiguous  # the others: the general lines
    assert one_call is None or storage_of(one_call) is storage_of(a)  # a's own memory
    monkeypatch.setattr("gradkit.ops.shape.expanded_view", lambda x, s: None)
    general = expand.forward(np, a, sizes=sizes)
    assert _facts(ours) == _facts(general)
    assert np.shares_memory(ours, a) or ours.size == 0


@pytest.mark.parametrize("dtype", ["float32", "complex64", "int64", "bool", "float16"])
def test_one_call_view_of_each_dtype(dtype, monkeypatch):
    a = _input((1, 4), "c", dtype)
    ours = expand.forward(np, a, sizes=(3, 2, 4))
    monkeypatch.setattr("gradkit.ops.shape.expanded_view", lambda x, s: None)
    assert _facts(ours) == _facts(expand.forward(np, a, sizes=(3, 2, 4)))


@pytest.mark.parametrize("shape,layout,sizes", CASES)
def test_sizes_strides_values_and_gradients_are_torchs(shape, layout, sizes):
    torch = pytest.importorskip("torch")
    a = _input(shape, layout).copy()
    results = []
    for lib in (gradkit, torch):
        x = lib.tensor(a, requires_grad=True)
        if layout == "t":
            x = x.detach().t().contiguous().t().requires_grad_()
        elif layout == "strided":
            x = lib.tensor(a.copy(), requires_grad=True)
        y = x.expand(*sizes) if sizes else x.expand(sizes)
        weights = lib.tensor(np.arange(y.numel(), dtype=np.float64).reshape(tuple(y.shape)))
        (y * weights).sum().backward()
        # (an empty tensor's strides are NumPy's: gradkit shows the contiguous ones)
        known = layout == "c" and y.numel()
        results.append((tuple(y.shape), y.stride() if known else None,
                        y.detach().numpy().copy(), x.grad.numpy().copy(),
                        type(y.grad_fn).__name__, y._is_view(), y._base is x))
    ours, theirs = results
    assert ours[:2] == theirs[:2] and ours[4:] == theirs[4:]
    np.testing.assert_array_equal(ours[2], theirs[2])
    np.testing.assert_allclose(ours[3], theirs[3], rtol=1e-12)


def test_views_versions_and_in_place_rules_are_torchs():
    torch = pytest.importorskip("torch")
    for lib in (gradkit, torch):
        base = lib.ones(1, 4, dtype=lib.float64) * 1.0
        kept = base.expand(1, 4)  # nothing repeated: writable, writes reach the base
        kept.mul_(3.0)
        assert base.tolist() == [[3.0] * 4] and base._version == kept._version == 1
        repeated = base.expand(2, 4)
        with pytest.raises(RuntimeError, match="more than one element of the written-to "
                                               "tensor refers to a single memory location"):
            repeated.add_(1.0)
        assert repeated._base is base and repeated.stride() == (0, 1)


@pytest.mark.parametrize("shape,sizes,message", [
    ((1, 4), (-2, 4), "numel: integer multiplication overflow"),
    ((1,), (1, -2), "numel: integer multiplication overflow"),
    ((4,), (-3, 4), "numel: integer multiplication overflow"),
    ((1, 4), (2 ** 62, 4), "numel: integer multiplication overflow"),
    ((3, 4), (-2, 4), r"The expanded size of the tensor \(-2\) must match the existing size "
                      r"\(3\) at non-singleton dimension 0"),
    ((4,), (-1, 4), r"The expanded size of the tensor \(-1\) isn't allowed in a leading, "
                    r"non-existing dimension 0"),
    ((2, 1), (2, 1, -1), r"The expanded size of the tensor \(1\) must match the existing size "
                         r"\(2\) at non-singleton dimension 1"),
    ((3, 4), (4,), r"the number of sizes provided \(1\) must be greater or equal to the "
                   r"number of dimensions in the tensor \(2\)"),
])
def test_refusals_are_torchs(shape, sizes, message):
    torch = pytest.importorskip("torch")
    for lib in (gradkit, torch):
        with pytest.raises(RuntimeError, match=message):
            lib.ones(shape).expand(*sizes)


def test_torchs_test_expand_program():
    """torch's test_torch.py test_expand: sizes, -1, a non-contiguous input, unsqueeze's
    strides, an empty tensor."""
    torch = pytest.importorskip("torch")
    for lib in (gradkit, torch):
        tensor, tensor2 = lib.rand(1, 8, 1), lib.rand(5)
        template = lib.rand(4, 8, 5)
        assert tensor.expand_as(template).size() == tensor.expand(4, 8, 5).size() == (4, 8, 5)
        assert tensor2.expand(tuple(template.size())).size() == (4, 8, 5)
        assert lib.equal(tensor2.expand(1, 5).expand(2, 2, 5), tensor2.repeat(2, 2, 1))
        noncontig = lib.randn(5, 2, 1, 3)[:, 0]
        assert not noncontig.is_contiguous()
        assert lib.equal(noncontig.expand(2, 5, 4, 3), noncontig.contiguous().repeat(2, 1, 4, 1))
        expanded, unsqueezed = tensor2.expand(1, 1, 5), tensor2.unsqueeze(0).unsqueeze(1)
        assert lib.equal(expanded, unsqueezed) and expanded.stride() == unsqueezed.stride()
        assert lib.equal(tensor.expand(4, -1, 5), tensor.expand(4, 8, 5))
        with pytest.raises(RuntimeError):
            tensor2.expand(-1, -1)
        assert lib.zeros(0).expand((0,)).shape == (0,)


def _ops_binding_any_value():
    """Ops whose one value (not only an int) binds on Op.__call__'s lane: no numbers hook."""
    return [op for op in _ops_with_an_int_lane() if op.numbers is None]


def test_one_value_binds_alike_on_the_lane_and_the_general_lines(monkeypatch):
    ops = _ops_binding_any_value()
    assert expand in ops
    values = [((2, 3, 1, 4),), ([3, 5, 4],), (None,), (1.5,), ("a",), (gradkit.tensor(2),)]
    assert binds_alike(ops, values, "int_first", monkeypatch) > 5


def test_the_shape_only_save_is_the_general_saves(monkeypatch):
    """A node that saves x.shape alone (views, sums) holds what ``_save`` makes."""
    x = gradkit.tensor(RNG.standard_normal((3, 1, 4)), requires_grad=True)
    programs = [lambda: x.expand(2, 3, 5, 4), lambda: x.squeeze(1), lambda: x.sum(),
                lambda: x.reshape(12), lambda: x.view(3, 4), lambda: x.select(0, 1)]
    fast = [(type(p().grad_fn).__name__, p().grad_fn.saved) for p in programs]
    assert all(saved == ((3, 1, 4),) for _, saved in fast[:2])
    monkeypatch.setattr(_dispatch_hot, "_SHAPE_OF_X", object())  # the general _save only
    assert [(type(p().grad_fn).__name__, p().grad_fn.saved) for p in programs] == fast
    for p in programs:
        y = p()
        y.backward(gradkit.ones_like(y))
    assert x.grad.shape == (3, 1, 4) and isinstance(expand, Op)


def test_the_int_lane_follows_keyword_only_and_legacy_positionals(monkeypatch):
    """``int_first`` is None wherever Op.__call__'s general lines must bind a bare int: a
    first parameter torch takes only by keyword, an op reading deprecated positionals."""
    assert gradkit.add.int_first is None and gradkit.round.int_first is None
    op = unsqueeze
    for attr in ("positional_limit", "positionals_overloaded", "required_keywords",
                 "int_first", "_legacy_positionals"):
        monkeypatch.setattr(op, attr, getattr(op, attr))  # each restored after the test
    assert op.int_first == "dim"
    op.legacy_positionals = lambda args, kwargs: (args, kwargs)
    assert op.int_first is None
    op.legacy_positionals = None
    assert op.int_first == "dim"
    op.keyword_only("dim")
    assert op.int_first is None


def test_a_methods_int_lane_words_torchs_errors():
    torch = pytest.importorskip("torch")
    for lib in (gradkit, torch):
        x = lib.ones(2, 3, requires_grad=True)
        with pytest.raises(TypeError, match=r"transpose\(\) missing 1 required positional "
                                            r"arguments: \"dim1\"" if lib is torch else
                           r"transpose\(\) missing 1 required positional arguments"):
            x.transpose(0)
        with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in "
                                             r"range of \[-3, 2\], but got 3\)"):
            x.unsqueeze(3)
        assert x.unsqueeze(-1).shape == (2, 3, 1) and x.squeeze(0).shape == (2, 3)


def test_sizes_numpy_cannot_make_are_refused_in_words():
    """Known (docs/torch_expectations.md): torch makes ``ones(1, 1).expand(0, -2)`` (numel 0,
    a size -2) and ``ones(1).expand(2**62)`` (no memory: stride 0); NumPy has no negative
    dims and refuses arrays over 2**63 bytes, so gradkit raises, saying why."""
    torch = pytest.importorskip("torch")
    assert tuple(torch.ones(1, 1).expand(0, -2).shape) == (0, -2)
    assert tuple(torch.ones(1).expand(2 ** 62).shape) == (2 ** 62,)
    with pytest.raises(RuntimeError, match=r"expand: negative size in \[0, -2\]"):
        gradkit.ones(1, 1).expand(0, -2)
    with pytest.raises(RuntimeError, match="array is too big"):
        gradkit.ones(1).expand(2 ** 62)


def test_two_ints_bind_alike_on_the_lane_and_the_general_lines(monkeypatch):
    """``x.transpose(0, 1)``: two bare ints for an op's first two parameters, where its hook
    leaves both unread, bind as the general lines bind them (values, dtypes, node names,
    errors), function and method forms."""
    ops = [op for op in _ops_with_an_int_lane() if op.int_second is not None]
    assert {"transpose", "select", "narrow", "diagonal", "topk", "roll"} <= {o.name for o in ops}
    pairs = [(0, 1), (1, 0), (-1, 0), (0, 7), (2, 2)]
    assert binds_alike(ops, pairs, "int_second", monkeypatch) > 30


def test_two_int_lane_results_are_torchs():
    torch = pytest.importorskip("torch")
    a = RNG.standard_normal((2, 3, 4))
    results = []
    for lib in (gradkit, torch):
        x = lib.tensor(a, requires_grad=True)
        y = x.transpose(0, 2).select(1, 2).narrow(0, 1, 2).diagonal(0, 0, 1)
        y.sum().backward()
        results.append((y.detach().numpy(), x.grad.numpy(), type(y.grad_fn).__name__))
        with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in "
                                             r"range of \[-3, 2\], but got 3\)"):
            x.transpose(0, 3)
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])
    assert results[0][2] == results[1][2]
