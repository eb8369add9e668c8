"""Hooks for saved tensors: watch what autograd keeps for backward, pack/unpack it yourself."""
import torch

a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
b = a * 2
y = a * b
print("saved by y's node:", y.grad_fn._saved_self.tolist())
print("saved self is a:", y.grad_fn._saved_self is a)
y.sum().backward()
print("a.grad:", a.grad.tolist())

packed = []


def pack_hook(tensor):
    packed.append(tuple(tensor.shape))
    return tensor.clone()  # keep a copy: later in-place changes cannot reach it


def unpack_hook(tensor):
    return tensor


x = torch.ones(3, requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
    z = (x * x).sin()
    w = z.exp()
print("packed shapes:", packed)
w.sum().backward()
print("x.grad:", [round(v, 6) for v in x.grad.tolist()])

# store saved tensors at reduced precision, restore at unpack
def pack_half(tensor):
    return tensor.to(torch.float16)


def unpack_float(tensor):
    return tensor.to(torch.float32)


v = torch.linspace(0.1, 1.0, 5, requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(pack_half, unpack_float):
    loss = (v * v * v).sum()
loss.backward()
print("grad with float16-saved tensors:", [round(g, 3) for g in v.grad.tolist()])

# save_on_cpu keeps the same numbers on a CPU-only machine
u = torch.tensor([0.5, -0.5], requires_grad=True)
with torch.autograd.graph.save_on_cpu():
    out = (u.exp() * u).sum()
out.backward()
print("save_on_cpu grad:", u.grad.tolist())

# an in-place change of a saved tensor is caught at backward
s = torch.tensor([1.0, 2.0], requires_grad=True)
t = s.exp()
r = t * 2
t2 = t.sigmoid()
t.add_(1)
try:
    t2.sum().backward()
except RuntimeError as error:
    print("caught:", "modified by an inplace operation" in str(error))
