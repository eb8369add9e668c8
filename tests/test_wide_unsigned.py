"""torch's barebones unsigned dtypes uint16, uint32 and uint64 against torch 2.13: the ops that
take them give torch's values and dtypes, the others torch's "not implemented for 'UInt16'"
errors, and promotion with other integer types torch's RuntimeError."""

import io
import warnings

import pytest

import gradkit

torch = pytest.importorskip("torch")


def T(t, d, v=(1, 2)):  # noqa: N802 - a tensor of the library running the program
    return t.tensor(list(v), dtype=d)


def _method(name, *args):
    """The program ``T(t, d).name(*args)``."""
    return lambda t, d: getattr(T(t, d), name)(*args)


# (program name, Tensor method, its arguments)
METHOD_CALLS = [
    ("to_float", "float"), ("abs", "abs"), ("sum", "sum"), ("prod", "prod"), ("max", "max"),
    ("min", "min"), ("amax", "amax"), ("argmax", "argmax"), ("cumsum", "cumsum", 0),
    ("mean", "mean"), ("exp", "exp"), ("clamp", "clamp", 2, 3), ("fill_", "fill_", 3),
    ("tolist", "tolist"), ("nonzero", "nonzero"), ("isnan", "isnan"), ("sign", "sign"),
    ("flip", "flip", 0), ("reshape", "reshape", 2, 1), ("is_signed", "is_signed"),
    ("requires_grad", "requires_grad_"), ("all", "all"), ("any", "any"), ("clone", "clone"),
    ("argsort", "argsort"), ("topk", "topk", 1), ("cummax", "cummax", 0), ("repeat", "repeat", 2),
    ("roll", "roll", 1), ("diag", "diag"), ("count_nonzero", "count_nonzero"),
    ("sum_dim", "sum", 0), ("min_dim", "min", 0), ("kthvalue", "kthvalue", 1), ("log", "log"),
    ("sigmoid", "sigmoid"), ("floor", "floor"), ("round", "round"), ("square", "square"),
    ("reciprocal", "reciprocal"), ("std", "std"), ("isinf", "isinf"), ("nansum", "nansum"),
    ("cumprod", "cumprod", 0), ("narrow", "narrow", 0, 0, 1), ("split", "split", 1),
    ("unbind", "unbind"), ("abs_", "abs_"), ("zero_", "zero_"), ("bool", "bool"),
    ("double", "double"), ("nan_to_num", "nan_to_num"), ("trunc", "trunc"),
    ("is_floating_point", "is_floating_point"), ("new_tensor", "new_tensor", [3]),
]

PROGRAMS = {
    "create": lambda t, d: t.tensor([1, 2, 3], dtype=d),
    "zeros": lambda t, d: t.zeros(3, dtype=d),
    "arange": lambda t, d: t.arange(3, dtype=d),
    "full": lambda t, d: t.full((2,), 7, dtype=d),
    "to": lambda t, d: t.tensor([1.0, 2.0]).to(d),
    "eq": lambda t, d: T(t, d) == T(t, d, (1, 3)),
    "lt": lambda t, d: T(t, d) < T(t, d, (1, 3)),
    "eq_scalar": lambda t, d: T(t, d) == 2,
    "and": lambda t, d: T(t, d, (1, 6)) & T(t, d, (3, 3)),
    "or": lambda t, d: T(t, d, (1, 6)) | T(t, d, (3, 3)),
    "xor": lambda t, d: T(t, d, (1, 6)) ^ T(t, d, (3, 3)),
    "not": lambda t, d: ~T(t, d),
    "lshift": lambda t, d: T(t, d) << T(t, d, (1, 1)),
    "rshift": lambda t, d: T(t, d) >> T(t, d, (1, 1)),
    "add": lambda t, d: T(t, d) + T(t, d),
    "add_scalar": lambda t, d: T(t, d) + 1,
    "sub": lambda t, d: T(t, d) - T(t, d),
    "mul": lambda t, d: T(t, d) * T(t, d, (1, 3)),
    "div": lambda t, d: T(t, d) / T(t, d, (1, 3)),
    "floordiv": lambda t, d: T(t, d) // T(t, d, (1, 3)),
    "rem": lambda t, d: T(t, d) % T(t, d, (1, 3)),
    "neg": lambda t, d: -T(t, d),
    "sort": lambda t, d: T(t, d, (2, 1)).sort().values,
    "sqrt": lambda t, d: T(t, d, (1, 4)).sqrt(),
    "matmul": lambda t, d: T(t, d).reshape(1, 2) @ T(t, d).reshape(2, 1),
    "index": lambda t, d: T(t, d, (1, 4, 5))[t.tensor([0, 2])],
    "slice": lambda t, d: T(t, d, (1, 4, 5))[1:],
    "cat": lambda t, d: t.cat([T(t, d), T(t, d)]),
    "where": lambda t, d: t.where(t.tensor([True, False]), T(t, d), T(t, d, (7, 8))),
    "maximum": lambda t, d: t.maximum(T(t, d), T(t, d)),
    "copy_": lambda t, d: t.zeros(2, dtype=d).copy_(t.tensor([3, 4])),
    "promote_i64": lambda t, d: T(t, d) + t.tensor([1]),
    "promote_u8": lambda t, d: T(t, d) * t.tensor([1, 1], dtype=t.uint8),
    "promote_f32": lambda t, d: T(t, d) + t.tensor([1.0]),
    "eq_i64": lambda t, d: T(t, d) == t.tensor([1, 1]),
    "item": lambda t, d: t.tensor([t.iinfo(d).max], dtype=d).item(),
    "repr": lambda t, d: repr(T(t, d)),
    "unique": lambda t, d: T(t, d, (1, 2, 1)).unique(),
    "pow": lambda t, d: T(t, d) ** 2,
    "iinfo": lambda t, d: (t.iinfo(d).max, t.iinfo(d).min, t.iinfo(d).bits),
    "gcd": lambda t, d: t.gcd(T(t, d), T(t, d)),
    "masked_fill": lambda t, d: T(t, d).masked_fill(t.tensor([True, False]), 5),
    "equal": lambda t, d: t.equal(T(t, d), T(t, d)),
    "allclose": lambda t, d: t.allclose(T(t, d), T(t, d)),
    "gather": lambda t, d: T(t, d).gather(0, t.tensor([1, 0])),
    "index_select": lambda t, d: T(t, d).index_select(0, t.tensor([1])),
    "isclose": lambda t, d: t.isclose(T(t, d), T(t, d)),
    "contig": lambda t, d: T(t, d).reshape(2, 1).t().contiguous(),
    "expand": lambda t, d: T(t, d)[:1].expand(3),
    "masked_select": lambda t, d: T(t, d).masked_select(t.tensor([True, False])),
    "isin": lambda t, d: t.isin(T(t, d), T(t, d)),
    "tril": lambda t, d: T(t, d).reshape(1, 2).tril(),
    "searchsorted": lambda t, d: t.searchsorted(T(t, d), T(t, d)),
    "and_scalar": lambda t, d: T(t, d) & 1,
    "mul_scalar": lambda t, d: T(t, d) * 2,
    "div_scalar": lambda t, d: T(t, d) / 2,
    "to_i64": lambda t, d: T(t, d).to(t.int64),
    "sort_desc": lambda t, d: T(t, d).sort(descending=True).values,
    "mul_": lambda t, d: T(t, d).mul_(T(t, d)),
    "add_": lambda t, d: T(t, d).add_(T(t, d)),
    "bitand_": lambda t, d: T(t, d).bitwise_and_(T(t, d)),
    "logical_and": lambda t, d: t.logical_and(T(t, d), T(t, d)),
    "logical_not": lambda t, d: t.logical_not(T(t, d)),
    "mul_f": lambda t, d: T(t, d) * 1.5,
    "eq_f": lambda t, d: T(t, d) == 1.5,
    "lt_scalar": lambda t, d: T(t, d) < 2,
    "ne": lambda t, d: T(t, d) != T(t, d),
    "scatter": lambda t, d: t.zeros(2, dtype=d).scatter(0, t.tensor([1, 0]), T(t, d)),
    "index_add": lambda t, d: T(t, d).index_add(0, t.tensor([0]), T(t, d)[:1]),
    "take": lambda t, d: T(t, d).take(t.tensor([1])),
    "stack": lambda t, d: t.stack([T(t, d), T(t, d)]),
    "zeros_like": lambda t, d: t.zeros_like(T(t, d)),
    "ones_like": lambda t, d: t.ones_like(T(t, d)),
    "full_like": lambda t, d: t.full_like(T(t, d), 3),
    "sum_dtype": lambda t, d: T(t, d).sum(dtype=t.float64),
    "setitem": lambda t, d: (lambda x: (x.__setitem__(0, 5), x)[1])(T(t, d)),
    "randint": lambda t, d: t.randint(0, 5, (3,), dtype=d).shape,
    "numpy": lambda t, d: T(t, d).numpy().dtype.name,
    "promote_types": lambda t, d: t.promote_types(d, t.float32),
    "promote_types_err": lambda t, d: t.promote_types(d, t.int32),
    "result_type": lambda t, d: t.result_type(T(t, d), 1),
    "can_cast": lambda t, d: t.can_cast(d, t.int64),
    "empty_like": lambda t, d: t.empty_like(T(t, d)).dtype,
    "rand_like": lambda t, d: t.randint_like(T(t, d), 3).dtype,
    "finfo": lambda t, d: t.finfo(d),
    **{key: _method(name, *args) for key, name, *args in METHOD_CALLS},
}


def _outcome(lib, name, dtype_name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            result = str(PROGRAMS[name](lib, getattr(lib, dtype_name)))
        except Exception as error:  # noqa: BLE001 - compared with torch's
            result = f"{type(error).__name__}: {error}"
    return result.replace("torch.", "gradkit.")


@pytest.mark.parametrize("dtype_name", ["uint16", "uint32", "uint64"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_wide_unsigned_as_torch(name, dtype_name):
    assert _outcome(gradkit, name, dtype_name) == _outcome(torch, name, dtype_name)


@pytest.mark.parametrize(
    "data, dtype_name",
    [
        ([-1], "uint16"),
        ([2**40], "uint32"),
        ([-1], "uint64"),
        ([2**64 - 1], "uint64"),
        ([1.5], "uint16"),
        ([2**64 - 1], "int64"),
    ],
)
def test_creation_from_python_numbers_as_torch(data, dtype_name):
    def program(lib):
        return lib.tensor(data, dtype=getattr(lib, dtype_name)).tolist()

    outcomes = []
    for lib in (gradkit, torch):
        try:
            outcomes.append(program(lib))
        except Exception as error:  # noqa: BLE001 - compared with torch's
            outcomes.append((type(error).__name__, str(error)))
    assert outcomes[0] == outcomes[1]


def test_in_place_ops_refuse_or_write_as_torch():
    x = gradkit.tensor([1, 2], dtype=gradkit.uint32)
    x.mul_(gradkit.tensor([3, 3], dtype=gradkit.uint32))
    x[0] = 7
    assert x.tolist() == [7, 6] and x._version == 2
    with pytest.raises(NotImplementedError, match="\"add_stub\" not implemented for 'UInt32'"):
        x.add_(1)
    with pytest.raises(NotImplementedError, match="\"lt_cpu\" not implemented for 'UInt32'"):
        _ = x < 3


def test_saved_and_compared_with_the_testing_helpers():
    x = gradkit.tensor([1, 2, 65535], dtype=gradkit.uint16)
    buffer = io.BytesIO()
    gradkit.save({"x": x}, buffer)
    buffer.seek(0)
    loaded = gradkit.load(buffer)["x"]
    assert loaded.dtype is gradkit.uint16 and loaded.tolist() == [1, 2, 65535]
    gradkit.testing.assert_close(loaded, x)
    messages = []
    for lib in (gradkit, torch):
        with pytest.raises(AssertionError) as error:
            lib.testing.assert_close(
                lib.tensor([1, 2], dtype=lib.uint16), lib.tensor([1, 5], dtype=lib.uint16)
            )
        messages.append(str(error.value))
    assert messages[0] == messages[1]
    made = gradkit.testing.make_tensor(50, dtype=gradkit.uint64, device="cpu")
    assert made.dtype is gradkit.uint64 and 0 <= min(made.tolist()) and max(made.tolist()) <= 9


def test_names_of_the_types_as_torch():
    for name in ("uint16", "uint32", "uint64"):
        ours, theirs = getattr(gradkit, name), getattr(torch, name)
        assert repr(ours) == repr(theirs).replace("torch.", "gradkit.")
        assert gradkit.ones(1, dtype=ours).type() == torch.ones(1, dtype=theirs).type().replace(
            "torch.", "gradkit."
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert gradkit.ones(1, dtype=ours).storage().type() == torch.ones(
                1, dtype=theirs
            ).storage().type().replace("torch.", "gradkit.")
        assert (
            not ours.is_floating_point and not ours.is_signed and ours.itemsize == theirs.itemsize
        )
