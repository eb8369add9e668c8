"""Shared fixtures: float64 by default where gradients are checked, a fixed seed."""
import signal

import numpy as np
import pytest

import gradkit

# A shell starts a background job with SIGINT ignored, and a process keeps an ignored signal
# across exec: the CLI's subprocesses would never see a Ctrl-C. Handled here, it is the
# default in them, as in a terminal (the interrupt tests assume one).
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def _seed():
    gradkit.manual_seed(0)
    np.random.seed(0)
    yield
