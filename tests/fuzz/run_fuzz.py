"""Long differential fuzz run: random programs in gradkit and PyTorch, every mismatch reported.

    python tests/fuzz/run_fuzz.py --programs 20000 [--start 0] [--classes views,dtypes]
                                  [--max-report 20] [--shrink] [--jsonl mismatches.jsonl]

Program k is generated from seed ``start + k`` (its class is ``seed % number of classes``,
see ``programs.CLASSES``); a class of ``programs.SEEDED_CLASSES`` (``--classes breadth``,
``nn_new``) draws a program from every seed of the range instead. A mismatch prints its seed
and source, so ``--start SEED --programs 1`` (with its ``--classes``) replays it (``--shrink`` drops
steps that do not matter). Mismatches are counted by class and kind (values, grads, missing
error, ...). Exits 1 when any program disagrees with torch. torch itself can crash the
interpreter on a rare program (a segfault in ``register_hook`` was seen): rerun with
``--log-seeds`` to see the seed, then rerun the range with ``--skip SEED``.
"""
from __future__ import annotations

import argparse
import collections
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fuzz.known import diff_program  # noqa: E402
from fuzz.programs import (  # noqa: E402
    CLASS_NAMES, SEEDED_CLASSES, RandomDrawer, class_of, generate)
from fuzz.runner import problem_kind  # noqa: E402
from fuzz.shrink import shrink  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=20000)
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--classes", default=",".join(CLASS_NAMES),
                        help="comma-separated program classes to run (others are skipped; "
                             f"also: {', '.join(SEEDED_CLASSES)})")
    parser.add_argument("--max-report", type=int, default=20,
                        help="print the source of at most this many mismatching programs")
    parser.add_argument("--shrink", action="store_true", help="shrink reported programs")
    parser.add_argument("--jsonl", help="append one JSON line per mismatching program here")
    parser.add_argument("--log-seeds", action="store_true",
                        help="print each seed before running it (finds a seed that crashes "
                             "the interpreter: torch itself segfaults on some programs)")
    parser.add_argument("--skip", default="",
                        help="comma-separated seeds not to run (seeds that crash torch)")
    args = parser.parse_args(argv)
    skipped = {int(seed) for seed in args.skip.split(",") if seed}
    wanted = set(args.classes.split(","))
    began = time.perf_counter()
    ran, mismatches, known = collections.Counter(), collections.Counter(), collections.Counter()
    first_seed, reported = {}, 0
    seeded = [name for name in SEEDED_CLASSES if name in wanted]
    seeds = [s for s in range(args.start, args.start + args.programs) if s not in skipped]
    for seed, klass in ((s, k) for s in seeds for k in [class_of(s)] + seeded if k in wanted):
        if args.log_seeds:
            print(f"seed {seed}", flush=True)
        try:
            program = generate(RandomDrawer(seed), klass)
            problems, known_as = diff_program(program)
        except Exception as e:  # noqa: BLE001 - a harness bug must not end the long run
            print(f"--- harness error, seed {seed}: {type(e).__name__}: {e}", flush=True)
            ran["harness error"] += 1
            continue
        ran[program.klass] += 1
        if known_as:
            known[known_as] += 1
        if known_as or not problems:
            continue
        key = (program.klass, problem_kind(problems[0]))
        mismatches[key] += 1
        first_seed.setdefault(key, seed)
        if args.jsonl:
            with open(args.jsonl, "a") as out:
                out.write(json.dumps({"seed": seed, "class": key[0], "kind": key[1],
                                      "problem": problems[0][:400],
                                      "ops": sorted({s.op for s in program.steps})}) + "\n")
        if reported < args.max_report:
            reported += 1
            shown = shrink(program) if args.shrink else program
            print(f"--- mismatch, seed {seed}\n{shown.source()}")
            print("\n".join(diff_program(shown)[0])[:2000], flush=True)
    elapsed = time.perf_counter() - began
    total = sum(mismatches.values())
    print(f"\n{sum(ran.values())} programs in {elapsed:.1f} s; {total} mismatching programs")
    for klass in CLASS_NAMES + tuple(SEEDED_CLASSES) + ("harness error",):
        if ran[klass]:
            bad = sum(n for (c, _), n in mismatches.items() if c == klass)
            print(f"  {klass:9s} {ran[klass]:7d} programs, {bad:6d} mismatching")
    for (klass, kind), count in sorted(mismatches.items()):
        print(f"  {count:6d}  {klass:9s} {kind:15s} first seed {first_seed[klass, kind]}")
    print(f"{sum(known.values())} programs hit known, documented differences:")
    for key, count in known.most_common():
        print(f"  {count:6d}  {key}")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
