"""The device stories of tests/test_devices.py and the op table of tests/test_op_genericity.py,
on a real GPU with CuPy. Run with tests/gpu/run.sh on a machine with an NVIDIA GPU.
"""
import json

import numpy as np
import pytest

import gradkit
import op_db
from test_op_genericity import _DEVICE_MOVES, KNOWN_BUGS, SAMPLES, _run, compare_cpu_and_gpu

pytestmark = pytest.mark.gpu

MIXED = "Expected all tensors to be on the same device, but found at least two devices, "


def test_device_api():
    import cupy
    assert gradkit.cuda.is_available() and gradkit.accelerator.is_available()
    assert gradkit.cuda.device_count() == cupy.cuda.runtime.getDeviceCount() >= 1
    assert gradkit.cuda.current_device() == 0
    before = gradkit.cuda.memory_allocated()
    x = gradkit.ones(1024, 1024, device="cuda")
    gradkit.cuda.synchronize()
    assert gradkit.cuda.memory_allocated() >= before + x.nbytes
    assert isinstance(x._data, cupy.ndarray) and x.device == "cuda:0"


def test_round_trip_and_grads_on_device():
    w = gradkit.randn(5, 3, dtype=gradkit.float64, device="cuda", requires_grad=True)
    x = gradkit.randn(4, 5, dtype=gradkit.float64, requires_grad=True)
    (x.cuda() @ w).tanh().sum().backward()
    assert w.grad.device == "cuda:0" and x.grad.device == "cpu"
    w_ref = w.detach().cpu().requires_grad_()
    x_ref = x.detach().requires_grad_()
    (x_ref @ w_ref).tanh().sum().backward()
    np.testing.assert_allclose(w.grad.cpu().numpy(), w_ref.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(x.grad.numpy(), x_ref.grad.numpy(), rtol=1e-10)


def test_mixing_devices_is_torchs_error():
    with pytest.raises(RuntimeError, match=MIXED + "cuda:0 and cpu!"):
        gradkit.ones(2, device="cuda") + gradkit.ones(2)


@pytest.mark.parametrize("name", [
    pytest.param(name, marks=pytest.mark.xfail(reason=KNOWN_BUGS[name]))
    if name in KNOWN_BUGS else name for name in sorted(SAMPLES)])
def test_op_on_gpu_matches_cpu(name):
    fn, make = SAMPLES[name]
    inputs = make()
    on_cpu = _run(fn, inputs, "cpu")
    on_gpu = _run(fn, inputs, "cuda:0")
    for cpu, gpu in zip(on_cpu, on_gpu, strict=True):
        assert cpu.dtype == gpu.dtype
        np.testing.assert_allclose(gpu, cpu, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("case", [c for c in op_db.cases() if c[1].name not in _DEVICE_MOVES],
                         ids=lambda case: case[0])
def test_op_table_on_gpu_matches_cpu(case):
    compare_cpu_and_gpu(case, tolerance=1e-9)


def test_mlp_step_matches_torch_cuda():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA here")
    rng = np.random.default_rng(0)
    ws = [rng.standard_normal(s) / 10 for s in ((784, 64), (64, 10))]
    x, y = rng.standard_normal((32, 784)), rng.integers(0, 10, 32)

    def step(lib, device):
        params = [lib.tensor(w, device=device, requires_grad=True) for w in ws]
        logits = (lib.tensor(x, device=device) @ params[0]).relu() @ params[1]
        loss = -logits.log_softmax(1).gather(1, lib.tensor(y, device=device).unsqueeze(1)).mean()
        loss.backward()
        return [p.grad.cpu().numpy() for p in params]

    for ours, theirs in zip(step(gradkit, "cuda"), step(torch, "cuda"), strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12)


def test_save_on_cpu_moves_saved_tensors_off_the_gpu():
    w = gradkit.randn(256, 256, device="cuda", requires_grad=True)
    x = gradkit.randn(64, 256, device="cuda")
    with gradkit.autograd.graph.save_on_cpu():
        y = (x @ w).sin()
    packed = [s.packed for s in y.grad_fn.saved if s is not None and s.packed is not None]
    assert packed and all(t.device == "cpu" for _, t in packed)
    y.sum().backward()
    assert w.grad.device == "cuda:0"


def test_cuda_timer_measures_gpu_time(tmp_path):
    from gradkit.profiler.chrome_trace import ChromeTraceWriter
    from gradkit.profiler.cuda_timer import CudaTimer, write_gpu_track
    a = gradkit.randn(2048, 2048, device="cuda", requires_grad=True)
    with CudaTimer() as timer:
        (a @ a).sum().backward()
    events = timer.gpu_events()
    assert [e.name for e in events[:3]] == ["gradkit::matmul", "gradkit::sum", "SumBackward0"]
    assert [e.kind for e in events] == ["op", "op"] + ["node"] * (len(events) - 2)
    assert events[0].dur_ns > 0  # a 2048^3 matmul takes real GPU time
    starts = [e.start_ns for e in events]
    assert starts == sorted(starts)
    path = tmp_path / "gpu.json"
    with ChromeTraceWriter(path, base_time_ns=0) as writer:
        write_gpu_track(writer, timer, origin_ns=events[0].start_ns)
    trace = json.loads(path.read_text())["traceEvents"]
    assert any(e["ph"] == "X" and e["cat"] == "kernel" for e in trace)
    assert any(e["ph"] == "C" for e in trace)
