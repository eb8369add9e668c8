"""sort and topk among equal values pick torch's elements, in torch's order, so gradients land
where torch's land (strided_breadth seed 1800568: the smallest of [0, 0, -0, 0] is torch's
-0.0). Compared with torch 2.13 (skipped without torch)."""
import numpy as np
import pytest

import gradkit
from gradkit.ops import unstable_order

torch = pytest.importorskip("torch")

_POOLS = ([0.0, -0.0], [0.0, 1.0, 2.0], [np.nan, 0.0, 1.0],
          [0.0, -0.0, np.nan, np.inf, -np.inf, 1.0])


def _draw(rng):
    """A row length on both sides of torch's paths (nth_element below 64 k, else a heap),
    values full of ties, and topk's options."""
    n = int(rng.choice([1, 2, 3, 4, 5, 8, 16, 17, 20, 33, 64, 65, 130, 300]))
    if rng.random() < 0.3:
        x = rng.integers(0, n, n).astype(float)
    else:
        x = rng.choice(np.array(_POOLS[int(rng.integers(len(_POOLS)))]), size=n)
    k = int(rng.integers(0, n + 1)) if rng.random() < 0.5 else \
        min(n, int(rng.integers(0, n // 64 + 2)))
    return x, k, bool(rng.random() < 0.5), bool(rng.random() < 0.7)


def _picks(lib, x, k, largest, sorted_, dtype="float64", dim=-1):
    t = lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=True)
    values, indices = lib.topk(t, k, dim, largest=largest, sorted=sorted_)
    (values * lib.arange(1, values.numel() + 1, dtype=values.dtype).reshape(values.shape)
     ).sum().backward()
    return (indices.tolist(), np.signbit(values.detach().numpy()).tolist(),
            t.grad.numpy().tolist())


@pytest.mark.parametrize("seed", range(40))
def test_topk_among_equal_values_picks_torchs_elements_in_torchs_order(seed):
    rng = np.random.default_rng(seed)
    for _ in range(25):
        x, k, largest, sorted_ = _draw(rng)
        assert _picks(gradkit, x, k, largest, sorted_) == _picks(torch, x, k, largest, sorted_), \
            (x.tolist(), k, largest, sorted_)


@pytest.mark.parametrize("dtype", ["float16", "float32", "int64", "uint8"])
@pytest.mark.parametrize("dim", [0, 1])
def test_topk_of_other_dtypes_and_dims_among_ties_is_torchs(dtype, dim):
    rng = np.random.default_rng(7)
    x = rng.integers(0, 3, (20, 20)).astype(float)
    x[rng.random(x.shape) < 0.2] = -0.0
    def picks(lib, k, largest, sorted_):
        values, indices = lib.tensor(x).to(getattr(lib, dtype)).topk(k, dim, largest, sorted_)
        return indices.tolist(), np.signbit(values.float().numpy()).tolist()
    for options in ((1, True, True), (5, False, True), (7, True, False)):
        assert picks(gradkit, *options) == picks(torch, *options)


def test_the_fuzz_seed_is_torchs_negative_zero():
    for lib in (gradkit, torch):
        values = lib.tensor([0.0, 0.0, -0.0, 0.0]).topk(1, largest=False).values
        assert np.signbit(values.numpy()).tolist() == [True]


def test_rows_without_ties_keep_the_sorted_order_and_no_replay_runs(monkeypatch):
    """A row without equal values among its first k + 1 has one answer: it is not replayed."""
    monkeypatch.setattr(unstable_order, "topk_order", None)  # would raise if called
    x = np.random.default_rng(1).permutation(100).reshape(4, 25).astype(float)
    for k in (1, 3, 25):
        got = gradkit.tensor(x).topk(k, 1)
        want = torch.tensor(x).topk(k, 1)
        assert got.indices.tolist() == want.indices.tolist()


def test_beyond_the_replay_bound_the_order_is_stable(monkeypatch):
    """Past REPLAYED_ELEMENTS_AT_MOST a stable order is kept (docs/api.md): the first of equal
    values first."""
    monkeypatch.setattr(unstable_order, "REPLAYED_ELEMENTS_AT_MOST", 10)
    assert gradkit.zeros(20).topk(3).indices.tolist() == [0, 1, 2]
    assert torch.zeros(20).topk(3).indices.tolist() != [0, 1, 2]


def _sorted_picks(lib, x, dim, descending, stable, dtype="float64"):
    t = lib.tensor(x).to(getattr(lib, dtype)).requires_grad_(dtype.startswith("float"))
    values, indices = lib.sort(t, dim=dim, descending=descending, stable=stable) \
        if stable is not None else lib.sort(t, dim, descending)
    result = [indices.tolist(), lib.argsort(t, dim, descending).tolist(),
              np.signbit(values.detach().double().numpy()).tolist()]
    if t.requires_grad:
        weights = lib.arange(values.numel(), dtype=values.dtype).reshape(values.shape)
        result.append(lib.autograd.grad((values * weights).sum(), t)[0].tolist())
    return result


@pytest.mark.parametrize("seed", range(20))
def test_sort_among_equal_values_is_torchs_std_sort(seed):
    """Rows of 5 to 300 full of ties, both directions, every dtype: indices, argsort, the
    zeros' signs and the gradient agree with torch's (std::sort past 16 values a row)."""
    rng = np.random.default_rng(seed)
    for _ in range(10):
        x, *_ = _draw(rng)
        x = np.resize(x, (2, len(x)))
        dim, descending = int(rng.integers(2)), bool(rng.random() < 0.5)
        dtype = ("float64", "float32", "float16", "int64")[int(rng.integers(4))]
        data = x if dtype.startswith("float") else np.nan_to_num(x, posinf=9, neginf=-9)
        stable = (None, False)[int(rng.integers(2))]
        assert _sorted_picks(gradkit, data, dim, descending, stable, dtype) == \
            _sorted_picks(torch, data, dim, descending, stable, dtype), (data.tolist(), dim)


def test_stable_sort_keeps_equal_values_in_their_order():
    for lib in (gradkit, torch):
        assert lib.sort(lib.zeros(40), stable=True).indices.tolist() == list(range(40))
        assert lib.argsort(lib.zeros(40), stable=True).tolist() == list(range(40))
    assert gradkit.sort(gradkit.zeros(40)).indices.tolist() == \
        torch.sort(torch.zeros(40)).indices.tolist() != list(range(40))
