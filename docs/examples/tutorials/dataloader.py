"""Data loading with torch.utils.data: a Dataset, TensorDataset, DataLoader batches and a
training loop fed by them, as in the "Datasets & DataLoaders" tutorial (no shuffling, so
the batches are the same under any library)."""
import torch
from torch.utils.data import DataLoader, Dataset, TensorDataset, random_split


class Parabola(Dataset):
    """Samples (x, x²) as dicts, computed on demand."""

    def __init__(self, n):
        self.xs = torch.linspace(-1.0, 1.0, n)

    def __len__(self):
        return len(self.xs)

    def __getitem__(self, i):
        x = self.xs[i]
        return {"x": x.reshape(1), "y": (x * x).reshape(1)}


dataset = Parabola(20)
loader = DataLoader(dataset, batch_size=6)
first = next(iter(loader))
print("batches:", len(loader), "first batch:", first["x"].shape, first["y"].dtype)
print("last batch size:", [len(b["x"]) for b in loader][-1])
print("drop_last:", len(DataLoader(dataset, batch_size=6, drop_last=True)))

train, test = random_split(dataset, [0.75, 0.25], generator=torch.Generator().manual_seed(0))
print("split sizes:", len(train), len(test))

model = torch.nn.Sequential(torch.nn.Linear(1, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
with torch.no_grad():  # the same starting weights under any library
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.cos(torch.arange(p.numel(), dtype=torch.float32) + i).reshape(p.shape))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(3):
    total = 0.0
    for batch in loader:
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(batch["x"]), batch["y"])
        loss.backward()
        optimizer.step()
        total += loss.item() * len(batch["x"])
    print(f"epoch {epoch}: mean loss {total / len(dataset):.6f}")

pairs = TensorDataset(torch.arange(6).reshape(3, 2), torch.tensor([0.5, 1.5, 2.5]))
for features, targets in DataLoader(pairs, batch_size=2):
    print(features.tolist(), targets.tolist())
