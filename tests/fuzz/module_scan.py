"""Run torch's module table (ModuleInfo) through gradkit and torch; print differences.

    python tests/fuzz/module_scan.py [--dtypes float64,float32] [--only Conv2d,LSTM]

Needs torch (the pinned 2.13 CPU build); see ``module_samples.py``. Each module is checked in
training and in eval mode (random modules in eval mode only), at each dtype torch's table lists
for it (``ModuleInfo.dtypes``); dtypes gradkit has not are skipped and named. Exits 1 when any
input differs.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import gradkit  # noqa: E402
from fuzz.module_samples import (  # noqa: E402
    RANDOM_IN_TRAINING, compare_module_input, gradkit_class, module_db, torch)
from fuzz.opinfo_scan import parse_scan_args, report, scan_parser, verdict  # noqa: E402


def scan(only: set, dtypes: list, show: int) -> tuple[int, int]:
    total = bad = 0
    for info in module_db:
        name = info.module_cls.__name__
        if (only and name not in only) or gradkit_class(info) is None:
            continue
        for dtype in dtypes:
            if dtype not in info.dtypes:  # torch's table does not test the module there
                continue
            for training in (False, True):
                if training and name in RANDOM_IN_TRAINING:
                    continue
                try:
                    inputs = list(info.module_inputs_func(info, device="cpu", dtype=dtype,
                                                          requires_grad=True, training=training))
                except Exception:  # noqa: BLE001 - torch's own table fails for this dtype
                    continue
                total += len(inputs)
                bad += report(
                    f"{name} [{str(dtype)[6:]} {'train' if training else 'eval'}", inputs,
                    lambda m, i=info, d=dtype, t=training: compare_module_input(i, m, d, t),
                    show, lambda m: f"constructor: {m.constructor_input.args} "
                                    f"{m.constructor_input.kwargs}")
    return total, bad


def present_dtypes(names: list) -> tuple[list, list]:
    """torch's dtypes of these names gradkit has, and the names it has not (bfloat16 without
    ml_dtypes, complex32): those are skipped, and said so."""
    absent = [d for d in names if not hasattr(gradkit, d)]
    return [getattr(torch, d) for d in names if d not in absent], absent


def main() -> int:
    args, only = parse_scan_args(
        scan_parser(__doc__, "float64", "module class names", "module"))
    dtypes, absent = present_dtypes(args.dtypes.split(","))
    if absent:
        print(f"skipped, gradkit has no {', '.join(absent)}")
    return verdict(*scan(only, dtypes, args.show), "module inputs")


if __name__ == "__main__":
    sys.exit(main())
