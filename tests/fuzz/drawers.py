"""Where a program's random choices come from: a seeded RNG, so a seed replays its program."""
from __future__ import annotations

import random
from collections.abc import Sequence


class RandomDrawer:
    """Choices from a seeded ``random.Random`` (reproducible by seed)."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.rng = random.Random(seed)

    def integer(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)

    def boolean(self) -> bool:
        return self.rng.random() < 0.5

    def chance(self, p: float) -> bool:
        """True with probability ``p``."""
        return self.integer(0, 999) < p * 1000

    def choice(self, items: Sequence):
        return items[self.integer(0, len(items) - 1)]
