"""A training loop fed by torch.utils.data: gradkit leaves data loading out (it says so)."""
import torch
from torch.utils.data import DataLoader, TensorDataset

features = torch.linspace(-1.0, 1.0, 40).reshape(20, 2)
targets = features.sum(dim=1, keepdim=True)
loader = DataLoader(TensorDataset(features, targets), batch_size=5, shuffle=False)
model = torch.nn.Linear(2, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for batch, target in loader:
    optimizer.zero_grad()
    torch.nn.functional.mse_loss(model(batch), target).backward()
    optimizer.step()
print("batches:", len(loader))
