"""Hanging chain: find the rest shape of masses on springs with Newton's method.

A chain of point masses joined by springs hangs between two fixed pins. Its
rest shape minimises the potential energy (spring + gravity). Newton's method
needs the energy's Hessian: we get it from gradkit (``autograd.functional.hessian``,
or double backward with ``create_graph=True``) and converge in a handful of steps
where gradient descent would need thousands.

    python docs/examples/newton_chain.py [--masses 12] [--steps 30]
"""
from __future__ import annotations

import argparse

import numpy as np

import gradkit

SPAN = 1.0          # distance between the two pins
CHAIN_LENGTH = 1.4  # total rest length of the springs
STIFFNESS = 200.0
GRAVITY = 1.0       # mass * g of each point mass


def chain_energy(free: gradkit.Tensor, n: int) -> gradkit.Tensor:
    """Potential energy of the chain; ``free`` holds the (x, y) of the n movable masses."""
    left = gradkit.zeros(1, 2, dtype=free.dtype)
    right = gradkit.tensor([[SPAN, 0.0]], dtype=free.dtype)
    points = gradkit.cat([left, free.reshape(n, 2), right])
    links = points[1:] - points[:-1]
    lengths = (links * links).sum(1).sqrt()
    rest = CHAIN_LENGTH / (n + 1)
    springs = 0.5 * STIFFNESS * ((lengths - rest) ** 2).sum()
    return springs + GRAVITY * points[:, 1].sum()


def hessian_of(f, x: gradkit.Tensor) -> gradkit.Tensor:
    """Hessian of scalar f at x: the library's, else one double backward per row."""
    try:
        from gradkit.autograd.functional import hessian
    except ImportError:
        hessian = None
    if hessian is not None:
        return hessian(f, x)
    x = x.detach().requires_grad_(True)
    (g,) = gradkit.autograd.grad(f(x), x, create_graph=True)
    rows = [gradkit.autograd.grad(g[i], x, retain_graph=True)[0] for i in range(x.numel())]
    return gradkit.stack(rows)


def newton(n: int, steps: int, tol: float = 1e-10) -> tuple[np.ndarray, list[float]]:
    """Damped Newton iterations; returns the rest positions and the gradient norms."""
    t = np.linspace(0, 1, n + 2)[1:-1]
    x = gradkit.tensor(np.stack([t * SPAN, -0.6 * np.sin(np.pi * t)], 1).ravel(),
                       dtype=gradkit.float64)
    energy = lambda z: chain_energy(z, n)
    norms = []
    for _ in range(steps):
        x = x.detach().requires_grad_(True)
        (g,) = gradkit.autograd.grad(energy(x), x)
        norms.append(float(np.linalg.norm(g.numpy())))
        if norms[-1] < tol:
            break
        h = hessian_of(energy, x.detach()).detach().numpy()
        damping = 0.0
        while True:  # add damping until the Newton system is positive definite
            try:
                np.linalg.cholesky(h + damping * np.eye(len(h)))
                break
            except np.linalg.LinAlgError:
                damping = max(2 * damping, 1e-3)
        step = np.linalg.solve(h + damping * np.eye(len(h)), -g.numpy())
        with gradkit.no_grad():  # backtracking: never let the energy go up
            e0, scale = energy(x).item(), 1.0
            while energy(x + scale * gradkit.tensor(step)).item() > e0 and scale > 1e-8:
                scale /= 2
            x = x + scale * gradkit.tensor(step)
    return x.detach().numpy().reshape(n, 2), norms


def main(argv: list[str] | None = None) -> float:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--masses", type=int, default=12)
    parser.add_argument("--steps", type=int, default=30)
    args = parser.parse_args(argv)
    points, norms = newton(args.masses, args.steps)
    for i, norm in enumerate(norms):
        print(f"newton step {i:2d}  |grad E| = {norm:.3e}")
    print(f"lowest mass at y = {points[:, 1].min():.4f}; "
          f"final gradient norm {norms[-1]:.2e} after {len(norms) - 1} steps")
    return norms[-1]


if __name__ == "__main__":
    main()
