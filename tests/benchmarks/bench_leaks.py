"""Leak benchmark: 2,000 MLP training steps hold memory flat. Run:
python tests/benchmarks/bench_leaks.py [--steps 2000] [--warmup 100]

For each mode (plain, profiler cycling on a schedule, the same building key_averages() of
every cycle, anomaly mode) prints the growth of
tracemalloc's traced bytes and of the process RSS between the end of warm-up and the last step,
and the gc collections' garbage count (0: no reference cycles).
"""
from __future__ import annotations

import argparse
import contextlib
import gc
import resource
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from test_leaks import make_training  # noqa: E402

from gradkit.autograd import detect_anomaly  # noqa: E402
from gradkit.profiler import profile, schedule  # noqa: E402


def rss_kib() -> int:
    """Current resident set size (Linux /proc), KiB."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def measure(mode: str, steps: int, warmup: int) -> None:
    step = make_training(width=64)
    prof = None
    ctx = contextlib.nullcontext()
    if mode.startswith("profiler"):
        # "profiler+table" also builds key_averages() of every finished cycle
        handler = (lambda p: p.key_averages()) if mode == "profiler+table" else None
        prof = profile(profile_memory=True, schedule=schedule(wait=1, warmup=1, active=3),
                       on_trace_ready=handler)
        ctx = prof
    elif mode == "anomaly":
        ctx = detect_anomaly()
    gc.collect()
    gc.disable()  # nothing may depend on the cyclic GC
    tracemalloc.start()
    began = time.perf_counter()
    with ctx:
        for i in range(steps):
            step()
            if prof is not None:
                prof.step()
            if i == warmup:
                traced0, rss0 = tracemalloc.get_traced_memory()[0], rss_kib()
        traced1, peak = tracemalloc.get_traced_memory()
        rss1 = rss_kib()
    elapsed = time.perf_counter() - began
    tracemalloc.stop()
    gc.enable()
    garbage = gc.collect()
    print(f"{mode:14s} {steps} steps in {elapsed:6.1f} s: traced {traced1 - traced0:+8d} B "
          f"(peak {peak / 1024:7.0f} KiB), RSS {rss1 - rss0:+6d} KiB after warm-up, "
          f"cyclic garbage {garbage}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--warmup", type=int, default=1000,
                        help="steps before the first measurement (one-time caches fill)")
    args = parser.parse_args()
    for mode in ("plain", "profiler", "profiler+table", "anomaly"):
        measure(mode, args.steps, args.warmup)


if __name__ == "__main__":
    main()
