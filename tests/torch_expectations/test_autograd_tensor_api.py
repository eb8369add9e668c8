"""torch's expectations of Tensor conversions around autograd: numpy(), dtype casts, pickle."""
import pickle

import pytest

from .twin import data, leaf, like_torch, raises_like_torch

@pytest.mark.parametrize("src,dst", [("float32", "double"), ("float64", "float")])
def test_dtype_conversion_backward_returns_grad_in_the_leaf_dtype(src, dst):
    # torch: test_type_conversions (_test_type_conversion_backward)
    def program(lib):
        x = lib.tensor(data(5, 5), dtype=getattr(lib, src), requires_grad=True)
        getattr(x, dst)().sum().backward()
        return x.grad, str(x.grad.dtype).split(".")[-1]

    assert like_torch(program)[1] == src


def test_numpy_of_a_tensor_that_requires_grad_is_an_error():
    # torch: test_numpy_requires_grad
    raises_like_torch(lambda lib: leaf(lib, 2, 2).numpy(), RuntimeError,
                      r"Can't call numpy\(\) on Tensor that requires grad\. "
                      r"Use tensor\.detach\(\)\.numpy\(\) instead\.")

    def allowed(lib):
        with lib.no_grad():
            with_grad = leaf(lib, 2, 2).numpy().shape
        return with_grad, leaf(lib, 2, 2, requires_grad=False).numpy().shape

    like_torch(allowed)


@pytest.mark.parametrize("protocol", [0, 1, 2, pickle.HIGHEST_PROTOCOL])
def test_pickle_keeps_values_and_requires_grad(protocol):
    # torch: test_pickle
    def program(lib):
        x, y = leaf(lib, 4, 4), leaf(lib, 4, 4, seed=1, requires_grad=False)
        xc, yc = pickle.loads(pickle.dumps([x, y], protocol=protocol))
        return xc, yc, xc.requires_grad, yc.requires_grad

    assert like_torch(program)[2:] == (True, False)


def test_pickle_makes_fresh_leaves_of_views_non_leaves_and_grads():
    # torch: test_pickle (what is not kept: .grad, history, the view relation)
    def program(lib):
        x = leaf(lib, 4)
        x.grad = lib.ones(4, dtype=lib.float64)
        base = leaf(lib, 4, seed=1, requires_grad=False)
        view, nonleaf = base[1:3], x * 2
        xc, vc, nc = pickle.loads(pickle.dumps([x, view, nonleaf], protocol=0))
        return (xc.grad, vc, vc._base, nc, nc.requires_grad, nc.is_leaf)

    got = like_torch(program)
    assert got[0] is None and got[2] is None and got[4:] == (True, True)


@pytest.mark.parametrize("convert", [int, float, bool, complex])
@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf"), 2.5, -0.0,
                                   1 + 2j, 2.5 + 0j, "two elements"])
def test_python_scalar_conversions(convert, value):
    # torch: test_pyscalar_conversions (one-element tensors, nan/inf, complex, several elements)
    def program(lib):
        t = lib.ones(2) if value == "two elements" else lib.tensor([value])
        try:
            result = convert(t)
        except (RuntimeError, TypeError, ValueError, OverflowError) as error:
            return type(error).__name__, str(error)
        return ("nan" if result != result else result), type(result).__name__

    like_torch(program)
