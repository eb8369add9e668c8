"""DistributedSampler against torch's: each rank's indices, padding, drop_last, epochs and
errors. Unshuffled orders are torch's exactly; shuffled ones are gradkit's own permutation
(another random stream), checked as torch's construction over that permutation."""
import pytest

import gradkit
import gradkit.utils.data as gd

torch = pytest.importorskip("torch")
from test_utils_data import assert_same_as_torch, tensor_dataset  # noqa: E402


@pytest.mark.parametrize("size", [0, 1, 5, 6, 7, 10])
@pytest.mark.parametrize("replicas", [1, 3, 4])
@pytest.mark.parametrize("drop_last", [False, True])
def test_each_rank_gets_torchs_share(size, replicas, drop_last):
    def program(lib, data):
        samplers = [data.DistributedSampler(range(size), replicas, rank, shuffle=False,
                                            drop_last=drop_last) for rank in range(replicas)]
        return [(list(s), len(s), s.num_samples, s.total_size) for s in samplers]
    assert_same_as_torch(program)


def test_defaults_and_attributes_as_torch():
    def program(lib, data):
        sampler = data.DistributedSampler(range(5), num_replicas=2, rank=1)
        before = sampler.epoch
        sampler.set_epoch(3)
        return (sampler.shuffle, sampler.seed, before, sampler.epoch, sampler.drop_last,
                sampler.rank, sampler.num_replicas, len(sampler),
                isinstance(sampler, data.Sampler))
    assert_same_as_torch(program)


@pytest.mark.parametrize("arguments", [{}, {"num_replicas": 2}, {"rank": 0},
                                       {"num_replicas": 2, "rank": 2},
                                       {"num_replicas": 2, "rank": -1},
                                       {"num_replicas": 0, "rank": 0}])
def test_errors_as_torch_without_a_process_group(arguments):
    assert_same_as_torch(lambda lib, data: data.DistributedSampler(range(4), **arguments))


@pytest.mark.parametrize("drop_last", [False, True])
def test_shuffled_shares_split_one_permutation_per_epoch(drop_last):
    def shares(epoch: int, seed: int = 0) -> list[list[int]]:
        samplers = [gd.DistributedSampler(range(7), 3, rank, seed=seed, drop_last=drop_last)
                    for rank in range(3)]
        for sampler in samplers:
            sampler.set_epoch(epoch)
        return [list(sampler) for sampler in samplers]

    first = shares(0)
    permutation = gradkit.randperm(
        7, generator=gradkit.Generator().manual_seed(0)).tolist()  # seed + epoch
    padded = permutation[:6] if drop_last else permutation + permutation[:2]
    assert first == [padded[rank::3] for rank in range(3)]
    assert shares(0) == first and shares(1) != first and shares(1, seed=-1) == first


def test_a_loader_fed_by_a_distributed_sampler_as_torch():
    def program(lib, data):
        dataset = tensor_dataset(lib, data)
        sampler = data.DistributedSampler(dataset, num_replicas=2, rank=1, shuffle=False)
        return list(data.DataLoader(dataset, batch_size=2, sampler=sampler, num_workers=1))
    assert_same_as_torch(program)
