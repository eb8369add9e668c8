"""Instructions per step of the 1000-op chain under each observer, counted by callgrind.

Time on a shared machine scatters by a few per cent from run to run; instruction counts do
not, so they show what a change to the profiler or anomaly mode costs. Each configuration
runs in a fresh ``python`` under ``valgrind --tool=callgrind`` twice, with 1 and with 6
observed steps; the difference / 5 is one step (start-up and the session's set-up cancel).

    python tests/benchmarks/bench_instructions.py [plain defaults sm ...]

Needs valgrind (``apt install valgrind``); without it the script says so and exits 1.
"""
from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))


def _contexts() -> dict:
    import gradkit
    from gradkit import profiler
    from workloads import NoOpObserver

    return {"plain": contextlib.nullcontext,
            "noop": NoOpObserver,
            "defaults": profiler.profile,
            "shapes": lambda: profiler.profile(record_shapes=True),
            "memory": lambda: profiler.profile(profile_memory=True),
            "sm": lambda: profiler.profile(record_shapes=True, profile_memory=True),
            "anomaly": gradkit.autograd.detect_anomaly}


def _run_steps(config: str, steps: int) -> None:
    """The measured program: one plain step, then ``steps`` + 1 inside the context."""
    import numpy as np

    import gradkit
    from workloads import chain_step
    x = gradkit.tensor(np.random.default_rng(0).standard_normal(16).astype("float32"),
                       requires_grad=True)
    chain_step(gradkit, x)
    with _contexts()[config]():
        for _ in range(steps + 1):  # the first inside: the session's warm-up
            chain_step(gradkit, x)


def _instructions(config: str, steps: int) -> int:
    env = {**os.environ, "PYTHONHASHSEED": "0", "OPENBLAS_NUM_THREADS": "1"}
    out = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
         os.path.realpath(sys.executable), __file__, "--steps", str(steps), config],
        env=env, capture_output=True, text=True, check=True).stderr
    return int(re.search(r"Collected : (\d+)", out).group(1))


def main() -> None:
    args = sys.argv[1:]
    if args[:1] == ["--steps"]:
        _run_steps(args[2], int(args[1]))
        return
    configs = args or ["plain", "noop", "defaults", "shapes", "memory", "sm", "anomaly"]
    unknown = set(configs) - set(_contexts())
    if unknown:
        sys.exit(f"unknown configuration(s) {sorted(unknown)}; choose from {sorted(_contexts())}")
    if shutil.which("valgrind") is None:
        sys.exit("bench_instructions.py needs valgrind on PATH")
    per_step = {c: (_instructions(c, 6) - _instructions(c, 1)) / 5 for c in configs}
    plain = per_step.get("plain")
    for config, count in per_step.items():
        ratio = f"  {count / plain:.3f}x plain" if plain else ""
        print(f"{config:9s} {count / 1e6:8.2f} M instructions per step{ratio}")


if __name__ == "__main__":
    main()
