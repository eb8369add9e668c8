"""Forward-mode AD against torch's op table: each OpInfo sample, every floating input dual.

    python tests/fuzz/opinfo_forward.py [--dtypes float64,complex128] [--only gather,...]
                                        [--fwbw] [--show 2]

For each op whose ``OpInfo.supports_forward_ad`` holds, every input tensor torch's sampler
made differentiable gets a random tangent (the same in both libraries); the op runs under
``forward_ad.dual_level`` in gradkit and torch 2.13 and the primal outputs and their
tangents are compared (values, None-ness, dtypes, errors). With ``--fwbw``, where
``supports_fwgrad_bwgrad`` holds, the reverse-mode gradient of a random weighted sum of the
tangents (reverse-over-forward) is compared too; ``KNOWN`` lists where torch is wrong.
Exits 1 when any sample differs.
"""
from __future__ import annotations

import functools
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import gradkit  # noqa: E402
import gradkit.autograd.forward_ad as gradkit_fwad  # noqa: E402
from fuzz.opinfo_samples import (  # noqa: E402
    _flat, _variant, compare_gradients, fresh_leaves, gradkit_callable, reading_gradkit, run_both,
    to_gradkit, torch)
from fuzz.opinfo_scan import (  # noqa: E402
    _selected, draw_samples, parse_scan_args, report, scan_parser, verdict)

import torch.autograd.forward_ad as torch_fwad  # noqa: E402


def _swap(value, duals: dict):
    """``value`` with each tensor found in ``duals`` (by id) replaced by its dual."""
    if id(value) in duals:
        return duals[id(value)]
    if isinstance(value, (list, tuple)) and not isinstance(value, torch.Size):
        return type(value)(_swap(v, duals) for v in value)
    if isinstance(value, dict):
        return {k: _swap(v, duals) for k, v in value.items()}
    return value


def _tangents(leaves: list, seed: int) -> list:
    """One random tangent (a NumPy array of the input's shape and dtype) per input."""
    rng = np.random.default_rng(seed)
    out = []
    for t, _ in leaves:
        shape = tuple(t.shape)
        value = rng.standard_normal(shape)
        if t.dtype.is_complex:
            value = value + 1j * rng.standard_normal(shape)
        out.append(value.astype(str(t.dtype).split(".")[1]))
    return out


def _dual_call(lib, fwad, f, inputs: tuple, primals: list, tangents: list):
    """``f(*inputs)`` with each of ``primals`` dual; its outputs and their tangents, flat."""
    with fwad.dual_level():
        duals = {id(p): fwad.make_dual(p, lib.tensor(t)) for p, t in zip(primals, tangents)}
        x, args, kwargs = (_swap(v, duals) for v in inputs)
        outs = _flat(f(x, *args, **kwargs))
        return outs + [fwad.unpack_dual(o).tangent if isinstance(o, lib.Tensor) else None
                       for o in outs]


# torch's gradcheck runs these ops through its wrapper (a triangular or Hermitian input made
# from the sample's): the op's tangent assumes that structure (torch's triangular_solve and
# cholesky_inverse push a full tangent where the value reads one triangle)
_WRAPPERS = ("gradcheck_wrapper_hermitian_input", "gradcheck_wrapper_triangular_input",
             "gradcheck_wrapper_triangular_input_real_positive_diagonal")


def _wrapped(opinfo, torch_f, gradkit_f) -> tuple:
    wrapper = opinfo.gradcheck_wrapper
    if getattr(wrapper, "__name__", "") not in _WRAPPERS:
        return torch_f, gradkit_f
    return (functools.partial(wrapper, torch_f),
            functools.partial(reading_gradkit(wrapper), gradkit_f))


# where gradkit's tangent is right and torch's is not (checked by finite differences)
KNOWN = {
    # torch's jvp pushes the whole tangent of A, though the value reads one triangle
    "triangular_solve": "tangent",
    # torch's jvp is far from finite differences and its own jacrev off the identity (the
    # table's samples are near it: 8e-6); its logcumsumexp jvp underflows (1e-6, NaN)
    "cholesky_inverse": "tangent", "logcumsumexp": "tangent",
    # torch's tangent reads the first zero as a constant: the gradient of it is NaN there
    "cumprod": "fwbw",
    # torch's tangent formulas read saved results (LU, mean, rstd) as constants, so the
    # gradient of the tangent misses their dependence on the input
    "linalg.det": "fwbw", "logdet": "fwbw", "linalg.slogdet": "fwbw", "linalg.solve": "fwbw",
    "linalg.solve_ex": "fwbw", "linalg.tensorsolve": "fwbw", "linalg.householder_product": "fwbw",
    "nn.functional.layer_norm": "fwbw",
    "native_batch_norm": "fwbw", "nn.functional.batch_norm": "fwbw",
    "nn.functional.instance_norm": "fwbw",
}


def compare_forward(opinfo, sample, fwbw: bool = False, seed: int = 0) -> str | None:
    """One sample's primal outputs and tangents in torch and gradkit: None when they agree,
    else how they differ (``tangent[i]`` names output i's tangent)."""
    gradkit_f = gradkit_callable(opinfo, "op")
    if gradkit_f is None:
        return None
    torch_f, gradkit_f = _wrapped(opinfo, _variant(opinfo, "op"), gradkit_f)
    inputs = tuple(fresh_leaves(v) for v in (sample.input, sample.args, sample.kwargs))
    leaves: list = []
    ginputs = tuple(to_gradkit(v, leaves) for v in inputs)
    if not leaves:
        return None
    tangents = _tangents(leaves, seed)
    torch_leaves, gradkit_leaves = (list(side) for side in zip(*leaves))
    found, tout, gout = run_both(
        lambda: _dual_call(torch, torch_fwad, torch_f, inputs, torch_leaves, tangents),
        lambda: _dual_call(gradkit, gradkit_fwad, gradkit_f, ginputs, gradkit_leaves, tangents),
        _label)
    if found or tout is None or not fwbw or not opinfo.supports_fwgrad_bwgrad or \
            KNOWN.get(opinfo.name) == "fwbw":
        return found
    half = len(tout) // 2
    wrong = compare_gradients(tout[half:], gout[half:], torch_leaves, gradkit_leaves)
    return wrong and f"reverse-over-forward: {wrong}"


def _label(i: int, n: int) -> str:
    """The flat results are the outputs, then their tangents."""
    return f"out[{i}]" if i < n // 2 else f"tangent[{i - n // 2}]"


def differing_forward(opinfo, dtypes, fwbw: bool = False) -> list:
    """Each sample of ``opinfo`` at each dtype whose forward mode differs from torch's, as
    ``"<dtype> #<k>: <difference>"``."""
    differing = []
    for dtype in dtypes:
        torch.manual_seed(0)
        for k, sample in enumerate(opinfo.sample_inputs("cpu", dtype, requires_grad=True)):
            found = compare_forward(opinfo, sample, fwbw)
            if found:
                differing.append(f"{str(dtype)[6:]} #{k}: {found}")
    return differing


def scan(only: set, dtypes: list, fwbw: bool, show: int, chunk: str) -> tuple[int, int]:
    k, n = (int(v) for v in chunk.split("/"))
    ops = [o for o in _selected(only)
           if o.supports_forward_ad and KNOWN.get(o.name) != "tangent"]
    total = bad = 0
    for opinfo in ops[(k - 1) * len(ops) // n:k * len(ops) // n]:
        for dtype in dtypes:
            if dtype not in opinfo.supported_dtypes("cpu"):
                continue
            samples = draw_samples(opinfo, dtype)
            total += len(samples)
            bad += report(f"{opinfo.name}.{opinfo.variant_test_name} [{str(dtype)[6:]}",
                          samples, lambda s, o=opinfo: compare_forward(o, s, fwbw), show,
                          lambda s: f"sample: {s.summary()}")
    return total, bad


def main() -> int:
    parser = scan_parser(__doc__, "float64,complex128", "OpInfo names", "op")
    parser.add_argument("--chunk", default="1/1", help="k/n: the k-th of n slices of the ops")
    parser.add_argument("--fwbw", action="store_true", help="forward-over-reverse too")
    args, only = parse_scan_args(parser)
    dtypes = [getattr(torch, d) for d in args.dtypes.split(",")]
    return verdict(*scan(only, dtypes, args.fwbw, args.show, args.chunk), "samples")


if __name__ == "__main__":
    sys.exit(main())
