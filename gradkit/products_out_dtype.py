"""``torch.mm/bmm/addmm/baddbmm(..., out_dtype)``: torch 2.13's overloads that give the product
in another dtype (float32 from float16 operands). torch runs them on CUDA only; on the CPU every
call is its dispatcher's NotImplementedError, which gradkit gives too. On a GPU the product is
computed in ``out_dtype`` (cuBLAS's float32 accumulation), under torch's dtype rule."""
from __future__ import annotations

import functools

from gradkit import backend
from gradkit._tensor import Tensor
from gradkit.int_arguments import invalid_combination
from gradkit.ops.keywords import ALIAS_KEYWORDS

_MIXED = ("float16", "bfloat16")  # the dtypes whose product may be asked in float32


def takes_out_dtype(product, names: tuple):
    """``product`` (a top-level function of the tensors ``names``, then its keywords) with
    torch's ``out_dtype`` overload: the argument after the tensors, or ``out_dtype=``. torch's
    function being overloaded, an unknown keyword is its invalid combination of arguments."""
    name, operands = product.__name__, len(names)
    known = frozenset(names) | {"out_dtype", "beta", "alpha"} | ALIAS_KEYWORDS

    @functools.wraps(product)
    def call(*args, **kwargs):
        if not known.issuperset(kwargs) or operands == 2 and {"beta", "alpha"} & set(kwargs):
            raise invalid_combination(name, args, kwargs)
        if len(args) <= operands and "out_dtype" not in kwargs or \
                args and not isinstance(args[0], Tensor):  # (the deprecated beta-first forms)
            return product(*args, **kwargs)
        out_dtype = args[operands] if len(args) > operands else kwargs["out_dtype"]
        if not isinstance(out_dtype, backend.dtype) or len(args) > operands + 1 or (
                len(args) > operands and "out_dtype" in kwargs):
            raise invalid_combination(name, args, kwargs)
        tensors = args[:operands]
        kwargs = {k: v for k, v in kwargs.items() if k != "out_dtype"}
        if not all(isinstance(t, Tensor) for t in tensors) or tensors[0].device.type == "cpu":
            raise NotImplementedError(
                f"Could not run 'aten::{name}.dtype' with arguments from the 'CPU' backend. This "
                "could be because the operator doesn't exist for this backend (torch has it "
                "on CUDA only).")
        mats = tensors[-2:]
        if mats[0].dtype != mats[1].dtype:
            raise RuntimeError("input dtypes must be the same")
        if out_dtype != mats[0].dtype and not (
                out_dtype == backend.float32 and mats[0].dtype.name in _MIXED):
            raise RuntimeError("out_dtype must be the same as input dtype or fp32 for fp16/bf16 "
                               "inputs")
        if operands == 3 and tensors[0].dtype not in (out_dtype, mats[0].dtype):
            raise RuntimeError("self dtype must match either out_dtype or mat1 dtype")
        return product(*(t.to(out_dtype) for t in tensors), **kwargs)
    return call
