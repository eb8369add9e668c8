"""``profile``: torch.profiler's context manager, with schedules and trace handlers."""
from __future__ import annotations

import enum
import json
import os
import socket
import time
import warnings
from collections.abc import Callable, Iterable

from gradkit import backend
from gradkit.profiler import cuda_timer
from gradkit.profiler.events import EventList
from gradkit.profiler.recorder import Recorder
from gradkit.profiler.stacks import export_stacks
from gradkit.profiler.timeline import build
from gradkit.profiler.trace_export import export_chrome_trace


class ProfilerActivity(enum.Enum):
    """What to profile: host-side ops (CPU) and, on CuPy, device work (CUDA)."""

    CPU = 0
    CUDA = 1


class ProfilerAction(enum.Enum):
    """What the profiler does during one step, as a schedule decides."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


_RECORDING = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0,
             skip_first_wait: int = 0) -> Callable[[int], ProfilerAction]:
    """Which steps to record: skip_first, then cycles of wait, warmup, active (repeat times);
    a non-zero ``skip_first_wait`` skips the first cycle's wait.

    >>> sched = gradkit.profiler.schedule(wait=1, warmup=1, active=2)
    >>> [sched(i).name for i in range(4)]
    ['NONE', 'WARMUP', 'RECORD', 'RECORD_AND_SAVE']
    """
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise ValueError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), warmup={warmup} "
            f"(need >= 0), active={active} (need > 0), repeat={repeat} (need >= 0), "
            f"skip_first={skip_first} (need >= 0).")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results",
                      stacklevel=2)
    cycle = wait + warmup + active
    shift = wait if skip_first_wait != 0 else 0

    def schedule_fn(step: int) -> ProfilerAction:
        if step < 0:
            raise ValueError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step += shift - skip_first
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        position = step % cycle
        if position < wait:
            return ProfilerAction.NONE
        if position < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if position < cycle - 1 else ProfilerAction.RECORD_AND_SAVE
    return schedule_fn


def supported_activities() -> set[ProfilerActivity]:
    """The activities this machine can profile: CPU, and CUDA when CuPy sees a GPU."""
    return {ProfilerActivity.CPU} | ({ProfilerActivity.CUDA} if backend.cuda_is_available()
                                     else set())


def _always_record(step: int) -> ProfilerAction:
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name: str, worker_name: str | None = None,
                              use_gzip: bool = False) -> Callable:
    """An ``on_trace_ready`` that writes ``<dir>/<worker>.<ns>.pt.trace.json[.gz]``.

    >>> prof = gradkit.profiler.profile(on_trace_ready=tensorboard_trace_handler("./log"))
    """
    def handler(prof: profile) -> None:
        os.makedirs(dir_name, exist_ok=True)
        worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        name = f"{worker}.{time.time_ns()}.pt.trace.json" + (".gz" if use_gzip else "")
        prof.export_chrome_trace(os.path.join(dir_name, name))
    return handler


class profile:
    """Record ops, backward nodes, ranges and (optionally) memory, like ``torch.profiler``.

    >>> with gradkit.profiler.profile(record_shapes=True) as prof:
    ...     (gradkit.ones(3, requires_grad=True) * 2).sum().backward()
    >>> print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=10))
    >>> prof.export_chrome_trace("trace.json")

    ``clock`` (nanoseconds, default ``time.perf_counter_ns``) may be replaced, e.g.
    by a fake clock in tests.
    """

    def __init__(self, activities: Iterable[ProfilerActivity] | None = None,
                 record_shapes: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, with_flops: bool = False,
                 schedule: Callable[[int], ProfilerAction] | None = None,
                 on_trace_ready: Callable[[profile], None] | None = None, *,
                 with_modules: bool = False, acc_events: bool = False,
                 clock: Callable[[], int] | None = None) -> None:
        self.activities = set(activities) if activities is not None else {ProfilerActivity.CPU}
        for activity in self.activities:
            if not isinstance(activity, ProfilerActivity):
                raise ValueError(f"activities must be ProfilerActivity members, but got "
                                 f"{activity!r}")
        self._trace_gpu = ProfilerActivity.CUDA in self.activities
        if self._trace_gpu and not backend.cuda_is_available():
            warnings.warn("gradkit.profiler: ProfilerActivity.CUDA was requested but no CUDA "
                          "device is available (CuPy missing or no GPU); tracing the CPU only",
                          stacklevel=2)
            self._trace_gpu = False
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.with_modules = with_modules
        self.schedule = schedule or _always_record
        self.record_steps = schedule is not None
        self.on_trace_ready = on_trace_ready
        self.acc_events = acc_events
        self.clock = clock
        self.step_num = 0
        self.current_action = self.schedule(0)
        self._recorder = None     # the session being recorded now
        self._finished = None     # the last session that was stopped
        self._earlier = []        # with acc_events: the sessions stopped before it
        self._gpu_timer = None    # with ProfilerActivity.CUDA: CUDA-event timer of the session
        self._finished_gpu = None
        self._timeline = None
        self._step_token = None
        self._metadata = {}       # top-level trace keys: add_metadata(), add_metadata_json()

    # -- lifecycle ---------------------------------------------------------------------
    def __enter__(self) -> profile:
        self.start()
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.stop()

    def start(self) -> None:
        """Start recording (what ``with profile(...)`` does on entry)."""
        self._transit(ProfilerAction.NONE, self.current_action)
        self._open_step()

    def stop(self) -> None:
        """Stop recording (what leaving the ``with`` block does)."""
        self._close_step()
        self._transit(self.current_action, None)

    def step(self) -> None:
        """Mark the end of one training step (closes ``ProfilerStep#N``; follows the schedule)."""
        self._close_step()
        previous = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transit(previous, self.current_action)
        self._open_step()

    def _transit(self, previous, current) -> None:
        # torch's action map: the end of an active span (or of the profile) saves the trace;
        # a schedule that leaves warmup or recording without RECORD_AND_SAVE only warns
        if previous is not None and current is not None and current != previous:
            if previous == ProfilerAction.WARMUP and current == ProfilerAction.NONE \
                    or previous == ProfilerAction.RECORD and current in (ProfilerAction.NONE,
                                                                         ProfilerAction.WARMUP):
                warnings.warn(f"Incorrect schedule: {previous.name} followed by "
                              f"{current.name}", stacklevel=3)
        if self._recorder is not None and (previous == ProfilerAction.RECORD_AND_SAVE
                                           or current not in _RECORDING):
            self._stop_recording()
            if previous == ProfilerAction.RECORD_AND_SAVE or current is None:
                self._trace_ready()
        if previous == ProfilerAction.WARMUP and current in (ProfilerAction.NONE, None):
            self._start_recording()  # warmed up for nothing: an empty session, as torch
            self._stop_recording()
        if current in _RECORDING and self._recorder is None:
            self._start_recording()

    def _trace_ready(self) -> None:
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def _start_recording(self) -> None:
        self._recorder = Recorder(self.record_shapes or self.with_flops, self.profile_memory,
                                  self.with_stack, self.clock, self.with_modules)
        self._recorder.start()
        if self._trace_gpu:
            self._gpu_timer = cuda_timer.CudaTimer(clock=self._recorder.clock,
                                                   memory=self.profile_memory).start()

    def _stop_recording(self) -> None:
        self._recorder.stop()
        if self.acc_events and self._finished is not None:
            self._earlier.append(self._timeline or build(self._finished, self.record_shapes,
                                                         self.with_flops))
        self._finished, self._recorder, self._timeline = self._recorder, None, None
        if self._gpu_timer is not None:
            self._gpu_timer.stop()
        self._finished_gpu, self._gpu_timer = self._gpu_timer, None

    def _open_step(self) -> None:
        if self.record_steps and self._recorder is not None:
            self._step_token = (self._recorder,
                                self._recorder.range_enter(f"ProfilerStep#{self.step_num}"))

    def _close_step(self) -> None:
        if self._step_token is not None:
            recorder, token = self._step_token
            self._step_token = None
            recorder.range_exit(token)

    # -- results -----------------------------------------------------------------------
    def recorded_events(self) -> int:
        """How many events the current (or last finished) recording holds so far: cheap
        enough to poll while a long profile runs. 0 before anything was recorded."""
        recorder = self._recorder or self._finished
        return 0 if recorder is None else recorder.event_count()

    def _session_recorder(self) -> Recorder:
        recorder = self._recorder or self._finished
        if recorder is None:
            raise RuntimeError("gradkit.profiler: nothing was recorded yet; profile some steps "
                               "first (check the schedule)")
        return recorder

    def _session(self):
        recorder = self._session_recorder()
        if recorder is self._recorder:  # still recording: build from a snapshot, do not cache
            return build(recorder, self.record_shapes, self.with_flops)
        if self._timeline is None:
            self._timeline = build(recorder, self.record_shapes, self.with_flops)
        return self._timeline

    def events(self) -> EventList:
        """Every recorded event (FunctionEvent), nested per thread; with ``acc_events``,
        those of every cycle recorded so far (each cycle's times from its own start)."""
        events = self._session().events
        if self._earlier:
            timelines = [*self._earlier, self._session()]
            events = EventList([e for t in timelines for e in t.events])
            events.memory = [m for t in timelines for m in t.events.memory]
            events.saved = [m for t in timelines for m in t.events.saved]
            events.outside = [m for t in timelines for m in t.events.outside]
        events.record_shapes = self.record_shapes
        events.profile_memory = self.profile_memory
        events.with_stack = self.with_stack
        events.with_flops = self.with_flops
        return events

    def key_averages(self, group_by_input_shape: bool = False,
                     group_by_stack_n: int = 0) -> EventList:
        """Events averaged by name (and input shapes / top stack frames when asked)."""
        return self.events().key_averages(group_by_input_shape, group_by_stack_n)

    def export_chrome_trace(self, path: str) -> str:
        """Write a Chrome/Perfetto trace (``.json`` or compressed ``.json.gz``)."""
        flags = {"record_shapes": int(self.record_shapes),
                 "profile_memory": int(self.profile_memory),
                 "with_stack": int(self.with_stack), "with_flops": int(self.with_flops),
                 **self._metadata}
        gpu = self._gpu_timer if self._recorder is not None else self._finished_gpu
        export_chrome_trace(self._session_recorder(), path, flags, gpu, self.record_shapes,
                            self.with_flops)
        return path

    def add_metadata(self, key: str, value: str) -> None:
        """A top-level ``key: "value"`` (a string) in the traces exported from now on."""
        self._metadata[key] = str(value)

    def add_metadata_json(self, key: str, value: str) -> None:
        """A top-level ``key`` in the traces exported from now on, its value the JSON text
        ``value`` (``"[1, 2, 3]"`` becomes a list); invalid JSON raises ValueError."""
        self._metadata[key] = json.loads(value)

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total") -> None:
        """Folded stacks (``frame;frame;op value``) for flamegraph.pl / speedscope."""
        if not self.with_stack:
            raise RuntimeError("export_stacks() requires profile(with_stack=True)")
        export_stacks(self.events(), path, metric)
