"""In-place ops and views: version counters, saved-tensor checks, rebased history."""
import warnings

import numpy as np
import pytest

import gradkit


def leaf(v):
    return gradkit.tensor(v, dtype=gradkit.float64, requires_grad=True)


def test_inplace_bumps_version_and_views_share_it():
    x = gradkit.zeros(4)
    v = x[1:3]
    assert x._version == 0
    v.add_(1)
    assert x._version == 1 and v._version == 1
    assert x.tolist() == [0.0, 1.0, 1.0, 0.0]
    r = x.reshape(2, 2)
    r.mul_(2)
    assert x._version == 2 and x.tolist() == [0.0, 2.0, 2.0, 0.0]


def test_inplace_on_leaf_requiring_grad_is_refused():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an "
                                           "in-place operation."):
        x.add_(1)
    assert x._version == 0


def test_inplace_on_leaf_is_fine_under_no_grad():
    x = leaf([1.0, 2.0])
    with gradkit.no_grad():
        x.sub_(0.5)
        x *= 2
    assert x.tolist() == [1.0, 3.0] and x.requires_grad and x._version == 2


def test_modified_saved_tensor_is_detected_with_versions():
    x = leaf([1.0, 2.0])
    h = x * 1
    y = h * h          # saves h at version 0
    h.add_(1)
    with pytest.raises(RuntimeError, match=r"one of the variables needed for gradient computation "
                                           r"has been modified by an inplace operation: "
                                           r"\[gradkit.DoubleTensor \[2\]\].*is at version 1; "
                                           r"expected version 0 instead"):
        y.sum().backward()


def test_modified_saved_output_names_its_node():
    x = leaf([1.0])
    e = x.exp()
    e.mul_(2)  # non-leaf in place: exp saved e
    with pytest.raises(RuntimeError, match="which is output 0 of Exp, is at version 1"):
        e.sum().backward()


def test_inplace_on_non_leaf_rebases_history():
    x = leaf([1.0, 2.0, 3.0])
    h = x * 2
    h.mul_(x)               # h = 2x^2
    h.add_(x)               # h = 2x^2 + x
    h.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 4 * np.array([1.0, 2.0, 3.0]) + 1)
    assert h.grad_fn.name() == "AddBackward0"


def test_setitem_records_history():
    x = leaf([1.0, 2.0, 3.0])
    v = leaf(5.0)
    h = x * 1
    h[0] = v * 2
    (h * h).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 4.0, 6.0])
    assert v.grad.item() == pytest.approx(2 * 2 * 10.0)


def test_inplace_through_a_view_rebases_the_base():
    x = leaf([1.0, 2.0, 3.0, 4.0])
    base = x * 1
    view = base[1:3]
    view.mul_(10)
    (base * base).sum().backward()
    expected = 2 * np.array([1.0, 2.0, 3.0, 4.0]) * np.array([1, 100, 100, 1])
    np.testing.assert_allclose(x.grad.numpy(), expected)


def test_view_of_leaf_inplace_is_refused():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="view of a leaf Variable that requires grad"):
        x[0:1].mul_(2)


def test_inplace_dtype_that_cannot_be_cast():
    x = gradkit.tensor([1, 2])
    with pytest.raises(RuntimeError, match="result type Float.* can't be cast to the desired "
                                           "output type Long"):
        x.add_(0.5)


def test_zero_fill_copy_and_clamp():
    x = gradkit.tensor([1.0, -2.0, 3.0])
    x.clamp_(min=0.0)
    assert x.tolist() == [1.0, 0.0, 3.0]
    x.fill_(7.0)
    assert x.tolist() == [7.0, 7.0, 7.0]
    x.copy_(gradkit.tensor([1.0, 2.0, 3.0]))
    assert x.tolist() == [1.0, 2.0, 3.0]
    x.zero_()
    assert x.tolist() == [0.0, 0.0, 0.0] and x._version == 4


def test_copy_into_non_leaf_gives_gradient_to_source():
    src = leaf([1.0, 2.0])
    dst = leaf([5.0, 5.0]) * 1
    dst.copy_(src * 3)
    dst.sum().backward()
    np.testing.assert_allclose(src.grad.numpy(), [3.0, 3.0])


def test_inplace_programs_match_torch():
    torch = pytest.importorskip("torch")

    def program(lib, x):
        h = x * 2
        h[1:3].mul_(x[0:2])
        view = h.reshape(2, 2)
        view[0, 1] = 0.5
        h.add_(1).exp_()
        return (h * h).sum()

    values = np.array([0.1, 0.2, -0.3, 0.4])
    ours, theirs = gradkit.tensor(values, requires_grad=True), torch.tensor(values,
                                                                           requires_grad=True)
    program(gradkit, ours).backward()
    program(torch, theirs).backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-12)


def test_inplace_op_that_saves_its_output_sees_later_writes():
    x = leaf([0.1, 0.2])
    h = (x * 1).exp_()     # exp_ saves its output: h itself
    h[0] = 1.0
    with pytest.raises(RuntimeError, match="which is output 0 of Exp, is at version 2; "
                                           "expected version 1 instead"):
        h.sum().backward()


class _Doubled:
    """A custom Function that saves its own output (its node is ``DoubledBackward``)."""

    @staticmethod
    def make(lib):
        class Doubled(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = x * 2
                ctx.save_for_backward(y)
                return y

            @staticmethod
            def backward(ctx, grad):
                (y,) = ctx.saved_tensors
                return grad * 2
        return Doubled


_SAVED_THEN_WRITTEN = {
    "own output": lambda lib, a: a.exp(),
    "overload 2": lambda lib, a: lib.pow(2.0, a),
    "custom Function": lambda lib, a: _Doubled.make(lib).apply(a),
    "later node": lambda lib, a: (a * 1).add_(1),
}


@pytest.mark.parametrize("anomaly", [False, True])
@pytest.mark.parametrize("make", list(_SAVED_THEN_WRITTEN))
def test_version_error_names_the_forward_op_and_hints_as_torch(make, anomaly):
    """torch 2.13 names the tensor by its legacy type, the forward op (``Exp``, ``Pow2``, a
    Function's class name) rather than its node, and in anomaly mode points at the backtrace
    instead of suggesting the mode."""
    torch = pytest.importorskip("torch")

    def message(lib):
        a = lib.ones(3, requires_grad=True)
        with warnings.catch_warnings(), lib.autograd.set_detect_anomaly(anomaly):
            warnings.simplefilter("ignore")
            y = _SAVED_THEN_WRITTEN[make](lib, a)
            z = y * y if make == "later node" else y
            y.mul_(2)
            with pytest.raises(RuntimeError) as error:
                z.sum().backward()
        return str(error.value)

    assert message(gradkit) == message(torch).replace("torch.", "gradkit.")
