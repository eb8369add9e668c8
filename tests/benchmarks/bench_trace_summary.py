"""Peak memory and time of ``gradkit trace summary`` on a large trace of ours. Run:
python tests/benchmarks/bench_trace_summary.py [--mb 1024] [--keep DIR]

A few training steps of a small MLP are profiled as ``gradkit profile`` records them (shapes,
memory, modules, stacks), and their events are repeated, shifted in time with fresh flow ids,
sequence and pack numbers, into a trace of about ``--mb`` MB in a temporary directory. The summary
then runs in a child process; its peak RSS (``getrusage(RUSAGE_CHILDREN).ru_maxrss``) and wall
time are printed.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time

TEMPLATE_STEPS = 8


def _template_events(plain: bool = False) -> tuple[dict, list]:
    """The header fields and the events of a short profiled training run (``plain``: with
    ``gradkit profile``'s default options, so nearly all events are ops)."""
    import gradkit
    from gradkit import nn
    from gradkit.profiler import profile

    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
    optimizer = gradkit.optim.SGD(model.parameters(), lr=0.01)
    x, y = gradkit.randn(4, 8), gradkit.randn(4, 1)
    options = {} if plain else {"record_shapes": True, "profile_memory": True,
                                "with_modules": True, "with_stack": True}
    with profile(**options) as prof:
        for _ in range(TEMPLATE_STEPS):
            optimizer.zero_grad()
            loss = ((model(x) - y) ** 2).mean()
            loss.backward()
            optimizer.step()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "template.json")
        prof.export_chrome_trace(path)
        with open(path) as f:
            trace = json.load(f)
    return {k: v for k, v in trace.items() if k != "traceEvents"}, trace["traceEvents"]


def _shifted(event: dict, shift_us: float, step: int, ids: dict) -> dict:
    """``event`` of copy ``step``: later by ``step * shift_us``, with its own ids (flow ids,
    sequence and pack numbers: ``ids`` holds the template's count of each)."""
    event = dict(event, ts=round(event.get("ts", 0) + step * shift_us, 3))
    if event.get("cat") == "fwdbwd":
        event["id"] = event["id"] + step * ids["flows"]
    args = event.get("args")
    for key in ("Sequence number", "Pack"):
        if isinstance(args, dict) and key in args:
            event["args"] = args = dict(args, **{key: args[key] + step * ids[key]})
    return event


def write_trace(path: str, target_bytes: int, plain: bool = False) -> int:
    """Write a trace of ours of about ``target_bytes``; returns its number of events."""
    template: list = []  # recorded in a thread: its call stacks are short wherever we run
    worker = threading.Thread(target=lambda: template.append(_template_events(plain)))
    worker.start()
    worker.join()
    header, events = template[0]
    metadata = [e for e in events if e.get("ph") == "M"]
    body = [e for e in events if e.get("ph") != "M"]
    span = max(e.get("ts", 0) + e.get("dur", 0) for e in body) + 10.0
    ids = {"flows": max((e["id"] for e in body if e.get("cat") == "fwdbwd"), default=0) + 1}
    for key in ("Sequence number", "Pack"):
        ids[key] = max((e.get("args", {}).get(key, -1) for e in body), default=0) + 1
    count = 0
    with open(path, "w") as f:
        f.write(json.dumps(header)[:-1] + ', "traceEvents": [\n')
        f.write(",\n".join(json.dumps(e) for e in metadata))
        step = 0
        while f.tell() < target_bytes:
            f.write("".join(",\n" + json.dumps(_shifted(e, span, step, ids))
                            for e in body))
            count += len(body)
            step += 1
        f.write("\n]}\n")
    return count + len(metadata)


def run_summary(path: str) -> tuple[float, float, str]:
    """Peak RSS (MiB) and seconds of ``gradkit trace summary path`` in a child process."""
    began = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "gradkit", "trace", "summary",
                             "--no-color", path], capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - began
    if result.returncode != 0:
        raise SystemExit(f"trace summary failed ({result.returncode}):\n{result.stderr}")
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return peak_kib / 1024, seconds, result.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=1024, help="size of the trace, MB")
    parser.add_argument("--plain", action="store_true",
                        help="profile with the default options (ops only, no memory events)")
    parser.add_argument("--keep", metavar="DIR", help="write the trace here and keep it")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(args.keep or tmp, "big_trace.json")
        if not os.path.exists(path):
            began = time.perf_counter()
            events = write_trace(path, int(args.mb * 1e6), args.plain)
            print(f"wrote {events:,} events in {time.perf_counter() - began:.1f} s")
        size = os.path.getsize(path) / 1e6
        peak, seconds, _ = run_summary(path)
        print(f"trace summary of {size:.0f} MB: peak RSS {peak:.0f} MiB, {seconds:.1f} s")


if __name__ == "__main__":
    main()
