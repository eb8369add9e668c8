"""Arguments torch's parser refuses (None, a missing or extra one, a wrong type), run in
torch and gradkit: the same error type and the same first line of its message (where torch
lists its signatures after that line, gradkit gives the first line only)."""
import warnings

import pytest

import gradkit

torch = pytest.importorskip("torch")


def _outcome(module, call):
    """("ok", shape, dtype, values) of ``call(module)``, or (error type, first line)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch.range's deprecation
            out = call(module)
    except (TypeError, RuntimeError, ValueError, IndexError) as error:
        return type(error).__name__, str(error).split("\n")[0]
    return "ok", tuple(out.shape), str(out.dtype).split(".")[-1], out.tolist()


def assert_same_outcome(call):
    expected = _outcome(torch, call)
    assert _outcome(gradkit, call) == expected


_RANGES = {
    "arange(0, None)": lambda m: m.arange(0, None),
    "arange(None, 5)": lambda m: m.arange(None, 5),
    "arange(0, 5, None)": lambda m: m.arange(0, 5, None),
    "arange(0, 5, step=None)": lambda m: m.arange(0, 5, step=None),
    "arange(end=None)": lambda m: m.arange(end=None),
    "arange(start=0, end=None)": lambda m: m.arange(start=0, end=None),
    "arange()": lambda m: m.arange(),
    "arange(5, step=2)": lambda m: m.arange(5, step=2),
    "arange(0, 5, 1, 2)": lambda m: m.arange(0, 5, 1, 2),
    "arange(0, 'a')": lambda m: m.arange(0, "a"),
    "arange(end=5)": lambda m: m.arange(end=5),
    "arange(start=1, end=5)": lambda m: m.arange(start=1, end=5),
    "arange(1, 6, step=2)": lambda m: m.arange(1, 6, step=2),
    "arange(tensor)": lambda m: m.arange(m.tensor(5)),
    "linspace(0, None, 3)": lambda m: m.linspace(0, None, 3),
    "linspace(None, 1, 3)": lambda m: m.linspace(None, 1, 3),
    "linspace(0, 1, None)": lambda m: m.linspace(0, 1, None),
    "linspace(0, 1, steps=None)": lambda m: m.linspace(0, 1, steps=None),
    "linspace(0, 1)": lambda m: m.linspace(0, 1),
    "linspace(0)": lambda m: m.linspace(0),
    "linspace(0, 1, 2.0)": lambda m: m.linspace(0, 1, 2.0),
    "linspace(0, 1, True)": lambda m: m.linspace(0, 1, True),
    "linspace(0, 1, 3, 2)": lambda m: m.linspace(0, 1, 3, 2),
    "linspace(0, 'a', 3)": lambda m: m.linspace(0, "a", 3),
    "linspace(0, 1, tensor)": lambda m: m.linspace(0, 1, m.tensor(3)),
    "linspace(keywords)": lambda m: m.linspace(start=0, end=1, steps=3),
    "logspace(0, None, 3)": lambda m: m.logspace(0, None, 3),
    "logspace(0, 1, None)": lambda m: m.logspace(0, 1, None),
    "logspace(0, 1, 3, None)": lambda m: m.logspace(0, 1, 3, None),
    "logspace(0, 1, 3, base=None)": lambda m: m.logspace(0, 1, 3, base=None),
    "logspace(0, 1, 3, 2j)": lambda m: m.logspace(0, 1, 3, 2j),
    "logspace(0, 1, 3, 2, 5)": lambda m: m.logspace(0, 1, 3, 2, 5),
    "logspace(0, 1, 3, base=tensor)": lambda m: m.logspace(0, 1, 3, base=m.tensor(2)),
    "logspace(0, 1, 3, True)": lambda m: m.logspace(0, 1, 3, True),
    "range(0, None)": lambda m: m.range(0, None),
    "range(None, 5)": lambda m: m.range(None, 5),
    "range(0, 5, None)": lambda m: m.range(0, 5, None),
    "range(None)": lambda m: m.range(None),
    "range(5)": lambda m: m.range(5),
    "range()": lambda m: m.range(),
    "range(end=3)": lambda m: m.range(end=3),
    "range(0, step=2)": lambda m: m.range(0, step=2),
    "range(start=0, end=None)": lambda m: m.range(start=0, end=None),
    "range(0, 5, 1, 2)": lambda m: m.range(0, 5, 1, 2),
    "range(0, 5, foo=1)": lambda m: m.range(0, 5, foo=1),
    "range(0, 5, end=3)": lambda m: m.range(0, 5, end=3),
    "range(tensors)": lambda m: m.range(m.tensor(0), m.tensor(5.0)),
}


@pytest.mark.parametrize("name", list(_RANGES))
def test_range_arguments_as_torch(name):
    """None or a missing, extra or ill-typed number: arange, linspace and logspace have
    several signatures (torch's "invalid combination"; arange's one-number form names the
    argument), range one (too many, twice, missing, ill-typed, unknown, in torch's words)."""
    assert_same_outcome(_RANGES[name])


def _shape_or_error(module, call):
    """(shape, dtype) of ``call(module)`` (empty's and rand's values are not compared), or
    (error type, first line)."""
    outcome = _outcome(module, call)
    return outcome[:3] if outcome[0] == "ok" else outcome


_SIZE_KEYWORDS = {
    "size=(2, 3)": lambda f, m: f(size=(2, 3)),
    "size=[2, 3]": lambda f, m: f(size=[2, 3]),
    "size=()": lambda f, m: f(size=()),
    "size=(2, 3), dtype": lambda f, m: f(size=(2, 3), dtype=m.float64),
    "size=2": lambda f, m: f(size=2),
    "size=None": lambda f, m: f(size=None),
    "size=tensor": lambda f, m: f(size=m.tensor(2)),
    "size=(2.0,)": lambda f, m: f(size=(2.0,)),
    "2, size=(2, 3)": lambda f, m: f(2, size=(2, 3)),
    "shape=(2,)": lambda f, m: f(shape=(2,)),
    "size=(2,), foo=1": lambda f, m: f(size=(2,), foo=1),
    "2, foo=1": lambda f, m: f(2, foo=1),
    "size=(-1,)": lambda f, m: f(size=(-1,)),
}


@pytest.mark.parametrize("name", ["zeros", "ones", "empty", "rand", "randn"])
@pytest.mark.parametrize("given", list(_SIZE_KEYWORDS))
def test_factory_size_keyword_as_torch(name, given):
    """``ones(size=(2, 3))`` is ``ones(2, 3)``; a size both ways is given twice (rand's other
    signatures make that an invalid combination), another keyword unknown, none missing."""
    def call(m):
        return _SIZE_KEYWORDS[given](getattr(m, name), m)
    assert _shape_or_error(gradkit, call) == _shape_or_error(torch, call)


_FULLS = {
    "full(size=(2, 3), fill_value=1.5)": lambda m: m.full(size=(2, 3), fill_value=1.5),
    "full((2, 3), fill_value=True)": lambda m: m.full((2, 3), fill_value=True),
    "full(fill_value=1, size=(2,))": lambda m: m.full(fill_value=1, size=(2,)),
    "full((2,), tensor)": lambda m: m.full((2,), m.tensor(2.5)),
    "full(size=(2, 3))": lambda m: m.full(size=(2, 3)),
    "full(fill_value=1)": lambda m: m.full(fill_value=1),
    "full()": lambda m: m.full(),
    "full(size=2, fill_value=1)": lambda m: m.full(size=2, fill_value=1),
    "full(2, 3)": lambda m: m.full(2, 3),
    "full((2,), None)": lambda m: m.full((2,), None),
    "full((2,), fill_value=None)": lambda m: m.full((2,), fill_value=None),
    "full((2,), 1, size=(2,))": lambda m: m.full((2,), 1, size=(2,)),
    "full((2,), 1, 2)": lambda m: m.full((2,), 1, 2),
    "full((2,), 1, foo=2)": lambda m: m.full((2,), 1, foo=2),
}


@pytest.mark.parametrize("name", list(_FULLS))
def test_full_arguments_as_torch(name):
    """full's one signature (size, fill_value): by position or keyword, with torch's errors
    for a missing, repeated, extra, unknown or ill-typed argument."""
    assert_same_outcome(_FULLS[name])


_METHOD_SIZES = {
    "reshape(2, shape=(2,))": lambda x: x.reshape(2, shape=(2,)),
    "reshape(foo=(2,))": lambda x: x.reshape(foo=(2,)),
    "reshape(shape=(2,), foo=1)": lambda x: x.reshape(shape=(2,), foo=1),
    "reshape(shape=(2,))": lambda x: x.reshape(shape=(2,)),
    "expand(sizes=(2,))": lambda x: x.expand(sizes=(2,)),
    "permute(0, dims=(0,))": lambda x: x.permute(0, dims=(0,)),
}


@pytest.mark.parametrize("name", list(_METHOD_SIZES))
def test_method_size_keyword_as_torch(name):
    """A method's ``*size`` or its keyword: given twice, missing (before an unknown keyword),
    or unknown, in the words of torch's parser."""
    assert_same_outcome(lambda m: _METHOD_SIZES[name](m.ones(2)))


_NO_DIM = {
    "x.max(keepdim=True)": lambda m, x: x.max(keepdim=True),
    "max(x, keepdim=True)": lambda m, x: m.max(x, keepdim=True),
    "x.min(keepdim=False)": lambda m, x: x.min(keepdim=False),
    "min(x, keepdim=True)": lambda m, x: m.min(x, keepdim=True),
    "x.max(dim=None)": lambda m, x: x.max(dim=None),
    "x.max(foo=1)": lambda m, x: x.max(foo=1),
    "max(x, foo=1)": lambda m, x: m.max(x, foo=1),
    "x.max(keepdim=True, other=x)": lambda m, x: x.max(keepdim=True, other=x),
    "x.max(dim=None, keepdim=True)": lambda m, x: x.max(dim=None, keepdim=True).values,
    "x.min(0, keepdim=True)": lambda m, x: x.min(0, keepdim=True).values,
    "x.median(keepdim=True)": lambda m, x: x.median(keepdim=True),
    "median(x, keepdim=False)": lambda m, x: m.median(x, keepdim=False),
    "x.median(dim=None)": lambda m, x: x.median(dim=None),
    "x.median(dim=None, keepdim=True)": lambda m, x: x.median(dim=None, keepdim=True),
    "x.median(foo=1)": lambda m, x: x.median(foo=1),
    "x.median(keepdim=True, dim=0)": lambda m, x: x.median(keepdim=True, dim=0).values,
    "x.median()": lambda m, x: x.median(),
    "x.nanmedian(keepdim=True)": lambda m, x: x.nanmedian(keepdim=True),
    "nanmedian(x, dim=None)": lambda m, x: m.nanmedian(x, dim=None),
    "x.nanmedian(1, True)": lambda m, x: x.nanmedian(1, True).values,
}


@pytest.mark.parametrize("name", list(_NO_DIM))
def test_max_min_median_keepdim_without_dim_as_torch(name):
    """keepdim is in the signatures with a dim only: max/min have others (torch's "invalid
    combination", listed without the input in the method form), median's other takes no
    argument ("missing 1 required positional arguments"); its dim is no optional int."""
    assert_same_outcome(lambda m: _NO_DIM[name](m, m.tensor([[1.0, 3.0], [2.0, 0.5]])))


_ONE_SIGNATURE = ["mul", "matmul", "atan2", "maximum", "hypot", "logical_and", "heaviside",
                  "masked_select", "take", "gather", "index_select", "index_add", "scatter_add",
                  "put", "isclose", "dist", "fmax", "gcd", "ldexp", "complex", "polar"]
_SEVERAL_SIGNATURES = ["add", "sub", "div", "pow", "eq", "lt", "fmod", "remainder", "lerp",
                       "bitwise_and", "copysign", "xlogy", "masked_fill", "index_fill",
                       "scatter", "addcmul", "addcdiv", "addmm", "addmv", "addr", "baddbmm",
                       "addbmm", "floor_divide", "rsub", "fill"]


@pytest.mark.parametrize("form", ["function(x)", "x.method()", "function()"])
@pytest.mark.parametrize("name", _ONE_SIGNATURE + _SEVERAL_SIGNATURES)
def test_op_without_its_tensors_as_torch(name, form):
    """An op called without its other tensors: "missing N required positional arguments"
    (sic) naming torch's parameters where torch has one signature, "received an invalid
    combination of arguments" where it has several (one listed in place of "one of:" for
    add, sub and the add* family), in the function's and the method's words."""
    if form == "x.method()" and not hasattr(torch.ones(1), name):
        pytest.skip(f"torch has no Tensor.{name}")
    calls = {"function(x)": lambda m: getattr(m, name)(m.ones(2, 2)),
             "x.method()": lambda m: getattr(m.ones(2, 2), name)(),
             "function()": lambda m: getattr(m, name)()}
    assert_same_outcome(calls[form])


@pytest.mark.parametrize("call", [
    lambda m: m.ones(2).add(alpha=2), lambda m: m.add(m.ones(2), alpha=2),
    lambda m: m.add(m.ones(2), other=m.ones(2), alpha=2), lambda m: m.mul(input=m.ones(2)),
    lambda m: m.ones(2).gather(0), lambda m: m.ones(3).index_select(0),
    lambda m: m.ones(2).masked_fill(m.tensor([True, False]), value=3.0)])
def test_op_with_keywords_but_a_missing_tensor_as_torch(call):
    """A keyword picks add's signature with alpha (so other is missing); tensors given by
    keyword still compute."""
    assert_same_outcome(call)


def _dim_programs():
    """(name, program(m, dim)) of the index ops that take ``dim`` between their tensors."""
    i2 = [[0, 2], [1, 0]]
    return {
        "gather": lambda m, x, d: m.gather(x, d, m.tensor(i2)),
        "x.gather": lambda m, x, d: x.gather(d, m.tensor(i2)),
        "index_select": lambda m, x, d: m.index_select(x, d, m.tensor([0, 2])),
        "x.index_select(dim=)": lambda m, x, d: x.index_select(dim=d, index=m.tensor([0, 2])),
        "scatter": lambda m, x, d: m.scatter(x, d, m.tensor(i2), x[:, :2] * 2),
        "x.scatter(value)": lambda m, x, d: x.scatter(d, m.tensor(i2), 5.0),
        "scatter_add": lambda m, x, d: m.scatter_add(x, d, m.tensor(i2), x[:, :2] * 2),
        "index_add": lambda m, x, d: x.index_add(d, m.tensor([0, 2]), x[:, :2] * 3),
        "index_copy": lambda m, x, d: x.index_copy(d, m.tensor([0, 2]), x[:, :2] * 3),
        "index_fill": lambda m, x, d: x.index_fill(d, m.tensor([0, 2]), 5.0),
        "scatter_reduce": lambda m, x, d: m.scatter_reduce(x, d, m.tensor(i2), x[:, :2] * 2,
                                                           "sum"),
    }


@pytest.mark.parametrize("name", list(_dim_programs()))
@pytest.mark.parametrize("dim", ["0-d int64", "0-d int32", "0-d float", "0-d bool", "1-d",
                                 "float", "bool", "None"])
def test_index_op_dim_given_as_a_tensor_as_torch(name, dim):
    """``gather(x, torch.tensor(1), index)``: torch's int parameter takes a 0-d integer
    tensor (values and gradients as for the int); another tensor, a float, a bool or None is
    its TypeError ("argument 'dim' (position 2) must be int, not Tensor"; scatter's and
    index_fill's several signatures: an invalid combination)."""
    values = {"0-d int64": lambda m: m.tensor(1), "0-d int32": lambda m: m.tensor(
        1, dtype=m.int32), "0-d float": lambda m: m.tensor(1.0), "0-d bool": lambda m: m.tensor(
        True), "1-d": lambda m: m.tensor([1]), "float": lambda m: 1.0, "bool": lambda m: True,
        "None": lambda m: None}

    def call(m):
        x = m.arange(6.0, dtype=m.float64).reshape(2, 3).requires_grad_()
        out = _dim_programs()[name](m, x * 1, values[dim](m))
        (grad,) = m.autograd.grad(out.sum(), x)
        return out * 1 + grad.sum()
    assert_same_outcome(call)


def test_gather_with_a_tensor_dim_gradchecks():
    x = gradkit.randn(2, 3, dtype=gradkit.float64, requires_grad=True)
    index, dim = gradkit.tensor([[0, 2], [1, 0]]), gradkit.tensor(1)
    assert gradkit.autograd.gradcheck(lambda x: gradkit.gather(x, dim, index), (x,))
    assert gradkit.autograd.gradgradcheck(lambda x: gradkit.gather(x, dim, index), (x,))


_BY_NAME = {
    "gather(x, 0, index=)": lambda m, x: m.gather(x, 0, index=m.tensor([[1, 0]])),
    "x.gather(dim=0, index=)": lambda m, x: x.gather(dim=0, index=m.tensor([[1, 0]])),
    "x.index_select(dim=, index=)": lambda m, x: x.index_select(dim=m.tensor(1),
                                                                index=m.tensor([0, 2])),
    "x.index_add(0, index=, source=)": lambda m, x: x.index_add(0, index=m.tensor([1]),
                                                                source=x[:1] * 2),
    "masked_select(x, mask=)": lambda m, x: m.masked_select(x, mask=x > 2),
    "take(x, index=)": lambda m, x: m.take(x, index=m.tensor([1, 4])),
    "heaviside(x, values=)": lambda m, x: m.heaviside(x.detach(), values=x),
    "x.masked_fill(mask=, value=)": lambda m, x: x.masked_fill(mask=x > 2, value=0.0),
}


@pytest.mark.parametrize("name", list(_BY_NAME))
def test_op_tensors_given_by_name_as_torch(name):
    """An op's tensors after the first given by their names compute, with their gradients,
    as given in place (the index of gather given by name was read as a parameter)."""
    def call(m):
        x = m.arange(6.0, dtype=m.float64).reshape(2, 3).requires_grad_()
        out = _BY_NAME[name](m, x * 1)
        (grad,) = m.autograd.grad(out.sum(), x)
        return out * 1 + grad.sum()
    assert_same_outcome(call)
