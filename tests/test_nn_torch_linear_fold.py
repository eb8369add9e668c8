"""torch's test_nn.py (TestNN, characters 320k-480k): Linear, Bilinear, Fold/Unfold, Flatten,
softmin and small module checks, each program run under gradkit and torch 2.13."""
import pickle
import warnings

import numpy as np
import pytest

from tests.nn_torch_programs import filled, grads, leaf
from tests.tensor_twins import data, same_as_torch


def test_linear_broadcasting():
    def program(m):
        lin = filled(m.nn.Linear(5, 8).double(), m)
        inp = m.tensor(data(2, 3, 5))
        return lin(inp.view(6, 5)).view(2, 3, 8), lin(inp)
    expected, got = same_as_torch(program)
    np.testing.assert_allclose(got[3], expected[3], rtol=1e-12)


def test_linear_raise_on_scalar_input():
    def program(m):
        return m.nn.Linear(1, 1)(m.ones(1).squeeze())
    got = same_as_torch(program)
    assert got[0] == "raises" and "both arguments" in got[2] and "1D" in got[2]


@pytest.mark.parametrize("bias", [False, True])
def test_linear_autograd_strided(bias):
    def program(m):
        lin = filled(m.nn.Linear(4, 4, bias=bias).double(), m)
        inp = leaf(m, 4, seed=3)
        res = lin(inp)
        expected = m.einsum("i,ji->j", inp, lin.weight)
        if bias:
            expected = expected + lin.bias
        return res, grads(m, res, [lin.weight, inp]), grads(m, expected, [lin.weight, inp])
    got = same_as_torch(program)
    np.testing.assert_allclose(got[1][0][3], got[2][0][3], rtol=1e-12)


def test_bilinear_matches_einsum():
    def program(m):
        mod = filled(m.nn.Bilinear(10, 10, 8).double(), m)
        x1, x2 = leaf(m, 4, 10, seed=1), leaf(m, 4, 10, seed=2)
        res = mod(x1, x2)
        expected = m.einsum("bi,kij,bj->bk", x1, mod.weight, x2) + mod.bias
        args = [mod.weight, mod.bias, x1, x2]
        return res, expected, grads(m, res, args), grads(m, expected, args)
    got = same_as_torch(program)
    np.testing.assert_allclose(got[0][3], got[1][3], rtol=1e-10)


def test_bilinear_non_contiguous_and_broadcasting():
    def program(m):
        mod = filled(m.nn.Bilinear(7, 7, 5).double(), m)
        x1, x2 = leaf(m, 4, 7, 10, seed=1), leaf(m, 4, 7, 10, seed=2)
        out_nc = mod(x1.transpose(1, 2), x2.transpose(1, 2))
        out = mod(x1.transpose(1, 2).contiguous(), x2.transpose(1, 2).contiguous())
        wide = filled(m.nn.Bilinear(5, 6, 8).double(), m)
        a, b = m.tensor(data(2, 3, 5)), m.tensor(data(2, 3, 6, seed=1))
        return (out_nc, out, grads(m, out_nc, [x1, x2]), grads(m, out, [x1, x2]),
                wide(a, b), wide(a.view(6, 5), b.view(6, 6)).view(2, 3, 8))
    got = same_as_torch(program)
    np.testing.assert_allclose(got[0][3], got[1][3], rtol=1e-12)


def test_bilinear_no_bias_and_gradcheck():
    def program(m):
        mod = filled(m.nn.Bilinear(10, 10, 8, False, dtype=m.double), m)
        x1, x2 = leaf(m, 4, 10, seed=1), leaf(m, 4, 10, seed=2)
        check = m.autograd.gradcheck(lambda a, b: m.nn.functional.bilinear(a, b, mod.weight),
                                     (x1, x2))
        return mod.bias, mod(x1, x2), check
    assert same_as_torch(program)[2] is True


def test_bilinear_value_error():
    got = same_as_torch(lambda m: m.nn.Bilinear(0, 0, 0))
    assert got[:2] == ("raises", "ValueError") and "in1_features must be > 0" in got[2]


def test_bilinear_and_linear_empty():
    def program(m):
        mod = filled(m.nn.Bilinear(20, 30, 40).double(), m)
        x1, x2 = leaf(m, 0, 10, 20), leaf(m, 0, 10, 30)
        lin = filled(m.nn.Linear(7, 7).double(), m)
        x = leaf(m, 0, 7)
        out, lout = mod(x1, x2), lin(x)
        return (out, grads(m, out, [x1, x2, mod.weight, mod.bias]),
                lout, grads(m, lout, [x, lin.weight, lin.bias]))
    got = same_as_torch(program)
    assert not got[3][1][3].any() and not got[3][2][3].any()


FOLDS = [
    ((4, 5), (2, 3), {}, (1, 5, 9)),
    ((4, 5), (2, 3), {}, (1, 19, 9)),
    ((4, 5), (2, 3), {}, (1, 6, 10)),
    ((4, 5), (2, 3), {"stride": (2, 2)}, (1, 6, 5)),
    ((4, 5), (2, 3), {"stride": (2, 2), "dilation": (1, 2), "padding": (2, 0)}, (1, 6, 5)),
    ((4, 5), (2, 2), {"stride": 1, "dilation": 8, "padding": 0}, (1, 12, 12)),
]


@pytest.mark.parametrize("output_size, kernel, kwargs, shape", FOLDS)
def test_fold_invalid_arg(output_size, kernel, kwargs, shape):
    got = same_as_torch(lambda m: m.nn.Fold(output_size, kernel, **kwargs)(
        m.tensor(data(*shape))))
    assert got[:2] == ("raises", "RuntimeError")


@pytest.mark.parametrize("kernel, kwargs, shape", [
    ((2, 3), {}, (1, 2, 2, 2)),
    ((5, 3), {"padding": (1, 1)}, (1, 2, 2, 3)),
    ((1, 3), {"padding": (1, 1), "dilation": (1, 2)}, (1, 2, 2, 2)),
])
def test_unfold_invalid_arg(kernel, kwargs, shape):
    got = same_as_torch(lambda m: m.nn.Unfold(kernel, **kwargs)(m.tensor(data(*shape))))
    assert got[:2] == ("raises", "RuntimeError") and "must be at least one" in got[2]


def test_unfold_empty():
    def program(m):
        inp = leaf(m, 0, 3, 3, 4)
        out = m.nn.Unfold(kernel_size=(2, 3))(inp)
        return out, grads(m, out, [inp])
    same_as_torch(program)
    got = same_as_torch(lambda m: m.nn.Unfold(kernel_size=(2, 3))(m.randn(3, 0, 3, 4)))
    assert got[0] == "raises" and "Expected 3D or 4D" in got[2]


def test_softmin_is_softmax_of_the_negation():
    def program(m):
        x = m.tensor(data(2, 16))
        f = m.nn.functional
        return f.softmin(x, 1), f.softmax(-x, 1), f.softmin(x, 0), f.softmax(-x, 0)
    got = same_as_torch(program)
    np.testing.assert_allclose(got[0][3], got[1][3], rtol=1e-12)


def test_flatten_and_unflatten():
    def program(m):
        x = m.tensor(data(2, 1, 2, 3))
        y = m.tensor(data(2, 50))
        return (tuple(m.nn.Flatten(start_dim=1, end_dim=-1)(x).shape),
                m.nn.Unflatten(1, (2, 5, 5))(y).shape, m.nn.Unflatten(1, [2, 5, 5])(y).shape,
                m.nn.Unflatten(1, m.Size([2, 25]))(y).shape)
    assert same_as_torch(program)[0] == [2, 6]


@pytest.mark.parametrize("size", [
    (2, 5, 5.0), [["C", 2], ["W", 5], ["H", 5]], [("C", 2), ("W", 5), ("H", 5)],
    (["C", 2], ["W", 5], ["H", 5]), ({"C": 2}, {"W": 5}, {"H": 5}), 5])
def test_unflatten_invalid_arg(size):
    dim = 1 if size == (2, 5, 5.0) else "features"
    got = same_as_torch(lambda m: m.nn.Unflatten(dim=dim, unflattened_size=size))
    assert got[:2] == ("raises", "TypeError") and "unflattened_size must be" in got[2]


def test_padding_list_in_conv_transpose():
    def program(m):
        x = m.tensor(data(2, 8, 6, 6))
        a = filled(m.nn.ConvTranspose2d(8, 4, kernel_size=3, padding=[3, 3]).double(), m)
        b = filled(m.nn.ConvTranspose2d(8, 4, kernel_size=3, padding=(3, 3)).double(), m)
        return a(x), b(x)
    same_as_torch(program)


def test_fractional_max_pool2d_invalid_output_ratio():
    def program(m):
        pool = m.nn.FractionalMaxPool2d(kernel_size=[2, 1], output_ratio=[0.5, 0.5, 0.6])
        return pool(m.rand(2, 3, 10, 8))
    got = same_as_torch(program)
    assert got[:2] == ("raises", "ValueError")


def test_max_pool1d_invalid_output_size():
    got = same_as_torch(lambda m: m.nn.MaxPool1d(3, stride=255)(m.tensor([[0.3204]])))
    assert got[:2] == ("raises", "RuntimeError")


def test_pickle_module_no_weights_only_warning():
    def program(m):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            copy = pickle.loads(pickle.dumps(m.nn.Linear(10, 10)))
        return len(w), type(copy).__name__
    assert same_as_torch(program) == [0, "Linear"]
