"""torch 2.13 API corners (lane h-api), each program run under gradkit and torch: non-tensors
given to the ``*_like`` factories and to the joining functions, deepcopy of non-leaf tensors,
attributes written on a custom Function's ``grad_fn``."""

import copy
import importlib

import numpy as np
import pytest

import gradkit
from tests.tensor_twins import same_as_torch
from torch_expectations.functions import square_function

NON_TENSORS = {"list": [1.0, 2.0], "float": 3.0, "ndarray": np.zeros(2), "none": None}
LIKES = {
    "zeros_like": lambda m, a: m.zeros_like(a),
    "ones_like": lambda m, a: m.ones_like(a),
    "empty_like": lambda m, a: m.empty_like(a, dtype=m.int64),
    "rand_like": lambda m, a: m.rand_like(a),
    "randn_like": lambda m, a: m.randn_like(a),
    "full_like": lambda m, a: m.full_like(a, 2),
    "randint_like": lambda m, a: m.randint_like(a, 5),
    "randint_like_low_high": lambda m, a: m.randint_like(a, 1, 5),
}


@pytest.mark.parametrize("value", NON_TENSORS)
@pytest.mark.parametrize("name", LIKES)
def test_like_factories_refuse_non_tensors_as_torch(name, value):
    same_as_torch(lambda m: LIKES[name](m, NON_TENSORS[value]))


def test_like_factory_message():
    with pytest.raises(TypeError, match=r"^rand_like\(\): argument 'input' \(position 1\) must "
                       r"be Tensor, not numpy.ndarray$"):
        gradkit.rand_like(np.zeros(2))


JOINS = ["stack", "cat", "hstack", "vstack", "dstack", "column_stack", "concat", "concatenate",
         "row_stack"]
SEQUENCES = {
    "array_first": lambda m: [np.zeros(2), m.ones(2)],
    "array_second": lambda m: [m.ones(2), np.zeros(2)],
    "arrays_only": lambda m: (np.zeros(2), np.ones(2)),
    "numpy_scalar": lambda m: [m.ones(2), np.float64(2.0)],
    "list_second": lambda m: [m.ones(2), [1.0, 2.0]],
    "number_second": lambda m: [m.ones(2), 3.0],
    "an_array": lambda m: np.zeros((2, 2)),
    "a_tensor": lambda m: m.zeros(2, 2),
    "empty": lambda m: [],
    "tensors": lambda m: [m.ones(2), m.zeros(2)],
}


@pytest.mark.parametrize("sequence", SEQUENCES)
@pytest.mark.parametrize("name", JOINS)
def test_joining_refuses_non_tensors_as_torch(name, sequence):
    """A NumPy array among (or instead of) the tensors is torch's TypeError naming the
    element; an array in place of the list names the function and numpy.ndarray."""
    same_as_torch(lambda m: getattr(m, name)(SEQUENCES[sequence](m)))


def test_joining_message_names_the_element():
    with pytest.raises(TypeError, match=r"^expected Tensor as element 1 in argument 0, but got "
                       r"numpy.ndarray$"):
        gradkit.cat([gradkit.ones(2), np.zeros(2)], dim=0)
    with pytest.raises(TypeError, match=r"^concat\(\): argument 'tensors' \(position 1\) must "
                       r"be tuple of Tensors, not numpy.ndarray$"):
        gradkit.concat(np.zeros(2))


def test_ops_joining_still_takes_raw_arrays():
    """gradkit.ops.cat/stack (what derivative rules call on raw arrays) join arrays only."""
    joined = gradkit.ops.cat([np.zeros(2), np.ones(2)])
    assert isinstance(joined, np.ndarray) and joined.tolist() == [0.0, 0.0, 1.0, 1.0]
    with pytest.raises(TypeError, match="expected Tensor as element 0"):
        gradkit.ops.stack([np.zeros(2), gradkit.ones(2)])


def _prune(m):
    return importlib.import_module(m.__name__ + ".nn.utils.prune")  # (torch's is not imported)


DEEPCOPIES = {
    "pruned_module": lambda m: _pruned_linear(m),
    "non_leaf": lambda m: m.ones(2, requires_grad=True) * 2,
    "detached": lambda m: (m.ones(2, requires_grad=True) * 2).detach(),
    "leaf": lambda m: m.ones(2, requires_grad=True),
    "view_of_a_plain_tensor": lambda m: m.ones(2, 2)[0],
    "removed_pruning": lambda m: _prune(m).remove(_pruned_linear(m), "weight"),
}


def _pruned_linear(m):
    layer = m.nn.Linear(3, 2)
    with m.no_grad():
        layer.weight.copy_(m.tensor(np.arange(6.0).reshape(2, 3) - 2.5))
    _prune(m).l1_unstructured(layer, "weight", amount=0.5)
    return layer


@pytest.mark.parametrize("name", DEEPCOPIES)
def test_deepcopy_copies_graph_leaves_only_as_torch(name):
    """torch deepcopies graph leaves only: a non-leaf (a pruned module's weight) is refused."""
    def program(m):
        made = DEEPCOPIES[name](m)
        copied = copy.deepcopy(made)
        return copied if not isinstance(copied, m.nn.Module) else (
            copied.weight, [n for n, _ in copied.named_parameters()])
    same_as_torch(program)


def test_deepcopy_message():
    with pytest.raises(RuntimeError, match=r"^Only Tensors created explicitly by the user \(graph "
                       r"leaves\) support the deepcopy protocol at the moment\."):
        copy.deepcopy(_pruned_linear(gradkit))



def test_function_node_attributes_reach_the_ctx_as_torch():
    """``y.grad_fn.scale = 3`` is ``ctx.scale`` in backward; it reads back, deletes, and a
    missing one is named after the node."""
    def program(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = square_function(m).apply(x)
        y.grad_fn.scale = 3
        y.grad_fn.needs_input_grad = (True,)
        read = (y.grad_fn.scale, hasattr(y.grad_fn, "scale"), y.grad_fn.needs_input_grad)
        y.sum().backward(retain_graph=True)
        del y.grad_fn.scale
        return read, x.grad, hasattr(y.grad_fn, "scale"), getattr(y.grad_fn, "missing", None)
    same_as_torch(program)


NODE_ERRORS = {
    "custom_missing": lambda y, z: y.grad_fn.missing,
    "custom_delete_missing": lambda y, z: delattr(y.grad_fn, "missing"),
    "builtin_set": lambda y, z: setattr(z.grad_fn, "scale", 1),
    "builtin_missing": lambda y, z: z.grad_fn.missing,
    "builtin_delete": lambda y, z: delattr(z.grad_fn, "scale"),
    "builtin_name": lambda y, z: setattr(z.grad_fn, "name", 1),
}


@pytest.mark.parametrize("name", NODE_ERRORS)
def test_node_attribute_errors_as_torch(name):
    def program(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        return NODE_ERRORS[name](square_function(m).apply(x), x * 2)
    same_as_torch(program)


@pytest.mark.parametrize("attribute", ["next_functions", "metadata", "saved_tensors",
                                       "saved_variables", "requires_grad"])
@pytest.mark.parametrize("node", ["custom", "builtin"])
def test_node_attributes_torch_keeps_are_not_writable(node, attribute):
    """torch's words, with the node's class where torch names its C base for a custom node."""
    x = gradkit.tensor([1.0, 2.0], requires_grad=True)
    y = square_function(gradkit).apply(x) if node == "custom" else x * 2
    if node == "builtin" and attribute not in ("next_functions", "metadata"):
        return  # (torch's builtin nodes have no such attribute to refuse)
    name = type(y.grad_fn).__name__
    with pytest.raises(AttributeError, match=rf"^attribute '{attribute}' of '{name}' objects "
                       "is not writable$"):
        setattr(y.grad_fn, attribute, 1)


INPLACE = ["celu_", "elu_", "hardtanh_", "leaky_relu_", "relu_", "rrelu_", "selu_", "threshold_"]
KEYWORDS = [{}, {"alpha": 2.0}, {"scale": 2.0}, {"input_scale": 2.0},
            {"alpha": 2.0, "scale": 1.5, "input_scale": 0.5}, {"inplace": True},
            {"negative_slope": 0.2}, {"min_val": -0.5, "max_val": 0.5},
            {"lower": 0.1, "upper": 0.2}, {"training": False}, {"generator": None},
            {"threshold": 0.1, "value": 9.0}, {"foo": 1}, {"alpha": None}, {"alpha": "a"},
            {"training": 1}, {"generator": 1}]
POSITIONALS = [(0.5,), (0.5, 0.7), (0.5, 0.7, 0.9), (0.5, 0.7, 0.9, 1.1), (0.1, 0.2, False, None)]


def _inplace_call(m, name, namespace, args, kwargs):
    x = m.tensor([-1.5, 0.5, 2.0])
    function = getattr(m if namespace == "torch" else m.nn.functional, name)
    if "input" in kwargs or "self" in kwargs:
        kwargs = {k: x if v is None else v for k, v in kwargs.items()}
        return function(*args, **kwargs)
    return function(x, *args, **kwargs)


@pytest.mark.parametrize("kwargs", KEYWORDS, ids=str)
@pytest.mark.parametrize("name", INPLACE)
def test_inplace_activation_keywords_as_torch(name, kwargs):
    """Each keyword set: torch's result (elu_'s scale and input_scale) or torch's TypeError."""
    same_as_torch(lambda m: _inplace_call(m, name, "F", (), kwargs))


@pytest.mark.parametrize("args", POSITIONALS + [(), "input=", "self=", "no input", "a list"],
                         ids=str)
@pytest.mark.parametrize("namespace, name", [("F", n) for n in INPLACE] + [
    ("torch", n) for n in INPLACE if n not in ("elu_", "hardtanh_", "leaky_relu_")])
def test_inplace_activation_arguments_as_torch(name, namespace, args):
    """Positions, ``input=``, a missing input or a list in its place, as torch's parser (torch
    has elu_, hardtanh_ and leaky_relu_ in torch.nn.functional only)."""
    def program(m):
        if args == "no input":
            return getattr(m if namespace == "torch" else m.nn.functional, name)()
        if args == "a list":
            return getattr(m if namespace == "torch" else m.nn.functional, name)([1.0])
        if isinstance(args, str):
            return _inplace_call(m, name, namespace, (), {args[:-1]: None})
        return _inplace_call(m, name, namespace, args, {})
    same_as_torch(program)


def test_rrelu_in_place_draws_from_its_generator():
    """torch.rrelu_(..., training=True, generator=g): the slopes come from g (so two
    generators seeded alike give the same slopes, whatever the default one does)."""
    results = []
    for seed_default in (1, 2):
        gradkit.manual_seed(seed_default)
        x = -gradkit.ones(5)
        gradkit.rrelu_(x, 0.1, 0.3, True, gradkit.Generator().manual_seed(7))
        results.append(x)
    assert gradkit.equal(results[0], results[1])
    assert bool(((results[0] <= -0.1) & (results[0] >= -0.3)).all())
    with pytest.raises(TypeError, match=r"^rrelu_\(\): argument 'generator' \(position 5\) "
                       "must be torch.Generator, not int$"):
        gradkit.rrelu_(x, 0.1, 0.3, True, 1)


ISIN_CALLS = {
    "positional": lambda m, a, b: m.isin(a, b),
    "keywords": lambda m, a, b: m.isin(elements=a, test_elements=b),
    "element_number": lambda m, a, b: m.isin(element=2, test_elements=b),
    "element_0d": lambda m, a, b: m.isin(element=m.tensor(2), test_elements=b),
    "test_element_number": lambda m, a, b: m.isin(a, test_element=2),
    "test_element_numpy": lambda m, a, b: m.isin(a, test_element=np.int64(2)),
    "elements_number": lambda m, a, b: m.isin(elements=2, test_elements=b),
    "test_elements_number": lambda m, a, b: m.isin(a, test_elements=2),
    "element_tensor": lambda m, a, b: m.isin(element=a, test_elements=b),
    "number_first": lambda m, a, b: m.isin(2, b),
    "number_second": lambda m, a, b: m.isin(a, 2.0),
    "numbers": lambda m, a, b: m.isin(2, 3),
    "element_and_test_element": lambda m, a, b: m.isin(element=2, test_element=3),
    "invert": lambda m, a, b: m.isin(a, b, invert=True),
    "assume_unique": lambda m, a, b: m.isin(a, b, assume_unique=True, invert=True),
    "options_by_position": lambda m, a, b: m.isin(a, b, False, True),
    "invert_int": lambda m, a, b: m.isin(a, b, invert=1),
    "unknown_keyword": lambda m, a, b: m.isin(a, b, foo=1),
    "numpy_name": lambda m, a, b: m.isin(x=a, test_elements=b),
    "given_twice": lambda m, a, b: m.isin(a, elements=a, test_elements=b),
    "one_operand": lambda m, a, b: m.isin(elements=a),
    "a_list": lambda m, a, b: m.isin(a, [2, 3]),
    "an_array": lambda m, a, b: m.isin(a, np.array([2])),
    "bool_number": lambda m, a, b: m.isin(a, True),
}


@pytest.mark.parametrize("name", ISIN_CALLS)
def test_isin_spellings_as_torch(name):
    """torch's three signatures: (elements, test_elements), (element: Number, test_elements),
    (elements, test_element: Number); a keyword of another signature matches none."""
    same_as_torch(lambda m: ISIN_CALLS[name](m, m.tensor([1, 2, 3]), m.tensor([2, 5])))


OUT_DTYPE_CALLS = {
    "mm": lambda m, a, b, c, o: m.mm(a, b, o),
    "mm_keyword": lambda m, a, b, c, o: m.mm(a, b, out_dtype=o),
    "bmm": lambda m, a, b, c, o: m.bmm(a[None], b[None], o),
    "addmm": lambda m, a, b, c, o: m.addmm(c, a, b, o, beta=2, alpha=0.5),
    "baddbmm": lambda m, a, b, c, o: m.baddbmm(c[None], a[None], b[None], out_dtype=o),
    "mm_none": lambda m, a, b, c, o: m.mm(a, b, None),
    "mm_str": lambda m, a, b, c, o: m.mm(a, b, "float32"),
    "mm_keyword_none": lambda m, a, b, c, o: m.mm(a, b, out_dtype=None),
    "mm_dtype_keyword": lambda m, a, b, c, o: m.mm(a, b, dtype=o),
    "method": lambda m, a, b, c, o: a.mm(b, out_dtype=o),
    "matmul": lambda m, a, b, c, o: m.matmul(a, b, out_dtype=o),
}


NOT_ON_THE_CPU = ("mm", "mm_keyword", "bmm", "addmm", "baddbmm")


@pytest.mark.parametrize("out_dtype", ["float32", "float16", "int64"])
@pytest.mark.parametrize("name", OUT_DTYPE_CALLS)
def test_out_dtype_overloads_on_the_cpu_as_torch(name, out_dtype):
    """torch 2.13 runs ``mm(a, b, out_dtype)`` & co. on CUDA only: on the CPU each is its
    dispatcher's NotImplementedError (gradkit's message ends sooner); other spellings are
    TypeErrors."""
    def program(m):
        a = m.tensor(np.arange(6.0).reshape(2, 3), dtype=m.float16)
        b = m.tensor(np.arange(6.0).reshape(3, 2), dtype=m.float16)
        return OUT_DTYPE_CALLS[name](m, a, b, m.ones(2, 2, dtype=m.float16),
                                     getattr(m, out_dtype))
    if name not in NOT_ON_THE_CPU:
        same_as_torch(program)
        return
    torch = pytest.importorskip("torch")
    kernel = name.split("_")[0]
    for library in (gradkit, torch):
        with pytest.raises(NotImplementedError, match=rf"^Could not run 'aten::{kernel}.dtype' "
                           "with arguments from the 'CPU' backend. This could be because the "
                           "operator doesn't exist for this backend"):
            program(library)


@pytest.fixture
def cupy(monkeypatch):
    from tests import strict_xp
    return strict_xp.install(monkeypatch)


def test_out_dtype_on_a_gpu_computes_in_it(cupy):
    """On a GPU (here the strict CuPy stand-in) the product of float16 operands comes out in
    float32 (torch's CUDA rule), its gradient back in float16; other dtypes are refused."""
    a = gradkit.tensor(np.arange(6.0).reshape(2, 3) / 7, dtype=gradkit.float16, device="cuda",
                       requires_grad=True)
    b = gradkit.tensor(np.arange(6.0).reshape(3, 2) / 3, dtype=gradkit.float16, device="cuda")
    out = gradkit.addmm(gradkit.ones(2, 2, device="cuda"), a, b, gradkit.float32, beta=2)
    assert out.dtype == gradkit.float32
    expected = 2 + a.detach().float().cpu().numpy() @ b.float().cpu().numpy()
    np.testing.assert_allclose(out.detach().cpu().numpy(), expected, rtol=1e-6)
    out.sum().backward()
    assert a.grad.dtype == gradkit.float16
    with pytest.raises(RuntimeError, match=r"^out_dtype must be the same as input dtype or fp32 "
                       "for fp16/bf16 inputs$"):
        gradkit.mm(a, b, gradkit.float64)
    with pytest.raises(RuntimeError, match="^input dtypes must be the same$"):
        gradkit.bmm(a[None], b.float()[None], gradkit.float32)
