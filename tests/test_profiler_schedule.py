"""schedule(), step() and on_trace_ready: exactly the active steps are recorded."""
import gzip
import json
import os
import re

import pytest
from test_profiler_rules import validate_trace

import gradkit
from gradkit.profiler import ProfilerAction, profile, schedule, tensorboard_trace_handler


@pytest.mark.parametrize("kwargs", [
    dict(wait=1, warmup=1, active=2), dict(wait=0, warmup=0, active=1, repeat=3),
    dict(wait=2, warmup=1, active=3, repeat=2, skip_first=3)])
def test_schedule_matches_torch(kwargs):
    torch = pytest.importorskip("torch")
    ours = schedule(**kwargs)
    with pytest.warns(UserWarning) if kwargs["warmup"] == 0 else _nothing():
        theirs = torch.profiler.schedule(**kwargs)
    assert [ours(i).name for i in range(30)] == [theirs(i).name for i in range(30)]


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@pytest.mark.parametrize("kwargs, message", [
    (dict(wait=-1, warmup=0, active=1), "wait=-1"),
    (dict(wait=0, warmup=0, active=0), "active=0 \\(need > 0\\)"),
    (dict(wait=0, warmup=0, active=1, repeat=-2), "repeat=-2"),
])
def test_schedule_rejects_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match="Invalid profiler schedule arguments.*" + message):
        schedule(**kwargs)


def _train_step(x):
    (x * 2).sum().backward()


def test_only_active_steps_are_recorded_and_handed_over():
    x = gradkit.randn(4, requires_grad=True)
    traces = []

    def ready(prof):
        steps = sorted(e.name for e in prof.events() if e.name.startswith("ProfilerStep#"))
        muls = sum(e.name == "gradkit::mul" for e in prof.events())
        traces.append((prof.step_num, steps, muls))

    sched = schedule(wait=1, warmup=1, active=2, repeat=2)
    with profile(schedule=sched, on_trace_ready=ready) as prof:
        for _ in range(10):
            _train_step(x)
            prof.step()
    assert traces == [(4, ["ProfilerStep#2", "ProfilerStep#3"], 2),
                      (8, ["ProfilerStep#6", "ProfilerStep#7"], 2)]
    assert prof.current_action == ProfilerAction.NONE


def test_step_ranges_enclose_the_step_and_a_cut_profile_still_reports():
    x = gradkit.randn(4, requires_grad=True)
    traces = []
    with profile(schedule=schedule(wait=0, warmup=0, active=3),
                 on_trace_ready=lambda p: traces.append(p.events())) as prof:
        for _ in range(2):  # stops before the cycle's RECORD_AND_SAVE
            _train_step(x)
            prof.step()
    (events,) = traces
    steps = [e for e in events if e.name.startswith("ProfilerStep#")]
    assert [s.name for s in steps] == ["ProfilerStep#0", "ProfilerStep#1", "ProfilerStep#2"]
    assert all(s.cat == "user_annotation" for s in steps)
    for op in (e for e in events if e.name == "gradkit::mul"):
        assert op.cpu_parent.name.startswith("ProfilerStep#")


def test_without_schedule_step_adds_no_ranges():
    with profile() as prof:
        gradkit.ones(2) * 2
        prof.step()
    assert not any(e.name.startswith("ProfilerStep") for e in prof.events())


@pytest.mark.parametrize("use_gzip", [False, True])
def test_tensorboard_trace_handler_writes_one_file_per_cycle(tmp_path, use_gzip):
    x = gradkit.randn(3, requires_grad=True)
    handler = tensorboard_trace_handler(str(tmp_path / "log"), worker_name="w0",
                                        use_gzip=use_gzip)
    with profile(schedule=schedule(wait=0, warmup=1, active=1, repeat=2),
                 on_trace_ready=handler) as prof:
        for _ in range(5):
            _train_step(x)
            prof.step()
    files = sorted(os.listdir(tmp_path / "log"))
    suffix = r"\.pt\.trace\.json" + (r"\.gz" if use_gzip else "")
    assert len(files) == 2 and all(re.fullmatch(r"w0\.\d+" + suffix, f) for f in files)
    for f in files:
        data = validate_trace(tmp_path / "log" / f)
        assert sum(e["name"].startswith("ProfilerStep#") for e in data["traceEvents"]) == 1
        if use_gzip:
            with gzip.open(tmp_path / "log" / f, "rt") as fh:
                assert json.load(fh) == data
