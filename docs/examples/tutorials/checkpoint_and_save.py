"""Activation checkpointing and saving/loading a training checkpoint (state dicts)."""
import torch
from torch import nn
from torch.utils.checkpoint import checkpoint


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 4)

    def forward(self, x):
        return torch.tanh(self.layer(x)) + x


class Net(nn.Module):
    def __init__(self, use_checkpoint):
        super().__init__()
        self.blocks = nn.ModuleList([Block() for _ in range(3)])
        self.head = nn.Linear(4, 1)
        self.use_checkpoint = use_checkpoint

    def forward(self, x):
        for block in self.blocks:
            x = checkpoint(block, x, use_reentrant=False) if self.use_checkpoint else block(x)
        return self.head(x)


def init(model):
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(torch.sin(torch.arange(p.numel(), dtype=torch.float32) * 0.3 + i)
                    .reshape(p.shape) * 0.4)
    return model


x = torch.linspace(-2.0, 2.0, 20).reshape(5, 4)
plain, checkpointed = init(Net(False)), init(Net(True))
for model in (plain, checkpointed):
    model(x).pow(2).mean().backward()
same = all(bool(torch.isclose(p.grad, q.grad).all())
           for p, q in zip(plain.parameters(), checkpointed.parameters()))
print("checkpointed gradients equal plain ones:", same)
print("head grad:", [round(v, 6) for v in checkpointed.head.weight.grad.flatten().tolist()])

model = init(Net(False))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
for _ in range(5):
    optimizer.zero_grad()
    loss = model(x).pow(2).mean()
    loss.backward()
    optimizer.step()
torch.save({"step": 5, "model": model.state_dict(), "optimizer": optimizer.state_dict(),
            "loss": loss.item()}, "checkpoint.pt")
print("saved at step 5, loss", round(loss.item(), 6))

restored = init(Net(False))
restored_optimizer = torch.optim.SGD(restored.parameters(), lr=0.05, momentum=0.9)
state = torch.load("checkpoint.pt", weights_only=True)
print("keys:", sorted(state), "model keys:", list(state["model"])[:3])
print(restored.load_state_dict(state["model"]))
restored_optimizer.load_state_dict(state["optimizer"])
for m, opt in ((model, optimizer), (restored, restored_optimizer)):
    for _ in range(3):
        opt.zero_grad()
        loss = m(x).pow(2).mean()
        loss.backward()
        opt.step()
    print("loss after 3 more steps:", round(loss.item(), 6))

result = restored.load_state_dict({k: v for k, v in state["model"].items()
                                   if not k.startswith("head")}, strict=False)
print("missing keys:", result.missing_keys)
try:
    restored.load_state_dict({"head.weight": torch.zeros(2, 2)}, strict=True)
except RuntimeError as error:
    print("strict load fails:", str(error).splitlines()[0])
