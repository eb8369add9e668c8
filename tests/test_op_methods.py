"""Tensor methods come from the op declarations: ``@op(method=..., inplace=...)``."""
import numpy as np
import pytest

import gradkit
from gradkit.ops import methods, op


@pytest.fixture
def declared():
    """Forget, after the test, the methods a test declared (and their Tensor attributes)."""
    before = dict(methods.METHODS), dict(methods.INPLACE)
    yield
    for table, old, suffix in ((methods.METHODS, before[0], ""), (methods.INPLACE, before[1], "_")):
        for name in set(table) - set(old):
            delattr(gradkit.Tensor, name + suffix)
        table.clear()
        table.update(old)


def test_every_declared_method_is_a_tensor_method_of_torch():
    torch = pytest.importorskip("torch")
    names = sorted(methods.METHODS) + [name + "_" for name in methods.INPLACE]
    assert [n for n in names if not hasattr(gradkit.Tensor, n)] == []
    assert [n for n in names if not hasattr(torch.Tensor, n)] == []


def test_a_method_is_the_op_with_self_first():
    torch = pytest.importorskip("torch")
    values = np.array([[0.5, -1.25], [2.0, 3.0]])
    x, tx = gradkit.tensor(values), torch.tensor(values)
    for name in ("exp", "sum", "clip", "swapaxes", "inverse", "max"):
        args = {"clip": (0.0, 1.0), "swapaxes": (0, 1)}.get(name, ())
        ours, theirs = getattr(x, name)(*args), getattr(tx, name)(*args)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy())
    y, ty = x.clone(), tx.clone()
    y.mul_(2).clamp_(0, 3)
    ty.mul_(2).clamp_(0, 3)
    np.testing.assert_allclose(y.numpy(), ty.numpy())


def test_a_new_op_declares_its_method_and_in_place_form(declared):
    @op(save=("x",), elementwise=True, method=True, inplace=True)
    def cube_for_test(xp, x):
        """x³ elementwise."""
        return x * x * x

    cube_for_test.defderivative(lambda x: 3 * x * x)
    x = gradkit.tensor([1.0, 2.0], requires_grad=True)
    y = x.cube_for_test()
    assert y.grad_fn.name() == "CubeForTestBackward0"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 12.0])
    z = x.detach().clone()
    assert z.cube_for_test_() is z and z.tolist() == [1.0, 8.0] and z._version == 1
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in "
                                           "an in-place operation"):
        x.cube_for_test_()


def test_method_names_other_than_the_op_name(declared):
    @methods.tensor_method(("twice_for_test", "double_for_test"))
    def twice(x):
        return x * 2

    x = gradkit.tensor([1.5])
    assert x.twice_for_test().tolist() == [3.0] and x.double_for_test().tolist() == [3.0]
    assert not hasattr(gradkit.Tensor, "twice")
