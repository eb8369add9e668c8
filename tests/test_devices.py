"""Devices: cuda()/cpu()/to(), creation with device=, grads on their tensor's device, the
same-device error, gradkit.cuda/accelerator. Runs without a GPU: ``strict_xp`` stands in for CuPy
(two fake devices); the real-GPU versions of these stories live in tests/gpu/.
"""
import importlib.util
import subprocess
import sys

import numpy as np
import pytest

import gradkit
import strict_xp
from gradkit import backend

MIXED = "Expected all tensors to be on the same device, but found at least two devices, "


@pytest.fixture
def cupy(monkeypatch):
    return strict_xp.install(monkeypatch)


def _real_cuda() -> bool:
    return backend.cuda_is_available() and "strict_xp" not in str(sys.modules.get("cupy"))


# -- without CuPy ------------------------------------------------------------------------

def test_importing_and_running_gradkit_never_imports_cupy():
    code = ("import sys, gradkit; x = gradkit.ones(2, requires_grad=True); "
            "(x * x).sum().backward(); assert 'cupy' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.skipif(_real_cuda(), reason="a GPU is present")
def test_no_gpu_answers():
    assert gradkit.cuda.is_available() is False
    assert gradkit.cuda.device_count() == 0
    assert gradkit.accelerator.is_available() is False
    assert gradkit.accelerator.device_count() == 0
    assert gradkit.cuda.memory_allocated() == 0
    gradkit.cuda.empty_cache()  # a no-op, not an error


@pytest.mark.skipif(_real_cuda(), reason="a GPU is present")
def test_cuda_calls_without_gpu_fail_clearly():
    with pytest.raises(RuntimeError, match="found no CUDA device"):
        gradkit.cuda.synchronize()
    with pytest.raises(RuntimeError, match="found no CUDA device"):
        gradkit.cuda.current_device()
    with pytest.raises(RuntimeError, match="found no CUDA device"):
        gradkit.accelerator.synchronize()


@pytest.mark.skipif(importlib.util.find_spec("cupy") is not None, reason="CuPy is installed")
def test_moving_to_cuda_without_cupy_names_the_fix():
    with pytest.raises(RuntimeError, match=r"needs CuPy: pip install 'gradkit\[cuda\]'"):
        gradkit.ones(2).cuda()
    with pytest.raises(RuntimeError, match="needs CuPy"):
        gradkit.zeros(2, device="cuda")
    assert gradkit.accelerator.current_accelerator() is None


def test_device_strings():
    assert str(gradkit.device("cuda")) == "cuda:0"
    assert gradkit.device("cuda:1").index == 1
    assert gradkit.device("cuda", 1) == "cuda:1"
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda device type"):
        gradkit.device("tpu")
    with pytest.raises(RuntimeError, match="Invalid device string: 'cuda:x'"):
        gradkit.device("cuda:x")


# -- with the strict CuPy stand-in ----------------------------------------------------------

def test_cuda_api(cupy):
    assert gradkit.cuda.is_available() and gradkit.accelerator.is_available()
    assert gradkit.cuda.device_count() == 2
    assert gradkit.accelerator.current_accelerator() == gradkit.device("cuda")
    assert gradkit.cuda.current_device() == 0
    gradkit.cuda.set_device("cuda:1")
    assert gradkit.cuda.current_device() == 1
    assert gradkit.accelerator.current_device_index() == 1
    gradkit.cuda.set_device(0)
    gradkit.cuda.synchronize()
    gradkit.cuda.synchronize("cuda:1")
    assert strict_xp.calls == [("synchronize", 0), ("synchronize", 1)]
    assert isinstance(gradkit.cuda.memory_allocated(), int)
    with pytest.raises(ValueError, match="Expected a cuda device, but got: cpu"):
        gradkit.cuda.synchronize("cpu")


@pytest.mark.parametrize("make", [
    lambda d: gradkit.zeros(2, 3, device=d),
    lambda d: gradkit.ones((2, 3), device=d, dtype=gradkit.float64),
    lambda d: gradkit.full((2,), 7, device=d),
    lambda d: gradkit.tensor([[1.0, 2.0]], device=d),
    lambda d: gradkit.arange(5, device=d),
    lambda d: gradkit.linspace(0, 1, 4, device=d),
    lambda d: gradkit.eye(3, device=d),
    lambda d: gradkit.empty(2, device=d),
    lambda d: gradkit.creation.zeros_like(gradkit.ones(2), device=d),
    lambda d: gradkit.ones(2).new_ones(3, device=d),
], ids=["zeros", "ones", "full", "tensor", "arange", "linspace", "eye", "empty", "zeros_like",
        "new_ones"])
@pytest.mark.parametrize("device", ["cuda", "cuda:1"])
def test_creation_on_device(cupy, make, device):
    t = make(device)
    cpu = make("cpu")
    assert t.device == gradkit.device(device) and t.is_cuda
    assert isinstance(t._data, strict_xp.StrictArray)
    assert t.dtype == cpu.dtype and t.shape == cpu.shape
    np.testing.assert_array_equal(t.cpu().numpy(), cpu.numpy())


def test_random_creation_on_device_matches_cpu_draws(cupy):
    gradkit.manual_seed(3)
    a = gradkit.randn(4, device="cuda")
    gradkit.manual_seed(3)
    b = gradkit.randn(4)
    assert a.device == "cuda:0"
    np.testing.assert_array_equal(a.cpu().numpy(), b.numpy())
    assert gradkit.rand_like(a).device == "cuda:0"


def test_like_functions_keep_the_device(cupy):
    x = gradkit.ones(2, 2, device="cuda:1")
    for t in (gradkit.zeros_like(x), gradkit.ones_like(x), gradkit.full_like(x, 3.0),
              gradkit.randn_like(x), x.new_zeros(3), x.new_tensor([1.0])):
        assert t.device == "cuda:1"


def test_public_zeros_like_takes_a_device(cupy):
    assert gradkit.zeros_like(gradkit.ones(2), device="cuda").device == "cuda:0"


def test_to_cuda_cpu_round_trip(cupy):
    x = gradkit.tensor([[1.0, -2.0], [3.0, 4.5]])
    y = x.cuda()
    assert y.device == "cuda:0" and y.is_cuda and not x.is_cuda
    assert x.cuda(1).device == "cuda:1"
    assert y.to("cuda:1").device == "cuda:1"
    back = y.cpu()
    assert back.device == "cpu" and isinstance(back._data, np.ndarray)
    np.testing.assert_array_equal(back.numpy(), x.numpy())
    z = x.to("cuda", gradkit.float64)
    assert (z.device, z.dtype) == (gradkit.device("cuda:0"), gradkit.float64)
    assert x.to(z).device == "cuda:0" and x.to(z).dtype == gradkit.float64
    assert y.to("cuda") is y  # already there: no copy, as in torch
    assert y.tolist() == x.tolist()
    assert "device='cuda:0'" in repr(y)


def test_numpy_of_a_cuda_tensor_asks_for_cpu(cupy):
    y = gradkit.ones(2, device="cuda")
    with pytest.raises(TypeError, match="can't convert cuda:0 device type tensor to numpy. Use "
                                        r"Tensor.cpu\(\)"):
        y.numpy()
    assert y.sum().item() == 2.0


def test_grads_live_on_the_device_of_their_tensor(cupy):
    w = gradkit.randn(3, 2, dtype=gradkit.float64, device="cuda", requires_grad=True)
    x_cpu = gradkit.randn(4, 3, dtype=gradkit.float64, requires_grad=True)
    loss = (x_cpu.cuda() @ w).tanh().sum()
    assert loss.device == "cuda:0"
    loss.backward()
    assert w.grad.device == "cuda:0" and x_cpu.grad.device == "cpu"
    # the same program on the CPU gives the same gradients
    w_ref = w.detach().cpu().requires_grad_()
    x_ref = x_cpu.detach().requires_grad_()
    (x_ref @ w_ref).tanh().sum().backward()
    np.testing.assert_allclose(w.grad.cpu().numpy(), w_ref.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(x_cpu.grad.numpy(), x_ref.grad.numpy(), rtol=1e-12)


def test_grad_across_two_gpus_with_explicit_seed(cupy):
    x = gradkit.tensor([0.5, -1.0], dtype=gradkit.float64, device="cuda:1", requires_grad=True)
    y = x.to("cuda:0") * 3.0
    (g,) = gradkit.autograd.grad(y, x, gradkit.ones(2, dtype=gradkit.float64, device="cuda:0"))
    assert g.device == "cuda:1"
    np.testing.assert_allclose(g.cpu().numpy(), [3.0, 3.0])


def test_grad_across_two_gpus_and_double_backward(cupy):
    x = gradkit.tensor([0.5, -1.0, 2.0], dtype=gradkit.float64, device="cuda:1",
                       requires_grad=True)
    y = (x.to("cuda:0") ** 3).sum()
    (g,) = gradkit.autograd.grad(y, x, create_graph=True)
    assert g.device == "cuda:1"
    np.testing.assert_allclose(g.cpu().detach().numpy(), 3 * np.array([0.5, -1.0, 2.0]) ** 2)
    (gg,) = gradkit.autograd.grad(g.sum(), x)
    assert gg.device == "cuda:1"
    np.testing.assert_allclose(gg.cpu().numpy(), 6 * np.array([0.5, -1.0, 2.0]))


@pytest.mark.parametrize("expr, devices", [
    (lambda a, b: a + b, "cuda:0 and cpu"),
    (lambda a, b: b * a, "cuda:0 and cpu"),
    (lambda a, b: a @ b, "cuda:0 and cpu"),
    (lambda a, b: gradkit.cat([a, b]), "cuda:0 and cpu"),
    (lambda a, b: gradkit.where(b > 0, a, b), "cuda:0 and cpu"),
    (lambda a, b: a + b.to("cuda:1"), "cuda:0 and cuda:1"),
])
def test_mixing_devices_is_torchs_error(cupy, expr, devices):
    a = gradkit.ones(2, 2, device="cuda")
    b = gradkit.ones(2, 2)
    with pytest.raises(RuntimeError, match=MIXED + devices + "!"):
        expr(a, b)


def test_assigning_a_grad_of_another_device_fails(cupy):
    x = gradkit.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="assigned grad has data located on a different device"):
        x.grad = gradkit.ones(2, device="cuda")


def test_scalars_mix_with_gpu_tensors(cupy):
    x = gradkit.tensor([1.0, 2.0], device="cuda")
    np.testing.assert_allclose((2.0 * x + np.float32(1)).cpu().numpy(), [3.0, 5.0])


def test_cpu_only_programs_pay_no_device_check():
    """Without CuPy loaded, dispatch never looks past the first NumPy input."""
    if "cupy" in sys.modules:
        pytest.skip("CuPy is loaded")
    from gradkit.ops import _dispatch_general
    calls = []
    original = _dispatch_general._check_same_device
    _dispatch_general._check_same_device = lambda datas: calls.append(datas)
    try:
        gradkit.ones(2) + gradkit.ones(2)
    finally:
        _dispatch_general._check_same_device = original
    assert calls == []


def test_save_on_cpu_keeps_saved_tensors_in_host_memory(cupy):
    w = gradkit.randn(3, 3, dtype=gradkit.float64, device="cuda", requires_grad=True)
    x = gradkit.randn(2, 3, dtype=gradkit.float64, device="cuda")
    with gradkit.autograd.graph.save_on_cpu():
        y = (x @ w).sin()
    packed = [s.packed for s in y.grad_fn.saved if s is not None and s.packed is not None]
    assert packed, "sin saves its input"
    assert all(t.device == "cpu" for _, t in packed)
    y.sum().backward()
    assert w.grad.device == "cuda:0"
    expected = x.cpu().numpy().T @ np.cos(x.cpu().numpy() @ w.detach().cpu().numpy())
    np.testing.assert_allclose(w.grad.cpu().numpy(), expected, rtol=1e-12)


# -- GPU timings for the profiler (CUDA events on the stand-in's fake GPU clock) ------------

def test_cuda_timer_times_gpu_ops_and_nodes_with_events(cupy):
    from gradkit.profiler.cuda_timer import CudaTimer
    ticks = iter(range(1000, 10**6, 1000))
    x = gradkit.ones(3, device="cuda", requires_grad=True)
    cpu = gradkit.ones(3, requires_grad=True)
    with CudaTimer(clock=lambda: next(ticks)) as timer:
        (cpu * 2).sum().backward()          # CPU work: no GPU events
        (x * 2).sum().backward()
    events = timer.gpu_events()
    assert [(e.name, e.kind) for e in events] == [
        ("gradkit::mul", "op"), ("gradkit::sum", "op"), ("SumBackward0", "node"),
        ("MulBackward0", "node")]
    # events: anchor at 0 ms, then start/end pairs 0.5 ms apart on the fake GPU clock
    assert [e.dur_ns for e in events] == [500_000] * 4
    anchor_ns = 1000  # the clock's first reading, taken with the anchor event
    assert [e.start_ns for e in events] == [anchor_ns + k * 1_000_000 + 500_000
                                            for k in range(4)]
    assert all(e.device == 0 for e in events)
    assert len(timer.pool_samples) == 4 and all(isinstance(b, int) for _, b in
                                                timer.pool_samples)
    assert gradkit.autograd.observers.active == ()


def test_cuda_timer_writes_a_gpu_track(cupy, tmp_path):
    import json

    from gradkit.profiler.chrome_trace import ChromeTraceWriter
    from gradkit.profiler.cuda_timer import GPU_STREAM_TID, POOL_COUNTER, CudaTimer, \
        write_gpu_track
    x = gradkit.ones(2, device="cuda:1")
    with CudaTimer(clock=lambda: 5_000) as timer:
        x.exp()
    path = tmp_path / "gpu.json"
    with ChromeTraceWriter(path, base_time_ns=0) as writer:
        write_gpu_track(writer, timer, origin_ns=1_000)
    events = json.loads(path.read_text())["traceEvents"]
    kernels = [e for e in events if e["ph"] == "X"]
    assert [(k["name"], k["cat"], k["pid"], k["tid"]) for k in kernels] == [
        ("gradkit::exp", "kernel", 1, GPU_STREAM_TID)]
    assert kernels[0]["ts"] == pytest.approx(4.0 + 500.0) and kernels[0]["dur"] == 500.0
    names = {(e["name"], e["args"].get("name")) for e in events if e["ph"] == "M"}
    assert ("process_name", "GPU 1") in names
    assert [e["name"] for e in events if e["ph"] == "C"] == [POOL_COUNTER]


def test_default_device(cupy):
    gradkit.set_default_device("cuda:1")
    try:
        assert gradkit.zeros(2).device == "cuda:1"
        assert gradkit.tensor([1.0]).device == "cuda:1"
        assert gradkit.randn(2).device == "cuda:1"
        assert gradkit.get_default_device() == "cuda:1"
    finally:
        gradkit.set_default_device(None)
    assert gradkit.zeros(2).device == "cpu"


def test_writes_into_views_of_fresh_device_tensors(cupy):
    """CuPy arrays carry no ``writeable`` flag (the stand-in's flags are CuPy's): a write into a
    view of a fresh device tensor goes to its memory, as on the CPU (found by h-nnutils)."""
    for make in (lambda: gradkit.zeros(2, 2, device="cuda"),
                 lambda: gradkit.zeros_like(gradkit.ones(2, 2, device="cuda"))):
        x = make()
        x.diagonal().fill_(-1)
        assert x.cpu().tolist() == [[-1.0, 0.0], [0.0, -1.0]]


def test_boolean_mask_assignment_on_the_device(cupy):
    """``x[mask] = v`` reads the mask's dtype on the device, never through NumPy (found by
    h-optim: CuPy refuses the implicit conversion)."""
    x = gradkit.zeros(4, device="cuda")
    mask = gradkit.tensor([True, False, True, False], device="cuda")
    x[mask] = 3.0
    assert x.cpu().tolist() == [3.0, 0.0, 3.0, 0.0]
    x[mask] = gradkit.tensor([1.0, 2.0], device="cuda")
    assert x.cpu().tolist() == [1.0, 0.0, 2.0, 0.0]
