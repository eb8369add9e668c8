"""torch.utils.data.DataLoader: batches from a dataset, in the main process or in worker
processes (``num_workers > 0``).

The arguments, their checks and error messages, batching, sampling, collation and the
workers' behaviour are torch 2.13's; ``pin_memory`` is accepted and ignored (docs/data.md).
"""
from __future__ import annotations

import math
import multiprocessing
import os
import warnings
from collections.abc import Callable, Iterable
from typing import Any, Generic, TypeVar

from gradkit.generator import Generator
from gradkit.utils.data._iterators import _BaseDataLoaderIter, _SingleProcessDataLoaderIter
from gradkit.utils.data._utils.collate import default_collate, default_convert
from gradkit.utils.data._utils.worker import get_worker_info
from gradkit.utils.data._worker_iterator import _MultiProcessingDataLoaderIter
from gradkit.utils.data.dataset import Dataset, IterableDataset
from gradkit.utils.data.sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "get_worker_info", "default_collate", "default_convert"]

T_co = TypeVar("T_co", covariant=True)
# attributes that fix how batches are made: torch refuses to change them after __init__
_FROZEN = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
           "persistent_workers")


class _InfiniteConstantSampler(Sampler):
    """An iterable dataset's "indices": None forever (the dataset decides when to stop)."""

    def __iter__(self):
        while True:
            yield None


def _check_workers_options(num_workers: int, timeout: float, prefetch_factor,
                           persistent_workers: bool):
    """torch's checks of the multiprocessing options; returns the prefetch factor."""
    if num_workers < 0:
        raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                         "disable multiprocessing.")
    if timeout < 0:
        raise ValueError("timeout option should be non-negative")
    if num_workers == 0 and prefetch_factor is not None:
        raise ValueError("prefetch_factor option could only be specified in multiprocessing."
                         "let num_workers > 0 to enable multiprocessing, otherwise set "
                         "prefetch_factor to None.")
    if num_workers > 0 and prefetch_factor is None:
        prefetch_factor = 2
    elif prefetch_factor is not None and prefetch_factor < 0:
        raise ValueError("prefetch_factor option should be non-negative")
    if persistent_workers and num_workers == 0:
        raise ValueError("persistent_workers option needs num_workers > 0")
    return prefetch_factor


class DataLoader(Generic[T_co]):
    """Iterate over ``dataset`` in batches: samples chosen by a sampler (sequential, or
    shuffled with ``shuffle=True``), grouped by ``batch_size`` (or a ``batch_sampler``) and
    put together by ``collate_fn`` (``default_collate``).

    >>> from gradkit.utils.data import DataLoader, TensorDataset
    >>> loader = DataLoader(TensorDataset(gradkit.arange(5)), batch_size=2)
    >>> [batch.tolist() for (batch,) in loader]
    [[0, 1], [2, 3], [4]]
    """

    _initialized = False

    def __init__(self, dataset: Dataset[T_co], batch_size: int | None = 1,
                 shuffle: bool | None = None, sampler: Sampler | Iterable | None = None,
                 batch_sampler: Sampler[list] | Iterable[list] | None = None,
                 num_workers: int = 0, collate_fn: Callable[[list], Any] | None = None,
                 pin_memory: bool = False, drop_last: bool = False, timeout: float = 0,
                 worker_init_fn: Callable[[int], None] | None = None,
                 multiprocessing_context=None, generator: Generator | None = None, *,
                 prefetch_factor: int | None = None, persistent_workers: bool = False,
                 pin_memory_device: str = "", in_order: bool = True) -> None:
        self.prefetch_factor = _check_workers_options(num_workers, timeout, prefetch_factor,
                                                      persistent_workers)
        self.dataset = dataset
        self.num_workers = num_workers
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle not in (False, None):
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                 f"shuffle option, but got shuffle={shuffle}")
            for name, value in (("sampler", sampler), ("batch_sampler", batch_sampler)):
                if value is not None:
                    raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                     f"{name} option, but got {name}={value}")
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is None:
            sampler = (_InfiniteConstantSampler() if self._iterable
                       else RandomSampler(dataset, generator=generator) if shuffle
                       else SequentialSampler(dataset))
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._IterableDataset_len_called = None
        self._iterator: _BaseDataLoaderIter | None = None  # the persistent workers' pass
        self._initialized = True
        self.check_worker_number_rationality()

    @property
    def multiprocessing_context(self):
        """The multiprocessing context the workers start with (None: the platform's
        default, fork on Linux)."""
        return self._multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, context) -> None:
        if context is not None:
            if self.num_workers <= 0:
                raise ValueError(f"multiprocessing_context can only be used with multi-process "
                                 f"loading (num_workers > 0), but got "
                                 f"num_workers={self.num_workers}")
            if isinstance(context, str):
                methods = multiprocessing.get_all_start_methods()
                if context not in methods:
                    raise ValueError(f"multiprocessing_context option should specify a valid "
                                     f"start method in {methods!r}, but got "
                                     f"multiprocessing_context={context!r}")
                context = multiprocessing.get_context(context)
            if not isinstance(context, multiprocessing.context.BaseContext):
                raise TypeError(f"multiprocessing_context option should be a valid context "
                                f"object or a string specifying the start method, but got "
                                f"multiprocessing_context={context}")
        self._multiprocessing_context = context

    def __setattr__(self, attr: str, value) -> None:
        if self._initialized and attr in _FROZEN:
            raise ValueError(f"{attr} attribute should not be set after "
                             f"{type(self).__name__} is initialized")
        super().__setattr__(attr, value)

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __iter__(self) -> _BaseDataLoaderIter:
        """A pass over the batches; persistent workers are started once and reused."""
        if not (self.persistent_workers and self.num_workers > 0):
            return self._get_iterator()
        if self._iterator is None:
            self._iterator = self._get_iterator()
        else:
            self._iterator._reset(self)
        return self._iterator

    def _get_iterator(self) -> _BaseDataLoaderIter:
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        self.check_worker_number_rationality()
        return _MultiProcessingDataLoaderIter(self)

    def check_worker_number_rationality(self) -> None:
        """torch's warning when there are more workers than CPUs this process may use."""
        cpuset_checked = hasattr(os, "sched_getaffinity")
        cpus = len(os.sched_getaffinity(0)) if cpuset_checked else os.cpu_count()
        if self.num_workers == 0 or (cpus is not None and self.num_workers <= cpus):
            return
        if cpus is None:
            suggestion = ("DataLoader is not able to compute a suggested max number of worker "
                          "in current system.")
        else:
            unchecked = "" if cpuset_checked else " (`cpuset` is not taken into account)"
            suggestion = (f"Our suggested max number of worker in current system is {cpus}"
                          f"{unchecked}, which is smaller than what this DataLoader is going "
                          f"to create.")
        warnings.warn(f"This DataLoader will create {self.num_workers} worker processes in "
                      f"total. {suggestion} Please be aware that excessive worker creation "
                      f"might get DataLoader running slow or even freeze, lower the worker "
                      f"number to avoid potential slowness/freeze if necessary.", stacklevel=2)

    def __len__(self) -> int:
        if not self._iterable:
            return len(self._index_sampler)
        length = self._IterableDataset_len_called = len(self.dataset)
        if self.batch_size is not None:
            length = (length // self.batch_size if self.drop_last
                      else math.ceil(length / self.batch_size))
        return length
