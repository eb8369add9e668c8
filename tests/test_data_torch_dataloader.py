"""torch's test/test_dataloader.py, main-process part: its programs run under gradkit and torch
2.13 with the same outcome (values, types, errors; test_utils_data.assert_same_as_torch).
Random orders are not torch's (other streams): programs compare what does not depend on them
(lengths, sorted contents, reproducibility under one seed). Worker processes:
test_data_torch_dataloader_workers.py."""
import collections
import math
import tempfile
import warnings

import numpy as np
import pytest

import gradkit
import gradkit.utils.data as gd

torch = pytest.importorskip("torch")
from test_utils_data import assert_same_as_torch  # noqa: E402 - after the skip

PROGRAMS = {}


def program(function):
    """Register a program of ``(lib, data)`` under the name of the torch test it follows."""
    PROGRAMS[function.__name__] = function
    return function


def labelled(lib, data, n: int = 20):
    """test_dataloader's TensorDataset of samples and labels, with fixed values."""
    return data.TensorDataset(lib.tensor(np.arange(2.0 * n).reshape(n, 2)),
                              lib.tensor(np.arange(n) % 7))


def counting(data, n: int, iterable: bool = False):
    """CountingDataset / CountingIterableDataset: the numbers 0..n-1."""
    if iterable:
        class CountingIterable(data.IterableDataset):
            def __iter__(self):
                return iter(range(n))

            def __len__(self):
                return n
        return CountingIterable()

    class Counting(data.Dataset):
        def __getitem__(self, i):
            return i

        def __len__(self):
            return n
    return Counting()


def seeded(lib, seed: int):
    return lib.Generator().manual_seed(seed)


# -- TestDatasetRandomSplit ---------------------------------------------------------------------
@program
def lengths_must_equal_dataset_size(lib, data):
    return data.random_split([1, 2, 3, 4], [1, 2])


@program
def splits_have_correct_size(lib, data):
    cases = [([1, 2, 3, 4, 5, 6], [2, 4], None), ([1, 2, 3, 4, 5, 6], [0.5, 0.5], None),
             (range(3), [0.5, 0.5], 1), (range(106), [0.1, 0.2, 0.3, 0.4], 1),
             (range(10), [0.3, 0.3, 0.4], None), (range(3), lib.tensor([1, 2]), None)]
    return [[len(s) for s in data.random_split(d, lengths, generator=(
        seeded(lib, seed) if seed else lib.default_generator))] for d, lengths, seed in cases]


@program
def splits_are_mutually_exclusive(lib, data):
    results = []
    for values, lengths in (([5, 2, 3, 4, 1, 6], [2, 4]), ([5, 2, 3, 4, 1, 6], [0.33, 0.67]),
                            ([1, 2, 3, 4], [0.25, 0.75])):
        first, second = data.random_split(values, lengths)
        results.append(sorted(list(first) + list(second)))
    return results


@program
def splits_indexing_type(lib, data):
    keys = []

    class Custom:
        def __getitem__(self, key):
            keys.append(type(key).__name__)
            return [1, 2, 3, 4, 5][key]

        def __len__(self):
            return 5
    for lengths in ([5], [1.0]):
        list(data.DataLoader(data.random_split(Custom(), lengths)[0]))
    return keys


@program
def splits_reproducibility(lib, data):
    def split(lengths):
        return [list(s) for s in data.random_split(range(100), lengths,
                                                   generator=seeded(lib, 42))]
    return [split(lengths) == split(lengths) for lengths in ([60, 40], [0.5, 0.5],
                                                             [0.33, 0.33, 0.34])]


@program
def incomplete_fractional_splits(lib, data):
    return data.random_split([1, 2, 3, 4], [0.1])


@program
def fraction_over_one(lib, data):
    return data.random_split([1, 2, 3, 4], [1.1])


@program
def splits_generator(lib, data):
    state = lib.get_rng_state()
    before = lib.rand(10)
    lib.set_rng_state(state)
    data.random_split(range(10), [5, 5])
    moved = not bool((lib.rand(10) == before).all())
    lib.set_rng_state(state)
    data.random_split(range(10), [5, 5], generator=seeded(lib, 42))
    return moved, bool((lib.rand(10) == before).all())


@program
def slicing_of_subset_of_dataset(lib, data):
    dataset = data.TensorDataset(lib.tensor([1, 2, 3, 4, 5]))
    subset = data.Subset(dataset, [0, 1, 2, 3, 4])
    nested = data.Subset(subset, [0, 1, 2, 3, 4])
    first, _ = data.random_split(dataset, [3, 2])
    same = [bool((first[s][0] == dataset[first.indices[s]][0]).all())
            for s in (slice(None), slice(0, 2), slice(0, -1, 2))]
    return subset[:], subset[1:2], subset[0:-1:2], nested[:], nested[0:2], nested[0:-1:2], same


# -- TestTensorDataset, TestStackDataset, TestConcatDataset ---------------------------------------
@program
def tensor_dataset(lib, data):
    samples = lib.tensor(np.arange(30.0).reshape(5, 6))
    dataset, single = data.TensorDataset(samples, lib.arange(5)), data.TensorDataset(samples)
    return len(dataset), dataset[2], dataset[-1], dataset[1:3], len(single), single[3]


@program
def tensor_dataset_size_mismatch(lib, data):
    return data.TensorDataset(lib.ones(3), lib.ones(4))


@program
def stack_dataset_empty(lib, data):
    return data.StackDataset()


@program
def stack_dataset_mixed(lib, data):
    return data.StackDataset(data.TensorDataset(lib.ones(15, 10)),
                             a=data.TensorDataset(lib.ones(10, 15)))


@program
def stack_dataset_size_mismatch(lib, data):
    return data.StackDataset(a=data.TensorDataset(lib.ones(15, 10)),
                             b=data.TensorDataset(lib.ones(10, 15)))


@program
def stack_dataset_len_and_getitem(lib, data):
    t = data.TensorDataset(lib.tensor(np.arange(30.0).reshape(15, 2)))
    labels = data.TensorDataset(lib.tensor(np.arange(15.0)))
    return (len(data.StackDataset(t, labels)), len(data.StackDataset(a=t)),
            data.StackDataset(t, labels)[3], data.StackDataset(a=t, b=labels)[4])


def batched(lib, data, short: bool = False):
    """GetItemsDataset: fetches a batch at once (one sample short with ``short``)."""
    class GetItems(data.Dataset):
        def __init__(self):
            self.data = lib.tensor([1.0, 2.0, 3.0, 4.0])

        def __getitem__(self, item):
            return self.data[item]

        def __getitems__(self, items):
            return self.data[items][:-1] if short else self.data[items]

        def __len__(self):
            return 4
    return GetItems()


@program
def stack_dataset_getitems(lib, data):
    t = batched(lib, data)
    return (data.StackDataset(t, [1, 2, 3, 4]).__getitems__([0, 1, 2, 3]),
            data.StackDataset(t=t, l=[1, 2, 3, 4]).__getitems__([0, 1, 3]),
            list(data.DataLoader(data.StackDataset(t, [1, 2, 3, 4]), batch_size=3)))


@program
def stack_dataset_getitems_raises_index_error(lib, data):
    return data.StackDataset(batched(lib, data), [1, 2, 3, 4]).__getitems__([0, 4])


@program
def stack_dataset_getitems_value_error(lib, data):
    return data.StackDataset(batched(lib, data, True), [1, 2, 3, 4]).__getitems__([0, 1, 2, 3])


@program
def concat_datasets(lib, data):
    two = data.ConcatDataset([[0], [1]])
    gap = data.ConcatDataset([[0, 1, 2, 3, 4], [], [5, 6, 7, 8, 9]])
    nested = data.ConcatDataset([data.ConcatDataset([[1], [2]]), [3]])
    return (len(two), two[0], two[1], len(gap), [gap[i] for i in (0, 5, 9, -1, -10)],
            gap.cumulative_sizes, len(nested), [nested[i] for i in range(3)])


@program
def concat_raises_index_error(lib, data):
    return data.ConcatDataset([[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]])[11]


@program
def concat_negative_index_error(lib, data):
    return data.ConcatDataset([[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]])[-11]


@program
def add_dataset(lib, data):
    parts = [data.TensorDataset(lib.full((7, 2), float(k)), lib.arange(7) + k) for k in range(3)]
    result = parts[0] + parts[1] + parts[2]
    return len(result), result[0], result[7], result[14], type(result).__name__


@program
def iterable_dataset_err(lib, data):
    return [_error(lambda d=d: data.ConcatDataset(d)) for d in (
        [labelled(lib, data), counting(data, 10, True)], [counting(data, 10, True)], [])]


def _error(call) -> tuple:
    try:
        call()
    except Exception as error:  # the error is what is compared
        return type(error).__name__, str(error)
    return ("no error",)


# -- TestDataLoader (main process) ------------------------------------------------------------
@program
def error_in_init(lib, data):
    class ErrorIterable(data.IterableDataset):
        def __iter__(self):
            raise RuntimeError("Error in __iter__")
    return list(data.DataLoader(ErrorIterable()))


@program
def typing(lib, data):
    class SomeDatasetClass(data.Dataset[list[lib.Tensor]]):
        pass
    return SomeDatasetClass.__name__, data.DataLoader[list[lib.Tensor]] is not None


@program
def invalid_assign_after_init(lib, data):
    loader = data.DataLoader(labelled(lib, data))
    errors = [_error(lambda a=a: setattr(loader, a, {}))
              for a in ("batch_size", "sampler", "batch_sampler", "drop_last", "dataset",
                        "persistent_workers")]
    loader.num_workers, loader.timeout = 3, 2  # not frozen
    return errors, loader.num_workers


@program
def sequential(lib, data):
    dataset = labelled(lib, data)
    return (list(data.DataLoader(dataset, batch_size=None))[:3],
            list(data.DataLoader(dataset))[:2], list(data.DataLoader(dataset, batch_size=3)))


def bulk_loading(lib, data, n: int = 35):
    """BulkLoadingDataset and BulkLoadingSampler: the sampler yields lists of indices."""
    class BulkLoading(data.Dataset):
        def __getitem__(self, indices):
            assert isinstance(indices, (list, tuple))
            return lib.as_tensor(indices)

        def __len__(self):
            return n

    class BulkSampler(data.Sampler):
        def __iter__(self):
            for part in lib.arange(n).split(4):
                yield part.tolist()

        def __len__(self):
            return math.ceil(n / 4)
    return BulkLoading(), BulkSampler()


@program
def bulk_loading_nobatch(lib, data):
    dataset, sampler = bulk_loading(lib, data)
    loader = data.DataLoader(dataset, batch_size=None, sampler=sampler)
    return loader._auto_collation, list(loader), len(loader)


@program
def growing_dataset(lib, data):
    dataset = [lib.ones(4) for _ in range(4)]
    in_order = data.DataLoader(dataset, shuffle=False)
    shuffled = data.DataLoader(dataset, shuffle=True)
    dataset.append(lib.ones(4))
    return len(in_order), len(shuffled), len(list(shuffled)), len(list(in_order))


INVALID_OPTIONS = [
    dict(num_workers=-1), dict(timeout=-1), dict(batch_size=None, drop_last=True),
    dict(num_workers=0, multiprocessing_context="fork"),
    dict(num_workers=1, multiprocessing_context="bad"),
    dict(num_workers=1, multiprocessing_context=object()),
    dict(batch_size=11, sampler="S", shuffle=True),
    dict(batch_sampler="B", sampler="S", shuffle=True),
    dict(batch_sampler="B", sampler="S", shuffle=3), dict(batch_size=11, batch_sampler="B"),
    dict(shuffle=True, batch_sampler="B"), dict(drop_last=True, batch_sampler="B"),
    dict(drop_last=3, batch_sampler="B"), dict(num_workers=0, prefetch_factor=2),
    dict(num_workers=1, prefetch_factor=-1), dict(persistent_workers=True),
]


@pytest.mark.parametrize("options", INVALID_OPTIONS, ids=str)
def test_invalid_ctor_args_combinations(options):
    def make(lib, data):
        dataset = labelled(lib, data)
        sampler = data.SequentialSampler(dataset)
        named = {"S": sampler, "B": data.BatchSampler(sampler, 3, False)}
        return data.DataLoader(dataset, **{k: named.get(v, v) if isinstance(v, str) else v
                                           for k, v in options.items()})
    assert_same_as_torch(lambda lib, data: _error(lambda: make(lib, data)))


@pytest.mark.parametrize("option", ["shuffle=True", "shuffle=3", "sampler", "sampler=3",
                                    "batch_sampler", "batch_sampler=3", "shuffle=False"])
def test_invalid_ctor_args_of_iterable_datasets(option):
    def make(lib, data):
        dataset = counting(data, 20, iterable=True)
        sampler = data.SequentialSampler(dataset)
        value = {"sampler": sampler, "batch_sampler": data.BatchSampler(sampler, 3, False)}
        name, _, given = option.partition("=")
        # torch's message shows the object's repr: compared up to it
        error = _error(lambda: data.DataLoader(dataset, **{
            name: eval(given) if given else value[name]}))  # noqa: S307 - a literal
        return error[0], error[-1].split(" option, but got")[0]
    assert_same_as_torch(make)


@program
def builtin_collection_conversion(lib, data):
    return [kind(data.DataLoader(counting(data, 20, iterable), batch_size=batch_size))
            for kind in (list, tuple) for iterable in (False, True) for batch_size in (None, 2)]


@program
def iterable_style_dataset(lib, data):
    loader = data.DataLoader(counting(data, 20, True), batch_size=None)
    return (list(loader), len(loader),
            list(data.DataLoader(counting(data, 20, True), batch_size=7)),
            list(data.DataLoader(counting(data, 20, True), batch_size=7, drop_last=True)))


@program
def chain_iterable_style_dataset(lib, data):
    first, second = counting(data, 5, True), counting(data, 3, True)
    return (list(data.DataLoader(first + second)),
            list(data.DataLoader(data.ChainDataset([first, second]))), len(first + second),
            _error(lambda: list(iter(first + labelled(lib, data)))),
            _error(lambda: list(iter(data.ChainDataset([first, labelled(lib, data)])))))


@program
def shuffle_reproducibility(lib, data):
    def labels():
        return [sample[1].item() for sample in data.DataLoader(
            labelled(lib, data), shuffle=True, generator=seeded(lib, 42))]
    return labels() == labels(), sorted(labels())


@program
def random_sampler(lib, data):
    dataset = labelled(lib, data)
    n = len(dataset)
    counts = collections.Counter(data.RandomSampler(dataset, replacement=True, num_samples=n + 1))
    results = [(max(counts.values()) > 1, min(counts) >= 0, max(counts) < n, counts.total())]
    for num_samples in (None, 2 * n, n - 1, n + 1):
        counts = collections.Counter(data.RandomSampler(dataset, num_samples=num_samples))
        results.append((sum(v > 1 for v in counts.values()), counts.total(),
                        len(counts) == min(n, num_samples or n)))
    return results, _error(lambda: data.RandomSampler(dataset, replacement=0))


@program
def random_sampler_len(lib, data):
    dataset = labelled(lib, data)
    results = []
    for replacement in (True, False):
        sampler = data.RandomSampler(dataset, replacement=replacement,
                                     num_samples=len(dataset) + 5)
        results.append((len(sampler), sum(1 for _ in sampler),
                        len(data.DataLoader(dataset, batch_size=1, sampler=sampler)),
                        len(data.DataLoader(dataset, batch_size=6, sampler=sampler))))
    return results


@program
def distributed_sampler_invalid_rank(lib, data):
    dataset = lib.tensor(list(range(10)), dtype=lib.int32)
    return [_error(lambda r=r: data.DistributedSampler(dataset, 3, r)) for r in (3, -1)]


@program
def duplicating_data_with_drop_last(lib, data):
    dataset = lib.tensor(list(range(9)), dtype=lib.int32)
    scanned = lib.tensor([], dtype=lib.int32)
    for rank in range(4):
        sampler = data.DistributedSampler(dataset, 4, rank)
        for batch in data.DataLoader(dataset, batch_size=2, drop_last=True, sampler=sampler):
            scanned = lib.cat((scanned, batch), 0)
    return scanned.size() == scanned.unique().size(), len(scanned)


@program
def sampler_reproducibility(lib, data):
    dataset, weights = labelled(lib, data), [0.1, 0.9, 0.4, 0.7, 3.0, 0.6]
    makers = (
        lambda g: data.RandomSampler(dataset, num_samples=5, replacement=True, generator=g),
        lambda g: data.RandomSampler(dataset, replacement=False, generator=g),
        lambda g: data.WeightedRandomSampler(weights, num_samples=5, replacement=True, generator=g),
        lambda g: data.WeightedRandomSampler(weights, num_samples=5, replacement=False,
                                             generator=g),
        lambda g: data.SubsetRandomSampler(range(10), generator=g))
    results = [list(make(seeded(lib, 42))) == list(make(seeded(lib, 42))) for make in makers]
    for sampler in (make(None) for make in makers):
        lib.manual_seed(0)
        twice = list(sampler) + list(sampler)
        lib.manual_seed(0)
        results.append(twice == list(sampler) + list(sampler))
        iterators, drawn = (iter(sampler), iter(sampler)), ([], [])
        for index in range(len(sampler)):
            for i in range(2):
                if index == 0:
                    lib.manual_seed(0)
                drawn[i].append(next(iterators[i]))
        results.append(drawn[0] == drawn[1])
    return results


@program
def sampler_and_batch_sampler_iterables(lib, data):
    batches = [b for i in range(0, 20, 5) for b in (tuple(range(i, i + 2)),
                                                    tuple(range(i + 2, i + 5)))]
    by_sampler = data.DataLoader(labelled(lib, data), sampler=range(2, 12), batch_size=2)
    by_batches = data.DataLoader(labelled(lib, data), batch_sampler=batches)
    return len(by_sampler), list(by_sampler), len(by_batches), list(by_batches)


@program
def numpy(lib, data):
    class Arrays(data.Dataset):
        def __getitem__(self, i):
            return np.ones((2, 3, 4)) * i

        def __len__(self):
            return 1000
    batch = next(iter(data.DataLoader(Arrays(), batch_size=12)))
    return batch.type().split(".")[-1], batch.size()


@program
def numpy_gen_state(lib, data):
    cases = ((4, 13434589827475259383), (1, 15014285634777110771), (0, 8979703111668486195),
             (12, 480002904169484764))
    if lib is torch:
        from torch.utils.data._utils.worker import _generate_state
        return [tuple(_generate_state(seed, worker)) for worker, seed in cases]
    from gradkit.utils.data._utils.worker import numpy_seed
    return [tuple(numpy_seed(seed, worker)) for worker, seed in cases]


@program
def error(lib, data):
    class Error(data.Dataset):  # no __getitem__: Dataset's NotImplementedError
        def __len__(self):
            return 100
    iterator, errors = iter(data.DataLoader(Error(), batch_size=2, shuffle=True)), []
    while True:
        try:
            next(iterator)
        except NotImplementedError as error:
            errors.append(str(error))
        except StopIteration:
            return len(errors), sorted(set(errors))


@program
def len(lib, data):
    dataset = labelled(lib, data)
    return [(len(loader), sum(1 for _ in loader)) for loader in (
        data.DataLoader(dataset, batch_size=2), data.DataLoader(dataset, batch_size=3),
        data.DataLoader(dataset, batch_size=3, drop_last=True))]


@program
def iterabledataset_len(lib, data):
    return [len(data.DataLoader(counting(data, 10, True), batch_size=size, drop_last=drop))
            for size in (1, 2, 3, None) for drop in (False, True) if size or not drop]


@program
def numpy_scalars(lib, data):
    types = []
    for kind in (np.float64, np.float32, np.float16, np.int64, np.int32, np.int16, np.int8,
                 np.uint8, np.bool_, np.complex64):
        batch = next(iter(data.DataLoader([kind()] * 4, batch_size=2)))
        types.append(batch.type().split(".")[-1])
    return types


class CustomList(list):
    pass


class CustomDict(dict):
    pass


@program
def default_convert_keeps_types(lib, data):
    convert = data._utils.collate.default_convert
    mapping, sequence = convert(CustomDict({"a": 1, "b": 2})), convert(CustomList([1, 2, 3]))
    return (type(mapping).__name__, mapping, type(sequence).__name__, sequence, convert(range(2)),
            convert((1, 2)), convert(np.array([1, 2])), convert(np.float32(1)))


@program
def default_collate_dtype_and_types(lib, data):
    collate = data._utils.collate.default_collate
    mapping = collate([CustomDict({"a": 1, "b": 2}), CustomDict({"a": 3, "b": 4})])
    sequence = collate([CustomList([1, 2, 3]), CustomList([4, 5, 6])])
    return (collate([1, 2, -1]), collate([1.1, 2.3, -0.9]), collate([True, False]),
            collate(["a", "b", "c"]), type(mapping).__name__, mapping,
            type(sequence).__name__, sequence, collate([range(2), range(2)]))


@pytest.mark.parametrize("batch", [
    lambda: np.array(["a", "b", "c"]), lambda: np.array([[["a", "b", "c"]]]),
    lambda: np.array([object(), object(), object()]),
    lambda: np.array([[[object(), object(), object()]]]),
    lambda: [["X"], ["X", "X"]], lambda: [["X", "X"], ["X"]],
    lambda: [gradkit.ones(2), np.ones(2)],  # torch stacks tensors only
])
def test_default_collate_bad_types(batch):
    def collate(lib, data):
        items = batch()
        if items and isinstance(items[0], gradkit.Tensor) and lib is torch:
            items[0] = torch.ones(2)
        return data.default_collate(items)
    assert_same_as_torch(collate)


@program
def default_collate_numpy_memmap(lib, data):
    with tempfile.TemporaryFile() as f:
        values = np.array([[0, 1], [2, 3], [4, 5], [6, 7]])
        written = np.memmap(f, dtype=values.dtype, mode="w+", shape=values.shape)
        written[:] = values[:]
        read = np.memmap(f, dtype=values.dtype, mode="r", shape=values.shape)
        return data._utils.collate.default_collate(list(read))


@program
def default_collate_shared_tensor(lib, data):
    collate = data._utils.collate.default_collate
    return lib.zeros(1).is_shared(), collate([lib.zeros(1)]).is_shared(), \
        collate([np.zeros(1)]).is_shared()


@program
def excessive_thread_creation_warning(lib, data):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        data.DataLoader(labelled(lib, data), batch_size=2, num_workers=1000)
    return [str(w.message).split(" Our suggested")[0] for w in caught]


# -- string, dict, namedtuple and custom batches ----------------------------------------------
@program
def string_dataset(lib, data):
    return list(data.DataLoader([(s, i) for i, s in enumerate("12345")], batch_size=2))


@program
def dict_dataset(lib, data):
    samples = [{"a_tensor": lib.empty(4, 2).fill_(i), "another_dict": {"a_number": i}}
               for i in range(4)]
    return list(data.DataLoader(samples, batch_size=2))


Batch = collections.namedtuple("Batch", ["data", "label", "random_tensor"])
Data = collections.namedtuple("Data", ["positive", "negative"])


@program
def dataloader_with_namedtuple(lib, data):
    samples = [Batch(data=Data(positive=i, negative=-i), label=str(i), random_tensor=lib.ones(3))
               for i in range(4)]
    batches = (list(data.DataLoader(samples, batch_size=2))
               + list(data.DataLoader(samples, batch_size=None)))
    return [(type(b).__name__, type(b.data).__name__, b) for b in batches]


@program
def custom_batch_collate(lib, data):
    class SimpleCustomBatch:
        def __init__(self, samples):
            columns = list(zip(*samples))
            self.inp, self.tgt = lib.stack(columns[0], 0), lib.stack(columns[1], 0)
    values = lib.arange(50, dtype=lib.float32).view(10, 5)
    dataset = data.TensorDataset(values, values)
    return [(type(b).__name__, b.inp, b.tgt)
            for b in data.DataLoader(dataset, batch_size=2, collate_fn=SimpleCustomBatch)]


@program
def packed_sequence_collate(lib, data):
    def collate(batch):
        padded = lib.stack([sample[0] for sample in batch], 0)
        return lib.nn.utils.rnn.pack_padded_sequence(padded, lib.tensor([3, 2]),
                                                     batch_first=True, enforce_sorted=False)
    dataset = data.TensorDataset(lib.arange(50, dtype=lib.float32).view(10, 5))
    return [(type(b).__name__, b.data, b.batch_sizes)
            for b in data.DataLoader(dataset, batch_size=2, collate_fn=collate)]


@program
def pin_memory_with_only_device(lib, data):
    loader = data.DataLoader(labelled(lib, data), batch_size=2, pin_memory_device="cuda")
    return next(iter(loader))[0].is_pinned(), loader.pin_memory, loader.pin_memory_device


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_as_torch(name):
    assert_same_as_torch(PROGRAMS[name])


# -- found while reading: fixed in gradkit ------------------------------------------------------
@pytest.mark.parametrize("weights", [[0.1, -0.2], [0.1, float("nan")], [0.1, float("inf")],
                                     [[1.0, 1.0], [-1.0, 2.0]], [[0.0, 0.0], [-1.0, 2.0]],
                                     [[1.0, float("inf")], [0.0, 0.0]], [float("nan"), -1.0]])
@pytest.mark.parametrize("count, replacement", [(1, True), (2, True), (3, True), (2, False)])
def test_multinomial_checks_its_probabilities_as_torch(weights, count, replacement):
    # drawing several samples with replacement, torch checks entry by entry, then each row's
    # sum (its CPU kernel's messages); otherwise the whole tensor at once
    if not replacement and np.ndim(weights) == 1 and count > 2:
        return
    assert_same_as_torch(lambda lib, data: lib.multinomial(
        lib.tensor(weights), count, replacement))
    assert_same_as_torch(lambda lib, data: list(data.WeightedRandomSampler(
        np.ravel(weights).tolist(), count, replacement)))


@pytest.mark.parametrize("n", [3, np.int64(3), "tensor(3)", "tensor([3])", "tensor(3.)", 3.0,
                               True, None, "tensor([1, 2])"])
def test_randperm_reads_n_as_torch(n):
    # random_split hands randperm the sum of its lengths: a tensor when they are one
    def permutation(lib, data):
        size = eval(n, {"tensor": lib.tensor}) if isinstance(n, str) else n  # noqa: S307
        return lib.randperm(size).shape
    assert_same_as_torch(permutation)


def test_random_split_of_tensor_lengths():
    parts = gd.random_split(range(3), gradkit.tensor([1, 2]), generator=gradkit.Generator())
    assert sorted(parts[0].indices + parts[1].indices) == [0, 1, 2]


# default_collate of NumPy scalars is torch's as_tensor(batch); default_convert is as_tensor
@pytest.mark.parametrize("batch", [
    lambda lib: [np.float32(1), 2.5, np.int16(3)], lambda lib: [np.int64(7), np.float16(2)],
    lambda lib: [np.int8(1), np.array(["a"])], lambda lib: [np.float32(1), np.str_("a")],
    lambda lib: [np.float32(1), np.bytes_(b"a")], lambda lib: [np.float32(1), b"x"],
    lambda lib: [np.float32(1), None], lambda lib: [np.datetime64("2020-01-01")] * 2,
    lambda lib: [np.bool_(True), np.uint16(3)], lambda lib: [np.uint16(3), np.bool_(True)],
    lambda lib: [np.float32(1), lib.tensor(2.0)], lambda lib: [np.int8(1), 1j],
    lambda lib: [np.ones(2, np.uint32), np.str_("a")],
])
def test_default_collate_of_numpy_scalars_as_torch(batch):
    assert_same_as_torch(lambda lib, data: data.default_collate(batch(lib)))
    assert_same_as_torch(lambda lib, data: lib.tensor(batch(lib)))


@pytest.mark.parametrize("value", [np.bytes_(b"a"), np.str_("a"), np.datetime64("2020-01-01"),
                                   np.float32(1.5), np.array(["a"]), (np.bytes_(b"a"), 1)])
def test_default_convert_and_tensor_of_numpy_scalars_as_torch(value):
    assert_same_as_torch(lambda lib, data: data.default_convert(value))
    assert_same_as_torch(lambda lib, data: lib.as_tensor(value))


@pytest.mark.parametrize("data", [
    lambda lib: [lib.tensor([1.0]), lib.tensor([2.0])], lambda lib: [1.0, lib.tensor([2.0])],
    lambda lib: [lib.tensor([2.0]), 1.0], lambda lib: [np.float32(1), lib.tensor([[1.0]])],
    lambda lib: [lib.tensor([1.0, 2.0]), lib.tensor([3.0, 4.0])], lambda lib: [1.0, lib.ones(2)],
    lambda lib: [[1.0], lib.tensor([2.0])], lambda lib: [[lib.tensor([1.0])], [lib.tensor([2.0])]],
    lambda lib: [lib.ones(1, 1), lib.ones(1, 1)],
    lambda lib: [1, lib.tensor([2.0], dtype=lib.float16)],
    lambda lib: [lib.tensor(1.0), lib.tensor(2)], lambda lib: [np.ones(1), np.ones(1)],
    lambda lib: [1.0, np.ones(2)], lambda lib: [np.float32(1), np.ones(1)],
    lambda lib: [[1.0], np.ones(1)], lambda lib: [[1.0, 2.0], [np.float32(1), np.ones(1)]],
])
def test_a_tensor_among_the_data_is_one_number_as_torch(data):
    # torch's sizes stop at a tensor, which it then reads as item(); where the sizes want a
    # sequence (after a list as first element) the tensor is one. An array where a number
    # belongs is torch's TypeError
    assert_same_as_torch(lambda lib, _: lib.tensor(data(lib)))
    assert_same_as_torch(lambda lib, _: lib.as_tensor(data(lib)))
