"""Errors against torch: a program that torch runs must run in gradkit with the same numbers,
and one that torch refuses must be refused at the same step, with the same exception and
message (fuzz programs of issue 15, reduced)."""
import warnings

import numpy as np
import pytest

import gradkit

torch = pytest.importorskip("torch")

OVERLAP = ("unsupported operation: more than one element of the written-to tensor refers to a "
           "single memory location. Please clone() the tensor before performing the operation.")


def _outcome(program, lib):
    """("ok", numbers) or (step that raised, exception type, message in gradkit's words)."""
    steps = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            result = program(lib, steps.append)
        except Exception as error:  # noqa: BLE001 - the error is what is compared
            message = str(error).replace("torch.", "gradkit.").split(" Hint:")[0]
            return (steps[-1] if steps else "start", type(error).__name__, message)
    return "ok", [np.asarray(t.detach().tolist()).tolist() for t in result]


def _same_as_torch(program):
    mine, theirs = _outcome(program, gradkit), _outcome(program, torch)
    if mine[0] == "ok" and theirs[0] == "ok":
        assert len(mine[1]) == len(theirs[1])
        for got, expected in zip(mine[1], theirs[1]):
            np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)
    else:
        assert mine == theirs
    return theirs


# -- writes into an expanded tensor (elements sharing memory) --------------------------------

def _fill_expanded(lib, step):
    a = lib.tensor([0.5, -1.0], dtype=lib.float64, requires_grad=True)
    x = a.clone().expand(3, 2)
    step("fill_")
    x.fill_(0.25)
    step("backward")
    return [*lib.autograd.grad((x * lib.tensor([1.0, 2.0], dtype=lib.float64)).sum(), a), x]


def _zero_expanded_without_grad(lib, step):
    a = lib.tensor([0.5, -1.0], dtype=lib.float64, requires_grad=True)
    x = a.detach().clone().expand(3, 2)
    step("zero_")
    x.zero_()
    step("backward")
    return [*lib.autograd.grad((a * 3).sum(), a), x]


def _add_into_expanded(lib, step):
    x = lib.tensor([0.5], dtype=lib.float64).expand(3)
    step("add_")
    return [x.add_(1)]


def _write_one_element_of_expanded(lib, step):
    a = lib.tensor(0.5, dtype=lib.float64, requires_grad=True)
    base = a.clone()
    x = base.expand(2)
    step("setitem")
    x[0:1] = x[0:1] * 3
    step("backward")
    loss = (x * lib.tensor([1.0, 10.0], dtype=lib.float64)).sum() + base * 100
    return [*lib.autograd.grad(loss, a), x, base]


def _write_all_of_expanded(lib, step):
    x = lib.tensor([0.5], dtype=lib.float64).expand(3)
    step("setitem")
    x[:] = 2.0
    return [x]


def _masked_fill_expanded(lib, step):
    a = lib.tensor([[1.0], [2.0]], dtype=lib.float64)
    x = a.expand(2, 3)
    step("masked_fill_")
    x.masked_fill_(lib.tensor([[True, False, False], [False, False, False]]), 7.0)
    step("setitem")
    x[lib.tensor([1]), lib.tensor([2])] = 9.0
    x[0, 1] = 5.0
    return [x, a]


@pytest.mark.parametrize("program, torch_outcome", [
    (_fill_expanded, ("backward", "RuntimeError", OVERLAP)),
    (_zero_expanded_without_grad, "ok"),
    (_add_into_expanded, ("add_", "RuntimeError", OVERLAP)),
    (_write_one_element_of_expanded, "ok"),
    (_write_all_of_expanded, ("setitem", "RuntimeError", OVERLAP)),
    (_masked_fill_expanded, "ok"),
])
def test_writes_into_an_expanded_tensor_as_torch(program, torch_outcome):
    theirs = _same_as_torch(program)
    assert (theirs[0] if torch_outcome == "ok" else theirs) == torch_outcome


@pytest.mark.parametrize("name, write", [
    ("masked_fill_", lambda lib, x: x.masked_fill_(x > 0, 1.0)),
    ("index_put_", lambda lib, x: x.__setitem__(lib.tensor([0]), 1.0)),
])
def test_writes_into_an_expanded_tensor_warn_as_torch(name, write):
    x = gradkit.tensor([0.5]).expand(3)
    with pytest.warns(UserWarning, match=f"Use of {name} on expanded tensors is deprecated"):
        write(gradkit, x)


# -- an input sharing part of the written-to tensor's memory ---------------------------------

PARTIAL = ("unsupported operation: some elements of the input tensor and the written-to tensor "
           "refer to a single memory location. Please clone() the tensor before performing the "
           "operation.")


def _in_place_with(write, make=lambda lib: lib.arange(4.0, dtype=lib.float64)):
    def program(lib, step):
        x = make(lib)
        step("write")
        write(x)
        return [x]
    return program


@pytest.mark.parametrize("write, make, torch_outcome", [
    (lambda x: x.unsqueeze(-1).mul_(x), lambda lib: lib.tensor(2.0), PARTIAL),
    (lambda x: x.sub_(x[0]), None, PARTIAL),
    (lambda x: x[0:2].add_(x[1:3]), None, PARTIAL),
    (lambda x: x.copy_(x.unbind(0)[0]), lambda lib: lib.ones(3, 2), PARTIAL),
    (lambda x: x.mul_(x.real), lambda lib: lib.ones(1, dtype=lib.complex64), PARTIAL),
    (lambda x: x.__setitem__(slice(0, 2), x[1:3]), None, PARTIAL),
    (lambda x: x.add_(x), None, "ok"),                               # the same elements
    (lambda x: x.__setitem__(slice(0, 2), x[0:2]), None, "ok"),
    # the value broadcast to the region first: no longer dense, so not refused
    (lambda x: x.__setitem__((slice(None), slice(0, 2)), x[..., :1]),
     lambda lib: lib.tensor([[1.0, 2.0]]), "ok"),
    (lambda x: x.__setitem__(slice(0, 2), x[None, None, 2:3]), None, "ok"),
    (lambda x: x[0:1:2].__setitem__(slice(0, 1), x[0:1:2][..., :1]), None, "ok"),
    (lambda x: x[:, 0].add_(x[0, :]), lambda lib: lib.ones(2, 2), "ok"),  # not dense: allowed
])
def test_inputs_overlapping_the_written_tensor_as_torch(write, make, torch_outcome):
    program = _in_place_with(write, *(() if make is None else (make,)))
    theirs = _same_as_torch(program)
    assert (theirs[0] if torch_outcome == "ok" else theirs) == (
        torch_outcome if torch_outcome == "ok" else ("write", "RuntimeError", torch_outcome))


def _copy_expanded_onto_itself(lib, step):
    a = lib.tensor(0.5, dtype=lib.float64, requires_grad=True)
    x = a.cos().expand(2)
    step("copy_")
    x.copy_(x)
    step("backward")
    return [*lib.autograd.grad(x.sum(), a)]


def test_copy_onto_itself_does_nothing_then_backward_refuses_as_torch():
    assert _same_as_torch(_copy_expanded_onto_itself) == ("backward", "RuntimeError", OVERLAP)


# -- indexing errors come before the in-place checks ------------------------------------------

@pytest.mark.parametrize("key, message", [
    (lambda lib: lib.tensor(-4), "index -4 is out of bounds for dimension 0 with size 3"),
    (lambda lib: (0, 0), "too many indices for tensor of dimension 1"),
])
def test_setitem_out_of_range_on_a_leaf_is_an_index_error_as_torch(key, message):
    def program(lib, step):
        x = lib.zeros(3, requires_grad=True)
        step("setitem")
        x[key(lib)] = 1.0
        return [x]
    assert _same_as_torch(program) == ("setitem", "IndexError", message)


# -- cat skips 1-d empty tensors --------------------------------------------------------------

@pytest.mark.parametrize("shapes, dtypes, dim", [
    (((0,), (1, 2)), ("float64", "float64"), -1),
    (((1, 2), (0,)), ("float64", "float64"), 0),
    (((0,), (0,)), ("float64", "float64"), 0),
    (((0,), (1, 2)), ("complex128", "float64"), 1),   # the skipped tensor's dtype still counts
    (((0,), (0, 0)), ("float64", "float64"), 0),
])
def test_cat_skips_one_dimensional_empty_tensors_as_torch(shapes, dtypes, dim):
    def program(lib, step):
        xs = [lib.ones(s, dtype=getattr(lib, d), requires_grad=True)
              for s, d in zip(shapes, dtypes)]
        step("cat")
        out = lib.cat(xs, dim)
        step("backward")
        grads = lib.autograd.grad((out * out).sum().real, xs)
        return [out, *grads, lib.tensor([*out.shape, *(n for g in grads for n in g.shape)])]
    assert _same_as_torch(program)[0] == "ok"


def test_cat_checks_dims_against_the_first_tensor_not_skipped():
    def program(lib, step):
        step("cat")
        return [lib.cat([lib.zeros(0), lib.zeros(1, 2), lib.zeros(3)])]
    assert _same_as_torch(program) == (
        "cat", "RuntimeError", "Tensors must have same number of dimensions: got 2 and 1")


# -- kernels that never run on empty tensors ---------------------------------------------------

@pytest.mark.parametrize("function", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype, shape", [
    ("bool", (0,)), ("int16", (0,)), ("complex64", (2,)), ("int16", (2,)),
])
def test_softmax_of_other_dtypes_is_refused_only_when_not_empty_as_torch(function, dtype, shape):
    def program(lib, step):
        x = lib.zeros(shape, dtype=getattr(lib, dtype))
        step(function)
        out = getattr(lib, function)(x, -1)
        return [out, lib.tensor(list(out.shape)), lib.tensor(out.dtype == x.dtype)]
    theirs = _same_as_torch(program)
    assert (theirs[0] == "ok") == (0 in shape)


# -- a leaf detached in place, then written with a graph -------------------------------------

def _leaf_moved_into_the_graph(lib, step):
    a = lib.tensor(0.5, dtype=lib.float64, requires_grad=True)
    b = a.clone()
    a.detach_()
    a.add_(b)                       # a now has a history: it is no leaf any more
    step("backward")
    (b * 2).backward()
    return [a]


def test_backward_into_a_leaf_moved_into_the_graph_is_refused_as_torch():
    assert _same_as_torch(_leaf_moved_into_the_graph) == (
        "backward", "RuntimeError", "leaf variable has been moved into the graph interior")


# -- a number out of an integer dtype's range --------------------------------------------------

@pytest.mark.parametrize("dtype, value", [
    ("uint8", -1.5), ("uint8", 300), ("uint8", -1), ("uint8", -255), ("uint8", -256),
    ("int8", -1.5), ("int8", 300), ("int16", float("nan")), ("int32", 1e10), ("int64", 1e30),
    ("int64", float("inf")), ("bool", -1.5),
])
def test_fill_with_a_number_out_of_range_as_torch(dtype, value):
    def program(lib, step):
        x = lib.zeros(2, dtype=getattr(lib, dtype))
        step("fill_")
        return [x.fill_(value)]
    _same_as_torch(program)


def test_fill_out_of_range_names_the_c_type():
    with pytest.raises(RuntimeError, match="^value cannot be converted to type uint8_t without "
                                           "overflow$"):
        gradkit.zeros(2, dtype=gradkit.uint8).fill_(-1.5)


# -- x ** tensor, written in place afterwards (a deliberate difference) ------------------------

def test_pow_result_written_in_place_refuses_backward_as_torch():
    """torch's Pow1 saves its result even when only the base needs a gradient."""
    def program(lib, clone_first):
        x = lib.tensor([0.5, 2.0], dtype=lib.float64, requires_grad=True)
        y = lib.tensor([1.5, -0.5], dtype=lib.float64)
        z = x ** y
        (z.clone() if clone_first else z).neg_().sum().backward()
        return x.grad.tolist()
    for lib in (torch, gradkit):
        with pytest.raises(RuntimeError, match="which is output 0 of Pow1, is at version 1"):
            program(lib, clone_first=False)
    np.testing.assert_allclose(program(gradkit, clone_first=True),
                               program(torch, clone_first=True), rtol=1e-12)


@pytest.mark.parametrize("function", ["softmax", "log_softmax"])
def test_softmax_of_an_empty_complex_tensor_requiring_grad_is_refused_as_torch(function):
    def program(lib, step):
        x = lib.zeros((2, 0), dtype=lib.complex64, requires_grad=True)
        step(function)
        return [getattr(lib, function)(x, 0)]
    mine, theirs = _outcome(program, gradkit), _outcome(program, torch)
    assert mine == theirs  # autograd's refusal: no kernel runs on an empty tensor
    assert "does not support automatic differentiation for outputs with complex" in mine[2]
