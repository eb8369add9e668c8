"""is_grads_batched: one vectorized backward pass where every node is batchable, one pass per row
otherwise; both agree with each other and with torch's is_grads_batched on the op table."""
import numpy as np
import pytest

import gradkit
from gradkit.autograd import api
from gradkit.ops._op import Op
from op_db import bind, cases, differentiable_outputs, gradkit_tensor, torch_function, torch_tensor

CASES = cases()
BATCH_SIZES = (1, 3, 5)  # 3 equals many sample dims: a rule that broadcasts wrongly shows up


def _seeds(outs, batch, rng, lib):
    seeds = []
    for o in outs:
        shape = (batch, *tuple(o.shape))
        v = rng.standard_normal(shape)
        if o.dtype.is_complex:
            v = v + 1j * rng.standard_normal(shape)
        seeds.append(lib.tensor(np.asarray(v)))
    return seeds


class _Spy:
    """Records whether each batched grad call took the vectorized path (or forces the loop)."""

    def __init__(self, monkeypatch, force_loop=False):
        self.paths = []
        real = api._vectorizable

        def vectorizable(*args):
            chosen = False if force_loop else real(*args)
            self.paths.append(chosen)
            return chosen
        monkeypatch.setattr(api, "_vectorizable", vectorizable)


def _batched_grads(info, sample, batch, monkeypatch, force_loop=False):
    leaves, call = bind(info.op, sample, gradkit_tensor)
    outs = differentiable_outputs(call(*leaves))
    seeds = _seeds(outs, batch, np.random.default_rng(batch), gradkit)
    spy = _Spy(monkeypatch, force_loop)
    grads = gradkit.autograd.grad(outs, leaves, seeds, allow_unused=True, is_grads_batched=True)
    monkeypatch.undo()
    return [None if g is None else g.numpy() for g in grads], spy.paths == [True], seeds


@pytest.mark.parametrize("batch", BATCH_SIZES)
@pytest.mark.parametrize("info,sample", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_vectorized_equals_looped(info, sample, batch, monkeypatch):
    looped, _, _ = _batched_grads(info, sample, batch, monkeypatch, force_loop=True)
    vectorized, _, _ = _batched_grads(info, sample, batch, monkeypatch)
    for got, expected in zip(vectorized, looped, strict=True):
        if expected is None:
            assert got is None
            continue
        assert got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("info,sample", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_batched_grads_match_torch(info, sample, monkeypatch):
    torch = pytest.importorskip("torch")
    if info.torch is None or not info.check_torch_grad:
        pytest.skip("no torch counterpart with the same gradient")
    got, _, seeds = _batched_grads(info, sample, 3, monkeypatch)
    leaves, call = bind(torch_function(info), sample, torch_tensor)
    outs = [o for o in _flat(call(*leaves)) if o.dtype.is_floating_point or o.dtype.is_complex]
    try:
        expected = torch.autograd.grad(outs, leaves, [torch.tensor(s.numpy()) for s in seeds],
                                       allow_unused=True, is_grads_batched=True)
    except RuntimeError as e:  # vmap has no batching rule for some ops
        pytest.skip(f"torch cannot batch this op: {str(e)[:80]}")
    for g, e in zip(got, expected, strict=True):
        if e is None:
            assert g is None or not np.any(g)
            continue
        # rtol 1e-7: torch's vmap rule of leaky_relu rounds its slope through float32
        np.testing.assert_allclose(g, e.numpy(force=True), rtol=1e-7, atol=1e-10)


def _flat(out):
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flat(o)]
    return [out]


# ops whose every table sample must take the vectorized path (the others may fall back)
MUST_VECTORIZE = {
    "exp", "log", "sin", "tanh", "sigmoid", "relu", "gelu", "abs", "clamp", "add", "sub", "mul",
    "div", "pow", "maximum", "where", "sum", "mean", "var", "std", "prod", "amax", "amin",
    "logsumexp", "softmax", "log_softmax", "matmul", "mm", "bmm", "mv", "dot", "inner", "outer",
    "reshape", "view", "flatten", "squeeze", "unsqueeze", "expand", "transpose", "t", ".T",
    "permute", "linear", "F.relu", "F.softmax", "mse_loss", "real", "conj",
}


@pytest.mark.parametrize("name", sorted(MUST_VECTORIZE))
def test_batchable_ops_take_the_vectorized_path(name, monkeypatch):
    entries = [c for c in CASES if c[1].name == name]
    assert entries, f"{name} is not in the op table"
    for case_id, info, sample in entries:
        _, vectorized, _ = _batched_grads(info, sample, 2, monkeypatch)
        assert vectorized, f"{case_id} fell back to one pass per row"


def test_custom_function_falls_back_to_the_loop(monkeypatch):
    class Cube(gradkit.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 3 * x * x * g

    x = gradkit.tensor([1.0, 2.0], dtype=gradkit.float64, requires_grad=True)
    spy = _Spy(monkeypatch)
    g, = gradkit.autograd.grad(Cube.apply(x).sin(), x, gradkit.eye(2, dtype=gradkit.float64),
                               is_grads_batched=True)
    assert spy.paths == [False]
    np.testing.assert_allclose(g.numpy(), np.diag(np.cos([1.0, 8.0]) * [3.0, 12.0]))


def test_a_hook_sees_one_row_at_a_time(monkeypatch):
    x = gradkit.tensor([1.0, 2.0, 3.0], dtype=gradkit.float64, requires_grad=True)
    y = x * x
    seen = []
    y.register_hook(lambda g: seen.append(tuple(g.shape)))
    spy = _Spy(monkeypatch)
    g, = gradkit.autograd.grad(y, x, gradkit.eye(3, dtype=gradkit.float64), is_grads_batched=True)
    assert spy.paths == [False] and seen == [(3,)] * 3
    np.testing.assert_allclose(g.numpy(), np.diag([2.0, 4.0, 6.0]))


def test_a_node_outside_the_path_to_the_inputs_does_not_force_the_loop(monkeypatch):
    x = gradkit.tensor([1.0, 2.0], dtype=gradkit.float64, requires_grad=True)
    w = gradkit.tensor([0.5, 0.1], dtype=gradkit.float64, requires_grad=True)
    y = x * gradkit.cumsum(w, 0)  # cumsum is not batchable, but only w's branch runs it
    spy = _Spy(monkeypatch)
    g, = gradkit.autograd.grad(y, x, gradkit.eye(2, dtype=gradkit.float64), is_grads_batched=True)
    assert spy.paths == [True]
    np.testing.assert_allclose(g.numpy(), np.diag([0.5, 0.6]))


def test_create_graph_gives_differentiable_batched_grads(monkeypatch):
    torch = pytest.importorskip("torch")
    x0 = np.array([0.3, -1.2, 0.7])
    w0 = np.random.default_rng(0).standard_normal((3, 3))

    def f(lib, x, w):
        return lib.tanh(w @ x) * x

    x = gradkit.tensor(x0, requires_grad=True)
    spy = _Spy(monkeypatch)
    jac, = gradkit.autograd.grad(f(gradkit, x, gradkit.tensor(w0)), x,
                                 gradkit.eye(3, dtype=gradkit.float64), create_graph=True,
                                 is_grads_batched=True)
    second, = gradkit.autograd.grad((jac * jac).sum(), x)
    assert spy.paths == [True]
    xt = torch.tensor(x0, requires_grad=True)
    jac_t, = torch.autograd.grad(f(torch, xt, torch.tensor(w0)), xt,
                                 torch.eye(3, dtype=torch.float64), create_graph=True,
                                 is_grads_batched=True)
    second_t, = torch.autograd.grad((jac_t * jac_t).sum(), xt)
    np.testing.assert_allclose(jac.detach().numpy(), jac_t.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(second.numpy(), second_t.numpy(), rtol=1e-10)


def test_jacobian_vectorize_uses_one_pass_and_matches_torch(monkeypatch):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    w0, b0, x0 = rng.standard_normal((4, 5)), rng.standard_normal(4), rng.standard_normal(5)

    def layer(lib, functional):
        return lambda x, w: lib.tanh(functional.linear(x, w, lib.tensor(b0)))

    spy = _Spy(monkeypatch)
    got = gradkit.autograd.functional.jacobian(
        layer(gradkit, gradkit.nn.functional), (gradkit.tensor(x0), gradkit.tensor(w0)),
        vectorize=True)
    assert spy.paths == [True]
    expected = torch.autograd.functional.jacobian(
        layer(torch, torch.nn.functional), (torch.tensor(x0), torch.tensor(w0)), vectorize=True)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-12, atol=1e-14)


def test_hessian_vectorize_matches_torch():
    torch = pytest.importorskip("torch")
    x0 = np.array([[0.2, -0.4], [1.1, 0.3]])

    def f(lib, x):
        return (lib.softmax(x, dim=1) * lib.sin(x)).sum() + lib.logsumexp(x, dim=0).pow(2).sum()

    got = gradkit.autograd.functional.hessian(lambda x: f(gradkit, x), gradkit.tensor(x0),
                                              vectorize=True)
    expected = torch.autograd.functional.hessian(lambda x: f(torch, x), torch.tensor(x0),
                                                 vectorize=True)
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-10, atol=1e-12)


def test_an_op_wrongly_marked_batchable_is_reported():
    from gradkit.ops import reshape
    doubled = Op(lambda xp, x: 2 * x, name="doubled", batchable=True)
    doubled.defvjp(lambda g: 2 * reshape(g, (-1,)))  # drops the batch dim: not batch-safe
    x = gradkit.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"vectorized is_grads_batched gave a gradient of shape "
                                           r"\[6\], expected \[2, 3\]"):
        gradkit.autograd.grad(doubled(x), x, gradkit.ones(2, 3), is_grads_batched=True)


def test_seeds_of_different_batch_sizes_are_refused_like_torch():
    x = gradkit.tensor([1.0, 2.0], requires_grad=True)
    y, z = x * 2, x * 3
    with pytest.raises(ValueError, match=r"same size in the mapped dimension, got sizes \[2, 3\]"):
        gradkit.autograd.grad((y, z), x, (gradkit.ones(2, 2), gradkit.ones(3, 2)),
                              is_grads_batched=True)


def test_batched_seed_of_wrong_shape_names_both_shapes():
    x = gradkit.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"grad_output\[0\] has a shape of "
                                           r"gradkit.Size\(\[4, 3\]\)"):
        gradkit.autograd.grad(x * 2, x, gradkit.ones(4, 3), is_grads_batched=True)
