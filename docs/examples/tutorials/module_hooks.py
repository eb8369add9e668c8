"""Module hooks: capture activations with forward hooks, inspect and clip gradients with full
backward hooks, then clip the total gradient norm before the optimizer step."""
import torch
from torch import nn

model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.cos(torch.arange(p.numel(), dtype=torch.float32) + i).reshape(p.shape))

activations = {}


def save_activation(name):
    def hook(module, args, output):
        activations[name] = output.detach()
    return hook


handles = [module.register_forward_hook(save_activation(name))
           for name, module in model.named_modules() if name]
print("hooked modules:", [name for name, _ in model.named_modules() if name])

x = torch.tensor([[0.5, -1.0, 2.0], [1.0, 0.0, -0.5]], requires_grad=True)
out = model(x)
for name, value in activations.items():
    print("activation", name, [round(v, 5) for v in value.flatten().tolist()])


def scale_inputs(module, args):
    return (args[0] * 0.5,)


pre = model[0].register_forward_pre_hook(scale_inputs)
print("with a pre-hook:", [round(v, 5) for v in model(x).flatten().tolist()])
pre.remove()
print("after remove:", [round(v, 5) for v in model(x).flatten().tolist()])

grad_log = []


def log_grads(module, grad_input, grad_output):
    grad_log.append((type(module).__name__,
                     [None if g is None else round(g.abs().sum().item(), 5) for g in grad_input],
                     [round(g.abs().sum().item(), 5) for g in grad_output]))


def halve_grad_output(module, grad_output):
    return (grad_output[0] / 2,)


for module in model:
    handles.append(module.register_full_backward_hook(log_grads))
handles.append(model[2].register_full_backward_pre_hook(halve_grad_output))
model(x).pow(2).sum().backward()
for entry in grad_log:
    print("backward hook:", entry)
print("x.grad:", [round(v, 5) for v in x.grad.flatten().tolist()])

total = nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
print("total norm before clipping:", round(total.item(), 5))
print("norm after clipping:", round(torch.nn.utils.clip_grad_norm_(model.parameters(),
                                                                   float("inf")).item(), 5))
nn.utils.clip_grad_value_(model.parameters(), clip_value=0.1)
print("largest gradient after clip_grad_value_:",
      max(p.grad.abs().max().item() for p in model.parameters()))
for handle in handles:
    handle.remove()
print("hooks left:", sum(len(m._forward_hooks) + len(m._backward_hooks) for m in model.modules()))
