"""GPU time per op, measured with CUDA events, and CuPy's memory-pool usage over time.

CPU timestamps of a GPU op only say when it was *launched*; the GPU runs it later,
asynchronously. ``CudaTimer`` records a CUDA event before and after every op and
backward node whose arrays live on the GPU (nothing for NumPy arrays) and reads
the events only at the end, so recording never waits for the GPU. ``gpu_events()``
turns the event pairs into times on the profiler's clock, and
``write_gpu_track`` draws them as a GPU process in a Chrome trace, plus a counter
track of the pool's used bytes.

>>> timer = CudaTimer()
>>> with timer:
...     loss = model(x_on_gpu).sum(); loss.backward()
>>> for e in timer.gpu_events(): print(e.name, e.dur_ns)
"""
from __future__ import annotations

import threading
import time
from typing import NamedTuple

from gradkit import backend
from gradkit.autograd import observers

GPU_STREAM_TID = 7  # the thread id PyTorch's traces give the default CUDA stream
POOL_COUNTER = "CUDA memory pool used (bytes)"


class GpuEvent(NamedTuple):
    """One op or backward node as the GPU ran it (times in the timer's clock, ns)."""
    name: str
    kind: str          # "op" (forward dispatch) or "node" (backward)
    device: int
    start_ns: int
    dur_ns: int


def _gpu_device(values) -> int | None:
    """The device index of the first GPU array among Tensors/arrays in ``values``."""
    for v in values:
        data = getattr(v, "_data", v)
        if hasattr(data, "__cuda_array_interface__"):
            return int(data.device.id)
        if isinstance(v, (list, tuple)):
            found = _gpu_device(v)
            if found is not None:
                return found
    return None


class CudaTimer(observers.Observer):
    """Observer that brackets GPU ops and nodes with CUDA events (see module docstring)."""

    def __init__(self, clock=time.perf_counter_ns, memory: bool = True) -> None:
        self.clock = clock
        self.memory = memory
        self.records: list = []       # (name, kind, device, start_event, end_event)
        self.pool_samples: list = []  # (clock ns, used bytes)
        self._anchors: dict = {}      # device -> (event, clock ns when it was recorded)
        self._lock = threading.Lock()

    # -- lifecycle ------------------------------------------------------------------------
    def start(self) -> CudaTimer:
        observers.attach(self)
        return self

    def stop(self) -> None:
        observers.detach(self)

    def __enter__(self) -> CudaTimer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- observer points ------------------------------------------------------------------
    def _begin(self, name: str, kind: str, values):
        device = _gpu_device(values)
        if device is None:
            return None
        cp = backend._cupy()
        with cp.cuda.Device(device):
            if device not in self._anchors:
                anchor = cp.cuda.Event()
                anchor.record()
                self._anchors[device] = (anchor, self.clock())
            start = cp.cuda.Event()
            start.record()
        return name, kind, device, start

    def _end(self, token) -> None:
        if token is None:
            return
        name, kind, device, start = token
        cp = backend._cupy()
        with cp.cuda.Device(device):
            end = cp.cuda.Event()
            end.record()
        with self._lock:
            self.records.append((name, kind, device, start, end))
            if self.memory:
                self.pool_samples.append(
                    (self.clock(), int(cp.get_default_memory_pool().used_bytes())))

    def op_enter(self, name, inputs):
        return self._begin(name, "op", inputs)

    def op_exit(self, token, name, inputs, outputs, node, params) -> None:
        self._end(token)

    def node_enter(self, node, grads):
        return self._begin(node.name(), "node", grads)

    def node_exit(self, token, node, grads, grad_inputs) -> None:
        self._end(token)

    # -- results --------------------------------------------------------------------------
    def gpu_events(self) -> list[GpuEvent]:
        """Waits for the GPU, then gives each recorded op/node its GPU start and duration."""
        cp = backend._cupy() if self.records else None
        events = []
        for name, kind, device, start, end in self.records:
            end.synchronize()
            anchor, anchor_ns = self._anchors[device]
            offset_ms = cp.cuda.get_elapsed_time(anchor, start)
            dur_ms = cp.cuda.get_elapsed_time(start, end)
            events.append(GpuEvent(name, kind, device, anchor_ns + round(offset_ms * 1e6),
                                   round(dur_ms * 1e6)))
        events.sort(key=lambda e: (e.device, e.start_ns))
        return events


def write_gpu_track(writer, timer: CudaTimer, origin_ns: int = 0) -> None:
    """Add the GPU events and the pool counter to a ChromeTraceWriter.

    One process per device (pid = device index, as PyTorch's traces), its default
    stream as thread ``GPU_STREAM_TID``; times are made relative to ``origin_ns``
    (the profiler's start on the same clock).
    """
    events = timer.gpu_events()
    for device in sorted({e.device for e in events}):
        writer.metadata("process_name", device, 0, {"name": f"GPU {device}"})
        writer.metadata("process_labels", device, 0, {"labels": f"cuda:{device}"})
        writer.metadata("process_sort_index", device, 0, {"sort_index": 1 + device})
        writer.metadata("thread_name", device, GPU_STREAM_TID, {"name": "stream 7"})
    for e in events:
        cat = "kernel" if e.kind == "op" else "gpu_backward"
        writer.complete(e.name, cat, e.device, GPU_STREAM_TID, e.start_ns - origin_ns, e.dur_ns,
                        {"device": e.device, "stream": GPU_STREAM_TID})
    for ts, used in timer.pool_samples:
        writer.counter(POOL_COUNTER, 0, ts - origin_ns, {"Used": used})
