"""torch's "barebones" unsigned dtypes (uint16, uint32, uint64): which ops take them.

torch 2.13 gives these types a few CPU kernels only: creation and copies, views and indexing,
equality, ``&``, ``|``, ``^``, ``*``, sums and products (in int64), sorting, ``where`` and the
ops that compute in a floating type. Every other op refuses them, naming its kernel:
``"add_stub" not implemented for 'UInt16'``. Dispatch calls :func:`check` when an op's inputs
may hold such a type (an op with an integer or bool result; floating results are all allowed).
"""
from __future__ import annotations

from gradkit.ops.promotion import SCALAR_TYPE_NAMES, WIDE_UNSIGNED, result_type

# ops with a kernel for them (by Op.name); views are allowed too
ALLOWED = frozenset({
    "eq", "ne", "bitwise_and", "bitwise_or", "bitwise_xor", "mul", "sum", "prod", "cumsum",
    "cumprod", "nansum", "sort", "argsort", "unique", "unique_consecutive", "isnan", "isinf",
    "isfinite", "isposinf", "isneginf", "all", "any", "isclose", "clone", "astype", "to_device",
    "copy_from", "fill", "where", "cat", "stack", "repeat", "roll", "diag", "getitem",
    "setitem_", "floor", "ceil", "round", "trunc", "fix", "nan_to_num", "fill_diagonal_",
    "zeros_like_op", "ones_like", "contiguous", "diag_embed", "signbit", "real", "conj",
    "resolve_conj", "resolve_neg", "positive", "equal", "narrow_copy", "index",
    "index_put",  # x[i] = v: torch writes through a view there, its index_put_ refuses them
})

# ops that cast their value into self's dtype: only self's dtype needs a kernel
FILLS_IN_SELF_DTYPE = frozenset({"masked_fill", "index_fill"})

# torch's kernel names where they are not "<op>_cpu"
KERNELS = {
    "add": "add_stub", "sub": "add_stub", "rsub": "add_stub", "floor_divide": "div_floor_cpu",
    "max_all": "max_all", "min_all": "min_all", "amax": "max_values_cpu", "amin": "min_values_cpu",
    "max_dim": "max_cpu", "min_dim": "min_cpu", "bitwise_left_shift": "lshift_cpu",
    "bitwise_right_shift": "rshift_cpu", "matmul": "addmm_impl_cpu_", "mm": "addmm_impl_cpu_",
    "bmm": "bmm", "fmax": "maximum_cpu", "fmin": "minimum_cpu",  # integers: no NaN to skip
    "addcmul": "addcmul_cpu_out",
    "clamp": "clamp_scalar_cpu", "masked_fill": "masked_fill", "count_nonzero":
    "nonzero_count_cpu", "nonzero": "nonzero_count_cpu", "pow": "pow", "square": "pow",
    "gather": "scatter_gather_tensor_cpu", "scatter": "scatter_gather_tensor_cpu",
    "scatter_add": "scatter_gather_tensor_cpu", "index_select": "index_select",
    "index_put": "index_put", "masked_select": "masked_select", "isin": "isin_default_cpu",
    "tril": "tril", "triu": "triu", "searchsorted": "searchsorted_out_cpu",
    "index_add": "index_add_", "masked_scatter": "masked_scatter",
}


def check(op, arrays) -> None:
    """torch's NotImplementedError when ``op`` computes in uint16/32/64 and has no kernel for
    it. torch judges the dtype the op computes in: a 0-d uint16 tensor added to an int8 vector
    (or compared with a float) runs the int8 (float) kernel."""
    if op.view or op.name in ALLOWED:
        return
    if op.name == "pow" and type(arrays[-1]) in (int, bool) and arrays[-1] in (0, 1):
        return  # torch's pow(x, 0) and pow(x, 1) are ones and a copy, without its kernel
    if op.name in FILLS_IN_SELF_DTYPE:
        arrays = arrays[:1]
    dtype = next((a.dtype for a in arrays if getattr(a, "dtype", None) in WIDE_UNSIGNED), None)
    if dtype is None:
        return
    if len(arrays) > 1:
        try:
            common = result_type(*arrays)
        except (RuntimeError, TypeError):  # operands that do not promote together (indices)
            common = dtype
        if common not in WIDE_UNSIGNED:
            return
        dtype = common
    kernel = KERNELS.get(op.name, f"{op.name}_cpu")
    raise NotImplementedError(f'"{kernel}" not implemented for \'{SCALAR_TYPE_NAMES[dtype.name]}\'')
