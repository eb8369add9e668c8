"""An in-place op on a view right after a write made its base require grad: torch refuses it
until the view's grad_fn is read (a state that depends on what the program read), gradkit
computes what torch computes after the read (docs/autograd.md, "unless something read its
`grad_fn` first"; fuzz strided seed 1469)."""

import pytest

import gradkit

torch = pytest.importorskip("torch")


def program(lib, read_grad_fn: bool):
    param = lib.tensor([[1.0], [2.0]], requires_grad=True)
    w = lib.zeros(2, 3)[:, :2]
    w[:, 1:2] = param * 3
    if read_grad_fn:
        w.grad_fn  # noqa: B018 - torch rebuilds the view's history when it is read
    w.mul_(2)
    (w * lib.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    return w.detach().numpy().tolist(), param.grad.numpy().tolist()


def test_torch_refuses_until_the_views_history_is_read():
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used"):
        program(torch, read_grad_fn=False)


@pytest.mark.parametrize("read_grad_fn", [False, True])
def test_gradkit_computes_what_torch_computes_after_the_read(read_grad_fn):
    assert program(gradkit, read_grad_fn) == program(torch, read_grad_fn=True)
    # closed form: w[:, 1] = 6 * param; d/dparam of sum(w * c) = 6 * c[:, 1]
    assert program(gradkit, read_grad_fn)[1] == [[12.0], [24.0]]
