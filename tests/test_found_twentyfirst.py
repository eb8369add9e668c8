"""Differences the fuzzer found in the twenty-first session, each program run in gradkit and in
torch 2.13 (skipped without torch)."""
import numpy as np
import pytest

import gradkit

torch = pytest.importorskip("torch")
_NAN, _INF = float("nan"), float("inf")


def _outcome(call):
    """("ok", value as a list, its bits) or (error type name, message)."""
    try:
        value = call()
    except Exception as error:  # noqa: BLE001 - the outcome is what is compared
        return type(error).__name__, str(error).replace("gradkit", "LIB").replace("torch", "LIB")
    array = np.asarray(value.detach().numpy())
    signs = [np.signbit(part).tolist() for part in (array.real, array.imag)]
    return "ok", repr(array.tolist()), signs


@pytest.mark.parametrize("data", [[[0.5, 1.0], [0.2, 3.0]], [[_NAN, 1.0], [0.2, _NAN]],
                                  [[_INF, -_INF], [_INF, 2.0]], [[-0.0, 0.0], [0.0, -0.0]]])
@pytest.mark.parametrize("initial", [None, 0.5, 2.0, -0.0, 0.0, _NAN, -_INF])
@pytest.mark.parametrize("reduce", ["max", "min"])
def test_segment_reduce_max_min_fold_from_initial_and_give_others_zero(data, initial, reduce):
    """torch's kernel folds a max/min segment from ``initial`` keeping the first of tied
    values (so a zero's sign is the first zero's, ``initial``'s when it is one: wide seed
    57910), and its backward writes the gradient into the elements equal to the result only,
    so the others get 0 where the gradient is NaN or inf (wide seeds 70781, 81881, 98866:
    gradkit multiplied it by a 0 mask, NaN)."""
    def call(m, part):
        x = m.tensor(data, dtype=m.float64, requires_grad=True)
        y = m.segment_reduce(x, reduce, lengths=m.tensor([2, 0]), initial=initial)
        if part == "value":
            return y
        return m.autograd.grad(y, x, m.tensor([[3.0, -_NAN], [_NAN, _INF]],
                                              dtype=m.float64))[0]
    for part in ("value", "grad"):
        assert _outcome(lambda: call(gradkit, part)) == _outcome(lambda: call(torch, part))
