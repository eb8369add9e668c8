"""One pass over a DataLoader: what both of torch's iterators share, and the one that loads
in the main process (``num_workers=0``). The worker processes' iterator is in
``_worker_iterator.py``."""
from __future__ import annotations

import warnings
from typing import Any

from gradkit import accelerator
from gradkit.profiler.record_function import record_function
from gradkit.utils.data._utils.fetch import create_fetcher
from gradkit.utils.data.sampler import random_seed


def _warn_about_pin_memory(loader) -> None:
    """torch's warnings; with or without them, pinning is a no-op for gradkit's arrays."""
    if loader.pin_memory and loader.pin_memory_device:
        warnings.warn(f"pin_memory_device is deprecated, the current accelerator will be used "
                      f"as the device,ignore pin_memory_device='{loader.pin_memory_device}'.",
                      stacklevel=4)
    if loader.pin_memory and not accelerator.is_available():
        warnings.warn("'pin_memory' argument is set as true but no accelerator is found, then "
                      "device pinned memory won't be used.", stacklevel=4)


class _BaseDataLoaderIter:
    """The state of one pass: the sampler's iterator, the workers' base seed, the count of
    batches yielded (torch's class name)."""

    def __init__(self, loader) -> None:
        _warn_about_pin_memory(loader)
        self._dataset = loader.dataset
        self._iterable = loader._iterable
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._sampler_iter = iter(self._index_sampler)
        # drawn per iterator as torch draws it (the workers' seeds), even with no worker
        self._base_seed = random_seed(loader.generator)
        self._persistent_workers = loader.persistent_workers
        self._num_yielded = 0
        self._profile_name = f"enumerate(DataLoader)#{type(self).__name__}.__next__"

    def __iter__(self) -> _BaseDataLoaderIter:
        return self

    def __len__(self) -> int:
        return len(self._index_sampler)

    def _reset(self, loader, first_iter: bool = False) -> None:
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called

    def _next_index(self):
        return next(self._sampler_iter)  # StopIteration ends the pass

    def _next_data(self) -> Any:
        raise NotImplementedError

    def __next__(self) -> Any:
        with record_function(self._profile_name):
            data = self._next_data()
            self._num_yielded += 1
            reported = self._IterableDataset_len_called
            if self._iterable and reported is not None and self._num_yielded > reported:
                message = (f"Length of IterableDataset {self._dataset} was reported to be "
                           f"{reported}(when accessing len(dataloader)), but "
                           f"{self._num_yielded} samples have been fetched. ")
                if self._num_workers > 0:
                    message += ("For multiprocessing data-loading, this could be caused by not "
                                "properly configuring the IterableDataset replica at each "
                                "worker. Please see https://pytorch.org/docs/stable/data.html"
                                "#torch.utils.data.IterableDataset for examples.")
                warnings.warn(message, stacklevel=2)
            return data


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    """A pass that fetches every batch in the main process (torch's class name, also in
    profiler traces)."""

    def __init__(self, loader) -> None:
        super().__init__(loader)
        if self._timeout != 0:
            raise AssertionError("_SingleProcessDataLoaderIter requires timeout == 0")
        self._fetcher = create_fetcher(self._dataset, self._auto_collation, self._collate_fn,
                                       self._drop_last)

    def _next_data(self) -> Any:
        return self._fetcher.fetch(self._next_index())
