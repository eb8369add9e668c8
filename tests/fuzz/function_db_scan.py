"""Run torch's table of custom autograd Functions (``autograd_function_db``) through gradkit and
torch; print differences.

    python tests/fuzz/function_db_scan.py [--dtypes float64,float32]

Each Function (NumpyCube, NumpySort with mark_non_differentiable, NumpyExp_ with mark_dirty,
once_differentiable, jvp rules, ``setup_context``, defaults in ``forward``...) runs as gradkit's
twin (function_twins.py: the same code over gradkit) on torch's samples: outputs and
gradients, the in-place variant, forward-mode tangents and their gradients, and second
derivatives, where torch's table says the Function supports them. Exits 1 when any differs.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fuzz.opinfo_forward import compare_forward  # noqa: E402
from fuzz.opinfo_gradgrad import compare_gradgrad  # noqa: E402
from fuzz.opinfo_samples import compare_sample, torch  # noqa: E402
from fuzz.opinfo_scan import parse_scan_args, scan_parser, verdict  # noqa: E402
from torch.testing._internal.autograd_function_db import autograd_function_db  # noqa: E402


def checks(opinfo) -> dict:
    """What torch's table says holds for this Function: name -> compare(sample)."""
    found = {"values and gradients": lambda s: compare_sample(opinfo, "op", s, True)}
    if opinfo.inplace_variant is not None:
        found["in place"] = lambda s: compare_sample(opinfo, "inplace", s, False)
    if opinfo.supports_forward_ad:
        found["forward mode"] = lambda s: compare_forward(opinfo, s, fwbw=True)
    if opinfo.supports_gradgrad:
        found["second derivatives"] = lambda s: compare_gradgrad(opinfo, s)
    return found


def differences(opinfo, dtype) -> list:
    """``(check, sample index, difference)`` of every sample of ``opinfo`` at ``dtype``."""
    found = []
    samples = list(opinfo.sample_inputs("cpu", dtype, requires_grad=True))
    for name, compare in checks(opinfo).items():
        for k, sample in enumerate(samples):
            difference = compare(sample)
            if difference:
                found.append((name, k, difference))
    return found


def main() -> int:
    args, only = parse_scan_args(scan_parser(__doc__, "float64", "Function names", "Function"))
    total = bad = 0
    for dtype in (getattr(torch, d) for d in args.dtypes.split(",")):
        for opinfo in autograd_function_db:
            if only and opinfo.name not in only:
                continue
            total += 1
            found = differences(opinfo, dtype)
            bad += bool(found)
            for name, k, difference in found[:args.show]:
                print(f"{opinfo.name} [{str(dtype)[6:]}] {name} #{k}: {difference}")
    return verdict(total, bad, "Functions x dtypes")


if __name__ == "__main__":
    sys.exit(main())
