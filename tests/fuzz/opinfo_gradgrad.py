"""Second derivatives of torch's OpInfo samples, in gradkit and torch 2.13.

    python tests/fuzz/opinfo_gradgrad.py [--dtypes float64,complex128] [--only gather,mul]
                                         [--reference]

For each op whose table entry says ``supports_gradgrad`` and each of its samples:
``g = grad(sum(w * out), inputs, create_graph=True)`` then ``grad(sum(v * g), inputs)``, with
the same random ``w``, ``v`` in both libraries; the two results are compared (values, None
against zeros, dtypes, which one raises). ``compare_gradgrad`` compares one sample; the
first-order scan (``opinfo_scan.py``) reports forward and first-gradient differences, so a
sample whose forward or first gradient differs is not reported here. Exits 1 when any differs.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fuzz.opinfo_samples import (  # noqa: E402
    _weighted_sum, derivative_difference, fresh_leaves, gradkit, gradkit_callable,
    random_weights, run_both, to_gradkit, torch)
from fuzz.opinfo_scan import (  # noqa: E402
    _selected, parse_scan_args, report, scan_parser, timed_out, verdict)


def _differentiable(t) -> bool:
    return isinstance(t, torch.Tensor) and t.requires_grad and (
        t.dtype.is_floating_point or t.dtype.is_complex)


def _second(lib, firsts: list, weights: list, inputs: list):
    """``grad(sum(v * g), inputs)`` over the first derivatives that require grad; all None
    when none does (the first derivative is constant)."""
    live = [(g, v) for g, v in zip(firsts, weights) if g is not None and g.requires_grad]
    if not live:
        return [None] * len(inputs)
    total = _weighted_sum(lib, [g for g, _ in live], [v for _, v in live])
    return lib.autograd.grad(total, inputs, allow_unused=True)


def gradgrad_difference(tout: list, gout: list, torch_inputs: list,
                        gradkit_inputs: list) -> str | None:
    """How the first and second derivatives of a random weighted sum of the outputs differ."""
    pairs = [(t, g) for t, g in zip(tout, gout) if _differentiable(t)]
    if not pairs:
        return None
    rng = np.random.default_rng(0)
    w = random_weights(rng, [t for t, _ in pairs])
    names = [f"input {i}" for i in range(len(torch_inputs))]
    try:
        tg = torch.autograd.grad(_weighted_sum(torch, [t for t, _ in pairs], w), torch_inputs,
                                 allow_unused=True, create_graph=True)
        v = random_weights(rng, torch_inputs)  # a gradient has its input's shape and dtype
        expected = _second(torch, tg, v, torch_inputs)
    except Exception:  # noqa: BLE001 - torch refuses: gradkit may too
        return None
    try:
        gg = gradkit.autograd.grad(_weighted_sum(gradkit, [g for _, g in pairs], w),
                                   gradkit_inputs, allow_unused=True, create_graph=True)
        got = _second(gradkit, list(gg), v, gradkit_inputs)
    except Exception as e:  # noqa: BLE001
        return f"double backward: gradkit raises {type(e).__name__}: {str(e)[:100]}"
    if derivative_difference(names, tg, gg, "grad", 1e-7):
        return None  # the first-order scan's to report
    return derivative_difference(names, expected, got, "gradgrad", 1e-7)


def compare_gradgrad(opinfo, sample) -> str | None:
    """One sample's second derivatives in torch and gradkit: None when they agree."""
    gradkit_f = gradkit_callable(opinfo, "op")
    if gradkit_f is None:
        return None
    x, args, kwargs = (fresh_leaves(v) for v in (sample.input, sample.args, sample.kwargs))
    leaves: list = []
    gx, gargs, gkwargs = (to_gradkit(v, leaves) for v in (x, args, kwargs))
    found, tout, gout = run_both(lambda: opinfo.op(x, *args, **kwargs),
                                 lambda: gradkit_f(gx, *gargs, **gkwargs))
    if found or tout is None or not leaves:
        return None  # the first-order scan's to report
    torch_leaves, gradkit_leaves = zip(*leaves)
    return gradgrad_difference(tout, gout, list(torch_leaves), list(gradkit_leaves))


def gradgrad_samples(opinfo, dtype, reference: bool = False) -> list:
    """``opinfo``'s samples (``reference``: its reference inputs) at ``dtype``; none when
    torch's sampler fails for it."""
    torch.manual_seed(0)
    draw = opinfo.reference_inputs if reference else opinfo.sample_inputs
    try:
        return list(draw("cpu", dtype, requires_grad=True))
    except Exception:  # noqa: BLE001 - torch's own sampler fails for this dtype
        return []


def differing_gradgrad(opinfo, dtype, reference: bool = False) -> list:
    """Each sample (``reference``: reference input) of ``opinfo`` at ``dtype`` whose second
    derivatives differ."""
    samples = gradgrad_samples(opinfo, dtype, reference)
    found = [(k, compare_gradgrad(opinfo, s)) for k, s in enumerate(samples)]
    return [f"{str(dtype)[6:]} #{k}: {f}" for k, f in found if f]


def scan(only: set, dtypes: list, show: int, reference: bool = False) -> tuple[int, int]:
    total = bad = 0
    for opinfo in _selected(only):
        if not (opinfo.supports_autograd and opinfo.supports_gradgrad):
            continue
        for dtype in dtypes:
            if dtype not in opinfo.supported_dtypes("cpu"):
                continue
            samples = gradgrad_samples(opinfo, dtype, reference)
            total += len(samples)
            bad += report(f"{opinfo.name}.{opinfo.variant_test_name} [{str(dtype)[6:]}",
                          samples, lambda s, o=opinfo: compare_gradgrad(o, s), show,
                          lambda s: f"sample: {s.summary()}", seconds=30)
    return total, bad


def main() -> int:
    parser = scan_parser(__doc__, "float64,complex128", "OpInfo names", "op")
    parser.add_argument("--reference", action="store_true", help="torch's reference_inputs")
    args, only = parse_scan_args(parser)
    dtypes = [getattr(torch, d) for d in args.dtypes.split(",")]
    total, bad = scan(only, dtypes, args.show, args.reference)
    return verdict(total, bad, "samples", f", {len(timed_out)} stopped after 30 s")


if __name__ == "__main__":
    sys.exit(main())
