"""The expectations of torch's test/test_indexing.py (TestIndexing and NumpyTests), as programs
run in gradkit and in torch 2.13 and compared: values, dtypes, shapes, strides where the test
reads them, warnings counted, errors by type and message. Each program names the torch test
it covers; docs/torch_expectations.md lists the ones out of scope and why."""
import itertools
import warnings

import numpy as np
import pytest

import gradkit

torch = pytest.importorskip("torch")
from torch_expectations.twin import assert_same  # noqa: E402


def _outcome(program, m, count_warnings: bool = True):
    """What ``program(m)`` returns, or ("raises", type, message) when it raises (the library's
    name read as torch's); with the number of warnings it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = program(m)
        except (IndexError, RuntimeError, TypeError, ValueError) as error:
            message = str(error).split("\n")[0].replace("gradkit._tensor.Tensor", "torch.Tensor")
            result = ("raises", type(error).__name__, message.replace("gradkit.", "torch."))
    return result, len(caught) if count_warnings else None


PROGRAMS = {}


def program(fn):
    PROGRAMS[fn.__name__] = fn
    return fn


def _consec(m, *shape, start=1, dtype=None):
    numel = int(np.prod(shape))
    return m.arange(start, start + numel, dtype=dtype or m.float32).reshape(shape)


# -- TestIndexing ------------------------------------------------------------------------------

@program
def index_basic(m):  # test_index
    r = _consec(m, 3, 3, 3)
    keys = [0, 1, 2, (0, 1), slice(0, 2), (2, 2, 2), slice(None), (Ellipsis, 2),
            (0, Ellipsis, 2), (0, 2, Ellipsis), (Ellipsis, 2, 2, 2), (2, Ellipsis, 2, 2),
            (2, 2, Ellipsis, 2), (2, 2, 2, Ellipsis), Ellipsis, (2, None), (2, None, None),
            (slice(2, 4), None), (None, 2, None, None), (None, slice(2, 5), None, None),
            slice(0), (slice(0), 2), (2, slice(0)), (2, slice(1, 1), 2)]
    five = _consec(m, 3, 3, 3, 3, 3)
    return ([r[k] for k in keys] + [r[m.tensor([], dtype=m.int64)]] +
            [five[k] for k in [(Ellipsis, 1, 0), (2, Ellipsis, 1, 0), (2, 1, 0, Ellipsis, 1)]])


@program
def index_steps_and_lists(m):  # test_index (steps, random slices against lists)
    r = _consec(m, 10, 10, 10)
    table = m.tensor([list(range(i, i + 10)) for i in range(0, 100, 10)], dtype=m.float64)
    rng = np.random.default_rng(0)
    picked = []
    for _ in range(40):
        a, b, c = int(rng.integers(10)), int(rng.integers(1, 10)), int(rng.integers(1, 8))
        d, e, f = int(rng.integers(10)), int(rng.integers(1, 10)), int(rng.integers(1, 8))
        picked.append(table[a:a + b:c, d:d + e:f])
    return [r[1:5:2], r[1:6:2], r[1:9:4], r[2:4, 1:5:2], r[3, 1:6:2], r[None, 2, 1:9:4],
            r[:, 2, 1:6:2]] + picked


@pytest.mark.parametrize("key", ["r[1:9:0]", "r[1:9:-1]", "r[1, 1, 1, 1]", "r[1, 1, 1, 1:1]",
                                 "r[3, 3, 3, 3, 3, 3, 3, 3]", "r[0.0]", "r[0.0:2.0]",
                                 "r[0.0, 0.0:2.0]", "r[0.0, :, 0.0:2.0]", "r[0.0, ..., 0.0:2.0]",
                                 "r[0.0, :, 0.0]", "r['0':'1']"])
def test_index_errors(key):  # test_index, test_invalid_index
    def run(m):
        return eval(key, {"r": _consec(m, 3, 3, 3)})  # noqa: S307 - the keys above
    got, expected = _outcome(run, gradkit), _outcome(run, torch)
    assert got[0][:2] == expected[0][:2] and got[0][0] == "raises"


def test_delitem_is_refused():  # test_index
    for m in (gradkit, torch):
        r = _consec(m, 3)
        with pytest.raises(TypeError):
            del r[0]


def _random_indexer(m, values, choice: int):
    return (m.tensor(values, dtype=m.int64), list(values), tuple(values))[choice]


@pytest.mark.parametrize("choice", [0, 1, 2])
@pytest.mark.parametrize("dtype", ["float16", "float64"])
def test_advancedindex_integer_arrays(choice, dtype):  # test_advancedindex
    def run(m):
        ri = lambda v: _random_indexer(m, v, choice)  # noqa: E731
        dt = getattr(m, dtype)
        x = _consec(m, 10, dtype=dt)
        out = [x[[0]], x[ri([0]),], x[ri([3]),], x[[2, 3, 4]], x[ri([0, 2, 4]),]]
        x[[0]] = -2
        x[ri([2, 3, 4]),] = 3
        x[ri([0, 2, 4]),] = m.tensor([5, 4, 3], dtype=dt)
        out.append(x.clone())
        strided = m.tensor((), dtype=dt)
        strided.set_(_consec(m, 10, dtype=dt).untyped_storage(), 0, (4,), (2,))
        out += [strided[[0]], strided[ri([3]),], strided[ri([[2, 1], [0, 3]]),]]
        ref = _consec(m, 3, 2, dtype=dt)
        out += [ref[ri([0, 1, 2]), ri([0])], ref[(ri([0, 1, 1, 0, 2]), ri([1]))],
                ref[ri([[0, 0], [1, 2]]), ([0],)], ref[ri([[0, 0], [1, 2]]), ri([[0, 1], [1, 0]])],
                ref[ri([0, 2]),], ref[ri([1]), ...], ref[..., ri([1])]]
        ref[ri([0, 1, 2]), ri([0])] = m.tensor([-1, 2, -4], dtype=dt)
        ref[ri([[0, 0], [1, 2]]), ri([1, 0])] = m.tensor([[4, 6], [2, 3]], dtype=dt)
        t = m.tensor([[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]], dtype=dt).t_()
        out += [ref, t[ri([0, 1, 2]), ri([1])], t[ri([[0, 0], [1, 3]]), ri([[0, 1], [1, 2]])]]
        t[ri([0]), ri([1])] = -1
        wide = m.tensor((), dtype=dt)
        wide.set_(m.arange(0.0, 24, dtype=dt).untyped_storage(), 10, (2, 2), (7, 1))
        wide[ri([0, 1]), ri([1, 0])] = m.tensor([-1, 2], dtype=dt)
        wide[ri([[0], [1]]), ri([[0, 1], [0, 1]])] += 1
        return out + [t, wide]

    assert_same(_outcome(run, gradkit), _outcome(run, torch))


@pytest.mark.parametrize("key", ["[1], [0, 2], [3]", "10", "-11", "T([10])", "[-11]"])
def test_advancedindex_errors(key):  # test_advancedindex (too many indices, out of range)
    def run(m):
        return eval(f"x[{key}]", {"x": _consec(m, 10), "T": m.tensor})  # noqa: S307
    assert _outcome(run, gradkit) == _outcome(run, torch)


_KEYS_4x8x5 = [
    (slice(None), slice(None), (0, 3, 4)), (slice(None), (2, 4, 5, 7), slice(None)),
    ((2, 3), slice(None), slice(None)), (slice(None), (0, 2, 3), (1, 3, 4)),
    (slice(None), (0,), (1, 2, 4)), (slice(None), ((0, 1), (1, 0)), ((2, 3),)),
    (slice(None), ((5, 6),), ((0, 3), (4, 4))), ((0, 2, 3), (1, 3, 4), slice(None)),
    (((0, 1), (1, 0)), ((2, 1), (3, 5)), slice(None)), (((2,),), ((0, 3), (4, 1)), slice(None)),
    ((0, 2, 3), slice(None), (1, 3, 4)), ((0, 2),), ((0, 2), Ellipsis),
    ((0, 2), Ellipsis, slice(None)), ((0, 2), (1, 3), Ellipsis), (Ellipsis, (1, 3), (2, 3)),
    (slice(None), Ellipsis, (2, 3, 4)), (slice(None), slice(None), Ellipsis, (0, 3, 4)),
    (slice(None), slice(None), (0, 3, 4), Ellipsis),
    (((0, 1), (1, 0)), ((2, 1), (3, 5)), Ellipsis, slice(None)),
]
_KEYS_3x9x8x6 = [
    (slice(None), slice(None), (0, 2, 3), (1, 3, 4)), (slice(None), (0, 2, 3), (1, 3, 4),
                                                       slice(None)),
    (slice(None), ((0, 1), (3, 4)), ((2, 3), (0, 1)), slice(None)),
    (((0, 1), (0, 2)), ((2, 4), (1, 5)), slice(None), slice(None)),
    (slice(None), (3, 4, 6), (0, 2, 3), (1, 3, 4)), (slice(None), (6,), (0, 2, 3), (1,)),
    (slice(None), ((0, 3), (3, 6)), ((0, 1), (1, 3)), ((5, 3), (1, 2))),
    ((2, 2, 1), (0, 2, 3), (1, 3, 4), slice(None)), ((1,), (0, 2, 3), (1,), slice(None)),
    (((1, 2), (1, 2)), ((0, 1), (2, 3)), ((2, 3), (3, 5)), slice(None)),
    (Ellipsis, (0, 3, 4)), (slice(None), Ellipsis, (0, 3, 4)), ((0,), (1, 2, 4), Ellipsis),
    (Ellipsis, (0, 2, 1), (3,), (4,)),
    (slice(None), slice(None), [[0, 1], [1, 0]], [[2, 3], [3, 0]]),
    (slice(None), slice(None), [[2]], [[0, 3], [4, 4]]),
]


@pytest.mark.parametrize("shape, key", [((4, 8, 5), k) for k in _KEYS_4x8x5] +
                         [((3, 9, 8, 6), k) for k in _KEYS_3x9x8x6])
def test_advancedindex_get_set_and_backward_as_torch(shape, key):  # test_advancedindex
    def run(m):
        ref = m.arange(0.0, int(np.prod(shape)), dtype=m.float64).reshape(shape)
        out = [ref[key]]
        order = np.random.default_rng(0).permutation(ref[key].numel())
        for value in (212, m.tensor(order, dtype=m.float64).view(ref[key].shape)):
            written = ref.clone()
            written[key] = value
            out.append(written)
        leaf = ref.clone().requires_grad_(True)
        picked = leaf[key]
        picked.backward(m.ones_like(picked) * 3)
        return out + [leaf.grad, picked.stride()]

    assert_same(_outcome(run, gradkit), _outcome(run, torch))


@program
def advancedindex_big(m):  # test_advancedindex_big
    return m.arange(0, 123344, dtype=m.int32)[[0, 123, 44488, 68807, 123343],]


@program
def set_item_to_scalar_tensor(m):  # test_set_item_to_scalar_tensor
    z = m.zeros(4, 3)
    w = m.tensor(1.0, requires_grad=True)
    z[:, 0] = w
    z.sum().backward()
    return w.grad


@program
def int_none_step_shapes(m):  # test_single_int, test_multiple_int, test_none, test_step
    v = m.zeros(5, 7, 3)
    r = m.arange(10)
    return ([tuple(t.shape) for t in (v[4], v[4, :, 1], v[None], v[:, None], v[:, None, None],
                                      v[..., None])] + [r[::1], r[::2], r[::3], r[::11], r[1:6:2]])


@program
def step_assignment(m):  # test_step_assignment
    v = m.zeros(4, 4)
    v[0, 1::2] = m.tensor([3.0, 4.0])
    return v


@program
def bool_and_uint8_indices(m):  # test_bool_indices, test_byte_mask, test_multiple_byte_mask
    v = m.arange(105.0).reshape(5, 7, 3)
    mask = m.tensor([True, False, True, True, False])
    b = m.tensor([True, False, True])
    out = [v[mask], b[m.tensor([True, False, False])], b[m.tensor([1, 0, 0], dtype=m.uint8)],
           v[m.ByteTensor([1, 0, 1, 1, 0])], m.tensor([1.0])[m.tensor([1.0]) == 0]]
    out.append(tuple(v[m.ByteTensor([1, 0, 1, 1, 0]), :, m.ByteTensor([1, 1, 1])].shape))
    return out


@program
def list_indices(m):  # test_list_indices
    t = m.arange(1000.0)
    windows = [range(i, i + 10) for i in range(990)]
    return [tuple(t[windows[:n]].shape) for n in (990, 100, 32)]


@program
def list_of_31_windows_is_a_tuple(m):  # test_list_indices ("too many indices")
    windows = [range(i, i + 10) for i in range(31)]
    return m.arange(1000.0)[windows]


@program
def bool_indices_accumulate(m):  # test_bool_indices_accumulate, test_byte_mask_accumulate
    y = m.ones(10, 10)
    y.index_put_((m.zeros(10, dtype=m.bool),), y[m.zeros(10, dtype=m.bool)], accumulate=True)
    z = m.ones(10, 10)
    mask = m.zeros(10, dtype=m.uint8)
    z.index_put_((mask,), z[mask], accumulate=True)
    return y, z


@program
def multiple_bool_indices(m):  # test_multiple_bool_indices
    v = m.zeros(5, 7, 3)
    return tuple(v[m.tensor([1, 0, 1, 1, 0], dtype=m.bool), :,
                   m.tensor([1, 1, 1], dtype=m.bool)].shape)


@program
def multi_dimensional_bool_mask(m):  # test_multi_dimensional_bool_mask
    x = m.arange(12.0).reshape(2, 2, 3)
    b = ((True, False), (False, False))
    mask, z, t, f = m.tensor(b), m.tensor(0), m.tensor(True), m.tensor(False)
    keys = [(b,), (b, slice(None, None, 2)), (b, None), (b, 0), (b, z), (b, True),
            (b, True, True, True, True), (b, False), (b, True, True, False, True), (b, t),
            (b, f)]
    out = [x[k] for k in keys] + [x[(mask,) + k[1:]] for k in keys]
    y = m.arange(60.0).reshape(3, 2, 2, 5)
    return out + [y[:, mask, :], y[0, mask, ::2], y[..., mask, ::2], y[None, ..., mask, ::2]]


@program
def bool_mask_assignment(m):  # test_bool_mask_assignment, _multi_dimensional_bool_mask_assignment
    v = m.tensor([[1, 2], [3, 4]])
    mask = m.tensor([1, 0], dtype=m.bool)
    w = v.clone()
    v[mask, :] = 0
    w[:, mask] = 0
    u = m.tensor([[[[1], [2]], [[3], [4]]]])
    u[:, m.tensor([[1, 0], [0, 1]], dtype=m.bool), :] = 0
    return v, w, u


@program
def index_put_accumulate_expanded_values(m):  # test_index_put_accumulate_expanded_values
    t = m.zeros(5, 2)
    first = t.clone().index_put_([m.tensor([0, 1, 2, 3]), m.tensor([1])], m.tensor(1.0), True)
    second = t.clone().index_put_([m.tensor([0, 1, 2, 3]), m.tensor([1])], m.tensor([1.0]), True)
    u = m.zeros(4, 3, 2)
    indices = [m.tensor([0]), m.arange(3)[:, None], m.arange(2)[None, :]]
    third = u.clone().index_put_(indices, m.tensor([-1.0, -2.0]), accumulate=True)
    fourth = u.clone().index_put_(indices, m.tensor([[-1.0, -2.0]]), accumulate=True)
    return first, second, third, fourth


@program
def index_put_accumulate_non_contiguous(m):  # test_index_put_accumulate_non_contiguous (CPU)
    t = m.zeros(5, 2, 2)
    view = t[:, 0, :]
    view.index_put_([m.tensor([0, 1])], m.arange(4.0).reshape(2, 2), accumulate=True)
    return view, view.is_contiguous(), t


@program
def index_put_optional_tensors(m):  # test_index_put_deterministic_with_optional_tensors (CPU)
    out = []
    for value in (m.tensor(10.0), m.tensor([1.0, 2.0]), m.arange(4.0).reshape(4, 1)):
        t = m.arange(8, dtype=m.float32).reshape(4, 2)
        t[..., m.tensor([1, 0])] = value
        out.append(t)
    t = m.zeros(5, 4)
    t[m.tensor([1, 4, 3])] = m.arange(4.0)
    u = m.zeros(2, 3, 4)
    u[m.tensor([0, 1])] = m.arange(6.0).reshape(2, 3, 1)
    return out + [t, u]


@program
def index_put_shape_mismatch(m):  # test_index_put_deterministic_with_optional_tensors
    t = m.zeros(2, 3, 4)
    t[..., m.tensor([0, 1])] = m.zeros(6, 2)


@program
def index_put_accumulate_duplicate_indices(m):  # test_index_put_accumulate_duplicate_indices
    rng = np.random.default_rng(1)
    out = []
    for n in (1, 7, 50, 300):
        indices = m.tensor(np.abs(np.cumsum(rng.uniform(-1, 1, n))).astype(np.int64))
        base = m.tensor(rng.standard_normal(int(indices.max()) + 1))
        values = m.tensor(rng.standard_normal(n))
        out.append(base.index_put((indices,), values, accumulate=True))
    return out


@program
def index_ind_dtype(m):  # test_index_ind_dtype
    x = m.arange(16.0).reshape(4, 4)
    ind_long = m.tensor([3, 0, 2, 2])
    ind_int = ind_long.int()
    out = [x[ind_int, ind_int], x[ind_int, :], x[:, ind_int]]
    src = m.tensor([1.0, 2.0, 3.0, 4.0])
    for accumulate in (True, False):
        a, b = x.clone(), x.clone()
        m.index_put_(a, (m.arange(4), m.arange(4)), src, accumulate)
        m.index_put_(b, (m.arange(4).int(), m.arange(4).int()), src, accumulate)
        out += [a, b]
    return out


@program
def index_put_accumulate_empty(m):  # test_index_put_accumulate_empty
    return m.rand([]).index_put([], m.tensor([1.0]), True)


@program
def byte_mask2d(m):  # test_byte_mask2d
    v = m.arange(105.0).reshape(5, 7, 3)
    c = m.tensor(np.random.default_rng(2).standard_normal((5, 7)))
    return v[c > 0]


@program
def jit_free_masked_writes(m):  # test_jit_indexing (without the script)
    x = m.arange(100.0)
    y = x.clone()
    x[x < 50] = 1.0
    y[0:50] = 1.0
    return x, y


@program
def int_indices_and_dtypes(m):  # test_int_indices, test_index_src_datatype, _put_src_datatype
    v = m.zeros(5, 7, 3)
    out = [tuple(v[[0, 4, 2]].shape), tuple(v[:, [0, 4, 2]].shape),
           tuple(v[:, [[0, 1], [4, 3]]].shape)]
    for dtype in (m.complex64, m.complex128, m.float32, m.int64, m.bool):
        src = m.ones(3, 2, 4, dtype=dtype)
        res = src[[0, 2, 1], :, :]
        src[[0, 2, 1], :, :] = res
        if dtype is not m.bool:
            src.index_put_((m.tensor([0, 2, 1]),), m.ones(3, 2, 4, dtype=dtype), accumulate=True)
        out.append(src)
    return out


@program
def int_indices_2d_and_broadcast(m):  # test_int_indices2d, test_int_indices_broadcast
    x = m.arange(0, 12).view(4, 3)
    rows = m.tensor([0, 3])
    return (x[m.tensor([[0, 0], [3, 3]]), m.tensor([[0, 2], [0, 2]])],
            x[rows[:, None], m.tensor([0, 2])])


@program
def empty_index(m):  # test_empty_index
    x = m.arange(0, 12).view(4, 3)
    y = x.clone()
    y[m.tensor([], dtype=m.int64)] = -1
    y[m.zeros(4, 3).bool()] = -1
    return x[m.tensor([], dtype=m.int64)].numel(), y


@program
def empty_ndim_index(m):  # test_empty_ndim_index
    x = m.zeros(5)
    y = m.zeros(2, 3, 4, 5)
    z = m.empty(10, 0)
    return (x[m.empty(0, 2, dtype=m.int64)], y[:, m.empty(0, 6, dtype=m.int64)],
            tuple(z[[1, 2]].shape), tuple(z[[], []].shape))


@program
def empty_ndim_index_on_size_0_dim(m):  # test_empty_ndim_index ("for dimension with size 0")
    return m.empty(10, 0)[:, [0, 1]]


def test_empty_ndim_index_bool():  # test_empty_ndim_index_bool
    def run(m):
        return m.zeros(5)[m.empty(0, 2, dtype=m.uint8)]
    # torch counts the dims before it reads the uint8 mask (no deprecation warning then);
    # gradkit warns first, then raises the same error
    assert _outcome(run, gradkit, False) == _outcome(run, torch, False)


@program
def empty_slice(m):  # test_empty_slice
    z = m.zeros(2, 3, 4, 5)[:, :, :, 1][:, 1:1, :]
    return tuple(z.shape), z.stride(), z.is_contiguous()


@program
def getitem_copy_bools_slices(m):  # test_index_getitem_copy_bools_slices
    true, false = m.tensor(1, dtype=m.uint8), m.tensor(0, dtype=m.uint8)
    out = []
    for a in (m.arange(6.0).reshape(2, 3), m.tensor(3.0)):
        out += [a.data_ptr() != a[True].data_ptr(), a[False], a.data_ptr() != a[true].data_ptr(),
                a[false], a.data_ptr() == a[None].data_ptr(), a.data_ptr() == a[...].data_ptr()]
    return out


@program
def setitem_bools_slices(m):  # test_index_setitem_bools_slices
    true, false = m.tensor(1, dtype=m.uint8), m.tensor(0, dtype=m.uint8)
    out = []
    for a in (m.arange(6.0).reshape(2, 3), m.tensor(3)):
        expanded = (m.ones_like(a) * -1).unsqueeze(0).unsqueeze(0)
        a[True] = expanded
        a[False] = 5
        a[true] = expanded * 2
        a[false] = 5
        a[None] = expanded * 3
        out.append(a.clone())
        a[...] = expanded * 4
        out.append(a.clone())
    return out


@program
def setitem_slice_of_0d(m):  # test_index_setitem_bools_slices (0-d: a[:] raises)
    a = m.tensor(3)
    a[:] = m.ones(1, 1) * 5


@program
def index_scalar_with_bool_mask(m):  # test_index_scalar_with_bool_mask
    out = []
    for a in (m.tensor(1), m.tensor(True)):
        u, b = a[m.tensor(True, dtype=m.uint8)], a[m.tensor(True)]
        out += [u, b, u.dtype == b.dtype]
    return out


@program
def setitem_expansion_error(m):  # test_setitem_expansion_error
    a = m.zeros(2, 3)
    a[True] = a.expand(5, 1, 2, 3)


@program
def setitem_expansion_error_tensor_key(m):  # test_setitem_expansion_error
    a = m.zeros(2, 3)
    a[m.tensor(True)] = a.expand(5, 1, 2, 3)


@program
def getitem_scalars(m):  # test_getitem_scalars
    zero, one = m.tensor(0), m.tensor(1)
    a = m.arange(6.0).reshape(2, 3)
    return [a[zero], a[zero][one], a[zero, one], a[0, one], a[zero, 1],
            a[0, 1].data_ptr() == a[zero, one].data_ptr(),
            a[1].data_ptr() == a[one.int()].data_ptr(),
            a[1].data_ptr() == a[one.short()].data_ptr(), m.tensor(2.0)[...]]


@pytest.mark.parametrize("write", ["r[:]", "r[zero]", "r[:] = 8.8", "r[zero] = 8.8"])
def test_scalar_tensor_refuses_slices_and_indices(write):  # test_getitem_scalars, _setitem_scalars
    def run(m):
        exec(write, {"r": m.tensor(1.0), "zero": m.tensor(0)})  # noqa: S102 - the writes above
    assert _outcome(run, gradkit) == _outcome(run, torch)


@program
def setitem_scalars(m):  # test_setitem_scalars
    zero = m.tensor(0)
    a = m.arange(6.0).reshape(2, 3)
    with_number, with_scalar = a.clone(), a.clone()
    b = m.tensor([7.0, 8.0, 9.0])
    with_number[0] = b
    with_scalar[zero] = b
    a[1, zero] = 7.7
    r = m.tensor(1.0)
    r[...] = 9.9
    return with_number, with_scalar, a, r


@program
def basic_advanced_combined(m):  # test_basic_advanced_combined
    x = m.arange(0, 12).view(4, 3)
    out = [x[1:2, 1:3], x[1:2, [1, 2]]]
    x[1:2, [1, 2]].zero_()  # a copy: x keeps its values
    out.append(x.clone())
    x[1:2, [1, 2]] = 0
    return out + [x]


@program
def int_and_byte_assignment(m):  # test_int_assignment, test_byte_tensor_assignment
    x = m.arange(0, 4).view(2, 2)
    y = x.clone()
    x[1] = 5
    y[1] = m.arange(5, 7)
    z = m.arange(0.0, 16).view(4, 4)
    z[m.ByteTensor([True, False, True, False])] = m.tensor([3.0, 4.0, 5.0, 6.0])
    return x, y, z


@program
def variable_slicing_and_ellipsis_tensor(m):  # test_variable_slicing, test_ellipsis_tensor
    x = m.arange(0, 16).view(4, 4)
    i, j = m.IntTensor([0, 1])
    y = m.arange(0, 9).view(3, 3)
    idx = m.tensor([0, 2])
    return x[i:j], y[..., idx], y[idx, ...]


@pytest.mark.parametrize("call", [
    "m.unravel_index(m.tensor(0.5), (2, 2))", "m.unravel_index(m.tensor([]), (10, 3, 5))",
    "m.unravel_index(m.tensor([1]), m.tensor([1, 2, 3]))",
    "m.unravel_index(m.tensor([1]), (1, 2, 2.0))", "m.unravel_index(m.tensor(0), (2, -3))"])
def test_unravel_index_errors(call):  # test_unravel_index_errors
    def run(m):
        return eval(call, {"m": m})  # noqa: S307 - the calls above
    assert _outcome(run, gradkit) == _outcome(run, torch)


@pytest.mark.parametrize("key", ["0, 5", "4, 5", "0, 1, 15", ":, :, 12"])
def test_out_of_bound_index(key):  # test_out_of_bound_index
    def run(m):
        return eval(f"x[{key}]", {"x": m.arange(0, 100).view(2, 5, 10)})  # noqa: S307
    assert _outcome(run, gradkit) == _outcome(run, torch)


@program
def zero_dim_index(m):  # test_zero_dim_index
    return m.tensor(10)[0]


@program
def take_along_dim(m):  # test_take_along_dim
    out = []
    for shape in [(3, 2), (2, 3, 5), (2, 4, 0), (2, 3, 1, 4)]:
        t = m.tensor(np.random.default_rng(3).standard_normal(shape), dtype=m.float32)
        for dim in list(range(t.ndim)) + [None]:
            indices = m.argsort(t.view(-1)) if dim is None else m.argsort(t, dim=dim)
            out.append(m.take_along_dim(t, indices, dim=dim))
            if dim is not None:  # a transposed (non-contiguous) input and index
                out.append(m.take_along_dim(t.mT, indices.mT, dim=dim if dim < t.ndim - 2
                                            else 2 * t.ndim - 3 - dim))
    out.append(m.take_along_dim(m.ones(3, 4, 1), m.ones(1, 2, 5, dtype=m.int64), 1))
    out.append(m.take_along_dim(m.ones(3, 4, 5), m.ones(3, 0, 5, dtype=m.int64), 1))
    return out


@pytest.mark.parametrize("call", [
    "m.take_along_dim(t, i[0], dim=0)", "m.take_along_dim(t, i.to(m.bool), dim=0)",
    "m.take_along_dim(t, i.to(m.float32), dim=0)", "m.take_along_dim(t, i.to(m.int32), dim=0)",
    "m.take_along_dim(t, i, dim=-7)", "m.take_along_dim(t, i, dim=7)"])
def test_take_along_dim_invalid(call):  # test_take_along_dim_invalid
    def run(m):
        t = m.arange(24.0).reshape(2, 3, 1, 4)
        return eval(call, {"m": m, "t": t, "i": m.argsort(t, dim=0)})  # noqa: S307
    assert _outcome(run, gradkit) == _outcome(run, torch)


@pytest.mark.parametrize("index", ["m.iinfo(m.int64).min", "m.iinfo(m.int64).max"])
def test_index_limits(index):  # test_index_limits
    def run(m):
        return m.tensor([])[eval(index, {"m": m})]  # noqa: S307 - the indices above
    got, expected = _outcome(run, gradkit), _outcome(run, torch)
    assert got[0][:2] == expected[0][:2] == ("raises", "IndexError")


def _noncontiguous(m, array):
    """``array`` as a tensor whose memory skips every other element."""
    wide = np.repeat(array[..., None], 2, axis=-1)
    return m.tensor(wide)[..., 0]


@pytest.mark.parametrize("reduce", ["prod", "amin", "amax", "mean"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_index_reduce(reduce, dtype):  # test_index_reduce
    def run(m):
        rng = np.random.default_rng(4)
        out = []
        for dim, include_self, contiguous, index_dtype in itertools.product(
                range(3), (True, False), (True, False), ("int32", "int64")):
            size = [3, 4, 5]
            src_size = list(size)
            src_size[dim] = int(rng.integers(10))
            dest = rng.integers(-5, 6, size).astype(dtype)
            src = rng.integers(-5, 6, src_size).astype(dtype)
            idx = rng.integers(0, size[dim], src_size[dim]).astype(index_dtype)
            make = (lambda a: m.tensor(a)) if contiguous else (lambda a: _noncontiguous(m, a))
            target = make(dest)
            target.index_reduce_(dim, make(idx), make(src), reduce, include_self=include_self)
            out.append(target)
        return out

    # torch warns once per process that index_reduce is in beta: warnings are not counted
    assert_same(_outcome(run, gradkit, False), _outcome(run, torch, False))


@pytest.mark.parametrize("dtype", ["float32", "complex64", "int64", "bool", "float16"])
def test_index_copy(dtype):  # test_index_copy, test_index_copy_scalars
    def run(m):
        rng = np.random.default_rng(5)
        out = []
        for other, contiguous in itertools.product(((), (4, 5)), (True, False)):
            for dim in range(len(other)):
                dest = rng.integers(0, 9, other[:dim] + (5,) + other[dim:]).astype(dtype)
                src = rng.integers(0, 9, other[:dim] + (3,) + other[dim:]).astype(dtype)
                idx = rng.permutation(5)[:3]
                make = (lambda a: m.tensor(a)) if contiguous else (lambda a: _noncontiguous(m, a))
                out.append(make(dest).index_copy_(dim, make(idx), make(src)))
        for size_t, size_i, size_s in itertools.product([(), (1,)], repeat=3):
            target = m.zeros(size_t, dtype=getattr(m, dtype))
            source = m.ones(size_s, dtype=getattr(m, dtype))
            out.append(target.index_copy_(0, m.zeros(size_i, dtype=m.int64), source))
        return out

    assert_same(_outcome(run, gradkit), _outcome(run, torch))


@pytest.mark.parametrize("fill", [5, -1, -6])
def test_errors_index_copy(fill):  # test_errors_index_copy
    def run(m):
        return m.zeros(3, 5).index_copy_(1, m.full((8,), fill), m.zeros(3, 8))
    got, expected = _outcome(run, gradkit), _outcome(run, torch)
    assert got[0][:2] == expected[0][:2] == ("raises", "IndexError")


@program
def index_copy_and_add_as_loops(m):  # test_index_copy_deterministic, _add_deterministic
    rng = np.random.default_rng(6)
    out = []
    for dim in range(3):
        size = [5, 4, 3]
        size[dim] = 50
        src_size = list(size)
        src_size[dim] = 200
        x = m.zeros(size, dtype=m.float64)
        src = m.tensor(rng.random(src_size))
        index = m.tensor(rng.integers(0, 50, 200))
        out += [m.index_copy(x, dim, index.unique(), src.narrow(dim, 0, len(index.unique()))),
                m.index_add(x, dim, index, src, alpha=1.5)]
    return out


@program
def index_put_non_accumulate(m):  # test_index_put_non_accumulate_deterministic
    values = m.tensor(np.random.default_rng(7).random(300))
    indices = m.tensor(np.random.default_rng(8).permutation(300) % 17)
    return m.zeros(17, dtype=m.float64).index_put((indices[:17],), values[:17])


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "int64", "bool"])
def test_index_fill(dtype):  # test_index_fill
    def run(m):
        dt = getattr(m, dtype)
        x = m.tensor([[1, 2], [4, 5]], dtype=dt)
        x.index_fill_(1, m.tensor([0]), 0)
        out = [x]
        if dtype not in ("complex64",):
            out.append(_outcome(lambda _: x.index_fill_(1, m.tensor([0]), 1 + 1j), m)[0][:2])
        y = m.tensor(1, dtype=dt)
        return out + [y.index_fill(0, m.tensor([0]), -1).dim(),
                      y.index_fill_(0, m.tensor([0]), -1).dim()]

    assert_same(_outcome(run, gradkit), _outcome(run, torch))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "bool", "complex64"])
def test_index_select(dtype):  # test_index_select
    def run(m):
        rng = np.random.default_rng(9)
        out = []
        for other, contiguous, idx_contiguous in itertools.product(
                ((), (4, 5)), (True, False), (True, False)):
            for dim in range(len(other)):
                src = rng.integers(0, 9, other[:dim] + (3,) + other[dim:]).astype(dtype)
                idx = rng.integers(0, 3, 5)
                make = (lambda a: m.tensor(a)) if contiguous else (lambda a: _noncontiguous(m, a))
                index = m.tensor(idx) if idx_contiguous else _noncontiguous(m, idx)
                out.append(m.index_select(make(src), dim, index))
        src = m.tensor(rng.integers(0, 9, (3, 3, 2)).astype(dtype))
        out += [m.index_select(src, 1, m.tensor([0, 2, 1, 1, 0], dtype=t))
                for t in (m.int32, m.int64)]
        for size_s, size_i in itertools.product([(), (1,)], repeat=2):
            out.append(m.ones(size_s, dtype=getattr(m, dtype)).index_select(
                0, m.zeros(size_i, dtype=m.int64)))
        return out

    assert_same(_outcome(run, gradkit), _outcome(run, torch))


# -- NumpyTests --------------------------------------------------------------------------------

@pytest.mark.parametrize("key", ["0.0", "0, 0.0", "0.0, 0", "0.0, :", ":, 0.0", ":, 0.0, :",
                                 "0.0, :, :", "0, 0, 0.0", "0.0, 0, 0", "0, 0.0, 0", "-1.4",
                                 "0, -1.4", "-1.4, 0", "-1.4, :", ":, -1.4", ":, -1.4, :",
                                 "-1.4, :, :", "0, 0, -1.4", "-1.4, 0, 0", "0, -1.4, 0"])
def test_index_no_floats(key):  # test_index_no_floats
    def run(m):
        return eval(f"a[{key}]", {"a": m.tensor([[[5.0]]])})  # noqa: S307 - the keys above
    assert _outcome(run, gradkit) == _outcome(run, torch)


@program
def none_empty_tuple_and_ellipsis(m):  # test_none_index, test_empty_tuple_index, _ellipsis_index
    a = m.tensor([1, 2, 3])
    b = m.tensor([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    c = m.tensor(1)
    c[(Ellipsis,)] = 2
    return [a[None].dim(), a[()], a[()].data_ptr() == a.data_ptr(), b[...] is not b,
            b[...].data_ptr() == b.data_ptr(), b[0, ...], b[..., 0], b[0, ..., 1], c,
            a[()] is not a, a[...] is not a, a[:] is not a]


@program
def empty_fancy_index(m):  # test_empty_fancy_index
    a = m.tensor([1, 2, 3])
    return a[[]], a[m.tensor([]).long()]


@program
def empty_float_index(m):  # test_empty_fancy_index (a float tensor index raises)
    return m.tensor([1, 2, 3])[m.tensor([]).float()]


@program
def single_int_and_bool_index(m):  # test_single_int_index, test_single_bool_index
    a = m.tensor([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    return a[0], a[-1], a[True], a[None], a[False], a[None][0:0]


@pytest.mark.parametrize("key", ["1 << 30", "1 << 64"])
def test_single_int_out_of_range(key):  # test_single_int_index
    def run(m):
        return m.tensor([[1, 2, 3], [4, 5, 6], [7, 8, 9]])[eval(key)]  # noqa: S307
    got, expected = _outcome(run, gradkit), _outcome(run, torch)
    assert got[0][:2] == expected[0][:2]


@pytest.mark.parametrize("key", ["T([True])", "T([False] * 6)", "m.ByteTensor(4, 4).zero_()",
                                 "(slice(None), m.ByteTensor(4, 4).zero_())"])
def test_boolean_shape_mismatch(key):  # test_boolean_shape_mismatch
    def run(m):
        return m.ones(5, 4, 3)[eval(key, {"m": m, "T": m.tensor})]  # noqa: S307
    assert _outcome(run, gradkit) == _outcome(run, torch)


@program
def boolean_indexing_onedim_and_twodim(m):  # test_boolean_indexing_onedim, _twodim
    a = m.tensor([[0.0, 0.0, 0.0]])
    b = m.tensor([True])
    first = a[b]
    a[b] = 1.0
    c = m.tensor([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    mask = m.tensor([[True, False, True], [False, True, False], [True, False, True]])
    picked = [c[mask], c[mask[1]], c[mask[0]], c[mask[2]]]
    c[mask] = 0
    return first, a, picked, c


@pytest.mark.parametrize("target, value", [("a", "[]"), ("a", "[1, 2, 3]"), ("a[:1]", "[1, 2, 3]")])
def test_boolean_assignment_value_mismatch(target, value):  # test_boolean_assignment_value_...
    def run(m):
        a = m.arange(0, 4)
        view = eval(target, {"a": a})  # noqa: S307 - the targets above
        view[view > -1] = m.tensor(eval(value))  # noqa: S307
    assert _outcome(run, gradkit) == _outcome(run, torch)


@program
def boolean_indexing_weirdness(m):  # test_boolean_indexing_weirdness(_tensors), _alldims
    a = m.ones(2, 3, 4)
    true, false = m.tensor(True), m.tensor(False)
    b = m.ones(2, 3)
    return (tuple(a[False, True, ...].shape), a[True, [0, 1], True, True, [1], [[2]]],
            tuple(a[false, true, ...].shape), a[true, [0, 1], true, true, [1], [[2]]],
            tuple(b[True, True].shape), tuple(b[true, true].shape))


@pytest.mark.parametrize("key", ["False, [0, 1], ...", "F, [0, 1], ..."])
def test_boolean_indexing_weirdness_errors(key):  # test_boolean_indexing_weirdness(_tensors)
    def run(m):
        return eval(f"a[{key}]", {"a": m.ones(2, 3, 4), "F": m.tensor(False)})  # noqa: S307
    assert _outcome(run, gradkit) == _outcome(run, torch)


@program
def boolean_list_indexing(m):  # test_boolean_list_indexing
    a = m.tensor([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    b, c = [True, False, False], [True, True, False]
    return a[b], a[b, b], a[c], a[c, c]


@pytest.mark.parametrize("op", ["getitem", "setitem"])
def test_broaderrors_indexing(op):  # test_broaderrors_indexing
    def run(m):
        a = m.zeros(5, 5)
        if op == "getitem":
            return a[[0, 1], [0, 1, 2]]
        a[[0, 1], [0, 1, 2]] = 0
    assert _outcome(run, gradkit) == _outcome(run, torch)


@pytest.mark.parametrize("where, bad", [(-1, 10), (0, 11)])
@pytest.mark.parametrize("op", ["getitem", "setitem"])
def test_trivial_fancy_out_of_bounds(op, where, bad):  # test_trivial_fancy_out_of_bounds
    def run(m):
        a = m.zeros(5)
        ind = m.ones(20, dtype=m.int64)
        ind[where] = bad
        if op == "getitem":
            return a[ind]
        a[ind] = 0
    assert _outcome(run, gradkit) == _outcome(run, torch)


@program
def index_is_larger_and_broadcast_subspace(m):  # test_index_is_larger, _broadcast_subspace
    a = m.zeros(5, 5)
    a[[[0], [1], [2]], [0, 1, 2]] = m.tensor([2.0, 3.0, 4.0])
    b = m.zeros(100, 100)
    b[m.arange(99, -1, -1).long()] = m.arange(0.0, 100)[:, None]
    return a, b


@program
def truncate_leading_1s(m):  # test_truncate_leading_1s
    col_max = m.tensor([[1.0, -2.0, 3.0, 0.5]])
    kernel = col_max.T * col_max
    kernel2 = kernel.clone()
    kernel[range(len(kernel)), range(len(kernel))] = m.square(col_max)
    m.diagonal(kernel2).copy_(m.square(col_max.view(4)))
    return kernel, kernel2


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_as_torch(name):
    assert_same(_outcome(PROGRAMS[name], gradkit), _outcome(PROGRAMS[name], torch))
