"""What runs inside a DataLoader worker process, as torch's ``_utils/worker.py``.

A worker takes ``(task index, sampler index)`` pairs from its own index queue, fetches the
batch and puts ``(task index, batch)`` on the result queue the workers share. A failure is
sent back as an :class:`ExceptionWrapper` (the main process re-raises it); ``None`` on the
index queue ends the worker; :class:`ResumeIteration` starts a new epoch of a persistent one.
"""
from __future__ import annotations

import os
import queue
import random
import sys
import traceback
from dataclasses import dataclass
from typing import Any

import numpy as np

from gradkit.generator import manual_seed
from gradkit.utils.data._utils.fetch import IterableDatasetFetcher, create_fetcher

# how long a worker waits on its index queue before checking that its parent still lives
MP_STATUS_CHECK_INTERVAL = 5.0


@dataclass(frozen=True, slots=True)
class WorkerInfo:
    """What ``get_worker_info()`` returns in a worker (read-only, as torch's): ``id``,
    ``num_workers``, ``seed``, ``dataset`` (the worker's own copy); ``rng`` (None) and
    ``worker_method`` are torch's fields for its thread workers, which gradkit lacks."""

    id: int
    num_workers: int
    seed: int
    dataset: Any
    rng: None = None
    worker_method: str | None = "multiprocessing"


_worker_info: WorkerInfo | None = None  # set in a worker process only


def get_worker_info() -> WorkerInfo | None:
    """This worker's :class:`WorkerInfo` inside a DataLoader worker process, None in the
    main process (an IterableDataset shards its samples by it)."""
    return _worker_info


class KeyErrorMessage(str):
    """A KeyError's message shown as it is (KeyError shows its argument's repr)."""

    def __repr__(self) -> str:
        return self


class ExceptionWrapper:
    """An exception and its formatted traceback, sent from a worker to the main process."""

    def __init__(self, exc_info=None, where: str = "in background") -> None:
        exc_type, exc_value, exc_tb = sys.exc_info() if exc_info is None else exc_info
        self.exc_type = exc_type
        self.exc_msg = "".join(traceback.format_exception(exc_type, exc_value, exc_tb))
        self.where = where

    def reraise(self) -> None:
        """Raise the same exception type, its message torch's "Caught <type> <where>." and
        the original traceback (RuntimeError when the type cannot take one message)."""
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        elif getattr(self.exc_type, "message", None):
            raise self.exc_type(message=msg)
        try:
            exception = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        raise exception


@dataclass(frozen=True)
class ResumeIteration:
    """Sent to a persistent worker to start a new epoch (and echoed back once it has)."""


@dataclass(frozen=True)
class IterableDatasetStopIteration:
    """A worker's answer once its copy of an iterable dataset is exhausted."""
    worker_id: int


def numpy_seed(base_seed: int, worker_id: int) -> list[int]:
    """The NumPy seed of worker ``worker_id``: torch's ``_generate_state``, which is NumPy's
    SeedSequence over these four 32-bit words (so NumPy streams differ from gradkit's)."""
    words = [worker_id, base_seed & 0xFFFFFFFF, base_seed >> 32, 0]
    return np.random.SeedSequence(words).generate_state(4).tolist()


def _seed_worker(base_seed: int, worker_id: int) -> int:
    """Seed Python's, gradkit's and NumPy's global random streams as torch seeds a worker."""
    seed = base_seed + worker_id
    random.seed(seed)
    manual_seed(seed)
    np.random.seed(numpy_seed(base_seed, worker_id))
    return seed


def worker_loop(dataset, index_queue, result_queue, done_event, auto_collation: bool,
                collate_fn, drop_last: bool, base_seed: int, init_fn, worker_id: int,
                num_workers: int) -> None:
    """A worker process's body: fetch what the index queue asks until told to stop."""
    global _worker_info
    parent = os.getppid()
    try:
        seed = _seed_worker(base_seed, worker_id)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed,
                                  dataset=dataset)
        where = f"in DataLoader worker process {worker_id}"
        init_error = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = create_fetcher(dataset, auto_collation, collate_fn, drop_last)
        except Exception:
            init_error = ExceptionWrapper(where=where)  # the answer to every task
        iteration_end = False
        while os.getppid() == parent:  # an orphaned worker stops
            try:
                task = index_queue.get(timeout=MP_STATUS_CHECK_INTERVAL)
            except queue.Empty:
                continue
            if isinstance(task, ResumeIteration):
                result_queue.put((task, None))
                iteration_end = False
                fetcher = create_fetcher(dataset, auto_collation, collate_fn, drop_last)
                continue
            if task is None:  # the final signal
                break
            if done_event.is_set() or iteration_end:
                continue  # skip what is left until the final signal comes
            task_index, index = task
            if init_error is not None:  # every task (torch: an UnboundLocalError after one)
                data = init_error
            else:
                data = _fetch(fetcher, index, worker_id, where)
                iteration_end = isinstance(data, IterableDatasetStopIteration)
            result_queue.put((task_index, data))
            del data, task, index  # a batch is not kept alive while waiting for the next
    except KeyboardInterrupt:
        pass  # the main process gets it too and shuts the workers down
    if done_event.is_set():
        result_queue.cancel_join_thread()  # unread batches must not keep this process alive
        result_queue.close()


def _fetch(fetcher, index, worker_id: int, where: str) -> Any:
    """The batch, or what the main process must be told instead of it."""
    try:
        return fetcher.fetch(index)
    except StopIteration:
        if isinstance(fetcher, IterableDatasetFetcher):  # an iterable dataset ran out
            return IterableDatasetStopIteration(worker_id)
        return ExceptionWrapper(where=where)
    except Exception:
        return ExceptionWrapper(where=where)
