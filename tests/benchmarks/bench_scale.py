"""Scale benchmark: backward over 10^6 nodes, a profile of 10^6 events, chains with gc on. Run:
python tests/benchmarks/bench_scale.py [--nodes 1000000] [--events 1000000] [--chains 1000,...]

(a) a chain of N multiplications (every node saves a tensor): time to build, time of backward,
    peak RSS growth, and the gradient checked against its closed form;
(b) a profile of >= N events (forward ops + backward nodes): recording time, export time of the
    Chrome trace, its size, and the peak Python memory *during export* (tracemalloc) against the
    size of the JSON: the writer streams, so the peak stays far below the file size;
(c) chains of 10^3, 10^4 and 10^5 mul/add/sin ops on (16,) with the cyclic GC on (the user's
    setting, untouched), gradkit and PyTorch interleaved in one run: forward and backward µs per
    op, and each length's forward against the 10^3 one (GC-flat graphs keep it near 1.0x).
"""
from __future__ import annotations

import argparse
import gc
import os
import tempfile
import time
import tracemalloc

import numpy as np

import gradkit
from gradkit.profiler import profile
from workloads import try_import_torch


def peak_rss_mib() -> float:
    """The process's peak resident set size so far (VmHWM), MiB."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def reset_peak_rss() -> None:
    """Reset VmHWM to the current RSS (Linux >= 4.0), so the next peak is this phase's."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def bench_backward(nodes: int) -> None:
    gc.collect()
    reset_peak_rss()
    base = peak_rss_mib()
    factor = 1.0 + 1e-7
    x = gradkit.tensor([1.0, 2.0], dtype=gradkit.float64, requires_grad=True)
    began = time.perf_counter()
    y = x
    for _ in range(nodes):
        y = y * factor
    built = time.perf_counter() - began
    began = time.perf_counter()
    y.sum().backward()
    backward = time.perf_counter() - began
    peak = peak_rss_mib() - base
    del y
    expected = factor ** nodes
    assert np.allclose(x.grad.numpy(), expected, rtol=1e-9), (x.grad, expected)
    print(f"(a) chain of {nodes:,} MulBackward0 nodes: build {built:.2f} s "
          f"({built / nodes * 1e6:.2f} µs/op), backward {backward:.2f} s "
          f"({backward / nodes * 1e6:.2f} µs/node), peak RSS +{peak:.0f} MiB "
          f"({peak * 2**20 / nodes:.0f} B/node); grad = {expected:.6f} (closed form) ok")


def count_complete_events(path: str) -> int:
    """``"ph":"X"`` events in a trace, read in chunks (json.load would need GiBs here)."""
    needle, count, tail = b'"ph":"X"', 0, b""
    with open(path, "rb") as f:
        while chunk := f.read(1 << 24):
            block = tail + chunk
            count += block.count(needle)
            tail = block[-(len(needle) - 1):]  # too short to hold a match: none is counted twice
    return count


def bench_profile(events: int) -> None:
    x = gradkit.tensor([1.0, 2.0], dtype=gradkit.float64, requires_grad=True)
    steps = -(-events // 3)  # each step: a forward op, its backward node and the flow's pair
    began = time.perf_counter()
    with profile() as prof:
        y = x
        for _ in range(steps):
            y = y * 1.0
        y.sum().backward()
    recorded = time.perf_counter() - began
    del y
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "scale.json")
        gc.collect()
        began = time.perf_counter()
        prof.export_chrome_trace(path)
        export = time.perf_counter() - began
        size = os.path.getsize(path)
        # the same export again under tracemalloc, for the peak memory of writing alone
        # (the profiler's own records and events exist before export and are not counted)
        prof.events()
        gc.collect()
        tracemalloc.start()
        prof.export_chrome_trace(path)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        written = count_complete_events(path)
    print(f"(b) profile of {written:,} complete events (+ flows): record {recorded:.2f} s, "
          f"export {export:.2f} s, trace {size / 2**20:.0f} MiB; peak memory while writing "
          f"{peak / 2**20:.1f} MiB = {peak / size:.3f} x the file size (streamed)")


class _CollectionClock:
    """CPU time spent in the cyclic GC's collections while it is open (gc.callbacks)."""

    def __enter__(self):
        self.spent, self._start = 0.0, 0.0
        gc.callbacks.append(self._callback)
        return self

    def _callback(self, phase, info) -> None:
        if phase == "start":
            self._start = time.process_time()
        else:
            self.spent += time.process_time() - self._start

    def __exit__(self, *exc) -> None:
        gc.callbacks.remove(self._callback)


def _chain_us_per_op(lib, n_ops: int, repeat: int) -> tuple[float, float, float]:
    """Best forward and backward CPU µs per op of an n_ops chain (mul/add/sin) of lib, and
    the µs per op the GC's collections took in that best forward."""
    x = lib.tensor(np.full(16, 0.5, dtype="float32"), requires_grad=True)
    best_forward = best_backward = float("inf")
    collecting = 0.0
    for _ in range(repeat):
        with _CollectionClock() as clock:
            began = time.process_time()
            h = x
            for _ in range(n_ops // 3):
                h = (h * 0.999 + 0.001).sin()
            built = time.process_time()
        h.sum().backward()
        done = time.process_time()
        del h
        x.grad = None
        if built - began < best_forward:
            best_forward, collecting = built - began, clock.spent
        best_backward = min(best_backward, done - built)
    per_op = 1e6 / (n_ops // 3 * 3)
    return best_forward * per_op, best_backward * per_op, collecting * per_op


def bench_gc_chains(lengths, repeat: int) -> None:
    torch = try_import_torch()
    if torch is not None:
        torch.set_num_threads(1)
    print(f"(c) chains with the cyclic GC {'on' if gc.isenabled() else 'OFF'} "
          f"(forward / backward µs per op, best of {repeat}; GC: µs per op of the best forward "
          "spent in the cyclic GC's collections):")
    first = {}
    for n in lengths:
        line = f"    {n:>7,} ops:"
        for name, lib in (("gradkit", gradkit), ("torch", torch)):
            if lib is None:
                continue
            forward, backward, collecting = _chain_us_per_op(lib, n, repeat)
            first.setdefault(name, forward)
            line += (f"  {name} {forward:.2f} / {backward:.2f}"
                     f" (forward {forward / first[name]:.2f}x the {lengths[0]:,}-op one,"
                     f" GC {collecting:.2f})")
        print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1_000_000)
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--chains", default="1000,10000,100000",
                        help="chain lengths for (c), comma-separated (empty: no (c))")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only-chains", action="store_true", help="run (c) alone")
    args = parser.parse_args()
    if not args.only_chains:
        bench_backward(args.nodes)
        bench_profile(args.events)
    if args.chains:
        bench_gc_chains([int(n) for n in args.chains.split(",")], args.repeat)


if __name__ == "__main__":
    main()
