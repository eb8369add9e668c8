"""Run torch's older nn test tables (common_nn) through gradkit and torch; print differences.

    python tests/fuzz/nn_table_scan.py [--only Conv2d,NLLLoss] [--show 3]

Needs torch (the pinned 2.13 CPU build); see ``nn_table_samples.py``. Each entry is checked
in eval and in training mode (modules with random draws in eval mode only). Exits 1 when any
entry differs.
"""
from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fuzz.nn_table_samples import compare_entry, entries, random_in_training  # noqa: E402


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
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated entry name prefixes")
    parser.add_argument("--show", type=int, default=1, help="print differences (0: count)")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    total, bad = scan(set(args.only.split(",")) - {""}, args.show)
    print(f"{total} table entries, {bad} differing")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
