"""Run torch's older nn test tables (common_nn) through gradkit and torch; print differences.

    python tests/fuzz/nn_table_scan.py [--only Conv2d,NLLLoss] [--show 0]

Needs torch (the pinned 2.13 CPU build); see ``nn_table_samples.py``. Each entry is checked
in eval and in training mode (modules with random draws in eval mode only) at the entry's own
dtype (``--dtypes`` is not read: each entry names its dtype). Exits 1 when any entry differs.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fuzz.nn_table_samples import compare_entry, entries, random_in_training  # noqa: E402
from fuzz.opinfo_scan import parse_scan_args, scan_parser, verdict  # noqa: E402


def scan(only: set, show: int) -> tuple[int, int]:
    total = bad = 0
    for name, entry, criterion in entries():
        if only and not any(name.startswith(o) for o in only):
            continue
        for training in (False, True):
            if training and random_in_training(name):
                continue
            total += 1
            found = compare_entry(entry, criterion, training)
            if found:
                bad += 1
                if show:
                    print(f"{name} [{'train' if training else 'eval'}]: {found}")
    return total, bad


def main() -> int:
    parser = scan_parser(__doc__, "float64", "entry name prefixes", "entry (0: count only)")
    args, only = parse_scan_args(parser)
    return verdict(*scan(only, args.show), "table entries")


if __name__ == "__main__":
    sys.exit(main())
