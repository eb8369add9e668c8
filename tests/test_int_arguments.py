"""torch's argument parser for integer parameters (gradkit/int_arguments.py): dims, sizes and
indices given as tensors (0-d, one-element, float, bool), or as wrong Python types, run or
raise as in torch 2.13: same values, or the same error type and first line."""
import numpy as np
import pytest

import gradkit
from gradkit.autograd import gradcheck, gradgradcheck

try:
    import torch
except ImportError:  # the comparisons skip; the closed-form checks below still run
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is the oracle")

# what a dim / size / index is given: tensors of each kind, and Python values of wrong types
ARGUMENTS = {
    "int_0d": lambda lib: lib.tensor(1), "int_1d": lambda lib: lib.tensor([1]),
    "int_2d": lambda lib: lib.tensor([[1]]), "uint8_0d": lambda lib: lib.tensor(1, dtype=lib.uint8),
    "float_0d": lambda lib: lib.tensor(1.0), "bool_0d": lambda lib: lib.tensor(True),
    "float": lambda lib: 1.0, "str": lambda lib: "a",
}


def _scaled(t, k):
    """``t * k`` for a tensor or number (a size built from the argument); a str stays."""
    return t if isinstance(t, str) else t * k


PROGRAMS = {  # name -> program(lib, a, t), ``a`` a 3x4 float64 tensor, ``t`` the argument
    # int[1] (sum, mean, amax, logsumexp, nansum, std, var, squeeze, count_nonzero, flip)
    "sum(dim=t)": lambda lib, a, t: a.sum(dim=t),
    "sum(t)": lambda lib, a, t: a.sum(t),
    "sum(t, True)": lambda lib, a, t: a.sum(t, True),
    "sum(dim=(t,))": lambda lib, a, t: a.sum(dim=(t,)),
    "sum(dim=(0, t))": lambda lib, a, t: a.sum(dim=(0, t)),
    "mean(dim=t)": lambda lib, a, t: a.mean(dim=t),
    "amax(t)": lambda lib, a, t: a.amax(t),
    "amin(dim=t)": lambda lib, a, t: a.amin(dim=t),
    "logsumexp(t)": lambda lib, a, t: a.logsumexp(t),
    "nansum(t)": lambda lib, a, t: a.nansum(t),
    "std(t)": lambda lib, a, t: a.std(t),
    "var(dim=t, keepdim=True)": lambda lib, a, t: a.var(dim=t, keepdim=True),
    "squeeze(t)": lambda lib, a, t: a.squeeze(t),
    "count_nonzero(t)": lambda lib, a, t: a.count_nonzero(t),
    "flip(t)": lambda lib, a, t: a.flip(t),
    "flip(dims=t)": lambda lib, a, t: a.flip(dims=t),
    "all(t)": lambda lib, a, t: a.all(t),
    "any(dim=(t,))": lambda lib, a, t: a.any(dim=(t,)),
    # int (a 0-d integer tensor only)
    "softmax(t)": lambda lib, a, t: a.softmax(t),
    "softmax(dim=t)": lambda lib, a, t: a.softmax(dim=t),
    "F.softmax(dim=t)": lambda lib, a, t: lib.nn.functional.softmax(a, dim=t),
    "log_softmax(t)": lambda lib, a, t: a.log_softmax(t),
    "cumsum(dim=t)": lambda lib, a, t: a.cumsum(dim=t),
    "cumprod(t)": lambda lib, a, t: a.cumprod(t),
    "logcumsumexp(t)": lambda lib, a, t: a.logcumsumexp(t),
    "prod(t)": lambda lib, a, t: a.prod(t),
    "prod(dim=t, keepdim=True)": lambda lib, a, t: a.prod(dim=t, keepdim=True),
    "argmax(t)": lambda lib, a, t: a.argmax(t),
    "argmin(dim=t)": lambda lib, a, t: a.argmin(dim=t),
    "transpose(t, 0)": lambda lib, a, t: a.transpose(t, 0),
    "transpose(0, dim1=t)": lambda lib, a, t: a.transpose(0, dim1=t),
    "unsqueeze(t)": lambda lib, a, t: a.unsqueeze(t),
    "diagonal(t)": lambda lib, a, t: a.diagonal(t),
    "diag_embed(t)": lambda lib, a, t: a.diag_embed(t),
    "rot90(t)": lambda lib, a, t: a.rot90(t),
    "cat(dim=t)": lambda lib, a, t: lib.cat([a, a], dim=t),
    "stack(dim=t)": lambda lib, a, t: lib.stack([a, a], dim=t),
    "chunk(t)": lambda lib, a, t: a.chunk(t),
    "chunk(2, t)": lambda lib, a, t: a.chunk(2, t),
    "unbind(t)": lambda lib, a, t: a.unbind(t),
    "flatten(start_dim=t)": lambda lib, a, t: a.flatten(start_dim=t),
    "flatten(0, end_dim=t)": lambda lib, a, t: a.flatten(0, end_dim=t),
    "unflatten(t, (2, 2))": lambda lib, a, t: a.unflatten(t, (2, 2)),
    "select(t, 0)": lambda lib, a, t: a.select(t, 0),
    "narrow(t, 0, 1)": lambda lib, a, t: a.narrow(t, 0, 1),
    "sort(t)": lambda lib, a, t: a.sort(t)[0],
    "argsort(dim=t)": lambda lib, a, t: a.argsort(dim=t),
    "topk(1, t)": lambda lib, a, t: a.topk(1, t)[0],
    "kthvalue(1, dim=t)": lambda lib, a, t: a.kthvalue(1, dim=t)[0],
    "movedim(t, 0)": lambda lib, a, t: a.movedim(t, 0),
    "movedim((t,), (0,))": lambda lib, a, t: a.movedim((t,), (0,)),
    "split(1, t)": lambda lib, a, t: a.split(1, t),
    "max(dim=t)": lambda lib, a, t: a.max(dim=t)[0],
    "max(t, True)": lambda lib, a, t: a.max(t, True)[0],
    "min(dim=t, keepdim=True)": lambda lib, a, t: a.min(dim=t, keepdim=True)[0],
    "mode(t)": lambda lib, a, t: a.mode(t)[0],
    "cummax(dim=t)": lambda lib, a, t: a.cummax(dim=t)[0],
    "cummin(t)": lambda lib, a, t: a.cummin(t)[0],
    # SymInt (any one-element integer tensor)
    "tril(t)": lambda lib, a, t: a.tril(t),
    "triu(diagonal=t)": lambda lib, a, t: a.triu(diagonal=t),
    "topk(k=t)": lambda lib, a, t: a.topk(k=t)[0],
    "kthvalue(t)": lambda lib, a, t: a.kthvalue(t)[0],
    "select(0, t)": lambda lib, a, t: a.select(0, t),
    "narrow(0, t, 1)": lambda lib, a, t: a.narrow(0, t, 1),
    "narrow(0, 0, t)": lambda lib, a, t: a.narrow(0, 0, t),
    "roll(t)": lambda lib, a, t: a.roll(t),
    "roll(shifts=t)": lambda lib, a, t: a.roll(shifts=t),
    "roll(1, t)": lambda lib, a, t: a.roll(1, t),
    "roll((t,), (0,))": lambda lib, a, t: a.roll((t,), (0,)),
    "split(t)": lambda lib, a, t: a.split(t),
    # int[] / SymInt[] sizes: a method's *size, a tuple, a keyword
    "permute(t, 0)": lambda lib, a, t: a.permute(t, 0),
    "permute(dims=(t, 0))": lambda lib, a, t: a.permute(dims=(t, 0)),
    "reshape(t*12)": lambda lib, a, t: a.reshape(_scaled(t, 12)),
    "reshape((t*12,))": lambda lib, a, t: a.reshape((_scaled(t, 12),)),
    "reshape(t*3, -1)": lambda lib, a, t: a.reshape(_scaled(t, 3), -1),
    "reshape(3, t*4)": lambda lib, a, t: a.reshape(3, _scaled(t, 4)),
    "reshape(shape=(t*12,))": lambda lib, a, t: a.reshape(shape=(_scaled(t, 12),)),
    "reshape(shape=t*12)": lambda lib, a, t: a.reshape(shape=_scaled(t, 12)),
    "view(t*12)": lambda lib, a, t: a.view(_scaled(t, 12)),
    "view(t*3, -1)": lambda lib, a, t: a.view(_scaled(t, 3), -1),
    "view(3, t*4)": lambda lib, a, t: a.view(3, _scaled(t, 4)),
    "view(size=(t*12,))": lambda lib, a, t: a.view(size=(_scaled(t, 12),)),
    "expand(2, t*3, 4)": lambda lib, a, t: a.expand(2, _scaled(t, 3), 4),
    "expand(size=(2, t*3, 4))": lambda lib, a, t: a.expand(size=(2, _scaled(t, 3), 4)),
    "repeat(t, 1)": lambda lib, a, t: a.repeat(t, 1),
    "repeat((1, t))": lambda lib, a, t: a.repeat((1, t)),
    "tile((t,))": lambda lib, a, t: a.tile((t,)),
    "tile(t, 1)": lambda lib, a, t: a.tile(t, 1),
    "zeros(t)": lambda lib, a, t: lib.zeros(t),
    "zeros(t, 2)": lambda lib, a, t: lib.zeros(t, 2),
    "zeros((2, t))": lambda lib, a, t: lib.zeros((2, t)),
    "ones((t, 2))": lambda lib, a, t: lib.ones((t, 2)),
    "empty(t)": lambda lib, a, t: lib.empty(t).zero_(),
    "rand(2, t)": lambda lib, a, t: lib.rand(2, t).shape,
    "randn(t)": lambda lib, a, t: lib.randn(t).shape,
    "full((t, 3), 1.0)": lambda lib, a, t: lib.full((t, 3), 1.0),
    "full(t, 1.0)": lambda lib, a, t: lib.full(t, 1.0),
    "full(size=(t,), fill_value=1.0)": lambda lib, a, t: lib.full(size=(t,), fill_value=1.0),
    "new_zeros(t)": lambda lib, a, t: a.new_zeros(t),
    "new_ones((t,))": lambda lib, a, t: a.new_ones((t,)),
}


def _outcome(lib, program, argument):
    """What the program gives: its result as NumPy, or (error type, first line)."""
    a = lib.tensor(np.arange(12.0).reshape(3, 4), dtype=lib.float64)
    try:
        result = program(lib, a, ARGUMENTS[argument](lib))
    except (TypeError, RuntimeError, IndexError, ValueError) as error:
        return type(error).__name__, str(error).splitlines()[0]
    if isinstance(result, (tuple, list)) and not isinstance(result, (gradkit.Size, torch.Size)):
        return [r.numpy() for r in result]
    return tuple(result) if isinstance(result, (gradkit.Size, torch.Size)) else result.numpy()


@needs_torch
@pytest.mark.parametrize("argument", ARGUMENTS)
@pytest.mark.parametrize("name", PROGRAMS)
def test_integer_parameter_reads_as_torchs(name, argument):
    got = _outcome(gradkit, PROGRAMS[name], argument)
    expected = _outcome(torch, PROGRAMS[name], argument)
    if isinstance(expected, tuple) and isinstance(expected[0], str):
        assert got == expected
    elif isinstance(expected, list):
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g, e, rtol=1e-14)
    else:
        assert np.shape(got) == np.shape(expected)
        np.testing.assert_allclose(got, expected, rtol=1e-14)


# wrong types beside the dims: keepdim and the like (bool), dtype, device, requires_grad,
# None for a required int, non-tensors in cat's list
WRONG_TYPES = {
    "sum(0, keepdim='x')": lambda lib, a: a.sum(0, keepdim="x"),
    "sum(0, keepdim=1)": lambda lib, a: a.sum(0, keepdim=1),
    "sum(0, 'x')": lambda lib, a: a.sum(0, "x"),
    "mean(0, keepdim=None)": lambda lib, a: a.mean(0, keepdim=None),
    "amax(0, keepdim=1)": lambda lib, a: a.amax(0, keepdim=1),
    "std(0, keepdim=1)": lambda lib, a: a.std(0, keepdim=1),
    "argmax(0, keepdim=1)": lambda lib, a: a.argmax(0, keepdim=1),
    "logsumexp(0, keepdim=1)": lambda lib, a: a.logsumexp(0, keepdim=1),
    "sort(0, descending=1)": lambda lib, a: a.sort(0, descending=1),
    "topk(1, largest=1)": lambda lib, a: a.topk(1, largest=1),
    "sum(dtype='float')": lambda lib, a: a.sum(dtype="float"),
    "sum(dtype=1)": lambda lib, a: a.sum(dtype=1),
    "mean(dtype='x')": lambda lib, a: a.mean(dtype="x"),
    "softmax(0, dtype='x')": lambda lib, a: a.softmax(0, dtype="x"),
    "cumsum(0, dtype='x')": lambda lib, a: a.cumsum(0, dtype="x"),
    "zeros(2, dtype='float32')": lambda lib, a: lib.zeros(2, dtype="float32"),
    "ones(2, dtype=1)": lambda lib, a: lib.ones(2, dtype=1),
    "full((2,), 1.0, dtype='x')": lambda lib, a: lib.full((2,), 1.0, dtype="x"),
    "zeros_like(a, dtype='x')": lambda lib, a: lib.zeros_like(a, dtype="x"),
    "zeros(2, device=1.5)": lambda lib, a: lib.zeros(2, device=1.5),
    "zeros(2, requires_grad='x')": lambda lib, a: lib.zeros(2, requires_grad="x"),
    "cat([a, 'x'])": lambda lib, a: lib.cat([a, "x"]),
    "stack([a, 1])": lambda lib, a: lib.stack([a, 1]),
    "cat([a], 0.5)": lambda lib, a: lib.cat([a], 0.5),
    "softmax(None)": lambda lib, a: a.softmax(None),
    "cumsum(None)": lambda lib, a: a.cumsum(None),
    "unsqueeze(None)": lambda lib, a: a.unsqueeze(None),
    "logsumexp(None)": lambda lib, a: a.logsumexp(None),
    "transpose(None, 0)": lambda lib, a: a.transpose(None, 0),
    "topk(None)": lambda lib, a: a.topk(None),
    "narrow(None, 0, 1)": lambda lib, a: a.narrow(None, 0, 1),
    "movedim(None, 0)": lambda lib, a: a.movedim(None, 0),
    "roll(None)": lambda lib, a: a.roll(None),
    "rot90(1, None)": lambda lib, a: a.rot90(1, None),
    "max(0, 1)": lambda lib, a: a.max(0, 1),
    "max(dim=None)": lambda lib, a: a.max(dim=None),
    "max(None)": lambda lib, a: a.max(None),
    "min(0, keepdim='x')": lambda lib, a: a.min(0, keepdim="x"),
    "mode(0, keepdim=1)": lambda lib, a: a.mode(0, keepdim=1),
    "max(a * 0)": lambda lib, a: lib.max(a, a * 0),
    "max(other=a * 0)": lambda lib, a: a.max(other=a * 0),
    "max(1, keepdim=True) values": lambda lib, a: a.max(1, keepdim=True)[0],
    "max(axis=1) values": lambda lib, a: a.max(axis=1)[0],
    "full(None, 1.0)": lambda lib, a: lib.full(None, 1.0),
    "flip(None)": lambda lib, a: a.flip(None),
    "tensor([1.0], dtype='x')": lambda lib, a: lib.tensor([1.0], dtype="x"),
    "tensor([1.0], requires_grad=None)": lambda lib, a: lib.tensor([1.0], requires_grad=None),
    "tensor([1.0], device=1.5)": lambda lib, a: lib.tensor([1.0], device=1.5),
    "arange('a')": lambda lib, a: lib.arange("a"),
    "arange(None)": lambda lib, a: lib.arange(None),
    "arange(0, 'a')": lambda lib, a: lib.arange(0, "a"),
    "arange(0, 5, 'a')": lambda lib, a: lib.arange(0, 5, "a"),
    "arange(0, 5, 2)": lambda lib, a: lib.arange(0, 5, 2),
    # None where torch takes it: these run
    "sum(None)": lambda lib, a: a.sum(None),
    "argmax(None)": lambda lib, a: a.argmax(None),
    "std(dim=None)": lambda lib, a: a.std(dim=None),
    "roll(1, None)": lambda lib, a: a.roll(1, None),
    "zeros(2, requires_grad=None, dtype=float)": lambda lib, a: lib.zeros(
        2, requires_grad=None, dtype=float),
}


@needs_torch
@pytest.mark.parametrize("name", WRONG_TYPES)
def test_wrong_types_beside_dims_are_torchs(name):
    outcomes = []
    for lib in (gradkit, torch):
        a = lib.tensor(np.arange(12.0).reshape(3, 4), dtype=lib.float64)
        try:
            outcomes.append(np.asarray(WRONG_TYPES[name](lib, a)))
        except (TypeError, RuntimeError) as error:
            outcomes.append((type(error).__name__, str(error).splitlines()[0]))
    if isinstance(outcomes[1], tuple):
        assert outcomes[0] == outcomes[1]
    else:
        np.testing.assert_allclose(outcomes[0], outcomes[1], rtol=1e-14)


def test_a_0d_integer_tensor_is_its_int():
    # closed forms, torch or not: the tensor argument gives what its int gives
    a = gradkit.arange(12.0).reshape(3, 4)
    one, two = gradkit.tensor(1), gradkit.tensor([2])
    assert gradkit.equal(a.sum(dim=one), a.sum(1))
    assert gradkit.equal(a.softmax(one), a.softmax(1))
    assert a.reshape(two * 6).shape == (12,) and gradkit.zeros(two, 3).shape == (2, 3)
    assert gradkit.equal(a.narrow(0, one, two), a[1:3])
    assert gradkit.equal(a.topk(two).values, a.topk(2).values)


@pytest.mark.parametrize("call, error", [
    (lambda a: a.softmax(1.0), "softmax(): argument 'dim' (position 1) must be int, not float"),
    (lambda a: a.unsqueeze(gradkit.tensor([0])),
     "unsqueeze(): argument 'dim' (position 1) must be int, not Tensor"),
    (lambda a: a.reshape("a"), "reshape(): argument 'shape' (position 1) must be tuple of ints, "
                               "not str"),
    (lambda a: gradkit.zeros(2, 2.0), "zeros(): argument 'size' failed to unpack the object at "
                                      "pos 2 with error \"type must be tuple of ints,but got "
                                      "float\""),
    (lambda a: a.sum(dim=1.0), "sum() received an invalid combination of arguments - got "
                               "(dim=float, ), but expected one of:"),
    (lambda a: a.reshape(shape=(2, 6), foo=1), "reshape() got an unexpected keyword argument "
                                               "'foo'"),
    (lambda a: a.reshape(), 'reshape() missing 1 required positional arguments: "shape"'),
])
def test_wrong_types_raise_torchs_type_error(call, error):
    with pytest.raises(TypeError) as raised:
        call(gradkit.arange(12.0).reshape(3, 4))
    assert str(raised.value) == error


def test_bool_tensor_sizes_fail_as_torchs():
    a = gradkit.arange(12.0).reshape(3, 4)
    with pytest.raises(RuntimeError, match=r"^Expected scalar.isIntegral\( false\) to be true"):
        a.reshape(gradkit.tensor(True), 12)
    with pytest.raises(RuntimeError, match=r"^scalar.isIntegral\( false\) INTERNAL ASSERT"):
        a.topk(gradkit.tensor(True))
    with pytest.raises(RuntimeError, match=r"^start must be an 0-dim integral Tensor\.$"):
        a.narrow(0, gradkit.tensor([1]), 1)


@needs_torch
def test_gradients_through_tensor_dims_are_torchs():
    def program(lib):
        x = lib.tensor(np.linspace(-1.0, 1.0, 24).reshape(2, 3, 4), dtype=lib.float64,
                       requires_grad=True)
        one, two = lib.tensor(1), lib.tensor(2)
        y = (x.sum(dim=one).softmax(dim=one - 1) * x.narrow(two, one, two).reshape(two, -1)
             .sum(one).unsqueeze(one)).sum() + x.topk(two, dim=two)[0].cumsum(one).sum()
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        (gg,) = lib.autograd.grad(g.square().sum(), x)
        return g.detach().numpy(), gg.numpy()
    for got, expected in zip(program(gradkit), program(torch)):
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def test_gradcheck_with_tensor_dims():
    x = gradkit.randn(3, 4, dtype=gradkit.float64, requires_grad=True)
    one = gradkit.tensor(1)

    def f(t):
        return t.softmax(one).cumsum(dim=one).sum(dim=(one - 1,)).reshape(one * 2, -1)
    assert gradcheck(f, (x,)) and gradgradcheck(f, (x,))


def _first_line(lib, call):
    """(error type, first line of its message) of ``call(lib)``, or the result's shape."""
    try:
        return tuple(call(lib).shape)
    except TypeError as error:
        return "TypeError", str(error).split("\n")[0]


@needs_torch
@pytest.mark.parametrize("name", ["ones", "zeros", "empty", "rand", "randn"])
@pytest.mark.parametrize("options", [{}, {"dtype": "float64"}, {"requires_grad": True}])
def test_a_factory_given_no_size_is_refused_and_an_empty_one_is_0d(name, options):
    """``ones()`` (no size) is torch's TypeError; ``ones(())`` is a 0-d tensor."""
    def call(lib, *size):
        given = {k: getattr(lib, v) if k == "dtype" else v for k, v in options.items()}
        return getattr(lib, name)(*size, **given)
    theirs = _first_line(torch, call)
    assert _first_line(gradkit, call)[0] == theirs[0] == "TypeError"
    if name not in ("rand", "randn") or options:  # (without options torch lists overloads)
        assert _first_line(gradkit, call) == theirs
    assert _first_line(gradkit, lambda lib: call(lib, ())) == _first_line(
        torch, lambda lib: call(lib, ())) == ()


@needs_torch
@pytest.mark.parametrize("name", ["sum", "mean", "prod"])
@pytest.mark.parametrize("options", [{"keepdim": True}, {"keepdim": False},
                                     {"keepdim": True, "dtype": "float64"}, {"dim": None},
                                     {"dim": None, "keepdim": True}, {"dim": 0, "keepdim": True}])
def test_keepdim_without_a_dim_is_refused_as_torch(name, options):
    """torch takes keepdim only beside a dim: ``x.sum(keepdim=True)`` is its TypeError, where
    ``x.sum(dim=None, keepdim=True)`` reduces every dim (prod's dim is no optional int)."""
    def call(lib):
        given = {k: getattr(lib, v) if k == "dtype" else v for k, v in options.items()}
        return getattr(lib.ones(2, 3), name)(**given)
    assert _first_line(gradkit, call) == _first_line(torch, call)

    def function_form(lib):
        given = {k: getattr(lib, v) if k == "dtype" else v for k, v in options.items()}
        return getattr(lib, name)(lib.ones(2, 3), **given)
    # the function's own message lists the input first ("got (Tensor, keepdim=bool)")
    mine, theirs = _first_line(gradkit, function_form), _first_line(torch, function_form)
    assert mine == theirs or mine[0] == theirs[0] == "TypeError"


# -- more positionals than the op takes (they were dropped: torch.trace(x, 1) gave the trace) --

TOO_MANY = {
    "trace": lambda lib, x: lib.trace(x, 1),
    "trace_method": lambda lib, x: x.trace(1),
    "exp_method": lambda lib, x: x.exp(1),
    "unsqueeze": lambda lib, x: lib.unsqueeze(x, 1, True),
    "unsqueeze_method": lambda lib, x: x.unsqueeze(1, True),
    "tril": lambda lib, x: lib.tril(x, 1, True),
    "tril_method": lambda lib, x: x.tril(1, True),
    "logcumsumexp": lambda lib, x: lib.logcumsumexp(x, 1, True),
}


@needs_torch
@pytest.mark.parametrize("name", sorted(TOO_MANY))
def test_more_positionals_than_the_op_takes_are_refused_as_torch(name):
    messages = []
    for lib in (torch, gradkit):
        with pytest.raises(TypeError) as caught:
            TOO_MANY[name](lib, lib.ones(3, 3))
        messages.append(str(caught.value).replace("TensorBase.", "Tensor."))
    assert messages[1] == messages[0]


# -- plain-function ops read their integer and bool arguments as torch's parser does --------

PLAIN_FUNCTION_CALLS = {
    "diff_bool_n": lambda lib, x: lib.diff(x, True),
    "diff_bool_dim": lambda lib, x: lib.diff(x, 1, True),
    "diag_bool": lambda lib, x: lib.diag(x, False),
    "split_bool": lambda lib, x: lib.split(x, True),
    "quantile_bool_dim": lambda lib, x: lib.quantile(x, 0.5, True),
    "nanquantile_bool_keepdim": lambda lib, x: lib.nanquantile(x, 0.5, 0, 1),
    "quantile_numpy_q": lambda lib, x: lib.quantile(x, np.float32(0.25)),
    "quantile_numpy_int_q": lambda lib, x: lib.quantile(x, np.int64(1), 0),
    "norm_bool_dim": lambda lib, x: lib.norm(x, 1, True),
    "var_mean_numpy_dim": lambda lib, x: lib.var_mean(x, np.int64(1)),
    "std_mean_list_dim": lambda lib, x: lib.std_mean(x, [0, 1]),
    "tensor_split_bool_dim": lambda lib, x: lib.tensor_split(x, 2, True),
    "repeat_interleave_bool_dim": lambda lib, x: lib.repeat_interleave(x, 2, True),
    "unique_consecutive_float": lambda lib, x: lib.unique_consecutive(x, 1.0),
    "unique_consecutive_int_counts": lambda lib, x: x.unique_consecutive(False, 1),
    "unique_consecutive_float_dim": lambda lib, x: x.unique_consecutive(dim=1.5),
}


def _argument_outcome(lib, name):
    x = lib.tensor(np.arange(9.0).reshape(3, 3) % 4)
    try:
        out = PLAIN_FUNCTION_CALLS[name](lib, x)
    except TypeError as error:
        return "TypeError", str(error).split("\n")[0].split(", but expected")[0]
    outs = out if isinstance(out, tuple) else (out,)
    return "ok", [np.asarray(o.tolist()).tolist() for o in outs]


@needs_torch
@pytest.mark.parametrize("name", sorted(PLAIN_FUNCTION_CALLS))
def test_plain_function_ops_read_arguments_as_torch(name):
    ours, theirs = _argument_outcome(gradkit, name), _argument_outcome(torch, name)
    assert ours[0] == theirs[0]
    if ours[0] == "ok":
        for a, b in zip(ours[1], theirs[1], strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-12)
