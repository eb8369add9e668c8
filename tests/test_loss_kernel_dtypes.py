"""Losses whose CPU kernels torch has for float32/float64 only: float16 (no Half kernel),
complex and integer inputs raise torch's NotImplementedError, in torch's order among the
argument checks (found by torch's module table run at float16: gradkit computed them)."""
import pytest

import gradkit

torch = pytest.importorskip("torch")

PROGRAMS = {
    # torch's dtype check comes before the blank and length checks
    "ctc_loss": lambda lib, d: lib.nn.functional.ctc_loss(
        lib.zeros(5, 2, 4, dtype=d), lib.tensor([[1, 2], [1, 1]]), lib.tensor([9, 5]),
        lib.tensor([2, 2]), 7),
    "ctc_loss_float_lengths": lambda lib, d: lib.nn.functional.ctc_loss(
        lib.zeros(5, 2, 4, dtype=d), lib.tensor([[1, 2], [1, 1]]), lib.tensor([5.0, 5]),
        lib.tensor([2, 2])),
    "multi_margin_loss": lambda lib, d: lib.nn.functional.multi_margin_loss(
        lib.zeros(3, 4, dtype=d), lib.zeros(3, dtype=lib.long)),
    "multi_margin_loss_empty": lambda lib, d: lib.nn.functional.multi_margin_loss(
        lib.zeros(0, 4, dtype=d), lib.zeros(0, dtype=lib.long)),
    "multilabel_margin_loss": lambda lib, d: lib.nn.functional.multilabel_margin_loss(
        lib.zeros(3, 4, dtype=d), lib.zeros(3, 4, dtype=lib.long)),
    # the target's shape is checked before the kernel's dtype
    "multilabel_margin_loss_target_shape": lambda lib, d: lib.nn.functional.multilabel_margin_loss(
        lib.zeros(3, 4, dtype=d), lib.zeros(3, 5, dtype=lib.long)),
}


def _outcome(lib, name, dtype):
    try:
        out = PROGRAMS[name](lib, getattr(lib, dtype))
    except Exception as error:  # noqa: BLE001 - the error is what is compared
        return type(error).__name__, str(error)
    return "computes", str(out.dtype).split(".")[1]


@pytest.mark.parametrize("dtype", ["float16", "complex64", "int64", "float32"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_loss_kernel_dtypes_as_torch(name, dtype):
    assert _outcome(gradkit, name, dtype) == _outcome(torch, name, dtype)


def test_a_float16_ctc_loss_names_torchs_kernel():
    with pytest.raises(NotImplementedError, match="\"ctc_loss_cpu\" not implemented for 'Half'"):
        PROGRAMS["ctc_loss"](gradkit, gradkit.float16)
