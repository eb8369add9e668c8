"""Forward-mode AD: dual tensors, jvp of a function, a custom Function with a jvp rule."""
import torch
import torch.autograd.forward_ad as fwAD

primal = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64)
tangent = torch.tensor([1.0, 0.5, -0.25], dtype=torch.float64)


def fn(x, y):
    return x ** 2 + y.sin()


with fwAD.dual_level():
    dual_input = fwAD.make_dual(primal, tangent)
    print("tangent of the dual input:", fwAD.unpack_dual(dual_input).tangent.tolist())
    plain = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    dual_output = fn(dual_input, plain)
    jvp = fwAD.unpack_dual(dual_output).tangent
    print("primal:", fwAD.unpack_dual(dual_output).primal.tolist())
    print("jvp:", jvp.tolist())

with fwAD.dual_level():
    x = fwAD.make_dual(primal, tangent)
    y = torch.softmax(x, dim=0).log().sum() + (x.exp() * x).mean()
    print("jvp through softmax/log/exp:", round(fwAD.unpack_dual(y).tangent.item(), 10))


class Fn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, foo):
        result = torch.exp(foo)
        ctx.result = result
        return result

    @staticmethod
    def jvp(ctx, gI):
        gO = gI * ctx.result
        del ctx.result
        return gO


with fwAD.dual_level():
    x = fwAD.make_dual(primal, tangent)
    dual_output = Fn.apply(x)
    print("custom Function jvp:", fwAD.unpack_dual(dual_output).tangent.tolist())

# forward-over-reverse: a Hessian-vector product
w = primal.clone().requires_grad_()
with fwAD.dual_level():
    dual_w = fwAD.make_dual(w, tangent)
    loss = (dual_w ** 3).sum()
    (grad,) = torch.autograd.grad(loss, w, create_graph=True)
    print("hvp by forward over reverse:", fwAD.unpack_dual(grad).tangent.tolist())
