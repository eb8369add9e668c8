"""Every sample of the op table passes gradcheck and gradgradcheck in float64 / complex128."""
import pytest

from gradkit.autograd import gradcheck, gradgradcheck
from op_db import bind, cases, differentiable_outputs, gradkit_tensor

CASES = cases()


def _differentiable_call(info, sample):
    leaves, call = bind(info.op, sample, gradkit_tensor)
    return leaves, lambda *ts: differentiable_outputs(call(*ts))


@pytest.mark.parametrize("info,sample", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_gradcheck(info, sample):
    if "nonsmooth" in info.extra:
        pytest.skip(info.extra["nonsmooth"])
    leaves, fn = _differentiable_call(info, sample)
    assert gradcheck(fn, tuple(leaves), atol=info.atol, rtol=info.rtol)


@pytest.mark.parametrize("info,sample", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_gradgradcheck(info, sample):
    if "nonsmooth" in info.extra or not info.gradgrad:
        pytest.skip(info.extra.get("nonsmooth", "no second derivative"))
    leaves, fn = _differentiable_call(info, sample)
    assert gradgradcheck(fn, tuple(leaves), atol=info.atol, rtol=info.rtol)
