"""Programs the differential fuzzer (tests/fuzz) found gradkit and torch to disagree on, each
run in both (the seed that found it in the test's comment)."""
import pytest
from test_torch_numerics import assert_same_as_torch

import gradkit

torch = pytest.importorskip("torch")


def _gather_after_input_written(m):
    x = m.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=m.float64, requires_grad=True)
    y = x * 1
    picked = m.gather(y, 1, m.tensor([[0, 0], [1, 0]]))
    y.mul_(2)
    return m.autograd.grad(picked.sum(), x)


def test_gather_saves_its_input_so_writing_it_fails_backward():
    """torch's GatherBackward0 saves ``self``: writing it in place fails backward."""
    for m in (torch, gradkit):
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            _gather_after_input_written(m)
    node = gradkit.gather(gradkit.ones(2, 2, requires_grad=True), 0,
                          gradkit.tensor([[0, 1]])).grad_fn
    assert tuple(node._saved_self.shape) == (2, 2)


def test_gather_gradient_unchanged():
    def program(m):
        x = m.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=m.float64, requires_grad=True)
        picked = m.gather(x, 1, m.tensor([[0, 0], [2, 1]]))
        return (picked,) + m.autograd.grad((picked * picked).sum(), x)
    assert_same_as_torch(program)


_EMPTY_COMPLEX = [("softmax", (-1,)), ("log_softmax", (-1,)), ("softmax", (0,)),
                  ("amax", (1,)), ("amin", (0,)), ("amax", (-1, True))]


@pytest.mark.parametrize("shape", [(0,), (2, 0), (0, 3)])
@pytest.mark.parametrize("name,args", _EMPTY_COMPLEX)
def test_empty_complex_reduces_without_grad(name, args, shape):
    """No kernel runs on an empty tensor: torch computes softmax/amax of an empty complex one
    (fuzz edge 71820) or raises its empty-dim error, as gradkit."""
    def program(m):
        return getattr(m, name)(m.zeros(shape, dtype=m.complex64), *args)
    assert_same_as_torch(program)


@pytest.mark.parametrize("shape", [(0,), (2, 0), (0, 3)])
@pytest.mark.parametrize("name,args", _EMPTY_COMPLEX)
def test_empty_complex_that_requires_grad_is_refused_by_autograd(name, args, shape):
    """torch's autograd has no complex formula for them: '<op> does not support automatic
    differentiation for outputs with complex dtype.' (or the empty-dim error first)."""
    def program(m):
        return getattr(m, name)(m.zeros(shape, dtype=m.complex64, requires_grad=True), *args)
    assert_same_as_torch(program)


@pytest.mark.parametrize("name,args", _EMPTY_COMPLEX)
def test_nonempty_complex_is_refused_by_the_kernel(name, args):
    def program(m):
        x = m.zeros((2, 3), dtype=m.complex64, requires_grad=True)
        with m.no_grad():
            return getattr(m, name)(x, *args)
    assert_same_as_torch(program)


def test_empty_complex_under_no_grad_computes():
    def program(m):
        x = m.zeros((0, 3), dtype=m.complex128, requires_grad=True)
        with m.no_grad():
            return m.softmax(x, -1), m.amax(x, 1)
    assert_same_as_torch(program)


def _write(key, value_of):
    """``x[key] = value_of(x)`` on a clone of a leaf that requires grad, then x's gradient."""
    def program(m):
        leaf = m.arange(1.0, 5.0, dtype=m.float64).reshape(2, 2).requires_grad_()
        x = leaf * 1
        x[key] = value_of(x)
        return (x,) + m.autograd.grad((x * x).sum(), leaf)
    return program


_SETITEM_FROM_ITSELF = [
    # torch's setitem strips v's leading 1-dims and expands it to the region: one element of
    # x, expanded with strides 0, overlaps the region partially (fuzz views 60409 70337 93369)
    ("one_element_with_more_dims", (0, slice(0, 1)), lambda x: x[0, 0].view(1, 1)),
    ("one_element_unbound", (slice(0, 1), 0), lambda x: x.unbind(1)[0][0:1].view(1, 1)),
    ("one_element_same_shape", (0, slice(0, 1)), lambda x: x[0, 0:1]),
    ("one_element_other_element", (0, slice(0, 1)), lambda x: x[1, 1].view(1, 1)),
    ("row_broadcast_to_rows", slice(0, 2), lambda x: x[0]),
    ("row_with_more_dims", slice(0, 1), lambda x: x[0].view(1, 1, 2)),
    ("zero_dim_is_filled_in", (0, slice(0, 1)), lambda x: x[0, 0]),
    ("region_zero_dim", (0, 0), lambda x: x[0, 0].view(1, 1)),
]


@pytest.mark.parametrize("key,value_of", [c[1:] for c in _SETITEM_FROM_ITSELF],
                         ids=[c[0] for c in _SETITEM_FROM_ITSELF])
def test_setitem_from_a_view_of_itself(key, value_of):
    assert_same_as_torch(_write(key, value_of))


def test_fill_from_a_view_of_itself_reads_the_value_first():
    def program(m):
        w = m.tensor(2.0, dtype=m.float64, requires_grad=True) * 1
        w.view(1).fill_(w)
        return w
    assert_same_as_torch(program)


def test_fill_of_an_expanded_tensor_takes_a_number_not_a_tensor():
    def program(m, value):
        x = m.zeros(1).expand(3)
        x.fill_(value(m))
        return x
    assert_same_as_torch(lambda m: program(m, lambda m: 1.0))
    assert_same_as_torch(lambda m: program(m, lambda m: m.tensor(1.0)))
