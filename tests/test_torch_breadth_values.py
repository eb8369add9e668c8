"""Value differences the fuzzer's breadth class found (second derivatives at a zero std or
norm, ...), each compared with torch on the same program, NaNs included."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import gradkit  # noqa: E402


def _grads_to_second_order(lib, fn, values):
    """fn's gradient (kept in the graph) and the gradient of a function of that gradient."""
    x = lib.tensor(values, requires_grad=True)
    out = fn(lib, x)
    (grad,) = lib.autograd.grad(out.sum(), x, create_graph=True)
    (grad2,) = lib.autograd.grad((grad * grad).sum() + grad.sum(), x)
    return grad.detach().numpy(), grad2.numpy()


# one row whose std and norm are 0, one of equal values (std 0, norm not), one of others
ROWS = np.array([[0.0, 0.0, 0.0], [1.0, 1.0, 1.0], [1.0, 2.0, 4.0]])


@pytest.mark.parametrize("name, fn", [
    ("std", lambda lib, x: x.std(1) * x.sum()),
    ("std keepdim", lambda lib, x: x.std(1, keepdim=True) * x),
    ("std_mean", lambda lib, x: lib.std_mean(x, 1)[0] * lib.std_mean(x, 1)[1]),
    ("std of all", lambda lib, x: x[0].std() * x),
    ("norm", lambda lib, x: x[0].norm() * x),
] + [(f"vector_norm {p}", lambda lib, x, p=p: lib.linalg.vector_norm(x, p, dim=1) * x.sum())
     for p in (2, 3, 1.5, 0.5, 1, float("inf"))])
def test_second_derivative_at_a_zero_std_or_norm_is_torchs(name, fn):
    """torch's backward divides by the zero std/norm, then masks the result: a second
    derivative through it is 0 * inf = NaN where torch's is, the first one 0."""
    mine = _grads_to_second_order(gradkit, fn, ROWS)
    theirs = _grads_to_second_order(torch, fn, ROWS)
    for a, b in zip(mine, theirs):
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_the_zero_std_case_does_give_nan_second_derivatives():
    """The regression above must be able to fail: the NaNs are there (torch gives them)."""
    _, grad2 = _grads_to_second_order(gradkit, lambda lib, x: x.std(1) * x.sum(), ROWS)
    assert np.isnan(grad2).all() and np.isfinite(_grads_to_second_order(
        gradkit, lambda lib, x: x.std(1), ROWS)[0]).all()


@pytest.mark.parametrize("fn", [
    lambda x: x.std(1), lambda x: gradkit.std_mean(x, 1)[0],
    lambda x: gradkit.linalg.vector_norm(x, 3, dim=1), lambda x: x.norm(),
    lambda x: gradkit.linalg.vector_norm(x, 1.5, dim=0),
])
def test_std_and_norm_pass_gradgradcheck_away_from_zero(fn):
    x = gradkit.tensor([[1.3, -0.7, 5.1], [0.2, 0.9, -0.4]], dtype=gradkit.float64,
                       requires_grad=True)
    assert gradkit.autograd.gradcheck(fn, (x,))
    assert gradkit.autograd.gradgradcheck(fn, (x,))


@pytest.mark.parametrize("shape, target", [((3,), 1), ((1,), 0), ((2, 3), [1, 0])])
@pytest.mark.parametrize("zero", [0.0, -0.0])
@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
def test_nll_loss_of_a_zero_log_probability_has_torchs_sign(shape, target, zero, reduction):
    """torch's unbatched kernel computes 0 - x[t] * w (+0 at x = +0), its batched one
    -x[t] * w per sample (-0)."""
    weight = np.array([1.0, 2.0, 0.5])[:shape[-1]]
    for w in (None, weight):
        got = [lib.nn.functional.nll_loss(
            lib.tensor(np.full(shape, zero)), lib.tensor(target), reduction=reduction,
            weight=None if w is None else lib.tensor(w)).numpy() for lib in (gradkit, torch)]
        np.testing.assert_array_equal(np.signbit(got[0]), np.signbit(got[1]))
        np.testing.assert_array_equal(got[0], got[1])


def test_cross_entropy_of_one_class_with_label_smoothing_is_plus_zero_as_torchs():
    """One class: log_softmax is 0; torch's 0 - 0 plus the smoothing's -0 gives +0."""
    got = [lib.nn.functional.cross_entropy(lib.tensor([-0.7]), lib.tensor(0), reduction="none",
                                           label_smoothing=0.2).numpy()
           for lib in (gradkit, torch)]
    assert got[0] == 0.0 and np.signbit(got[0]) == np.signbit(got[1])


@pytest.mark.parametrize("dtype", ["complex64", "complex128", "float64"])
def test_det_of_1x1_matrices_at_inf_and_nan_is_torchs(dtype):
    """torch multiplies the entry by 1 twice (product, pivots' sign): a complex inf entry
    gives NaN+NaNj there (inf * 0 in the imaginary part), a real one stays itself."""
    special = [0.0, -0.0, 1.5, np.inf, -np.inf, np.nan]
    entries = np.array([complex(r, i) for r in special for i in special]) \
        if dtype.startswith("complex") else np.array(special)
    batch = entries.astype(dtype).reshape(-1, 1, 1)
    mine = gradkit.linalg.det(gradkit.tensor(batch)).numpy()
    theirs = torch.linalg.det(torch.tensor(batch)).numpy()
    assert mine.dtype == theirs.dtype
    np.testing.assert_array_equal(mine, theirs)
    for part in (np.real, np.imag):  # the signs of zeros (NaN's sign bit is noise)
        np.testing.assert_array_equal(np.signbit(part(mine)) & (part(mine) == 0),
                                      np.signbit(part(theirs)) & (part(theirs) == 0))


def test_the_zero_norm_gives_no_gradient_as_torchs():
    """torch's backward of the 0-"norm" (a count) is undefined, not zeros: a NaN upstream
    stays out of the gradient, ``backward`` leaves ``.grad`` None and ``grad`` raises."""
    values = np.array([1.0, 0.0, np.nan, np.inf])
    for lib in (gradkit, torch):
        x = lib.tensor(values, requires_grad=True)
        lib.linalg.vector_norm(x, 0).backward()
        assert x.grad is None
        with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
            lib.autograd.grad(lib.linalg.vector_norm(x, 0), x)
    got = [lib.autograd.grad(lib.linalg.vector_norm(x, 0) * np.nan + x.sum(), x)[0].numpy()
           for lib in (gradkit, torch) for x in [lib.tensor(values, requires_grad=True)]]
    np.testing.assert_array_equal(got[0], got[1])
