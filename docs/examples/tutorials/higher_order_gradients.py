"""Higher-order gradients: a gradient penalty with create_graph, and derivatives of derivatives."""
import torch

x = torch.tensor(2.0, requires_grad=True)
y = x ** 4
(dy,) = torch.autograd.grad(y, x, create_graph=True)
(d2y,) = torch.autograd.grad(dy, x, create_graph=True)
(d3y,) = torch.autograd.grad(d2y, x)
print("derivatives of x^4 at 2:", dy.item(), d2y.item(), d3y.item())

w = torch.tensor([[0.5, -0.3], [0.8, 0.1]], requires_grad=True)
inputs = torch.tensor([[1.0, 2.0], [-1.0, 0.5], [0.3, -0.7]], requires_grad=True)
out = torch.tanh(inputs @ w).sum()
(grad_inputs,) = torch.autograd.grad(out, inputs, create_graph=True)
penalty = grad_inputs.pow(2).sum(dim=1).sub(1).pow(2).mean()
print("gradient penalty:", round(penalty.item(), 6))
penalty.backward()
print("d penalty / d w:", [round(v, 6) for v in w.grad.flatten().tolist()])

# grad with is_grads_batched: several vector-Jacobian products at once
a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
b = a.exp()
seeds = torch.eye(3)
(rows,) = torch.autograd.grad(b, a, seeds, is_grads_batched=True)
print("batched vjps (jacobian):", rows.tolist())

# allow_unused, retain_graph and inputs=
p = torch.tensor(1.5, requires_grad=True)
q = torch.tensor(-0.5, requires_grad=True)
z = p * p
gp, gq = torch.autograd.grad(z, (p, q), allow_unused=True, retain_graph=True)
print("unused input gives None:", gp.item(), gq)
(z + q).backward(inputs=[q])
print("only q accumulated:", p.grad, q.grad.item())
