"""Every op exported from gradkit.ops and gradkit.nn.functional has an op-table entry.

The only exceptions are listed, with their reason, in op_db.NON_DIFFERENTIABLE; those
are checked here to really be non-differentiable, and their forward is compared with torch.
"""
import numpy as np
import pytest

import gradkit
import gradkit.nn.functional as F  # noqa: N812 - torch's convention
import gradkit.ops
from op_db import NON_DIFFERENTIABLE, OPS

_MECHANISM = {"op", "dispatch", "inplace", "sum_to_shape", "setitem_"}
_CHECKED_ELSEWHERE = {"allclose",      # returns a Python bool: tests/test_torch_api_ops.py
                      "equal",         # returns a Python bool: tests/test_ops_scans.py
                      "floor_divide",  # a refusing node: tests/test_torch_special_values.py
                      "heaviside",     # a refusing node: tests/test_ops_elem2.py
                      # torch's refusing geqrf node and the functions torch keeps only to
                      # raise: tests/test_legacy_linalg.py
                      "geqrf", "solve", "lstsq", "eig", "symeig", "matrix_rank",
                      "detach_copy",   # a refusing node: tests/test_strides.py
                      "view_as_complex_copy",  # refuses autograd: tests/test_strides.py
                      "histogram",     # a refusing node: tests/test_signal_histograms.py
                      "histogramdd",   # a refusing node: tests/test_signal_histograms.py
                      # a refusing node: tests/test_nn_functional_aliases.py
                      "F.native_channel_shuffle"}


def _exported():
    names = {n: getattr(gradkit.ops, n) for n in dir(gradkit.ops)
             if not n.startswith("_") and callable(getattr(gradkit.ops, n))
             and not isinstance(getattr(gradkit.ops, n), type)}
    names.update({f"F.{n}": getattr(F, n) for n in F.__all__})
    return names


def _covered():
    names = set()
    functions = set()
    for info in OPS:
        names.add(info.name)
        names.update(info.covers)
        functions.add(id(_unwrapped(info.op)))
    return names, functions


def _unwrapped(function):
    """The function under the NumPy-names wrapper (``ops/keywords.py``) a namespace gives."""
    return function.__wrapped__ if getattr(function, "takes_numpy_keywords", False) and \
        hasattr(function, "__wrapped__") else function


def test_every_exported_op_has_a_table_entry():
    names, functions = _covered()
    missing = sorted(
        name for name, fn in _exported().items()
        if name not in names and name.removeprefix("F.") not in names
        and id(_unwrapped(fn)) not in functions and name not in NON_DIFFERENTIABLE)
    assert not missing, f"ops without an op_db entry (add one, or justify an exception): {missing}"


def test_exceptions_are_exported_names():
    exported = _exported()
    assert sorted(n for n in NON_DIFFERENTIABLE if n not in exported) == []


def test_table_covers_the_design_op_list():
    """The ops DESIGN.md promises, each reached by the table (not merely exported)."""
    promised = """add sub mul div neg pow exp log log1p expm1 sqrt rsqrt abs sign sin cos tan tanh
        sigmoid relu gelu silu softplus clamp maximum minimum where sum mean var std prod amax amin
        max min cumsum logsumexp softmax log_softmax matmul mm bmm einsum outer dot transpose
        permute .T reshape view flatten squeeze unsqueeze expand broadcast_to cat stack split chunk
        index_select gather scatter_add masked_fill pad linear conv2d max_pool2d dropout
        layer_norm embedding cross_entropy nll_loss mse_loss
        binary_cross_entropy_with_logits""".split()
    names, _ = _covered()
    assert sorted(set(promised) - names) == []


# The non-differentiable ops: no graph, and torch's values.
NON_DIFFERENTIABLE_SAMPLES = [
    ("eq", ([1.0, 2.0], [1.0, 3.0])), ("ne", ([1.0, 2.0], [1.0, 3.0])),
    ("lt", ([1.0, 2.0], [1.5, 1.5])), ("le", ([1.0, 2.0], [1.0, 1.5])),
    ("gt", ([1.0, 2.0], [1.5, 1.5])), ("ge", ([1.0, 2.0], [1.0, 1.5])),
    ("isclose", ([1.0, 2.0], [1.0 + 1e-9, 2.1])),
    ("logical_and", ([True, False], [True, True])), ("logical_or", ([True, False], [False, False])),
    ("logical_xor", ([True, False], [True, True])), ("logical_not", ([True, False],)),
    ("bitwise_not", ([1, -2],)), ("bitwise_and", ([3, 6], [5, 5])),
    ("bitwise_or", ([3, 6], [5, 5])), ("bitwise_xor", ([3, 6], [5, 5])),
    ("all", ([True, False],)), ("any", ([True, False],)),
    ("isnan", ([1.0, float("nan")],)), ("isinf", ([1.0, float("inf")],)),
    ("isfinite", ([1.0, float("inf")],)), ("argmax", ([[1.0, 3.0], [4.0, 2.0]],)),
    ("argmin", ([[1.0, 3.0], [4.0, 2.0]],)), ("argsort", ([[1.0, 3.0], [4.0, 2.0]],)),
    ("bitwise_left_shift", ([3, -6], [1, 2])), ("bitwise_right_shift", ([3, -6], [1, 2])),
    ("zeros_like", ([1.0, 2.0],)), ("ones_like", ([1.0, 2.0],)),
    ("F.one_hot", ([2, 0, 1],)),
    ("count_nonzero", ([[0.0, -0.0, 2.5], [float("nan"), 0.0, 1.0]],)),
    ("nonzero", ([[0.0, 1.5], [2.0, 0.0]],)), ("argwhere", ([[0.0, 1.5], [2.0, 0.0]],)),
    ("bucketize", ([0.5, 1.0, 3.0], [1.0, 2.0])), ("searchsorted", ([1.0, 2.0], [0.5, 2.0])),
    ("histc", ([1.0, 2.0, 2.5, 4.0],)), ("unique", ([3, 1, 3, 2],)),
    ("bincount", ([1, 3, 1, 0],)),
    ("gcd", ([12, -18, 0], [8, 27, 5])), ("lcm", ([12, -18, 0], [8, 27, 5])),
    ("signbit", ([1.5, -0.0, -2.0],)), ("isneginf", ([1.0, float("-inf"), float("inf")],)),
    ("isposinf", ([1.0, float("-inf"), float("inf")],)), ("isreal", ([1.0, 2.0],)),
    ("isin", ([1.0, 2.5, 3.0], [3.0, 1.0])), ("unique_consecutive", ([3, 3, 1, 3],)),
]


@pytest.mark.parametrize("name,args", NON_DIFFERENTIABLE_SAMPLES,
                         ids=[s[0] for s in NON_DIFFERENTIABLE_SAMPLES])
def test_non_differentiable_ops_match_torch_and_record_no_graph(name, args):
    torch = pytest.importorskip("torch")
    inputs = [gradkit.tensor(a) for a in args]
    for t in inputs:
        if t.is_floating_point():
            t.requires_grad_(True)
    out = _function(gradkit, name)(*inputs)
    assert out.grad_fn is None and not out.requires_grad
    expected = _function(torch, name)(*[torch.tensor(a) for a in args])
    np.testing.assert_array_equal(out.numpy(), expected.numpy())


def _function(lib, name):
    """``lib.name``, or ``lib.nn.functional.name`` for the table's ``F.`` names."""
    return getattr(lib.nn.functional, name[2:]) if name.startswith("F.") else getattr(lib, name)


def test_every_exception_has_a_forward_check():
    sampled = {name for name, _ in NON_DIFFERENTIABLE_SAMPLES}
    assert sorted(set(NON_DIFFERENTIABLE) - sampled - _MECHANISM - _CHECKED_ELSEWHERE) == []
