"""Shared fixtures: float64 by default where gradients are checked, a fixed seed."""
import numpy as np
import pytest

import gradkit


@pytest.fixture(autouse=True)
def _seed():
    gradkit.manual_seed(0)
    np.random.seed(0)
    yield
