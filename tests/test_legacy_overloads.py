"""torch's deprecated number-first overloads (``p.data.add_(-lr, grad)`` in older optimizer
code), accepted with torch's deprecation warning, compared with torch 2.13."""
import warnings

import numpy as np
import pytest

import gradkit

torch = pytest.importorskip("torch")

PROGRAMS = {
    "add_": lambda lib, x, g: x.detach().clone().add_(-0.1, g),
    "sub_": lambda lib, x, g: x.detach().clone().sub_(0.5, g),
    "add": lambda lib, x, g: lib.add(x, 2, g),
    "sub_method": lambda lib, x, g: x.sub(2, g),
    "addcmul_": lambda lib, x, g: x.detach().clone().addcmul_(0.5, g, g),
    "addcmul": lambda lib, x, g: lib.addcmul(x, 0.5, g, g),
    "addcdiv_method": lambda lib, x, g: x.addcdiv(2, g, x),
}


@pytest.fixture
def warn_always():
    """torch warns once a process (TORCH_WARN_ONCE), gradkit too: every time, for the test."""
    for lib in (torch, gradkit):
        lib.set_warn_always(True)
    yield
    for lib in (torch, gradkit):
        lib.set_warn_always(False)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_number_first_overloads_as_torch(name, warn_always):
    outcomes = []
    for lib in (torch, gradkit):
        x = lib.tensor([1.0, -2.0, 3.0], dtype=lib.float64, requires_grad=True)
        g = lib.tensor([0.5, 2.0, -1.5], dtype=lib.float64, requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = PROGRAMS[name](lib, x, g)
        grads = lib.autograd.grad(out.sum(), (x, g), allow_unused=True)
        assert any("This overload of" in str(w.message) and "is deprecated" in str(w.message)
                   for w in caught)
        outcomes.append((out.tolist(), [None if v is None else v.tolist() for v in grads]))
    np.testing.assert_allclose(outcomes[1][0], outcomes[0][0], rtol=1e-15)
    assert outcomes[1][1] == outcomes[0][1]


def test_the_current_signatures_do_not_warn():
    x, g = gradkit.ones(3), gradkit.ones(3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert x.clone().add_(g, alpha=2).tolist() == [3.0] * 3
        assert gradkit.add(x, g, alpha=-1).tolist() == [0.0] * 3


def test_nan_to_num_takes_none_for_nan():
    # torch's ``double? nan``: None stands for its default 0
    for lib in (torch, gradkit):
        x = lib.tensor([float("nan"), 1.0, float("inf")], dtype=lib.float64)
        assert x.nan_to_num(None).tolist()[:2] == [0.0, 1.0]
        assert lib.nan_to_num(x, None, None, None).tolist() == x.nan_to_num().tolist()
