"""Long differential fuzz run: random programs in gradkit and PyTorch, every mismatch reported.

    python tests/fuzz/run_fuzz.py --programs 20000 [--start 0] [--max-report 20]

Program k is generated from seed ``start + k``; a mismatch prints its seed and
source, so ``--start SEED --programs 1`` replays it. Exits 1 when any program
disagrees with torch.
"""
from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fuzz.programs import RandomDrawer, diff_program, generate  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=20000)
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--max-report", type=int, default=20,
                        help="print the source of at most this many mismatching programs")
    args = parser.parse_args(argv)
    began = time.perf_counter()
    mismatches = collections.Counter()
    reported = 0
    ops = collections.Counter()
    known = collections.Counter()
    for seed in range(args.start, args.start + args.programs):
        program = generate(RandomDrawer(seed))
        ops.update(step.op for step in program.steps)
        problems, known_as = diff_program(program)
        if known_as:
            known[known_as] += 1
        elif problems:
            mismatches[problems[0].split(":")[0] + " | " + " ".join(
                sorted({s.op for s in program.steps}))] += 1
            if reported < args.max_report:
                reported += 1
                print(f"--- mismatch, seed {seed}\n{program.source()}")
                print("\n".join(problems), flush=True)
    elapsed = time.perf_counter() - began
    print(f"\n{args.programs} programs, {sum(ops.values())} steps over {len(ops)} ops "
          f"in {elapsed:.1f} s; {sum(mismatches.values())} mismatching programs")
    for key, count in mismatches.most_common():
        print(f"  {count:6d}  {key}")
    print(f"{sum(known.values())} programs hit known, reported differences:")
    for key, count in known.most_common():
        print(f"  {count:6d}  {key}")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
