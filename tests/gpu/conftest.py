"""GPU tests: run only where CuPy sees a CUDA device; elsewhere they skip with the reason."""
import pytest

import gradkit


def pytest_collection_modifyitems(config, items):
    if gradkit.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA device and CuPy (pip install 'gradkit[cuda]')")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
