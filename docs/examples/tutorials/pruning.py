"""Pruning a LeNet as torch's pruning tutorial does: local, iterative, global and custom pruning,
the reparametrization it leaves (weight_orig, weight_mask, a forward pre-hook) and its removal."""
import torch
import torch.nn as nn
import torch.nn.functional as F  # noqa: N812 - torch's convention
import torch.nn.utils.prune as prune


class LeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 3)
        self.conv2 = nn.Conv2d(6, 16, 3)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), (2, 2))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = x.view(-1, x.shape[1:].numel())
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


def lenet():
    """A LeNet with the same weights on every library (no random draws)."""
    model = LeNet()
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(torch.sin(torch.arange(p.numel()) * 0.37 + i + 0.5).reshape(p.shape) * 0.3)
    return model


def zeros(t):
    return int(torch.sum(t == 0))


model = lenet()
module = model.conv1
print("parameters:", [name for name, _ in module.named_parameters()])

# a random choice: only how many entries go is the same on every library
prune.random_unstructured(module, name="weight", amount=0.3)
print("after random_unstructured:", [name for name, _ in module.named_parameters()],
      [name for name, _ in module.named_buffers()])
print("pruned weights:", zeros(module.weight), "of", module.weight.numel())
print("hooks:", [type(h).__name__ for h in module._forward_pre_hooks.values()])

prune.l1_unstructured(module, name="bias", amount=3)
print("bias:", module.bias.tolist())

# iterative pruning: the new mask acts on what the earlier one kept
model = lenet()
module = model.conv1
prune.l1_unstructured(module, name="weight", amount=0.3)
prune.ln_structured(module, name="weight", amount=0.5, n=2, dim=0)
hook = next(iter(module._forward_pre_hooks.values()))
print("container:", [type(method).__name__ for method in hook])
print("kept channels:", (module.weight_mask.sum(dim=(1, 2, 3)) != 0).tolist())
print("weight zeros:", zeros(module.weight))
print("state_dict:", list(model.state_dict().keys())[:4])

prune.remove(module, "weight")
print("after remove:", [name for name, _ in module.named_parameters()], zeros(module.weight))

# many parameters of a model, each on its own
model = lenet()
for module in model.modules():
    if isinstance(module, nn.Conv2d):
        prune.l1_unstructured(module, name="weight", amount=0.2)
    elif isinstance(module, nn.Linear):
        prune.l1_unstructured(module, name="weight", amount=0.4)
print("masks:", list(dict(model.named_buffers()).keys()))

# global pruning: the smallest 20% of all the weights together
model = lenet()
layers = {name: getattr(model, name) for name in ("conv1", "conv2", "fc1", "fc2", "fc3")}
parameters_to_prune = [(layer, "weight") for layer in layers.values()]
prune.global_unstructured(parameters_to_prune, pruning_method=prune.L1Unstructured, amount=0.2)
for name, layer in layers.items():
    weight = layer.weight
    print(f"sparsity in {name}.weight: {100.0 * zeros(weight) / weight.nelement():.2f}%")
total = sum(layer.weight.nelement() for layer in layers.values())
pruned = sum(zeros(layer.weight) for layer in layers.values())
print(f"global sparsity: {100.0 * pruned / total:.2f}%")
x = torch.linspace(-1, 1, 28 * 28).reshape(1, 1, 28, 28)
print("output:", model(x).tolist())


# a pruning method of one's own: every other entry still kept
class FooBarPruningMethod(prune.BasePruningMethod):
    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        mask = default_mask.clone()
        mask.view(-1)[::2] = 0
        return mask


def foobar_unstructured(module, name):
    FooBarPruningMethod.apply(module, name)
    return module


model = lenet()
foobar_unstructured(model.fc3, name="bias")
print("foobar mask:", model.fc3.bias_mask.tolist())
foobar_unstructured(model.fc3, name="bias")
print("foobar twice:", model.fc3.bias_mask.tolist())
print("is_pruned:", prune.is_pruned(model))
