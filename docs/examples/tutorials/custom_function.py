"""Defining new autograd Functions: the Legendre polynomial P3 with its own backward."""
import math

import torch


class LegendrePolynomial3(torch.autograd.Function):
    """P3(x) = (5x^3 - 3x) / 2, with P3'(x) = (15x^2 - 3) / 2 written by hand."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return (5 * x ** 3 - 3 * x) / 2

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output * (7.5 * x * x - 1.5)


class Exp(torch.autograd.Function):
    """Saves its output, marks nothing: the classic docs example."""

    @staticmethod
    def forward(ctx, i):
        result = i.exp()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        (result,) = ctx.saved_tensors
        return grad_output * result


dtype = torch.float64
x = torch.linspace(-math.pi, math.pi, 200, dtype=dtype)
y = torch.sin(x)
a = torch.full((), 0.0, dtype=dtype, requires_grad=True)
b = torch.full((), -1.0, dtype=dtype, requires_grad=True)
c = torch.full((), 0.0, dtype=dtype, requires_grad=True)
d = torch.full((), 0.3, dtype=dtype, requires_grad=True)

learning_rate = 5e-6
for t in range(500):
    P3 = LegendrePolynomial3.apply
    y_pred = a + b * P3(c + d * x)
    loss = (y_pred - y).pow(2).sum()
    if t % 100 == 99:
        print(t, "loss", round(loss.item(), 6))
    loss.backward()
    with torch.no_grad():
        for p in (a, b, c, d):
            p -= learning_rate * p.grad
            p.grad = None
print(f"Result: y = {a.item():.6f} + {b.item():.6f} * P3({c.item():.6f} + {d.item():.6f} x)")

v = torch.tensor([0.5, -1.0], dtype=dtype, requires_grad=True)
out = Exp.apply(v)
print("grad_fn name:", out.grad_fn.name())
out.sum().backward()
print("Exp grad:", v.grad.tolist())
print("gradcheck:", torch.autograd.gradcheck(LegendrePolynomial3.apply,
                                              (torch.tensor([0.3, -0.7], dtype=dtype,
                                                            requires_grad=True),)))
