"""nn.init.dirac_ and nn.init.sparse_ against torch: dirac_ is deterministic (same values);
sparse_ draws from gradkit's generator, not torch's, so its pattern and statistics are checked
(the zeros per column, the spread of the rest, reproducibility under a seed)."""
import math

import numpy as np
import pytest

import gradkit

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("shape, groups", [((3, 2, 3), 1), ((6, 3, 3, 4), 3),
                                           ((4, 6, 2, 3, 5), 2), ((2, 5, 3), 1),
                                           ((4, 4, 1, 1), 4)])
def test_dirac_matches_torch(shape, groups):
    theirs = torch.nn.init.dirac_(torch.empty(*shape), groups)
    weight = gradkit.empty(*shape, requires_grad=True)
    ours = gradkit.nn.init.dirac_(weight, groups)
    assert ours is weight and ours.grad_fn is None
    np.testing.assert_array_equal(ours.detach().numpy(), theirs.numpy())


def test_dirac_keeps_the_input_of_a_convolution():
    x = gradkit.randn(1, 3, 5, 5)
    weight = gradkit.nn.init.dirac_(gradkit.empty(3, 3, 3, 3))
    np.testing.assert_allclose(gradkit.nn.functional.conv2d(x, weight, padding=1).numpy(),
                               x.numpy())


@pytest.mark.parametrize("sparsity", [0.0, 0.1, 0.5, 1.0])
def test_sparse_zeroes_as_many_entries_per_column_as_torch(sparsity):
    counts = []
    for lib in (torch, gradkit):
        lib.manual_seed(0)
        weight = lib.nn.init.sparse_(lib.empty(40, 30), sparsity, std=0.5)
        counts.append(set((weight == 0).sum(0).tolist()))
    assert counts[1] == counts[0] == {math.ceil(sparsity * 40)}


def test_sparse_draws_the_rest_from_the_normal_and_follows_the_seed():
    gradkit.manual_seed(3)
    weight = gradkit.nn.init.sparse_(gradkit.empty(400, 300), 0.25, std=2.0)
    kept = weight[weight != 0].numpy()
    assert kept.size == 300 * 300
    assert abs(kept.mean()) < 0.05 and abs(kept.std() - 2.0) < 0.05
    again = [gradkit.nn.init.sparse_(gradkit.empty(6, 4), 0.5,
                                     generator=gradkit.Generator().manual_seed(5))
             for _ in range(2)]
    np.testing.assert_array_equal(again[0].numpy(), again[1].numpy())


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.init.dirac_(lib.empty(3, 3)),
    lambda lib: lib.nn.init.dirac_(lib.empty(3, 3, 3), groups=2),
    lambda lib: lib.nn.init.sparse_(lib.empty(3, 3, 3), 0.1),
])
def test_errors_match_torch(call):
    found = []
    for lib in (torch, gradkit):
        with pytest.raises(ValueError) as info:
            call(lib)
        found.append(str(info.value))
    assert found[1] == found[0]
