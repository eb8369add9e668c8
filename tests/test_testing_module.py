"""gradkit.testing (assert_close, assert_allclose, make_tensor) against torch.testing: the same
calls pass or fail alike, with torch's exception type and message."""
import collections
import warnings

import numpy as np
import pytest

import gradkit

torch = pytest.importorskip("torch")


def _outcome(lib, program):
    """None when the program passes, else (exception type name, message in gradkit's words)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            program(lib)
    except Exception as error:  # noqa: BLE001 - the outcome is what is compared
        # gradkit's names where torch names its own (torch.float32, torch.Size, torch.Tensor)
        text = str(error).replace("torch.Tensor", "gradkit._tensor.Tensor")
        return type(error).__name__, text.replace("torch.", "gradkit.")
    return None


def _close(*args, **kwargs):
    return lambda t: t.testing.assert_close(*(a(t) if callable(a) else a for a in args), **kwargs)


def _t(*args, **kwargs):
    """A tensor made by whichever library runs the program."""
    def make(t):
        dtype = kwargs.get("dtype")
        options = {**kwargs, "dtype": getattr(t, dtype)} if dtype else kwargs
        return t.tensor(*args, **options)
    return make


NAN, INF = float("nan"), float("inf")

ASSERT_CLOSE = {
    "float_mismatch": _close(_t([1., 2., 3.]), _t([1., 2.1, 3.5])),
    "int_not_equal": _close(_t([1, 2, 3]), _t([1, 5, 0])),
    "bool_not_equal": _close(_t([True, False]), _t([True, True])),
    "uint8_no_wraparound": _close(_t([1, 200], dtype="uint8"), _t([3, 2], dtype="uint8")),
    "zero_dim_is_scalars": _close(_t(1.), _t(1.1)),
    "nan_not_equal": _close(_t([NAN, 1.]), _t([NAN, 1.])),
    "nan_equal_nan": _close(_t([NAN, 1.]), _t([NAN, 1.]), equal_nan=True),
    "inf_signs": _close(_t([INF, 1.]), _t([-INF, 1.])),
    "inf_equal": _close(_t([INF, 1.]), _t([INF, 1.])),
    "dtype_checked": _close(_t([1.]), _t([1.], dtype="float64")),
    "dtype_promoted": _close(_t([1.]), _t([1.001], dtype="float64"), check_dtype=False),
    "int_float_promoted": _close(_t([1, 2]), _t([1., 2.5]), check_dtype=False),
    "shape": _close(lambda t: t.ones(2), lambda t: t.ones(3)),
    "stride_checked": _close(lambda t: t.ones(2, 3).t(), lambda t: t.ones(3, 2),
                             check_stride=True),
    "stride_unchecked": _close(lambda t: t.ones(2, 3).t(), lambda t: t.ones(3, 2)),
    "msg_str": _close(lambda t: t.ones(2), lambda t: t.zeros(2), msg="Argh"),
    "msg_callable": _close(lambda t: t.ones(2), lambda t: t.zeros(2),
                           msg=lambda m: f"Header\n\n{m}\n\nFooter"),
    "msg_ignored_for_structure": _close([1, 2], [1], msg="mine"),
    "sequence_item": _close(lambda t: [t.ones(2), 1.0], lambda t: (t.ones(2), 1.5)),
    "sequence_length": _close([1, 2], [1]),
    "mapping_item": _close(lambda t: {"a": t.ones(2), "b": 2},
                           lambda t: collections.OrderedDict(b=3, a=t.ones(2))),
    "mapping_keys": _close({"a": 1, "c": 2}, {"a": 1, "b": 3}),
    "nested": _close(lambda t: {"a": [t.ones(2), {"x": t.tensor([1., 5.])}]},
                     lambda t: {"a": [t.ones(2), {"x": t.tensor([1., 2.])}]}),
    "floats": _close(1.0, 1.1),
    "ints": _close(1, 2),
    "int_vs_float": _close(1, 1.0),
    "int_vs_float_unchecked": _close(1, 1.0, check_dtype=False),
    "complex_numbers": _close(1 + 1j, 1 + 2j),
    "numpy_number": _close(np.float32(1.0), 1.0),
    "numpy_bool": _close(np.bool_(True), False),
    "none_vs_number": _close(None, 1),
    "none_vs_none": _close(None, None),
    "numpy_arrays": _close(np.array([1., 2.]), np.array([1., 3.])),
    "numpy_vs_tensor": _close(np.array([1., 2.]), _t([1., 2.])),
    "strings": _close("a", "a"),
    "only_rtol": _close(lambda t: t.ones(2), lambda t: t.ones(2), rtol=1e-3),
    "only_atol_numbers": _close(1.0, 1.0, atol=1e-3),
    "tolerance_given": _close(_t([1., 2.]), _t([1., 2.05]), rtol=0, atol=0.1),
    "zero_tolerance_says_equal": _close(_t([1., 2.]), _t([1., 2.05]), rtol=0, atol=0),
    "complex_tensors": _close(_t([1 + 1j, 2j]), _t([1 + 1j, 3j])),
    "relative_to_zero": _close(_t([1., 0.]), _t([1e-3, 1.])),
    "parameter_vs_tensor": _close(lambda t: t.nn.Parameter(t.ones(2)), lambda t: t.ones(2)),
    "parameter_strict": _close(lambda t: t.nn.Parameter(t.ones(2)), lambda t: t.ones(2),
                               allow_subclasses=False),
    "index_2d": _close(lambda t: t.arange(12.).reshape(3, 4),
                       lambda t: t.arange(12.).reshape(3, 4) * 1.01),
    "float16": _close(_t([1., 2.], dtype="float16"), _t([1., 2.01], dtype="float16")),
    "requires_grad": _close(lambda t: t.ones(2, requires_grad=True) * 2, lambda t: t.ones(2)),
    "empty": _close(lambda t: t.ones(0), lambda t: t.ones(0)),
    "ties_first_index": _close(_t([1., 3., 3.]), _t([1., 1., 1.])),
}


@pytest.mark.parametrize("name", sorted(ASSERT_CLOSE))
def test_assert_close_as_torch(name):
    program = ASSERT_CLOSE[name]
    assert _outcome(gradkit, program) == _outcome(torch, program)


ASSERT_ALLCLOSE = {
    "close": lambda t: t.testing.assert_allclose(t.tensor([1., 2.]), [1., 2.0001]),
    "nan_equal_by_default": lambda t: t.testing.assert_allclose(t.tensor([1., NAN]),
                                                                 [1.5, NAN]),
    "msg": lambda t: t.testing.assert_allclose(1.0, 2.0, msg="no"),
    "float64_defaults": lambda t: t.testing.assert_allclose(t.tensor([1.], dtype=t.float64),
                                                             [1.0001]),
}


@pytest.mark.parametrize("name", sorted(ASSERT_ALLCLOSE))
def test_assert_allclose_as_torch(name):
    program = ASSERT_ALLCLOSE[name]
    assert _outcome(gradkit, program) == _outcome(torch, program)


def test_assert_allclose_is_deprecated():
    for lib in (gradkit, torch):
        with pytest.warns(FutureWarning, match=r"assert_allclose\(\)` is deprecated since 1.12"):
            lib.testing.assert_allclose(1.0, 1.0)


def _described(tensor):
    return (tuple(tensor.shape), str(tensor.dtype).split(".")[-1], tensor.stride(),
            tensor.storage_offset(), tensor.requires_grad)


def _make(*shape, **kwargs):
    def program(t):
        options = {k: getattr(t, v) if k in ("dtype", "memory_format") else v
                   for k, v in kwargs.items()}
        return _described(t.testing.make_tensor(*shape, device="cpu", **options))
    return program


MAKE_TENSOR = {
    "sizes": _make(2, 3, dtype="float32"),
    "tuple": _make((2, 3), dtype="float64"),
    "list": _make([2, 3], dtype="int64"),
    "scalar": _make((), dtype="float32"),
    "noncontiguous": _make(2, 3, dtype="float32", noncontiguous=True),
    "noncontiguous_one_element": _make(1, dtype="float32", noncontiguous=True),
    "channels_last": _make(2, 3, 4, 5, dtype="float32", memory_format="channels_last"),
    "requires_grad": _make(2, dtype="float32", requires_grad=True),
    "complex": _make(5, dtype="complex64", exclude_zero=True),
    "bool": _make(5, dtype="bool"),
    "exclusive": _make(2, dtype="float32", memory_format="channels_last", noncontiguous=True),
    "integral_grad": _make(2, dtype="int32", requires_grad=True),
    "low_above_high": _make(2, dtype="float32", low=3, high=1),
    "nan_bound": _make(2, dtype="float32", low=NAN),
    "outside_uint8": _make(2, dtype="uint8", low=-10, high=-1),
    "outside_int8": _make(2, dtype="int8", low=200, high=300),
}


@pytest.mark.parametrize("name", sorted(MAKE_TENSOR))
def test_make_tensor_as_torch(name):
    program = MAKE_TENSOR[name]
    assert _outcome(gradkit, program) == _outcome(torch, program)
    if _outcome(torch, program) is None:
        assert program(gradkit) == program(torch)


def test_make_tensor_low_equal_high_warns_for_floats():
    for lib in (gradkit, torch):
        with pytest.warns(FutureWarning, match="Passing `low==high` to "
                                               "`torch.testing.make_tensor`"):
            lib.testing.make_tensor(3, dtype=lib.float32, device="cpu", low=1, high=1)


@pytest.mark.parametrize("dtype, low, high, expected_low, expected_high", [
    ("int8", None, None, -9, 9),        # signed default [-9, 10)
    ("uint8", None, None, 0, 9),        # unsigned default [0, 10)
    ("bool", None, None, 0, 1),
    ("float32", -1, 1, -1, 1),
    ("float16", -1e10, 1e10, -65504, 65504),  # clamped to the dtype's finite range
    ("int64", -2 ** 70, 2 ** 70, -2 ** 63, 2 ** 63 - 1),
])
def test_make_tensor_draws_inside_its_range(dtype, low, high, expected_low, expected_high):
    gradkit.manual_seed(0)
    x = gradkit.testing.make_tensor(4000, dtype=getattr(gradkit, dtype), device="cpu",
                                    low=low, high=high)
    values = x.double() if x.dtype.is_floating_point else x.long()
    assert expected_low <= values.min().item() and values.max().item() <= expected_high
    assert values.max().item() > values.min().item()


def test_make_tensor_exclude_zero():
    gradkit.manual_seed(0)
    ints = gradkit.testing.make_tensor(2000, dtype=gradkit.int8, device="cpu", low=-1, high=2,
                                       exclude_zero=True)
    assert bool((ints != 0).all()) and bool((ints == 1).any())
    floats = gradkit.testing.make_tensor(3, dtype=gradkit.float32, device="cpu", low=0, high=1,
                                         exclude_zero=True)
    assert bool((floats != 0).all())


def test_make_tensor_unsupported_dtype_message():
    class Unknown:
        name = "quint8"

        def __repr__(self):
            return "gradkit.quint8"
    with pytest.raises(TypeError, match=r"The requested dtype 'gradkit.quint8' is not supported "
                                        r"by torch.testing.make_tensor\(\)"):
        gradkit.testing.make_tensor(2, dtype=Unknown(), device="cpu")
