"""torch.utils.data.DistributedSampler: the share of a dataset one of ``num_replicas``
processes loads.

gradkit has no torch.distributed, so no process group: ``num_replicas`` and ``rank`` must be
given (without them the error is torch's when no process group was initialized). Shuffled
orders come from gradkit's generators (not torch's numbers, docs/data.md).
"""
from __future__ import annotations

import math
from collections.abc import Iterator, Sized
from typing import TypeVar

from gradkit.creation import randperm
from gradkit.generator import Generator
from gradkit.utils.data.sampler import Sampler

__all__ = ["DistributedSampler"]

T_co = TypeVar("T_co", covariant=True)
_NO_PROCESS_GROUP = ("Default process group has not been initialized, please make sure to call "
                     "init_process_group.")


class DistributedSampler(Sampler[T_co]):
    """Every ``num_replicas``-th index from ``rank`` on, of the dataset's indices (shuffled
    with ``seed + epoch`` when ``shuffle``), padded by repeating the first ones (or cut with
    ``drop_last``) so that every rank gets ``ceil(len(dataset) / num_replicas)`` indices.

    >>> list(DistributedSampler(range(5), num_replicas=2, rank=1, shuffle=False))
    [1, 3, 0]
    """

    def __init__(self, dataset: Sized, num_replicas: int | None = None,
                 rank: int | None = None, shuffle: bool = True, seed: int = 0,
                 drop_last: bool = False) -> None:
        if num_replicas is None or rank is None:
            raise ValueError(_NO_PROCESS_GROUP)
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        if drop_last and len(dataset) % num_replicas != 0:  # the shortest share for all
            self.num_samples = math.ceil((len(dataset) - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(len(dataset) / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self) -> Iterator[T_co]:
        if self.shuffle:  # every rank draws the same permutation, from seed + epoch
            generator = Generator().manual_seed(self.seed + self.epoch)
            indices = randperm(len(self.dataset), generator=generator).tolist()
        else:
            indices = list(range(len(self.dataset)))
        if self.drop_last:
            indices = indices[:self.total_size]
        else:
            padding = self.total_size - len(indices)
            indices += (indices * math.ceil(padding / max(len(indices), 1)))[:padding]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """The epoch whose shuffle the next pass draws (call it before each epoch, or every
        epoch repeats the first one's order)."""
        self.epoch = epoch
