"""A gentle introduction to autograd: requires_grad, backward, grad_fn, retain_grad, no_grad."""
import torch

x = torch.ones(5)
y = torch.zeros(3)
w = torch.linspace(-1.0, 1.0, 15).reshape(5, 3).requires_grad_()
b = torch.tensor([0.1, -0.2, 0.3], requires_grad=True)
z = torch.matmul(x, w) + b
loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)
print("loss:", loss.item())
print("grad_fn of z:", z.grad_fn.name())
print("grad_fn of loss:", loss.grad_fn.name())

loss.backward()
print("w.grad:", w.grad.tolist())
print("b.grad:", b.grad.tolist())

with torch.no_grad():
    z = torch.matmul(x, w) + b
print("requires_grad under no_grad:", z.requires_grad)
z_det = (torch.matmul(x, w) + b).detach()
print("requires_grad after detach:", z_det.requires_grad)

# gradients accumulate: call backward twice on a retained graph
inp = torch.eye(4, 5, requires_grad=True)
out = (inp + 1).pow(2).t()
out.backward(torch.ones_like(out), retain_graph=True)
print("first call:", inp.grad.tolist())
out.backward(torch.ones_like(out))
print("second call (accumulated):", inp.grad.tolist())
inp.grad.zero_()
out = (inp + 1).pow(2).t()
out.backward(torch.ones_like(out))
print("after zero_:", inp.grad.tolist())

# a non-leaf gradient needs retain_grad
a = torch.tensor([2.0, 3.0], requires_grad=True)
h = a * a
h.retain_grad()
(h * 3).sum().backward()
print("is_leaf:", a.is_leaf, h.is_leaf, "h.grad:", h.grad.tolist(), "a.grad:", a.grad.tolist())

# torch.autograd.grad instead of .grad
q = torch.tensor([1.0, -2.0, 0.5], requires_grad=True)
(g,) = torch.autograd.grad((q.sin() * q).sum(), q)
print("grad of sum(q sin q):", g.tolist())
