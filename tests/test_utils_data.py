"""gradkit.utils.data against torch.utils.data: the same programs give the same batches.

A program is a function of ``(lib, data)`` (``gradkit, gradkit.utils.data`` or ``torch,
torch.utils.data``); its result is compared as plain structures (tensors as dtype, shape and
values; containers with their type names), its errors by type and message. Random orders
cannot be torch's (other random streams): they are checked as permutations, reproducible
with a seed.
"""
import collections
import warnings

import numpy as np
import pytest

import gradkit
import gradkit.utils.data as gd

torch = pytest.importorskip("torch")
import torch.utils.data as td  # noqa: E402 - after the skip

LIBRARIES = {"gradkit": (gradkit, gd), "torch": (torch, td)}
Point = collections.namedtuple("Point", "x y")


def plain(value):
    """A library-neutral form of ``value``: tensors as (dtype, shape, values), containers
    with their type names."""
    if isinstance(value, (gradkit.Tensor, torch.Tensor)):
        return ("tensor", str(value.dtype).split(".")[-1], tuple(value.shape), value.tolist())
    if isinstance(value, dict):
        return (type(value).__name__, {k: plain(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [plain(v) for v in value])
    if isinstance(value, np.ndarray):
        return ("ndarray", value.dtype.str, value.tolist())
    return value


def outcome(program, library: str):
    lib, data = LIBRARIES[library]
    try:
        with warnings.catch_warnings():  # compared on their own, by warnings_of
            warnings.simplefilter("ignore")
            return "returns", plain(program(lib, data))
    except Exception as error:  # the error is the outcome compared
        return "raises", type(error).__name__, str(error).replace(library, "LIB")


def _numbers(value) -> list:
    """The numbers of a plain structure, in order (the rest is compared exactly)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return [value]
    if isinstance(value, (list, tuple)):
        return [n for v in value for n in _numbers(v)]
    if isinstance(value, dict):
        return [n for v in value.values() for n in _numbers(v)]
    return []


def _skeleton(value):
    if isinstance(value, float):
        return "#"
    if isinstance(value, (list, tuple)):
        return type(value)(_skeleton(v) for v in value)
    if isinstance(value, dict):
        return {k: _skeleton(v) for k, v in value.items()}
    return value


def assert_same_as_torch(program, rtol: float = 0.0):
    """Same outcome; with ``rtol``, floats agree to that relative tolerance."""
    got, expected = outcome(program, "gradkit"), outcome(program, "torch")
    if rtol:
        np.testing.assert_allclose(_numbers(got), _numbers(expected), rtol=rtol)
        got, expected = _skeleton(got), _skeleton(expected)
    assert got == expected


def warnings_of(program, library: str) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        program(*LIBRARIES[library])
    return [f"{w.category.__name__}: {w.message}" for w in caught]


# -- default_collate and default_convert -----------------------------------------------------

BATCHES = {
    "ints": lambda lib: [1, 2, 3],
    "floats": lambda lib: [1.5, -2.0],
    "bools": lambda lib: [True, False],
    "strings": lambda lib: ["a", "b"],
    "bytes": lambda lib: [b"a", b"b"],
    "tensors": lambda lib: [lib.tensor([1.0, 2.0]), lib.tensor([3.0, 4.0])],
    "int tensors": lambda lib: [lib.tensor(1), lib.tensor(2)],
    "numpy float32 scalars": lambda lib: [np.float32(1.5), np.float32(2)],
    "numpy float64 scalars": lambda lib: [np.float64(1.5), np.float64(2)],
    "numpy int16 scalars": lambda lib: [np.int16(1), np.int16(-2)],
    "numpy bool scalars": lambda lib: [np.bool_(True), np.bool_(False)],
    "numpy scalars then numbers": lambda lib: [np.float32(1), 2.5, np.int16(3)],
    "numpy int64 and float16": lambda lib: [np.int64(7), np.float16(2)],
    "numpy scalars and bools": lambda lib: [np.uint8(7), True],
    "numpy arrays": lambda lib: [np.ones((2, 3), np.uint8), np.zeros((2, 3), np.uint8)],
    "dicts": lambda lib: [{"a": 1, "b": 2.0}, {"a": 3, "b": 4.0}],
    "ordered dicts": lambda lib: [collections.OrderedDict(a=1), collections.OrderedDict(a=2)],
    "namedtuples": lambda lib: [Point(1, 2.0), Point(3, 4.0)],
    "tuples": lambda lib: [(1, "x"), (2, "y")],
    "lists": lambda lib: [[1, 2], [3, 4]],
    "nested": lambda lib: [{"t": (lib.ones(2), [np.float32(1)])},
                           {"t": (lib.zeros(2), [np.float32(2)])}],
}


@pytest.mark.parametrize("batch", BATCHES)
def test_default_collate_builds_torchs_batch(batch):
    assert_same_as_torch(lambda lib, data: data.default_collate(BATCHES[batch](lib)))


@pytest.mark.parametrize("batch", BATCHES)
def test_default_convert_converts_as_torch(batch):
    assert_same_as_torch(lambda lib, data: data.default_convert(BATCHES[batch](lib)))


@pytest.mark.parametrize("sample", [
    np.arange(3), np.float64(2.5), (np.array(1), 2), Point(np.array(1.0), "s"),
    {"a": [np.array([1.0])]}, np.array(["text"]), np.str_("s"), "plain",
])
def test_default_convert_on_single_samples(sample):
    assert_same_as_torch(lambda lib, data: data.default_convert(sample))


def test_python_floats_after_numpy_scalars_take_the_default_dtype():
    def program(lib, data):
        lib.set_default_dtype(lib.float64)
        try:
            return data.default_collate([np.float32(1), 2.5]), data.default_collate([0.5, 1.5])
        finally:
            lib.set_default_dtype(lib.float32)
    assert_same_as_torch(program)


def test_default_convert_shares_a_numpy_arrays_memory():
    array = np.zeros(3)
    gd.default_convert(array)[0] = 5.0
    assert array[0] == 5.0


def test_default_collate_keeps_the_graph_of_tensors_that_require_grad():
    def program(lib, data):
        leaves = [lib.tensor([1.0, 2.0], requires_grad=True) for _ in range(2)]
        batch = data.default_collate(leaves)
        (batch * lib.tensor([[1.0], [3.0]])).sum().backward()
        return batch.grad_fn.name(), [leaf.grad for leaf in leaves]
    assert_same_as_torch(program)


@pytest.mark.parametrize("batch", [
    [object()], [None], [[1, 2], [3]], [np.array(["a"])], [np.array([object()])],
    [np.ones(2), np.ones(3)],
])
def test_default_collate_errors(batch):
    assert_same_as_torch(lambda lib, data: data.default_collate(batch))


def test_default_collate_of_tensors_of_different_sizes():
    assert_same_as_torch(lambda lib, data: data.default_collate([lib.ones(2), lib.ones(3)]))


def test_collate_fn_map_is_extensible():
    class Box:
        def __init__(self, value):
            self.value = value

    def program(lib, data):
        collate = data._utils.collate

        def boxes(batch, *, collate_fn_map):
            return lib.tensor([b.value for b in batch]) * 10
        mapping = {**collate.default_collate_fn_map, Box: boxes}
        return collate.collate([(Box(1), 2), (Box(3), 4)], collate_fn_map=mapping)
    assert_same_as_torch(program)


# -- datasets ------------------------------------------------------------------------------

def test_tensor_dataset():
    def program(lib, data):
        ds = data.TensorDataset(lib.arange(6).reshape(3, 2), lib.tensor([0.5, 1.5, 2.5]))
        return len(ds), ds[1], ds[-1], ds[lib.tensor([0, 2])]
    assert_same_as_torch(program)
    assert_same_as_torch(lambda lib, data: data.TensorDataset(lib.ones(2), lib.ones(3)))


class Squares:
    """The program-side map-style dataset (built on each library's Dataset)."""

    @staticmethod
    def make(data, n: int, offset: int = 0):
        class SquaresDataset(data.Dataset):
            def __getitem__(self, i):
                if not 0 <= i < n:
                    raise IndexError(f"index {i} out of range")
                return (i + offset) ** 2

            def __len__(self):
                return n
        return SquaresDataset()


def indexed(data, n: int, fetch):
    """A map-style dataset of ``n`` samples: sample ``i`` is ``fetch(i)``."""
    class Indexed(data.Dataset):
        def __len__(self):
            return n

        def __getitem__(self, i):
            return fetch(i)
    return Indexed()


def counting(data, n: int, with_len: bool = True):
    """An iterable-style dataset of 0..n-1 (with ``__len__`` unless told not)."""
    class Counting(data.IterableDataset):
        def __iter__(self):
            return iter(range(n))
    if with_len:
        Counting.__len__ = lambda self: n
    return Counting()


def test_concat_dataset_and_dataset_addition():
    def program(lib, data):
        ds = Squares.make(data, 3) + Squares.make(data, 2, offset=10)
        return (type(ds).__name__, len(ds), ds.cumulative_sizes,
                [ds[i] for i in range(-5, 5)])
    assert_same_as_torch(program)


@pytest.mark.parametrize("make", [
    lambda data: data.ConcatDataset([]),
    lambda data: data.ConcatDataset([Squares.make(data, 2), counting(data, 2)]),
    lambda data: data.ConcatDataset([Squares.make(data, 2)])[-3],
    lambda data: data.Dataset()[0],
    lambda data: type("NoIter", (data.IterableDataset,), {})(),
])
def test_dataset_errors(make):
    assert_same_as_torch(lambda lib, data: make(data))


def test_concat_dataset_misspelt_sizes_warn():
    program = lambda lib, data: data.ConcatDataset([[1, 2]]).cummulative_sizes  # noqa: E731
    assert warnings_of(program, "gradkit") == warnings_of(program, "torch")
    assert_same_as_torch(program)


def test_chain_dataset_and_iterable_addition():
    def program(lib, data):
        chained = counting(data, 3) + counting(data, 2)
        return type(chained).__name__, len(chained), list(chained)
    assert_same_as_torch(program)


@pytest.mark.parametrize("use", [list, len])
def test_chain_dataset_refuses_map_datasets_when_used(use):
    def program(lib, data):
        chained = data.ChainDataset([counting(data, 2), Squares.make(data, 2)])
        return use(chained)
    assert_same_as_torch(program)


def test_stack_dataset_as_tuples_and_dicts():
    def program(lib, data):
        by_position = data.StackDataset(Squares.make(data, 3), [10, 20, 30])
        by_name = data.StackDataset(sq=Squares.make(data, 3), x=data.TensorDataset(lib.ones(3)))
        return (len(by_position), by_position[1], by_position.__getitems__([0, 2]),
                by_name[2], by_name.__getitems__([1, 0]))
    assert_same_as_torch(program)


def test_stack_dataset_asks_nested_datasets_for_their_batch():
    def program(lib, data):
        subset = data.Subset([5, 6, 7], [2, 0, 1])
        return data.StackDataset(subset, subset).__getitems__([0, 1])
    assert_same_as_torch(program)


@pytest.mark.parametrize("make", [
    lambda data: data.StackDataset([1], a=[2]),
    lambda data: data.StackDataset(),
    lambda data: data.StackDataset([1, 2], [3]),
    lambda data: data.StackDataset(a=[1, 2], b=[3]),
])
def test_stack_dataset_errors(make):
    assert_same_as_torch(lambda lib, data: make(data))


@pytest.mark.parametrize("named", [False, True])
def test_stack_dataset_nested_batch_size_mismatch(named):
    class Short:
        def __len__(self):
            return 3

        def __getitems__(self, indices):
            return indices[:-1]

    def program(lib, data):
        stacked = data.StackDataset(a=Short()) if named else data.StackDataset(Short())
        return stacked.__getitems__([0, 1])
    assert_same_as_torch(program)


def test_subset():
    def program(lib, data):
        base = data.TensorDataset(lib.arange(10) * 2)
        subset = data.Subset(base, [7, 1, 4])
        listed = data.Subset(lib.arange(10) * 3, [9, 8, 7])
        return len(subset), subset[0], subset.__getitems__([2, 0]), listed[[0, 2]]
    assert_same_as_torch(program)


def test_subset_subclass_overriding_only_getitem_is_refused():
    def program(lib, data):
        class Doubled(data.Subset):
            def __getitem__(self, i):
                return 2 * super().__getitem__(i)
        return Doubled([1, 2], [0])
    assert_same_as_torch(program)


# -- random_split ---------------------------------------------------------------------------

@pytest.mark.parametrize("lengths", [[3, 7], [0.3, 0.7], [0.5, 0.25, 0.25], [1 / 3] * 3,
                                     [0.1, 0.9], [10]])
def test_random_split_sizes_as_torch(lengths):
    assert_same_as_torch(lambda lib, data: [len(s) for s in data.random_split(range(10), lengths)])
    parts = gd.random_split(range(10), lengths, generator=gradkit.Generator().manual_seed(3))
    assert all(isinstance(part, gd.Subset) for part in parts)
    assert sorted(i for part in parts for i in part) == list(range(10))
    again = gd.random_split(range(10), lengths, generator=gradkit.Generator().manual_seed(3))
    assert [list(p) for p in parts] == [list(p) for p in again]


def test_random_split_uses_the_default_generator():
    gradkit.manual_seed(5)
    first = [list(p) for p in gd.random_split(range(8), [4, 4])]
    gradkit.manual_seed(5)
    assert [list(p) for p in gd.random_split(range(8), [4, 4])] == first


@pytest.mark.parametrize("lengths", [[3, 3], [1.5, -0.5], [0.5, 0.6]])
def test_random_split_errors(lengths):
    assert_same_as_torch(lambda lib, data: data.random_split(range(10), lengths))


def test_random_split_warns_about_empty_splits():
    program = lambda lib, data: data.random_split(range(2), [0.1, 0.1, 0.8])  # noqa: E731
    assert warnings_of(program, "gradkit") == warnings_of(program, "torch")
    assert len(warnings_of(program, "gradkit")) == 1


# -- samplers -------------------------------------------------------------------------------

def test_sequential_and_batch_samplers():
    def program(lib, data):
        sequential = data.SequentialSampler(range(7))
        results = [len(sequential), list(sequential)]
        for drop_last in (False, True):
            batches = data.BatchSampler(sequential, 3, drop_last)
            results += [len(batches), list(batches)]
        results.append(list(data.BatchSampler([5, 3, 1], 2, False)))
        return results
    assert_same_as_torch(program)


@pytest.mark.parametrize("make", [
    lambda data: data.BatchSampler(range(3), 0, False),
    lambda data: data.BatchSampler(range(3), True, False),
    lambda data: data.BatchSampler(range(3), 2.0, False),
    lambda data: data.BatchSampler(range(3), 2, 0),
    lambda data: data.RandomSampler(range(3), replacement=1),
    lambda data: data.RandomSampler(range(3), num_samples=0),
    lambda data: data.RandomSampler(range(3), num_samples=1.5),
    lambda data: data.RandomSampler([]),
    lambda data: data.WeightedRandomSampler([1.0], 0),
    lambda data: data.WeightedRandomSampler([1.0], True),
    lambda data: data.WeightedRandomSampler([1.0], 1, replacement=None),
    lambda data: data.WeightedRandomSampler([[1.0, 2.0]], 1),
    lambda data: list(data.WeightedRandomSampler([1.0, 2.0], 3, replacement=False)),
    lambda data: list(data.WeightedRandomSampler([-1.0, 2.0], 1)),
    lambda data: data.Sampler().__iter__(),
])
def test_sampler_errors(make):
    assert_same_as_torch(lambda lib, data: make(data))


def seeded(seed: int) -> gradkit.Generator:
    return gradkit.Generator().manual_seed(seed)


def test_random_sampler_is_a_reproducible_permutation():
    sampler = gd.RandomSampler(range(10), generator=seeded(0))
    order = list(sampler)
    assert len(sampler) == 10 and sorted(order) == list(range(10))
    assert list(gd.RandomSampler(range(10), generator=seeded(0))) == order
    gradkit.manual_seed(1)  # without a generator: seeded from the default one
    unseeded = list(gd.RandomSampler(range(10)))
    gradkit.manual_seed(1)
    assert list(gd.RandomSampler(range(10))) == unseeded


def test_random_sampler_num_samples_and_replacement():
    repeated = list(gd.RandomSampler(range(4), num_samples=10, generator=seeded(2)))
    assert len(repeated) == 10
    assert sorted(repeated[:4]) == sorted(repeated[4:8]) == [0, 1, 2, 3]
    assert len(set(repeated[8:])) == 2
    sampler = gd.RandomSampler(range(3), replacement=True, num_samples=70, generator=seeded(2))
    drawn = list(sampler)
    assert len(sampler) == len(drawn) == 70 and set(drawn) == {0, 1, 2}
    assert list(gd.RandomSampler(range(3), True, 70, generator=seeded(2))) == drawn
    assert_same_as_torch(lambda lib, data: len(data.RandomSampler(range(3), True, 70)))


def test_subset_random_sampler():
    sampler = gd.SubsetRandomSampler([10, 20, 30, 40], generator=seeded(4))
    order = list(sampler)
    assert len(sampler) == 4 and sorted(order) == [10, 20, 30, 40]
    assert list(gd.SubsetRandomSampler([10, 20, 30, 40], generator=seeded(4))) == order


def test_weighted_random_sampler():
    sampler = gd.WeightedRandomSampler([0.0, 1.0, 3.0], 50, generator=seeded(1))
    drawn = list(sampler)
    assert len(sampler) == 50 and set(drawn) == {1, 2}
    assert sampler.weights.dtype == gradkit.float64
    distinct = list(gd.WeightedRandomSampler([1.0, 1.0, 1.0], 3, replacement=False))
    assert sorted(distinct) == [0, 1, 2]
    assert_same_as_torch(lambda lib, data: data.WeightedRandomSampler([1, 2], 5).weights)


# -- DataLoader -----------------------------------------------------------------------------

def tensor_dataset(lib, data, n: int = 7):
    return data.TensorDataset(lib.arange(2 * n, dtype=lib.float32).reshape(n, 2),
                              lib.arange(n) % 3)


@pytest.mark.parametrize("options", [
    {}, {"batch_size": 3}, {"batch_size": 3, "drop_last": True}, {"batch_size": None},
    {"batch_size": 7}, {"batch_size": 10, "drop_last": True}, {"sampler": [6, 0, 3]},
    {"sampler": [6, 0, 3, 1], "batch_size": 3}, {"batch_sampler": [[1, 2], [0], [6, 5, 4]]},
    {"collate_fn": lambda batch: len(batch), "batch_size": 2},
    {"shuffle": False, "batch_size": 4, "num_workers": 0, "pin_memory": False},
])
def test_dataloader_batches_as_torch(options):
    def program(lib, data):
        loader = data.DataLoader(tensor_dataset(lib, data), **options)
        return len(loader), list(loader), list(loader)
    assert_same_as_torch(program)


@pytest.mark.parametrize("samples", ["dicts", "namedtuples", "numpy arrays", "strings", "nested"])
def test_dataloader_collates_samples_as_torch(samples):
    def program(lib, data):
        items = BATCHES[samples](lib) * 3
        return list(data.DataLoader(items, batch_size=4))
    assert_same_as_torch(program)


def test_dataloader_handing_whole_batches_of_indices_to_the_dataset():
    def program(lib, data):
        dataset = tensor_dataset(lib, data)
        batches = data.BatchSampler(data.SequentialSampler(dataset), 3, False)
        loader = data.DataLoader(dataset, sampler=batches, batch_size=None)
        return len(loader), list(loader)
    assert_same_as_torch(program)


def test_dataloader_uses_getitems_when_the_dataset_has_it():
    def program(lib, data):
        class Batched(data.Dataset):
            def __getitems__(self, indices):
                return [i * 100 for i in indices]

            def __len__(self):
                return 5
        return list(data.DataLoader(Batched(), batch_size=2))
    assert_same_as_torch(program)


@pytest.mark.parametrize("options", [{}, {"batch_size": 2}, {"batch_size": 2, "drop_last": True},
                                     {"batch_size": None}, {"batch_size": 5},
                                     {"shuffle": False, "batch_size": 3}])
def test_dataloader_over_an_iterable_dataset(options):
    def program(lib, data):
        loader = data.DataLoader(counting(data, 5), **options)
        return len(loader), list(loader), list(loader)
    assert_same_as_torch(program)


def test_iterable_dataset_without_len():
    assert_same_as_torch(lambda lib, data: list(data.DataLoader(counting(data, 3, False))))
    assert_same_as_torch(lambda lib, data: len(data.DataLoader(counting(data, 3, False))))


def test_iterable_dataset_longer_than_its_len_warns():
    def program(lib, data):
        class Liar(data.IterableDataset):
            def __iter__(self):
                return iter(range(3))

            def __len__(self):
                return 2

            def __repr__(self):
                return "Liar()"
        loader = data.DataLoader(Liar())
        return len(loader), list(loader)
    assert warnings_of(program, "gradkit") == warnings_of(program, "torch")
    assert len(warnings_of(program, "gradkit")) == 1
    assert_same_as_torch(program)


@pytest.mark.parametrize("options", [
    {"num_workers": -1}, {"timeout": -1}, {"prefetch_factor": 2},
    {"num_workers": 1, "prefetch_factor": -1}, {"persistent_workers": True},
    {"multiprocessing_context": "spawn"}, {"num_workers": 1, "multiprocessing_context": "no"},
    {"num_workers": 1, "multiprocessing_context": 3}, {"sampler": [0], "shuffle": True},
    {"batch_sampler": [[0]], "batch_size": 2}, {"batch_sampler": [[0]], "shuffle": True},
    {"batch_sampler": [[0]], "sampler": [0]}, {"batch_sampler": [[0]], "drop_last": True},
    {"batch_size": None, "drop_last": True}, {"batch_size": 0}, {"drop_last": 1},
])
def test_dataloader_argument_errors(options):
    assert_same_as_torch(lambda lib, data: data.DataLoader([1, 2], **options))


@pytest.mark.parametrize("options", [{"shuffle": True}, {"sampler": [0]},
                                     {"batch_sampler": [[0]]}])
def test_dataloader_iterable_dataset_option_errors(options):
    assert_same_as_torch(lambda lib, data: data.DataLoader(counting(data, 2), **options))


def test_dataloader_timeout_without_workers_fails_when_iterated():
    assert_same_as_torch(lambda lib, data: iter(data.DataLoader([1], timeout=1)))


@pytest.mark.parametrize("attribute", ["batch_size", "batch_sampler", "sampler", "drop_last",
                                       "dataset", "persistent_workers"])
def test_dataloader_freezes_its_batching_attributes(attribute):
    def program(lib, data):
        loader = data.DataLoader([1, 2])
        loader.collate_fn = list  # others may change
        setattr(loader, attribute, None)
    assert_same_as_torch(program)


def test_dataloader_defaults_and_iterator():
    def program(lib, data):
        loader = data.DataLoader(tensor_dataset(lib, data), batch_size=3)
        iterator = iter(loader)
        return (loader.batch_size, loader.drop_last, loader.num_workers, loader.timeout,
                type(loader.sampler).__name__, type(loader.batch_sampler).__name__,
                loader.collate_fn.__name__, loader.prefetch_factor, loader.in_order,
                type(iterator).__name__, len(iterator), iter(iterator) is iterator,
                next(iterator), data.get_worker_info())
    assert_same_as_torch(program)
    unbatched = gd.DataLoader([1], batch_size=None)
    assert unbatched.collate_fn is gd.default_convert and unbatched.batch_sampler is None


def test_shuffled_loader_is_a_reproducible_permutation():
    def epoch(loader):
        return [int(i) for _, labels in loader for i in labels]

    dataset = gd.TensorDataset(gradkit.zeros(9, 1), gradkit.arange(9))
    loader = gd.DataLoader(dataset, batch_size=4, shuffle=True, generator=seeded(11))
    first, second = epoch(loader), epoch(loader)
    assert sorted(first) == sorted(second) == list(range(9)) and first != second
    again = gd.DataLoader(dataset, batch_size=4, shuffle=True, generator=seeded(11))
    assert [epoch(again), epoch(again)] == [first, second]
    assert isinstance(loader.sampler, gd.RandomSampler) and loader.sampler.generator is not None
    gradkit.manual_seed(3)
    unseeded = epoch(gd.DataLoader(dataset, batch_size=4, shuffle=True))
    gradkit.manual_seed(3)
    assert epoch(gd.DataLoader(dataset, batch_size=4, shuffle=True)) == unseeded


def test_each_pass_draws_a_seed_from_the_generator_as_torch():
    def program(lib, data):
        generator = lib.Generator().manual_seed(0)
        state = generator.get_state()
        iter(data.DataLoader([1, 2], generator=generator))
        return bool((generator.get_state() != state).any())
    assert_same_as_torch(program)


def test_worker_options_are_kept_as_given():
    def program(lib, data):
        loader = data.DataLoader(tensor_dataset(lib, data), batch_size=3, num_workers=2,
                                 persistent_workers=True, prefetch_factor=4, timeout=5,
                                 multiprocessing_context="fork")
        return (len(loader), list(loader), list(loader), loader.prefetch_factor,
                loader.timeout, loader.multiprocessing_context.get_start_method(),
                type(iter(loader)).__name__)
    assert_same_as_torch(program)


def test_pin_memory_is_accepted_and_warns_as_torch_without_an_accelerator():
    if gradkit.accelerator.is_available() != torch.accelerator.is_available():
        pytest.skip("the two libraries see different accelerators")

    def program(lib, data):
        return list(data.DataLoader([1.0, 2.0], batch_size=2, pin_memory=True,
                                    pin_memory_device="cuda"))
    assert warnings_of(program, "gradkit") == warnings_of(program, "torch")
    assert_same_as_torch(program)


def test_loading_shows_in_the_profiler():
    loader = gd.DataLoader([1, 2, 3], batch_size=2)
    with gradkit.profiler.profile() as prof:
        list(loader)
    names = [event.name for event in prof.events()]
    assert names.count("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__") == 3


def test_missing_parts_name_the_torch_feature():
    with pytest.raises(AttributeError, match="gradkit does not implement "
                       r"torch.utils.data.IterDataPipe; see docs/torch_coverage.md"):
        gd.IterDataPipe  # noqa: B018


def test_a_training_loop_fed_by_a_dataloader_matches_torch():
    def program(lib, data):
        features = lib.linspace(-1.0, 1.0, 24, dtype=lib.float64).reshape(12, 2)
        targets = (features ** 2).sum(dim=1, keepdim=True)
        weight = lib.tensor([[0.3], [-0.2]], dtype=lib.float64, requires_grad=True)
        losses = []
        for batch, target in data.DataLoader(data.TensorDataset(features, targets),
                                             batch_size=5):
            loss = ((batch @ weight - target) ** 2).mean()
            loss.backward()
            with lib.no_grad():
                weight -= 0.5 * weight.grad
                weight.grad.zero_()
            losses.append(loss.item())
        return losses, weight
    assert_same_as_torch(program, rtol=1e-12)
