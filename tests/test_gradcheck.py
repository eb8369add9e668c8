"""gradcheck/gradgradcheck themselves: they must catch wrong derivatives."""
import numpy as np
import pytest

import gradkit
from gradkit.autograd import gradcheck, gradgradcheck
from gradkit.autograd.gradcheck import GradcheckError
from gradkit.ops import op


@op(save="x")
def _wrong_square(xp, x):
    return x * x


_wrong_square.defvjp(lambda g, x: g * 3 * x)  # should be 2x


@op(save="x")
def _wrong_second_derivative(xp, x):
    return x * x * x


# first derivative right (3x^2) but built from ops whose own derivative is wrong
_wrong_second_derivative.defvjp(lambda g, x: g * 3 * _wrong_square(x))


def double(*shape):
    return gradkit.randn(*shape, dtype=gradkit.float64, requires_grad=True)


def test_gradcheck_passes_correct_ops():
    x, w = double(2, 3), double(3, 4)
    assert gradcheck(lambda x, w: (x @ w).exp().sum(1), (x, w))


def test_gradcheck_catches_a_wrong_vjp():
    x = double(3)
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect to "
                                             "input 0"):
        gradcheck(_wrong_square, (x,))
    assert gradcheck(_wrong_square, (x,), raise_exception=False) is False


def test_fast_mode_catches_a_wrong_vjp_too():
    x = double(4)
    assert gradcheck(lambda x: x.sin(), (x,), fast_mode=True)
    with pytest.raises(GradcheckError, match="fast mode"):
        gradcheck(_wrong_square, (x,), fast_mode=True)


def test_gradgradcheck_catches_a_wrong_second_derivative():
    x = double(3)
    assert gradcheck(_wrong_second_derivative, (x,))
    with pytest.raises(GradcheckError):
        gradgradcheck(_wrong_second_derivative, (x,))


def test_gradcheck_complex_inputs_and_outputs():
    z = gradkit.randn(3, dtype=gradkit.complex128, requires_grad=True)
    assert gradcheck(lambda z: (z * z).exp(), (z,))
    assert gradgradcheck(lambda z: (z * z.conj()).real, (z,))


def test_gradcheck_needs_an_input_that_requires_grad():
    with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
        gradcheck(lambda x: x * 2, (gradkit.ones(2, dtype=gradkit.float64),))


def test_gradcheck_warns_for_single_precision():
    x = gradkit.randn(2, requires_grad=True)
    with pytest.warns(UserWarning, match="is not a double precision floating point"):
        gradcheck(lambda x: x * 2, (x,), atol=1e-2, rtol=1e-2, eps=1e-3)


def test_gradcheck_leaves_inputs_unchanged():
    x = double(3)
    before = x.detach().numpy().copy()
    gradcheck(lambda x: x.tanh(), (x,))
    np.testing.assert_array_equal(x.detach().numpy(), before)
