"""histogram and histogramdd against torch: counts, weights, density, edges (given or equal
bins, in float32 where rounding decides the bin), the node whose backward raises, errors."""
import numpy as np
import pytest

import gradkit
from signal_twins import assert_same, assert_same_error

torch = pytest.importorskip("torch")

POINTS = [[1.0, 2.0], [1.0, 2.5], [4.0, 0.0], [2.0, 2.0]]
_rng = np.random.default_rng(3)


@pytest.mark.parametrize("program", [
    lambda m: m.histogram(m.tensor([1.0, 2, 1, 2.5, 4]), 3),
    lambda m: m.histogram(m.tensor([1.0, 2, 1, 2.5, 4]), 3, weight=m.tensor([1.0, 2, 3, 4, 5])),
    lambda m: m.histogram(m.tensor([1.0, 2, 1, 2.5, 4]), m.tensor([0.0, 1.5, 2.0, 5.0]),
                          density=True),
    lambda m: m.histogram(m.tensor([1.0, 2, 1, 2.5, 4]), 3, range=(0.0, 3.0)),
    lambda m: m.histogram(m.tensor([0.1, 0.2, 0.3, 0.7, 1.0, 0.35]), 10, range=(0.1, 1.0)),
    lambda m: m.histogram(m.tensor([0.1, 0.2, 0.3, 0.7, 1.0, 0.35], dtype=m.float64), 7,
                          weight=m.tensor([1, 2, 3, 4, 5, 6.0], dtype=m.float64), density=True),
    lambda m: m.histogram(m.tensor([]), 3), lambda m: m.histogram(m.tensor([2.0, 2.0]), 3),
    lambda m: m.histogram(m.tensor(2.5), 2),
    lambda m: m.histogram(m.tensor([[3.0, float("nan")], [1.0, -4.0]]), 2, range=(0.0, 4.0)),
    lambda m: m.histogram(m.tensor([1.0, 2, 1, 2.5, 4]), m.tensor([3.0, 2, 5])),
    lambda m: m.tensor([1.0, 2, 1, 2.5, 4]).histogram(4),
    lambda m: m.histogramdd(m.tensor(POINTS), 2),
    lambda m: m.histogramdd(m.tensor(POINTS), [2, 3]),
    lambda m: m.histogramdd(m.tensor(POINTS), [m.tensor([0.0, 2, 5]), m.tensor([0.0, 1, 3])]),
    lambda m: m.histogramdd(m.tensor(POINTS), [2, 3], range=[0.0, 4, 0, 3], density=True),
    lambda m: m.histogramdd(m.tensor(POINTS), [2, 3], weight=m.tensor([1.0, 2, 3, 4])),
    lambda m: m.histogramdd(m.tensor(POINTS), [2, 3], range=[0.0, 4, 1, 1]),
    lambda m: m.histogramdd(m.empty(0, 2), [2, 3]),
    lambda m: m.histogramdd(m.tensor(POINTS).reshape(2, 2, 2), 2),
    lambda m: m.histogramdd(m.tensor(POINTS), 2, range=(0.0, 4, 0, 3)),
    lambda m: m.histogramdd(m.tensor(POINTS), (3, 1)),
    lambda m: m.histogram(m.tensor([1.0, 2, 3]).half(), m.tensor([0.0, 2, 4]).half()),
    *[lambda m, bins=bins: m.histogram(m.exp(m.tensor([72.0])), bins) for bins in (1, 2, 4)]])
def test_histograms_match_torch(program):
    assert_same(program)


@pytest.mark.parametrize("seed", range(6))
def test_values_on_and_near_the_edges_fall_in_torch_s_bins(seed):
    """float32 values on a grid that the edges cut through: the rounding of the interpolation
    and the look at the neighbouring edges decide, as in torch's kernel."""
    rng = np.random.default_rng(seed)
    values = (rng.integers(0, 40, 300) / rng.integers(3, 13)).astype(np.float32)
    values[:4] = [0.1, 0.7, 0.3, 1.1]
    bins = int(rng.integers(1, 17))
    weight = rng.random(300).astype(np.float32)
    assert_same(lambda m: m.histogram(m.tensor(values), bins))
    assert_same(lambda m: m.histogram(m.tensor(values), bins, range=(0.1, 3.7),
                                      weight=m.tensor(weight)))
    edges = np.sort(rng.choice(values, 5)).astype(np.float32)
    assert_same(lambda m: m.histogram(m.tensor(values), m.tensor(edges)))
    points = values.reshape(100, 3)
    assert_same(lambda m: m.histogramdd(m.tensor(points), [bins, 3, 2]))


def test_outputs_of_inputs_that_require_grad_have_a_node_whose_backward_raises():
    for m in (torch, gradkit):
        x = m.tensor([1.0, 2.0, 4.0], requires_grad=True)
        hist, edges = m.histogram(x, 2)
        assert hist.requires_grad and edges.requires_grad
        assert type(hist.grad_fn).__name__ == "NotImplemented"
        with pytest.raises(RuntimeError, match="derivative for aten::histogram is not "
                                               "implemented"):
            hist.sum().backward()
        weight = m.tensor([1.0, 1.0, 1.0], requires_grad=True)
        assert m.histogram(x.detach(), 2, weight=weight).hist.requires_grad
        assert not m.histogram(x.detach(), 2).hist.requires_grad
        for bins, kernel in ((2, "cts"), ([m.tensor([0.0, 2.0, 5.0])], "tensors")):
            hist = m.histogramdd(x.reshape(3, 1), bins).hist
            with pytest.raises(RuntimeError, match=f"derivative for "
                                                   f"aten::_histogramdd_from_bin_{kernel} is"):
                hist.sum().backward()


@pytest.mark.parametrize("program", [
    lambda m: m.histogram(m.tensor([1, 2]), 3),
    lambda m: m.histogram(m.tensor([1.0, 2]).half(), 3),
    lambda m: m.histogram(m.tensor([1.0, 2]), 0),
    lambda m: m.histogram(m.tensor([1.0, 2]), 3, range=(3.0, 1.0)),
    lambda m: m.histogram(m.tensor([1.0, 2]), 3, range=(1.0, float("inf"))),
    lambda m: m.histogram(m.tensor([1.0, 2]), 3, range=(float("nan"), 1.0)),
    lambda m: m.histogram(m.tensor([1.0, 2]), 3, weight=m.ones(4)),
    lambda m: m.histogram(m.tensor([1.0, 2]), 3, weight=m.ones(2, dtype=m.float64)),
    lambda m: m.histogram(m.tensor([1.0, 2]), m.tensor([1.0])),
    lambda m: m.histogram(m.tensor([1.0, 2]), m.tensor([[1.0, 2]])),
    lambda m: m.histogram(m.tensor([1.0, 2]), m.tensor([1.0, 2], dtype=m.float64)),
    lambda m: m.histogram(m.tensor([float("nan"), 2.0]), 3),
    lambda m: m.histogram(m.tensor(POINTS), 2, weight=m.ones(3)),
    lambda m: m.histogram(m.tensor([1, 2]), m.tensor([1, 2])),
    lambda m: m.histogramdd(m.tensor(POINTS), [2, 0]),
    lambda m: m.histogramdd(m.tensor(POINTS), [2, 3, 4]),
    lambda m: m.histogramdd(m.tensor(POINTS), [2, 3], range=[0.0, 4]),
    lambda m: m.histogramdd(m.tensor(POINTS)[:, 0], 2),
    lambda m: m.histogramdd(m.tensor(POINTS), [m.tensor([0.0, 2, 5])]),
    lambda m: m.histogramdd(m.tensor(POINTS), 2, range=[0.0, 1.5, 3, 2]),
    lambda m: m.histogramdd(m.tensor(POINTS), 2, weight=m.ones(3)),
    lambda m: m.histogramdd(m.tensor([[1, 2]]), 2)])
def test_histogram_errors_match_torch(program):
    assert_same_error(program)


def test_density_integrates_to_one():
    values = gradkit.tensor(_rng.standard_normal(50))
    hist, edges = gradkit.histogram(values, 7, density=True)
    assert float((hist * (edges[1:] - edges[:-1])).sum()) == pytest.approx(1.0)
