"""``x[advanced key]`` as torch 2.13 records and lays it out: the basic indices (slices, None,
integers) first as views, then IndexBackward0, and the result's strides as torch's index kernel
allocates them (a TensorIterator ordering dims by the restrided input's and the index tensors'
strides), so ``stride()``, ``is_contiguous()`` and ``view`` agree."""
import itertools

import numpy as np
import pytest

import gradkit

torch = pytest.importorskip("torch")


def _chain(t) -> list:
    names, fn = [], t.grad_fn
    while fn is not None and not fn.name().endswith("AccumulateGrad"):
        names.append(fn.name())
        fn = fn.next_functions[0][0]
    return names[::-1]


def _observed(m, x, key):
    """What torch users see of ``x[key]``: values, chain, geometry and view()'s verdict."""
    out = x[key]
    try:
        viewed = tuple(out.view(-1).shape)
    except RuntimeError as error:
        viewed = str(error)
    (grad,) = m.autograd.grad((out * out).sum(), x) if x.requires_grad else (None,)
    return (out.tolist(), _chain(out), tuple(out.shape), out.stride() if out.numel() else None,
            out.is_contiguous(), viewed, None if grad is None else grad.tolist())


def _key(m, text: str):
    return eval(f"_k[{text}]", {"_k": _Key(), "T": m.tensor, "B": _bools(m)})  # noqa: S307


class _Key:
    def __getitem__(self, key):
        return key


def _bools(m):
    return lambda *values: m.tensor([bool(v) for v in values])


# basic indices next to the advanced ones (applied first, as views)
KEYS = ["1:, [0, 1]", ":, [0, 1]", "[0, 1]", "[0, 1], 1:", "..., [0, 1]", "None, [0, 1]",
        "[0, 1], None", "1:, [0, 1], 1:", "0, [0, 1]", "None, 1:, [0, 1]", "[0, 1], 1",
        "::2, [1, 2], None", "..., [1, 0], 1:", ":, 0:100, [0]", "-1:, [[0, 1], [2, 3]], ::2"]
# separated or broadcast indices, masks, empty indices, an index of other strides
KEYS += ["[0, 1], :, [1, 2]", "[[0], [1]], :, [1, 2]", ":, [0, 1], [1, 2]", "B(1, 0, 1)",
         "1:, B(1, 0, 1, 0)", "[0, 1], ..., [1, 2]", "[[0, 1]], [[1], [2]]", "[], :", ":, []",
         "[2, 0], None, [1, 3]", "T([[0, 1], [1, 2]]).t(), 1:", "B(1, 1, 0), 2",
         ":, :, [4, 0, 1]", "T([0, 2]), 1:", "B(0, 0, 0)", ":, B(0, 0, 0, 0)"]


@pytest.mark.parametrize("key", KEYS)
@pytest.mark.parametrize("order", [(0, 1, 2), (2, 0, 1), (1, 2, 0)])
def test_advanced_keys_as_torch(key, order):
    def run(m):
        base = m.arange(60.0, dtype=m.float64).reshape(3, 4, 5).permute(*order).contiguous()
        x = base.permute(*np.argsort(order)).requires_grad_(True)  # (3, 4, 5), not contiguous
        return _observed(m, x, _key(m, key))

    try:
        expected = run(torch)
    except (IndexError, RuntimeError) as error:
        with pytest.raises(type(error)):
            run(gradkit)
        return
    assert run(gradkit) == expected


def _index_cases():
    """Keys over a (2, 3, 1, 4) tensor seen through several memory orders: each dim a full
    slice or an index of another shape (broadcast together), adjacent or separated."""
    choices = [None, [0], [[0], [0]], [[0, 0]], [0, 0, 0]]  # (every dim has an index 0)
    for picks in itertools.product(choices, repeat=4):
        if all(p is None for p in picks) or sum(p is not None for p in picks) > 3:
            continue
        yield picks


@pytest.mark.parametrize("order", [(0, 1, 2, 3), (3, 1, 0, 2), (2, 3, 1, 0)])
def test_result_strides_follow_torchs_iterator_order(order):
    def strides(m):
        shape = (2, 3, 1, 4)
        base = m.arange(24.0).reshape([shape[d] for d in order])
        x = base.permute(*np.argsort(order))
        seen = []
        for picks in _index_cases():
            key = tuple(slice(None) if p is None else m.tensor(p) for p in picks)
            try:
                out = x[key]
            except IndexError as error:  # indices that do not broadcast together
                seen.append(str(error))
                continue
            seen.append((tuple(out.shape), out.stride(), out.is_contiguous()))
        return seen

    assert strides(gradkit) == strides(torch)


def test_integer_index_tensors_of_several_layouts():
    def run(m):
        x = m.arange(36.0).reshape(3, 3, 4)
        index = m.tensor([[0, 1, 2], [2, 1, 0]]).t()  # a transposed index: its strides count
        picks = [x[index], x[:, index], x[..., index], x[index, :, index.t().t()],
                 x[:, index.to(m.int32)]]
        return [(p.tolist(), p.stride()) for p in picks]

    assert run(gradkit) == run(torch)
