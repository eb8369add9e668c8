"""Learning PyTorch with examples: fit sin(x) by a cubic, with manual updates under no_grad."""
import math

import torch

dtype = torch.float64
x = torch.linspace(-math.pi, math.pi, 200, dtype=dtype)
y = torch.sin(x)

a = torch.tensor(0.1, dtype=dtype, requires_grad=True)
b = torch.tensor(-0.2, dtype=dtype, requires_grad=True)
c = torch.tensor(0.3, dtype=dtype, requires_grad=True)
d = torch.tensor(-0.1, dtype=dtype, requires_grad=True)

learning_rate = 1e-5
for t in range(600):
    y_pred = a + b * x + c * x ** 2 + d * x ** 3
    loss = (y_pred - y).pow(2).sum()
    if t % 100 == 99:
        print(t, "loss", round(loss.item(), 6))
    loss.backward()
    with torch.no_grad():  # update the leaves in place, outside the graph
        for coefficient in (a, b, c, d):
            coefficient -= learning_rate * coefficient.grad
            coefficient.grad = None

print(f"Result: y = {a.item():.6f} + {b.item():.6f} x + {c.item():.6f} x^2 + {d.item():.6f} x^3")
