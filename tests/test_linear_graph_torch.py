"""F.linear's and nn.Linear's graph as torch 2.13 builds it: node names and next_functions
order (addmm(bias, x, weight.t()), mm, the fold of a batch of rows and the views back), the
nodes' _saved_* attributes, and the grads a legacy Module.register_backward_hook receives."""
import itertools

import numpy as np
import pytest

import gradkit

torch = pytest.importorskip("torch")

SHAPES = ["1d", "2d", "3d", "4d", "2d_transposed", "3d_transposed", "4d_transposed"]
# where torch's matmul reshapes a non-viewable input by clone + _unsafe_view (gradkit's
# reshape is one UnsafeViewBackward0) or multiplies unfolded by expand + bmm (gradkit's matmul
# is one MatmulBackward0): matmul's and reshape's graphs, not linear's (docs/torch_expectations.md)
KNOWN = {"clone": "UnsafeViewBackward0(CloneBackward0(AccumulateGrad))",
         "bmm": "UnsafeViewBackward0(BmmBackward0(ReshapeAliasBackward0(ExpandBackward0("
                "AccumulateGrad)), None))"}


def _input(lib, shape: str, requires_grad: bool):
    rng = np.random.default_rng(0)
    sizes = {"1d": (3,), "2d": (2, 3), "3d": (2, 4, 3), "4d": (2, 2, 4, 3),
             "2d_transposed": (3, 2), "3d_transposed": (2, 3, 4),
             "4d_transposed": (2, 2, 3, 4)}[shape]
    x = lib.tensor(rng.standard_normal(sizes))
    if shape.endswith("transposed"):
        x = x.transpose(-1, -2)
    return x.requires_grad_(requires_grad)


def _operands(lib, shape, bias, needs):
    rng = np.random.default_rng(1)
    x = _input(lib, shape, needs[0])
    w = lib.tensor(rng.standard_normal((5, 3)), requires_grad=needs[1])
    b = lib.tensor(rng.standard_normal(5), requires_grad=needs[2]) if bias else None
    return x, w, b


def _walk(fn) -> str:
    if fn is None:
        return "None"
    kids = ", ".join(_walk(n) for n, _ in fn.next_functions)
    return type(fn).__name__ + (f"({kids})" if kids else "")


def _cases():
    for shape, bias in itertools.product(SHAPES, (True, False)):
        for needs in itertools.product((True, False), repeat=3):
            if any(needs[:2 + bias]) and (bias or not needs[2]):
                yield shape, bias, needs


def _graph(lib, shape, bias, needs) -> str:
    return _walk(lib.nn.functional.linear(*_operands(lib, shape, bias, needs)).grad_fn)


@pytest.mark.parametrize("shape,bias,needs", list(_cases()))
def test_graph_walk_matches_torch(shape, bias, needs):
    expected = _graph(torch, shape, bias, needs)
    got = _graph(gradkit, shape, bias, needs)
    if shape in ("3d_transposed", "4d_transposed"):  # torch's matmul path: see KNOWN
        fold = needs[1] or not needs[0]
        expected = expected.replace(KNOWN["clone"] if fold else KNOWN["bmm"],
                                    "UnsafeViewBackward0(AccumulateGrad)" if fold else
                                    "MatmulBackward0(AccumulateGrad, None)")
    assert got == expected


def test_the_known_differences_are_matmuls():
    """The replaced subgraphs above are there in torch's graph (the test can fail)."""
    graph = _graph(torch, "3d_transposed", False, (True, True, False))
    assert KNOWN["clone"] in graph
    assert KNOWN["bmm"] in _graph(torch, "3d_transposed", True, (True, False, True))
    assert "CloneBackward0" not in _graph(gradkit, "3d_transposed", False, (True, True, False))


@pytest.mark.parametrize("shape", ["1d", "2d", "3d", "3d_transposed"])
def test_no_graph_under_no_grad(shape):
    for lib in (torch, gradkit):
        with lib.no_grad():
            assert lib.nn.functional.linear(*_operands(lib, shape, True, (True,) * 3)).grad_fn \
                is None


def _saved(fn) -> dict:
    """Every torch _saved_* attribute of the nodes, walking the graph in order."""
    out, stack = {}, [(fn, "0")]
    while stack:
        node, path = stack.pop()
        if node is None or type(node).__name__ == "AccumulateGrad":
            continue
        for name in (a for a in dir(torch_node_of[path]) if a.startswith("_saved_")):
            value = getattr(node, name)
            if hasattr(value, "shape"):
                value = (tuple(value.shape), tuple(value.stride()), value.detach().tolist())
            out[path + name] = value
        stack += [(n, f"{path}.{i}") for i, (n, _) in enumerate(node.next_functions)]
    return out


torch_node_of = {}


def _torch_nodes(fn, path="0"):
    torch_node_of[path] = fn
    for i, (n, _) in enumerate(fn.next_functions if fn is not None else ()):
        _torch_nodes(n, f"{path}.{i}")


@pytest.mark.parametrize("shape,bias,needs",
                         [c for c in _cases() if c[0] in ("1d", "2d", "3d", "4d", "2d_transposed")])
def test_saved_attributes_match_torch(shape, bias, needs):
    expected_fn = torch.nn.functional.linear(*_operands(torch, shape, bias, needs)).grad_fn
    torch_node_of.clear()
    _torch_nodes(expected_fn)
    expected = _saved(expected_fn)
    got = _saved(gradkit.nn.functional.linear(*_operands(gradkit, shape, bias, needs)).grad_fn)
    # Known: gradkit reads an operand's strides off the saved operand, which neither keeps
    # when the other operand needs no gradient; torch keeps them for the operand's own backward
    unknown = [k for k in got if k.endswith("_sym_strides") and got[k] is None]
    for key in unknown:
        assert expected[key.replace("_sym_strides", "")] is None and expected[key]
        del expected[key], got[key]
    assert len(unknown) == (needs[0] != needs[1])
    assert got == expected


def _legacy_hook_grads(lib, shape, bias):
    """grad_input and grad_output of a legacy backward hook on nn.Linear (its last node's)."""
    lin = lib.nn.Linear(3, 5, bias=bias).double()
    with lib.no_grad():
        x, w, b = _operands(lib, shape, bias, (True, True, True))
        lin.weight.copy_(w)
        if bias:
            lin.bias.copy_(b)
    seen = []

    def hook(module, grad_input, grad_output):
        seen.append([None if g is None else (tuple(g.shape), g.tolist())
                     for g in (*grad_input, *grad_output)])
    lin.register_backward_hook(hook)
    lin(x).sum().backward()
    return seen


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("bias", [True, False])
def test_legacy_backward_hook_arguments_match_torch(shape, bias):
    expected = _legacy_hook_grads(torch, shape, bias)
    got = _legacy_hook_grads(gradkit, shape, bias)
    assert len(got) == len(expected) == 1
    assert [None if g is None else g[0] for g in got[0]] == \
        [None if g is None else g[0] for g in expected[0]]
    for g, e in zip(got[0], expected[0]):
        if g is not None:
            np.testing.assert_allclose(g[1], e[1], rtol=1e-12)


def test_legacy_hook_receives_bias_input_and_weight_t_grads_in_addmms_order():
    got = _legacy_hook_grads(gradkit, "2d", True)[0]
    assert [g[0] for g in got] == [(5,), (2, 3), (3, 5), (2, 5)]


# torch 2.13 folds a contiguous input into addmm only with a 1-D bias (a 3-D input with a 0-D
# or 2-D bias takes matmul, then add_: no addmm dtype check); 1-D weights and empty dims
PROGRAMS = {
    "3d_bias_0d": lambda m: ((2, 4, 3), (5, 3), ()),
    "3d_bias_1": lambda m: ((2, 4, 3), (5, 3), (1,)),
    "3d_bias_2d": lambda m: ((2, 4, 3), (5, 3), (4, 5)),
    "4d_bias_0d": lambda m: ((2, 2, 4, 3), (5, 3), ()),
    "4d_bias_2d": lambda m: ((2, 2, 4, 3), (5, 3), (4, 5)),
    "2d_bias_2d": lambda m: ((2, 3), (5, 3), (2, 5)),
    "2d_weight_1d": lambda m: ((2, 3), (3,), None),
    "3d_weight_1d_bias_0d": lambda m: ((2, 4, 3), (3,), ()),
    "1d_weight_1d": lambda m: ((3,), (3,), None),
    "2d_weight_1d_bias": lambda m: ((2, 3), (3,), ()),
    "empty_rows": lambda m: ((0, 3), (5, 3), (5,)),
    "3d_empty": lambda m: ((2, 0, 3), (5, 3), (5,)),
    "3d_empty_no_bias": lambda m: ((2, 0, 3), (5, 3), None),
}


def _outcome(lib, name, bias_dtype=None):
    x, w, b = PROGRAMS[name](lib)
    bias = None if b is None else lib.ones(b, dtype=bias_dtype or lib.float32,
                                              requires_grad=bias_dtype is None)
    try:
        y = lib.nn.functional.linear(lib.ones(x, requires_grad=True),
                                     lib.ones(w, requires_grad=True), bias)
    except RuntimeError as e:
        return "raises", str(e)
    return tuple(y.shape), str(y.dtype).split(".")[-1], _walk(y.grad_fn)


@pytest.mark.parametrize("name", PROGRAMS)
def test_bias_shapes_weight_ranks_and_empty_inputs_match_torch(name):
    assert _outcome(gradkit, name) == _outcome(torch, name)


@pytest.mark.parametrize("name", ["3d_bias_0d", "3d_bias_1", "3d_bias_2d", "2d_bias_2d"])
def test_a_float64_bias_is_refused_only_on_the_addmm_path(name):
    got = _outcome(gradkit, name, gradkit.float64)
    assert got == _outcome(torch, name, torch.float64)
    if name in ("3d_bias_1", "2d_bias_2d"):
        assert got[0] == "raises" and "self and mat2 must have the same dtype" in got[1]
    else:
        assert got[1] == "float32"  # add_ of the bias into the float32 product
