"""torch's table of custom autograd Functions (autograd_function_db: NumpyCube, NumpySort with
mark_non_differentiable, NumpyExp_ with mark_dirty, once_differentiable, jvp rules,
setup_context, defaults in forward) run as gradkit's twins: values, gradients, the in-place
variant, forward mode and second derivatives agree with torch (tests/fuzz/function_db_scan.py)."""
import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore")

import gradkit  # noqa: E402
from fuzz.function_db_scan import checks, differences  # noqa: E402
from fuzz.function_twins import function_twin  # noqa: E402
from torch.testing._internal import autograd_function_db as db  # noqa: E402

FUNCTIONS = {info.name: info for info in db.autograd_function_db}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", FUNCTIONS)
def test_custom_function_agrees_with_torch(name, dtype):
    assert differences(FUNCTIONS[name], getattr(torch, dtype)) == []


def test_every_check_torch_lists_is_run():
    cube = checks(FUNCTIONS["NumpyCubeAutogradFunction"])
    assert set(cube) == {"values and gradients", "forward mode", "second derivatives"}
    assert "in place" in checks(FUNCTIONS["NumpyExpMarkDirtyAutogradFunction"])
    assert "forward mode" not in checks(FUNCTIONS["NumpySortAutogradFunction"])


def test_twins_are_gradkit_functions_calling_each_others_twins():
    cube = function_twin(db.NumpyCube)
    assert issubclass(cube, gradkit.autograd.Function) and cube is function_twin(db.NumpyCube)
    x = gradkit.tensor([1.0, 2.0], dtype=gradkit.float64, requires_grad=True)
    y, dy = cube.apply(x)
    assert y.grad_fn.name() == "NumpyCubeBackward" and y.tolist() == [1.0, 8.0]
    y.sum().backward()  # its backward is NumpyMul's twin
    assert x.grad.tolist() == dy.tolist() == [3.0, 12.0]
    assert function_twin(db.ScaleGradGenVmap).scale == db.ScaleGradGenVmap.scale


@pytest.mark.parametrize("where", ["backward", "jvp"])
def test_a_wrong_rule_is_seen(monkeypatch, where):
    """The comparison can fail: the twin's backward (or jvp) made to double its result."""
    cube = function_twin(db.NumpyCube)
    rule = getattr(cube, where)
    monkeypatch.setattr(cube, where, staticmethod(
        lambda ctx, *grads: tuple(2 * g for g in rule(ctx, *grads))
        if where == "jvp" else 2 * rule(ctx, *grads)))
    found = differences(FUNCTIONS["NumpyCubeAutogradFunction"], torch.float64)
    assert {name for name, _, _ in found} >= (
        {"values and gradients"} if where == "backward" else {"forward mode"})
