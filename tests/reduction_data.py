"""Data and tensor helpers shared by the test_reductions_torch_expectations*.py files."""
import math
import os

import numpy as np

NAN, INF = math.nan, math.inf


class PerTestGenerator:
    """A NumPy generator restarted from ``seed`` at each test (pytest names the running test in
    PYTEST_CURRENT_TEST): a test's data does not depend on which tests ran before it."""

    def __init__(self, seed: int):
        self._seed, self._test, self._generator = seed, None, None

    def __getattr__(self, name: str):
        test = os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" ", 1)[0]
        if self._generator is None or test != self._test:
            self._test, self._generator = test, np.random.default_rng(self._seed)
        return getattr(self._generator, name)


def t(m, values, dtype: str = "float32", **kwargs):
    """A tensor of library ``m`` (torch or gradkit) of ``values`` in the dtype named."""
    return m.tensor(values, dtype=getattr(m, dtype), **kwargs)
