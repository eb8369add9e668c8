"""Small torch divergences, each checked against torch 2.13 on the same program."""

import pytest

from tests.tensor_twins import same_as_torch

# Python numbers just outside a dtype's range, huge ints (torch reads an int as int64, then
# uint64, and lets Python's OverflowError through past that), floats, inf and NaN
OUT_OF_RANGE = [-1, -9, -129, 256, 300, -256, 2 ** 63 - 1, 2 ** 63, 2 ** 64, -2 ** 63 - 1,
                1.5, -1.5, 300.7, 70000.0, float("inf"), float("nan")]
DTYPES = ["int8", "uint8", "int16", "int32", "int64", "bool", "float16", "float32"]
FILLS = {
    "full": lambda m, d, v: m.full((2,), v, dtype=d),
    "full_one": lambda m, d, v: m.full((1,), v, dtype=d),  # (float16 unchecked there)
    "full_like": lambda m, d, v: m.full_like(m.zeros(2, dtype=d), v),
    "new_full": lambda m, d, v: m.zeros(2, dtype=d).new_full((2,), v),
    "fill_": lambda m, d, v: m.zeros(2, dtype=d).fill_(v),
    "masked_fill": lambda m, d, v: m.zeros(2, dtype=d).masked_fill(m.tensor([True, False]), v),
    "index_fill": lambda m, d, v: m.zeros(2, dtype=d).index_fill(0, m.tensor([0]), v),
    "scalar_tensor": lambda m, d, v: m.scalar_tensor(v, dtype=d),
    "setitem": lambda m, d, v: _setitem(m.zeros(2, dtype=d), v),
    "add_": lambda m, d, v: m.zeros(2, dtype=d).add_(v),
    "mul": lambda m, d, v: m.ones(2, dtype=d) * v,
    "eq": lambda m, d, v: m.zeros(2, dtype=d) == v,
    "where": lambda m, d, v: m.where(m.tensor([True, False]), m.zeros(2, dtype=d), v),
    "tensor": lambda m, d, v: m.tensor([v], dtype=d),
}


def _setitem(t, value):
    t[0] = value
    return t


@pytest.mark.parametrize("name", FILLS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_out_of_range_numbers_as_torch(name, dtype):
    """Each number gives torch's value (-9 into uint8 is 247) or torch's error."""
    fill = FILLS[name]
    same_as_torch(lambda m: [_outcome(fill, m, getattr(m, dtype), v) for v in OUT_OF_RANGE])


def _outcome(fill, m, dtype, value):
    try:
        return fill(m, dtype, value)
    except (RuntimeError, OverflowError, ValueError, TypeError) as error:
        return type(error).__name__, str(error)


def test_uint8_full_like_wraps_a_negative():
    gradkit = pytest.importorskip("gradkit")
    out = gradkit.full_like(gradkit.zeros(2, dtype=gradkit.uint8), -9)
    assert out.tolist() == [247, 247]
    with pytest.raises(RuntimeError, match="cannot be converted to type uint8_t without overflow"):
        gradkit.full((2,), 256, dtype=gradkit.uint8)
    with pytest.raises(OverflowError, match="int too big to convert"):
        gradkit.full((2,), 2 ** 64)
    with pytest.raises(OverflowError, match="can't convert negative int to unsigned"):
        gradkit.zeros(2).add_(-2 ** 63 - 1)
