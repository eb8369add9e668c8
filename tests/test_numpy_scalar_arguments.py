"""NumPy scalars where torch takes numbers, and NumPy values inside ``tensor()``'s lists,
compared with torch 2.13 on the same programs (dtypes and values). gradkit read a NumPy float
bound of ``clamp`` or slope of ``leaky_relu`` as a float64 array (float64 results where torch
gives float32), ``tensor([np.float64(1.5)])`` as float32 and ``full((2,), np.int32(1))`` as
float32: silent wrong dtypes."""
import numpy as np
import pytest

import gradkit

torch = pytest.importorskip("torch")

SCALARS = {"f64": np.float64(0.5), "f32": np.float32(0.5), "f16": np.float16(0.5),
           "i64": np.int64(2), "i32": np.int32(2), "u8": np.uint8(2), "bool": np.True_}

PROGRAMS = {
    "add": lambda lib, x, s: x + s,
    "rsub": lambda lib, x, s: s - x,
    "mul": lambda lib, x, s: lib.mul(x, s),
    "where": lambda lib, x, s: lib.where(x > 1, x, s),
    "clamp_min": lambda lib, x, s: lib.clamp(x, min=s),
    "clamp_max": lambda lib, x, s: lib.clamp_max(x, s),
    "clamp_min_fn": lambda lib, x, s: lib.clamp_min(x, s),
    "full": lambda lib, x, s: lib.full((2,), s),
    "float_power": lambda lib, x, s: lib.float_power(x, s),
    "leaky_relu": lambda lib, x, s: lib.nn.functional.leaky_relu(x.float(), s),
    "result_type": lambda lib, x, s: lib.empty(0, dtype=lib.result_type(x, s)),
    "masked_fill": lambda lib, x, s: x.masked_fill(x > 1, s),
}


def _outcome(lib, program, dtype, scalar):
    x = lib.tensor([1, 2, 3], dtype=getattr(lib, dtype))
    try:
        out = program(lib, x, scalar)
    except (RuntimeError, TypeError, NotImplementedError) as error:
        return type(error).__name__
    return str(out.dtype).split(".")[-1], out.tolist()


@pytest.mark.parametrize("dtype", ["float32", "int64"])
@pytest.mark.parametrize("scalar", sorted(SCALARS))
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_numpy_scalars_read_as_torch_reads_numbers(name, scalar, dtype):
    # a NumPy bool is read as a float by torch's parser (int64 + np.True_ is float32)
    args = PROGRAMS[name], dtype, SCALARS[scalar]
    ours, theirs = _outcome(gradkit, *args), _outcome(torch, *args)
    if isinstance(theirs, str) or isinstance(ours, str):
        assert ours == theirs
        return
    assert ours[0] == theirs[0]
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-15)  # pow vs sqrt: an ulp


LISTS = {
    "f64": [np.float64(1.5)], "int_then_f64": [1, np.float64(2)], "i8": [[np.int8(1)]],
    "u8_i8": [np.uint8(1), np.int8(1)], "f16_int": [np.float16(1), 1],
    "f16_float": [np.float16(1), 1.5], "f32_complex": [np.float32(1), 1j],
    "array_in_list": [np.array([1, 2], dtype=np.int8)], "nested": [[np.float16(1)], [2.5]],
    "tuple": (np.uint8(1), 2), "plain": [1.5, 2], "empty": [],
}


@pytest.mark.parametrize("name", sorted(LISTS))
def test_tensor_infers_list_dtypes_as_torch(name):
    # each NumPy value keeps its dtype, Python floats count as the default dtype, and the
    # dtypes meet in torch's promote_types (int64 and float16 give float16)
    ours, theirs = gradkit.tensor(LISTS[name]), torch.tensor(LISTS[name])
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert ours.tolist() == theirs.tolist()


def test_tensor_of_a_list_of_0d_tensors_keeps_their_dtype():
    ours = gradkit.tensor([gradkit.tensor(1.5, dtype=gradkit.float64), 2.0])
    theirs = torch.tensor([torch.tensor(1.5, dtype=torch.float64), 2.0])
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1] == "float64"


COMPLEX_BOUNDS = {
    "float_imaginary": ("float32", lambda lib, x: lib.clamp(x, min=1 + 1j)),
    "float_real": ("float64", lambda lib, x: lib.clamp(x, 1 + 0j, 2)),
    "int": ("int64", lambda lib, x: lib.clamp(x, max=2j)),
    "numpy_complex": ("float32", lambda lib, x: lib.clamp(x, min=np.complex128(1 + 1j))),
    "in_place_int": ("int64", lambda lib, x: x.clamp_(min=1 + 1j)),
}


@pytest.mark.parametrize("name", sorted(COMPLEX_BOUNDS))
def test_complex_clamp_bounds_as_torch(name):
    # a floating x reads the bound as a C++ double (its real part, or c10's overflow error),
    # an integer x would give a complex result: "clamp is not supported for complex types"
    dtype, program = COMPLEX_BOUNDS[name]
    outcomes = []
    for lib in (torch, gradkit):
        try:
            outcomes.append(program(lib, lib.tensor([1, 2, 3], dtype=getattr(lib, dtype))).tolist())
        except (RuntimeError, NotImplementedError) as error:
            outcomes.append((type(error).__name__, str(error)))
    assert outcomes[1] == outcomes[0]
