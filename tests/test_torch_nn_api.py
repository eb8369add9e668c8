"""torch.nn API details against torch itself: functional extras, clipping, hooks, save/load.

Each story runs the same program with ``lib`` = gradkit and ``lib`` = torch and compares what
it returns (numbers, structure, error messages).
"""
import math

import numpy as np
import pytest

import gradkit
from gradkit.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")


def _host(value):
    """Tensors (nested in lists/tuples/dicts) as NumPy arrays, for comparing across libraries."""
    if isinstance(value, (gradkit.Tensor, torch.Tensor)):
        return value.detach().numpy()
    if isinstance(value, (list, tuple)):
        return [_host(v) for v in value]
    if isinstance(value, dict):
        return {k: _host(v) for k, v in value.items()}
    return value


def assert_same(program, rtol=1e-5, atol=1e-6):
    """``program(lib)`` gives the same numbers and structure under gradkit and torch."""
    _assert_close(_host(program(gradkit)), _host(program(torch)), rtol, atol)


def _assert_close(got, expected, rtol, atol):
    if isinstance(expected, list):
        assert isinstance(got, list) and len(got) == len(expected)
        for g, e in zip(got, expected):
            _assert_close(g, e, rtol, atol)
    elif isinstance(expected, dict):
        assert list(got) == list(expected)
        for key in expected:
            _assert_close(got[key], expected[key], rtol, atol)
    elif isinstance(expected, np.ndarray):
        assert got.shape == expected.shape and got.dtype == expected.dtype, (got, expected)
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)
    else:
        assert got == expected


def same_error(program):
    """``program`` raises the same exception type and message under gradkit and torch."""
    with pytest.raises(Exception) as expected:
        program(torch)
    with pytest.raises(type(expected.value), match=_escaped(str(expected.value))):
        program(gradkit)


def _escaped(message):
    import re
    return re.escape(message.split("\n")[0])


X = [[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]]

# -- softmax family ----------------------------------------------------------------------


@pytest.mark.parametrize("call", [
    lambda lib, x: lib.nn.functional.softmax(x, dim=-1),
    lambda lib, x: lib.nn.functional.softmax(x, dim=0, dtype=lib.float64),
    lambda lib, x: lib.nn.functional.log_softmax(x, 1, dtype=lib.float64),
    lambda lib, x: lib.nn.functional.softmin(x, dim=1),
    lambda lib, x: x.softmax(-1),
    lambda lib, x: x.softmax(dim=0),
    lambda lib, x: x.log_softmax(-1, lib.float64),
    lambda lib, x: lib.softmax(x, 0, lib.float64),
    lambda lib, x: lib.log_softmax(x, dim=1),
    lambda lib, x: lib.softmax(x, dim=1, dtype=lib.float64).sum(dtype=lib.float32),
], ids=["F.softmax", "F.softmax-dtype", "F.log_softmax-dtype", "F.softmin", "method",
        "method-dim", "method-dtype", "torch.softmax-dtype", "torch.log_softmax", "sum-dtype"])
def test_softmax_spellings_match_torch(call):
    def program(lib):
        x = lib.tensor(X, requires_grad=True)
        out = call(lib, x)
        (out * lib.arange(out.numel()).reshape(out.shape)).sum().backward()
        return [out, x.grad]
    assert_same(program)


def test_softmax_without_dim_warns_and_picks_torchs_dim():
    for lib in (gradkit, torch):
        with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
            lib.nn.functional.softmax(lib.tensor(X))
    with pytest.warns(UserWarning):
        assert_same(lambda lib: lib.nn.functional.softmax(lib.tensor(X)))

# -- one_hot and normalize ----------------------------------------------------------------


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.functional.one_hot(lib.tensor([0, 2, 1])),
    lambda lib: lib.nn.functional.one_hot(lib.tensor([0, 2, 1]), num_classes=5),
    lambda lib: lib.nn.functional.one_hot(lib.tensor([[0], [3]]), 4),
    lambda lib: lib.nn.functional.one_hot(lib.tensor(2), 3),
    lambda lib: lib.nn.functional.one_hot(lib.zeros(0, dtype=lib.long), 3),
])
def test_one_hot_matches_torch(call):
    assert_same(call)


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.functional.one_hot(lib.tensor([0.0, 1.0])),
    lambda lib: lib.nn.functional.one_hot(lib.tensor([0, 1], dtype=lib.int32), 3),
    lambda lib: lib.nn.functional.one_hot(lib.tensor([-1, 1])),
    lambda lib: lib.nn.functional.one_hot(lib.tensor([4]), 3),
    lambda lib: lib.nn.functional.one_hot(lib.zeros(0, dtype=lib.long)),
    lambda lib: lib.nn.functional.normalize(lib.tensor([1, 2])),
], ids=["float", "int32", "negative", "too-big", "empty", "normalize-int"])
def test_one_hot_and_normalize_errors_match_torch(call):
    same_error(call)


@pytest.mark.parametrize("p,dim", [(2.0, 1), (1.0, 0), (math.inf, 1), (3.0, -1), (0.5, 1),
                                   (-math.inf, 1)])
def test_normalize_matches_torch_with_gradients_at_zero_rows(p, dim):
    def program(lib):
        x = lib.tensor([[0.0, 0.0, 0.0], [3.0, -4.0, 1.0], [2.0, 2.0, -1.0]], requires_grad=True)
        out = lib.nn.functional.normalize(x, p=p, dim=dim)
        (out * lib.arange(9.0).reshape(3, 3)).sum().backward()
        return [out, x.grad]
    assert_same(program, rtol=1e-5)


@pytest.mark.parametrize("p", [1.0, 2.0, 3.0, math.inf])
def test_normalize_gradgradcheck(p):
    x = gradkit.tensor([[0.3, -1.2, 2.0], [1.5, 0.7, -0.4]], dtype=gradkit.float64,
                       requires_grad=True)

    def f(t):
        return gradkit.nn.functional.normalize(t, p=p, dim=1)
    assert gradcheck(f, (x,))
    assert gradgradcheck(f, (x,))


def test_vector_norm_forward_mode_matches_its_gradient():
    from gradkit.autograd import forward_ad
    from gradkit.ops.norms import vector_norm
    x = gradkit.tensor([[0.3, -1.2, 2.0], [1.5, 0.7, -0.4]], dtype=gradkit.float64)
    tangent = gradkit.tensor([[1.0, 0.5, -2.0], [0.1, 0.2, 0.3]], dtype=gradkit.float64)
    for p in (1.0, 2.0, 3.0, math.inf):
        with forward_ad.dual_level():
            out = vector_norm(forward_ad.make_dual(x, tangent), p, 1)
            jvp = forward_ad.unpack_dual(out).tangent
        leaf = x.clone().requires_grad_()
        (grad,) = gradkit.autograd.grad(vector_norm(leaf, p, 1).sum(), leaf)
        np.testing.assert_allclose(jvp.numpy(), (grad * tangent).sum(1).numpy())

# -- gradient clipping ---------------------------------------------------------------------


def _params(lib):
    a = lib.nn.Parameter(lib.tensor([3.0, -4.0]))
    b = lib.nn.Parameter(lib.tensor([[1.0, 2.0]]))
    unused = lib.nn.Parameter(lib.tensor([1.0]))
    a.grad = lib.tensor([3.0, -4.0])
    b.grad = lib.tensor([[12.0, -0.5]])
    return [a, b, unused]


@pytest.mark.parametrize("norm_type", [2.0, 1, math.inf, 3.5, 0, "inf"])
@pytest.mark.parametrize("max_norm", [1.0, 100.0])
def test_clip_grad_norm_matches_torch(norm_type, max_norm):
    def program(lib):
        params = _params(lib)
        total = lib.nn.utils.clip_grad_norm_(params, max_norm, norm_type=norm_type)
        return [total, *(p.grad for p in params)]
    assert_same(program)


def test_clip_grad_norm_takes_a_tensor_a_generator_and_nothing():
    assert_same(lambda lib: lib.nn.utils.clip_grad_norm_(_params(lib)[0], 1.0))
    assert_same(lambda lib: lib.nn.utils.clip_grad_norm_((p for p in _params(lib)), 1.0))
    assert_same(lambda lib: lib.nn.utils.clip_grad_norm_([], 1.0))
    with pytest.warns(UserWarning, match="`parameters` is an empty generator"):
        gradkit.nn.utils.clip_grad_norm_((p for p in []), 1.0)


def test_clip_grad_norm_nonfinite_raises_or_spreads_nan_as_torch():
    def poisoned(lib):
        params = _params(lib)
        params[0].grad[0] = float("nan")
        return params

    same_error(lambda lib: lib.nn.utils.clip_grad_norm_(poisoned(lib), 1.0,
                                                        error_if_nonfinite=True))

    def program(lib):
        params = poisoned(lib)
        total = lib.nn.utils.clip_grad_norm_(params, 1.0)
        return [total, params[1].grad]
    assert_same(program)


def test_clip_grad_value_matches_torch():
    def program(lib):
        params = _params(lib)
        assert lib.nn.utils.clip_grad_value_(params, 3.5) is None
        return [p.grad for p in params]
    assert_same(program)


def test_parameters_to_vector_round_trip_matches_torch():
    def program(lib):
        params = _params(lib)
        vec = lib.nn.utils.parameters_to_vector(params)
        lib.nn.utils.vector_to_parameters(vec * 2, params)
        return [vec, *params]
    assert_same(program)
