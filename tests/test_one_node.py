"""Composites recorded as torch's one node (gradkit/ops/one_node.py), compared with torch on the
same programs: the node's name and edges, first and second derivatives, hooks, a second
backward and in-place changes of what torch's node saves."""
import numpy as np
import pytest

import gradkit

torch = pytest.importorskip("torch")

rng = np.random.default_rng(0)
X4 = rng.standard_normal((2, 2, 4, 4))
W = rng.standard_normal((2, 3, 2, 2))
B3 = rng.standard_normal(3)
C2 = rng.standard_normal(2)

# name -> fn(lib, *leaves), the leaves' values (the first one is the input)
PROGRAMS = {
    "conv_transpose2d": (lambda m, x, w, b: m.nn.functional.conv_transpose2d(x, w, b, stride=2),
                         (X4, W, B3)),
    "conv_transpose2d_no_bias": (lambda m, x, w: m.nn.functional.conv_transpose2d(x, w),
                                 (X4, W)),
    "conv_transpose1d": (lambda m, x, w: m.nn.functional.conv_transpose1d(x, w),
                         (X4[:, :, 0], W[..., 0])),
    "conv_transpose3d": (lambda m, x, w: m.nn.functional.conv_transpose3d(x, w),
                         (X4[:, :, None], W[:, :, None])),
    "avg_pool2d": (lambda m, x: m.nn.functional.avg_pool2d(x, 2, padding=1), (X4,)),
    "avg_pool2d_unbatched": (lambda m, x: m.nn.functional.avg_pool2d(x[0], 2), (X4,)),
    "avg_pool3d": (lambda m, x: m.nn.functional.avg_pool3d(x, 2), (X4[:, None],)),
    "adaptive_avg_pool2d": (lambda m, x: m.nn.functional.adaptive_avg_pool2d(x, (3, 2)), (X4,)),
    "adaptive_avg_pool2d_unbatched_mean": (
        lambda m, x: m.nn.functional.adaptive_avg_pool2d(x[0], 1), (X4,)),
    "adaptive_avg_pool3d_unbatched": (
        lambda m, x: m.nn.functional.adaptive_avg_pool3d(x, 3), (X4,)),
    "interpolate_nearest": (lambda m, x: m.nn.functional.interpolate(x, scale_factor=2), (X4,)),
    "interpolate_bilinear": (lambda m, x: m.nn.functional.interpolate(
        x, size=(3, 5), mode="bilinear", align_corners=True), (X4,)),
    "interpolate_linear": (lambda m, x: m.nn.functional.interpolate(
        x[0], scale_factor=1.5, mode="linear"), (X4,)),
    "interpolate_trilinear": (lambda m, x: m.nn.functional.interpolate(
        x[:, None], scale_factor=2, mode="trilinear"), (X4,)),
    "batch_norm": (lambda m, x, w, b: m.nn.functional.batch_norm(
        x, None, None, w, b, training=True), (X4, C2, C2)),
    "batch_norm_eval": (lambda m, x, w: m.nn.functional.batch_norm(
        x, m.zeros(2, dtype=m.float64), m.ones(2, dtype=m.float64), w), (X4, C2)),
    "instance_norm": (lambda m, x, w: m.nn.functional.instance_norm(
        x, m.zeros(2, dtype=m.float64), m.ones(2, dtype=m.float64), weight=w), (X4, C2)),
    "group_norm": (lambda m, x, w, b: m.nn.functional.group_norm(x, 1, w, b), (X4, C2, C2)),
    "unfold": (lambda m, x: m.nn.functional.unfold(x, 2, padding=1), (X4,)),
    "unfold_unbatched": (lambda m, x: m.nn.functional.unfold(x[0], 3), (X4,)),
    "fold": (lambda m, x: m.nn.functional.fold(x, (3, 3), 2), (X4.reshape(2, 8, 4),)),
    "pdist": (lambda m, x: m.nn.functional.pdist(x), (X4[0, 0],)),
    "pixel_shuffle": (lambda m, x: m.nn.functional.pixel_shuffle(x.reshape(2, 8, 2, 2), 2),
                      (X4,)),
    "pixel_unshuffle": (lambda m, x: m.nn.functional.pixel_unshuffle(x, 2), (X4,)),
    "grid_sample": (lambda m, x, grid: m.nn.functional.grid_sample(
        x, grid, align_corners=False), (X4, np.tanh(rng.standard_normal((2, 3, 2, 2))))),
    "grid_sample_nearest": (lambda m, x, grid: m.nn.functional.grid_sample(
        x, grid, mode="nearest", padding_mode="border", align_corners=True),
        (X4, np.tanh(rng.standard_normal((2, 3, 2, 2))))),
    "embedding_bag": (lambda m, w: m.nn.functional.embedding_bag(
        m.tensor([1, 2, 4, 5, 4, 3]), w, m.tensor([0, 2, 2, 5])), (W.reshape(6, 4),)),
    "embedding_bag_weighted": (lambda m, w, p: m.nn.functional.embedding_bag(
        m.tensor([[1, 2], [4, 0]]), w, mode="sum", per_sample_weights=p),
        (W.reshape(6, 4), B3[:2].reshape(1, 2).repeat(2, 0))),
    "bilinear": (lambda m, a, b, w: m.nn.functional.bilinear(a, b, w),
                 (X4[0, 0, :, :3], X4[0, 1, :, :2], W[..., 0])),
    "bilinear_3d": (lambda m, a, b, w: m.nn.functional.bilinear(a, b, w),
                    (X4[0, :, :, :3], X4[1, :, :, :2], W[..., 0])),
    "channel_shuffle": (lambda m, x: m.nn.functional.channel_shuffle(x, 2), (X4,)),
}


# torch's composition views its one node's result back (ATen's instance_norm, bilinear)
VIEWED = {"instance_norm", "bilinear", "bilinear_3d"}


def _leaves(lib, values):
    return [lib.tensor(v, dtype=lib.float64, requires_grad=True) for v in values]


def _edges(node):
    return [None if n is None else n.name().rpartition("::")[2] for n, _ in node.next_functions]


@pytest.mark.parametrize("name", PROGRAMS)
def test_one_node_named_and_connected_as_torchs(name):
    fn, values = PROGRAMS[name]
    y, t_y = fn(gradkit, *_leaves(gradkit, values)), fn(torch, *_leaves(torch, values))
    node, t_node = y.grad_fn, t_y.grad_fn
    if name in VIEWED:  # torch's view of its one node: the node below it
        assert (node.name(), t_node.name()) == ("ViewBackward0", "ViewBackward0")
        node, t_node = node.next_functions[0][0], t_node.next_functions[0][0]
    assert (type(node).__name__, node.name()) == (type(t_node).__name__, t_node.name())
    assert _edges(node) == _edges(t_node)


# torch's PdistBackward0 and EmbeddingBagBackward0 are once differentiable; gradkit's
# composites differentiate again
ONCE_DIFFERENTIABLE = ["pdist", "embedding_bag", "embedding_bag_weighted"]
TWICE_DIFFERENTIABLE = [name for name in PROGRAMS if name not in ONCE_DIFFERENTIABLE]


@pytest.mark.parametrize("name", TWICE_DIFFERENTIABLE)
def test_one_node_first_and_second_derivatives_are_torchs(name):
    """Values, gradients and the gradients of a create_graph gradient (double backward)."""
    fn, values = PROGRAMS[name]

    def derivatives(lib):
        leaves = _leaves(lib, values)
        y = fn(lib, *leaves)
        seed = lib.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape)),
                          dtype=lib.float64, requires_grad=True)
        grads = lib.autograd.grad(y, leaves, seed, create_graph=True)
        second = lib.autograd.grad(sum((g * g).sum() for g in grads), leaves + [seed],
                                   allow_unused=True)
        return [y.detach().numpy(), *(g.detach().numpy() for g in grads),
                *(None if g is None else g.numpy() for g in second)]

    got, expected = derivatives(gradkit), derivatives(torch)
    for value, t_value in zip(got, expected, strict=True):
        if t_value is None or value is None:  # torch: no second derivative where it is zero
            assert value is None or not np.any(value)
            continue
        np.testing.assert_allclose(value, t_value, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ONCE_DIFFERENTIABLE)
def test_once_differentiable_first_derivative_is_torchs(name):
    fn, values = PROGRAMS[name]
    grads = [[g.numpy() for g in lib.autograd.grad(fn(lib, *leaves).sum(), leaves)]
             for lib in (gradkit, torch) for leaves in [_leaves(lib, values)]]
    for got, expected in zip(*grads, strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_one_node_gradcheck_and_gradgradcheck():
    x, w, b = _leaves(gradkit, (X4[:1, :, :3, :3], W, B3))

    def f(x, w, b):
        return gradkit.nn.functional.conv_transpose2d(x, w, b, stride=2, padding=1)
    assert gradkit.autograd.gradcheck(f, (x, w, b))
    assert gradkit.autograd.gradgradcheck(f, (x, w, b))


def _hooked(lib):
    """An input's tensor hook fires once, and .grad is accumulated once."""
    x, = _leaves(lib, (X4,))
    h = x * 1
    calls = []
    h.register_hook(lambda g: calls.append(g.sum().item()))
    lib.nn.functional.avg_pool2d(h, 2).sum().backward()
    return calls, x.grad.numpy()


def test_one_node_calls_input_hooks_once_as_torch():
    calls, grad = _hooked(gradkit)
    t_calls, t_grad = _hooked(torch)
    np.testing.assert_allclose(calls, t_calls)
    np.testing.assert_allclose(grad, t_grad)


def _outcome(program, lib):
    try:
        return program(lib)
    except RuntimeError as exc:
        return str(exc).replace("torch.", "gradkit.").replace("torch", "gradkit")


def _second_backward(lib):
    x, w = _leaves(lib, (X4, W))
    y = lib.nn.functional.conv_transpose2d(x, w).sum()
    y.backward()
    y.backward()


def _retained(lib):
    x, = _leaves(lib, (X4,))
    y = lib.nn.functional.interpolate(x, scale_factor=2).sum()
    y.backward(retain_graph=True)
    y.backward()
    return x.grad.sum().item()


def _input_written(lib, name):
    def program(lib):
        fn, values = PROGRAMS[name]
        leaves = _leaves(lib, values)
        h = leaves[0] * 1
        y = fn(lib, h, *leaves[1:])
        h.add_(1)
        y.sum().backward()
        return "no error"
    return program(lib)


@pytest.mark.parametrize("program", [_second_backward, _retained], ids=["freed", "retained"])
def test_one_node_second_backward_as_torch(program):
    assert _outcome(program, gradkit) == _outcome(program, torch)


@pytest.mark.parametrize("name", ["conv_transpose2d", "avg_pool2d", "batch_norm", "group_norm",
                                  "pdist", "interpolate_nearest"])
def test_one_node_saved_input_written_in_place_as_torch(name):
    """torch's error names the saved input by its own node; an op that saves none runs."""
    got = _outcome(lambda lib: _input_written(lib, name), gradkit)
    assert got == _outcome(lambda lib: _input_written(lib, name), torch)


def test_one_node_saved_attributes():
    x, = _leaves(gradkit, (X4[0, 0],))
    y = gradkit.nn.functional.pdist(x)
    assert y.grad_fn._saved_self is x
    np.testing.assert_array_equal(y.grad_fn._saved_result.numpy(), y.detach().numpy())
    y.sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second"):
        y.grad_fn._saved_self  # noqa: B018 - the read raises once backward freed it
    with pytest.raises(AttributeError, match="'PdistBackward0' object has no attribute 'foo'"):
        y.grad_fn.foo  # noqa: B018


def test_one_node_records_nothing_without_a_graph():
    x, = _leaves(gradkit, (X4,))
    with gradkit.no_grad():
        assert gradkit.nn.functional.avg_pool2d(x, 2).grad_fn is None
    assert gradkit.nn.functional.avg_pool2d(x.detach(), 2).grad_fn is None


def test_one_node_under_forward_ad_keeps_the_composites_tangent():
    import gradkit.autograd.forward_ad as fwad
    x = gradkit.tensor(X4)
    t = gradkit.tensor(np.ones_like(X4))
    tx, tt = torch.tensor(X4), torch.tensor(np.ones_like(X4))
    with fwad.dual_level():
        tangent = fwad.unpack_dual(gradkit.nn.functional.avg_pool2d(
            fwad.make_dual(x, t), 2)).tangent
    import torch.autograd.forward_ad as t_fwad
    with t_fwad.dual_level():
        t_tangent = t_fwad.unpack_dual(torch.nn.functional.avg_pool2d(
            t_fwad.make_dual(tx, tt), 2)).tangent
    np.testing.assert_allclose(tangent.numpy(), t_tangent.numpy())


class _Unreadable(gradkit.autograd.graph.Node):
    """A node of the graph before a composite: a bounded pass must not read its edges."""

    __slots__ = ()

    @property
    def _next(self):
        raise AssertionError("the graph before the composite was read")

    @_next.setter
    def _next(self, edges) -> None:
        pass  # Node.__init__ sets it: nothing to keep


def test_bounded_pass_reads_nothing_past_its_targets():
    """one_node's nested pass (engine.run(bounded=True)) plans only the composite's graph: a
    deep network's backward stays linear in its depth."""
    from gradkit.autograd.exec_plan import plan
    Node = gradkit.autograd.graph.Node
    before = _Unreadable(None, (), ())
    target = Node(None, (before,), (0,))
    root = Node(None, (target,), (0,))
    dependencies, runs = plan([(root, 0)], [(target, 0)], False, bounded=True)
    assert runs == {root: root._next} and dependencies == {target: 1}
    with pytest.raises(AssertionError, match="the graph before the composite was read"):
        plan([(root, 0)], [(target, 0)], False)


def test_anomaly_mode_names_the_one_node_and_the_forward_line():
    x, w = _leaves(gradkit, (X4, W))
    h = x * 1
    with gradkit.autograd.detect_anomaly():
        y = gradkit.nn.functional.conv_transpose2d(h, w)  # FORWARD-ONE-NODE
        h.add_(1)
        with pytest.warns(UserWarning, match="Error detected in") as record:
            with pytest.raises(RuntimeError, match="modified by an inplace operation"):
                y.sum().backward()
    warning = "\n".join(str(w.message) for w in record if "Error detected" in str(w.message))
    assert warning.startswith("Error detected in ConvolutionBackward0. Traceback of forward call "
                              "that caused the error:\n")
    assert "# FORWARD-ONE-NODE" in warning


def test_one_node_holds_no_input_torchs_node_does_not_save():
    """UpsampleNearest2DBackward0 saves no tensor: the input's memory goes with the input."""
    import gc
    import weakref
    x, = _leaves(gradkit, (X4,))
    h = x * 2
    y = gradkit.nn.functional.interpolate(h, scale_factor=2)
    memory = weakref.ref(h._data)
    del h
    gc.collect()
    assert memory() is None
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full(X4.shape, 8.0))
