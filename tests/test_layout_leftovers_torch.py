"""Layout and graph leftovers compared with torch 2.13 (lane h-strides): writes into expanded
tensors through index_put_, the strides of views and copies of strided inputs, node names of
second-order graphs and version checks of indexing nodes."""
import warnings

import pytest

import gradkit

torch = pytest.importorskip("torch")
from torch_expectations.twin import assert_same  # noqa: E402


def _index_put_expanded(m, write: str, recorded: bool):
    """``write`` into x = base.expand(3, 4): the base's values, the warnings (their text before
    torch's "Triggered internally"), x's version and, recorded, the nodes and backward's error."""
    leaf = m.arange(4.0, requires_grad=recorded)
    base = leaf.clone()
    x = base.expand(3, 4)
    v = m.tensor(5.0, requires_grad=recorded)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec(write, {"x": x, "v": v, "m": m})  # noqa: S102 - the writes below
    out = [base.tolist(), [str(w.message).split(" (Triggered")[0] for w in caught], x._version]
    if recorded:
        out.append(base.grad_fn.name())
        with pytest.raises(RuntimeError, match="more than one element of the written-to"):
            base.sum().backward()
    return out


@pytest.mark.parametrize("recorded", [False, True])
@pytest.mark.parametrize("write", [
    "x.index_put_((m.tensor([0, 1]),), v)",
    "x.index_put_((m.tensor([0, 1]),), v, accumulate=True)",  # adds once per row: 2 * 5
    "x.index_put_((m.tensor([0, 0, 2]), m.tensor([1, 1, 3])), v * 1, accumulate=True)",
    "x.index_put_((m.tensor([0, 1]), m.tensor([1, 2])), m.stack([v, v * 2]), accumulate=True)",
    "x.index_put_((m.tensor([True, False, True]),), v)",  # then masked_fill_: warns twice
    "x.index_put_((m.tensor([True, False, True]),), v, accumulate=True)",
    "x[m.tensor([True, False, True])] = 3.0",
    "x[m.tensor([0, 2])] = v",
])
def test_index_put_into_an_expanded_tensor_warns_and_writes_as_torch(write, recorded):
    """torch writes (warning that this is deprecated); adding, each element sharing a location
    adds into it; a backward through the write is refused (gradkit refused the write)."""
    got = _index_put_expanded(gradkit, write, recorded)
    assert_same(got, _index_put_expanded(torch, write, recorded))
    assert got[1][0].startswith("Use of index_put_ on expanded tensors is deprecated")


def test_index_put_accumulate_out_of_place_of_an_expanded_input_as_torch():
    """Out of place, torch clones the expanded input first: each row adds once."""
    def program(m):
        x = m.arange(4.0).expand(3, 4)
        r = m.index_put(x, (m.tensor([0, 0]),), m.tensor(5.0), accumulate=True)
        return r.tolist(), r.stride(), x.tolist()
    assert program(gradkit) == program(torch)


def test_index_put_accumulate_records_torch_node():
    """accumulate=True records IndexPutBackward0 (was AddBackward0), saving torch's attributes;
    its first and second derivatives."""
    def program(m):
        a = m.arange(12.0, dtype=m.float64).reshape(3, 4).requires_grad_(True)
        v = m.arange(4.0, dtype=m.float64, requires_grad=True)
        r = m.index_put(a, (m.tensor([1, 1, 2]),), v * v, accumulate=True)
        node = (r.grad_fn.name(), r.grad_fn._saved_accumulate, r.grad_fn._saved_indices[0])
        (ga, gv) = m.autograd.grad((r * r).sum(), (a, v), create_graph=True)
        second = m.autograd.grad(gv.sum(), v)
        return node, r, ga, gv, second
    assert_same(program(gradkit), program(torch))
