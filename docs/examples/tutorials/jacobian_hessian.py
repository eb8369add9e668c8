"""Jacobians, Hessians and vector products with torch.autograd.functional."""
import torch
from torch.autograd.functional import hessian, hvp, jacobian, jvp, vhp, vjp


def exp_reducer(x):
    return x.exp().sum(dim=1)


def pow_adder_reducer(x, y):
    return (2 * x.pow(2) + 3 * y.pow(2)).sum()


def rosenbrock(v):
    return ((1 - v[:-1]) ** 2 + 100 * (v[1:] - v[:-1] ** 2) ** 2).sum()


inputs = torch.linspace(-1.0, 1.0, 8, dtype=torch.float64).reshape(2, 4)
J = jacobian(exp_reducer, inputs)
print("jacobian shape:", tuple(J.shape))
print("jacobian diagonal blocks:", J[0, 0].tolist(), J[1, 1].tolist())
print("vectorized equals loop:", bool((jacobian(exp_reducer, inputs, vectorize=True) == J).all()))

x = torch.tensor([1.0, 2.0], dtype=torch.float64)
y = torch.tensor([-1.0, 0.5], dtype=torch.float64)
hx, hy = jacobian(pow_adder_reducer, (x, y))
print("jacobian of a tuple input:", hx.tolist(), hy.tolist())

point = torch.tensor([-1.2, 1.0, 0.5], dtype=torch.float64)
H = hessian(rosenbrock, point)
print("rosenbrock hessian:", H.tolist())
(HH, _), (_, _) = hessian(pow_adder_reducer, (x, y))
print("hessian block:", HH.tolist())

v = torch.tensor([1.0, 0.0, -1.0], dtype=torch.float64)
value, product = hvp(rosenbrock, point, v)
print("hvp:", round(value.item(), 6), product.tolist())
_, product_t = vhp(rosenbrock, point, v)
print("vhp equals hvp for a symmetric hessian:", bool(torch.isclose(product, product_t).all()))

out, vjp_value = vjp(exp_reducer, inputs, torch.ones(2, dtype=torch.float64))
print("vjp:", out.tolist(), vjp_value.tolist())
out, jvp_value = jvp(exp_reducer, inputs, torch.ones(2, 4, dtype=torch.float64))
print("jvp:", jvp_value.tolist())

# the same Hessian by double backward
p = point.clone().requires_grad_()
(g,) = torch.autograd.grad(rosenbrock(p), p, create_graph=True)
rows = [torch.autograd.grad(g[i], p, retain_graph=True)[0].tolist() for i in range(3)]
print("double backward hessian:", rows)
