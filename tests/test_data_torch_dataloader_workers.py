"""torch's test/test_dataloader.py, worker-process part (num_workers > 0): its programs run
under gradkit and torch 2.13 with the same outcome. The default start method (fork) hands the
local dataset classes to the workers; test_data_workers.py has the rest of the worker tests."""
import multiprocessing
import os
import subprocess
import sys
import types
import warnings

import pytest

torch = pytest.importorskip("torch")
from test_data_torch_dataloader import bulk_loading, counting, labelled, seeded  # noqa: E402
from test_utils_data import assert_same_as_torch, indexed  # noqa: E402

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="fork start method")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # gradkit for subprocesses
PROGRAMS = {}


def program(function):
    PROGRAMS[function.__name__] = function
    return function


def first_line(error: Exception) -> str:
    return str(error).split("\n")[0]


@program
def error_in_init(lib, data):
    class ErrorIterable(data.IterableDataset):
        def __iter__(self):
            raise RuntimeError("Error in __iter__")

    def failing_init(_):
        raise RuntimeError("Error in worker_init_fn")
    errors = []
    for make in (lambda: data.DataLoader(ErrorIterable(), num_workers=2),
                 lambda: data.DataLoader(labelled(lib, data), num_workers=2,
                                         worker_init_fn=failing_init)):
        try:
            list(make())
        except RuntimeError as error:
            errors.append(first_line(error))
    return errors


@program
def builtin_collection_conversion(lib, data):
    return [kind(data.DataLoader(counting(data, 8, iterable), batch_size=size, num_workers=1))
            for kind in (list, tuple) for iterable in (False, True) for size in (None, 2)]


@program
def iterable_style_dataset(lib, data):
    sizes = [0, 4, 20]

    class WorkerSpecific(data.IterableDataset):
        def __iter__(self):
            return iter(range(sizes[data.get_worker_info().id]))

        def __len__(self):
            return sum(sizes)
    results = []
    for prefetch_factor in (2, 3):
        loader = data.DataLoader(WorkerSpecific(), num_workers=3, batch_size=None,
                                 prefetch_factor=prefetch_factor)
        results.append((sorted(loader), len(loader)))
        for drop_last in (False, True):
            results.append(sorted(tuple(t.tolist()) for t in data.DataLoader(
                WorkerSpecific(), num_workers=3, batch_size=7, drop_last=drop_last,
                prefetch_factor=prefetch_factor)))
    return results


@program
def iterable_len_warning(lib, data):
    # the warning comes once more samples than len(loader) have been fetched, only after
    # len(loader) was asked
    loader = data.DataLoader(counting(data, 20, True), num_workers=3)
    counts = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        iterator = iter(loader)
        for _ in range(40):
            next(iterator)
        counts.append(len(caught))
        counts.append(len(loader))
        iterator = iter(loader)
        for _ in range(20):
            next(iterator)
        counts.append(len(caught))
        for _ in range(3):
            next(iterator)
    return counts, [str(w.message).split("fetched. ")[-1][:60] for w in caught]


@program
def chain_iterable_style_dataset(lib, data):
    first, second = counting(data, 5, True), counting(data, 3, True)
    return (list(data.DataLoader(first + second, num_workers=1)),
            list(data.DataLoader(data.ChainDataset([first, second]), num_workers=1)))


@program
def multi_epochs_reproducibility(lib, data):
    class MultiEpoch(data.IterableDataset):
        def __iter__(self):
            info = data.get_worker_info()
            for _ in range(20 // info.num_workers):
                yield info.id

        def __len__(self):
            return 20
    loader = data.DataLoader(MultiEpoch(), batch_size=10, num_workers=2)
    return [[batch.tolist() for batch in loader] for _ in range(3)]


def seeds(data, lib):
    return indexed(data, 4, lambda i: lib.initial_seed())


@program
def worker_init_fn(lib, data):
    return list(data.DataLoader(seeds(data, lib), batch_size=2, num_workers=2,
                                worker_init_fn=lambda _: lib.manual_seed(12345)))


@program
def worker_seed_reproducibility(lib, data):
    def drawn():
        return [int(b) for b in data.DataLoader(seeds(data, lib), batch_size=1, num_workers=2,
                                                generator=seeded(lib, 42))]
    return len(set(drawn())), drawn() == drawn()


@program
def shuffle_reproducibility(lib, data):
    def labels():
        return [batch[1].tolist() for batch in data.DataLoader(
            labelled(lib, data), shuffle=True, batch_size=4, num_workers=2,
            generator=seeded(lib, 42))]
    return labels() == labels(), sorted(sum(labels(), []))


@program
def seqential_batch_workers_prefetch(lib, data):
    return list(data.DataLoader(labelled(lib, data), batch_size=3, num_workers=2,
                                prefetch_factor=3))


@program
def error_workers(lib, data):
    class Error(data.Dataset):
        def __len__(self):
            return 41
    iterator, errors = iter(data.DataLoader(Error(), batch_size=2, shuffle=True,
                                            num_workers=2)), 0
    while True:
        try:
            next(iterator)
        except NotImplementedError:
            errors += 1
        except StopIteration:
            return errors


@program
def bulk_loading_nobatch(lib, data):
    dataset, sampler = bulk_loading(lib, data)
    batches = list(data.DataLoader(dataset, batch_size=None, sampler=sampler, num_workers=2))
    return sorted(lib.cat(batches, 0).tolist())


@program
def sampler_and_batch_sampler(lib, data):
    batches = [b for i in range(0, 20, 5) for b in (tuple(range(i, i + 2)),
                                                    tuple(range(i + 2, i + 5)))]
    return (list(data.DataLoader(labelled(lib, data), sampler=range(2, 12), batch_size=2,
                                 num_workers=2)),
            list(data.DataLoader(labelled(lib, data), batch_sampler=batches, num_workers=2)))


@program
def ind_worker_queue(lib, data):
    # each batch comes from the next worker in turn
    class WorkerQueue(data.Dataset):
        worker_id = None

        def worker_init_fn(self, worker_id):
            self.worker_id = worker_id

        def __getitem__(self, item):
            return self.worker_id, item

        def __len__(self):
            return 24
    results = []
    for batch_size, num_workers in ((8, 1), (4, 2), (4, 3)):
        dataset = WorkerQueue()
        results.append([(ids.tolist(), items.tolist()) for ids, items in data.DataLoader(
            dataset, batch_size=batch_size, num_workers=num_workers, timeout=5,
            worker_init_fn=dataset.worker_init_fn)])
    return results


@program
def dataset_not_reset(lib, data):
    # persistent workers keep the dataset they were started with
    def fetch(i):
        assert dataset.start == 0  # the worker's copy of the dataset
        return i
    dataset = indexed(data, 6, fetch)
    loader = data.DataLoader(dataset, num_workers=2, persistent_workers=True)
    dataset.start, epochs = 0, []
    for epoch in range(3):
        epochs.append([x.item() for x in loader])
        dataset.start = epoch + 1
    return epochs


@program
def dict_dataset_persistent_workers(lib, data):
    samples = [{"a_tensor": lib.empty(4, 2).fill_(i), "another_dict": {"a_number": i}}
               for i in range(4)]
    return list(data.DataLoader(samples, batch_size=2, num_workers=1, persistent_workers=True))


@program
def multiprocessing_contexts(lib, data):
    return [list(data.DataLoader(list(range(11)), num_workers=2, batch_size=3,
                                 multiprocessing_context=context))
            for context in (None, "fork", multiprocessing.get_context("fork"))]


@program
def large_sampler_indices(lib, data):
    empty_tensors = indexed(data, 1000000, lambda i: lib.empty(0))
    try:
        for batch in data.DataLoader(empty_tensors, batch_size=40960, num_workers=1):
            assert batch.numel() == 0
            raise RuntimeError("My Error")
    except RuntimeError as error:
        return str(error)


@program
def conv_after_fork(lib, data):
    class Conv(data.Dataset):
        def __init__(self):
            self.x = lib.ones(1, 1, 240)
            self[0]  # a convolution in the parent process first

        def __len__(self):
            return 1

        def __getitem__(self, index):
            return lib.nn.functional.conv1d(self.x, lib.ones(1, 1, 2))
    return [x.shape for x in data.DataLoader(Conv(), num_workers=1)]


@program
def set_affinity_in_worker_init(lib, data):
    expected = sorted(os.sched_getaffinity(0))[-1]

    class Affinity(data.IterableDataset):
        def __iter__(self):
            lib.randperm(1)
            return iter(os.sched_getaffinity(0))
    loader = data.DataLoader(Affinity(), num_workers=2,
                             worker_init_fn=lambda _: os.sched_setaffinity(0, [expected]))
    return [sample.tolist() for sample in loader] == [[expected], [expected]]


@program
def multiple_dataloaders(lib, data):
    first = iter(data.DataLoader(labelled(lib, data), num_workers=1))
    second = iter(data.DataLoader(labelled(lib, data), num_workers=2,
                                  multiprocessing_context="fork"))
    order = [next(first), next(first), next(second), next(second), next(first), next(second)]
    del first, second
    return order


@program
def get_worker_info(lib, data):
    dataset = indexed(data, 4, lambda i: dataset.value)  # set in the worker, by init

    def init(worker_id):
        info, refused = data.get_worker_info(), []
        for name in ("id", "a"):
            try:
                setattr(info, name, 3)
            except Exception as error:  # the error is what is compared
                refused.append(type(error).__name__)
        info.dataset.value = [worker_id, info.num_workers, info.seed == lib.initial_seed(),
                              all(f"{k}=" in repr(info) for k in ("id", "num_workers", "seed",
                                                                    "dataset"))] + refused
    batches = list(data.DataLoader(dataset, batch_size=2, num_workers=2, worker_init_fn=init))
    return batches, hasattr(dataset, "value"), data.get_worker_info()


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # torch's __del__
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_as_torch(name):
    assert_same_as_torch(PROGRAMS[name])


def with_persistent_workers(data):
    """``data`` whose DataLoader keeps its workers (torch's TestDataLoaderPersistentWorkers
    reruns TestDataLoader so)."""
    def loader(dataset, **options):
        if options.get("num_workers", 0) > 0:
            options.setdefault("persistent_workers", True)
        return data.DataLoader(dataset, **options)
    return types.SimpleNamespace(DataLoader=loader, **{
        name: getattr(data, name) for name in data.__all__ if name != "DataLoader"})


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # torch's __del__
@pytest.mark.parametrize("name", ["builtin_collection_conversion", "chain_iterable_style_dataset",
                                  "error_in_init", "error_workers", "get_worker_info",
                                  "iterable_len_warning", "iterable_style_dataset",
                                  "multi_epochs_reproducibility", "shuffle_reproducibility",
                                  "worker_init_fn"])
def test_program_with_persistent_workers_as_torch(name):
    assert_same_as_torch(lambda lib, data: PROGRAMS[name](lib, with_persistent_workers(data)))


EARLY_EXIT = """
import {lib}
from {lib}.utils.data import DataLoader, IterableDataset

class RandomDataset(IterableDataset):
    def __init__(self, length, size):
        self.length, self.size = length, size

    def __iter__(self):
        return self

    def __next__(self):
        if self.length <= 0:
            raise StopIteration
        self.length -= 1
        return {lib}.randn(self.size)

if __name__ == "__main__":
    loader = DataLoader(RandomDataset(64, (28, 28)), batch_size=16, num_workers=2,
                        pin_memory=True, persistent_workers=True, multiprocessing_context="fork")
    for _ in loader:
        break
"""


@pytest.mark.parametrize("lib", ["gradkit", "torch"])
def test_early_exit_with_persistent_workers(lib):
    # torch's test_early_exit: the interpreter ends with live persistent workers, cleanly
    done = subprocess.run([sys.executable, "-W", "ignore", "-c", EARLY_EXIT.format(lib=lib)],
                          capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, PYTHONPATH=ROOT))
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
