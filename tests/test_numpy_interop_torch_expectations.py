"""torch's own NumPy-interop tests (test/test_numpy_interop.py, TestNumPyInterop), re-run as
programs under torch 2.13 and gradkit: same results (types, dtypes, shapes, values, memory
sharing, NumPy flags), warnings, or the same error with the same message.

Each test names the torch test it covers. Out of scope (docs/torch_expectations.md, "NumPy
interop"): sparse tensors, bfloat16, ``torch.Storage`` (gradkit has no legacy typed storage
classes), CUDA, TorchScript/dynamo.
"""
# Programs close over their loop's variables on purpose: same() runs each at once.
# ruff: noqa: B023
import itertools
import operator
import sys
import warnings

import numpy as np
import pytest

import gradkit

torch = pytest.importorskip("torch")

# torch's own __array__/__array_wrap__ lack the arguments NumPy 2 passes (NumPy warns)
pytestmark = [pytest.mark.filterwarnings("ignore:__array__ implementation doesn't accept"),
              pytest.mark.filterwarnings("ignore:__array_wrap__ must accept context"),
              pytest.mark.filterwarnings("ignore:Creating a tensor from a list of numpy")]
MODULES = (torch, gradkit)
RNG = np.random.default_rng(20261206)
NUMPY_TYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32",
               "float64", "complex64", "complex128"]


def _plain(value):
    """What a program returned, comparable across the two libraries."""
    if isinstance(value, (torch.Tensor, gradkit.Tensor)):
        return ("Tensor", _plain(value.dtype), tuple(value.shape), value.tolist(),
                value.requires_grad)
    if isinstance(value, (torch.dtype, gradkit.dtype)):
        return str(value).split(".")[-1]
    if isinstance(value, np.ndarray):
        return ("ndarray", value.dtype.str, value.shape, value.tolist())
    if isinstance(value, type):
        return value.__name__
    if isinstance(value, (tuple, list, torch.Size, gradkit.Size)):
        return [_plain(item) for item in value]
    return value


def observe(m, program):
    """``program(m)``'s result made plain, or (error type, message)."""
    try:
        return _plain(program(m))
    except Exception as error:  # noqa: BLE001 - the error is the observation
        return type(error).__name__, str(error).replace("torch.", "gradkit.")


def same(program):
    """gradkit gives what torch gives; returns it."""
    expected = observe(torch, program)
    assert observe(gradkit, program) == expected
    return expected


def warnings_of(m, program) -> list:
    """The warning messages ``program(m)`` emits (torch's once-only warnings shown always)."""
    before = m.is_warn_always_enabled()
    m.set_warn_always(True)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            program(m)
    finally:
        m.set_warn_always(before)
    return [str(w.message).split(" (Triggered internally")[0] for w in caught]


# -- NumPy arrays from tensors ------------------------------------------------------------------

def test_numpy_non_writeable():
    """from_numpy of a read-only array warns (torch's message); tensor() copies silently."""
    def program(m):
        array = np.zeros(5)
        array.flags["WRITEABLE"] = False
        return m.from_numpy(array), m.as_tensor(array)
    for m in MODULES:
        assert warnings_of(m, program) == warnings_of(torch, program)
    assert len(warnings_of(gradkit, program)) == 2
    assert "is not writable" in warnings_of(gradkit, program)[0]
    quiet = np.zeros(5)
    quiet.flags["WRITEABLE"] = False
    assert warnings_of(gradkit, lambda m: m.tensor(quiet)) == []


def test_numpy_unresizable():
    """NumPy cannot resize an array a tensor shares; a tensor cannot grow the memory NumPy
    shares (from_numpy or numpy())."""
    def program(m):
        outcomes = []
        x = np.zeros((2, 2))
        y = m.from_numpy(x)
        for grow in (lambda: x.resize((5, 5)), lambda: y.resize_(3, 3)):
            try:
                grow()
                outcomes.append("grown")
            except (ValueError, RuntimeError) as error:
                outcomes.append((type(error).__name__, str(error)[:40]))
        z = m.arange(25.0).reshape(5, 5)
        w = z.numpy()
        for grow in (lambda: z.resize_(10, 10), lambda: w.resize((10, 10))):
            try:
                grow()
                outcomes.append("grown")
            except (ValueError, RuntimeError) as error:
                outcomes.append((type(error).__name__, str(error)[:40]))
        outcomes.append(y.resize_(1, 2).tolist())  # shrinking needs no new memory
        return outcomes
    outcomes = same(program)
    refused = ["RuntimeError", "Trying to resize storage that is not res"]
    assert outcomes[1] == outcomes[2] == refused
    assert outcomes[0][0] == outcomes[3][0] == "ValueError"


@pytest.mark.parametrize("dtype", NUMPY_TYPES + ["uint16", "uint32", "uint64"])
def test_to_numpy(dtype):
    """numpy() of contiguous, offset, transposed and strided tensors: NumPy's dtype, shape,
    strides, flags and values, and writes through to the tensor."""
    def program(m):
        def castable(*shape):
            return m.from_numpy((RNG_VALUES[:int(np.prod(shape))] % 100).reshape(shape)).to(
                getattr(m, dtype))
        views = [castable(10), castable(20).narrow(0, 9, 10), m.tensor([]).to(getattr(m, dtype)),
                 castable(3, 5), castable(6, 5).narrow(0, 2, 3), castable(5, 3).t(),
                 castable(10, 3).narrow(0, 4, 5).t(),
                 castable(10, 6).narrow(0, 4, 5).narrow(1, 2, 3).t()]
        arrays = [view.numpy() for view in views]
        described = [(a.dtype.str, a.shape, a.strides, a.flags.c_contiguous, a.flags.writeable,
                      a.tolist(), v.storage_offset() > 0) for a, v in zip(arrays, views)]
        x = castable(3, 4)
        y = x.numpy()
        y[0][1] = 3
        z = x.t().numpy()
        z[0][2] = 1
        return described, x.tolist()
    same(program)


RNG_VALUES = RNG.integers(0, 1000, 60).astype(np.float64)


def test_to_numpy_bool():
    for values in ([True, False], [True]):
        (_, dtype, _, listed), = same(lambda m: [m.tensor(values, dtype=m.bool).numpy()])
        assert dtype == "|b1" and listed == values


def test_to_numpy_force_argument():
    """numpy() refuses a tensor that requires grad and a conjugated view unless forced;
    force=True gives the (resolved) values."""
    data = [[1 + 2j, -2 + 3j], [-1 - 2j, 3 - 2j]]
    for requires_grad, conj, force in itertools.product((False, True), repeat=3):
        def program(m):
            x = m.tensor(data, requires_grad=requires_grad)
            x = x.conj() if conj else x
            return x.numpy(force=force) if force else (x.numpy(), x.numpy(force=False))
        result = same(program)
        if not force and (requires_grad or conj):
            assert result[0] == "RuntimeError" and "Use tensor." in result[1]
        else:
            expected = np.conj(data) if conj else np.array(data)
            arrays = [result] if force else result
            for _, _, _, listed in arrays:
                np.testing.assert_array_equal(listed, expected)


def test_to_numpy_refuses_a_negative_view_and_numpy_under_no_grad():
    """The imaginary part of a conjugated view has torch's negative bit; numpy() of a tensor
    requiring grad is allowed with grad mode off."""
    def program(m):
        z = m.tensor([1 + 2j])
        with m.no_grad():
            plain = m.ones(2, requires_grad=True).numpy()
        return plain, z.conj().imag.numpy(force=True), z.conj().imag.numpy()
    assert same(program)[0] == "RuntimeError"
    assert same(lambda m: m.tensor([1 + 2j]).conj().imag.numpy(force=True))[3] == [-2.0]


# -- tensors from NumPy arrays ------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.double, np.float64, np.float16, np.complex64,
                                   np.complex128, np.int64, np.int32, np.int16, np.int8,
                                   np.uint8, np.longlong, np.bool_, np.uint16, np.uint32,
                                   np.uint64])
def test_from_numpy(dtype):
    def program(m):
        array = np.array([1, 2, 3, 4], dtype=dtype)
        tensor = m.from_numpy(array)
        array[0] = 0  # shared memory
        results = [tensor, tensor.numpy() is array or np.shares_memory(tensor.numpy(), array)]
        if np.dtype(dtype).kind != "c":
            results.append(m.from_numpy(array % 2))
        return results
    assert same(program)[1] is True


def test_from_numpy_layouts_and_errors():
    """Offsets, transposes and strided slices of NumPy arrays; empty dims; unsupported dtypes,
    strides that are not whole elements, negative strides and a foreign byte order refused."""
    x = np.linspace(1, 125, 125).reshape(5, 5, 5)
    square = np.linspace(1, 25, 25).reshape(5, 5)
    same(lambda m: [m.from_numpy(x[1]), m.from_numpy(square.T), m.from_numpy(x[:, 1]),
                    m.from_numpy(np.zeros((0, 2))).shape, m.from_numpy(np.zeros((2, 0))).shape,
                    m.from_numpy(x[:, 1]).stride(), m.from_numpy(square.T).stride()])
    odd_strides = np.lib.stride_tricks.as_strided(np.array([3.0, 5.0, 8.0]), (3,), (3,))
    for bad in (np.array(["foo", "bar"]), np.array([b"x"]), np.array([1, None], dtype=object),
                np.array([1.0], dtype=np.longdouble), odd_strides, np.arange(4.0)[::-1],
                np.arange(3, dtype=">f8")):
        for make in ("from_numpy", "as_tensor", "tensor"):
            error = same(lambda m: getattr(m, make)(bad))
            assert error[0] in ("TypeError", "ValueError"), error
    assert same(lambda m: m.from_numpy(np.array(["foo"])))[1].startswith(
        "can't convert np.ndarray of type numpy.str_")
    assert same(lambda m: m.from_numpy([1, 2]))[0] == "TypeError"


def test_from_numpy_no_leak_on_invalid_dtype():
    x = np.array("value".encode("ascii"))
    for _ in range(1000):
        with pytest.raises(TypeError):
            gradkit.from_numpy(x)
    assert sys.getrefcount(x) == 2


def test_from_list_of_ndarray_warning():
    def program(m):
        return m.tensor([np.array([0]), np.array([1])])
    assert warnings_of(gradkit, program)[:1] == warnings_of(torch, program)[:1]
    assert "extremely slow" in warnings_of(gradkit, program)[0]
    assert warnings_of(gradkit, lambda m: m.tensor(np.array([[0], [1]]))) == []


def test_ctor_with_invalid_numpy_array_sequence():
    """Ragged data: torch's "expected sequence of length n at dim d (got k)" and "not a
    sequence" (NumPy would say "inhomogeneous shape")."""
    r = RNG.random
    cases = [lambda: [r((3, 3)), r((3, 0))], lambda: [[r((3, 3)), r((3, 2))]],
             lambda: [[r((3, 3)), r((3, 3))], [r((3, 3)), r((3, 2))]],
             lambda: [[r(3), r()]], lambda: [[1, 2, 3], r(2)],
             lambda: [[1, 2], [3]], lambda: [[1, 2], 3], lambda: [[[1], [2]], [[3], [4, 5]]],
             lambda: [[1, 2], []]]
    for case in cases:
        data = case()
        error = same(lambda m: m.tensor(data))
        assert error[0] in ("ValueError", "TypeError")
        assert "expected sequence of length" in error[1] or error[1] == "not a sequence"
        assert same(lambda m: m.tensor(data, dtype=m.float64)) == error


@pytest.mark.parametrize("dtype", [np.double, np.float64, np.float16, np.int64, np.int32,
                                   np.int16, np.uint8, np.bool_, np.float32, np.complex64])
def test_ctor_with_numpy_scalar_ctor(dtype):
    value, item, kind = same(lambda m: (m.tensor(dtype(42)), m.tensor(dtype(42)).item(),
                                        type(m.tensor(dtype(42)).item())))
    assert item == dtype(42)


def test_numpy_index():
    def program(m):
        x = m.from_numpy(RNG_VALUES[:25].reshape(5, 5))
        return [x[i] for i in np.array([0, 1, 2], dtype=np.int32)] + \
            [x[np.int64(1), np.int16(2)], x.size(np.int64(1)), x.view(np.int64(25), np.int32(1))]
    same(program)


def test_numpy_index_multi():
    for size in [2, 8, 16, 32]:
        mask = np.zeros((size, size, size), dtype=np.int32)
        mask[: size // 2, :, :] = 1
        count = same(lambda m: m.zeros(size, size, size)[mask == 1].numel())
        assert count == mask.sum()


# -- NumPy's protocols on tensors: __array__, __array_wrap__, operators ------------------------

@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "int64", "int32", "int16",
                                   "uint8"])
def test_numpy_array_interface(dtype):
    """np.asarray(tensor) (with and without dtype); NumPy's ufuncs on a tensor give a tensor
    of the ufunc's dtype, uint8 for a bool result (torch's __array_wrap__)."""
    values = [1, 2, 3, 4] if dtype == "uint8" else [1, -2, 3, -4]

    def program(m):
        x = m.tensor(values).to(getattr(m, dtype))
        results = [np.asarray(x), np.asarray(m.tensor([1, -2, 3, -4], dtype=m.int32), dtype),
                   np.abs(x), np.greater_equal(x, 2), np.add(x, x)]
        if dtype in ("float64", "float32"):
            results += [np.sin(x), np.sqrt(m.abs(x)), np.ceil(x)]
        return results
    results = same(program)
    assert results[0][1] == np.dtype(dtype).str and results[2][0] == "Tensor"
    assert results[3][:2] == ("Tensor", "uint8")


def test_numpy_protocol_details():
    """np.asarray shares memory (np.array copies), a 0-d ufunc result is a 0-d tensor, a
    two-output ufunc gives two tensors, a tensor that requires grad refuses NumPy's conversion,
    and a NumPy scalar's operators defer to the tensor's (the graph is kept)."""
    def program(m):
        t = m.ones(3)
        return (np.shares_memory(np.asarray(t), t.numpy()), np.shares_memory(np.array(t),
                                                                             t.numpy()),
                np.sin(m.tensor(1.0)), np.modf(m.tensor([1.5, 2.5])),
                np.float64(2) * m.ones(2, requires_grad=True))
    assert same(program)[:2] == [True, False]
    error = same(lambda m: np.abs(m.ones(2, requires_grad=True)))
    assert error[0] == "RuntimeError" and "requires grad" in error[1]


@pytest.mark.parametrize("np_dtype", [np.float32, np.float64, np.int32, np.int64, np.int16,
                                      np.uint8])
def test_multiplication_numpy_scalar(np_dtype):
    for dtype in ("float32", "float64"):
        def program(m):
            t = m.ones(2, requires_grad=True, dtype=getattr(m, dtype))
            return t * np_dtype(2.0), np_dtype(2.0) * t
        first, second = same(program)
        assert first[:2] == second[:2] == ("Tensor", dtype) and first[4] and second[4]


@pytest.mark.parametrize("np_dtype", [np.float64, np.float32, np.float16, np.int64, np.int32,
                                      np.uint8, np.complex128])
def test_numpy_scalars_in_ops_promote_as_python_numbers(np_dtype):
    """A NumPy scalar in a tensor op is a number of its kind (np.float64 * float32 tensor is
    float32), on either side, in comparisons too."""
    for dtype in ("float32", "float64", "int32", "int64", "uint8", "bool", "float16",
                  "complex64"):
        if dtype == "float16" and np_dtype is np.complex128:
            continue  # torch computes in complex32, a dtype gradkit lacks (see the ledger)

        def program(m):
            t = m.tensor([1, 0, 2]).to(getattr(m, dtype))
            s = np_dtype(2)
            return [t * s, s * t, t + s, s + t, t / s, s < t, t == s]
        same(program)


def test_numpy_bool_scalar_is_a_float_number():
    """torch 2.13 reads np.bool_ in an op as a float number (an int32 tensor times
    np.bool_(True) is float32), and so does gradkit (a Python True keeps int32)."""
    def program(m):
        t = m.tensor([1, 0, 2], dtype=m.int32)
        return [r.dtype for r in (t * np.bool_(True), np.bool_(True) + t, t * True)]
    assert observe(gradkit, program) == observe(torch, program) == ["float32", "float32",
                                                                    "int32"]


@pytest.mark.parametrize("tensor_dtype", ["float32", "float64", "int64", "bool"])
def test_tensor_ops_with_numpy_arrays_on_either_side(tensor_dtype):
    """``tensor <op> array`` gives torch's values (torch computes it through NumPy, whose
    result dtype may differ: docs/torch_expectations.md, "Type promotion"); comparisons with
    the array on either side are bool tensors. Kept: ``array + tensor`` and the other
    arithmetic with the array on the left raise TypeError in torch 2.13 (NumPy defers to the
    tensor, whose reflected operator refuses an array); gradkit computes them as
    ``from_numpy(array) <op> tensor``; so for ``<``/``>`` with an array on either side, and
    ``array != tensor`` (torch: Python's identity answer, True)."""
    for array_dtype in ("float64", "float32", "int64", "int32"):
        a = np.array([2, 1, 1]).astype(array_dtype)

        def program(m):
            t = m.tensor([1, 0, 2]).to(getattr(m, tensor_dtype))
            return [(t + a).tolist(), (t * a).tolist(), a == t, t == a]
        same(program)
        t = gradkit.tensor([1, 0, 2]).to(getattr(gradkit, tensor_dtype))
        for apply in (operator.add, operator.mul, operator.sub):
            with pytest.raises(TypeError):
                apply(a, torch.tensor([1, 0, 2]))
            assert observe(gradkit, lambda m: apply(a, t)) == \
                observe(gradkit, lambda m: apply(m.from_numpy(a), t))


def test_dtype_comparisons_with_numpy_dtypes():
    """A library dtype is not NumPy's scalar type. Kept: gradkit's dtype equals the NumPy
    dtype it wraps (``np.dtype(gradkit.float32)`` reads it, so ops take gradkit dtypes where
    NumPy dtypes go); torch's does not."""
    same(lambda m: [m.float64 == np.float64, np.float64 == m.float64, m.float32 != np.float32,
                    m.int64 == np.int64])
    assert torch.float32 != np.dtype("float32")
    assert gradkit.float32 == np.dtype("float32") and np.dtype(gradkit.float32) == np.float32


def test_parse_numpy_int_overflow():
    """NumPy 2 refuses np.uint64(-1) itself; a NumPy integer beyond int64 as a dim is torch's
    overflow error."""
    with pytest.raises(OverflowError, match="out of bounds"):
        np.uint64(-1)
    for value in (np.uint64(2**64 - 1), 2**64 - 1, np.uint64(2**63)):
        error = same(lambda m: m.mean(m.ones(1, 1), value))
        assert error == ("ValueError", "Overflow when unpacking long long")
        assert same(lambda m: m.ones(2, 2).sum(value)) == error
        assert same(lambda m: m.ones(3).unsqueeze(value)) == error


@pytest.mark.parametrize("np_type", [np.int16, np.int8, np.uint8, np.int32, np.int64])
def test_parse_numpy_int(np_type):
    """A NumPy integer is an int argument and a Python-number-like operand (the tensor's dtype
    stays); ``torch.Storage(np_val)`` is out of scope."""
    def program(m):
        array = np.array([3], dtype=np_type)
        value = array[0]
        tensor = m.tensor([2], dtype=m.int32)
        tensor[0] = value
        t = m.from_numpy(array)
        return (m.ones(5).diag(value), m.ones(5).diag(3), m.ones([2, 2, 2, 2]).mean(value),
                tensor, (t + value).dtype, (value + t).dtype)
    result = same(program)
    assert result[0] == result[1]


@pytest.mark.parametrize("np_dtype", [np.float32, np.float64, np.int64, np.int32, np.int16,
                                      np.uint8])
def test_has_storage_numpy(np_dtype):
    def program(m):
        array = np.array([1], dtype=np_dtype)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # TypedStorage is deprecated
            return [m.tensor(array, dtype=d).storage().size() for d in
                    (m.float32, m.double, m.int, m.long, m.uint8)]
    assert same(program) == [1] * 5


@pytest.mark.parametrize("dtype", NUMPY_TYPES)
def test_numpy_scalar_cmp(dtype):
    """A tensor element or its item() equals the NumPy element or its item(). Kept: torch
    drops the imaginary part of an np.complex64 compared with a tensor (pytorch#43579), gradkit
    does not."""
    if dtype.startswith("complex"):
        values = [complex(1, 3), [complex(1, 3), 0, 2j], [[complex(3, 1), 0], [-1j, 5]]]
    else:
        values = [3, [1, 0, -3], [[3, 0, -1], [3, 5, 4]]]
    for value in values:
        def program(m, torch_bug=False):
            tensor = m.tensor(value, dtype=getattr(m, dtype))
            array = tensor.numpy()
            pairs = itertools.product((tensor.flatten()[0], tensor.flatten()[0].item()),
                                      (array.flatten()[0], array.flatten()[0].item()))
            return [(type(t == a).__name__, bool(t == a)) for t, a in pairs
                    if torch_bug == (dtype == "complex64" and not isinstance(t, (int, float,
                                                                                 complex))
                                     and type(a) is np.complex64)]
        comparisons = same(program)
        assert all(equal for _, equal in comparisons)
        if dtype == "complex64":
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # NumPy: complex cast to real
                assert observe(torch, lambda m: program(m, True)) == [["Tensor", False]]
            assert observe(gradkit, lambda m: program(m, True)) == [["Tensor", True]]


@pytest.mark.parametrize("dtype", [d for d in NUMPY_TYPES])
def test___eq__(dtype):
    """tensor == array and array == tensor are bool tensors, elementwise."""
    base = RNG.integers(-9, 9, (5, 7))
    flips = RNG.integers(0, 2, (5, 7)).astype(bool)

    def program(m):
        a = m.from_numpy(base.copy()).to(getattr(m, dtype))
        b = a.clone().detach()
        b_np = b.numpy()
        results = [a == b_np, b_np == a]
        if dtype == "bool":
            b[1][3] = not b[1][3]
        else:
            b[1][3] += 1
        results += [a == b_np, b_np == a]
        b.copy_(a)
        b[m.from_numpy(flips)] = b[m.from_numpy(flips)].logical_not() if dtype == "bool" else \
            b[m.from_numpy(flips)] + 1
        results += [a == b_np, b_np == a]
        b.copy_(a.logical_not() if dtype == "bool" else a + 1)
        return results + [a == b_np, b_np == a]
    results = same(program)
    assert all(r[:2] == ("Tensor", "bool") for r in results)
    assert results[0][3] == np.ones((5, 7), bool).tolist() == results[1][3]
    assert results[4][3] == (~flips).tolist() and results[6][3] == np.zeros((5, 7), bool).tolist()


def test_empty_tensors_interop():
    def program(m):
        x = m.tensor(0.5, dtype=m.float16)
        y = m.tensor(np.random.rand(0), dtype=m.float16)
        return (m.true_divide(x, y).shape, m.mul(x, y).shape,
                m.div(x, y, rounding_mode="floor").shape)
    assert same(program) == [[0], [0], [0]]
