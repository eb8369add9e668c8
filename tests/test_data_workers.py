"""DataLoader worker processes (num_workers > 0) against torch's: the same programs give the
same batches, orders, worker info, seeds, errors and warnings; workers end cleanly.

Programs are functions of ``(lib, data)`` as in test_utils_data.py; datasets are local
classes, which the default start method (fork) hands to the workers without pickling.
"""
import gc
import multiprocessing
import os
import random
import re
import sys
import time

import numpy as np
import pytest

import gradkit
import gradkit.utils.data as gd
from gradkit.utils.data._utils.worker import ExceptionWrapper, numpy_seed

torch = pytest.importorskip("torch")
import torch.utils.data as td  # noqa: E402 - after the skip
from torch.utils.data._utils.worker import _generate_state  # noqa: E402
from test_utils_data import (assert_same_as_torch, counting, indexed,  # noqa: E402
                             outcome, tensor_dataset, warnings_of)

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="fork start method, /proc")


def base_seed_of(lib, seed: int) -> int:
    """The base seed a loader with ``generator=Generator().manual_seed(seed)`` gives its
    workers: the first int64 drawn from that generator."""
    return lib.empty((), dtype=lib.int64).random_(
        generator=lib.Generator().manual_seed(seed)).item()


@pytest.mark.parametrize("options", [
    {"num_workers": 1}, {"num_workers": 2, "batch_size": 3},
    {"num_workers": 2, "batch_size": 3, "drop_last": True},
    {"num_workers": 2, "batch_size": None}, {"num_workers": 3, "batch_size": 2},
    {"num_workers": 2, "batch_size": 2, "prefetch_factor": 1},
    {"num_workers": 2, "batch_size": 3, "persistent_workers": True},
    {"num_workers": 2, "batch_sampler": [[1, 2], [0], [6, 5, 4]]},
])
def test_workers_give_torchs_batches_in_order(options):
    def program(lib, data):
        loader = data.DataLoader(tensor_dataset(lib, data), **options)
        return len(loader), list(loader), list(loader)
    assert_same_as_torch(program)


def test_in_order_false_gives_the_same_batches_as_they_come():
    def slow_first(i):
        time.sleep(0.5 if i == 0 else 0)
        return i

    got = [int(b) for b in gd.DataLoader(indexed(gd, 6, slow_first), num_workers=2,
                                         in_order=False)]
    assert sorted(got) == list(range(6)) and got[0] != 0  # the others overtake the slow one
    in_order = [int(b) for b in gd.DataLoader(indexed(gd, 6, slow_first), num_workers=2)]
    assert in_order == list(range(6))


def test_prefetching_draws_prefetch_factor_indices_per_worker_ahead():
    def program(lib, data):
        drawn = []

        class Counted(data.Sampler):
            def __iter__(self):
                for i in range(20):
                    drawn.append(i)
                    yield i

        iterator = iter(data.DataLoader(list(range(20)), sampler=Counted(), num_workers=2,
                                        prefetch_factor=3))
        ahead = len(drawn)
        first = next(iterator)
        return ahead, len(drawn), first
    assert_same_as_torch(program)
    assert outcome(program, "gradkit")[1][1][:2] == [6, 7]  # 2 workers x 3, then one more


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # torch's __del__
def test_zero_prefetch_factor_fails_when_iterated():
    assert_same_as_torch(lambda lib, data: iter(data.DataLoader([1], num_workers=1,
                                                                prefetch_factor=0)))


def test_an_iterable_dataset_is_copied_to_every_worker_as_torch():
    # torch's documented duplication: a dataset that does not shard yields each sample once
    # per worker, and warns once it yields more than its len()
    def program(lib, data):
        dataset = counting(data, 5)
        type(dataset).__repr__ = lambda self: "Counting()"
        loader = data.DataLoader(dataset, batch_size=2, num_workers=2)
        return len(loader), list(loader)
    assert_same_as_torch(program)
    assert warnings_of(program, "gradkit") == warnings_of(program, "torch")
    assert "replica at each worker" in warnings_of(program, "gradkit")[0]


@pytest.mark.parametrize("options", [{"batch_size": 2}, {"batch_size": None},
                                     {"batch_size": 2, "persistent_workers": True},
                                     {"batch_size": 3, "drop_last": True}])
def test_an_iterable_dataset_sharded_by_worker_info(options):
    def program(lib, data):
        class Sharded(data.IterableDataset):
            def __iter__(self):
                info = data.get_worker_info()
                return iter(range(info.id, 11, info.num_workers))
        loader = data.DataLoader(Sharded(), num_workers=3, **options)
        return list(loader), list(loader)
    assert_same_as_torch(program)


def test_worker_info_and_seeds_inside_the_workers():
    def program(lib, data):
        class Reports(data.Dataset):
            def __len__(self):
                return 4

            def __getitem__(self, i):
                info = data.get_worker_info()
                return (info.id, info.num_workers, info.dataset is self,
                        type(info.dataset).__name__, info.seed - base_seed_of(lib, 5),
                        lib.initial_seed() == info.seed, repr(info).startswith("WorkerInfo(id="))
        loader = data.DataLoader(Reports(), num_workers=2, batch_size=None,
                                 generator=lib.Generator().manual_seed(5))
        return data.get_worker_info(), list(loader)
    assert_same_as_torch(program)


def test_workers_seed_python_and_numpy_as_torch():
    def draws(i):
        seed = gd.get_worker_info().seed
        return seed, random.random(), np.random.random(), gradkit.rand(()).item()

    loader = gd.DataLoader(indexed(gd, 2, draws), num_workers=2, batch_size=None)
    for worker_id, (seed, python_draw, numpy_draw, gradkit_draw) in enumerate(loader):
        base = seed - worker_id
        assert python_draw == random.Random(seed).random()
        assert numpy_draw == np.random.RandomState(_generate_state(base, worker_id)).random()
        assert gradkit_draw == gradkit.rand((), generator=gradkit.Generator().manual_seed(seed))
    assert numpy_seed(2 ** 63 - 5, 3) == _generate_state(2 ** 63 - 5, 3)


def test_worker_init_fn_runs_in_each_worker_with_its_id():
    def program(lib, data):
        started = {}

        def init(worker_id):
            started["id"] = (worker_id, data.get_worker_info().id)

        tagged = indexed(data, 4, lambda i: (started["id"], i))
        return list(data.DataLoader(tagged, num_workers=2, worker_init_fn=init,
                                    batch_size=None)), started
    assert_same_as_torch(program)


def test_worker_info_is_read_only_and_none_in_the_main_process():
    def program(lib, data):
        def writes(i):
            info = data.get_worker_info()
            try:
                info.id = 3
            except Exception as error:
                return type(error).__name__, str(error), re.sub(r"\d+|<.*>", "", repr(info))
        return list(data.DataLoader(indexed(data, 1, writes), num_workers=1, batch_size=None))
    assert_same_as_torch(program)
    assert gd.get_worker_info() is None


def failing(data, error: BaseException, at: int = 2):
    def fetch(i):
        if i == at:
            raise error
        return i
    return indexed(data, 4, fetch)


@pytest.mark.parametrize("error", [ValueError("bad sample 2"), KeyError("missing"),
                                   ZeroDivisionError()])
def test_an_error_in_a_worker_is_raised_in_the_main_process_as_torch(error):
    def program(lib, data):
        batches, iterator = [], iter(data.DataLoader(failing(data, error), num_workers=2))
        for _ in range(4):
            try:
                batches.append(next(iterator).tolist())
            except Exception as caught:  # the loader goes on after it, as torch's
                lines = str(caught).splitlines()
                batches.append((type(caught).__name__, lines[0], lines[1], lines[-1]))
        iterator._shutdown_workers()  # now: a traceback cycle holds the iterator until gc
        return batches
    assert_same_as_torch(program)
    batches = outcome(program, "gradkit")[1][1]
    assert batches[2][1][1:] == [f"Caught {type(error).__name__} in DataLoader worker process 0.",
                                 "Original Traceback (most recent call last):",
                                 "".join(ExceptionWrapper((type(error), error, None))
                                         .exc_msg.splitlines()[-1:])]


class NeedsTwoError(Exception):
    """An exception that cannot be made from one message (module level: workers pickle
    exception types)."""

    def __init__(self, a, b):
        super().__init__(a, b)


def test_an_exception_that_takes_no_message_becomes_a_runtime_error():
    def program(lib, data):
        return list(data.DataLoader(failing(data, NeedsTwoError(1, 2), at=0), num_workers=1))
    got, expected = outcome(program, "gradkit"), outcome(program, "torch")
    assert got[:2] == expected[:2] == ("raises", "RuntimeError")
    assert got[2].splitlines()[0] == expected[2].splitlines()[0]


def test_an_error_in_worker_init_fn_answers_the_tasks():
    def program(lib, data):
        def init(worker_id):
            raise OSError(f"no device for worker {worker_id}")
        iterator = iter(data.DataLoader([1, 2, 3], num_workers=1, worker_init_fn=init))
        errors = []
        for _ in range(2):
            try:
                next(iterator)
            except Exception as caught:
                errors.append((type(caught).__name__, str(caught).splitlines()[::6]))
        iterator._shutdown_workers()
        return errors
    got, expected = program(gradkit, gd), program(torch, td)
    assert got[0] == expected[0] == ("OSError", [
        "Caught OSError in DataLoader worker process 0.", "OSError: no device for worker 0"])
    assert got[1] == got[0]  # torch: "Caught UnboundLocalError ... 'fetcher' ..."
    assert expected[1][0] == "UnboundLocalError"


def test_timeout_raises_torchs_error():
    def program(lib, data):
        slow = indexed(data, 2, lambda i: time.sleep(0.4) or i)
        return list(data.DataLoader(slow, num_workers=1, timeout=0.1))
    assert outcome(program, "gradkit") == ("raises", "RuntimeError",
                                           "DataLoader timed out after 0.1 seconds")
    assert_same_as_torch(program)


def exits_at_2(i: int) -> int:
    """Sample ``i``; the worker fetching sample 2 waits, then exits with code 3. The wait lets
    the main process take the worker's batch 0 (its tensor's file descriptor is fetched from
    the worker: torch raises ConnectionResetError if it is gone) and block on the next batch
    (torch's SIGCHLD handler raises where the main process is: outside that wait, its first
    message, not the one compared here)."""
    if i == 2:
        time.sleep(0.5)
        os._exit(3)
    return i


def test_a_worker_that_dies_is_reported_as_torch():
    def program(lib, data):
        dies = indexed(data, 4, exits_at_2)
        try:
            list(data.DataLoader(dies, num_workers=2))
        except RuntimeError as error:
            pid = str(error).split("(pid(s) ")[1].split(")")[0]
            return (str(error).replace(pid, "PID"), type(error.__cause__).__name__,
                    str(error.__cause__).replace(pid, "PID"))
    assert_same_as_torch(program)


def worker_pids(loader) -> list[int]:
    """The pids of the loader's workers, read from inside them."""
    return [int(pid) for pid in loader]


def pids_dataset():
    """Eight samples, each the pid of the process that fetched it."""
    return indexed(gd, 8, lambda i: os.getpid())


def _our_child(pid: int) -> bool:
    """Whether ``pid`` is a process (a zombie too) whose parent is this one: a pid the system
    has handed to an unrelated process since is not a worker left behind."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return int(stat.read().rsplit(")", 1)[1].split()[1]) == os.getpid()
    except (FileNotFoundError, ProcessLookupError):
        return False


def assert_ended(pids) -> None:
    """No process left, not even a zombie (they were joined)."""
    assert not [pid for pid in set(pids) if _our_child(pid)]


def test_workers_end_after_a_pass_after_a_break_and_on_del():
    loader = gd.DataLoader(pids_dataset(), num_workers=2)
    pids = worker_pids(loader)
    assert len(set(pids)) == 2 and os.getpid() not in pids
    assert_ended(pids)
    for batch in loader:
        pid = int(batch)
        break  # the iterator is collected here: its workers stop
    assert_ended([pid])
    iterator = iter(loader)
    pid = int(next(iterator))
    workers = list(iterator._workers)
    del iterator, loader
    gc.collect()
    assert_ended([pid])
    # each ended on the final signal (exit code 0), not terminated after the 5 s join
    # (-SIGTERM): a check of how they stopped, not of how long it took
    assert [worker.exitcode for worker in workers] == [0, 0]


def test_an_iterator_collected_in_a_cycle_stops_its_workers_at_once():
    def fails(i):
        raise ValueError(os.getpid())

    iterator = iter(gd.DataLoader(indexed(gd, 8, fails), num_workers=1))
    workers = list(iterator._workers)
    with pytest.raises(ValueError, match="Caught ValueError") as caught:
        next(iterator)  # the exception's traceback now holds the iterator, in a cycle
    pid = int(str(caught.value).splitlines()[-1].split(": ")[1])
    del iterator, caught
    gc.collect()
    assert_ended([pid])
    # it ended on the final signal (exit code 0), not terminated after the 5 s join
    assert [worker.exitcode for worker in workers] == [0]


def test_persistent_workers_serve_every_epoch_until_the_loader_goes():
    loader = gd.DataLoader(pids_dataset(), num_workers=2, persistent_workers=True)
    first, second = worker_pids(loader), worker_pids(loader)
    assert first == second and all(os.path.exists(f"/proc/{pid}") for pid in first)
    for _ in loader:
        break  # a new epoch resumes the same workers
    assert worker_pids(loader) == first
    del loader
    gc.collect()
    assert_ended(first)


def test_persistent_workers_draw_the_base_seed_once():
    def program(lib, data):
        generator = lib.Generator().manual_seed(1)
        loader = data.DataLoader([1, 2], num_workers=1, persistent_workers=True,
                                 generator=generator)
        list(loader), list(loader), list(loader)
        once = lib.Generator().manual_seed(1)
        lib.empty((), dtype=lib.int64).random_(generator=once)
        return bool((generator.get_state() == once.get_state()).all())
    assert_same_as_torch(program)


def test_tensors_cross_the_process_boundary_intact():
    def program(lib, data):
        def mixed(i):
            grid = lib.arange(12, dtype=lib.float64).reshape(3, 4) * (i + 1)
            return {"view": grid.t()[1:], "int32": lib.tensor([i, -i], dtype=lib.int32),
                    "bool": lib.tensor(i % 2 == 0), "complex": lib.tensor([1j * i]),
                    "uint8": lib.full((2, 2), 200 + i, dtype=lib.uint8),
                    "empty": lib.zeros(0, 3), "text": f"s{i}"}
        return (list(data.DataLoader(indexed(data, 3, mixed), batch_size=2, num_workers=2)),
                list(data.DataLoader(indexed(data, 3, mixed), batch_size=None, num_workers=1)))
    assert_same_as_torch(program)


def test_too_many_workers_warn_as_torch():
    workers = len(os.sched_getaffinity(0)) + 1

    def program(lib, data):
        return list(data.DataLoader([1, 2], num_workers=workers))
    assert warnings_of(program, "gradkit") == warnings_of(program, "torch")
    assert len(warnings_of(program, "gradkit")) == 2  # at construction and at iter()


def test_samples_that_require_grad_in_workers_as_torch():
    # torch collates in a worker into shared memory (stack(out=...)), which refuses them;
    # a leaf sent uncollated arrives as a leaf that requires grad
    def program(lib, data, batch_size):
        leaves = indexed(data, 2, lambda i: lib.full((2,), float(i), requires_grad=True))
        iterator = iter(data.DataLoader(leaves, batch_size=batch_size, num_workers=1))
        try:
            batch = next(iterator)
            return batch.requires_grad, batch.is_leaf, batch.tolist()
        except RuntimeError as error:
            return str(error).splitlines()[-1]
        finally:
            iterator._shutdown_workers()
    for batch_size in (None, 2):
        assert program(gradkit, gd, batch_size) == program(torch, td, batch_size)
    assert program(gradkit, gd, 2).startswith("RuntimeError: stack(): functions with out=")


@pytest.mark.slow  # each spawned worker imports gradkit afresh (a few seconds)
def test_spawned_workers_give_the_same_batches():
    dataset = gd.TensorDataset(gradkit.arange(12.0).reshape(6, 2), gradkit.arange(6))
    spawned = gd.DataLoader(dataset, batch_size=4, num_workers=2,
                            multiprocessing_context="spawn")
    expected = [[x.tolist(), y.tolist()] for x, y in gd.DataLoader(dataset, batch_size=4)]
    assert [[x.tolist(), y.tolist()] for x, y in spawned] == expected


def test_spawn_refuses_what_does_not_pickle_as_torch():
    def program(lib, data):
        return iter(data.DataLoader([1, 2], num_workers=1, collate_fn=lambda batch: batch,
                                    multiprocessing_context="spawn"))
    got, expected = outcome(program, "gradkit"), outcome(program, "torch")
    assert got[:2] == expected[:2] == ("raises", "AttributeError")
    assert "Can't pickle local object" in got[2]


def test_a_forked_copy_of_a_pass_leaves_its_workers_alone():
    # a pass copied into a forked process (the next pass's workers) and collected there must
    # not stop workers that are not that process's children
    iterator = iter(gd.DataLoader(list(range(6)), num_workers=1, timeout=1.0))
    first = int(next(iterator))
    child = multiprocessing.get_context("fork").Process(target=iterator._shutdown_workers)
    child.start()
    child.join()
    assert child.exitcode == 0 and [first] + [int(b) for b in iterator] == list(range(6))
