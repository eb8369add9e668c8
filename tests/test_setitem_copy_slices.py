"""``x[basic key] = v`` and in-place ops on a view of a non-leaf record torch's CopySlices: one
node on the base whose edges are the base's old history, then the edges of the op that wrote
the view after its first (the op's node is run inside CopySlices, never as a node of the
graph). Compared with torch 2.13: the graph, values, gradients (and double backward), version
counters, anomaly mode's message, the profiler's backward nodes and a second backward."""
import warnings

import pytest

import gradkit

torch = pytest.importorskip("torch")
from torch_expectations.twin import assert_same  # noqa: E402


def _graph(fn, depth: int = 4):
    """The graph from ``fn`` as nested (name, edges) tuples, torch's prefix dropped."""
    if fn is None:
        return None
    name = fn.name().replace("torch::autograd::", "")
    if depth == 0 or name == "AccumulateGrad":
        return name
    return name, tuple((_graph(f, depth - 1), nr) for f, nr in fn.next_functions)


def _write(m, key: str, value: str, dtype: str = "float64"):
    """A leaf, x = leaf * 1, ``x[key] = value``: what each library records and computes."""
    leaf = m.arange(24.0, dtype=m.float64).reshape(2, 3, 4).requires_grad_(True)
    w = m.tensor([2.0], dtype=getattr(m, dtype)).requires_grad_(True)
    x = leaf * 1
    before = x._version
    v = eval(value, {"m": m, "w": w})  # noqa: S307 - the values below
    try:
        exec(f"x[{key}] = v", {"x": x, "v": v})  # noqa: S102 - the keys below
    except RuntimeError as error:  # a value that does not expand to the region
        return str(error), x._version - before
    weights = m.arange(24.0, dtype=m.float64).reshape(2, 3, 4) + 1
    out = (x * x * weights).sum()
    grads = m.autograd.grad(out, (leaf, w), create_graph=True, allow_unused=True)
    second = m.autograd.grad(sum(g.sum() for g in grads if g is not None), (leaf, w),
                             allow_unused=True)
    return _graph(x.grad_fn), x._version - before, x, list(grads + second)


_VALUES = ["5.0", "w * 3", "w.sum() * 3", "w.expand(4) * 3", "w.reshape(1, 1) * 3",
           "m.zeros(4, dtype=m.float64)"]
_KEYS = ["0", "1:", "0, 1", ":, 1", "..., 0", "0, 1, 2", "None, 0", "0, None", "1, :, 2",
         ":, 0:2", "-1", "0, ..., 1:3"]


@pytest.mark.parametrize("value", _VALUES)
@pytest.mark.parametrize("key", _KEYS)
def test_basic_write_records_copy_slices_as_torch(key, value):
    assert_same(_write(gradkit, key, value), _write(torch, key, value))


@pytest.mark.parametrize("shape", [(3, 4), (1, 3, 4), (1, 1, 3, 4), (4,), (1, 4), (3, 1),
                                   (1,), ()])
def test_value_shapes_are_viewed_and_expanded_as_torch(shape):
    """torch's copy_to: a value of the region's shape is copied, a 0-d one fills, any other
    is viewed without its leading 1-dims (ViewBackward0) and expanded (ExpandBackward0)."""
    def program(m):
        leaf = m.ones(shape, dtype=m.float64, requires_grad=True)
        x = m.zeros(2, 3, 4, dtype=m.float64) * leaf.sum()
        x[1] = leaf * 2
        (g,) = m.autograd.grad((x * x).sum(), leaf)
        return _graph(x.grad_fn), g.tolist(), x.tolist()

    assert program(gradkit) == program(torch)


@pytest.mark.parametrize("write", [
    "x[1:].mul_(2)", "x[..., 0].add_(1)", "x[0].copy_(w.expand(3, 4))", "x[:, 1].mul_(w)",
    "x[1].sqrt_()", "x[0, 1:].zero_()", "x[1:][0].div_(w)", "x.select(2, 1).clamp_(min=3)",
])
def test_in_place_ops_on_views_wrap_their_node(write):
    def program(m):
        leaf = m.arange(24.0, dtype=m.float64).reshape(2, 3, 4).requires_grad_(True)
        w = m.tensor(3.0, dtype=m.float64, requires_grad=True)
        x = leaf * 1 + 1
        exec(write, {"x": x, "w": w})  # noqa: S102 - the writes above
        grads = m.autograd.grad((x * x).sum(), (leaf, w), create_graph=True, allow_unused=True)
        second = m.autograd.grad(grads[0].sum(), (leaf, w), allow_unused=True)
        return _graph(x.grad_fn), x._version, list(grads + second)

    assert_same(program(gradkit), program(torch))


def test_a_value_without_grad_and_a_base_without_grad():
    def program(m):
        w = m.tensor([1.0, 2.0], dtype=m.float64, requires_grad=True)
        x = m.zeros(3, 2, dtype=m.float64)
        x[1] = w * 2  # x required no grad: CopySlices's first edge is (None, 0)
        y = m.ones(3, 2, dtype=m.float64) * w
        y[0] = m.tensor([5.0, 6.0], dtype=m.float64)
        (g,) = m.autograd.grad((x * 3).sum() + (y * y).sum(), w)
        return _graph(x.grad_fn), _graph(y.grad_fn), g.tolist()

    assert program(gradkit) == program(torch)


def test_anomaly_mode_names_copy_slices():
    """The written op's NaN is reported by CopySlices, which runs it."""
    def program(m):
        leaf = m.arange(12.0, dtype=m.float64).requires_grad_(True)
        x = leaf * 1 - 20
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with m.autograd.detect_anomaly():
                x[1:3].sqrt_()
                with pytest.raises(RuntimeError) as info:
                    x.sum().backward()
        return str(info.value)

    assert program(gradkit) == program(torch) == \
        "Function 'torch::autograd::CopySlices' returned nan values in its 0th output."


def test_profiler_sees_one_copy_slices_node():
    def program(m):
        leaf = m.arange(12.0, requires_grad=True)
        x = leaf * 1
        x[1:] = x[1:] * 2
        with m.profiler.profile() as prof:
            x.sum().backward()
        prefix = "autograd::engine::evaluate_function: "
        names = [e.name[len(prefix):] for e in prof.events() if e.name.startswith(prefix)]
        return [n for n in names if not n.endswith("AccumulateGrad")]  # gradkit has no event

    assert program(gradkit) == program(torch)


@pytest.mark.parametrize("write", ["x[1:] = leaf[1:] * w", "x[1:].mul_(w)", "x[0] = 1.0"])
def test_a_second_backward_after_release(write):
    """CopySlices releases the op it wraps after a backward: a second backward raises,
    whatever the op saved (torch's CopySlices checks its fn)."""
    def program(m):
        leaf = m.arange(6.0, requires_grad=True)
        w = m.tensor(2.0, requires_grad=True)
        x = leaf * 1
        exec(write, {"x": x, "w": w, "leaf": leaf})  # noqa: S102 - the writes above
        out = x.sum()
        out.backward(retain_graph=False)
        try:
            out.backward()
        except RuntimeError as error:
            return str(error).split(" (")[0]
        return leaf.grad.tolist()

    assert program(gradkit) == program(torch)


def test_leaf_writes_are_refused_with_torchs_message():
    def program(m):
        leaf = m.zeros(3, requires_grad=True)
        with pytest.raises(RuntimeError) as info:
            leaf[0] = 1.0
        return str(info.value)

    assert program(gradkit) == program(torch)


def test_version_counters_of_base_and_views():
    def program(m):
        x = m.zeros(3, 4) * m.ones(1, requires_grad=True)
        y = x[1]
        x[0, 1:] = 5.0
        x[1] += 1
        y[2] = 7.0
        return x._version, y._version, x.tolist()

    assert program(gradkit) == program(torch)


def test_forward_ad_through_partial_writes():
    """Tangents follow the writes (the view's region takes the value's tangent)."""
    def program(m):
        fa = m.autograd.forward_ad
        with fa.dual_level():
            x = fa.make_dual(m.arange(6.0).reshape(2, 3), m.ones(2, 3))
            v = fa.make_dual(m.tensor([5.0, 6.0, 7.0]), m.tensor([1.0, 2.0, 3.0]))
            y = x * 1
            y[1] = v
            y[0, 1:] = 2.0
            y[:, 0] *= 3
            return [t.tolist() for t in fa.unpack_dual(y)]

    assert program(gradkit) == program(torch)


def _writes(x, v):
    y = x * 1
    y[1:] = v * 2
    y[0, ::2] = v[0, :2].exp()
    y[..., 1].mul_(v[0, 2])
    return y


def test_gradcheck_and_gradgradcheck_through_writes():
    for m in (gradkit, torch):
        x = m.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=m.float64, requires_grad=True)
        v = m.tensor([[0.5, -1.0, 2.0]], dtype=m.float64, requires_grad=True)
        assert m.autograd.gradcheck(_writes, (x, v))
        assert m.autograd.gradgradcheck(_writes, (x, v))


@pytest.mark.parametrize("write", [
    "x[mask] = 2.0", "x[mask] = w", "x[[0, 1]] = 2.0", "x[[0, 1]] = w", "x[1:, [0, 1]] = 2.0",
    "x[1:, [0, 1]] = w", "x[0, [0, 1]] = w", "x[rows] = w.expand(2, 4)", "x[None, 1:, [2]] = w",
    "x[True, 1] = w", "x[1, True, 2] = w", "x[False, 0] = w", "x[True, [0, 2]] = 2.0",
])
def test_advanced_writes_as_torch(write):
    """An advanced key is index_put_ (a number value is a 0-d tensor: a (None, 0) edge), into
    the view its basic indices make when there are any (CopySlices on x, as torch)."""
    def program(m):
        leaf = m.arange(12.0, dtype=m.float64).requires_grad_(True)
        w = m.tensor(3.0, dtype=m.float64, requires_grad=True)
        x = leaf.reshape(3, 4) * 1
        names = {"x": x, "w": w * 1, "mask": x > 5, "rows": m.tensor([True, False, True])}
        exec(write, names)  # noqa: S102 - the writes above
        grads = m.autograd.grad((x * x).sum(), (leaf, w), create_graph=True, allow_unused=True)
        return _graph(x.grad_fn), x._version, x, list(grads)

    assert_same(program(gradkit), program(torch))


def _expanded_write(m, write: str, base_grad: bool):
    """A write into an expanded view of a base (one requiring grad or not): the grads or the
    message (fuzzer, edge class, seed 6294356)."""
    v = m.tensor(0.7, requires_grad=True)
    leaf = m.tensor([0.3], requires_grad=True)
    base = leaf * 1 if base_grad else m.tensor([0.3])
    x = base.expand(2, 1)
    with warnings.catch_warnings(record=True) as caught:  # index_put_ and index_fill_ on
        warnings.simplefilter("always")  # expanded tensors are deprecated
        exec(write, {"x": x, "v": v * 1, "m": m})  # noqa: S102 - the writes below
    warned = [str(w.message).split(" (Triggered")[0] for w in caught]
    out = (x * m.tensor([[2.0], [3.0]])).sum()
    try:
        return warned, list(m.autograd.grad(out, (v, leaf), create_graph=True,
                                            allow_unused=True))
    except RuntimeError as error:
        return warned, str(error)


@pytest.mark.parametrize("base_grad", [False, True])
@pytest.mark.parametrize("write", ["x[m.tensor(0), m.tensor(0)] = v", "x[0:1] = v",
                                   "x[0].mul_(v)", "x.fill_(2.0)", "x.zero_()",
                                   "x[None, True, m.tensor(0), m.tensor(0)] = v.sum()",
                                   "x[True, 0, 0] = v", "x[m.tensor(0), True, 0] = v",
                                   "x.index_fill_(0, m.tensor([0]), v)",
                                   "x.index_fill_(1, m.tensor([0]), 2.0)"])
def test_writes_into_an_expanded_view_as_torch(write, base_grad):
    """torch's CopySlices writes fn's gradient into the overlapping region only for the
    base's gradient (refused there: fill_, zero_); the value's gradient is computed, 5 = 2 + 3
    as both rows hold it. index_fill_ warns and writes, as x[mask] = v (it was refused)."""
    got = _expanded_write(gradkit, write, base_grad)
    assert_same(got, _expanded_write(torch, write, base_grad))
    if "v" in write and "mul_" not in write and not isinstance(got[1], str):
        assert float(got[1][0]) == 5.0


def _write_into_an_expanded_base(m):
    """A write into a detached alias of an expanded leaf (fuzzer, conj_views seed 16374): the
    CopySlices' base is itself expanded, and torch's backward copies the gradient into a
    buffer laid out as it: refused, though the base's own gradient is not wanted."""
    leaf = m.tensor([0.5], dtype=m.float64, requires_grad=True)
    expanded = leaf.expand(3)
    alias = expanded.data
    alias[0:2] = expanded[..., :1]
    out = (alias * m.tensor([1.0, 2.0, 3.0], dtype=m.float64)).sum()
    try:
        return m.autograd.grad(out, leaf)
    except RuntimeError as error:
        return str(error)


def test_a_write_into_an_expanded_base_is_refused_at_backward_as_torch():
    got = _write_into_an_expanded_base(gradkit)
    assert got == _write_into_an_expanded_base(torch)
    assert got.startswith("unsupported operation: more than one element")
