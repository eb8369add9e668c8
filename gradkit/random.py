"""torch.random: the default generator's seeding and state, and ``fork_rng``."""
from __future__ import annotations

import contextlib
from collections.abc import Iterator

from gradkit.generator import (  # noqa: F401 - torch.random's names
    Generator, default_generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state)

__all__ = ["Generator", "default_generator", "fork_rng", "get_rng_state", "initial_seed",
           "manual_seed", "seed", "set_rng_state"]


@contextlib.contextmanager
def fork_rng(devices=None, enabled: bool = True, device_type: str = "cuda") -> Iterator[None]:
    """Draws inside the block leave the default generator as it was before it (gradkit has
    only the CPU generator, so ``devices`` and ``device_type`` change nothing)."""
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)
