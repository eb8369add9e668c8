"""A training loop logging to TensorBoard: gradkit leaves torch.utils.tensorboard out (it says so)."""
import torch
from torch.utils.tensorboard import SummaryWriter

writer = SummaryWriter()
model = torch.nn.Linear(2, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
features = torch.linspace(-1.0, 1.0, 40).reshape(20, 2)
targets = features.sum(dim=1, keepdim=True)
for step in range(5):
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(model(features), targets)
    loss.backward()
    optimizer.step()
    writer.add_scalar("loss", loss.item(), step)
writer.close()
