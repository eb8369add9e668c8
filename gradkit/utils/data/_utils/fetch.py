"""How one index (or one list of indices) becomes a batch: torch's dataset fetchers, used by
the main process (num_workers=0) and by every worker process alike."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gradkit.utils.data.dataset import IterableDataset


class MapDatasetFetcher:
    """``dataset[i]`` for each index (or ``dataset.__getitems__(indices)``), then collate."""

    def __init__(self, dataset, auto_collation: bool, collate_fn: Callable, drop_last: bool):
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn

    def fetch(self, index) -> Any:
        """The batch of ``index`` (a list of indices when auto-collating, else one index)."""
        dataset = self.dataset
        if not self.auto_collation:
            return self.collate_fn(dataset[index])
        if hasattr(dataset, "__getitems__") and dataset.__getitems__:
            return self.collate_fn(dataset.__getitems__(index))
        return self.collate_fn([dataset[i] for i in index])


class IterableDatasetFetcher:
    """The next samples of ``iter(dataset)`` (one per index), then collate; StopIteration
    once the dataset is exhausted (or the last batch is short and ``drop_last``)."""

    def __init__(self, dataset, auto_collation: bool, collate_fn: Callable, drop_last: bool):
        self.dataset_iter = iter(dataset)  # in the process that fetches: a worker's own copy
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        self.ended = False

    def fetch(self, index) -> Any:
        """The next batch; ``index`` only says how many samples (None: one, uncollated)."""
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.dataset_iter))
        data = []
        for _ in index:
            try:
                data.append(next(self.dataset_iter))
            except StopIteration:
                self.ended = True
                break
        if len(data) == 0 or (self.drop_last and len(data) < len(index)):
            raise StopIteration
        return self.collate_fn(data)


def create_fetcher(dataset, auto_collation: bool, collate_fn: Callable, drop_last: bool):
    """The fetcher for ``dataset``'s kind (iterable or map-style)."""
    kind = IterableDatasetFetcher if isinstance(dataset, IterableDataset) else MapDatasetFetcher
    return kind(dataset, auto_collation, collate_fn, drop_last)
