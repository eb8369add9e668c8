"""nn.Module + optim: a small classifier trained with SGD (momentum) then Adam, eval mode and
accuracy, as in the "Build the neural network" and "Optimization" tutorials."""
import torch
from torch import nn


class NeuralNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.linear_relu_stack = nn.Sequential(
            nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 3))

    def forward(self, x):
        return self.linear_relu_stack(self.flatten(x))


def deterministic_init(model):
    """Same starting weights under any library (no random numbers)."""
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            n = p.numel()
            p.copy_(torch.sin(torch.arange(n, dtype=torch.float32) * (0.7 + i)).reshape(p.shape)
                    * 0.5)


# a synthetic 3-class problem: the class is decided by which coordinate sum is largest
points = torch.linspace(-1.0, 1.0, 96).reshape(24, 4)
points = torch.cat([points, points.flip(0) * 0.5, torch.cos(points * 3)])
labels = torch.stack([points[:, 0] + points[:, 1], points[:, 2], points[:, 3] * 1.5]).argmax(0)

model = NeuralNetwork()
deterministic_init(model)
print(model)
print("parameters:", sum(p.numel() for p in model.parameters()))
loss_fn = nn.CrossEntropyLoss()

for name, optimizer in [("SGD", torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)),
                        ("Adam", torch.optim.Adam(model.parameters(), lr=0.01))]:
    model.train()
    for epoch in range(40):
        for start in range(0, len(points), 24):
            batch, target = points[start:start + 24], labels[start:start + 24]
            loss = loss_fn(model(batch), target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if epoch % 10 == 9:
            print(name, "epoch", epoch + 1, "loss", round(loss.item(), 5))
    model.eval()
    with torch.no_grad():
        logits = model(points)
        accuracy = (logits.argmax(1) == labels).float().mean().item()
        print(name, "accuracy", round(accuracy, 4),
              "test loss", round(loss_fn(logits, labels).item(), 5))

probabilities = nn.Softmax(dim=1)(model(points[:2]))
print("probabilities:", [round(v, 4) for v in probabilities.flatten().tolist()])
