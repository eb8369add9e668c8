"""A custom Function's gradient in another shape than its input's: torch's engine sums it back
where the input's shape expands to it (validate_outputs' reduce_grad) and refuses other shapes.
Found by torch's autograd_function_db (NumpyMul's backward returns the broadcast shape)."""
import pytest

import gradkit

torch = pytest.importorskip("torch")

SHAPES = [((4,), (3, 4)), ((3, 1), (3, 4)), ((), (2, 2)), ((1,), (5,)),
          ((2, 1, 3), (4, 2, 5, 3)), ((4,), (3,)), ((4,), (4, 1)), ((2, 3), (3, 2))]


def _gradient(lib, input_shape, grad_shape, create_graph=False):
    class Returns(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            scale = lib.arange(1.0, 1.0 + lib.Size(grad_shape).numel(), dtype=lib.float64)
            return scale.reshape(grad_shape) * g.sum()

    x = lib.ones(input_shape, dtype=lib.float64, requires_grad=True)
    try:
        y = Returns.apply(x * 2)
        grad, = lib.autograd.grad(y.sum(), x, create_graph=create_graph)
        if not create_graph:
            return grad.tolist()
        second, = lib.autograd.grad((grad * grad).sum(), x)
        return grad.tolist(), second.tolist()
    except RuntimeError as e:
        return str(e)


@pytest.mark.parametrize("input_shape,grad_shape", SHAPES, ids=str)
def test_a_gradient_the_input_expands_to_is_summed_back_as_torch(input_shape, grad_shape):
    assert _gradient(gradkit, input_shape, grad_shape) == \
        _gradient(torch, input_shape, grad_shape)


@pytest.mark.parametrize("input_shape,grad_shape", SHAPES[:3], ids=str)
def test_the_summed_gradient_is_differentiable_as_torch(input_shape, grad_shape):
    assert _gradient(gradkit, input_shape, grad_shape, True) == \
        _gradient(torch, input_shape, grad_shape, True)


def test_shapes_the_input_does_not_expand_to_are_refused_in_torchs_words():
    assert _gradient(gradkit, (4,), (4, 1)) == (
        "Function ReturnsBackward returned an invalid gradient at index 0 - got [4, 1] but "
        "expected shape compatible with [4]")
