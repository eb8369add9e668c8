"""A write autograd does not record (under no_grad, through a detached alias, into the view
itself under no_grad) bumps the memory's version, and torch regenerates each view's history
from its base when it next reads it: the view's gradient then no longer passes through the
views it was made from, so their hooks and retained grads see nothing of it. gradkit kept the
old chain (a doubling hook on an intermediate view doubled torch's gradient). Found by the
fuzzer's conj_views class (seed 2380)."""
import pytest

import gradkit

torch = pytest.importorskip("torch")


def _no_grad(write):
    def run(lib, *views):
        with lib.no_grad():
            write(lib, *views)
    return run


WRITES = {
    "none": lambda lib, x, v0, v1, v2: None,
    "view_under_no_grad": _no_grad(lambda lib, x, v0, v1, v2: v1.mul_(2)),
    "base_under_no_grad": _no_grad(lambda lib, x, v0, v1, v2: x.add_(1)),
    "detached_alias": lambda lib, x, v0, v1, v2: v0.detach().add_(1),
    "data_alias": lambda lib, x, v0, v1, v2: x.data.add_(1),  # its own version counter
    "sibling_under_no_grad": _no_grad(lambda lib, x, v0, v1, v2: v2.zero_()),
}


def _gradient_through_a_hooked_view(lib, write):
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    v0 = x[0:3]
    v0.register_hook(lambda g: g * 2)
    v1, v2 = v0[0:2], v0[1:3]
    write(lib, x, v0, v1, v2)
    ((v1 * 3).sum() + (v2 * 5).sum()).backward()
    return x.grad.tolist()


@pytest.mark.parametrize("write", WRITES.values(), ids=WRITES)
def test_hooks_of_intermediate_views_after_an_unrecorded_write_as_torch(write):
    assert _gradient_through_a_hooked_view(gradkit, write) == \
        _gradient_through_a_hooked_view(torch, write)


def _retained(lib):
    y = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    a = y * 1
    w1 = a[0:2]
    w1.retain_grad()
    w3 = w1.unsqueeze(0)
    a.detach().add_(1)
    (w3 * 3).sum().backward()
    return y.grad.tolist(), w1.grad


def test_a_retained_grad_of_an_intermediate_view_after_a_detached_write_as_torch():
    assert _retained(gradkit) == _retained(torch) == ([3.0, 3.0, 0.0], None)


def test_the_regenerated_history_replays_the_view_chain():
    """docs/torch_expectations.md: torch's regenerated node is one AsStridedBackward0 from the
    base; gradkit replays the view's steps from the base (same gradients)."""
    x = gradkit.tensor([1.0, 2.0, 3.0], requires_grad=True)
    v = x[0:2].unsqueeze(0)
    first = v.grad_fn
    with gradkit.no_grad():
        x.mul_(2)
    assert v.grad_fn is not first and v.grad_fn.name() == "UnsqueezeBackward0"
    assert v.grad_fn.next_functions[0][0].next_functions[0][0].name() == \
        "AccumulateGrad"
