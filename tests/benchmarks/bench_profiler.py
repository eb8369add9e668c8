"""Cost of the profiler, for gradkit and (if installed) torch.profiler on the same workloads.

Workloads (tests/benchmarks/workloads.py): ``chain`` = 1000 tiny ops on shape (16,) with
backward; ``mlp`` = one MLP step 784-1024-1024-10, batch 256, relu + cross-entropy.
Ratios against the plain step, measured in one run (plain and profiled rounds
interleaved, best of repeats, in CPU time of this process so that other load on a
shared machine does not count; BLAS and torch run on one thread so that CPU time is
the work of one core):

- in-session: a step inside an open profile (off = profile in a schedule's wait phase,
  defaults, record_shapes+profile_memory);
- end-to-end: enter the profile, one step, exit, export the Chrome trace;
- bytes per event of the exported trace.

Targets for gradkit: off <= 1.02x (MLP); defaults <= 1.2x (chain), <= 1.02x (MLP);
shapes+memory <= 1.5x (chain); end-to-end <= 2x (chain); bytes/event below PyTorch's.

    python tests/benchmarks/bench_profiler.py [--repeats 20]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # one BLAS thread: CPU time then measures one core's work

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from workloads import (  # noqa: E402
    chain_step, interleaved_best, mlp_data, mlp_params, mlp_step, try_import_torch)


def _workloads(lib):
    rng = np.random.default_rng(0)
    params = mlp_params(lib, rng)
    x, y = mlp_data(rng, 256)
    x, y = lib.tensor(x), lib.tensor(y)
    chain_x = lib.tensor(rng.standard_normal(16).astype("float32"), requires_grad=True)
    return {"chain": lambda: chain_step(lib, chain_x),
            "mlp": lambda: mlp_step(lib, params, x, y)}


def _end_to_end(make_profile, step, path: str) -> float:
    start = time.process_time()
    with make_profile() as prof:
        step()
    prof.export_chrome_trace(path)
    return time.process_time() - start


def _trace_stats(path: str) -> tuple[int, float]:
    size = os.path.getsize(path)
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    return len(events), size / max(len(events), 1)


def measure(lib, profiler, repeats: int, inner: dict, configs: dict) -> dict:
    results = {}
    tmp = tempfile.mkdtemp()
    for name, step in _workloads(lib).items():
        best = interleaved_best(step, configs, repeats, inner[name])
        plain = best.pop("plain")
        row = {"plain_ms": plain * 1e3, **{label: t / plain for label, t in best.items()}}
        path = os.path.join(tmp, f"{name}.json")
        end = min(_end_to_end(configs["defaults"], step, path) for _ in range(repeats))
        row["end_to_end"] = end / plain
        row["events"], row["bytes_per_event"] = _trace_stats(path)
        results[name] = row
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    inner = {"chain": 3, "mlp": 3}

    import gradkit
    from gradkit import profiler
    gradkit_configs = {
        "off": lambda: profiler.profile(schedule=profiler.schedule(wait=10 ** 6, warmup=0,
                                                                   active=1)),
        "defaults": lambda: profiler.profile(),
        "shapes+memory": lambda: profiler.profile(record_shapes=True, profile_memory=True),
    }
    report = {"gradkit": measure(gradkit, profiler, args.repeats, inner, gradkit_configs)}
    torch = try_import_torch()
    if torch is not None:
        torch.set_num_threads(1)
        tp = torch.profiler
        torch_configs = {
            "defaults": lambda: tp.profile(activities=[tp.ProfilerActivity.CPU]),
            "shapes+memory": lambda: tp.profile(activities=[tp.ProfilerActivity.CPU],
                                                record_shapes=True, profile_memory=True),
        }
        report["torch"] = measure(torch, tp, max(3, args.repeats // 2), inner, torch_configs)
    for lib, rows in report.items():
        for workload, row in rows.items():
            cells = "  ".join(f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}"
                              for k, v in row.items())
            print(f"{lib:8s} {workload:6s} {cells}")
    print(json.dumps(report))


if __name__ == "__main__":
    main()
