"""Tensors: creation, arithmetic, broadcasting, indexing, reshaping and NumPy interop."""
import numpy as np
import torch

data = [[1, 2], [3, 4]]
x_data = torch.tensor(data)
print("from data:", x_data.tolist(), x_data.shape, x_data.dtype == torch.int64)

x_np = torch.from_numpy(np.array(data, dtype=np.float64))
print("from numpy:", x_np.tolist(), x_np.dtype == torch.float64)

x_ones = torch.ones_like(x_data)
x_lin = torch.linspace(0.0, 1.0, steps=5)
print("ones_like:", x_ones.tolist(), "linspace:", x_lin.tolist())

tensor = torch.arange(12.0).reshape(3, 4)
print("shape, dtype, device:", tuple(tensor.shape), tensor.dtype == torch.float32,
      tensor.device.type)
print("first row:", tensor[0].tolist(), "first column:", tensor[:, 0].tolist())
print("last column:", tensor[..., -1].tolist())
tensor[:, 1] = 0
print("after zeroing column 1:", tensor.tolist())

t1 = torch.cat([tensor, tensor], dim=1)
print("cat shape:", tuple(t1.shape), "stack shape:", tuple(torch.stack([tensor, tensor]).shape))

y1 = tensor @ tensor.T
y2 = tensor.matmul(tensor.T)
print("matmul:", y1.tolist(), "same:", bool((y1 == y2).all()))
z1 = tensor * tensor
print("elementwise product sum:", z1.sum().item())

agg = tensor.sum()
print("sum item:", agg.item(), "mean:", tensor.mean().item(), "max:", tensor.max().item())
print("argmax per row:", tensor.argmax(dim=1).tolist())

row = torch.tensor([1.0, 10.0, 100.0, 1000.0])
col = torch.tensor([[1.0], [2.0], [3.0]])
print("broadcast:", (row * col).tolist())

tensor.add_(5)
print("in-place add_:", tensor.tolist())

view = tensor.view(2, 6)
print("view:", view.tolist(), "flatten:", tensor.flatten().tolist()[:4])
print("permute:", tuple(torch.zeros(2, 3, 4).permute(2, 0, 1).shape),
      "unsqueeze:", tuple(row.unsqueeze(0).shape), "squeeze:", tuple(col.squeeze().shape))

t = torch.ones(5)
n = t.numpy()
t.add_(1)
print("numpy shares memory:", n.tolist())
print("where:", torch.where(row > 50, row, torch.zeros(4)).tolist())
print("clamp:", row.clamp(2.0, 500.0).tolist(), "exp/log:", torch.log(torch.exp(row[:2])).tolist())
