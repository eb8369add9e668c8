"""ProfilerActivity.CUDA: cuda_timer's GPU track joins the trace (faked here; real in tests/gpu)."""
import pytest
from test_profiler_rules import validate_trace

import gradkit
from gradkit import backend
from gradkit.profiler import ProfilerActivity, cuda_timer, profile
from gradkit.profiler.cuda_timer import GPU_STREAM_TID, POOL_COUNTER, GpuEvent


class FakeCudaTimer:
    """Stands in for CudaTimer: GPU events at fixed offsets from the session start."""

    instances: list = []

    def __init__(self, clock, memory):
        self.clock, self.memory = clock, memory
        self.started = self.stopped = False
        self.origin = clock()
        self.pool_samples = [(self.origin + 500, 4096)] if memory else []
        FakeCudaTimer.instances.append(self)

    def start(self):
        self.started = True
        return self

    def stop(self):
        self.stopped = True

    def gpu_events(self):
        return [GpuEvent("gradkit::matmul", "op", 0, self.origin + 1000, 3000),
                GpuEvent("MatmulBackward0", "node", 0, self.origin + 5000, 2000)]


@pytest.fixture
def fake_gpu(monkeypatch):
    monkeypatch.setattr(backend, "cuda_is_available", lambda: True)
    monkeypatch.setattr(cuda_timer, "CudaTimer", FakeCudaTimer)
    FakeCudaTimer.instances = []


def test_cuda_activity_adds_a_gpu_process(tmp_path, fake_gpu):
    a = gradkit.randn(4, 4, requires_grad=True)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 profile_memory=True) as prof:
        (a @ a).sum().backward()
    (timer,) = FakeCudaTimer.instances
    assert timer.started and timer.stopped and timer.memory
    path = tmp_path / "gpu.json"
    prof.export_chrome_trace(str(path))
    events = validate_trace(path)["traceEvents"]
    gpu = [e for e in events if e["ph"] == "X" and e["tid"] == GPU_STREAM_TID and e["pid"] == 0]
    assert [(e["name"], e["cat"]) for e in gpu] == [("gradkit::matmul", "kernel"),
                                                     ("MatmulBackward0", "gpu_backward")]
    # GPU times are on the CPU events' time base: relative to the session's start
    origin = prof._finished.start_ns
    assert gpu[0]["ts"] == pytest.approx((timer.origin + 1000 - origin) / 1000, abs=0.0011)
    assert gpu[1]["ts"] == pytest.approx((timer.origin + 5000 - origin) / 1000, abs=0.0011)
    assert gpu[0]["dur"] == 3.0
    assert any(e["name"] == "process_name" and e["args"]["name"] == "GPU 0" for e in events)
    assert [e["args"]["Used"] for e in events if e["name"] == POOL_COUNTER] == [4096]


def test_cuda_activity_without_a_gpu_warns_and_traces_the_cpu(monkeypatch):
    monkeypatch.setattr(backend, "cuda_is_available", lambda: False)
    with pytest.warns(UserWarning, match="ProfilerActivity.CUDA was requested but no CUDA"):
        prof = profile(activities=[ProfilerActivity.CUDA])
    with prof:
        gradkit.ones(2) * 2
    assert [e.name for e in prof.events()] == ["gradkit::ones", "gradkit::mul"]


def test_cpu_only_profile_starts_no_gpu_timer(fake_gpu):
    with profile():
        gradkit.ones(2) * 2
    assert FakeCudaTimer.instances == []
