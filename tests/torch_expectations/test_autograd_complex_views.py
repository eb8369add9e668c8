"""torch's expectations for views between real and complex memory (test/autograd/
test_complex.py, and test_norm_subgradient of test_autograd.py): ``view_as_real`` and
``view_as_complex`` are views in autograd's sense, so in-place writes through them reach the
base's gradient, and a multi-output view of them refuses in-place writes."""
import numpy as np
import pytest

import gradkit

from .twin import data, like_torch, raises_like_torch


def _pair(lib, *shape, dtype="float64"):
    """A leaf and a detached twin of it, both requiring grad."""
    values = data(*shape) if dtype == "float64" else data(*shape) + 1j * data(*shape, seed=1)
    x = lib.tensor(values, dtype=getattr(lib, dtype), requires_grad=True)
    return x, x.detach().requires_grad_(True)


def _through_views(lib, make_view, dtype, *shape):
    """Gradients of |sum| after an in-place mul_ on ``make_view(clone)`` and after the same
    out-of-place (``mul``) on a fresh one: torch finds them equal."""
    x, y = _pair(lib, *shape, dtype=dtype)
    viewed = make_view(x.clone())
    viewed.mul_(2)
    viewed.sum().abs().backward()
    make_view(y.clone()).mul(2).sum().abs().backward()
    return x.grad, y.grad


@pytest.mark.parametrize("case", ["both", "parent", "child"])
def test_in_place_through_complex_views_reaches_the_base(case):
    # torch: TestAutogradComplex.test_view_func_for_complex_views, its three cases
    def program(lib):
        if case == "both":  # real -> complex -> real, written in place
            return _through_views(lib, lambda b: lib.view_as_real(lib.view_as_complex(b)),
                                  "float64", 2, 2, 2)
        if case == "parent":  # a reshape of a complex view
            return _through_views(lib, lambda b: lib.view_as_complex(b).reshape(4),
                                  "float64", 2, 2, 2)
        return _through_views(lib, lambda b: lib.view_as_real(b.reshape(5, 2)),
                              "complex128", 10)

    got, expected = like_torch(program)
    np.testing.assert_allclose(got.numpy(), expected.numpy())


@pytest.mark.parametrize("requires_grad", [False, True])
def test_a_multi_output_view_of_a_complex_view_refuses_in_place(requires_grad):
    # torch: TestAutogradComplex.test_view_with_multi_output
    def program(lib):
        x = lib.tensor(data(2, 2, 2), requires_grad=requires_grad)
        parts = lib.view_as_complex(x).unbind(0)
        parts[0].add_(lib.ones(2, dtype=lib.complex128, requires_grad=True))

    raises_like_torch(program, RuntimeError, "output of a function that returns multiple views")


def test_complex_views_act_as_an_identity():
    # torch: TestAutogradComplex.as_identity
    def through_views(z):
        selected = gradkit.view_as_complex(z).select(z.dim() - 2, 0)
        return gradkit.view_as_real(selected).sum()

    z = gradkit.tensor(data(10, 2, 2), requires_grad=True)
    assert gradkit.autograd.gradcheck(through_views, (z,))
    assert gradkit.autograd.gradgradcheck(through_views, (z,))
    through_views(z).backward()
    z1 = z.detach().clone().requires_grad_(True)
    z1.select(z1.dim() - 2, 0).sum().backward()
    np.testing.assert_array_equal(z.grad.numpy(), z1.grad.numpy())


def test_writes_through_either_view_show_in_the_other():
    def program(lib):
        z = lib.tensor(data(3) + 1j * data(3, seed=1))
        pairs = lib.view_as_real(z)
        pairs[1, 0] = 7.0
        z[2] = 5 - 5j
        back = lib.view_as_complex(pairs)
        back.mul_(1j)
        return z, pairs, pairs._base is z, back._base is z

    z, pairs, pairs_of_z, back_of_z = like_torch(program)
    assert pairs_of_z and back_of_z  # both views of z itself, as torch
    np.testing.assert_array_equal(pairs.numpy()[..., 0], z.numpy().real)


@pytest.mark.parametrize("make", [
    lambda lib: lib.view_as_real(lib.ones(3)),
    lambda lib: lib.view_as_real(lib.ones(3, dtype=lib.complex128).conj()),
    lambda lib: lib.view_as_complex(lib.ones(3)),
    lambda lib: lib.view_as_complex(lib.ones(2, 3).t()),
    lambda lib: lib.view_as_complex(lib.ones(3, 2, dtype=lib.int64)),
    lambda lib: lib.view_as_complex(lib.ones(10).as_strided((3, 2), (3, 1))),
    lambda lib: lib.view_as_complex(lib.ones(9)[1:].reshape(4, 2)),
], ids=["real", "conj", "last-size", "last-stride", "int", "odd-stride", "odd-offset"])
def test_misuse_is_refused_as_torch(make):
    with pytest.raises(RuntimeError) as torch_error:
        make(pytest.importorskip("torch"))
    with pytest.raises(RuntimeError) as ours:
        make(gradkit)
    assert str(ours.value) == str(torch_error.value)


@pytest.mark.parametrize("shape", [(), (0,), (2, 3)])
def test_shapes_dtypes_and_gradients_as_torch(shape):
    def program(lib):
        z = lib.tensor(np.reshape(data(*shape) + 1j * data(*shape, seed=1), shape),
                       dtype=lib.complex64, requires_grad=True)
        pairs = lib.view_as_real(z)
        weights = lib.tensor(np.reshape(data(*shape, 2, seed=2), shape + (2,)),
                             dtype=lib.float32)
        (pairs * weights).sum().backward()
        back = lib.view_as_complex(pairs)
        return pairs, pairs.dtype == lib.float32, z.grad, back, back.grad_fn.name()

    like_torch(program, rtol=1e-6)


def test_gradcheck_of_both_views():
    z = gradkit.tensor(data(3, 2) + 1j * data(3, 2, seed=1), requires_grad=True)
    x = gradkit.tensor(data(3, 2), requires_grad=True)
    for fn, arg in ((gradkit.view_as_real, z), (gradkit.view_as_complex, x)):
        assert gradkit.autograd.gradcheck(fn, (arg,))
        assert gradkit.autograd.gradgradcheck(fn, (arg,))
        assert gradkit.autograd.gradcheck(fn, (arg,), check_forward_ad=True,
                                          check_backward_ad=False)


@pytest.mark.parametrize(("shape", "p"), [((10,), 2), ((10, 10), 2), ((10,), 3), ((10,), 1),
                                          ((10,), 1.5)])
def test_norm_subgradient_at_zero_is_zero(shape, p):
    # torch: test_norm_subgradient
    def program(lib):
        x = lib.zeros(*shape, dtype=lib.float64, requires_grad=True)
        x.norm(p).backward()
        return x.grad

    grad = like_torch(program)
    assert not np.abs(grad.numpy()).sum()
