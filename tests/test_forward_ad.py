"""Forward-mode AD: dual tensors through every kind of op rule, composition with reverse mode."""
import numpy as np
import pytest

import gradkit
import gradkit.autograd.forward_ad as fwAD  # noqa: N812 - torch's idiom
import gradkit.nn.functional as nnf
from gradkit.autograd import Function


def f64(values, requires_grad=False):
    return gradkit.tensor(values, dtype=gradkit.float64, requires_grad=requires_grad)


def rand(*shape, low=0.5, high=1.5):
    return f64(np.random.uniform(low, high, shape))


def forward_tangent(fn, primals, tangents):
    with fwAD.dual_level():
        duals = [fwAD.make_dual(p, t) for p, t in zip(primals, tangents, strict=True)]
        out = fn(*duals)
        return fwAD.unpack_dual(out).tangent


# Ops by the kind of jvp rule they exercise: per-input rules, derived elementwise rules,
# linear ops, multi-output ops and ops that only have vjp rules (double-vjp fallback).
OPS = {
    "add_broadcast": (lambda a, b: a + b, [(2, 3), (3,)]),
    "sub_alpha": (lambda a, b: gradkit.sub(a, b, alpha=2.0), [(2, 3), (2, 3)]),
    "mul_broadcast": (lambda a, b: a * b, [(2, 3), (2, 1)]),
    "div": (lambda a, b: a / b, [(3,), (3,)]),
    "pow": (lambda a, b: a ** b, [(3,), (3,)]),
    "pow_scalar": (lambda a: a ** 3, [(3,)]),
    "exp_log_sqrt": (lambda a: a.exp() + a.log() + a.sqrt(), [(4,)]),
    "trig": (lambda a: a.sin() * a.cos() + a.tanh() + a.sigmoid(), [(4,)]),
    "relu_abs": (lambda a: (a - 1).relu() + (a - 1).abs(), [(5,)]),
    "maximum": (lambda a, b: gradkit.maximum(a, b), [(4,), (4,)]),
    "where": (lambda a, b: gradkit.where(a > 1, a, b), [(4,), (4,)]),
    "clamp": (lambda a: a.clamp(0.8, 1.2), [(5,)]),
    "sum_mean": (lambda a: a.sum(0) + a.mean(1).sum(), [(3, 2)]),
    "var_std": (lambda a: a.var(0) + a.std(1).sum(), [(3, 4)]),
    "logsumexp_softmax": (lambda a: a.softmax(-1) + a.logsumexp(-1, keepdim=True), [(2, 3)]),
    "log_softmax": (lambda a: a.log_softmax(0), [(3, 2)]),
    "cumsum": (lambda a: a.cumsum(0), [(4,)]),
    "matmul": (lambda a, b: a @ b, [(2, 3), (3, 4)]),
    "bmm": (lambda a, b: gradkit.bmm(a, b), [(2, 2, 3), (2, 3, 2)]),
    "einsum": (lambda a, b: gradkit.einsum("ij,jk->ik", a, b), [(2, 3), (3, 2)]),
    "reshape_permute": (lambda a: a.reshape(3, 2).T.permute(1, 0), [(2, 3)]),
    "expand_squeeze": (lambda a: a.unsqueeze(0).expand(2, 3).squeeze(), [(3,)]),
    "getitem": (lambda a: a[1:, [0, 2]], [(3, 3)]),
    "index_select_gather": (lambda a: gradkit.index_select(a, 0, gradkit.tensor([2, 0]))
                            + gradkit.gather(a, 0, gradkit.tensor([[1, 2]])),
                            [(3, 2)]),
    "cat_stack": (lambda a, b: gradkit.cat([a, b]) + gradkit.stack([a, b]).sum(0).repeat(2),
                  [(3,), (3,)]),
    "split_chunk": (lambda a: a.split(1)[0] * a.chunk(3)[2], [(3,)]),
    "prod": (lambda a: a.prod(), [(4,)]),
    "amax": (lambda a: a.amax(0), [(3, 2)]),
    "max_dim": (lambda a: a.max(1)[0], [(3, 4)]),
    "masked_fill": (lambda a: a.masked_fill(a > 1.0, 0.0), [(5,)]),
    "clone_to": (lambda a: a.clone().to(gradkit.float32).to(gradkit.float64), [(3,)]),
    "nn_linear_layer_norm": (lambda x, w: nnf.layer_norm(nnf.linear(x, w), (3,)),
                             [(2, 4), (3, 4)]),
    "nn_conv_pool": (lambda x, w: nnf.max_pool2d(nnf.conv2d(x, w, padding=1), 2),
                     [(1, 2, 4, 4), (3, 2, 3, 3)]),
    "nn_embedding": (lambda w: nnf.embedding(gradkit.tensor([[0, 2], [1, 1]]), w), [(3, 4)]),
    "nn_losses": (lambda x, y: nnf.cross_entropy(x, gradkit.tensor([0, 2])) + nnf.mse_loss(x, y),
                  [(2, 3), (2, 3)]),
}


@pytest.mark.parametrize("name", sorted(OPS))
def test_transposition_identity(name):
    """<u, J v> from forward mode equals <J^T u, v> from reverse mode."""
    fn, shapes = OPS[name]
    primals = [rand(*s) for s in shapes]
    tangents = [f64(np.random.randn(*s)) for s in shapes]
    jv = forward_tangent(fn, primals, tangents)
    leaves = [p.detach().requires_grad_(True) for p in primals]
    out = fn(*leaves)
    u = f64(np.random.randn(*out.shape))
    vjps = gradkit.autograd.grad(out, leaves, u, allow_unused=True)
    lhs = float((u * jv).sum())
    rhs = sum(float((g * t).sum()) for g, t in zip(vjps, tangents, strict=True) if g is not None)
    rel = 1e-6 if name == "clone_to" else 1e-10  # a float32 round trip on the way
    assert lhs == pytest.approx(rhs, rel=rel, abs=1e-12)


@pytest.mark.parametrize("name", ["mul_broadcast", "trig", "matmul", "prod", "max_dim",
                                  "logsumexp_softmax", "cat_stack", "var_std"])
def test_same_tangents_as_torch(name):
    torch = pytest.importorskip("torch")
    import torch.autograd.forward_ad as tfw
    fn, shapes = OPS[name]
    primals = [rand(*s) for s in shapes]
    tangents = [f64(np.random.randn(*s)) for s in shapes]
    ours = forward_tangent(fn, primals, tangents)
    torch_fn = {
        "mul_broadcast": lambda a, b: a * b,
        "trig": lambda a: a.sin() * a.cos() + a.tanh() + a.sigmoid(),
        "matmul": lambda a, b: a @ b,
        "prod": lambda a: a.prod(),
        "max_dim": lambda a: a.max(1)[0],
        "logsumexp_softmax": lambda a: a.softmax(-1) + a.logsumexp(-1, keepdim=True),
        "cat_stack": lambda a, b: torch.cat([a, b]) + torch.stack([a, b]).sum(0).repeat(2),
        "var_std": lambda a: a.var(0) + a.std(1).sum(),
    }[name]
    with tfw.dual_level():
        duals = [tfw.make_dual(torch.tensor(p.numpy()), torch.tensor(t.numpy()))
                 for p, t in zip(primals, tangents, strict=True)]
        theirs = tfw.unpack_dual(torch_fn(*duals)).tangent
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-10, atol=1e-12)


def test_closed_form_and_unpack():
    x, v = f64([0.5, 1.0, 2.0]), f64([1.0, -1.0, 0.5])
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, v)
        primal, tangent = fwAD.unpack_dual(dual.exp() * dual)
        assert fwAD.unpack_dual(x).tangent is None
    xs = x.numpy()
    np.testing.assert_allclose(primal.numpy(), np.exp(xs) * xs)
    np.testing.assert_allclose(tangent.numpy(), (np.exp(xs) * xs + np.exp(xs)) * v.numpy())


def test_tangents_propagate_under_no_grad_and_of_constants():
    with gradkit.no_grad(), fwAD.dual_level():
        d = fwAD.make_dual(f64([2.0]), f64([1.0]))
        out = d * f64([3.0]) + 1.0
        assert fwAD.unpack_dual(out).tangent.item() == 3.0
        assert fwAD.unpack_dual(f64([3.0]) * 2).tangent is None


def test_forward_over_reverse_hvp_of_quadratic_form():
    a = np.array([[2.0, 1.0, 0.0], [0.0, 3.0, 1.0], [1.0, 0.0, 4.0]])
    x0, v = np.array([0.3, -0.2, 1.0]), np.array([1.0, 2.0, -1.0])
    matrix = f64(a)
    x = f64(x0, requires_grad=True)
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, f64(v))
        energy = 0.5 * (dual @ (matrix @ dual))
        g, = gradkit.autograd.grad(energy, dual, create_graph=True)
        hv = fwAD.unpack_dual(g).tangent
    np.testing.assert_allclose(g.detach().numpy(), 0.5 * (a + a.T) @ x0)
    np.testing.assert_allclose(hv.detach().numpy(), 0.5 * (a + a.T) @ v)


def test_forward_over_reverse_with_saved_outputs():
    # exp saves its result: the rebuilt saved output must keep its tangent
    x0, v = np.array([0.1, 0.4]), np.array([1.0, 0.5])
    with fwAD.dual_level():
        dual = fwAD.make_dual(f64(x0, requires_grad=True), f64(v))
        g, = gradkit.autograd.grad(dual.exp().sum(), dual, create_graph=True)
        hv = fwAD.unpack_dual(g).tangent
    np.testing.assert_allclose(hv.detach().numpy(), np.exp(x0) * v)


def test_reverse_through_make_dual_reaches_the_primal():
    x = f64([1.0, 2.0], requires_grad=True)
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, f64([1.0, 1.0]))
        (dual * dual).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0])


class Square(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_forward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        raise AssertionError("not used")

    @staticmethod
    def jvp(ctx, t):
        x, = ctx.saved_tensors
        return 2 * x * t


def test_custom_function_jvp():
    with fwAD.dual_level():
        out = Square.apply(fwAD.make_dual(f64([3.0]), f64([2.0])))
        assert fwAD.unpack_dual(out).tangent.item() == 12.0


def test_custom_function_without_jvp():
    class NoJvp(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

    with fwAD.dual_level():
        with pytest.raises(NotImplementedError, match="You must implement the jvp function"):
            NoJvp.apply(fwAD.make_dual(f64([1.0]), f64([1.0])))


def test_errors():
    with pytest.raises(RuntimeError, match="no level exists, make sure to enter_dual_level"):
        fwAD.make_dual(f64([1.0]), f64([1.0]))
    with fwAD.dual_level():
        with pytest.raises(RuntimeError, match=r"Tensor is of size \[2\] while the given forward "
                           r"gradient is of size \[3\]"):
            fwAD.make_dual(f64([1.0, 2.0]), f64([1.0, 2.0, 3.0]))
        with pytest.raises(ValueError, match="Expected primal to be floating point or complex, "
                           "but got: gradkit.int64"):
            fwAD.make_dual(gradkit.tensor([1, 2]), f64([1.0, 2.0]))
        with pytest.raises(RuntimeError, match="Nested forward mode AD is not supported"):
            with fwAD.dual_level():
                pass
        dual = fwAD.make_dual(f64([1.0]), f64([1.0]))
        leaked = dual * 2
    with pytest.raises(RuntimeError, match="level 0, which has already exited"):
        fwAD.unpack_dual(leaked)
    # levels can be reopened afterwards; the old tangent does not come back
    with fwAD.dual_level():
        assert not fwAD.has_tangents((leaked,))


def test_inplace_ops_update_the_tangent():
    with fwAD.dual_level():
        x = fwAD.make_dual(f64([1.0, 2.0]), f64([1.0, 1.0]))
        y = x * 1
        y.mul_(3)
        np.testing.assert_array_equal(fwAD.unpack_dual(y).tangent.numpy(), [3.0, 3.0])
        y.add_(x)
        np.testing.assert_array_equal(fwAD.unpack_dual(y).tangent.numpy(), [4.0, 4.0])
        z = f64([1.0, 2.0], requires_grad=True) * 1   # recorded in-place path
        z.mul_(x).exp_()
        np.testing.assert_allclose(fwAD.unpack_dual(z).tangent.detach().numpy(),
                                   np.exp([1.0, 4.0]) * [1.0, 2.0])


def test_double_vjp_fallback_handles_complex_and_constant_vjps():
    """Ops without jvp rules go through <vjp(u), t>; complex ops and vjps ignoring u included."""
    from gradkit.autograd.forward_ad import _double_vjp
    from gradkit.ops import exp, zeros_like_op
    z = gradkit.randn(3, dtype=gradkit.complex128)
    t = gradkit.randn(3, dtype=gradkit.complex128)
    (jt,) = _double_vjp(exp, (z,), (t,), {}, (exp(z),))
    np.testing.assert_allclose(jt.numpy(), (exp(z) * t).numpy(), rtol=1e-12)
    x = gradkit.randn(3, dtype=gradkit.float64)
    (zero,) = _double_vjp(zeros_like_op, (x,), (x,), {}, (zeros_like_op(x),))
    assert zero.tolist() == [0.0, 0.0, 0.0]
