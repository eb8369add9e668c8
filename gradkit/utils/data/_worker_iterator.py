"""A DataLoader pass that loads in worker processes, as torch's
``_MultiProcessingDataLoaderIter``.

The main process sends ``(task index, sampler index)`` to the workers' index queues in turn,
at most ``prefetch_factor`` tasks per worker ahead, and reads ``(task index, batch)`` from the
one result queue: in task order (``in_order=True``), or as the batches come. Workers end at
the end of the pass (``persistent_workers``: when the iterator is collected), on ``del`` or an
early ``break``, and at interpreter exit (multiprocessing terminates daemonic children).
"""
from __future__ import annotations

import atexit
import itertools
import multiprocessing
import os
import queue
import signal
import time
from typing import Any

from gradkit.utils.data._iterators import _BaseDataLoaderIter
from gradkit.utils.data._utils.worker import (MP_STATUS_CHECK_INTERVAL, ExceptionWrapper,
                                               IterableDatasetStopIteration, ResumeIteration,
                                               worker_loop)

# torch learns of a dead worker at once (a SIGCHLD handler); gradkit looks this often while
# it waits for a batch
LIVENESS_CHECK_SECONDS = 0.1
# the index queues of iterators not yet shut down: an iterator collected in a reference cycle
# (an exception's traceback holds one) must still reach its workers from __del__, but
# multiprocessing stops a queue's feeder thread as soon as the queue itself is garbage
_LIVE_INDEX_QUEUES: dict[int, list] = {}
_python_exiting = [False]  # at exit, multiprocessing itself terminates the daemonic workers
atexit.register(_python_exiting.__setitem__, 0, True)


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    """A pass whose batches are fetched by ``num_workers`` worker processes."""

    _shutdown = True  # until workers start: nothing to shut down

    def __init__(self, loader) -> None:
        super().__init__(loader)
        self._prefetch_factor = loader.prefetch_factor
        self._in_order = loader.in_order
        if self._prefetch_factor <= 0:
            raise AssertionError("prefetch_factor must be greater than 0 for "
                                 "MultiProcessingDataLoaderIter")
        context = loader.multiprocessing_context or multiprocessing.get_context()
        self._result_queue = context.Queue()
        self._done_event = context.Event()
        self._index_queues, self._workers = [], []
        _LIVE_INDEX_QUEUES[id(self)] = self._index_queues
        self._workers_status = [True] * self._num_workers
        self._owner_pid = os.getpid()
        self._shutdown = False
        for worker_id in range(self._num_workers):
            index_queue = context.Queue()
            index_queue.cancel_join_thread()  # exiting never waits on indices no one reads
            worker = context.Process(target=worker_loop, daemon=True, args=(
                self._dataset, index_queue, self._result_queue, self._done_event,
                self._auto_collation, self._collate_fn, self._drop_last, self._base_seed,
                loader.worker_init_fn, worker_id, self._num_workers))
            worker.start()
            self._index_queues.append(index_queue)
            self._workers.append(worker)
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter: bool = False) -> None:
        """Start a pass: with persistent workers, after the first one, each worker confirms
        it has restarted its fetcher before any task is sent."""
        super()._reset(loader, first_iter)
        self._send_idx = 0  # the next task to send
        self._rcvd_idx = 0  # the next task to yield (in order)
        # task -> (worker,) while outstanding, (worker, data) once fetched out of order
        self._task_info: dict[int, tuple] = {}
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers  # False: its iterable ran out
        self._workers_num_tasks = [0] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            for index_queue in self._index_queues:
                index_queue.put(ResumeIteration())
            resumed = 0
            while resumed < self._num_workers:
                task_index, _ = self._get_data()
                resumed += isinstance(task_index, ResumeIteration)
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_put_index(self) -> None:
        """Send the sampler's next index to the next worker that still fetches (with
        ``in_order=False``: the next one with room under its share of the prefetch)."""
        max_tasks = self._prefetch_factor * self._num_workers
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker_id = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker_id] and (
                    self._in_order or self._workers_num_tasks[worker_id]
                    < max_tasks // sum(self._workers_status)):
                break
        else:  # no worker can take it
            return
        self._index_queues[worker_id].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker_id,)
        self._workers_num_tasks[worker_id] += 1
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _next_data(self) -> Any:
        while True:
            # skip the tasks of workers whose iterable ran out before fetching them
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info:
                    if len(info) == 2 or self._workers_status[info[0]]:
                        break
                    del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:  # fetched earlier, out of order
                worker_id, data = self._task_info.pop(self._rcvd_idx)
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)
            task_index, data = self._get_data()
            self._tasks_outstanding -= 1
            if isinstance(data, IterableDatasetStopIteration):
                if self._persistent_workers:
                    self._workers_status[data.worker_id] = False
                else:
                    self._mark_worker_as_unavailable(data.worker_id)
                self._try_put_index()
                continue
            if task_index == self._rcvd_idx or not self._in_order:
                worker_id = self._task_info.pop(task_index)[0]
                self._rcvd_idx += task_index == self._rcvd_idx
                return self._process_data(data, worker_id)
            self._task_info[task_index] += (data,)  # kept until its turn

    def _process_data(self, data, worker_id: int) -> Any:
        self._workers_num_tasks[worker_id] -= 1
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return data

    def _get_data(self) -> tuple:
        """The next ``(task index, data)`` from any worker; torch's errors on a timeout or a
        worker that died."""
        deadline = time.monotonic() + self._timeout if self._timeout > 0 else None
        while True:
            wait = LIVENESS_CHECK_SECONDS
            if deadline is not None:
                wait = max(0.0, min(wait, deadline - time.monotonic()))
            try:
                return self._result_queue.get(timeout=wait)
            except queue.Empty as empty:
                self._raise_if_a_worker_died(empty)
            if deadline is not None and time.monotonic() >= deadline:
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")

    def _raise_if_a_worker_died(self, cause: Exception) -> None:
        failed = [worker_id for worker_id, worker in enumerate(self._workers)
                  if self._workers_status[worker_id] and not worker.is_alive()]
        for worker_id in failed:
            self._mark_worker_as_unavailable(worker_id)
        if failed:
            died = [self._workers[worker_id] for worker_id in failed]
            pids = ", ".join(str(worker.pid) for worker in died)
            raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly") \
                from _how_it_died(died[0]) or cause

    def _mark_worker_as_unavailable(self, worker_id: int) -> None:
        self._index_queues[worker_id].put(None)  # the worker's final signal
        self._workers_status[worker_id] = False

    def _shutdown_workers(self) -> None:
        """Stop every worker: each gets the final signal and is joined (terminated if it
        does not end in time, e.g. stuck in a slow fetch)."""
        if _python_exiting[0] or self._shutdown or os.getpid() != self._owner_pid:
            return  # a forked worker's copy of another pass collected there is not its owner
        self._shutdown = True
        try:
            self._done_event.set()  # workers skip the tasks still queued
            for worker_id, index_queue in enumerate(self._index_queues):
                if self._persistent_workers or self._workers_status[worker_id]:
                    index_queue.put(None)
            for worker in self._workers:
                worker.join(timeout=MP_STATUS_CHECK_INTERVAL)
            for index_queue in self._index_queues:
                index_queue.close()
        finally:
            _LIVE_INDEX_QUEUES.pop(id(self), None)
            for worker in self._workers:
                if worker.is_alive():
                    worker.terminate()
                    worker.join(timeout=1.0)  # reap it: no zombie left behind

    def __del__(self) -> None:
        self._shutdown_workers()


def _how_it_died(worker) -> RuntimeError | None:
    """torch's report of a worker that died of a signal or exited with an error code."""
    code = worker.exitcode
    if code is None or code == 0:
        return None
    if code < 0:
        return RuntimeError(f"DataLoader worker (pid {worker.pid}) is killed by signal: "
                            f"{signal.strsignal(-code)}. ")
    return RuntimeError(f"DataLoader worker (pid {worker.pid}) exited unexpectedly with exit "
                        f"code {code}. Details are lost due to multiprocessing. Rerunning with "
                        f"num_workers=0 may give better error trace.")
