"""Custom autograd.Function: ctx API, node behaviour, errors (torch's words), torch parity."""
import numpy as np
import pytest

import gradkit
from gradkit.autograd import Function, gradcheck, gradgradcheck, once_differentiable
from gradkit.autograd import observers


def f64(values, requires_grad=True):
    return gradkit.tensor(values, dtype=gradkit.float64, requires_grad=requires_grad)


class Cube(Function):
    @staticmethod
    def forward(ctx, x, power_hint):
        ctx.save_for_backward(x)
        ctx.hint = power_hint
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return 3 * x ** 2 * g, None


class MulAdd(Function):
    """x * y + z with all three saved kinds: inputs, an output, None."""

    @staticmethod
    def forward(ctx, x, y, z):
        out = x * y + z
        ctx.save_for_backward(x, y, None, out)
        return out

    @staticmethod
    def backward(ctx, g):
        x, y, nothing, out = ctx.saved_tensors
        assert nothing is None
        return g * y, g * x, g


def test_forward_backward_and_node_name():
    x = f64([1.0, -2.0, 0.5])
    y = Cube.apply(x, "cube")
    assert y.grad_fn.name() == "CubeBackward"
    assert y.grad_fn.next_functions[0][0].name() == "AccumulateGrad"
    assert len(y.grad_fn.next_functions) == 1  # as torch's: no edge for the non-tensor "cube"
    assert y.grad_fn.params.hint == "cube"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 3 * x.detach().numpy() ** 2)


def test_gradcheck_and_double_backward():
    x, y, z = f64([0.3, -1.2]), f64([2.0, 0.7]), f64([1.0, 1.0])
    assert gradcheck(lambda a, b, c: MulAdd.apply(a, b, c), (x, y, z))
    assert gradgradcheck(lambda a: Cube.apply(a, None), (x,))


def test_saved_output_makes_no_reference_cycle():
    import gc
    import weakref
    x = f64([1.0, 2.0])
    out = MulAdd.apply(x, x, x)
    node = weakref.ref(out.grad_fn)
    del out
    gc.disable()
    try:
        assert node() is None  # freed by reference counting alone
    finally:
        gc.enable()


def test_needs_input_grad_and_non_tensor_args():
    seen = {}

    class Probe(Function):
        @staticmethod
        def forward(ctx, a, b, k):
            seen["needs"] = ctx.needs_input_grad
            return a * k + b

        @staticmethod
        def backward(ctx, g):
            return g * 2, None, None

    a, b = f64([1.0]), f64([1.0], requires_grad=False)
    Probe.apply(a, b, 2.0).sum().backward()
    assert seen["needs"] == (True, False, False)
    assert a.grad.item() == 2.0


def test_mark_non_differentiable_and_materialized_zero_grads():
    received = {}

    class MaxWithIndex(Function):
        @staticmethod
        def forward(ctx, x):
            i = x.argmax()
            ctx.mark_non_differentiable(i)
            ctx.save_for_backward(x, i)
            return x.max(), i, "label"

        @staticmethod
        def backward(ctx, g_value, g_index, g_label):
            received.update(index=g_index, label=g_label)
            x, i = ctx.saved_tensors
            grad = gradkit.zeros_like(x)
            grad[i] = g_value
            return grad

    x = f64([1.0, 5.0, 2.0])
    value, index, label = MaxWithIndex.apply(x)
    assert value.requires_grad and not index.requires_grad and label == "label"
    value.backward()
    assert received["index"].item() == 0 and received["label"] is None
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 1.0, 0.0])


def test_set_materialize_grads_false_passes_none():
    received = []

    class Two(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 1, x * 2

        @staticmethod
        def backward(ctx, g1, g2):
            received.append(g2)
            return g1

    x = f64([1.0, 2.0])
    first, _ = Two.apply(x)
    first.sum().backward()
    assert received == [None]


def test_mark_dirty_rebases_the_input():
    class DoubleInPlace(Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return 2 * g

    x = f64([1.0, 3.0])
    a = x * 1
    b = DoubleInPlace.apply(a)
    assert b is a and a.grad_fn.name() == "DoubleInPlaceBackward"
    (b * b).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 8 * x.detach().numpy())
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad has been used"):
        DoubleInPlace.apply(f64([1.0]))


def test_input_returned_as_is_becomes_an_alias():
    class Identity(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 3

    x = f64([1.0, 2.0])
    y = Identity.apply(x)
    assert y is not x and y.grad_fn.name() == "IdentityBackward" and x.grad_fn is None
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0])


def test_setup_context_style():
    class Scale(Function):
        @staticmethod
        def forward(x, k):
            return x * k

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.k = inputs[1]
            ctx.save_for_backward(output)

        @staticmethod
        def backward(ctx, g):
            out, = ctx.saved_tensors
            return g * ctx.k, None

    x = f64([1.0, 2.0])
    y = Scale.apply(x, 4.0)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [4.0, 4.0])


def test_no_graph_when_grad_disabled():
    x = f64([1.0])
    with gradkit.no_grad():
        y = Cube.apply(x, None)
    assert not y.requires_grad and y.grad_fn is None


def test_once_differentiable_blocks_double_backward():
    class Square(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 2

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 2 * x * g

    x = f64([1.0, 2.0])
    seed = f64([1.0, 1.0])
    gx, = gradkit.autograd.grad(Square.apply(x), x, seed, create_graph=True)
    np.testing.assert_array_equal(gx.detach().numpy(), [2.0, 4.0])
    with pytest.raises(RuntimeError, match="marked with @once_differentiable"):
        gx.sum().backward()
    # with a seed that needs no grad there is nothing to differentiate, as in torch
    gx, = gradkit.autograd.grad(Square.apply(x).sum(), x, create_graph=True)
    assert not gx.requires_grad


def test_hooks_apply_to_function_nodes():
    x = f64([1.0, 2.0])
    y = Cube.apply(x, None)
    calls = []
    y.grad_fn.register_prehook(lambda grads: calls.append("pre"))
    y.grad_fn.register_hook(lambda gi, go: (gi[0] * 0,))  # one per tensor input, as torch
    y.sum().backward()
    assert calls == ["pre"]
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0])


def test_observers_see_function_forward_and_node():
    events = []

    class Recorder(observers.Observer):
        def op_enter(self, name, inputs):
            events.append(("enter", name))
            return name

        def op_exit(self, token, name, inputs, outputs, node, params):
            events.append(("exit", token, node.name() if node is not None else None))

        def node_enter(self, node, grads):
            events.append(("node", node.name()))

    recorder = Recorder()
    observers.attach(recorder)
    try:
        Cube.apply(f64([2.0]), None).sum().backward()
    finally:
        observers.detach(recorder)
    assert ("enter", "Cube") in events
    assert ("exit", "Cube", "CubeBackward") in events
    assert ("node", "CubeBackward") in events
    assert events.index(("enter", "Cube")) < events.index(("enter", "gradkit::pow"))


def test_saved_tensors_info_counts_function_saves():
    x = f64([1.0, 2.0, 3.0])
    y = Cube.apply(x, None)
    assert y.grad_fn.saved_tensors_info() == (1, 24)
    y.sum().backward()
    assert y.grad_fn.saved_tensors_info() == (0, 0)


# -- errors ---------------------------------------------------------------------------

class _Returns(Function):
    result = None

    @staticmethod
    def forward(ctx, x, k):
        return x * k

    @staticmethod
    def backward(ctx, g):
        return _Returns.result(g)


def _backward_returning(result):
    _Returns.result = staticmethod(result)
    x = f64([1.0, 2.0])
    _Returns.apply(x, 2.0).sum().backward()


def test_wrong_number_of_gradients():
    with pytest.raises(RuntimeError, match=r"function _ReturnsBackward returned an incorrect "
                       r"number of gradients \(expected 2, got 1\)"):
        _backward_returning(lambda g: (g,))


def test_extra_trailing_nones_are_accepted():
    _backward_returning(lambda g: (g, None, None))


def test_wrong_gradient_shape():
    with pytest.raises(RuntimeError, match=r"Function _ReturnsBackward returned an invalid "
                       r"gradient at index 0 - got \[3\] but expected shape compatible with \[2\]"):
        _backward_returning(lambda g: (gradkit.ones(3, dtype=gradkit.float64), None))


def test_gradient_dtype_is_cast_like_torch():
    x = f64([1.0, 2.0])
    _Returns.result = staticmethod(lambda g: (gradkit.ones(2, dtype=gradkit.float32), None))
    _Returns.apply(x, 2.0).sum().backward()
    assert x.grad.dtype == gradkit.float64


def test_complex_gradient_for_real_input():
    with pytest.raises(RuntimeError, match="returned a complex gradient at index 0"):
        _backward_returning(lambda g: (gradkit.ones(2, dtype=gradkit.complex128), None))


def test_gradient_for_non_tensor_input():
    with pytest.raises(RuntimeError, match="returned a gradient different than None at position "
                       "2, but the corresponding forward input was not a Variable"):
        _backward_returning(lambda g: (g, g))


def test_gradient_of_wrong_type():
    with pytest.raises(RuntimeError, match="returned a gradient of type str at position 0"):
        _backward_returning(lambda g: ("grad", None))


def test_save_for_backward_rejects_non_tensors():
    class SavesInt(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, 3)
            return x

    with pytest.raises(TypeError, match="save_for_backward can only save variables, but argument "
                       "1 is of type int"):
        SavesInt.apply(f64([1.0]))


def test_saved_tensors_after_free_and_after_inplace():
    x = f64([1.0, 2.0])
    y = Cube.apply(x, None)
    y.sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        _ = y.grad_fn.params.saved_tensors
    a = x * 1
    y = Cube.apply(a, None)
    a.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_instantiating_a_function_warns_and_calling_it_is_an_error():
    with pytest.warns(DeprecationWarning, match="should not be instantiated"):
        instance = Cube()
    with pytest.raises(RuntimeError, match="Legacy autograd function with non-static forward"):
        instance(gradkit.ones(1))


# -- against torch ----------------------------------------------------------------------

def test_same_gradients_as_torch_custom_function():
    torch = pytest.importorskip("torch")

    def program(lib, function_base):
        class Softish(function_base):
            @staticmethod
            def forward(ctx, x, w):
                out = (x * w).exp() / (1 + (x * w).exp())
                ctx.save_for_backward(out, w, x)
                return out

            @staticmethod
            def backward(ctx, g):
                out, w, x = ctx.saved_tensors
                d = out * (1 - out) * g
                return d * w, (d * x).sum(0)

        x = lib.tensor(np.linspace(-1, 1, 6).reshape(2, 3), dtype=lib.float64,
                       requires_grad=True)
        w = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
        y = Softish.apply(x, w)
        (y ** 2).sum().backward()
        return y.grad_fn.name(), x.grad.numpy(), w.grad.numpy()

    ours = program(gradkit, Function)
    theirs = program(torch, torch.autograd.Function)
    assert ours[0] == theirs[0]
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-12)
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-12)


def test_function_node_shows_its_ctx_like_torch():
    x = f64([1.0, 2.0])
    y = Cube.apply(x, "hint")
    assert y.grad_fn.hint == "hint"
    assert y.grad_fn.needs_input_grad == (True, False)
    saved, = y.grad_fn.saved_tensors
    assert saved is x
    with pytest.raises(AttributeError, match="no attribute 'missing'"):
        _ = y.grad_fn.missing


class _NanBackward(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * float("nan")


def test_anomaly_mode_names_the_function_node():
    import warnings
    x = f64([1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with gradkit.autograd.detect_anomaly():
            y = _NanBackward.apply(x)
            with pytest.raises(RuntimeError, match="Function '_NanBackwardBackward' returned nan "
                               "values in its 0th output."):
                y.sum().backward()


def test_profiler_records_the_function_forward_and_its_children():
    from gradkit import profiler
    with profiler.profile() as prof:
        Cube.apply(f64([1.0, 2.0]), None).sum().backward()
    names = [e.name for e in prof.events()]
    assert "Cube" in names and "CubeBackward" in names
    assert names.index("Cube") < names.index("gradkit::pow")


def test_vjp_is_an_alias_of_backward():
    class Triple(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 3

        @staticmethod
        def vjp(ctx, g):
            return g * 3

    x = f64([1.0])
    Triple.apply(x).sum().backward()
    assert x.grad.item() == 3.0


def test_missing_backward():
    class NoBackward(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 3

    with pytest.raises(NotImplementedError, match="You must implement either the backward or "
                       "vjp method"):
        NoBackward.apply(f64([1.0])).sum().backward()


def test_pytorch_tutorial_program_runs_unchanged():
    """The custom-Function example of PyTorch's tutorial, with ``import gradkit as torch``."""
    real_torch = pytest.importorskip("torch")

    def tutorial(torch):
        import math

        class LegendrePolynomial3(torch.autograd.Function):
            @staticmethod
            def forward(ctx, input):
                ctx.save_for_backward(input)
                return 0.5 * (5 * input ** 3 - 3 * input)

            @staticmethod
            def backward(ctx, grad_output):
                input, = ctx.saved_tensors
                return grad_output * 1.5 * (5 * input ** 2 - 1)

        dtype, device = torch.float, torch.device("cpu")
        x = torch.linspace(-math.pi, math.pi, 2000, device=device, dtype=dtype)
        y = torch.sin(x)
        params = [torch.full((), v, device=device, dtype=dtype, requires_grad=True)
                  for v in (0.0, -1.0, 0.0, 0.3)]
        a, b, c, d = params
        for _ in range(50):
            loss = (a + b * LegendrePolynomial3.apply(c + d * x) - y).pow(2).sum()
            loss.backward()
            with torch.no_grad():
                for p in params:
                    p -= 5e-6 * p.grad
                    p.grad = None
        return [p.item() for p in params] + [loss.item()]

    np.testing.assert_allclose(tutorial(gradkit), tutorial(real_torch), rtol=1e-5, atol=1e-7)
