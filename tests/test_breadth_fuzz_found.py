"""Programs the fuzzer's breadth and strided_breadth classes found gradkit and torch 2.13 to
disagree on (the fourteenth session), each run in both libraries (seeds are strided_breadth's
unless a test says breadth)."""
import cmath
import dataclasses
import math
import subprocess
import sys
import warnings

import numpy as np
import pytest
from cpu_kernels import assert_lapack_known, torch_runs_avx512_kernels
from fuzz.known import diff_program, known_difference
from fuzz.programs import Leaf, Program, RandomDrawer, Step, generate
from fuzz.runner import run

import gradkit
from gradkit.ops.softmax_backward import log_softmax_backward_data, softmax_backward_data

torch = pytest.importorskip("torch")


def _outcome(call):
    """What ``call()`` gives: ("ok", value as a list) or (error type name, message), the
    library's name in the message written as ``LIB``."""
    try:
        value = call()
    except Exception as error:  # noqa: BLE001 - the outcome is what is compared
        return type(error).__name__, str(error).replace("gradkit", "LIB").replace("torch", "LIB")
    return "ok", np.asarray(value.detach().numpy() if hasattr(value, "numpy") else value).tolist()


def _assert_same_refusal(program, up_to: str) -> None:
    """``program(m)`` raises a RuntimeError in both libraries, its message alike up to
    ``up_to`` (after it torch names a stale view's node AsStrided, gradkit its view op)."""
    ours, theirs = _outcome(lambda: program(gradkit)), _outcome(lambda: program(torch))
    assert ours[0] == theirs[0] == "RuntimeError"
    assert ours[1].split(up_to)[0] == theirs[1].split(up_to)[0]

@pytest.mark.parametrize("p", [0.0, 1.0, 1.5, 2.0, math.inf])
@pytest.mark.parametrize("write", ["mul_", "lt_", "transpose_"])
def test_pdist_output_written_in_place_refuses_backward(p, write):
    """torch's PdistBackward0 saves its result: a write into it makes backward raise (seeds
    10461, 10888); gradkit computed, from the distances as they were."""
    def program(m):
        x = m.tensor([[1.0, 2.0], [3.0, 5.0], [0.0, 1.0]], dtype=m.float64, requires_grad=True)
        y = m.nn.functional.pdist(x, p)
        getattr(y, write)(*{"mul_": (2,), "lt_": (0.5,), "transpose_": (0, 0)}[write])
        return m.autograd.grad(y.sum(), x)[0] if y.requires_grad else y

    mine, theirs = _outcome(lambda: program(gradkit)), _outcome(lambda: program(torch))
    assert mine == theirs
    assert "output 0 of Pdist, is at version 1" in mine[1]


def test_pdist_output_not_written_still_differentiates():
    def program(m):
        x = m.tensor([[1.0, 2.0], [3.0, 5.0], [0.0, 1.0]], dtype=m.float64, requires_grad=True)
        y = m.nn.functional.pdist(x)
        (y * 1).mul_(2)  # a write into another tensor
        return m.autograd.grad(y.sum(), x)[0]
    assert _outcome(lambda: program(gradkit)) == _outcome(lambda: program(torch))


@pytest.mark.parametrize("value", [math.nan, -math.nan, -1e-20, -2.5, -math.inf])
@pytest.mark.parametrize("name", ["rtol", "atol"])
@pytest.mark.parametrize("call", ["isclose", "allclose"])
def test_isclose_refuses_a_nan_tolerance(value, name, call):
    """torch checks ``tol >= 0``, so a NaN tolerance raises, printed with its sign as C++
    prints it (seed 14822); gradkit checked ``tol < 0`` and computed."""
    def program(m):
        one = m.tensor([1.0, math.nan])
        return getattr(m, call)(one, one, **{name: value})
    mine, theirs = _outcome(lambda: program(gradkit)), _outcome(lambda: program(torch))
    assert mine == theirs and mine[0] == "RuntimeError"
    assert mine[1].endswith(("-nan" if math.copysign(1, value) < 0 else "nan")
                            if value != value else f"{value:g}")


def _laid_out_leaf(m):
    """A leaf that is a view of a wider buffer (every other element), requiring grad."""
    return m.tensor(np.ones((3, 2, 2)))[..., ::2].requires_grad_()


IN_PLACE_VIEW_CALLS = [("swapdims_", (0, -2)), ("transpose_", (0, 1)), ("swapaxes_", (1, 0)),
                       ("t_", ()), ("unsqueeze_", (0,)), ("squeeze_", ()), ("mul_", (2,))]


@pytest.mark.parametrize("name, args", IN_PLACE_VIEW_CALLS)
@pytest.mark.parametrize("target", ["leaf", "view of the leaf"])
def test_in_place_view_ops_refuse_a_view_leaf_and_its_views(name, args, target):
    """torch refuses an in-place view op on a view of a leaf that requires grad when that
    leaf is itself a view of another buffer (seed 9712: gradkit let swapdims_ through), and
    names the leaf "a view of a leaf Variable" (gradkit said "a leaf Variable")."""
    def program(m):
        leaf = _laid_out_leaf(m)
        tensor = leaf if target == "leaf" else leaf.select(0, 2)
        return getattr(tensor, name)(*args)
    mine, theirs = _outcome(lambda: program(gradkit)), _outcome(lambda: program(torch))
    assert mine == theirs == ("RuntimeError", "a view of a leaf Variable that requires grad is "
                              "being used in an in-place operation.")


@pytest.mark.parametrize("make", ["leaf", "view of a leaf", "plain"])
def test_t_of_a_3d_tensor_refuses_a_leaf_before_its_dims(make):
    def program(m):
        x = m.ones(3, 2, 2, requires_grad=make != "plain")
        return (x[0:2] if make == "view of a leaf" else x).t_()
    mine, theirs = _outcome(lambda: program(gradkit)), _outcome(lambda: program(torch))
    assert mine == theirs and mine[0] == "RuntimeError"


@pytest.mark.parametrize("call", [
    lambda v: v.transpose_("a", 1), lambda v: v.unsqueeze_(1.5), lambda v: v.swapdims_(0, None),
    lambda v: v.t_(1), lambda v: v.swapaxes_(axis0=0, axis1=1), lambda v: v.transpose_(0, dim1=1),
    lambda v: v.transpose_(0), lambda v: v.transpose_(0, 1, 2), lambda v: v.transpose_(),
    lambda v: v.transpose_(0, 1, dim3=2), lambda v: v.transpose_(0, 1, dim1=2),
    lambda v: v.swapaxes_(0), lambda v: v.unsqueeze_(), lambda v: v.unsqueeze_(0, 1),
    lambda v: v.unsqueeze_(d=0), lambda v: v.unsqueeze_(dim=0)])
@pytest.mark.parametrize("requires_grad", [False, True])
def test_in_place_view_ops_read_their_arguments_first(call, requires_grad):
    """torch's parser reads the arguments of transpose_/swapaxes_/swapdims_/unsqueeze_/t_
    before any autograd check, in the in-place op's name (gradkit said ``transpose()``, or
    refused the leaf first)."""
    def program(m):
        return call(m.ones(3, 2, 2, requires_grad=requires_grad))
    assert _outcome(lambda: program(gradkit)) == _outcome(lambda: program(torch))


def test_cat_of_legacy_empty_tensors_gives_them_gradients_off_the_graph():
    """torch's cat backward gives a 1-d empty input new zeros (breadth seed 1002800: with
    every input empty gradkit split the gradient, so a second derivative reached
    hardsigmoid's backward, which has none, and raised)."""
    def program(m):
        x = m.zeros(0, dtype=m.float64, requires_grad=True)
        y = m.ones(2, dtype=m.float64, requires_grad=True)
        first = m.autograd.grad(m.nn.functional.hardsigmoid(m.cat(m.tensor_split(x, 4))).sum(),
                                x, create_graph=True)[0]
        mixed = m.autograd.grad((m.cat([x, y, x]) ** 2).sum(), (x, y), create_graph=True)
        return [(tuple(t.shape), t.requires_grad, t.grad_fn is None)
                for t in (first, *mixed)]
    assert program(gradkit) == program(torch) == [((0,), False, True), ((0,), False, True),
                                                  ((2,), True, False)]


def _svd_and_eigh_with_an_infinite_seed(m, n: int, seed: float, mode: str):
    """Gradients (mode "vjp<k>": output k's gradient infinite at [0, 0]) or tangents ("jvp")
    of svd and eigh of a small matrix, as lists."""
    a = m.tensor([[3.0, 1.0], [0.5, 2.0]], dtype=m.float64)[:n, :n].contiguous()
    results = []
    for decompose, x in ((lambda x: m.linalg.svd(x, full_matrices=False), a),
                         (m.linalg.eigh, a + a.mT)):
        if mode == "jvp":
            t = m.zeros_like(x)
            t[0, 0] = seed
            fwd = m.autograd.forward_ad
            with fwd.dual_level():
                outs = decompose(fwd.make_dual(x, t))
                results.append([fwd.unpack_dual(o).tangent.tolist() for o in outs])
            continue
        x = x.clone().requires_grad_()
        outs = decompose(x)
        k = int(mode[-1]) % len(outs)
        grads = [m.zeros_like(o) for o in outs]
        grads[k][(0,) * grads[k].dim()] = seed
        results.append(m.autograd.grad(outs, x, grads)[0].tolist())
    return results


@pytest.mark.parametrize("mode", ["vjp0", "vjp1", "vjp2", "jvp"])
@pytest.mark.parametrize("seed", [math.inf, -math.inf, 1.5])
@pytest.mark.parametrize("n", [1, 2])
def test_svd_derivatives_keep_the_nan_of_an_infinite_vector_gradient(n, seed, mode):
    """torch's svd backward and jvp do not zero the diagonal of their skew terms, so an
    infinite gradient of U or Vh (or tangent) gives NaN (inf - inf) where gradkit gave 0 or
    inf (breadth seed 1011353: svd, then ** inf); eigh's do zero it, in both."""
    mine = _svd_and_eigh_with_an_infinite_seed(gradkit, n, seed, mode)
    theirs = _svd_and_eigh_with_an_infinite_seed(torch, n, seed, mode)
    np.testing.assert_allclose(_numbers(mine), _numbers(theirs), rtol=1e-12)


def _numbers(nested) -> list:
    """The numbers of nested lists, in order."""
    if isinstance(nested, list):
        return [x for item in nested for x in _numbers(item)]
    return [nested]


SCALAR_TENSOR_CALLS = {
    "add": lambda m, x, a: m.add(x, x * 2, alpha=a), "sub": lambda m, x, a: x.sub(x * 2, alpha=a),
    "rsub": lambda m, x, a: m.rsub(x, x * 2, alpha=a),
    "add_": lambda m, x, a: (x * 1).add_(x * 2, alpha=a),
    "index_add": lambda m, x, a: x.reshape(1).index_add(0, m.tensor([0]), x.reshape(1), alpha=a),
    "addr": lambda m, x, a: m.addr(x.reshape(1, 1), x.reshape(1), x.reshape(1), beta=a, alpha=a),
}


@pytest.mark.parametrize("name", SCALAR_TENSOR_CALLS)
@pytest.mark.parametrize("given", ["complex64", "float32", "complex128"])
def test_a_scalar_given_as_a_0d_tensor_is_its_number(name, given):
    """torch reads alpha (beta) given as a 0-d tensor as a Scalar: gradkit kept the tensor, so
    on a 0-d complex128 input the derivative multiplied by a complex64 tensor rounded to
    single precision (breadth seed 1009139); addr refused it with a TypeError."""
    def program(m):
        x = m.tensor(np.array(0.2154210110011534 - 0.015137981567598269j), requires_grad=True)
        a = m.tensor(0.3 + 0.1j if given.startswith("complex") else 0.3,
                     dtype=getattr(m, given))
        out = SCALAR_TENSOR_CALLS[name](m, x, a)
        weight = m.tensor(np.full(tuple(out.shape), -0.0683853 + 0.68059861j))
        (grad,) = m.autograd.grad((out * weight).sum().real, x)
        return out.detach().numpy().tolist(), grad.item(), out.grad_fn._saved_alpha
    assert program(gradkit) == program(torch)


def _det_gradients(m, matrix, dtype: str, create_graph: bool) -> tuple:
    """det's gradient of a complex-weighted det, and (create_graph) the gradient of a weighted
    sum of that gradient."""
    a = m.tensor(np.array(matrix), dtype=getattr(m, dtype), requires_grad=True)
    (grad,) = m.autograd.grad((m.linalg.det(a) * (0.3 + 0.9j)).real, a, create_graph=create_graph)
    if not create_graph:
        return grad.numpy(), None
    weight = m.tensor(np.array([[1 + 2j, 0.5 - 1j], [0.3 + 0.1j, -0.7 + 0.2j]]),
                      dtype=getattr(m, dtype))
    return grad.detach().numpy(), m.autograd.grad((grad * weight).real.sum(), a)[0].numpy()


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_det_gradient_at_an_exactly_singular_complex_matrix(dtype):
    """The cofactors through the SVD were det(U) det(Vh) U diag Vh, the real case's formula:
    for a complex A the gradient conj(det(A) A^{-T}) is conj(det(U) det(Vh)) U diag Vh, torch's
    (gradkit's was another matrix)."""
    singular = [[1 + 1j, 2 + 2j], [1, 2]]  # det exactly 0
    mine = _det_gradients(gradkit, singular, dtype, True)[0]
    np.testing.assert_allclose(mine, _det_gradients(torch, singular, dtype, True)[0], rtol=1e-6)
    np.testing.assert_allclose(mine, np.conj([[2, -1], [-2 - 2j, 1 + 1j]]) * np.conj(0.3 + 0.9j),
                               rtol=1e-6)  # conj of the cofactors times conj(0.3 + 0.9j)
    plain = _det_gradients(gradkit, singular, dtype, False)[0]  # (torch's plain one is zeros)
    np.testing.assert_allclose(plain, mine, rtol=1e-6)


def test_det_second_derivative_of_a_nearly_singular_matrix_takes_the_svd():
    """Under create_graph torch's det backward takes the SVD wherever |det| < 100 eps (its
    second derivative is then the SVD's); gradkit took A^{-1} unless det was exactly 0, and
    det(kron(x, x).reshape(2, 2)) = a^2 b^2 - (ab)^2 is a rounding of 0 (breadth seed 1052311:
    the second derivatives were -14 - 30j here, -1.6 - 2.1j in torch)."""
    program = generate(RandomDrawer(1052311), "breadth")
    assert [s.op for s in program.steps][1::2] == ["e_kron", "b_det"] and program.create_graph
    assert diff_program(program) == ([], None)


@pytest.mark.parametrize(("inputs", "targets"), [
    ([0.5, 0.3], [math.nan, 0.2]), ([0.5, 0.3], [1.5, 0.2]), ([0.5, 0.3], [-0.1, 0.2]),
    ([0.5, 0.3], [math.inf, 0.2]), ([0.5, 2.0], [1.5, 0.5]), ([2.0, 0.5], [0.5, 1.5]),
    ([math.nan, 0.3], [math.nan, 0.2]), ([0.5, 0.3], [1.0, 0.0])])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_binary_cross_entropy_checks_its_target(inputs, targets, dtype):
    """torch checks each element's input, then its target, to lie in [0, 1] (NaN does not):
    gradkit checked the input only, so a NaN target (sigmoid of log of a negative) computed NaN
    (breadth seed 1047714)."""
    def program(m):
        x = m.tensor(inputs, dtype=getattr(m, dtype), requires_grad=True)
        loss = m.nn.functional.binary_cross_entropy(x, m.tensor(targets, dtype=getattr(m, dtype)))
        return m.autograd.grad(loss, x)[0]
    mine, theirs = _outcome(lambda: program(gradkit)), _outcome(lambda: program(torch))
    assert mine[0] == theirs[0]
    if mine[0] == "ok":
        np.testing.assert_allclose(mine[1], theirs[1], rtol=1e-6)
    else:
        assert mine == theirs and "should be between 0 and 1" in mine[1]


@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
@pytest.mark.parametrize("shape", [(), (3,), (2, 3)])
@pytest.mark.parametrize("dim", [None, 0, -1])
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("q", [0.25, [0.25, 0.5]])
def test_quantile_result_is_no_view(name, shape, dim, keepdim, q):
    """torch's quantile squeezes its own result in place (SqueezeBackward4, no view; a 1-D q's
    dim first and innermost in memory); gradkit's was a view (squeeze, movedim), so an
    in-place div_(rounding_mode=...) on it rebased the base's history: the gradient kept a
    graph through ctc_loss's backward, whose double backward raised (breadth seed 1049321)."""
    def program(m):
        x = m.arange(float(math.prod(shape)), dtype=m.float64).reshape(shape).requires_grad_()
        qs = m.tensor(q, dtype=m.float64) if isinstance(q, list) else q
        out = getattr(m, name)(x, qs, dim=dim, keepdim=keepdim, interpolation="lower")
        first = (out._is_view(), out.grad_fn.name(), tuple(out.shape), out.stride())
        out.div_(3.0, rounding_mode="trunc")
        (grad,) = m.autograd.grad((out.exp() ** 2).sum(), x, create_graph=True)
        return first, out.detach().tolist(), grad.tolist(), grad.requires_grad
    assert program(gradkit) == program(torch)


def test_ill_conditioned_gradient_before_the_same_later_error_is_known():
    """float32 1 / (a degree-12 polynomial) into ctc_loss: a gradient entry of ~1e22 is
    +5.5e21 or -5.5e21 in torch as its leaves move an ulp, gradkit's 8.2e21; both raise the
    same error in the double backward after, which the ill-conditioned entry took for a
    difference (breadth seed 1045759). torch's float64 run of the program fails in its double
    backward too, whose gradients now serve as the noise Known's reference, which names it
    first (nn_new seed 324334)."""
    problems, known = diff_program(generate(RandomDrawer(1045759), "breadth"))
    assert problems and known.startswith(("an ill-conditioned result", "single-precision "
                                          "gradients that torch's own double-precision"))


def test_complex_convolution_at_inf_is_a_known_difference():
    """torch's complex convolution is three real ones (Gauss's trick): an infinite input
    gives inf - inf, NaN, where gradkit's complex product gives inf (breadth seed 1052072)."""
    def conv(m):
        x = m.tensor([[[[1 + 1j, math.inf + 0j]]]], dtype=m.complex128)
        return m.nn.functional.conv2d(x, m.tensor([[[[1 + 2j]]]], dtype=m.complex128))
    mine, theirs = conv(gradkit).numpy().ravel(), conv(torch).numpy().ravel()
    assert mine[0] == theirs[0] == -1 + 3j
    assert np.isinf(mine[1].real) and np.isnan(theirs[1].real)
    problems, known = diff_program(generate(RandomDrawer(1052072), "breadth"))
    assert problems and known.startswith("complex matmul with infinite entries")


def test_fft_zero_sign_through_an_in_place_branch_cut_is_known():
    """MKL's FFT of a zero-padded real row leaves -0.0 in one imaginary part where pocketfft
    leaves +0.0; acosh_ written in place over it turns that sign into the conjugate. The
    first value to differ is then the FFT's own (overwritten) slot, which the branch-cut
    entry did not read through the in-place write (breadth seed 1045773)."""
    def program(m):
        f = m.fft.fft(m.tensor([[0.3, -0.2, 0.5]], dtype=m.float32), dim=-2, n=4, norm="ortho")
        return np.signbit(f.numpy().imag[3]), f.acosh_().numpy()[3]
    (mine_sign, mine), (their_sign, theirs) = program(gradkit), program(torch)
    if not their_sign.any():
        pytest.skip("this torch's FFT leaves +0.0 too (not MKL's)")
    assert not mine_sign.any() and their_sign.all()
    np.testing.assert_array_equal(mine, np.conj(theirs))
    problems, known = diff_program(generate(RandomDrawer(1045773), "breadth"))
    assert problems and known.startswith("the sign of a zero imaginary part an FFT leaves")


@pytest.mark.parametrize("fn", ["smooth_l1_loss", "huber_loss"])
@pytest.mark.parametrize("bool_first", [True, False])
@pytest.mark.parametrize("reduction", ["sum", "none"])
@pytest.mark.parametrize("size", [0, 3])
def test_piecewise_quadratic_loss_with_a_bool_operand_differentiates(fn, bool_first, reduction,
                                                                     size):
    """A bool input (not a tensor that requires grad, 0-d: size 0) with a float target: torch
    differentiates the target (huber refuses a bool); gradkit's backward read ``input._data``
    off the saved array and raised AttributeError (breadth seed 1032320)."""
    def program(m):
        x = m.tensor([0.7, -0.2, 1.3][:size] if size else 0.7, requires_grad=True)
        mask = m.tensor([True, False, True][:size] if size else True)
        pair = (mask, x * 1) if bool_first else (x * 1, mask)
        width = {"beta" if fn == "smooth_l1_loss" else "delta": 0.5}
        try:
            out = getattr(m.nn.functional, fn)(*pair, reduction=reduction, **width)
            first = m.autograd.grad(out.sum(), x, retain_graph=True)[0].tolist()
            (grad,) = m.autograd.grad(out.sum(), x, create_graph=True)
        except RuntimeError as error:
            return str(error)
        second = _outcome(lambda: m.autograd.grad(grad.sum(), x)[0])
        return out.tolist(), first, grad.tolist(), second
    mine = program(gradkit)
    assert mine == program(torch)
    assert isinstance(mine, str) == (fn == "huber_loss")


@pytest.mark.parametrize("shapes", [((1, 0, 0), (2, 0, 0)), ((1, 2), (2, 2)), ((2,), (2,))])
@pytest.mark.parametrize("write", ["result", "x"])
def test_copysign_keeps_its_result_when_only_the_sign_needs_a_gradient(shapes, write):
    """torch's CopysignBackward0 keeps (and unpacks) its result when only ``y`` needs a
    gradient, so a write into it refuses backward (breadth seed 1040004: cumsum_ of it);
    gradkit dropped the result and computed. A write into x, saved for x's gradient only,
    still computes. (pow with a number exponent keeps no result: breadth seed 1038065.)"""
    def program(m):
        y = m.ones(shapes[0], requires_grad=True)
        x = m.ones(shapes[1])
        out = m.copysign(x, y)
        (out if write == "result" else x).cumsum_(dim=0)
        out.sum().backward()
        return y.grad
    mine = _outcome(lambda: program(gradkit))
    assert mine == _outcome(lambda: program(torch))
    assert (mine[0] == "RuntimeError") == (write == "result")


def test_float_power_by_a_number_written_in_place_still_differentiates():
    """torch's pow(Tensor, Scalar) node saves no result: a write into it computes (breadth
    seed 1038065: logical_or_ of float_power(x, 0))."""
    def program(m):
        x = m.tensor([[0.5 + 1j], [-2.0 + 0j], [0j]], dtype=m.complex128, requires_grad=True)
        out = m.float_power(x, 0)
        out.logical_or_(x)
        return m.autograd.grad(out.real.sum() if out.is_complex() else out.sum(), x)[0]
    assert _outcome(lambda: program(gradkit)) == _outcome(lambda: program(torch))


def test_fft_zero_sign_written_in_place_through_a_branch_cut_is_known():
    """Known difference (docs/numerics.md, "a branch cut after it"; breadth seed 1038214):
    torch's MKL rfftn of a constant leaves -0j where pocketfft leaves +0j, and acosh_ writes
    the conjugate into that same tensor; the classifier read the FFT's own (real, agreeing)
    input, not what acosh_ read before its write."""
    def transform(m):
        spectrum = m.fft.rfftn(m.full((1, 3), -0.7, dtype=m.float32))
        before = spectrum.clone()
        return before.numpy(), spectrum.acosh_().numpy()
    (mine, mine_acosh), (theirs, their_acosh) = transform(gradkit), transform(torch)
    np.testing.assert_array_equal(mine, theirs)                  # equal as numbers
    assert np.signbit(mine.imag).tolist() == [[False, False]]
    assert np.signbit(theirs.imag).tolist() == [[False, True]]
    assert mine_acosh[0, 0] == their_acosh[0, 0]
    assert mine_acosh[0, 1] == np.conj(their_acosh[0, 1]) and mine_acosh[0, 1].imag > 1
    program = Program("breadth", (Leaf((), "complex64", True),), (
        Step("n_adaptive_pool", (0,), {"kind": "avg3", "shape": (1, 1, 1, 1, 1),
                                       "size": (3, 4, 3)}),
        Step("fft_rfftn", (1,), {"s": None, "dim": (-5, -1), "norm": "backward"}),
        Step("fb_acosh_", (2,), {})), False, 1038214)
    problems, known = diff_program(program)
    assert problems and known == "the sign of a zero imaginary part an FFT leaves, through a " \
        "branch cut"


def test_svd_gradient_at_repeated_singular_values_is_known():
    """Known difference (docs/numerics.md, "up to rounding divide by their"; breadth seed
    1044475): a constant 3 x 3 matrix plus 2 I has singular values 2 + 3c, 2, 2, and svd's
    backward (reconstructing U S V^H) divides by their squares' differences, rounding noise:
    NaN here, a finite number in torch. The classifier knew eig's and eigh's only."""
    c = 0.8735206
    matrix = np.full((3, 3), c, dtype=np.float32) + 2 * np.eye(3, dtype=np.float32)
    for m in (gradkit, torch):
        s = m.linalg.svdvals(m.tensor(matrix, dtype=m.float64)).tolist()
        assert s == pytest.approx([2 + 3 * c, 2, 2], rel=1e-6)
    program = Program("breadth", (Leaf((), "complex64", True),), (
        Step("f_multi_head_attention", (0, 0), {
            "heads": 1, "head_dim": 2, "tgt": 3, "src": 3, "batch": 2, "mask": "causal",
            "padding": "float", "need_weights": True, "average": True, "zero_attn": False,
            "bias_kv": False, "separate": True, "in_bias": False}),
        Step("fb_svd_legacy", (1,), {"n": 3, "flag": False, "flag2": True})), False, 1044475)
    problems, known = diff_program(program)
    assert problems and all(p.startswith("grads") for p in problems)
    assert known.startswith("gradients of eig (eigh, svd)")


@pytest.mark.parametrize("matrix", [[[1.0, 1.0], [1.0, 1.0]], [[1.0, 2.0], [2.0, 4.0]],
                                    [[1.0, 0.0], [0.0, 0.0]]])
def test_det_gradient_at_a_singular_matrix_is_known(matrix):
    """Known difference (docs/numerics.md, "torch's plain backward solves for"; breadth seed
    1033888): at an exactly singular matrix torch's plain backward of det gives zeros, its
    create_graph one and gradkit's the adjugate; the classifier had no entry for it."""
    def gradient(m, create_graph):
        x = m.tensor(matrix, dtype=m.float64, requires_grad=True)
        return m.autograd.grad(m.linalg.det(x), x, create_graph=create_graph)[0].tolist()
    adjugate = [[matrix[1][1], -matrix[1][0]], [-matrix[0][1], matrix[0][0]]]
    assert gradient(torch, False) == [[0.0, 0.0], [0.0, 0.0]]
    for theirs in (gradient(torch, True), gradient(gradkit, True), gradient(gradkit, False)):
        np.testing.assert_allclose(theirs, adjugate, atol=1e-12)  # (by the SVD: rounding)
    program = Program("breadth", (Leaf((), "complex64", True), Leaf((), "int64", False),
                                  Leaf((), "float32", True)), (
        Step("b_unique", (2,), {}),
        Step("sp_polynomial_tensor_n", (3, 3), {"fn": "chebyshev_polynomial_v", "n": 5}),
        Step("b_eigh_prod", (4,), {"n": 1}),
        Step("fft_fft", (5,), {"dim": 0, "n": 5, "norm": None}),
        Step("b_det", (6,), {"n": 2})), False, 1033888, backward=True)
    problems, known = diff_program(program)
    assert problems and known.startswith("det's gradient at an exactly singular matrix")
    assert known_difference(dataclasses.replace(program, create_graph=True), *(
        run(program, m) for m in (gradkit, torch))) != known  # torch's adjugate then


def test_infinite_slope_at_a_lapack_zero_is_known():
    """Known difference (docs/numerics.md, "infinite at 0 (`gammaincc(a, x)`"; breadth seed
    1041007): torch's (MKL's) U S V^H of [[2, 0], [-0.77, 2]] has an exact 0 where gradkit's
    (OpenBLAS's) has -1e-17, and gammaincc(0.5, |x|)'s derivative is infinite at 0: NaN
    (inf * abs' 0) in torch, a finite number here."""
    def slope(m, x):
        x = m.tensor(x, dtype=m.float64, requires_grad=True)
        return m.autograd.grad(m.special.gammaincc(m.tensor(0.5, dtype=m.float64), x.abs()), x)[0]
    for m in (gradkit, torch):
        assert math.isnan(slope(m, 0.0).item()) and slope(m, -1e-17).item() > 1e7
    program = Program("breadth", (Leaf((), "float64", True),), (
        Step("s_diagflat", (0,), {"offset": 2}),
        Step("fb_svd_legacy", (1,), {"n": 2, "flag": True, "flag2": True}),
        Step("sp_gammaincc", (2, 2), {})), True, 1041007)
    problems, known = diff_program(program)
    assert all(p.startswith("grads") for p in problems)
    assert_lapack_known(problems, known, "a derivative infinite at 0 of an entry a LAPACK")


@pytest.mark.parametrize("name", ["addmm", "addbmm", "baddbmm", "addmv", "addr"])
@pytest.mark.parametrize("shape, inner", [((2, 2), 0), ((0, 0), 0), ((0, 2), 0), ((2, 0), 0),
                                          ((2, 2), 3)])
@pytest.mark.parametrize("beta", [0.5, 1.0, 0.0, 2])
def test_integer_scaled_sum_of_nothing_refuses_a_float_beta_only_with_elements(
        name, shape, inner, beta):
    """torch's ``result.mul_(beta)`` of an integer product summing nothing refuses a float beta
    only where the result has elements (breadth seed 1075193: an empty addmm computes)."""
    def program(m):
        x = m.zeros(shape, dtype=m.int64)
        a, b = m.zeros(shape[0], inner, dtype=m.int64), m.zeros(inner, shape[1], dtype=m.int64)
        rows, columns = m.zeros(shape[0], dtype=m.int64), m.zeros(shape[1], dtype=m.int64)
        return tuple({
            "addmm": lambda: m.addmm(x, a, b, beta=beta, alpha=2.5),
            "addbmm": lambda: m.addbmm(x, a[None], b[None], beta=beta, alpha=2.5),
            "baddbmm": lambda: m.baddbmm(x[None], a[None], b[None], beta=beta, alpha=2.5),
            "addmv": lambda: m.addmv(rows, a, m.zeros(inner, dtype=m.int64), beta=beta,
                                     alpha=2.5),
            "addr": lambda: m.addr(x, rows, columns, beta=beta, alpha=2.5)}[name]().shape)
    assert _outcome(lambda: program(gradkit)) == _outcome(lambda: program(torch))


@pytest.mark.parametrize("row", [[0.58, -0.15, -math.inf], [0.58, math.inf, 0.1],
                                 [math.inf, -math.inf, 0.2], [math.nan, 0.1, 0.2],
                                 [0.5, 0.2, -0.1]])
@pytest.mark.parametrize("target", [0, 2])
@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("incoming", [-0.5, math.inf])
@pytest.mark.parametrize("weighted", [False, True])
def test_multi_margin_gradient_at_an_infinite_hinge(row, target, p, incoming, weighted):
    """torch's kernel gives the target class minus the other slopes' sum, then multiplies
    every slope by the incoming gradient (breadth seed 1077035: x = [0.58, -0.15, -inf],
    target 2); gradkit subtracted ``mask * sum``, whose 0 * inf made the others NaN."""
    def program(m):
        x = m.tensor([row], dtype=m.float64, requires_grad=True)
        weight = m.tensor([1.0, 2.0, 0.5], dtype=m.float64) if weighted else None
        loss = m.nn.functional.multi_margin_loss(x, m.tensor([target]), p=p, weight=weight,
                                                 reduction="none")
        return m.autograd.grad(loss, x, m.full_like(loss, incoming))[0]
    mine, theirs = _outcome(lambda: program(gradkit)), _outcome(lambda: program(torch))
    np.testing.assert_array_equal(mine[1], theirs[1])


def test_multi_margin_seed_agrees():
    program = Program("breadth", (Leaf((3,), "float64", True, True),), (
        Step("n_multi_margin", (0,), {"labels": [2], "lists": [2, 0, -1], "p": 2,
                                      "reduction": "none"}),), True, 1077035)
    assert diff_program(program) == ([], None)


@pytest.mark.parametrize("matrix, dtype", [
    ([[math.inf, math.nan], [math.nan, math.inf]], "float64"),   # OpenBLAS: [[inf, 0], [0, inf]]
    ([[math.inf, math.nan], [math.nan, math.inf]], "float32"),
    ([[1.0, math.nan], [math.nan, 1.0]], "float64"), ([[4.0, 1.0, 0.0], [1.0, math.nan, 0.0],
                                                        [0.0, 0.0, 1.0]], "float64"),
    ([[1.0, 0.0], [0.0, math.inf]], "float64"), ([[1.0, math.inf], [math.inf, 1.0]], "float64"),
    ([[math.inf, 0.0], [math.nan, math.inf]], "float64")])
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("batched", [False, True])
def test_cholesky_of_a_non_finite_matrix_fails_at_a_nan_pivot(matrix, dtype, upper, batched):
    """torch's potrf fails at the NaN pivot of a matrix with a NaN in the triangle it reads, as
    cholesky_ex's info says (breadth seed 1070435: cholesky_inverse of m m^T + I with an
    infinite m); OpenBLAS's lost the NaN and gradkit computed. cholesky_ex(upper=True) read the
    lower triangle for its info."""
    def program(m, call):
        a = m.tensor(matrix, dtype=getattr(m, dtype))
        a = m.stack([m.eye(len(matrix), dtype=a.dtype), a]) if batched else a
        if call == "cholesky":
            return m.linalg.cholesky(a, upper=upper)
        return m.linalg.cholesky_ex(a, upper=upper, check_errors=call == "checked")[0]
    for call in ("cholesky", "checked", "ex"):
        mine, theirs = (_outcome(lambda m=m, call=call: program(m, call))
                        for m in (gradkit, torch))
        assert mine[0] == theirs[0].lstrip("_") and (mine[0] != "LinAlgError" or
                                                     mine[1] == theirs[1])
        if mine[0] == "ok":
            np.testing.assert_array_equal(mine[1], theirs[1])


@pytest.mark.parametrize("matrix", [[[1.0, 5.0], [0.1, 1.0]], [[1.0, 0.1], [5.0, 1.0]],
                                    [[4.0, 2j], [7.0, -1.0]], [[4.0, 7.0], [2j, 1.0]]])
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_ex_reads_the_triangle_it_factors(matrix, upper):
    def program(m):
        a = m.tensor(matrix, dtype=m.complex128 if isinstance(matrix[0][1], complex) or
                     isinstance(matrix[1][0], complex) else m.float64)
        factor, info = m.linalg.cholesky_ex(a, upper=upper)
        return m.cat([factor.reshape(-1), info.reshape(1).to(factor.dtype)])
    mine, theirs = _outcome(lambda: program(gradkit)), _outcome(lambda: program(torch))
    np.testing.assert_array_equal(mine[1], theirs[1])


@pytest.mark.parametrize("shape", [(1, 1, 0), (2, 1, 0), (1, 2, 0), (2, 4, 0, 3), (0, 2, 3)])
@pytest.mark.parametrize("call", ["group_norm", "native_group_norm", "F.group_norm"])
def test_group_norm_weight_gradient_of_an_empty_group(shape, call):
    """torch's weight gradient is rstd * (sum(dy x) - sum(dy) mean) summed over the batch:
    NaN for an empty group (its rstd is NaN), 0 for an empty batch (breadth seed 1067804)."""
    def program(m):
        x = m.zeros(shape, requires_grad=True)
        weight = m.ones(shape[1], requires_grad=True)
        bias = m.zeros(shape[1], requires_grad=True)
        out = {"group_norm": lambda: m.group_norm(x, 1, weight, bias),
               "F.group_norm": lambda: m.nn.functional.group_norm(x, 1, weight, bias),
               "native_group_norm": lambda: m.native_group_norm(
                   x, weight, bias, shape[0], shape[1], math.prod(shape[2:]), 1, 1e-5)[0]}[call]()
        return m.cat([g.reshape(-1) for g in m.autograd.grad(out.sum(), (weight, bias))])
    mine, theirs = _outcome(lambda: program(gradkit)), _outcome(lambda: program(torch))
    np.testing.assert_array_equal(mine[1], theirs[1])
    assert math.isnan(mine[1][0]) == (shape[0] > 0 and 0 in shape[2:])


@pytest.mark.parametrize("shape", [(1, 1, 0), (2, 3, 0), (0, 2, 3)])
def test_native_norm_statistics_of_no_elements(shape):
    """torch's kernels leave the mean of an empty group or row 0 (its rstd NaN)."""
    def program(m):
        x = m.zeros(shape)
        _, mean, rstd = m.native_group_norm(x, None, None, shape[0], shape[1], shape[2], 1,
                                            1e-5)
        _, lmean, lrstd = m.native_layer_norm(x, shape[-1:], None, None, 1e-5)
        return m.cat([t.reshape(-1) for t in (mean, rstd, lmean, lrstd)])
    mine, theirs = _outcome(lambda: program(gradkit)), _outcome(lambda: program(torch))
    np.testing.assert_array_equal(mine[1], theirs[1])


def test_group_norm_seed_agrees():
    program = Program("breadth", (Leaf((0,), "complex64", True), Leaf((), "complex64", True),
                                  Leaf((0,), "float32", False)), (
        Step("fb_aten_norm", (2, 1), {"kind": "native_group_norm", "affine": True,
                                      "eps": 1e-05}),), False, 1067804)
    assert diff_program(program) == ([], None)


def test_topk_among_equal_values_is_torchs():
    """topk of 3 of a column of four zeros (breadth seed 1061570, a Known until gradkit
    replayed torch's selection): torch's picks, not the first three, and the gradient agrees."""
    def picked(m):
        return m.topk(m.zeros(4, 1, dtype=m.float64), 3, dim=0).indices.reshape(-1).tolist()
    assert picked(gradkit) == picked(torch) != [0, 1, 2]
    program = Program("breadth", (Leaf((3,), "float64", True, True),), (
        Step("s_diagflat", (0,), {"offset": 1}),
        Step("b_topk", (1,), {"dim": 0, "k": 3, "largest": True})), False, 1061570,
        backward=True)
    assert diff_program(program) == ([], None)


def test_cdist_double_backward_with_an_integer_tensor_torch_marks_is_known():
    """Two Known differences in one program (breadth seed 1064727): ``int.gt_(x)`` requires
    grad in torch (not in gradkit), and torch's cdist has no double backward; the cdist
    entry now lets the integer flags differ."""
    for m, flag in ((gradkit, False), (torch, True)):
        x = m.tensor(0.07, dtype=m.float64, requires_grad=True)
        assert m.tensor(4).gt_(x).requires_grad == flag
    program = Program("breadth", (Leaf((), "float64", True), Leaf((), "int64", False)), (
        Step("fb_compare_", (1, 0), {"name": "gt", "scalar": None}),
        Step("s_cdist_self", (0,), {"p": 0.5})), True, 1064727)
    problems, known = diff_program(program)
    assert problems and known.startswith("cdist's and pdist's second derivative exists")


def test_complex_corrcoef_of_values_equal_but_for_rounding_is_known():
    """Known difference (docs/numerics.md, "a variable whose values are equal but for
    rounding"; breadth seed 1071948): complex64 values one ulp from torch's, upstream of a
    corrcoef of three equal values: its variance is 5e-18 (corrcoef 1) or 0 (NaN) as the
    values round; the classifier knew real values only."""
    for value, expected in ((0.22297412 - 0.01567837j, 1), (0.1 + 0j, 1)):
        for m in (gradkit, torch):
            assert m.corrcoef(m.full((1, 3), value, dtype=m.complex64)).item() == expected
    for m in (gradkit, torch):
        assert math.isnan(m.corrcoef(m.full((1, 3), 0.1, dtype=m.float32)).item())
    program = Program("breadth", (Leaf((), "complex64", True),), (
        Step("l_tensorinv", (0,), {"n": 1}), Step("l_tensorinv", (1,), {"n": 1}),
        Step("fft_fftn", (2,), {"s": (3,), "dim": (-2,), "norm": "ortho"}),
        Step("e2_corrcoef", (3,), {})), True, 1071948, backward=True)
    problems, known = diff_program(program)
    assert problems and known.startswith("corrcoef of a variable equal but for rounding")


def test_single_precision_matrix_exp_gradient_of_a_large_norm_is_known():
    """Known difference (docs/numerics.md, "amplify each algorithm's"; breadth seed 1064464):
    matrix_exp's complex64 gradient for an incoming gradient G ~ 3e4 is a relative |G| * eps
    from the complex128 one in both libraries (gradkit's the nearer here), so they are 1e-3
    apart; the classifier allowed 1e-5 (float64's G ~ 1e10)."""
    a = np.array([[0.8165438 + 0.55747545j]])

    def gradient(m, dtype):
        x = m.tensor(a, dtype=dtype, requires_grad=True)
        loss = (m.linalg.matrix_exp(x) * (2.7e4 * (0.3 - 0.7j))).real.sum()
        return complex(m.autograd.grad(loss, x)[0].item())
    truth = gradient(torch, torch.complex128)
    assert truth == pytest.approx(2.7e4 * (0.3 + 0.7j) * np.exp(a.conj()).item(), rel=1e-12)
    mine, theirs = gradient(gradkit, gradkit.complex64), gradient(torch, torch.complex64)
    assert abs(mine - truth) < abs(theirs - truth) < 2e-3 * abs(truth)
    assert abs(mine - theirs) > 1e-5 * abs(truth)
    program = Program("breadth", (Leaf((1,), "complex64", True),), (
        Step("l_matrix_exp", (0,), {"n": 1}), Step("b_searchsorted", (0,), {}),
        Step("b_scatter_add", (2,), {"dim": -1, "index": [0, 0]}), Step("b_polar", (3, 3), {}),
        Step("fb_convolution", (4, 4), {"shape": (1, 1, 1), "kernel": 1, "stride": 1,
                                        "padding": 1, "transposed": False, "bias": True}),
        Step("e2_float_power", (1, 5), {})), True, 1064464)
    problems, known = diff_program(program)
    assert problems and all(p.startswith("grads") for p in problems)
    assert known.startswith("matrix_exp's gradient for a large incoming gradient")


@pytest.mark.parametrize("row", [[0.58, -0.15, -math.inf], [0.58, math.inf, 0.1],
                                 [math.inf, -math.inf, 0.2], [0.5, 0.2, -0.1]])
@pytest.mark.parametrize("targets", [[2, -1, 0], [0, 1, -1], [1, 1, 2]])
@pytest.mark.parametrize("incoming", [-0.5, math.inf, math.nan])
def test_multilabel_margin_gradient_times_an_infinite_incoming_one(row, targets, incoming):
    """torch's kernel adds 1 / C per counted pair and multiplies by the incoming gradient
    last: an infinite one gives infinite slopes (NaN where 0); gradkit's product with 0
    counts made every slope NaN."""
    def program(m):
        x = m.tensor([row], dtype=m.float64, requires_grad=True)
        loss = m.nn.functional.multilabel_margin_loss(x, m.tensor([targets]), reduction="sum")
        return m.autograd.grad(loss, x, m.full_like(loss, incoming))[0]
    np.testing.assert_array_equal(_outcome(lambda: program(gradkit))[1],
                                  _outcome(lambda: program(torch))[1])


@pytest.mark.parametrize("loss", ["multi_margin_loss", "multilabel_margin_loss"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_margin_loss_gradients_are_torchs_bits(loss, dtype, reduction):
    """Both backward kernels' arithmetic (a running sum of the slopes, the incoming gradient
    last) gives torch's bits, repeated targets and twelve classes included."""
    rng = np.random.default_rng(7)
    for _ in range(20):
        n, c = int(rng.integers(1, 4)), int(rng.integers(1, 13))
        x0, incoming = rng.normal(size=(n, c)).astype(dtype), rng.normal(size=n).astype(dtype)
        labels = rng.integers(-1, c, size=(n, c)) if loss == "multilabel_margin_loss" else \
            rng.integers(0, c, size=n)
        weight = rng.uniform(0.1, 2, size=c).astype(dtype)
        grads = []
        for m in (gradkit, torch):
            x = m.tensor(x0, requires_grad=True)
            extra = {"p": 2, "margin": 0.7, "weight": m.tensor(weight)} \
                if loss == "multi_margin_loss" else {}
            out = getattr(m.nn.functional, loss)(x, m.tensor(labels), reduction=reduction,
                                                 **extra)
            g = m.tensor(incoming).reshape(out.shape) if out.ndim else m.tensor(incoming[0])
            grads.append(m.autograd.grad(out, x, g)[0].numpy())
        np.testing.assert_array_equal(*grads)


SOFT_MARGIN_OPERANDS = [
    ("float32", [1.0], "complex64", [1.0]), ("float64", [1.0], "complex128", [1j]),
    ("float32", [1.0, 2.0], "complex128", 1j), ("int64", [1, 2], "complex64", [1j, 1j]),
    ("int64", [1, 2], "float32", [1.0, 3.0]), ("int64", [1, 2], "int64", [1, 1]),
    ("int8", [1, 2], "float64", 1.5), ("int64", [1, 2], "float32", [1.0, 1, 1]),
    ("int64", 1, "float32", [1.0, 1.0]), ("float32", [1.0], "float64", [-1.0])]


@pytest.mark.parametrize("dtype, values, target_dtype, target", SOFT_MARGIN_OPERANDS)
def test_soft_margin_loss_refuses_a_result_its_buffer_cannot_hold(dtype, values, target_dtype,
                                                                  target):
    """torch writes -input into a buffer of input's dtype, then ``mul_(target)`` and ``exp_``:
    a complex target of a real input is refused with its result type (breadth seed 1080348),
    and an integer input by the first result type it cannot hold, after the shape check."""
    def program(m):
        return m.nn.functional.soft_margin_loss(m.tensor(values, dtype=getattr(m, dtype)),
                                                m.tensor(target, dtype=getattr(m, target_dtype)))
    mine, theirs = _outcome(lambda: program(gradkit)), _outcome(lambda: program(torch))
    assert mine[0] == theirs[0] and (mine[0] == "ok" or mine[1] == theirs[1])


def test_phase_check_of_gradients_through_a_repeated_eigenvalue_is_known():
    """Known difference (docs/numerics.md, "basis of its eigenspace (not an orthogonal one)";
    breadth seed 1086692): eig of a constant 3 x 3 matrix plus 2 I (eigenvalue 2 twice) gives
    each LAPACK's own eigenvectors, and the gradients through them are as arbitrary: gradkit's
    complex SVD backward before it refuses their phase term, torch's computes."""
    c = 2.0487533
    for m in (gradkit, torch):
        values = m.linalg.eigvals(m.full((3, 3), c, dtype=m.float64) + 2 * m.eye(3)).real
        assert sorted(values.tolist()) == pytest.approx([2, 2, 2 + 3 * c])
    program = Program("breadth", (Leaf((), "complex64", True), Leaf((), "int64", False),
                                  Leaf((), "bool", False)), (
        Step("b_svd_prod", (0,), {"n": 1}),
        Step("f_grid_sample", (3, 0), {"shape": (1, 1, 1, 1), "affine": True, "out": (3, 3),
                                       "mode": "bilinear", "padding_mode": "reflection",
                                       "align_corners": True}),
        Step("l_eig_pairs", (4,), {"n": 3})), False, 1086692, backward=True)
    problems, known = diff_program(program)
    assert torch_runs_avx512_kernels() or problems[0].startswith(
        "extra error: gradkit raised ('backward'")
    assert_lapack_known(problems, known, "eig's eigenvectors of a repeated eigenvalue")


@pytest.mark.parametrize("name", ["median", "nanmedian"])
def test_median_along_a_stride_zero_dim_is_known(name):
    """Known difference (docs/numerics.md, "read memory they did not write"; breadth seed
    1092789): torch's median/nanmedian along a dim of stride 0 return a value no element
    holds; gradkit's is the median of the equal values."""
    def median(m, expanded):
        x = m.tensor([0.5, 0.7], dtype=m.float64).reshape(2, 1)
        rows = x.expand(2, 3) if expanded else x.expand(2, 3).contiguous()
        return getattr(m, name)(rows, -1).values.tolist()
    assert median(gradkit, True) == median(gradkit, False) == median(torch, False) == [0.5, 0.7]
    program = Program("breadth", (Leaf((), "float64", True), Leaf((), "float64", False)), (
        Step("fb_as_strided", (1,), {"size": (1, 3), "stride": (3, 0), "offset": 0}),
        Step(f"b_{name}", (2,), {"dim": -1, "keepdim": True})), False, 1092789, backward=True)
    # torch's value is whatever the memory held: now and then the right one (then no problem)
    problems, known = diff_program(program)
    assert not problems or known == (  # (its first problem: values, or their signed zeros)
        "median/nanmedian along a stride-0 dim: torch's reads memory it did not write")


@pytest.mark.parametrize("requiring", ["other", "input", "input2", "all"])
@pytest.mark.parametrize("written", ["other", "input", "input2", "result", "none"])
@pytest.mark.parametrize("view", [False, True])
def test_ormqr_refuses_a_write_into_any_input_it_saved(requiring, written, view):
    """torch's OrmqrBackward0 saves input, input2, input3 and the result: a write into any of
    them before backward is refused (breadth seed 1094093: ``conj_physical_`` of the base of
    input3); gradkit's composite kept only what its product's nodes needed."""
    def program(m):
        a, tau = m.geqrf(m.tensor([[2.7 + 0.1j, 0.3], [0.2j, 1.5]], dtype=m.complex128))
        a, tau = (t.clone().requires_grad_(requiring in (name, "all"))
                  for t, name in ((a, "input"), (tau, "input2")))
        leaf = m.tensor([[0.7 + 0.1j, 1], [2, 3j]], dtype=m.complex128,
                        requires_grad=requiring in ("other", "all"))
        base = leaf * 1
        out = m.ormqr(a, tau, base[:, :1] if view else base * 1)
        target = {"other": base, "input": a, "input2": tau, "result": out, "none": None}[written]
        if target is not None:
            target.detach().mul_(1) if target is not base else base.conj_physical_()
        grads = m.autograd.grad(out.abs().sum(), [t for t in (a, tau, leaf) if t.requires_grad])
        return m.cat([g.reshape(-1) for g in grads])
    mine, theirs = _outcome(lambda: program(gradkit)), _outcome(lambda: program(torch))
    assert mine[0] == theirs[0]
    if mine[0] != "ok":  # (gradkit names a stale view's node otherwise than torch's AsStrided)
        assert mine[1].split(", which is")[0] == theirs[1].split(", which is")[0]
    else:
        np.testing.assert_allclose(mine[1], theirs[1], rtol=1e-12)
    assert (mine[0] != "ok") == (written in ("input", "input2", "result") or
                                 written == "other" and view)


def test_ormqr_saves_torchs_tensors():
    def saved(m):
        a, tau = m.geqrf(m.tensor([[2.0, 0.3], [0.2, 1.5]], dtype=m.float64))
        other = m.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=m.float64, requires_grad=True)
        node = m.ormqr(a, tau, other).grad_fn
        return [getattr(node, f"_saved_{name}").detach().numpy() for name in
                ("self", "input2", "input3", "result")]
    for mine, theirs in zip(saved(gradkit), saved(torch)):
        np.testing.assert_allclose(mine, theirs, rtol=1e-15, atol=1e-15)


def test_second_derivative_of_abs_of_xlog1py_by_inf():
    """torch's SpecialXlog1PyBackward0/1 pass sgn's zero tensor on to y (``g * x / (y + 1)``
    is not computed), so abs(xlog1py(inf, |x|))'s second derivative is -inf, not 0 * inf
    (breadth seed 1099941); XlogyBackward1 (a number x) too."""
    def second(m, fn):
        x = m.tensor([0.3, -2.0], dtype=m.float64, requires_grad=True)
        y = fn(m)(math.inf, x.abs())
        g, = m.autograd.grad(y.abs().sum() * 0.7, x, create_graph=True)
        return m.autograd.grad(g.sum() * 0.3, x)[0].tolist()
    for fn in (lambda m: m.special.xlog1py, lambda m: m.xlogy):
        assert second(gradkit, fn) == second(torch, fn)
    assert second(gradkit, lambda m: m.special.xlog1py) == [-math.inf, -math.inf]


def test_pixel_unshuffle_of_an_empty_tensor_then_a_refused_shape_is_known():
    """Known difference (docs/numerics.md, "input unchanged, whatever the factor"; breadth seed
    1097530): torch's pixel_unshuffle of an empty (0, 1, 2, 2) tensor keeps that shape, which
    zeta with a (0,) tensor then refuses; gradkit's (0, 4, 1, 1) broadcasts."""
    for m, shape in ((gradkit, [0, 4, 1, 1]), (torch, [0, 1, 2, 2])):
        assert list(m.nn.functional.pixel_unshuffle(m.zeros(0, 1, 2, 2), 2).shape) == shape
    program = Program("breadth", (Leaf((0,), "float64", True), Leaf((), "float64", True)), (
        Step("n_resample", (0,), {"kind": "unshuffle", "shape": (0, 1, 2, 2), "k": 2}),
        Step("sp_zeta", (0, 2), {})), True, 1097530)
    problems, known = diff_program(program)
    assert problems[0].startswith("missing error: torch raised ('step 1 (sp_zeta)'")
    assert known == "pixel_(un)shuffle of an empty tensor has the op's shape (torch: the input's)"


def test_classifier_reads_eig_of_a_0_by_0_matrix():
    """eig of a 0 x 0 matrix has no eigenvalues to compare: the repeated-spectrum check
    skips it (breadth seed 1120328 was a harness error: max of an empty array)."""
    program = Program("breadth", (Leaf((), "complex64", True), Leaf((1,), "bool", False),
                                  Leaf((), "int64", False)), (
        Step("l_eig_pairs", (0,), {"n": 0}),
        Step("fb_unfold", (0,), {"dim": 0, "size": 1, "step": 2}),
        Step("fb_as_strided_scatter", (4, 0), {"size": (0, 1, 2), "stride": (1, 3, 0),
                                               "offset": 1}),
        Step("s_diagflat", (5,), {"offset": 2})), True, 1120328)
    problems, known = diff_program(program)
    assert problems and known.startswith("as_strided_scatter's gradient of self")


@pytest.mark.parametrize("mode, shape", [("linear", (1, 1, 5)), ("bilinear", (1, 1, 2, 3)),
                                         ("trilinear", (1, 1, 1, 2, 3))])
@pytest.mark.parametrize("resize", [{"scale_factor": 1.0}, {"scale_factor": 1.2},
                                    {"scale_factor": 1.5}, {"size": "same"}])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_linear_interpolation_to_the_same_size_copies_as_torch(mode, shape, resize,
                                                               align_corners, dtype):
    """torch's linear kernels "simply copy" where a dim keeps its size: x * 1 + x * 0, NaN at
    an infinite element, its neighbours untouched (breadth seed 1127505); gradkit blended the
    next element with weight 0 (0 * inf made the neighbour NaN)."""
    values = [1.0, math.inf, 2.0, 3.0, math.nan, -math.inf][:math.prod(shape)]
    resize = {"size": shape[2:]} if resize == {"size": "same"} else resize

    def program(m):
        x = m.tensor(values, dtype=getattr(m, dtype)).reshape(shape)
        return m.nn.functional.interpolate(x, mode=mode, align_corners=align_corners, **resize)
    mine, theirs = _outcome(lambda: program(gradkit)), _outcome(lambda: program(torch))
    assert str(mine) == str(theirs)


@pytest.mark.parametrize("call", ["as_strided", "as_strided_", "as_strided_copy", "slice"])
def test_gradient_through_an_empty_as_strided_view_has_no_graph(call):
    """torch's as_strided_backward gives an empty view new zeros, off the graph, so a
    create_graph gradient through it alone has none (breadth seed 1119326: torch's double
    backward found nothing to differentiate); a slice's keeps its graph in both."""
    def gradient(m):
        x = m.tensor([0.5, 1.0], dtype=m.float64, requires_grad=True)
        y = x * 2
        empty = {"as_strided": lambda: y.as_strided((3, 0), (1, 0), 1),
                 "as_strided_": lambda: y.as_strided_((3, 0), (1, 0), 1),
                 "as_strided_copy": lambda: m.as_strided_copy(y, (3, 0), (1, 0), 1),
                 "slice": lambda: y[:0]}[call]()
        g, = m.autograd.grad(empty.exp().sum() + x.sum() * 0.5, x, create_graph=True)
        return g.tolist(), g.requires_grad
    assert gradient(gradkit) == gradient(torch) == ([0.5, 0.5], call == "slice")


def test_cdist_double_backward_after_another_known_difference_is_known():
    """Two Known differences (breadth seed 1136505): as_strided_scatter's gradient of self
    (docs/api.md), then torch's cdist without a double backward; the cdist entry now lets the
    first-order results differ as another Known explains."""
    program = Program("breadth", (Leaf((3, 3), "float32", True),), (
        Step("fb_as_strided_scatter", (0, 0), {"size": (), "stride": (), "offset": 0}),
        Step("s_cdist", (1, 1), {"p": 2, "mode": "donot_use_mm_for_euclid_dist"})),
        True, 1136505)
    problems, known = diff_program(program)
    assert problems[0].startswith("missing error: torch raised ('double backward'")
    assert known.startswith("cdist's and pdist's second derivative exists")
    first_order = dataclasses.replace(program, create_graph=False)
    assert diff_program(first_order)[1].startswith("as_strided_scatter's gradient of self")


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("dtype", ["complex64", "complex128", "float64"])
def test_soft_margin_loss_of_a_complex_input_has_no_derivative(requires_grad, dtype):
    """torch computes a complex soft_margin_loss but refuses to record it (its derivative formula
    is real only): breadth seed 1080348 (a polar input) computed and recorded."""
    def program(m):
        x = m.tensor([1 + 1j if "complex" in dtype else 0.5, -2.0],
                     dtype=getattr(m, dtype), requires_grad=requires_grad)
        out = m.nn.functional.soft_margin_loss(x, m.tensor([1.0, -1.0]), reduction="none")
        return [*out.detach().tolist(), out.requires_grad]
    ours, theirs = _outcome(lambda: program(gradkit)), _outcome(lambda: program(torch))
    assert ours[0] == theirs[0]
    if ours[0] == "ok":  # libm's and torch's exp round apart in the last bit
        np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-6)
    else:
        assert ours == theirs


def test_a_backward_error_after_eig_of_a_repeated_eigenvalue_is_known():
    """eig of a constant 3 x 3 matrix plus 2 I: its eigenvectors of the repeated eigenvalue 2
    differ (any basis of the eigenspace), so do the gradients flowing back; gradkit's reach an
    earlier svd whose phase check refuses them (breadth seed 1086692: torch computed)."""
    problems, known = diff_program(generate(RandomDrawer(1086692), "breadth"))
    assert problems and known.startswith("eig's eigenvectors of a repeated eigenvalue")


def test_xlog1py_of_a_number_keeps_sgns_zero_tensor():
    """abs(xlog1py(inf, |x|))'s second derivative: torch's SpecialXlog1PyBackward1 keeps the zero
    tensor of sgn's backward zero (-inf, from the other term), gradkit multiplied it by inf: NaN
    (breadth seed 1099941)."""
    def second(m):
        x = m.tensor(0.7, dtype=m.float64, requires_grad=True)
        g, = m.autograd.grad(m.special.xlog1py(math.inf, x.abs()).abs(), x, create_graph=True)
        return m.autograd.grad(g, x)[0].item()
    assert second(gradkit) == second(torch) == -math.inf


def test_a_later_error_after_an_empty_pixel_unshuffle_is_known():
    """pixel_unshuffle of a (0, 1, 2, 2) tensor: (0, 4, 1, 1) in gradkit, torch's input shape;
    a zeta broadcasting it with a (0,) tensor then computes here and raises in torch (breadth
    seed 1097530)."""
    def shape(m):
        return tuple(m.nn.functional.pixel_unshuffle(m.zeros(0, 1, 2, 2), 2).shape)
    assert shape(gradkit) == (0, 4, 1, 1) and shape(torch) == (0, 1, 2, 2)
    problems, known = diff_program(generate(RandomDrawer(1097530), "breadth"))
    assert problems and known.startswith("pixel_(un)shuffle of an empty tensor")


@pytest.mark.parametrize("written", ["input", "input2", "input3", "result"])
def test_ormqr_saves_its_inputs_and_result_as_torch(written):
    """torch's OrmqrBackward0 saves self, input2, input3 and its result: a write into any of them
    before backward is refused (breadth seed 1094093: a write into the right-hand side's base,
    gradkit computed)."""
    def program(m):
        a, tau = m.geqrf(m.tensor([[3.0, 1.0], [1.0, 2.0]], dtype=m.float64))
        a, tau = a.requires_grad_() * 1, tau.requires_grad_() * 1
        base = m.tensor([1.0, -2.0], dtype=m.float64, requires_grad=True) * 1
        out = m.ormqr(a, tau, base.view(2, 1), left=True, transpose=True)
        assert out.grad_fn._saved_left is True and out.grad_fn._saved_transpose is True
        {"input": a, "input2": tau, "input3": base, "result": out}[written].mul_(2)
        out.sum().backward()
        return out
    _assert_same_refusal(program, ":")


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("mode, shape", [("linear", (1, 1, 6)), ("bilinear", (1, 1, 2, 3)),
                                         ("trilinear", (1, 1, 1, 2, 3))])
@pytest.mark.parametrize("align_corners", [True, False])
@pytest.mark.parametrize("resize", ["same", "last_grows", "scale_one"])
def test_linear_interpolation_of_a_dim_kept_its_size_as_torch(dtype, mode, shape, align_corners,
                                                              resize):
    """torch's linear kernels blend a dim whose size is kept from each element twice, weighted
    1 and 0: an inf or NaN entry gives NaN there only (breadth seed 1127505: gradkit blended its
    neighbours); the backward with an infinite gradient likewise."""
    def program(m):
        x = m.tensor([1.0, math.inf, 3.0, 4.0, 5.0, -math.nan], dtype=getattr(m, dtype))
        x = x.reshape(shape).requires_grad_()
        size = {"same": shape[2:], "last_grows": shape[2:-1] + (4,), "scale_one": None}[resize]
        y = m.nn.functional.interpolate(x, size=size, scale_factor=1.0 if size is None else None,
                                        mode=mode, align_corners=align_corners)
        y.backward(m.full_like(y, math.inf))
        return [*y.detach().flatten().tolist(), *x.grad.flatten().tolist()]
    np.testing.assert_array_equal(np.array(program(gradkit)), np.array(program(torch)))


@pytest.mark.parametrize("shape, stride", [((0, 2), (1, 1)), ((2, 0), (1, 1)), ((0,), (1,)),
                                           ((1,), (1,)), ((2, 2), (0, 1))])
@pytest.mark.parametrize("in_place", [False, True])
def test_as_strided_backward_of_an_empty_view_is_off_the_graph(shape, stride, in_place):
    """torch's as_strided_backward gives new zeros for an empty output, off the graph of the
    incoming gradient: an adaptive max pool of such a view had a second derivative here, NaN,
    where torch's had none (breadth seed 1119326)."""
    def program(m):
        x = m.tensor([2.0, 3.0], dtype=m.float64, requires_grad=True)
        y = (x * 1).as_strided_(shape, stride) if in_place else x.as_strided(shape, stride)
        go = m.ones(shape, dtype=m.float64, requires_grad=True)
        g, = m.autograd.grad(y, x, go, create_graph=True)
        return [*g.tolist(), g.requires_grad]
    assert program(gradkit) == program(torch)


@pytest.mark.parametrize("loss", ["huber_loss", "smooth_l1_loss"])
@pytest.mark.parametrize("reduction", ["sum", "mean", "none"])
def test_huber_and_smooth_l1_second_derivative_at_nan_and_the_edges_as_torch(loss, reduction):
    """torch's double backward of huber/smooth_l1 is grad * (|d| < delta): 0 at NaN, where
    hardtanh's derivative (gradkit's slope) is 1 (breadth seed 1142017: 0.16, torch 0)."""
    def program(m):
        x = m.tensor([math.nan, 0.5, 3.0, -3.0, 2.0, -2.0, math.inf], dtype=m.float64,
                     requires_grad=True)
        t = m.zeros(7, dtype=m.float64, requires_grad=True)
        out = getattr(m.nn.functional, loss)(x, t, reduction=reduction, **(
            {"delta": 2.0} if loss == "huber_loss" else {"beta": 2.0}))
        gx, gt = m.autograd.grad(out.sum(), (x, t), create_graph=True)
        second = [*m.autograd.grad((gx * 2).sum(), (x, t), retain_graph=True),
                  *m.autograd.grad(gt.sum(), (x, t))]
        return [str(v) for part in (gx, gt, *second) for v in part.tolist()]
    assert program(gradkit) == program(torch)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("norm", ["layer_norm", "group_norm", "native_layer_norm_mean",
                                  "native_group_norm_mean"])
def test_layer_and_group_norm_of_equal_values_are_exactly_zero_as_torch(dtype, norm):
    """torch's layer and group norm kernels take a Welford mean, exact for equal values: their
    normalized values are 0, where NumPy's mean left -7.9e-17 (breadth seed 1133466: x / x of
    it was 1 here, NaN in torch)."""
    def program(m):
        x = m.full((2, 3), -0.99882966, dtype=getattr(m, dtype))
        x[1] = m.tensor([1.0, 2.0, 3.5])
        return {"layer_norm": lambda: m.nn.functional.layer_norm(x, (3,)),
                "group_norm": lambda: m.nn.functional.group_norm(x.reshape(2, 3, 1), 1),
                "native_layer_norm_mean": lambda: m.native_layer_norm(x, (3,), None, None,
                                                                      1e-5)[1],
                "native_group_norm_mean": lambda: m.native_group_norm(
                    x.reshape(2, 3, 1), None, None, 2, 3, 1, 1, 1e-5)[1]}[norm]().flatten()
    ours, theirs = program(gradkit).numpy(), program(torch).numpy()
    assert (ours[:3] == theirs[:3]).all()
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)


@pytest.mark.parametrize("dtypes", [("int64", "float32"), ("bool", "float32"), ("int32", "float16"),
                                    ("uint8", "float64"), ("float64", "float32"),
                                    ("float32", "float64")])
def test_smooth_l1_loss_promotes_as_torch(dtypes):
    """smooth_l1_loss of an int64 input and a float32 target is float32 in torch; NumPy's
    promotion made it float64 here (breadth seed 1153012)."""
    def program(m):
        x = m.tensor([[1], [2]], dtype=getattr(m, dtypes[0]))
        t = m.tensor([0.5], dtype=getattr(m, dtypes[1]), requires_grad=True)
        out = m.nn.functional.smooth_l1_loss(x, t)
        out.backward()
        return str(out.dtype).split(".")[-1], out.item(), str(t.grad.dtype).split(".")[-1]
    assert program(gradkit) == program(torch)


def test_take_along_dim_without_dim_of_a_transposed_input_is_known():
    """torch's take_along_dim(dim=None) flattens with view(-1) and refuses a transposed input;
    gradkit computes (a documented improvement the classifier now names: strided_breadth seed
    33857)."""
    problems, known = diff_program(generate(RandomDrawer(33857), "strided_breadth"))
    assert problems and known.startswith("take_along_dim without dim (or isin")


def _node_names(fn) -> list:
    """The names of a graph's nodes, breadth first (torch's AccumulateGrad unprefixed)."""
    names, todo = [], [fn]
    while todo:
        node = todo.pop(0)
        if node is not None:
            names.append(node.name().replace("torch::autograd::", ""))
            todo.extend(next_node for next_node, _ in node.next_functions)
    return names


_ONE_NUMBER_PRODUCTS = {
    "inner_contiguous": lambda m, x: m.inner(x[:4], x[4:8]),
    "inner_stepped": lambda m, x: m.inner(x[::2], x[1::2]),
    "inner_one_stepped": lambda m, x: m.inner(x[:4], x[1::2]),
    "inner_rows_of_one": lambda m, x: m.inner(x[:4].reshape(1, 4), x[::2].reshape(1, 4)),
    "tensordot_matrices": lambda m, x: m.tensordot(x.reshape(2, 4), x.reshape(2, 4), 2),
    "tensordot_transposed": lambda m, x: m.tensordot(x.reshape(2, 4), x.reshape(4, 2),
                                                     ([0, 1], [1, 0])),
    "tensordot_size_one": lambda m, x: m.tensordot(x[:4].reshape(4, 1), x[4:].reshape(1, 4),
                                                   ([0, 1], [1, 0])),
    "tensordot_scalars": lambda m, x: m.tensordot(x[0], x[1], 0),
    "inner_matrix": lambda m, x: m.inner(x.reshape(2, 4)[:, 1::2].abs(), x[1::4].abs()),
}


@pytest.mark.parametrize("dtype", ["float32", "float64", "bool", "int8", "complex128"])
@pytest.mark.parametrize("case", sorted(_ONE_NUMBER_PRODUCTS))
def test_products_to_one_number_take_torchs_dot_or_mul_and_sum(case, dtype):
    """torch's tensordot (inner's too) to one number takes dot where both permuted operands
    are contiguous, else multiplies the squeezed operands and sums in their dtype: a strided
    bool pair computes where a contiguous one is refused, float32 sums round as torch's, and
    the graph is torch's (strided_breadth seeds 39366, 1616545)."""
    if case == "inner_matrix" and dtype == "complex128":
        pytest.skip("complex gemm's rounding is the BLAS's, not the path's")
    values = np.array([3e7, 1.0, -3e7, 1e-3, 7.0, -2.5, 100.0, 0.25])
    if dtype == "int8":
        values = np.array([100, 100, -100, 1, 3, 3, 7, -9])

    def program(m):
        x = m.tensor(values.astype(np.dtype(dtype)) if dtype != "complex128"
                     else values * (1 - 0.5j), dtype=getattr(m, dtype))
        if dtype in ("float32", "float64", "complex128"):
            x.requires_grad_()
        out = _ONE_NUMBER_PRODUCTS[case](m, x)
        names = _node_names(out.grad_fn)
        if out.requires_grad:
            out.real.sum().backward()  # (exact: the test is of the path, not of rounding)
        return str((str(out.dtype).split(".")[-1], tuple(out.shape), out.detach().numpy().tolist(),
                    names, None if x.grad is None else x.grad.numpy().tolist()))
    assert _outcome(lambda: program(gradkit)) == _outcome(lambda: program(torch))


def test_reshape_of_a_strided_tensor_its_memory_allows_is_torchs_reshape_alias():
    """torch's reshape of a non-contiguous tensor whose strides allow a view is
    ``_reshape_alias`` (ReshapeAliasBackward0, saving the input's sizes), not a view."""
    def program(m):
        x = m.arange(24.0, requires_grad=True)
        base = x.reshape(2, 3, 4)
        outs = [base.reshape(6, 4), base[0].t().reshape(4, 3),
                base.permute(1, 0, 2).reshape(3, 2, 4), base[:, 0].reshape(2, 4),
                base[:, 0].reshape(8), base[:, :, :1].flatten(1),
                base[0].t().reshape_as(m.zeros(4, 3))]
        (sum((o * m.arange(float(o.numel())).reshape(o.shape)).sum() for o in outs)).backward()
        return ([o.grad_fn.name() for o in outs], [o._is_view() for o in outs],
                [tuple(o.grad_fn._saved_self_sym_sizes) for o in outs], x.grad.tolist())
    assert program(gradkit) == program(torch)


@pytest.mark.parametrize("p", [0, 1, 2, 3, math.inf])
@pytest.mark.parametrize("other", [complex(math.inf, math.nan), complex(math.nan, 0.0),
                                   complex(-math.inf, 1.0), 1 + 2j])
def test_dist_subtracts_as_torchs_sub(p, other):
    """torch's dist takes x - 1 * y: a complex y with an infinite and a NaN part is NaN + NaN j,
    where NumPy's subtraction left -inf + NaN j, whose abs is inf (strided_breadth seed 34096:
    inf here, torch NaN)."""
    def program(m):
        x = m.tensor([[0.44 + 0.55j, 0.46 + 0.19j]], dtype=m.complex128)
        return m.dist(x, m.tensor(other, dtype=m.complex128), p).item()
    ours, theirs = program(gradkit), program(torch)
    assert math.isnan(ours) == math.isnan(theirs)
    assert math.isnan(ours) or ours == pytest.approx(theirs, rel=1e-15)


@pytest.mark.parametrize("shapes", [((1,), (1,)), ((3, 1), (2, 1)), ((2, 3), (3,)), ((1,), (4, 1)),
                                    ((2, 1), (1,)), ((0, 1), (0, 1)), ((2, 2), (2, 2))])
@pytest.mark.parametrize("op", ["inner", "tensordot"])
def test_a_write_after_inner_refuses_backward_where_torchs_does(shapes, op):
    """torch's tensordot (and inner, which is tensordot over the last dims) sums a size-1
    contracted dim's partner first: the product saves that sum, so a write into the operand
    does not refuse backward (breadth seeds 1145898, 1169678: gradkit raised)."""
    def program(m):
        w = m.ones(shapes[1], dtype=m.float64, requires_grad=True)
        x = m.arange(float(math.prod(shapes[0])), dtype=m.float64).reshape(shapes[0])
        x = x.requires_grad_() * 2
        y = m.inner(x, w) if op == "inner" else m.tensordot(x, w.mT if w.ndim > 1 else w,
                                                            dims=([x.ndim - 1], [0]))
        x.mul_(1)
        y.sum().backward()
        return w.grad
    # (torch names a stale view's node AsStrided, gradkit its view op: a Known of messages)
    def outcome(m):
        return tuple(str(part).split(", which is")[0] for part in _outcome(lambda: program(m)))
    assert outcome(gradkit) == outcome(torch)


@pytest.mark.parametrize("value", [4.0, math.nan, -1.0])
def test_a_write_into_cholesky_ex_s_factor_refuses_backward(value):
    """torch's LinalgCholeskyExBackward0 saves L also where the factorization failed (info >
    0): a write into L then refuses backward; gradkit's failed path computed (breadth seed
    1183280)."""
    def program(m):
        a = m.tensor([[value]], dtype=m.float32, requires_grad=True)
        factor, info = m.linalg.cholesky_ex(a * 1)
        assert type(factor.grad_fn).__name__ == "LinalgCholeskyExBackward0"
        assert factor.grad_fn._saved_upper is False
        factor.unsqueeze_(0)
        factor.sum().backward()
        return info
    _assert_same_refusal(program, ", which is")


@pytest.mark.parametrize("dtype", ["bool", "int64"])
def test_a_value_from_the_graph_written_into_a_bool_tensor(dtype):
    """torch's ``x[::2] = v.sum()`` into a bool or integer x makes x require grad (CopySlices);
    gradkit keeps it off the graph, a documented Known (main seed 6640258)."""
    def program(m):
        v = m.tensor([1.0], dtype=m.float64, requires_grad=True)
        x = m.zeros(1, 2, 1, dtype=getattr(m, dtype))
        x[::2] = v.sum()
        return x.requires_grad, x.tolist()
    assert program(gradkit) == (False, program(torch)[1])
    assert program(torch)[0] is True
    problems, known = diff_program(generate(RandomDrawer(6640258), "indexing"))
    assert problems and known.startswith("a value from the graph written into a bool")


def test_second_derivative_of_sinc_at_a_det_zero_is_known():
    """Known difference (docs/numerics.md, "`sinc`'s second derivative"; breadth seed 1196732):
    the det of [[a, a], [b, b]] (complex) is an exact 0 in torch (MKL) and -6e-17 here, and
    sinc's second derivative is 0/0 = NaN at exactly 0 in both libraries, finite beside it."""
    def second(m, x):
        x = m.tensor(x, dtype=m.complex128, requires_grad=True)
        g, = m.autograd.grad(m.sinc(x).abs(), x, create_graph=True)
        return m.autograd.grad(g.real, x)[0].item()
    for m in (gradkit, torch):
        assert cmath.isnan(second(m, 0j)) and not cmath.isnan(second(m, -6e-17 + 0j))
    program = Program("breadth", (Leaf((), "complex128", True), Leaf((2,), "complex128", True)), (
        Step("e_meshgrid", (1, 1), {"indexing": "ij"}), Step("b_det", (2,), {"n": 2}),
        Step("e_special_unary", (3,), {"fn": "sinc"})), True, 1196732)
    problems, known = diff_program(program)
    assert all(p.startswith("grads2") for p in problems)
    assert_lapack_known(problems, known, "a derivative infinite at 0 of an entry a LAPACK")


def test_svd_of_a_matrix_with_an_infinite_entry_returns_nan_without_lapack():
    """OpenBLAS's cgesdd never returned for this complex64 matrix with one inf (breadth seed
    1220506); torch's MKL gives NaN singular values, and so does gradkit now, without calling
    LAPACK (run in a child process, so a hang fails the test instead of stalling the run)."""
    program = (
        "import gradkit, torch\n"
        "inf = float('inf')\n"
        "rows = [[2.85 + 0.68j, -0.0035 - 0.87j, 0.85 + 0.68j], [inf, 2.85 + 0.68j, 0.42 - 0.56j],"
        " [0.85 + 0.68j, 0.47 + 0.71j, 2.0 - 0.87j]]\n"
        "for m in (gradkit, torch):\n"
        "    x = m.tensor([rows, [[1, 0, 0], [0, 2, 0], [0, 0, 3]]], dtype=m.complex64)\n"
        "    u, s, vh = m.linalg.svd(x, full_matrices=False)\n"
        "    print(s.isnan().tolist())\n"
        "    assert u[0].isnan().all() and vh[0].isnan().all() or m is torch\n")
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                            timeout=120, check=True)
    ours, torchs = result.stdout.splitlines()
    assert ours == torchs == str([[True] * 3, [False] * 3])


@pytest.mark.parametrize("scan", ["cummax", "cummin"])
def test_running_extreme_of_an_empty_input_is_its_own_gradient(scan):
    """torch's cummaxmin_backward returns an empty input itself, never reading the incoming
    gradient: a second derivative then does not reach hardsigmoid's backward (which has
    none) behind it (breadth seed 1214646: gradkit raised "derivative for
    aten::hardsigmoid_backward is not implemented")."""
    def second(m):
        x = m.tensor(1.5, dtype=m.float64, requires_grad=True)
        y = m.nn.functional.hardsigmoid(getattr(m, scan)(m.masked_select(x, x < 0), 0).values)
        g, = m.autograd.grad(y.sum(), x, create_graph=True)
        return _outcome(lambda: m.autograd.grad(g, x, allow_unused=True)[0].item())
    assert second(gradkit) == second(torch) == ("ok", 0.0)


def test_cdist_matmul_second_derivative_at_zero_distance_into_a_phase_check_is_known():
    """Known difference (docs/numerics.md, "torch's second derivative there is NaN"; breadth
    seed 1208859): cdist(x, x) in its matmul form is 0, and torch's double backward through
    its divide-then-mask backward is NaN there; the NaN reaches eig's eigenvector phase check,
    which refuses in torch only. gradkit's second derivative is 0, as cdist(x, x) is."""
    program = Program("breadth", (Leaf((), "float32", True),), (
        Step("s_cdist", (0, 0), {"p": 2, "mode": "use_mm_for_euclid_dist"}),
        Step("l_eig_pairs", (1,), {"n": 1})), True, 1208859)
    ours, torchs = (run(program, m) for m in (gradkit, torch))
    assert ours.error is None and ours.grads2[0] == 0
    assert "specified up to multiplication by e^{i phi}" in torchs.message
    problems, known = diff_program(program)
    assert problems and known.startswith("cdist's matmul form at a zero distance")


def test_solve_backward_of_a_non_finite_matrix_never_refuses_as_singular():
    """linalg.solve of a matrix with an inf went through, but A^H's pivots met an exact 0
    (its inf made NaN): gradkit's backward raised "the input matrix is singular" where
    torch's reuses A's LU unchecked and gives NaN (breadth seed 1205874)."""
    program = Program("breadth", (Leaf((3,), "complex128", True, True),
                                  Leaf((), "complex128", False, True),
                                  Leaf((3,), "complex128", True, True)), (
        Step("s_block_diag", (1, 0), {}), Step("b_cat3", (3, 3), {"dim": -2}),
        Step("b_solve", (4, 4), {"n": 4})), True, 1205874)
    ours, torchs = (run(program, m) for m in (gradkit, torch))
    assert ours.error is torchs.error is None
    assert np.isnan(ours.grads[0]).all() and np.isnan(torchs.grads[0]).all()
    assert diff_program(program) == ([], None)


def test_std_of_a_number_parameter_draw_of_equal_values_is_the_noise_known():
    """Known difference (docs/numerics.md, "noise divided by rounding noise"; breadth seed
    1293756): std(correction=-1) of twelve equal values (an adaptive pool of one element) is
    rounding noise in both libraries, its gradient noise over noise; the std step drawn with
    a number parameter (num_param) was not recognised as a std."""
    program = Program("breadth", (Leaf((1,), "float64", True), Leaf((1, 1), "float64", True)), (
        Step("clone", (0,), {}),
        Step("n_adaptive_pool", (2,), {"kind": "avg3", "shape": (1, 1, 1, 1, 1),
                                       "size": (4, 1, 3)}),
        Step("num_param", (3, 2), {"call": "std", "given": "0d", "v": -1.0})), True, 1293756)
    problems, known = diff_program(program)
    assert problems and all(p.startswith("grads") for p in problems)
    assert known.startswith("the gradient of std at elements equal but for rounding")


def test_logical_op_of_an_fft_zero_that_is_noise_on_one_side_is_known():
    """Known difference (docs/numerics.md, "turn a last-bit difference"; breadth seed
    1291364): an inverse FFT's entry is an exact 0 here and 1e-7 (complex64 rounding at a
    scale of 8.5) in torch, and logical_xor_ reads it as false or true."""
    program = Program("breadth", (Leaf((3,), "float64", True), Leaf((3,), "bool", False)), (
        Step("s_cartesian_prod", (1, 0), {}),
        Step("fft_fftn", (2,), {"s": None, "dim": None, "norm": None}),
        Step("b_cumsum_dtype", (3,), {"dim": -1}),
        Step("fft_ifft2", (4,), {"s": None, "dim": (-2, -1), "norm": "ortho"}),
        Step("fb_logical_", (5, 4), {"name": "logical_xor"})), True, 1291364)
    problems, known = diff_program(program)
    assert problems and problems[0].startswith("values[5]")
    assert known == "a step that turns a rounding difference of its input into another number"


@pytest.mark.parametrize("reduce", ["max", "min", "median", "nanmedian"])
@pytest.mark.parametrize("values", [[1.0, math.nan, 3.0], [1.0, 3.0, 3.0],
                                    [math.inf, 2.0, math.inf], [math.nan, 2.0, 5.0]])
def test_whole_reduction_tangent_is_torchs_evenly_read(reduce, values):
    """torch's forward derivative of max()/min()/median() over all elements averages the
    tangents of the elements equal to the result without looking for NaN (its backward
    does): a NaN result has a NaN tangent, and an infinite tangent elsewhere makes NaN
    (0 * inf). gradkit gave the NaN element's tangent (fwd seed 305944)."""
    def tangent(m, fa):
        with fa.dual_level():
            x = fa.make_dual(m.tensor(values, dtype=m.float64),
                             m.tensor([0.5, -0.25, math.inf], dtype=m.float64))
            return str(fa.unpack_dual(getattr(x, reduce)()).tangent.item())
    assert tangent(gradkit, gradkit.autograd.forward_ad) == tangent(
        torch, torch.autograd.forward_ad)


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_soft_margin_backward_of_a_bool_target_refuses_negation(reduction, create_graph):
    """torch's soft_margin backward negates the target: a bool target raises its RuntimeError
    there (breadth seeds 1247227, 1255628); gradkit's NumPy raised a TypeError."""
    def program(m):
        x = m.tensor([0.5, -1.0], dtype=m.float64, requires_grad=True)
        y = m.nn.functional.soft_margin_loss(x, m.tensor([True, False]), reduction=reduction)
        return m.autograd.grad(y.sum(), x, create_graph=create_graph)[0]
    mine, theirs = _outcome(lambda: program(gradkit)), _outcome(lambda: program(torch))
    assert mine == theirs and mine[0] == "RuntimeError" and mine[1].startswith("Negation")


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("extra", [None, "weight", "pos_weight", "bool pos_weight"])
@pytest.mark.parametrize("target_dtype", ["complex64", "complex128", "float32", "int64", "bool"])
@pytest.mark.parametrize("input_dtype", ["float32", "float64"])
def test_bce_with_logits_writes_in_the_targets_dtype(input_dtype, target_dtype, extra,
                                                     requires_grad):
    """torch's kernel computes (1 - t).mul_(x) in the target's dtype: a complex64 target of a
    float64 input gives complex64 (breadth seed 1282725; gradkit gave complex128), an integer
    or bool target raises, and so does a complex target with pos_weight (an in-place write
    into log_sigmoid(x))."""
    def program(m):
        x = m.tensor([1.0, -2.0], dtype=getattr(m, input_dtype), requires_grad=requires_grad)
        t = m.tensor([0.5, 1.0], dtype=getattr(m, target_dtype))
        kw = {} if extra is None else {extra.split()[-1]: m.tensor(
            [2.0, 3.0], dtype=m.bool if extra.startswith("bool") else m.float64)}
        y = m.nn.functional.binary_cross_entropy_with_logits(x, t, reduction="none", **kw)
        dtypes[m] = str(y.dtype).split(".")[-1]
        return m.autograd.grad(y.sum(), x)[0] if requires_grad else y
    dtypes = {}
    mine, theirs = _outcome(lambda: program(gradkit)), _outcome(lambda: program(torch))
    assert mine[0] == theirs[0] and dtypes.get(gradkit) == dtypes.get(torch)
    if mine[0] == "ok":
        np.testing.assert_allclose(mine[1], theirs[1], rtol=1e-6)
    else:
        assert mine[1] == theirs[1]


@pytest.mark.parametrize("shape", [(), (2,)])
def test_view_as_real_copy_resolves_a_conjugate(shape):
    """torch's view_as_real_copy of a conjugate (``adjoint()`` of a 0-d complex, ``conj()``)
    copies the conjugated values, where the view raises (breadth seed 1284433); gradkit raised
    the view's error."""
    def program(m):
        x = m.tensor(np.full(shape, 1 + 2j), requires_grad=True)
        y = m.view_as_real_copy(x.adjoint() if not shape else x.conj())
        assert type(y.grad_fn).__name__ == "ViewAsRealBackward0_copy"
        weights = m.tensor([2.0, 5.0], dtype=m.float64)
        grad = m.autograd.grad((y * weights).sum(), x)[0].resolve_conj()
        return m.stack([y.detach(), m.view_as_real(grad)])
    mine, theirs = _outcome(lambda: program(gradkit)), _outcome(lambda: program(torch))
    assert mine == theirs and mine[0] == "ok"
    with pytest.raises(RuntimeError, match="unresolved conjugated"):
        gradkit.view_as_real(gradkit.tensor(np.full(shape, 1 + 2j)).conj())


def test_empty_native_dropout_leaf_written_in_place_is_known():
    """Known difference (docs/api.md, native_dropout): torch gives an empty leaf that requires
    grad the dropout's node, so an in-place division of it is no longer refused as on a leaf;
    gradkit refuses it. The classifier read torch's values, which a run that raised later has
    none of (breadth seed 1237291): it reads the leaf's declaration then."""
    def program(m):
        x = m.zeros(0, 1, 3, dtype=m.float64, requires_grad=True)
        y = m.native_dropout(x, 1.0, True)[0]
        y.div_(m.tensor(-2), rounding_mode="floor")
        return y
    assert _outcome(lambda: program(torch)) == ("ok", [])
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        program(gradkit)
    steps = (Step("fb_native_dropout", (0,), {"p": 1.0}),
             Step("num_div_", (1, 1), {"mode": "floor", "form": "0d", "s": -2}),
             Step("b_complex", (2, 2), {}), Step("b_linear", (3, 3), {}))
    problems, known = diff_program(Program("breadth", (Leaf((0, 1, 3), "float64", True),),
                                           steps, False, 1237291))
    assert problems and problems[0].startswith("error phase")
    assert known.startswith("native_dropout of an empty leaf")


@pytest.mark.parametrize("call", ["addcmul", "addcdiv"])
@pytest.mark.parametrize("value", [0.5, 0.5 + 0j, "tensor"])
def test_a_complex_value_makes_the_gradient_at_inf_nan(call, value):
    """torch's addcmul/addcdiv backward multiplies by the Scalar value as given: a complex one
    (0.5+0j, a 0-d complex tensor) makes an infinite operand's gradient NaN, a real one inf
    (breadth seed 1254070); gradkit read the value as a real number first."""
    def program(m):
        x = m.tensor([math.inf, 2.0], dtype=m.float64, requires_grad=True)
        y = m.tensor([2.0, math.inf], dtype=m.float64, requires_grad=True)
        given = m.tensor(0.5 + 0j) if value == "tensor" else value
        z = getattr(m, call)(x, x, y, value=given)
        return m.cat(m.autograd.grad(z.sum(), (x, y)))
    mine, theirs = _outcome(lambda: program(gradkit)), _outcome(lambda: program(torch))
    assert mine[0] == "ok"
    np.testing.assert_array_equal(mine[1], theirs[1])


def test_a_complex_value_beyond_float_is_refused():
    """c10 converts a complex Scalar to float through its real part, checked for overflow."""
    def program(m):
        one = m.ones(2)
        return m.addcmul(one, one, one, value=1e300 + 0j)
    mine, theirs = _outcome(lambda: program(gradkit)), _outcome(lambda: program(torch))
    assert mine == theirs == ("RuntimeError",
                              "value cannot be converted to type float without overflow")


_SINGULAR_WITH_NAN = [[-0.0, -0.0, -0.0], [-0.0, math.nan, 0.0], [0.0, 0.0, math.nan]]


@pytest.mark.parametrize("batch", [
    _SINGULAR_WITH_NAN,
    [np.eye(3).tolist(), _SINGULAR_WITH_NAN],
    [[[1.0, 0, 0], [0, 0, 0], [0, 0, 1]], (2 * np.eye(3)).tolist(), _SINGULAR_WITH_NAN],
    [[[math.nan, 0, 0], [0, 1, 0], [0, 0, 1]]]])
def test_det_create_graph_solves_where_det_is_nan(batch):
    """torch's create_graph derivative of det takes the SVD only where |det| < 100 eps: a NaN
    det is solved for, so a zero column raises its singular error, numbered within the
    matrices solved (breadth seed 1236799: kron(-0., y) with an inf in y); gradkit gave NaN."""
    def program(m):
        a = m.tensor(batch, dtype=m.float64, requires_grad=True)
        grad, = m.autograd.grad(m.linalg.det(a).sum(), a, create_graph=True)
        return grad
    mine, theirs = _outcome(lambda: program(gradkit)), _outcome(lambda: program(torch))
    assert mine[1] == theirs[1] if mine[0] != "ok" else np.isnan(mine[1]).all()
    assert mine[0].lstrip("_") == theirs[0].lstrip("_")


@pytest.mark.parametrize("a", [
    [[[math.nan, 1.0], [1.0, 1.0]], [[1.0, 2.0], [3.0, 4.0]]],
    [[1.0, math.nan], [0.0, 1.0]],
    [[[math.nan, 1.0], [1.0, 1.0]], [[0.0, 0.0], [0.0, 1.0]]]])
def test_solve_of_a_nan_matrix_is_nan_unless_a_pivot_is_zero(a):
    """torch's MKL solves a matrix with a NaN on, to NaN; NumPy's LAPACK took the NaN for a zero
    pivot and gradkit raised the singular error. An exact zero pivot still raises it."""
    def program(m):
        x = m.tensor(a, dtype=m.float64)
        return m.linalg.solve(x, m.ones(*x.shape[:-1], 1, dtype=m.float64))
    mine, theirs = _outcome(lambda: program(gradkit)), _outcome(lambda: program(torch))
    assert mine[0].lstrip("_") == theirs[0].lstrip("_")
    if mine[0] == "ok":
        np.testing.assert_array_equal(mine[1], theirs[1])
    else:
        assert mine[1] == theirs[1]


def test_solve_triangular_zero_signs_of_a_unit_triangular_system_are_torchs():
    """b2 - a21 x1 with x1 = -0.0 is +0.0 in torch's MKL trsm; reference BLAS skipped the
    update of a zero x1 and left b2's -0.0 (breadth seed 1269118, first a Known); gradkit's
    solve_triangular now subtracts the products as trsm does (lane bfuzzD, strided 39798)."""
    def program(m):
        a = m.full((2, 2), -0.0) + 2 * m.eye(2)
        return m.linalg.solve_triangular(a, m.full((2, 1), -0.0), upper=False,
                                         unitriangular=True)
    ours, theirs = program(gradkit).flatten().tolist(), program(torch).flatten().tolist()
    assert ours == theirs == [0.0, 0.0]
    assert [math.copysign(1, v) for v in ours] == [math.copysign(1, v) for v in theirs] == [-1, 1]
    assert diff_program(generate(RandomDrawer(1269118), "breadth")) == ([], None)


def test_glu_double_backward_at_an_infinite_half_is_torchs():
    """torch's glu backward is an op (GluBackwardBackward0) whose double backward multiplies
    the infinite half a by a finite second derivative: -inf (breadth seed 1265138); gradkit's
    composed backward differentiated a s (1 - s) factor by factor, -inf + inf = NaN."""
    def program(m):
        x = m.tensor([-math.inf, -0.64503056], dtype=m.float32, requires_grad=True)
        g, = m.autograd.grad(m.nn.functional.glu(x, 0).sum() * 0.7, x, create_graph=True)
        assert type(g.grad_fn).__name__ == "GluBackwardBackward0"
        assert g.grad_fn._saved_grad_output.shape == (1,) and g.grad_fn._saved_dim == 0
        return m.cat([g, m.autograd.grad((g * m.tensor([0.3, 0.9])).sum(), x)[0]])
    mine, theirs = _outcome(lambda: program(gradkit)), _outcome(lambda: program(torch))
    assert mine[0] == theirs[0] == "ok"
    np.testing.assert_allclose(mine[1], theirs[1], rtol=1e-6)
    assert mine[1][-1] == -math.inf


def test_glu_third_derivative_and_forward_over_backward_match_torch():
    def program(m):
        x = m.tensor([[0.3, -1.2, 0.7, 2.0], [1.5, 0.1, -0.4, 0.9]], dtype=m.float64,
                     requires_grad=True)
        fw = m.autograd.forward_ad
        with fw.dual_level():
            dual = fw.make_dual(x, m.full((2, 4), 0.5, dtype=m.float64))
            y = m.nn.functional.glu(dual, 1)
            g, = m.autograd.grad((y * y).sum(), x, create_graph=True)
            tangent = fw.unpack_dual(g).tangent
        gg, = m.autograd.grad((g * g).sum(), x, create_graph=True)
        return m.cat([g, tangent, gg, m.autograd.grad(gg.sum(), x)[0]])
    mine, theirs = _outcome(lambda: program(gradkit)), _outcome(lambda: program(torch))
    assert mine[0] == theirs[0] == "ok"
    np.testing.assert_allclose(mine[1], theirs[1], rtol=1e-10)


def test_batch_norm_gradient_of_a_channels_last_input_is_known():
    """Known difference (docs/torch_expectations.md, lane bfuzzE): torch 2.13's batch_norm
    backward of a channels-last input (a reshaped transposed view) permutes its gradient;
    made contiguous, torch's agrees with gradkit's (breadth seed 1241979)."""
    def gradient(m, contiguous):
        y = m.arange(6, dtype=m.float64).reshape(3, 2).t().requires_grad_()
        z = y.reshape(1, 2, 3, 1)
        out = m.nn.functional.batch_norm(z.contiguous() if contiguous else z,
                                         m.zeros(2, dtype=m.float64),
                                         m.ones(2, dtype=m.float64), training=False, eps=0.0)
        weights = m.arange(6, dtype=m.float64).reshape(out.shape) + 1
        return m.autograd.grad((out * weights).sum(), y)[0].tolist()
    right = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    assert gradient(gradkit, False) == gradient(torch, True) == right
    assert gradient(torch, False) == [[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]]
    program = Program("breadth", (Leaf((1, 3, 3), "float64", True),), (
        Step("e2_quantile", (0,), {"dim": 1, "keepdim": False, "q": (0.1, 0.6),
                                   "interpolation": "lower"}),
        Step("n_norm", (1,), {"kind": "batch_eval", "shape": (1, 2, 3, 1), "eps": 1e-05,
                              "momentum": 0.5})), False, 1241979, backward=True)
    problems, known = diff_program(program)
    assert problems and all(p.startswith("grads") for p in problems)
    assert known.startswith("batch_norm's gradient of a channels-last input")


@pytest.mark.parametrize("geometry", [((1,), (1,), 2), ((3,), (1,), 0), ((2,), (1,), 1)])
def test_views_of_a_base_restrided_by_as_strided_are_replayed_from_it(geometry):
    """torch regenerates the views of a base that ``as_strided_`` restrided as ``as_strided``
    of the base's new geometry (AsStridedBackward0): their gradient reaches only the elements
    the base still covers (breadth seed 1241178: a 0-d view of a complex base restrided to
    (3, 0) passes none); gradkit kept the view's old history."""
    def program(m):
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 1
        v = y[0:2]
        y.as_strided_(*geometry)
        assert v.grad_fn.name() == "AsStridedBackward0"
        return m.autograd.grad(v.sum() + y.sum() * 10, x)[0]
    mine, theirs = _outcome(lambda: program(gradkit)), _outcome(lambda: program(torch))
    assert mine == theirs and mine[0] == "ok"


@pytest.mark.parametrize("dtype", ["complex128", "complex64"])
@pytest.mark.parametrize("op", ["abs", "sgn"])
def test_modulus_of_a_complex_number_is_its_hypot(dtype, op):
    """torch's |z| is hypot(re, im); NumPy's complex abs rounds apart from it on about a third
    of inputs, so |normalize(z)| ** inf was 0 where torch's is 1 (breadth seed 1178361)."""
    values = np.random.default_rng(0).standard_normal((64, 2)) @ np.array([1, 1j])
    values = [-0.620389320278355 - 0.7842940081911633j, *values.tolist()]

    def program(m):  # one element at a time: torch's vectorised kernel rounds apart again
        return [getattr(m, op)(m.tensor([z], dtype=getattr(m, dtype))).tolist() for z in values]
    assert program(gradkit) == program(torch)
    unit = [m.tensor([-0.6156956758468959 - 0.7783603193221778j], dtype=m.complex128)
            for m in (gradkit, torch)]
    assert [(m.nn.functional.normalize(u, dim=-1).abs() ** math.inf).tolist()
            for m, u in zip((gradkit, torch), unit)] == [[1.0], [1.0]]


@pytest.mark.parametrize("seed", [20711, 32471])
def test_acosh_at_one_and_xlogy_by_inf_amplify_rounding(seed):
    """acosh of a 1 but for rounding (x / x of an FFT an ulp from torch's, strided seed 20711)
    is the square root of the noise, and xlogy(x, inf) of an x that is noise around 0 (|Q| log
    |Q| of a 1 x 1 complex QR, strided seed 32471) is -inf, 0 or inf: a rounding amplified."""
    for m in (gradkit, torch):
        at_one = m.acosh(m.tensor([1.0, 1.0 + 2.0 ** -23], dtype=m.float32)).tolist()
        assert at_one[0] == 0.0 and at_one[1] == pytest.approx(2.0 ** -11, rel=1e-3)
        noise = m.tensor([2.2e-16, 0.0, -1.1e-16], dtype=m.float64)
        assert m.xlogy(noise, math.inf).tolist() == [math.inf, 0.0, -math.inf]
    problems, known = diff_program(generate(RandomDrawer(seed), "strided_breadth"))
    assert problems and known == "a step that turns a rounding difference of its input " \
                                 "into another number"


@pytest.mark.parametrize("x", [-math.inf, -2.0, 0.0, 3.0, math.inf, math.nan])
@pytest.mark.parametrize("weight_grad", [False, True])
@pytest.mark.parametrize("through", ["square", "x", "weight"])
def test_prelu_double_backward_skips_an_undefined_gradient(x, weight_grad, through):
    """torch's _prelu_kernel_backward double backward skips the terms of an output gradient
    no gradient reached: at x = -inf gradkit's gg_weight * x was 0 * inf, NaN (breadth seed
    1186286: prelu(-inf) into addr, second derivative 0.0028 in torch)."""
    def program(m):
        xs = m.tensor([x, -1.5], dtype=m.float64, requires_grad=True)
        w = m.tensor([0.25], dtype=m.float64, requires_grad=weight_grad)
        p = m.nn.functional.prelu(xs, w)
        wanted = [xs, w] if weight_grad else [xs]
        first = m.autograd.grad((p * p).sum() if through == "square" else p.sum() * 3, wanted,
                                create_graph=True)
        second = first[0].sum() if through != "weight" else first[-1].sum()
        if not second.requires_grad:
            return [g.tolist() for g in first]
        return [None if g is None else g.tolist()
                for g in m.autograd.grad(second, wanted, allow_unused=True)]
    assert str(program(gradkit)) == str(program(torch))


def test_as_strided_in_place_reads_the_column_major_inverse_as_torch():
    """torch's matrix_power(x, -1) (linalg.inv) is column-major, and gradkit's now too: an
    as_strided_ into it reads torch's element (breadth seed 1162051, a storage-layout Known
    while gradkit's inverse was C-contiguous)."""
    def program(m):
        inverse = m.linalg.matrix_power(m.tensor([[2.0, 1.0], [0.5, 3.0]]), -1)
        return inverse.stride(), inverse.as_strided_((), (), 2).item()
    (ours, mine), (theirs, torchs) = program(gradkit), program(torch)
    assert ours == theirs == (1, 2) and mine == pytest.approx(torchs) == -1 / 5.5
    assert diff_program(generate(RandomDrawer(1162051), "breadth")) == ([], None)


def test_lgamma_near_a_pole_amplifies_rounding():
    """lgamma of -1 is inf, of -0.99999994 (one float32 ulp off, as a corrcoef of -1 rounds)
    16.6, in both libraries: a rounding amplified (breadth seed 1171628)."""
    for m in (gradkit, torch):
        assert m.lgamma(m.tensor([-1.0, -1.0 + 2.0 ** -24])).tolist() == \
            [math.inf, pytest.approx(16.635532, rel=1e-6)]
    problems, known = diff_program(generate(RandomDrawer(1171628), "breadth"))
    assert_lapack_known(problems, known, "a step that turns a rounding difference of its input")


def test_masked_select_by_the_sign_of_a_singular_det_is_noise():
    """The det of [[a, b], [a, b]] in complex64 is rounding noise (2e-16 here, 2e-8 in torch),
    so masked_select(d, d.real > 0) keeps it on one side only: a rounding amplified (breadth
    seed 1152123)."""
    a, b = 0.81005555 + 0.8935778j, -0.07395904 + 0.7709119j
    for m in (gradkit, torch):
        det = m.linalg.det(m.tensor([[a, b], [a, b]], dtype=m.complex64))
        assert abs(det.item()) < 1e-7
    problems, known = diff_program(generate(RandomDrawer(1152123), "breadth"))
    assert problems and known == "a step that turns a rounding difference of its input " \
                                 "into another number"


def _second_derivative_of_a_singular_complex_det(m, row):
    v = m.tensor([row], dtype=m.complex64, requires_grad=True)
    first, = m.autograd.grad((m.linalg.det(m.hstack([v, v]).reshape(2, 2)) * 0.7).real, v,
                             create_graph=True)
    return m.autograd.grad((first * 0.3).real.sum(), v)[0].tolist()


def test_second_derivative_of_a_singular_complex_det_divides_by_a_lapack_zero():
    """The second derivative of a complex det at a singular matrix goes through the SVD's
    backward, which divides by the singular values: at an exact 0 it is NaN in both (here
    [[1, 1], [1, 1]]); at [[a, b], [a, b]] OpenBLAS leaves an exact 0 where MKL leaves 9e-8,
    so NaN here and finite in torch: a documented LAPACK zero (breadth seed 1183277)."""
    for m in (gradkit, torch) if not torch_runs_avx512_kernels() else (gradkit,):
        assert np.isnan(_second_derivative_of_a_singular_complex_det(m, [1, 1])).all()
    problems, known = diff_program(generate(RandomDrawer(1183277), "breadth"))
    assert_lapack_known(problems, known, "a derivative infinite at 0 of an entry a LAPACK "
                                         "routine left 0 on one side only")


def test_repeated_spectrum_is_read_before_a_later_write():
    """eig of kron(v, v) + 2 I (eigenvalue 2 twice: its gradient divides by 0, NaN here and
    finite in torch) whose matrix cumsum_ rewrites afterwards: the repeated-spectrum Known reads
    the matrix as eig found it (breadth seed 1156231)."""
    program = generate(RandomDrawer(1156231), "breadth")
    assert any(step.op == "fb_cumsum_" for step in program.steps)
    problems, known = diff_program(program)
    assert_lapack_known(problems, known, "gradients of eig (eigh, svd) where eigenvalues "
                                         "(singular values) repeat up to rounding")


@pytest.mark.parametrize("n", [3, 16, 24])
def test_nanquantile_of_tied_values_goes_to_torchs_element(n):
    """torch's CPU sort (not stable) is std::sort, which orders equal values (all NaN here)
    otherwise than a stable sort in rows of more than 16; gradkit's sort replays it, so the
    gradient goes to torch's element (breadth seed 1189634, a Known until then)."""
    def program(m):
        x = m.full((n,), math.nan, requires_grad=True)
        y = m.nanquantile(x, 0.0, dim=-1, interpolation="lower")
        return m.autograd.grad(y, x)[0].nonzero().flatten().tolist()
    assert program(gradkit) == program(torch) == ([0] if n <= 16 else [n // 2])
    if n == 24:
        assert diff_program(generate(RandomDrawer(1189634), "breadth")) == ([], None)


@pytest.mark.parametrize("p", [0.5, 1.0, 2.0, 3.0, math.inf])
@pytest.mark.parametrize("rows", [[[math.inf]], [[1.0], [math.inf]], [[2.0, -math.inf],
                                                                       [1.0, 0.5]]])
def test_pdist_gradient_meets_no_row_with_itself(p, rows):
    """torch's pdist backward runs over the pairs i < j only; gradkit's differentiated all of
    cdist(x, x), so a row holding inf gave its diagonal's inf - inf, NaN in the gradient
    (strided seed 27820: pdist of one row [inf], no pair at all)."""
    def program(m):
        x = m.tensor(rows, dtype=m.float64, requires_grad=True)
        return m.autograd.grad(m.nn.functional.pdist(x, p).sum() + x.sum() * 0.5, x)[0].tolist()
    assert str(program(gradkit)) == str(program(torch))


def test_nonzero_of_fft_noise_before_torchs_missing_attention_double_backward():
    """gradkit's FFT of values equal but for an ulp (a float32 avg_pool) leaves 6e-8 where
    torch's leaves exact zeros, so nonzero counts them: a rounding amplified, before torch's
    fused attention kernel refuses a double backward gradkit computes (strided seed 32768)."""
    for m in (gradkit, torch):
        assert m.count_nonzero(m.tensor([0.0, 5.9604645e-08])).item() == 1
    problems, known = diff_program(generate(RandomDrawer(32768), "strided_breadth"))
    assert problems and known.startswith("embedding_bag's and multi-head attention's second")


@pytest.mark.parametrize("left", [False, True])
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("unitriangular", [False, True])
def test_solve_triangular_subtracts_a_negative_zero_product(left, upper, unitriangular):
    """BLAS's trsm subtracts each product from B in turn, so -0.0 - (0 * -0.0) is +0.0;
    gradkit subtracted NumPy's sum of the products, +0.0 from its identity, and kept -0.0
    (strided seed 39798: solve_triangular of fmod(x, x) + 2 I by its zeros)."""
    def program(m):
        a = 2 * m.eye(4, dtype=m.float64)
        b = m.tensor([[0.0, 0.0, -0.0, -0.0]], dtype=m.float64)
        x = m.linalg.solve_triangular(a, b.mT if left else b, upper=upper, left=left,
                                      unitriangular=unitriangular)
        return [math.copysign(1, v) for v in x.flatten().tolist()]
    if torch_runs_avx512_kernels():  # its AVX-512 trsm keeps -0.0 - 0 * -0.0 = -0.0 in places
        pytest.skip("pins the sign of a zero MKL's AVX2 trsm leaves (CI's CPUs)")
    assert program(gradkit) == program(torch)


def test_float_power_of_a_complex_modulus_agrees_with_torch():
    """float_power(|z|, y) of a complex64 z with y ~ 17: NumPy's |z| an ulp from torch's
    hypot made 1e23 gradients apart, and gradkit's eig phase check refused a double backward
    torch computed (strided seed 39835); with |z| as hypot(re, im) the program agrees."""
    assert diff_program(generate(RandomDrawer(39835), "strided_breadth")) == ([], None)


@pytest.mark.parametrize("ord", [math.inf, -math.inf, 1.0, 2.0, 0.5])
def test_vector_norm_of_complex_values_reads_abs_modulus(ord):
    """vector_norm's extremes compare |z| with the norm in backward: its forward took NumPy's
    |z|, an ulp from abs's hypot, so no element was at the extreme and the gradient was NaN
    (strided seed 45661: vector_norm(z, -inf) of a 0-d complex128)."""
    values = np.random.default_rng(1).standard_normal((40, 2)) @ np.array([1, 1j])
    values = [0.324305741 + 0.785556457j, *values.tolist()]

    def program(m):
        grads = []
        for z in values:
            x = m.tensor(z, dtype=m.complex128, requires_grad=True)
            grads.append(m.autograd.grad(m.linalg.vector_norm(x, ord), x)[0].item())
        return grads
    np.testing.assert_allclose(program(gradkit), program(torch), rtol=1e-14)


def _pinverse_of_an_infinite_matrix(m):
    return m.pinverse(m.tensor([[2.0, 0, 0], [math.inf, 2, math.inf], [0, math.inf, math.inf]],
                               dtype=m.float64))


def _lstsq_gradient_of_an_infinite_matrix(m):
    a = m.tensor([[math.inf, math.inf, math.inf, -0.5], [math.inf, 0.25, -0.5, math.inf],
                  [-0.5, -0.5, -0.5, 0.25], [0.25, math.inf, 0.25, -0.5]],
                 dtype=m.float64, requires_grad=True)
    x = m.linalg.lstsq(a + 2 * m.eye(4, dtype=m.float64), m.ones(4, 1, dtype=m.float64))[0]
    assert np.isnan(x.detach().numpy()).all()
    x.sum().backward()
    return a.grad


@pytest.mark.parametrize("program, seed, klass", [
    (_pinverse_of_an_infinite_matrix, 54005, "strided_breadth"),
    (_lstsq_gradient_of_an_infinite_matrix, 1762910, "breadth")])
def test_svd_of_an_infinite_matrix_torch_does_not_converge(program, seed, klass):
    """torch's MKL SVD does not converge on a matrix with infinite entries and raises, in
    pinverse (strided seed 54005: [[2, 0, 0], [inf, 2, inf], [0, inf, inf]]) or in lstsq's
    backward, a pinv (breadth seed 1762910); gradkit's gives NaN: a documented
    LAPACK-at-non-finite Known."""
    assert np.isnan(program(gradkit).numpy()).all()
    with pytest.raises(RuntimeError, match="failed to converge because the input matrix is ill"):
        program(torch)
    problems, known = diff_program(generate(RandomDrawer(seed), klass))
    assert problems and known == "a LAPACK routine of a non-finite matrix: OpenBLAS's inf/NaN, " \
                                 "not MKL's"


@pytest.mark.parametrize("incoming", [math.nan, math.inf])
def test_bilinear_grid_sample_outside_the_image_at_a_non_finite_gradient_is_known(incoming):
    """Known difference (docs/numerics.md, "at a non-finite grid point"; strided_breadth seed
    1751843): a grid point whose corners all lie outside the image, under a NaN or inf
    incoming gradient: the first derivatives agree, but torch's second derivative of the
    input through the grid's gradient gathers each corner at its index clamped into the image
    times a 0 mask, NaN at the image's last pixel (which plays no part in the output);
    gradkit leaves those corners out, as both do in the first derivatives."""
    def program(m, incoming=incoming):
        image = m.tensor([[[[0.5, -1.0], [2.0, 0.25]]]], dtype=m.float64, requires_grad=True)
        grid = m.tensor([[[[4.0, 5.0], [0.2, -0.3]]]], dtype=m.float64, requires_grad=True)
        out = m.nn.functional.grid_sample(image, grid, align_corners=False)
        g_image, g_grid = m.autograd.grad(out, [image, grid], m.tensor(
            [[[[incoming, 1.0]]]], dtype=m.float64), create_graph=True)
        second = m.autograd.grad(g_grid.sum(), [image])[0]
        return [t.detach().numpy().ravel() for t in (g_image, g_grid, second)]
    (g_image, g_grid, second), (t_image, t_grid, t_second) = program(gradkit), program(torch)
    np.testing.assert_array_equal(g_image, t_image)
    np.testing.assert_allclose(g_grid, t_grid, rtol=1e-14)
    np.testing.assert_array_equal(second[:3], t_second[:3])
    # gradkit's is the other point's part alone: torch's under a 0 incoming gradient there
    assert np.isnan(t_second[3]) and second[3] == program(torch, 0.0)[2][3]
    problems, known = diff_program(generate(RandomDrawer(1751843), "strided_breadth"))
    assert problems and known.startswith("bilinear grid_sample at a non-finite grid point or "
                                         "gradient")


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("scan", ["cumsum", "cumprod"])
def test_scans_carry_the_running_value_wider_as_torch(dtype, scan):
    """torch's CPU cumsum and cumprod carry their running value in acc_type (float32 for
    float16, float64 for float32, complex128 for complex64) and round each output; NumPy's
    float32 cumsum rounded each step, an ulp off torch's (signal seed 348097: the
    coordinates of torch.gradient, whose uneven differences then moved by 20 ulps). A
    complex cumprod multiplies step by step with C's fused product (NumPy's cumprod did not:
    complex128 products an ulp off)."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((40, 3)) + (1j * rng.standard_normal((40, 3)) if dtype[0] == "c"
                                        else 0)
    x = 1 + 0.1 * x if scan == "cumprod" else x

    def program(m):
        t = m.tensor(x, dtype=getattr(m, dtype), requires_grad=dtype != "float16")
        out = getattr(t, scan)(0), getattr(t, scan)(1)
        if dtype == "float16" or (scan == "cumprod" and dtype[0] == "c"):
            # (complex cumprod_backward: torch's vectorized complex products round apart)
            return [o.detach().numpy() for o in out]
        grad, = m.autograd.grad(out, t, [m.tensor(x[::-1].copy(), dtype=t.dtype)] * 2)
        return [o.detach().numpy() for o in out] + [grad.numpy()]
    for ours, theirs in zip(program(gradkit), program(torch)):
        np.testing.assert_array_equal(ours, theirs)
    problems, known = diff_program(generate(RandomDrawer(348097), "signal"))
    assert not problems


KRON_LAYOUTS = {"contiguous": lambda m, a: m.tensor(a),
                "transposed": lambda m, a: m.tensor(np.ascontiguousarray(a.T)).t(),
                "stepped": lambda m, a: m.tensor(np.repeat(a, 2, axis=-1))[..., ::2]}


@pytest.mark.parametrize("shapes", [((3, 3), (3, 3)), ((3, 3), (3, 1)), ((1, 3), (3, 3)),
                                    ((2, 3), (3, 2))])
@pytest.mark.parametrize("first", KRON_LAYOUTS)
@pytest.mark.parametrize("second", KRON_LAYOUTS)
def test_kron_refuses_the_layouts_torch_cannot_view(shapes, first, second):
    """torch 2.13's kron views its product, laid out in the operands' stride order: with one
    operand transposed no view merges the block dims and it raises; gradkit computed (strided
    seed 68227: kron of a transposed leaf and its median)."""
    a, b = (np.arange(math.prod(s), dtype=float).reshape(s) + 1 for s in shapes)

    def program(m):
        return m.kron(KRON_LAYOUTS[first](m, a), KRON_LAYOUTS[second](m, b))
    assert _outcome(lambda: program(gradkit)) == _outcome(lambda: program(torch))


@pytest.mark.parametrize("n", [16, 17])
def test_msort_of_signed_zeros_is_torchs_order(n):
    """msort of a column of 0.0 and -0.0: torch's unstable CPU sort keeps their order up to 16
    values, not beyond; gradkit's replays it (strided seed 68955: msort of a meshgrid of 18, a
    Known until then)."""
    column = [0.0 if k % 3 else -0.0 for k in range(n)]

    def program(m):
        return [math.copysign(1, v) for v in m.msort(m.tensor(column)).tolist()]
    assert program(gradkit) == program(torch)
    assert (program(torch) == [math.copysign(1, v) for v in column]) == (n <= 16)
    if n == 17:
        assert diff_program(generate(RandomDrawer(68955), "strided_breadth")) == ([], None)


def test_a_step_refusing_a_lapack_nan_reads_the_values_before_it():
    """lstsq of a matrix with an infinite entry is NaN here and zeros from torch's MKL; eig then
    refuses the NaN (torch's own message for such an input) where torch computed: the
    LAPACK-at-non-finite Known reads the values as the program ran up to the refusing step
    (strided seed 62139)."""
    for m in (gradkit, torch):
        with pytest.raises(RuntimeError, match="input tensor should not contain infs or NaNs"):
            m.linalg.eig(m.tensor([[math.nan]], dtype=m.complex128))
    problems, known = diff_program(generate(RandomDrawer(62139), "strided_breadth"))
    assert problems and known == "a LAPACK routine of a non-finite matrix: OpenBLAS's inf/NaN, " \
                                 "not MKL's"


@pytest.mark.parametrize("row", [[math.nan, 1.0], [math.nan, math.nan], [math.inf, 1.0],
                                 [-math.inf, 0.0], [1.0, 2.0]])
@pytest.mark.parametrize("dims", [3, 4])
def test_attention_row_of_nan_scores_reads_zero_in_torchs_flash_kernel(row, dims):
    """torch's CPU flash kernel (4-d inputs) finds no maximum in a row of NaN scores (a NaN
    query), writes 0 there as for a masked row, and its backward recomputes NaN weights, NaN
    gradients throughout; its math backend (3-d) gives NaN (strided seed 73352: MHA of a NaN
    query, 0 in torch, NaN here)."""
    def program(m):
        lead = (1,) * (dims - 2)
        q = m.tensor([[0.5, 0.2], row], dtype=m.float64).reshape(*lead, 2, 2).requires_grad_()
        k = m.tensor([[0.3, -1.0], [0.1, 0.2]], dtype=m.float64).reshape(*lead, 2, 2)
        v = m.tensor([[2.0, 3.0], [1.0, -1.0]], dtype=m.float64).reshape(*lead, 2, 2)
        k, v = k.requires_grad_(), v.requires_grad_()
        out = m.nn.functional.scaled_dot_product_attention(q, k, v)
        grads = m.autograd.grad((out * m.tensor([1.0, -2.0], dtype=m.float64)).sum(), (q, k, v))
        return [t.detach().numpy() for t in (out, *grads)]
    for ours, theirs in zip(program(gradkit), program(torch)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_ldl_refusing_a_nan_pivot_before_torchs_later_error_is_known():
    """gradkit's ldl_factor refuses the NaN pivot of a non-finite matrix ("Unknown error
    code"), MKL's computes on and torch fails at a later step (nan_to_num given a tensor):
    the documented LAPACK-at-non-finite Known, torch's error being later (strided seed
    75518)."""
    problems, known = diff_program(generate(RandomDrawer(75518), "strided_breadth"))
    assert problems and known == "a LAPACK routine of a non-finite matrix: OpenBLAS's inf/NaN, " \
                                 "not MKL's"


@pytest.mark.parametrize("scan", ["cummin", "cummax"])
@pytest.mark.parametrize("value", [-1.0, 2.0])
def test_cummin_of_an_empty_input_passes_the_input_itself_back(scan, value):
    """torch's cummaxmin_backward returns an empty input itself, so a double backward through
    it never reaches the nodes of the first gradient's graph (hardsigmoid's, which has no
    derivative); gradkit scattered g into zeros and raised (breadth seed 1214646:
    masked_select of a negative 0-d x, then cummin, then hardsigmoid)."""
    def program(m):
        x = m.tensor(value, dtype=m.float64, requires_grad=True)
        values, indices = getattr(m.masked_select(x, x > 0), scan)(-1)
        g, = m.autograd.grad(m.nn.functional.hardsigmoid(values + indices).sum(), x,
                             create_graph=True)
        return m.autograd.grad(g, x)[0]
    assert _outcome(lambda: program(gradkit)) == _outcome(lambda: program(torch))


def test_eig_phase_check_of_cdist_matmul_noise_is_known():
    """cdist's matmul form of a row with itself is the square root of rounding noise, and its
    gradient noise; torch's eig double backward refuses its phase check of that noise where
    gradkit's passes: the cdist-noise Known (breadth seed 1208859)."""
    problems, known = diff_program(generate(RandomDrawer(1208859), "breadth"))
    assert problems and known.startswith("cdist's matmul form at a zero distance")


@pytest.mark.parametrize("dtype", ["complex64", "complex128", "float64"])
@pytest.mark.parametrize("beta", [0, 1, -0.5])
@pytest.mark.parametrize("entry", [math.inf, math.nan, -2.0])
def test_complex_addmv_multiplies_by_a_zero_alpha(dtype, beta, entry):
    """torch's complex addmv at alpha = 0 still multiplies M v by it (inf or NaN there gives
    NaN); its real one skips the product, as gradkit did for both (strided seed 81291)."""
    def program(m):
        d = getattr(m, dtype)
        matrix = m.tensor([[1.0, -2.0], [entry, 1.0]], dtype=d)
        out = m.addmv(m.tensor([0.5, -0.0], dtype=d), matrix, m.tensor([1.0, 2.0], dtype=d),
                      beta=beta, alpha=0)
        return [(math.copysign(1, z.real), z) for z in np.asarray(out.numpy()).tolist()]
    assert str(program(gradkit)) == str(program(torch))


def test_reciprocal_of_a_lapack_signed_zero_is_known():
    """lu_solve of a zero matrix leaves -0.0 in torch (MKL) where gradkit has +0.0, and
    float_power(x, -1) makes them -inf and inf: the LAPACK signed-zero Known, inverted
    (strided seed 90118)."""
    for m in (gradkit, torch):
        assert m.float_power(m.tensor([-0.0, 0.0], dtype=m.float64), -1.0).tolist() == \
            [-math.inf, math.inf]
    problems, known = diff_program(generate(RandomDrawer(90118), "strided_breadth"))
    assert_lapack_known(problems, known, "the sign of a zero a LAPACK routine leaves")


@pytest.mark.parametrize("op", ["median", "nanmedian", "max", "min"])
@pytest.mark.parametrize("values", [[], [1.0, 3.0, 1.0], [math.nan, 2.0]])
def test_whole_reduction_second_derivative_divides_g_first(op, values):
    """torch's evenly_distribute_backward fills g / count into the picked elements: of an
    empty input its derivative in g is 0 * (1 / 0), NaN; gradkit divided after spreading g
    and gave 0 (strided seed 82382: median of an empty tensor into inner)."""
    def program(m):
        x = m.tensor(0.7, dtype=m.float64, requires_grad=True)
        e = m.tensor(values, dtype=m.float64).reshape(-1, 1).requires_grad_()
        g = m.autograd.grad(m.inner(x, getattr(m, op)(e)) * 0.3, (x, e), create_graph=True)
        return str([t.tolist() for t in m.autograd.grad(g[0] * 0.5 + g[1].sum(), (x, e))])
    assert _outcome(lambda: program(gradkit)) == _outcome(lambda: program(torch))


@pytest.mark.parametrize("p", [0.5, 1.0])
@pytest.mark.parametrize("dtype", ["float64", "int64"])
def test_dropout_of_an_empty_tensor_is_the_tensor_itself(p, dtype):
    """torch's dropout returns an empty input itself (no dtype check, no new node), so a write
    into the result is a write into the input: a division saving it then refuses backward
    (strided seed 91360); gradkit made a new tensor."""
    def program(m):
        x = m.zeros(0, dtype=getattr(m, dtype))
        if dtype == "int64":
            return m.nn.functional.dropout(x, p, True) is x
        y = x.requires_grad_() * 1
        z = m.nn.functional.dropout(y, p, True)
        y.div_(z, rounding_mode="trunc")
        y.sum().backward()
        return z is y
    assert _outcome(lambda: program(gradkit))[0] == _outcome(lambda: program(torch))[0]
    assert _outcome(lambda: program(gradkit)) == _outcome(lambda: program(torch))


def test_atanh_of_a_complex64_quotient_of_itself_is_known():
    """Known difference (docs/numerics.md, "turn a last-bit difference"; breadth seed
    1301177): torch divides a 0-d complex64 z / z as NumPy's unfused Smith division (exactly
    1 - 0j), gradkit's fused one leaves 1 - 7.6e-10j, and atanh_ turns that into 10.8 or inf.
    The leaf written in place is the first value to differ: its in-place writers are read."""
    program = Program("breadth", (Leaf((), "complex64", True), Leaf((), "complex64", False)), (
        Step("num_div_", (1, 1), {"mode": None, "form": "tensor", "s": -2}),
        Step("fb_atanh_", (1,), {}),
        Step("e2_float_power", (3, 2), {})), False, 1301177)
    problems, known = diff_program(program)
    assert problems and problems[0].startswith("values[1]")
    assert known == "a step that turns a rounding difference of its input into another number"


def test_second_derivative_through_a_single_value_batch_norm_is_known():
    """Known difference (docs/numerics.md, "a normalization of a single value"; breadth seed
    1305519): batch norm of one value is rounding noise (-2.5e-6) in both libraries, and
    xlogy's derivative divides by it; torch's double backward recomputes x - mean as 0."""
    program = Program("breadth", (Leaf((1, 1), "float32", True),
                                  Leaf((1, 1, 1), "float32", True)), (
        Step("fb_aten_norm", (1, 1), {"kind": "native_batch_norm", "affine": False,
                                     "eps": 1e-05}),
        Step("e_xlogy", (0, 2), {})), True, 1305519, backward=True)
    problems, known = diff_program(program)
    assert problems and all(p.startswith("grads2[") for p in problems)
    assert known == "the second derivative through a normalization of a single value " \
        "(rounding noise)"


@pytest.mark.parametrize("op", ["inv", "inv_ex", "tensorinv"])
def test_inverse_of_a_non_finite_matrix_is_nan_not_singular(op):
    """torch's getrf (MKL's) reads on through the NaN that infinities make, and the inverse is
    NaN; OpenBLAS's stopped at a zero pivot there and gradkit raised the singular error
    (breadth seed 1328713). A matrix with an exact zero pivot still raises, as torch's."""
    torch = pytest.importorskip("torch")
    inf = math.inf
    bad = [[-inf, 0.0, 1.0], [inf, 0.1, 0.0], [0.0, -inf, 0.0]]
    calls = {"inv": lambda m, a: m.linalg.inv(a), "inv_ex": lambda m, a: m.linalg.inv_ex(a)[0],
             "tensorinv": lambda m, a: m.linalg.tensorinv(a.reshape(3, 1, 3), ind=1)}
    for values in (bad, [bad, [[1.0, 2.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]],
                   [[0.0, 0.0], [0.0, inf]]):
        ours, theirs = (str(_outcome(lambda m=m, v=values: calls[op](m, m.tensor(
            v, dtype=m.float64)))).replace("_LinAlgError", "LinAlgError") for m in (gradkit, torch))
        assert ours == theirs


def test_atanh_of_a_quotient_written_through_another_value_is_known():
    """Known difference (docs/numerics.md, "turn a last-bit difference"; breadth seed
    1325286): z / z of lu's 1 x 1 complex64 factor, then atanh_ through another value that is
    the same tensor, and whose backward raises on both sides: the values before atanh_ are
    read all the same."""
    program = Program("breadth", (Leaf((), "complex64", True),), (
        Step("fb_lu_legacy", (0,), {"n": 1, "flag": False, "flag2": True}),
        Step("num_div_", (1, 1), {"mode": None, "form": "tensor", "s": -2}),
        Step("fb_atanh_", (2,), {})), True, 1325286, backward=True)
    problems, known = diff_program(program)
    assert problems and problems[0].startswith("values[1]")
    assert known == "a step that turns a rounding difference of its input into another number"


def test_complex_ormqr_zero_read_by_a_later_step_is_torchs():
    """ormqr's complex result is -0.0 + 0j in torch (MKL) and was 0j here (breadth seed
    1329439; embedding of its real part showed it): gradkit now applies each reflector as
    LAPACK's (one whose tau is 0 skipped), not the Q it formed, and leaves torch's zero."""
    program = Program("breadth", (Leaf((3,), "complex128", True, True),
                                  Leaf((1,), "int64", False)), (
        Step("fb_ormqr", (0, 0), {"n": 1, "flag": True, "flag2": True}),
        Step("fb_embedding", (2,), {})), False, 1329439)
    problems, _ = diff_program(program)
    assert not problems


@pytest.mark.parametrize("name", ["std", "var", "std_mean", "var_mean"])
@pytest.mark.parametrize("values", [[-0.38, 0.1], [0.0, 0.0], [1.0, math.inf]])
def test_nan_correction_divides_by_nothing_as_torch(name, values):
    """torch's divisor max(0, n - correction) is C++'s std::max: 0 for a NaN correction, so
    std is inf (NaN for equal values), with no warning; gradkit's was NaN (NumPy's maximum
    keeps the NaN; breadth seed 1334884)."""
    torch = pytest.importorskip("torch")

    def program(m):
        x = m.tensor(values, dtype=m.float64, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no warning in torch
            out = getattr(m, name)(x, correction=math.nan)
            out = out[0] if isinstance(out, tuple) else out
        out.backward()
        return str([out.item(), x.grad.tolist()])
    ours, theirs = (_outcome(lambda m=m: program(m)) for m in (gradkit, torch))
    assert ours[0] == "ok" and ours == theirs


@pytest.mark.parametrize("mask", ["none", "causal", "bool_all", "bool", "float"])
@pytest.mark.parametrize("value_edge", [math.inf, -math.inf, math.nan, 5.0])
def test_attention_of_a_nan_query_row_as_torchs_flash_kernel(mask, value_edge):
    """torch's CPU flash kernel weighs every key of a row of NaN scores 0 when no mask is
    given (its running max passes over NaN): 0 @ v, so NaN where a value is not finite,
    where gradkit wrote 0 (breadth seed 1358513); with a mask its max takes the NaN and the
    row is NaN, where gradkit wrote 0 too. A causal one's gradients are torch's too: its
    backward writes 0 over the weights the mask hides (dv there finite) and their score
    gradients are 0 * (dP - D) (finite in dk where D is), where gradkit's were NaN
    throughout."""
    torch = pytest.importorskip("torch")
    nan = math.nan

    def program(m):
        q = m.tensor([[[[nan, 1.0], [1.0, 2.0]]]], dtype=m.float64, requires_grad=True)
        k = m.tensor([[[[1.0, 2.0], [0.5, 0.0], [0.1, 0.2]]]], dtype=m.float64,
                     requires_grad=True)
        v = m.tensor([[[[1.0, value_edge], [2.0, 3.0], [0.0, -1.0]]]], dtype=m.float64,
                     requires_grad=True)
        masks = {"none": None, "causal": None, "bool_all": m.ones(2, 3, dtype=m.bool),
                 "bool": m.tensor([[True, False, True], [False, True, True]]),
                 "float": m.tensor([[0.0, -math.inf, 0.0], [-math.inf, 0.0, 0.0]],
                                   dtype=m.float64)}
        out = m.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=masks[mask],
                                                           is_causal=mask == "causal")
        out.backward(m.ones_like(out))
        return [t.detach().numpy() for t in (out, q.grad, k.grad, v.grad)]
    ours, theirs = program(gradkit), program(torch)
    assert str(ours[0].tolist()) == str(theirs[0].tolist())
    for mine, torchs in zip(ours[1:], theirs[1:]):
        np.testing.assert_allclose(mine, torchs, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("seed", range(24))
def test_causal_attention_gradients_of_non_finite_entries_as_torchs_flash_kernel(seed):
    """torch's CPU flash kernel with is_causal writes -inf over the hidden scores (a NaN or
    inf one there plus gradkit's -inf bias was NaN), its backward writes 0 over their weights
    (dv finite where a NaN row hides a key) and still computes their score gradients,
    0 * (dP - D): NaN where dP or D is not finite, else 0 (gradkit's were NaN throughout a NaN
    query row, or 0 where torch's are NaN). Random shapes, one non-finite entry in q, k or v."""
    rng = np.random.default_rng(seed)
    length, source, width = (int(n) for n in rng.integers(1, 5, size=3))
    arrays = [rng.standard_normal((1, 2, n, width)) for n in (length, source, source)]
    for array in arrays:
        array[tuple(rng.integers(0, n) for n in array.shape)] = rng.choice(
            [math.nan, math.inf, -math.inf])
    up = rng.standard_normal((1, 2, length, width))

    def program(m):
        q, k, v = (m.tensor(a, requires_grad=True) for a in arrays)
        out = m.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        out.backward(m.tensor(up))
        return [t.detach().numpy() for t in (out, q.grad, k.grad, v.grad)]
    for mine, torchs in zip(program(gradkit), program(torch)):
        np.testing.assert_allclose(mine, torchs, rtol=1e-9, atol=1e-12)

def test_svd_product_of_repeated_singular_values_is_known():
    """Known difference (docs/numerics.md, "up to rounding divide by their"; breadth seed
    1369393): U S V^H of hfft2's constant blocks plus 2 I, whose singular values repeat: the
    gradient divides by their squares' differences, NaN in torch, finite here."""
    program = Program("breadth", (Leaf((3, 1, 1), "complex128", True),), (
        Step("fft_hfft2", (0,), {"s": (5, 4), "dim": (-2, -1), "norm": "ortho"}),
        Step("b_svd_prod", (1,), {"n": 6})), False, 1369393)
    problems, known = diff_program(program)
    assert torch_runs_avx512_kernels() or problems[0].startswith("grads[0]")
    assert_lapack_known(problems, known, "gradients of eig (eigh, svd) where eigenvalues "
                                         "(singular values) repeat up to rounding")


@pytest.mark.parametrize("split", ["unsafe_split", "unsafe_chunk", "unsafe_split_with_sizes"])
@pytest.mark.parametrize("flag", ["conj", "neg"])
def test_unsafe_split_of_a_conj_or_neg_tensor_is_a_copy(split, flag):
    """torch's conjugate and negative fallbacks resolve the input of an op that is no view
    there: the pieces of an unsafe split of a conj (ifft of a real input) or neg tensor do not
    share its memory, so a later write into it leaves them (a silent stale value here:
    breadth seed 1414137)."""
    torch = pytest.importorskip("torch")
    calls = {"unsafe_split": lambda m, t: m.unsafe_split(t, 1, 0)[1],
             "unsafe_chunk": lambda m, t: m.unsafe_chunk(t, 2, 0)[1],
             "unsafe_split_with_sizes": lambda m, t: m.unsafe_split_with_sizes(t, [1, 1], 0)[1]}

    def program(m):
        x = m.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=m.float64, requires_grad=True)
        base = m.fft.ifft(x, dim=1, norm="forward") if flag == "conj" else \
            (x * (1 + 2j)).conj().imag  # imag of a conj tensor: the neg bit
        assert (base.is_conj() if flag == "conj" else base.is_neg())
        piece = calls[split](m, base)
        with m.no_grad():
            base.mul_(2)
        (piece.abs() ** 2).sum().backward()
        # (+ 0.0: torch's gradient of the rows the piece leaves out is -0.0 through the neg
        # bit, gradkit's 0.0, with a split that is a view too)
        return str([piece.tolist(), piece.is_conj(), piece.is_neg(), (x.grad + 0.0).tolist(),
                    type(piece.grad_fn).__name__])
    assert _outcome(lambda: program(gradkit)) == _outcome(lambda: program(torch))


def test_softplus_backward_of_a_huge_gradient_stays_finite_unlike_torch():
    """Deliberate (docs/numerics.md, "multiplies the incoming gradient by"; dist seed 310956):
    torch's softplus backward overflows float32 with grad * exp(beta x) before dividing; the
    gradient is grad * sigmoid(beta x), finite."""
    torch = pytest.importorskip("torch")
    x_value, grad = 13.8, 1.4e34

    def gradient(m):
        x = m.tensor([x_value], dtype=m.float32, requires_grad=True)
        m.nn.functional.softplus(x).backward(m.tensor([grad], dtype=m.float32))
        return float(x.grad[0])
    assert gradient(torch) == math.inf
    assert gradient(gradkit) == pytest.approx(grad / (1 + math.exp(-x_value)), rel=1e-6)
    program = generate(RandomDrawer(310956), "dist")
    problems, known = diff_program(program)
    assert problems and known == "torch's softplus backward overflows float32 (grad * " \
        "exp(beta x) first)"


def test_stft_zero_sign_read_by_a_cast_is_known():
    """Known difference (docs/numerics.md, "of a zero it leaves is the algorithm's"; signal
    seed 312123): an stft of a constant leaves +0.0 or -0.0 real parts by its FFT (pocketfft
    here, MKL in torch), which the complex comparison lets pass until a cast to float64
    reads them."""
    program = Program("signal", (Leaf((), "float64", True), Leaf((0,), "bool", False)), (
        Step("s_stft", (0, 0), {"n_fft": 3, "hop": 1, "win": 3, "center": True,
                                "pad_mode": "replicate", "normalized": False,
                                "onesided": False, "window": "none"}),
        Step("s_unique_consecutive", (2,), {"dim": 1}),
        Step("cast", (3,), {"dtype": "float64"})), False, 312123)
    problems, known = diff_program(program)
    assert problems and all(p.startswith("signed zero in values[4]") for p in problems)
    assert known == "the sign of a zero an FFT leaves"


@pytest.mark.parametrize("seed", [316415, 315134])
def test_distribution_refusing_a_float32_noise_nan_is_known(seed):
    """Known difference (docs/numerics.md, "validation refuses a parameter that
    single-precision"; dist seeds 316415, 315134): float32 Kumaraswamy's stddev is the square
    root of a variance that cancels to noise, NaN here only, and a Uniform whose high is that
    value is refused here only."""
    problems, known = diff_program(generate(RandomDrawer(seed), "dist"))
    assert problems and problems[0].startswith("extra error")
    assert known == "a distribution refuses a parameter that float32 noise made NaN here only"


@pytest.mark.parametrize("shape,groups", [((1, 1, 0), 1), ((2, 4, 0), 2), ((0, 2, 3), 1),
                                          ((1, 2, 3), 2)])
@pytest.mark.parametrize("used", ["input", "weight", "both"])
def test_group_norm_input_gradient_of_an_empty_group_is_nan_in_the_weight(shape, groups, used):
    """torch's double backward of an empty group's input gradient divides by its zero count:
    its derivative in the weight is NaN (breadth seed 1294694: second derivative through an
    empty group_norm, its output gradient constant); gradkit's input gradient did not depend
    on the weight there."""
    def program(m):
        t = m.linspace(-1, 2, math.prod(shape), dtype=m.float64).reshape(shape).requires_grad_()
        w = m.linspace(0.5, 1.5, shape[1], dtype=m.float64).requires_grad_()
        b = (w * 0.5 - 1).detach().requires_grad_()
        g = m.autograd.grad(m.group_norm(t, groups, w, b, 1e-5).sum() * 0.7, (t, w, b),
                            create_graph=True)
        loss = {"input": g[0].sum(), "weight": g[1].sum(), "both": g[0].sum() + g[1].sum()}
        return [None if d is None else np.asarray(d.tolist())
                for d in m.autograd.grad(loss[used], (t, w, b), allow_unused=True)]
    for ours, theirs in zip(program(gradkit), program(torch), strict=True):
        assert (ours is None) == (theirs is None)
        if ours is not None:  # the nonempty control rounds in another order
            np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12, equal_nan=True)


@pytest.mark.parametrize("n", range(2, 24))
def test_polygamma_scale_is_exp_of_cs_lgamma(n):
    """torch's polygamma(n, x) is exp(lgamma(n + 1)) zeta(n + 1, x) with C's lgamma; gradkit
    took Python's (exp of it is 23.999999999999982 for 4!, C's 24.000000000000004): an ulp
    apart, which cosine_embedding_loss's backward of identical vectors, a difference of terms
    that cancel to 1e-13 of them, grew to 1e-3 (breadth seed 1298615)."""
    x = [1.6819878823071122e-13, 0.3, 1.7, 5.5, -2.5, 40.0, 123.4]
    ours = gradkit.special.polygamma(n, gradkit.tensor(x, dtype=gradkit.float64)).tolist()
    assert ours == torch.special.polygamma(n, torch.tensor(x, dtype=torch.float64)).tolist()


def test_polygamma_of_a_cosine_loss_of_identical_vectors_second_derivative():
    def program(m):
        x = m.tensor([2.4380901504762185], dtype=m.float64, requires_grad=True)
        loss = m.cosine_embedding_loss(x.reshape(1, -1), x.reshape(1, -1),
                                       m.ones(1, dtype=m.float64), 0.1, 0)
        g, = m.autograd.grad(m.special.polygamma(3, loss).sum(), x, create_graph=True)
        return [g.item(), m.autograd.grad(g.sum(), x)[0].item()]
    assert program(gradkit) == program(torch)


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("weight", [None, -1.5])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_strided_batch_norm_adds_a_missing_bias(training, weight, dtype):
    """torch's strided batch_norm loop computes ((x - mean) * invstd) * weight + bias with a
    missing bias 0, so a -0.0 comes out 0.0 (strided seed 87015: batch_norm of the real part
    of std_mean's zeros); gradkit skipped the bias and kept -0.0."""
    def program(m):
        d = getattr(m, dtype)
        z = m.complex(m.tensor([0.0, -0.0, 0.0, -0.0], dtype=d), m.zeros(4, dtype=d))
        x = z.real.reshape(4, 1, 1)  # stride 2: the strided loop
        w = None if weight is None else m.tensor([weight], dtype=d)
        out = m.batch_norm(x, w, None, m.zeros(1, dtype=d), m.ones(1, dtype=d), training,
                           0.1, 1e-5, False)
        return str(out.flatten().tolist())
    assert program(gradkit) == program(torch)
    assert "-0.0" not in program(gradkit)


@pytest.mark.parametrize("first", [True, False])
@pytest.mark.parametrize("raising", ["floor_divide", "native_channel_shuffle"])
def test_a_node_without_derivative_raises_before_a_stale_saved_value(first, raising):
    """torch's NotImplemented node has the largest sequence number, so its engine runs it (and
    raises) before any other ready node, whichever was made first: jacfwd (reverse mode) of
    ``x // 0.5`` beside ``y.exp_().exp_()`` names floor_divide (fwd seed 305690); gradkit ran
    the later exp's node first and named its stale saved result."""
    def program(m):
        a = m.tensor([1.0, 2.0, 3.0, 4.0], dtype=m.float64, requires_grad=True)
        b = m.ones(3, dtype=m.float64, requires_grad=True)
        stale = b.clone()

        def without_derivative():
            return a // 0.5 if raising == "floor_divide" else \
                m.native_channel_shuffle(a.reshape(1, 4, 1), 2)
        outs = [without_derivative()] if first else []
        stale.exp_()
        stale.exp_()
        outs = outs + [stale] + ([] if first else [without_derivative()])
        return m.autograd.grad(outs, (a, b), [m.ones_like(o) for o in outs])
    ours, theirs = _outcome(lambda: program(gradkit)), _outcome(lambda: program(torch))
    assert ours == theirs and ours[0] == "RuntimeError"
    assert f"derivative for aten::{raising} is not implemented" in ours[1]


@pytest.mark.parametrize("write", ["logical_not_", "no_grad", "none"])
def test_unrecorded_write_into_a_view_of_a_laid_out_leaf_cuts_it(write):
    """A leaf made from a view (its base requires no grad) and a view of it written without a
    record: torch regenerates that view's history (and its siblings') from the base, so no
    gradient reaches the leaf through them (strided seed 98998: logical_not_ of a swapdims);
    gradkit cut the siblings only, the written view kept its path."""
    def program(m):
        base = m.tensor([0.5, 9.0, -1.0, 9.0, 2.0, 9.0], dtype=m.float64)
        leaf = base[::2].requires_grad_()
        view, sibling = leaf.swapdims(0, 0), leaf[1:]
        if write == "logical_not_":
            view.logical_not_()
        elif write == "no_grad":
            with m.no_grad():
                view.mul_(2)
        weights = m.tensor([1.0, 2.0, 3.0], dtype=m.float64)
        loss = (view * weights).sum() + sibling.sum() * 10 + leaf.sum() * 100
        return [view.requires_grad, m.autograd.grad(loss, leaf)[0].tolist()]
    assert program(gradkit) == program(torch)


@pytest.mark.parametrize("layout", ["offset", "transposed", "every_other_column"])
@pytest.mark.parametrize("scatter", ["select_scatter", "slice_scatter", "diagonal_scatter"])
def test_view_scatters_copy_the_whole_storage_as_torch(layout, scatter):
    """torch's select/slice/diagonal_scatter start from clone_preserve_strides of x: its whole
    storage, viewed with x's strides and offset, so as_strided of the result reads (and sends
    gradients to) the storage around x (strided seed 106823: as_strided_copy at offset 0 of a
    slice_scatter of a leaf at offset 1); gradkit's copy was C-contiguous from offset 0."""
    def program(m):
        buffer = m.arange(1.0, 13.0, dtype=m.float64)
        x = {"offset": buffer[1:10].reshape(3, 3), "transposed": buffer[:9].reshape(3, 3).t(),
             "every_other_column": buffer.reshape(3, 4)[:, ::2]}[layout].requires_grad_()
        src = {"select_scatter": lambda: (x[:, 0] * 10, 1, 0),
               "slice_scatter": lambda: (x[:, :1] * 10, 1, 0, 1),
               "diagonal_scatter": lambda: (x.diagonal() * 10,)}[scatter]()
        out = getattr(m, scatter)(x, *src)
        read = m.as_strided(out, (2, 3), (1, 2), 0)
        grad = m.autograd.grad((read * m.arange(6.0, dtype=m.float64).reshape(2, 3)).sum(), x)
        return [out.stride(), out.storage_offset(), out.tolist(), read.tolist(), grad[0].tolist()]
    assert program(gradkit) == program(torch)


def test_gammaln_gradient_an_ulp_from_a_pole_is_known():
    """float32 layer_norm of two values is -0.9999937 here, -0.99999374 (an ulp away) in
    torch; gammaln's values there agree within the tolerance, its derivative digamma, near
    -1 / (x + 1), moves 1% (strided seed 106125): the rounding-amplified Known, for
    gradients."""
    for m in (gradkit, torch):
        x = m.tensor([-0.99999374, -0.9999937], dtype=m.float32)
        assert x[0].item() != x[1].item()
        value, slope = m.special.gammaln(x), m.digamma(x)
        assert abs(value[0] / value[1] - 1) < 2e-3 < abs(slope[0] / slope[1] - 1)
    program = generate(RandomDrawer(106125), "strided_breadth")
    problems, known = diff_program(program)
    assert problems and all(p.startswith("grads") for p in problems)
    assert known == "a step that turns a rounding difference of its input into another number"
    assert diff_program(dataclasses.replace(program, steps=program.steps[:-1])) == ([], None)


def test_max_pool_padding_only_window_of_minus_inf_inputs_is_known():
    """A max_pool1d window at positions -1 and 1 of a length-1 input (padding 1, dilation 2)
    reads padding only; of -inf inputs its -inf output does not tell (strided seed 110448,
    whose torch backward also writes through the window's index into the next plane): the
    padding-window Known reads the pool's geometry."""
    from fuzz.known import _has_padding_only_window

    def program(m):
        x = m.tensor([[[-math.inf]], [[-math.inf]]], requires_grad=True)
        w = m.tensor(0.5, requires_grad=True)
        out = m.nn.functional.max_pool1d(x, 2, 1, 1, 2, True)
        g = m.autograd.grad((out * w).sum(), x, create_graph=True)[0]
        return m.autograd.grad(g.sum(), w)
    assert _outcome(lambda: program(torch))[0] == "RuntimeError"
    window = {"d": 1, "shape": (2, 1, 1), "kernel_size": 2, "stride": 1, "padding": 1,
              "dilation": 2, "ceil_mode": True}
    assert _has_padding_only_window(window)
    assert not _has_padding_only_window({**window, "dilation": 1})
    problems, known = diff_program(generate(RandomDrawer(110448), "strided_breadth"))
    assert problems and known == \
        "max pooling over a window of padding only: torch's double backward raises"


@pytest.mark.parametrize("fn", ["var", "std", "var_mean", "std_mean"])
@pytest.mark.parametrize("dim", [None, 0])
@pytest.mark.parametrize("values", [[[1.0, 2.0], [3.0, 5.0]], [[2.0, 2.0], [2.0, 2.0]]])
@pytest.mark.parametrize("dtype", ["float32", "complex64"])
def test_variance_with_a_nan_correction_divides_by_zero(fn, dim, values, dtype):
    """torch's divisor max(0, n - correction) is 0 for a NaN correction: the variance is inf
    (NaN where the values are equal), and so is std (strided seed 114677: std(correction=)
    of a NaN from the graph); gradkit's NumPy divisor was NaN."""
    def program(m):
        x = m.tensor(values, dtype=getattr(m, dtype))
        out = getattr(m, fn)(x, dim, correction=math.nan)
        return str([t.tolist() for t in (out if isinstance(out, tuple) else (out,))])
    theirs = program(torch)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # torch warns of no degree of freedom only for a number
        assert program(gradkit) == theirs


@pytest.mark.parametrize("call", ["scatter_add", "scatter", "scatter_value"])
def test_out_of_place_scatter_of_a_transposed_input_is_c_contiguous(call):
    """torch's out-of-place scatter and scatter_add allocate a C-contiguous result whatever
    the input's layout, so a later view of it (kron's) works; gradkit's kept a transposed
    input's layout (strided seed 161855: kron of a scatter_add of an hfft2 result)."""
    def program(m):
        x = m.arange(6.0).reshape(3, 2).t()
        index = m.tensor([[1, 0], [1, 2]])
        out = {"scatter_add": lambda: x.scatter_add(-1, index, x),
               "scatter": lambda: x.scatter(-1, index, x),
               "scatter_value": lambda: x.scatter(-1, index, 2.0)}[call]()
        return [out.stride(), out.tolist(), m.kron(out, m.ones(2, 3)).shape[0]]
    assert program(gradkit) == program(torch)


_INDEX_WRITES = {  # torch's layout of each result: C order, or its clone of x's (preserve)
    "scatter_reduce": lambda m, x: x.scatter_reduce(1, m.tensor([[0, 1]] * 4), m.ones(4, 2),
                                                    "sum"),
    "scatter_reduce_amax": lambda m, x: m.scatter_reduce(
        x, 0, m.tensor([[0, 1, 2, 3]]), m.ones(1, 4), "amax", include_self=False),
    "index_copy": lambda m, x: x.index_copy(0, m.tensor([2, 0]), m.ones(2, 4)),
    "masked_scatter": lambda m, x: m.masked_scatter(x, m.tensor([True, False, True, False]),
                                                    m.zeros(16)),
    "index_reduce": lambda m, x: x.index_reduce(0, m.tensor([1, 1]), m.ones(2, 4), "prod"),
    "index_fill": lambda m, x: x.index_fill(1, m.tensor([1]), -1.0),
    "index_add": lambda m, x: m.index_add(x, 1, m.tensor([0, 3]), m.ones(4, 2), alpha=2),
    "index_put": lambda m, x: x.index_put((m.tensor([0, 2]),), m.tensor(1.0)),
    "put": lambda m, x: x.put(m.tensor([1, 5]), m.tensor([9.0, 8.0]), accumulate=True),
}
_LAYOUTS = {
    "transposed": lambda m: m.arange(16.0).reshape(4, 4).t(),
    "stepped transposed": lambda m: m.arange(32.0).reshape(4, 8)[:, ::2].t(),
    "offset transposed": lambda m: m.arange(40.0).reshape(5, 8)[1:, 2:6].t(),
    "expanded": lambda m: m.arange(4.0).expand(4, 4),
}


@pytest.mark.parametrize("layout", list(_LAYOUTS))
@pytest.mark.parametrize("call", list(_INDEX_WRITES))
def test_out_of_place_index_writes_lay_out_their_results_as_torch(call, layout):
    """torch's out-of-place scatter_reduce, index_copy, masked_scatter and index_reduce
    results are C-contiguous; index_fill's, index_put's and put's are its clone of the input
    (its strides when dense, else dense in their order; an expanded input's C order). gradkit
    kept the input's layout for the first four (and an expanded input's NumPy order for
    index_fill), put's was C-contiguous."""
    def program(m):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # index_reduce's beta warning
            out = _INDEX_WRITES[call](m, _LAYOUTS[layout](m))
        return [out.stride(), out.is_contiguous(), out.tolist()]
    assert program(gradkit) == program(torch)

def test_complex_inverse_of_a_non_finite_matrix_is_nan_in_both_parts():
    """The NaN a non-finite complex matrix inverts to is nan + nanj, as torch's (the fill of
    seed 1328713's fallback gave nan + 0j)."""
    torch = pytest.importorskip("torch")
    bad = [[-math.inf, 0.0, 1.0], [math.inf, 0.1, 0.0], [0.0, -math.inf, 0.0]]
    ours, theirs = (str(m.linalg.inv(m.tensor(bad, dtype=m.complex128)).tolist())
                    for m in (gradkit, torch))
    assert ours == theirs


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("mode", ["vjp", "jvp", "second"])
def test_sinc_gradient_at_zero_is_zero_whatever_the_incoming_gradient(dtype, mode):
    """torch's sinc_backward masks the product with the gradient where pi x² is 0, so a NaN or
    inf gradient (or tangent) at x = 0 gives 0 there; gradkit masked the derivative, then
    multiplied, 0 * NaN = NaN (breadth seed 1427475: log_softmax over a NaN fed sinc). The
    second derivative keeps torch's 0 / 0 = NaN at 0."""
    def program(m):
        kind = getattr(m, dtype)
        x = m.tensor([0.0, 0.5, 0.0, -0.0], dtype=kind).requires_grad_()
        g = m.tensor([math.nan, math.nan, math.inf, -math.inf], dtype=kind).requires_grad_()
        if mode == "jvp":
            fwd = m.autograd.forward_ad
            with fwd.dual_level():
                return fwd.unpack_dual(m.sinc(fwd.make_dual(x.detach(), g.detach()))).tangent
        gx, = m.autograd.grad(m.sinc(x), x, g, create_graph=True)
        if mode == "vjp":
            return gx
        return m.cat(m.autograd.grad(gx.sum().real if gx.is_complex() else gx.sum(), [x, g]))
    np.testing.assert_array_equal(program(gradkit).detach().numpy(),
                                  program(torch).detach().numpy())  # NaN == NaN, 0 == -0


def test_nanmean_of_the_log_of_a_rounding_noise_zero_is_known():
    """Known (docs/numerics.md, "which `nanmean` then skips"; breadth seed 1453357): the
    cumulative sum of a float32 layer_norm over its row is 0 in torch and -9e-8 here (its
    rows are an ulp apart), so log gives -inf or NaN, and nanmean keeps -inf or skips NaN."""
    row = [-0.66469336, 0.15873526, -0.46996894]
    for m in (gradkit, torch):
        total = m.nn.functional.layer_norm(m.tensor(row), (3,)).double().sum().item()
        assert abs(total) < 1e-7
        assert m.nanmean(m.tensor([0.0, 1.0]).log()).item() == -math.inf
        assert m.nanmean(m.tensor([-9e-8, 1.0]).log()).item() == 0.0
    problems, known = diff_program(generate(RandomDrawer(1453357), "breadth"))
    assert problems and known == "a step that turns a rounding difference of its input " \
                                 "into another number"


@pytest.mark.parametrize("dtype", ["float32", "complex64", "float64", "float16"])
@pytest.mark.parametrize("groups, batch", [(1, 1), (2, 1), (1, 2)])
@pytest.mark.parametrize("padding, output_padding", [(1, 1), (1, 0), (0, 1)])
def test_transposed_convolution_to_an_empty_output_as_torchs_backends(
        dtype, groups, batch, padding, output_padding):
    """Where torch's CPU convolution picks oneDNN (half precision; float32, or complex64's
    real parts, strided and grouped or batched), a transposed convolution to an output of size
    0 is an empty tensor and a negative size fails to make oneDNN's memory descriptor; its
    slow kernel refuses both as too small (breadth seed 1441215: conv_transpose1d of a
    complex64 input, stride 2, groups 2, output size 0, raised here)."""
    def program(m):
        x = m.ones(batch, 2, 1, dtype=getattr(m, dtype), requires_grad=True)
        w = m.ones(2, 2 // groups, 1, dtype=getattr(m, dtype), requires_grad=True)
        y = m.nn.functional.conv_transpose1d(x, w, stride=2, padding=padding, dilation=2,
                                             groups=groups, output_padding=output_padding)
        (y.sum().real if y.is_complex() else y.sum()).backward()
        return str((list(y.shape), x.grad.tolist(), w.grad.tolist()))
    assert _outcome(lambda: program(gradkit)) == _outcome(lambda: program(torch))


@pytest.mark.parametrize("write", ["tril_", "add_", "mul_", "zero_", "exp_", "fill_"])
@pytest.mark.parametrize("view", ["as_strided", "expand"])
def test_in_place_write_into_an_empty_view_with_a_zero_stride(write, view):
    """An empty tensor shares no memory between elements (torch: it is contiguous), so an
    in-place op on an empty as_strided or expanded view with a zero stride writes nothing;
    gradkit's copy of its aliasing spanned a negative size (breadth seed 1458600)."""
    def program(m):
        x = m.tensor([1.5], dtype=m.float64, requires_grad=True).clone()
        v = x.as_strided((2, 1, 0), (0, 2, 2), 0) if view == "as_strided" else \
            x[:0].reshape(1, 0).expand(3, 0)
        getattr(v, write)(*(() if write in ("zero_", "exp_") else (1,)))
        return str((list(v.shape), m.autograd.grad((x * 2).sum() + v.sum(), x)[0].tolist()))
    assert _outcome(lambda: program(gradkit)) == _outcome(lambda: program(torch))


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128"])
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_inverse_is_exactly_hermitian_off_its_diagonal(dtype, upper):
    """torch's potri computes one triangle and mirrors it, so equal entries of the inverse
    stay equal; gradkit's two triangular solves left them an ulp apart, so a searchsorted of
    the result counted a tie otherwise (breadth seed 1471486, float32)."""
    rng = np.random.default_rng(3)
    factor = np.tril(rng.standard_normal((3, 4, 4))) + 4 * np.eye(4)
    if dtype == "complex128":
        factor = factor + 1j * np.tril(rng.standard_normal((3, 4, 4)), -1)
    factor = factor.swapaxes(-1, -2).conj() if upper else factor
    off = ~np.eye(4, dtype=bool)
    for m in (gradkit, torch):
        inverse = m.cholesky_inverse(m.tensor(factor, dtype=getattr(m, dtype)), upper).numpy()
        np.testing.assert_array_equal(inverse[:, off], inverse.swapaxes(-1, -2).conj()[:, off])
        np.testing.assert_allclose(inverse, np.linalg.inv(factor @ factor.swapaxes(-1, -2).conj()
                                   if not upper else factor.swapaxes(-1, -2).conj() @ factor),
                                   rtol=1e-4 if dtype == "float32" else 1e-10, atol=1e-6)


@pytest.mark.parametrize("shapes", [((0, 3, 3), (0, 3, 3)), ((2, 0, 3), (2, 3, 3)),
                                    ((2, 1, 0), (2, 0, 3)), ((1, 2, 1, 0), (2, 0, 3)),
                                    ((2, 1, 3), (2, 3, 0))], ids=str)
@pytest.mark.parametrize("dtypes", [("bool", "float32"), ("int64", "float32"),
                                    ("float64", "float32"), ("complex64", "float32")], ids=str)
def test_matmul_of_batches_with_nothing_to_sum_answers_before_the_dtype_check(shapes, dtypes):
    """torch's matmul of two batches reaches bmm, which answers an empty result or an empty
    sum (zeros, in mat2's dtype) before its dtype and bool checks; gradkit refused the dtypes
    (breadth seed 1508978: a bool (0, 3, 3) batch times a float32 one)."""
    def program(m):
        a = m.zeros(shapes[0], dtype=getattr(m, dtypes[0]),
                    requires_grad=dtypes[0] not in ("int64", "bool"))
        b = m.ones(shapes[1], dtype=getattr(m, dtypes[1]), requires_grad=True)
        out = m.matmul(a, b)
        grads = m.autograd.grad(out.sum(), [t for t in (a, b) if t.requires_grad])
        return str([(list(t.shape), str(t.dtype).split(".")[1], t.abs().sum().item())
                    for t in (out, *grads)])
    assert _outcome(lambda: program(gradkit)) == _outcome(lambda: program(torch))


_NAN_BATCH = [[[1.0, 0.0], [0.0, 2.0]], [[math.nan, 0.0], [1.0, 2.0]], [[4.0, 0.0], [0.0, 1.0]]]
_NAN_BATCH_CALLS = {
    "solve": lambda m, a, b: m.linalg.solve(a, b),
    "solve_matrix": lambda m, a, b: m.linalg.solve(a, a),
    # (abs: a complex result's zero imaginary parts are -0.0 in torch, not yet matched)
    "solve_left_false": lambda m, a, b: m.linalg.solve(a, b[:, None, :], left=False).abs(),
    "solve_ex": lambda m, a, b: m.linalg.solve_ex(a, b),
    "inv": lambda m, a, b: m.linalg.inv(a),
    "inv_ex": lambda m, a, b: m.linalg.inv_ex(a),
    "inverse_single": lambda m, a, b: m.inverse(a[1]),
    "solve_single": lambda m, a, b: m.linalg.solve(a[1], b[1]),
}


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128"])
@pytest.mark.parametrize("call", list(_NAN_BATCH_CALLS))
def test_solve_and_inverse_of_a_matrix_with_a_nan_are_all_nan(call, dtype):
    """torch's solve and inverse of a matrix holding a NaN are NaN in every entry (that batch
    element only), whether or not LAPACK finds a zero pivot; NumPy's getrf pivots past a NaN
    in first place ([[nan, 0], [1, 2]]) and gradkit's solve gave [nan, 0.5]."""
    def program(m):
        a = m.tensor(_NAN_BATCH, dtype=getattr(m, dtype))
        b = m.tensor([[1.0, 2.0], [3.0, 4.0], [4.0, 1.0]], dtype=getattr(m, dtype))
        out = _NAN_BATCH_CALLS[call](m, a, b)
        return str([t.tolist() for t in (out if isinstance(out, tuple) else (out,))])
    assert program(gradkit) == program(torch)


def test_hardswish_second_derivative_outside_its_ramp_ignores_the_gradient():
    """torch's derivative of hardswish_backward in x is where(-3 < x < 3, grad * g / 3, 0):
    a NaN or inf g outside the ramp gives 0; gradkit's product of the masked zero with g gave
    NaN (breadth seed 1502911: triplet_margin_loss of hardswish, NaN in its first gradient)."""
    def program(m):
        x = m.tensor([-4.0, -3.0, -1.0, 0.0, 3.0, 5.0, math.nan, math.inf, -math.inf],
                     dtype=m.float64, requires_grad=True)
        g = m.tensor([math.nan, 1, 2, math.inf, 1, math.nan, 2, 3, math.nan], dtype=m.float64,
                     requires_grad=True)
        gx, = m.autograd.grad(m.nn.functional.hardswish(x), x, g, create_graph=True)
        return m.cat([gx, *m.autograd.grad(gx.sum(), [x, g])])
    assert str(_outcome(lambda: program(gradkit))) == str(_outcome(lambda: program(torch)))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_binary_cross_entropy_of_zero_dim_inputs_has_a_gradient(dtype):
    """bce's backward clamps x (1 - x), a NumPy scalar for 0-d inputs: the clamp signature
    check (a tensor first) refused it with torch's invalid-combination error (strided seed
    173840: bce of a 1 x 1 cond with itself)."""
    def program(m):
        x = m.tensor(0.3, dtype=getattr(m, dtype), requires_grad=True)
        y = m.tensor(0.6, dtype=getattr(m, dtype), requires_grad=True)
        loss = m.nn.functional.binary_cross_entropy(x, y, reduction="sum")
        return m.stack([loss, *m.autograd.grad(loss, [x, y])])
    assert _outcome(lambda: program(gradkit)) == _outcome(lambda: program(torch))


def test_as_strided_scatter_of_a_view_at_an_offset_has_a_gradient():
    """torch's as_strided_scatter backward applies the input's storage offset to a fresh
    gradient, out of its bounds for a 0-d view at offset 1: it raises; gradkit gives the
    derivative, the documented difference (strided seed 174541)."""
    def program(m):
        x = m.tensor([9.0, 1.5])[1:].reshape(()).detach().requires_grad_()
        out = m.as_strided_scatter(x, m.tensor(2.0), (), (), 1)
        return m.stack([out, m.autograd.grad(out, x)[0]])
    ours, theirs = _outcome(lambda: program(gradkit)), _outcome(lambda: program(torch))
    assert ours == ("ok", [2.0, 0.0])
    assert theirs[0] == "RuntimeError" and "out of bounds for storage" in theirs[1]
    problems, known = diff_program(generate(RandomDrawer(174541), "strided_breadth"))
    assert not problems or known.startswith("as_strided_scatter's gradient of self")


@pytest.mark.parametrize("mode", [None, "trunc", "floor"])
@pytest.mark.parametrize("divisor", ["number", "tensor"])
def test_division_with_a_rounding_mode_passes_a_known_zero_to_its_dividend(mode, divisor):
    """div(x, y, rounding_mode=None) (DivBackward2) passes sgn's zero tensor on to x as
    DivBackward0 does, y's -g * x / y**2 runs (NaN); a rounding mode's zeros_like gradients are
    plain zeros (breadth seed 1406905: abs ** -0.0 of a quotient by 0, inf in grads2)."""
    def program(m):
        a = m.tensor(1.0, dtype=m.float64, requires_grad=True)
        y = m.tensor(0.0, dtype=m.float64, requires_grad=True)
        v = m.div(a * m.tensor(math.inf, dtype=m.float64), 0 if divisor == "number" else y,
                  rounding_mode=mode)
        g, = m.autograd.grad(v.abs(), v, create_graph=True)
        return str([None if t is None else t.item()
                    for t in m.autograd.grad(g, [a, y], allow_unused=True)])
    assert program(gradkit) == program(torch)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("exponent", [2, 3, 2.0, 3.0, 2 + 0j])
def test_complex_square_and_cube_by_a_number_are_products(dtype, exponent):
    """torch computes a complex x ** 2 and x ** 3 as x * x (* x); NumPy's power made
    (-0 + 0j) ** 2 0 + 0j where the product is 0 - 0j (strided seed 324466: an in-place
    x **= 2.0 read by view_as_real). Every pair of parts from a grid of specials, bit for bit."""
    parts = [0.0, -0.0, 1.0, -1.5, math.inf, -math.inf, math.nan, 2.5]
    values = np.array([complex(a, b) for a in parts for b in parts], dtype=dtype)

    def program(m):
        x = m.tensor(values)
        return [m.view_as_real(x ** exponent), m.view_as_real(x.clone().pow_(exponent))]
    for ours, theirs in zip(program(gradkit), program(torch), strict=True):
        ours, theirs = ours.numpy(), theirs.numpy()
        np.testing.assert_array_equal(ours, theirs)  # (NaN where NaN)
        signed = ~np.isnan(theirs)  # a NaN's sign bit is the CPU's
        np.testing.assert_array_equal(np.signbit(ours[signed]), np.signbit(theirs[signed]))


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_native_dropout_of_complex_infinities_multiplies_twice(dtype):
    """torch's native_dropout is input * mask, then * scale: two complex products, so
    -inf + 0j becomes nan + nanj (one product by mask * scale left -inf + nanj; strided seed
    1540475: nan_to_num of a dropped-out empty logsumexp's -inf)."""
    values = [complex(-math.inf, 0.0), complex(1.5, -2.0), complex(math.nan, 1.0),
              complex(0.0, math.inf), complex(math.inf, math.inf)]

    def program(m):
        out, mask = m.native_dropout(m.tensor(values, dtype=getattr(m, dtype)), 0.0, True)
        return str([out.tolist(), mask.tolist()])
    assert program(gradkit) == program(torch)


def test_nanquantile_of_the_log_of_a_noise_mean_is_known():
    """The mean of a layer_norm's row is rounding noise of either sign (-1.9e-17 here,
    1.9e-17 in torch), so its log is NaN, which nanquantile skips, or -38.5 (breadth seed
    1559119): a rounding amplified."""
    row = [0.43997184, -0.33727949, 0.32164938]
    for m in (gradkit, torch):
        mean = m.nn.functional.layer_norm(m.tensor([row], dtype=m.float64), (3,)).mean()
        assert abs(mean.item()) < 1e-15  # (the fuzzer's leaf rounds the row otherwise)
    problems, known = diff_program(generate(RandomDrawer(1559119), "breadth"))
    assert not problems or known == "a step that turns a rounding difference of its input " \
                                    "into another number"


def test_svdvals_second_derivative_at_repeated_singular_values_is_known():
    """svdvals' second derivative goes through the singular vectors, whose gradient divides by
    the squares' differences: at a rank-1 3 x 3 matrix (grid_sample of one value) its two
    zero singular values repeat, NaN on one side (breadth seed 1557579). Its first derivative
    does not divide, and agrees."""
    def first(m):
        x = m.full((3, 3), 0.7, dtype=m.float64, requires_grad=True)
        return m.autograd.grad(m.linalg.svdvals(x).sum(), x)[0].tolist()
    np.testing.assert_allclose(first(gradkit), first(torch), atol=1e-12)
    problems, known = diff_program(generate(RandomDrawer(1557579), "breadth"))
    assert not problems or known == "gradients of eig (eigh, svd) where eigenvalues " \
                                    "(singular values) repeat up to rounding"


def test_a_non_finite_pinverse_written_in_place_is_read_as_lapack_left_it():
    """pinverse of a matrix with an infinite entry: MKL's SVD leaves torch 0 where OpenBLAS's
    leaves gradkit NaN; a logical_not_ of it afterwards makes 1 and 0 of that. The LAPACK
    Known reads the value before the write, and both backward passes raise alike (strided
    seed 1577282)."""
    program = generate(RandomDrawer(1577282), "strided_breadth")
    assert any(step.op == "fb_logical_" for step in program.steps)
    problems, known = diff_program(program)
    assert not problems or known.startswith("a LAPACK routine of a non-finite matrix")


@pytest.mark.parametrize("name", ["tril_", "triu_"])
@pytest.mark.parametrize("diagonal", [0, -1, 1, 5])
@pytest.mark.parametrize("geometry", [((3, 2, 2), (1, 0, 0)), ((2, 3), (0, 1)),
                                      ((3, 3), (1, 1))], ids=str)
def test_triangle_in_place_of_an_expanded_tensor_writes_only_the_zeros(name, diagonal,
                                                                      geometry):
    """torch's tril_/triu_ check no internal overlap and write only the zeros, so every
    element sharing a zeroed location reads 0; gradkit refused the expanded target (breadth
    seed 1576629: tril_ of an as_strided bool tensor with strides 0)."""
    def program(m):
        v = m.tensor([True, False, True, True, False, True]).as_strided(*geometry, 0)
        getattr(v, name)(diagonal)
        return v
    assert _outcome(lambda: program(gradkit)) == _outcome(lambda: program(torch))


@pytest.mark.parametrize("shape", [(0, 2, 2, 2), (1, 2, 0, 2), (1, 0, 2, 2)], ids=str)
def test_transposed_convolution_of_an_empty_batch_skips_the_output_padding_check(shape):
    """torch's empty backend answers an empty batch before it checks output_padding against
    stride and dilation; other empty inputs raise its "Only zero batch" error first (breadth
    seed 1572465: an output_padding of 1 with stride 1 and dilation 1)."""
    def program(m):
        x = m.zeros(shape, requires_grad=True)
        out = m.nn.functional.conv_transpose2d(x, m.zeros(2, 1, 2, 1), stride=1, padding=1,
                                               output_padding=1)
        return str((list(out.shape), list(m.autograd.grad(out.sum(), x)[0].shape)))
    assert _outcome(lambda: program(gradkit)) == _outcome(lambda: program(torch))


@pytest.mark.parametrize("dtype", ["int64", "uint8", "bool"])
@pytest.mark.parametrize("beta", [0.5, 1, 1.0, 0, True, 2], ids=repr)
@pytest.mark.parametrize("shape", [(2, 2), (0, 1)], ids=str)
def test_addbmm_of_no_batch_into_an_integer_input_scales_it_in_place(dtype, beta, shape):
    """torch's addbmm of no batch is the input expanded, then result.mul_(beta): its cast
    check refuses a float beta into an integer or bool result (an int beta into bool) even
    of no element, and no kernel runs, so a bool input is no error (strided seed 1585288)."""
    def program(m):
        kind = getattr(m, dtype)
        return m.addbmm(m.ones(shape, dtype=kind), m.zeros((0, shape[0], 3), dtype=kind),
                        m.zeros((0, 3, shape[1]), dtype=kind), beta=beta, alpha=2.5)
    assert _outcome(lambda: program(gradkit)) == _outcome(lambda: program(torch))


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "complex64"])
@pytest.mark.parametrize("graph", [False, True])
def test_conj_physical_in_place_of_an_expanded_real_tensor_writes_nothing(dtype, graph):
    """torch's conj_physical_ of a real tensor returns before its kernel, so an expanded
    target is no error (a recorded one's backward refuses, as after fill_); a complex one is
    refused (strided_breadth seed 1671603)."""
    def program(m):
        leaf = m.ones(1, dtype=getattr(m, dtype), requires_grad=graph)
        x = leaf * 2 if graph else leaf.clone()
        w = x.as_strided((3,), (0,))
        before = x._version
        w.conj_physical_()
        out = [x._version - before, w.tolist()]
        if graph:
            out.append(_outcome(lambda: w.real.sum().backward()))
        return str(out)
    if graph and dtype in ("int64", "bool"):
        pytest.skip("integer tensors require no grad")
    assert _outcome(lambda: program(gradkit)) == _outcome(lambda: program(torch))


@pytest.mark.parametrize("seed, klass", [(1422039, "breadth"), (324689, "dist")])
def test_derivatives_at_the_edge_of_float64_are_a_known_difference(seed, klass):
    """Known difference (docs/numerics.md, "where an intermediate product of torch's
    overflows"): torch's derivatives are inf or NaN where gradkit's are the exact ones, the
    program's run with its loss weighted 2**-1000 (in both libraries) scaled back."""
    problems, known = diff_program(generate(RandomDrawer(seed), klass))
    assert problems and known == "derivatives at the edge of float64's range: torch's " \
        "formulas overflow an intermediate product"


def test_float64_softplus_gradient_at_the_edge_is_exact_where_torchs_overflows():
    """dist seed 324689's step: torch's softplus backward multiplies the gradient 2.7e305 by
    exp(20 x) first (inf); gradkit's is the exact 5.45e306, torch's own gradient of the same
    program with the incoming gradient scaled by 2**-1000, scaled back."""
    def grad(m, g):
        x = m.tensor([0.8098773403827622], dtype=m.float64, requires_grad=True)
        m.nn.functional.softplus(x * 20.0).backward(m.tensor([g], dtype=m.float64))
        return x.grad.numpy()
    g = 2.7268227411292105e+305
    assert np.isinf(grad(torch, g)).all()
    np.testing.assert_allclose(grad(gradkit, g), np.ldexp(grad(torch, np.ldexp(g, -1000)), 1000),
                               rtol=1e-15)


@pytest.mark.parametrize("n, dtype, scale", [(1, "float64", math.inf), (3, "float64", math.inf),
                                             (1, "float64", 1.0), (3, "complex128", 1.0),
                                             (2, "complex128", math.inf)])
def test_eigvalsh_second_derivative_keeps_the_skew_diagonal_as_torch(n, dtype, scale):
    """breadth 1535779: eigvalsh's double backward reaches eigh's backward with a gradient for
    the eigenvectors and none for the eigenvalues; torch then keeps the diagonal of
    (V^H gV - gV^H V) / 2, NaN where the incoming gradient was infinite (gradkit zeroed it
    and gave -inf); with a gradient for the eigenvalues it copies that onto the diagonal."""
    def second(m):
        a = np.arange(1.0, n * n + 1).reshape(n, n) / 3
        a = a + 1j * a.T if dtype.startswith("complex") else a
        x = m.tensor(a, dtype=getattr(m, dtype), requires_grad=True)
        values = m.linalg.eigvalsh(x @ x.mH + m.eye(n, dtype=x.dtype))
        (g,) = m.autograd.grad((values * m.linspace(1, 2, n)).sum() * scale, x,
                               create_graph=True)
        return m.autograd.grad(g.real.sum(), x)[0]
    ours, theirs = _outcome(lambda: second(gradkit)), _outcome(lambda: second(torch))
    assert ours[0] == theirs[0]
    if ours[0] == "ok":
        np.testing.assert_allclose(np.array(ours[1]), np.array(theirs[1]), rtol=1e-10)
    else:
        assert ours == theirs


def test_det_of_an_infinite_matrix_with_a_zero_pivot_is_nan_and_refused_as_torch():
    """breadth seed 1582109: det([[inf, 0.92], [0.12, 0]]) was 0 in NumPy (its exact zero
    pivot) and is NaN in torch (the pivots multiplied out: inf * 0), so torch's create_graph
    backward solves with the matrix and refuses it as singular. gradkit now takes torch's LU
    (MKL's rounding replayed, of A^T for a contiguous A) for a near-singular or non-finite
    matrix: the same NaN and the same refusal."""
    def grad(m):
        x = m.tensor([[math.inf, 0.92], [0.12, 0.0]], dtype=m.float64, requires_grad=True)
        return m.autograd.grad(m.linalg.det(x), x, create_graph=True)[0]
    assert math.isnan(gradkit.linalg.det(gradkit.tensor([[math.inf, 0.92], [0.12, 0.0]])))
    assert _outcome(lambda: grad(torch))[1] == _outcome(lambda: grad(gradkit))[1]
    assert _outcome(lambda: grad(gradkit))[0].endswith("LinAlgError")
    problems, known = diff_program(generate(RandomDrawer(1582109), "breadth"))
    assert not problems or known == "a LAPACK routine of a non-finite matrix: OpenBLAS's " \
        "inf/NaN, not MKL's"


@pytest.mark.parametrize("rounding_mode", ["operator", None])
def test_div_backward_computes_the_divisors_gradient_first_as_torch(rounding_mode):
    """breadth 1574260: torch's DivBackward0 (and DivBackward2) computes other's gradient
    before self's, so the nodes of a create_graph backward are numbered in that order and the
    double backward adds its contributions in that order; a second derivative of rounding
    noise (1 - cos(x, x), amplified by lgamma's 1 / x) came out 0.4 % off."""
    def second(m):
        x = m.tensor([0.21074730523045204, 1.3], dtype=m.float64, requires_grad=True)
        a = x + 2.0
        quotient = a / (a + 1e-12) if rounding_mode == "operator" else m.div(
            a, a + 1e-12, rounding_mode=rounding_mode)
        (g,) = m.autograd.grad(quotient.sin().sum(), x, create_graph=True)
        return m.autograd.grad(g.sum(), x)[0]
    assert _outcome(lambda: second(gradkit)) == _outcome(lambda: second(torch))
    assert diff_program(generate(RandomDrawer(1574260), "breadth")) == ([], None)


def test_triplet_loss_of_householder_values_an_ulp_apart_is_rounding_amplified():
    """Known difference (docs/numerics.md, "accepts any step whose inputs are a few ulps apart";
    strided_breadth seed 1570035): householder_product of an 11 x 11 matrix of 2.695 grows
    to 2e15 and LAPACK's rounding (OpenBLAS against MKL) leaves its values ulps apart; a triplet
    loss of them hinges on differences of p-norm distances of 1e15, noise of the margin's
    size. torch's own triplet loss of gradkit's values is gradkit's."""
    def reflected(m):
        x = m.full((11, 11), 2.6950067780474662, dtype=m.float64)
        return m.linalg.householder_product(x, x[0] * 0.5)

    def loss(m, h):
        a = m.tensor([[-0.12756820034200422 + 0.9829723304575384j]])
        return m.nn.functional.triplet_margin_loss(a, h, a * 0.5 - h, p=3.0, swap=True).item()
    ours, theirs = reflected(gradkit).numpy(), reflected(torch).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-14)
    assert loss(torch, torch.from_numpy(np.array(ours))) == pytest.approx(
        loss(gradkit, gradkit.tensor(ours)), rel=1e-12)
    problems, known = diff_program(generate(RandomDrawer(1570035), "strided_breadth"))
    assert not problems or known == "a step torch's own gives gradkit's value from gradkit's " \
        "inputs, a few ulps from torch's"


@pytest.mark.parametrize("value", [1e-3, 2.5e-4, 0.7, 1.8763520477833389])
@pytest.mark.parametrize("functional", [False, True])
def test_cosine_embedding_loss_guards_norms_with_torchs_float32_epsilon(value, functional):
    """torch's cosine_embedding_loss adds EPSILON, a float constant (1e-12 rounded to float32,
    9.99999996e-13), to the squared norms; gradkit added 1e-12 in float64, which a norm near
    1e-6 shows in the loss and its gradient (breadth seed 1681399)."""
    def program(m):
        a = m.tensor([[value]], dtype=m.float64, requires_grad=True)
        call = m.nn.functional.cosine_embedding_loss if functional else \
            (lambda *args, reduction: m.cosine_embedding_loss(*args, {"sum": 2}[reduction]))
        loss = call(a, a * 1.0, m.tensor([1.0], dtype=m.float64), 0.1, reduction="sum")
        return [loss.item(), m.autograd.grad(loss, a)[0].item()]
    assert program(gradkit) == program(torch)


@pytest.mark.parametrize("self_dtype", ["bool", "int64", "uint8"])
@pytest.mark.parametrize("shapes", [((0, 1, 1), (0, 1, 1)), ((0, 2, 1), (0, 1, 3)),
                                    ((2, 2, 0), (2, 0, 3))])
def test_matmul_of_an_integer_batch_by_a_complex_batch_with_nothing_to_sum(self_dtype, shapes):
    """torch's bmm answers a product with nothing to sum before its dtype check, in mat2's
    dtype; gradkit left a real self of a complex mat2 to the dtype error, as a floating self
    requiring grad has its backward refused, but an integer or bool self never requires grad
    (signal seed 337116)."""
    def program(m):
        mat2 = m.zeros(shapes[1], dtype=m.complex64, requires_grad=True)
        out = m.matmul(m.zeros(shapes[0], dtype=getattr(m, self_dtype)), mat2)
        out.real.sum().backward()
        return str((str(out.dtype).split(".")[-1], tuple(out.shape), mat2.grad.tolist()))
    assert _outcome(lambda: program(gradkit)) == _outcome(lambda: program(torch))


@pytest.mark.parametrize("include_self", [False, True])
@pytest.mark.parametrize("reduce", ["amin", "amax", "mean", "prod", "sum"])
@pytest.mark.parametrize("function", ["index_reduce", "scatter_reduce"])
def test_reductions_by_a_count_keep_a_zero_second_derivative_zero(function, reduce,
                                                                   include_self):
    """torch's scatter_reduce/index_reduce backward of amax, amin and mean divides the
    gradient by a count, 0 where only NaN reached: the zero tensor of abs's second derivative
    stays a zero tensor through that division (0 / 0 of plain zeros is NaN); gradkit gave NaN
    (signal seed 338703). torch returns such a zero tensor to the caller itself."""
    if function == "index_reduce" and reduce == "sum":
        pytest.skip("index_reduce has no sum")

    def program(m):
        v = m.tensor(math.nan, dtype=m.float64, requires_grad=True)
        x = m.tensor([[0.5], [-0.2]], dtype=m.float64, requires_grad=True)
        src = v.expand(2, 4) * 1.0
        y = x.index_reduce(1, m.tensor([0, 0, 0, 0]), src, reduce, include_self=include_self) \
            if function == "index_reduce" else \
            x.scatter_reduce(1, m.zeros(2, 4, dtype=m.int64), src, reduce,
                             include_self=include_self)
        firsts = m.autograd.grad(y.abs().sum(), (v, x), create_graph=True)
        seconds = m.autograd.grad(firsts[0] + firsts[1].sum(), (v, x))
        return str([(m.zeros_like(t) if getattr(t, "_is_zerotensor", lambda: False)() else t)
                    .tolist() for t in firsts + seconds])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # index_reduce is in beta: torch's and gradkit's
        assert _outcome(lambda: program(gradkit)) == _outcome(lambda: program(torch))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_mish_second_derivative_is_torchs_formula_at_large_inputs(dtype):
    """torch's infinitely differentiable mish_backward writes softplus as exp(x).log1p(),
    whose derivative is inf / inf, NaN, once exp overflows; gradkit's used softplus, giving
    0 there (breadth seed 1719921). Elsewhere both agree."""
    def program(m):
        x = m.tensor([-50.0, -3.0, 0.0, 0.5, 4.0, 30.0, 100.0, 1e3, 1e10],
                     dtype=getattr(m, dtype), requires_grad=True)
        g, = m.autograd.grad(m.nn.functional.mish(x).sum(), x, create_graph=True)
        return g.tolist(), m.autograd.grad(g.sum(), x)[0].tolist()
    ours, theirs = program(gradkit), program(torch)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-5, equal_nan=True)


# the wide class (lane fuzzwide): public functions no other table drew
@pytest.mark.parametrize("shapes", [((2, 3), (3,)), ((3,), (2, 3)), ((2, 3), (2, 3)), ((1,),)])
def test_broadcast_tensors_returns_a_tensor_of_the_common_shape_itself(shapes):
    """torch's expand_outplace returns a tensor already of the broadcast shape itself (no
    ExpandBackward node); gradkit expanded it into a new view (wide seeds 46, 66, 97 of the
    class's first pool)."""
    def program(m):
        inputs = [m.ones(s, requires_grad=True) for s in shapes]
        outputs = m.broadcast_tensors(*inputs)
        return [o is i for o, i in zip(outputs, inputs)], [o.grad_fn is None for o in outputs]
    assert program(gradkit) == program(torch)


@pytest.mark.parametrize("shape, dim, sizes", [
    ((1, 0), 0, (-1, 1)), ((0, 2), 0, (-1, 1)), ((4, 0), 0, (2, -1)), ((2, 0), 1, (-1, 0)),
    ((2, 3), 1, (-2, 3)), ((2, 3), 1, (1, -3)), ((6,), 0, (-1, 4)), ((2, 3), 1, (-1, 3))])
def test_unflatten_infers_minus_one_from_the_dim_it_splits(shape, dim, sizes):
    """torch infers a -1 of unflatten's sizes from the split dim's size, so another dim of 0
    does not make it ambiguous (wide seed 940 of the first pool: (1, 0).unflatten(0, (-1, 1))
    is (1, 1, 0); gradkit reshaped the whole tensor and refused); a size below -1 is
    reshape's error."""
    def program(m):
        return tuple(m.zeros(shape).unflatten(dim, sizes).shape)
    ours, theirs = _outcome(lambda: program(gradkit)), _outcome(lambda: program(torch))
    if theirs[0] != "ok":  # torch's message goes on with its C++ traceback
        theirs = theirs[0], theirs[1].split("\nException raised")[0].strip()
    assert ours == theirs


@pytest.mark.parametrize("beta", [0, 1, 2, 0.5, True, False])
@pytest.mark.parametrize("name, shapes", [
    ("addmv", ((0,), (0, 2), (2,))), ("addmv", ((2,), (2, 0), (0,))),
    ("addmv", ((1,), (1, 2), (2,))), ("addmm", ((0, 1), (0, 2), (2, 1))),
    ("addmm", ((1, 1), (1, 0), (0, 1))), ("addmm", ((3,), (0, 2), (2, 1))),
    ("baddbmm", ((1, 1, 1), (1, 1, 0), (1, 0, 1))), ("baddbmm", ((0, 1, 1), (0, 1, 2), (0, 2, 1))),
    ("addbmm", ((1, 1), (1, 1, 0), (1, 0, 1))), ("addbmm", ((0, 1), (1, 0, 2), (1, 2, 1)))])
def test_bool_scaled_products_of_nothing_run_no_kernel(name, shapes, beta):
    """A bool addmv/addmm/baddbmm/addbmm of no element, or summing nothing, needs no kernel
    in torch: an empty result, or beta * input (addmv: input where beta != 0; the others'
    result.mul_(beta) refuses a number); gradkit refused every bool product (wide seed 735 of the
    first pool)."""
    def program(m):
        pattern = m.tensor([True, False, True])
        args = [pattern.repeat(4)[:int(np.prod(s))].reshape(s) for s in shapes]
        return getattr(m, name)(*args, beta=beta)
    assert _outcome(lambda: program(gradkit)) == _outcome(lambda: program(torch))


def test_nan_to_num_in_place_differentiates_complex_values():
    """torch's nan_to_num_ has no check of complex values requiring grad (the function has):
    its backward is grad * isfinite(x), as for real x (wide seed 630 of the first pool);
    gradkit refused."""
    def program(m, call):
        x = m.tensor([1 + 1j, complex("nan"), complex(1, math.inf)], requires_grad=True)
        y = x * 1
        call(m, y)
        return y, m.autograd.grad(y.abs().sum(), x)[0]
    for call in (lambda m, y: y.nan_to_num_(0.5), lambda m, y: m.nan_to_num_(y)):
        ours, theirs = program(gradkit, call), program(torch, call)
        for a, b in zip(ours, theirs):
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy())
    assert _outcome(lambda: gradkit.nan_to_num(gradkit.ones(1, dtype=gradkit.complex64,
                                                            requires_grad=True))) == \
        _outcome(lambda: torch.nan_to_num(torch.ones(1, dtype=torch.complex64,
                                                     requires_grad=True)))


@pytest.mark.parametrize("groups", [1, 2, 4])
def test_native_channel_shuffle_result_is_a_new_tensor(groups):
    """torch's native_channel_shuffle returns new memory: a write into it leaves the input
    alone; gradkit's swap of size-1 dims was contiguous, so it returned the input's memory
    (wide seed 2058: floor_ of its result floored the leaf)."""
    def program(m):
        x = m.arange(4.0).reshape(1, 4, 1)
        y = m.nn.functional.native_channel_shuffle(x, groups)
        y.mul_(10)
        return x.flatten().tolist(), y.flatten().tolist()
    assert program(gradkit) == program(torch)


@pytest.mark.parametrize("reduce", ["sum", "mean", "max", "min", "prod"])
@pytest.mark.parametrize("initial", [None, -0.0, 0.5, math.inf])
def test_segment_reduce_of_empty_segments_only_is_in_the_graph(reduce, initial):
    """torch's result of empty segments only (initial or the identity) is an output of the
    data's graph: it requires grad, its gradient is zeros; gradkit's was a constant (wide
    seeds 1422, 1642, 3323). A complex input is refused, as torch has no complex kernel."""
    def program(m, dtype, lengths):
        x = m.full((0 if lengths == [0, 0] else 2, 2), 0.75, dtype=dtype, requires_grad=True)
        y = m.segment_reduce(x, reduce, lengths=m.tensor(lengths), initial=initial)
        signs = [math.copysign(1, v) for v in y.detach().flatten().tolist()]
        return str((y.requires_grad, y.tolist(), signs,  # (a gradient's zero sign is free)
                    (m.autograd.grad(y.sum(), x)[0] + 0.0).tolist()))
    for lengths in ([0, 0], [0, 2, 0]):
        assert _outcome(lambda lengths=lengths: program(gradkit, gradkit.float32, lengths)) == \
            _outcome(lambda lengths=lengths: program(torch, torch.float32, lengths))
    assert _outcome(lambda: program(gradkit, gradkit.complex64, [0, 0])) == \
        _outcome(lambda: program(torch, torch.complex64, [0, 0]))


@pytest.mark.parametrize("steps", [0, 1, 3])
@pytest.mark.parametrize("pad", [-1, 0, 1, 2])
def test_conv_tbc_multiplies_no_padding_by_the_weights(steps, pad):
    """torch's conv_tbc adds, per kernel position, the product of the input rows that meet it
    only: padding is never multiplied by a NaN or inf weight, and rows nothing meets keep the
    bias (its -0.0 too); gradkit multiplied zero-padded input (wide seeds 5436, 9948)."""
    def program(m):
        x = m.tensor(np.linspace(-1, 1, steps * 4).reshape(steps, 2, 2), requires_grad=True)
        w = m.tensor([[[math.nan, 1.0], [2.0, 0.0]], [[0.5, -1.0], [1.0, 2.0]],
                      [[1.0, math.inf], [0.0, 1.0]]], dtype=m.float64, requires_grad=True)
        b = m.tensor([-0.0, 0.25], dtype=m.float64, requires_grad=True)
        y = m.conv_tbc(x, w, b, pad)
        grads = m.autograd.grad((y * m.arange(1.0, y.numel() + 1).reshape(y.shape)).sum(),
                                (x, w, b))
        signs = [math.copysign(1, v) for v in y.detach().flatten().tolist()]
        return str([y.tolist(), signs] + [g.tolist() for g in grads])
    assert _outcome(lambda: program(gradkit)) == _outcome(lambda: program(torch))


@pytest.mark.parametrize("seed, known_as", [
    (876, "segment_reduce's second derivative exists (torch's backward has none)"),
    (1102, "x ** bool tensor (or igamma of a bool) differentiates (torch's backward raises)"),
    (15230, "a LAPACK routine of a non-finite matrix: OpenBLAS's inf/NaN, not MKL's"),
    (19320, "a LAPACK routine of a non-finite matrix: OpenBLAS's inf/NaN, not MKL's"),
    (22409, "an integer tensor written with a value that requires grad does not require grad"),
    (28577, "the sign of a matrix product's or convolution's zero sum of products"),
    (34466, "a convolution's second derivative where its output is empty: torch's refuses"),
    (41733, "addmv_ into an expanded tensor: torch writes element over element, gradkit "
            "refuses")])
def test_wide_class_torch_backward_refusals_are_known(seed, known_as):
    """torch has no derivative of segment_reduce's backward (gradkit's is composed of narrow
    and the reductions), and its igamma/igammac backward computes ``self - 1`` of a bool
    ``self``, which it refuses; gradkit differentiates both (wide seeds 876, 1102). The
    ldl_factor_ex of a non-finite matrix has other pivots and info (sytf2, not MKL's sytrf).
    A bool tensor torch marks
    as requiring grad (greater_ of a value requiring grad) makes bincount's weights require
    grad, whose backward torch has not. conv_tbc's sum of zero products has the sign its
    BLAS accumulator starts from (addmv_'s too, written into a leaf). torch's double backward
    of a transposed convolution with an empty output convolves an empty input and raises.
    torch's addmv_ writes into an expanded tensor (no overlap check on its BLAS path)."""
    problems, known = diff_program(generate(RandomDrawer(seed), "wide"))
    assert problems and known == known_as


@pytest.mark.parametrize("reduce", ["sum", "max", "prod", "mean"])
def test_segment_reduce_saves_its_result_and_data(reduce):
    """torch's SegmentReduceBackward0 saves data and result: a write into the result before
    backward raises, naming it output 0 of SegmentReduce (wide seeds 92, 1037, 2406); gradkit's
    segments were narrow/reduce/stack nodes, which save no result."""
    def program(m, write):
        x = m.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], requires_grad=True)
        y = m.segment_reduce(x * 1, reduce, lengths=m.tensor([1, 2]), initial=0.5)
        if write:
            y.mul_(2)
        return m.autograd.grad(y.sum(), x)[0]
    for write in (False, True):
        assert _outcome(lambda write=write: program(gradkit, write)) == \
            _outcome(lambda write=write: program(torch, write))
    node = gradkit.segment_reduce(gradkit.ones(2, requires_grad=True), "max",
                                  lengths=gradkit.tensor([2])).grad_fn
    assert node.name() == "SegmentReduceBackward0" and node._saved_reduce == "max"


@pytest.mark.parametrize("seed", [18493, 1778, 14137])
def test_segment_reduce_kernel_gradients_at_nan_and_ties(seed):
    """torch's segment_reduce kernel gives a NaN element of a max/min segment the gradient,
    shared with the elements equal to the extreme, as gradkit's now (its amax gave NaN: wide
    seed 18493); a NaN (zero) element of a prod segment gets the product of the others, and
    only a positive gradient is divided among tied maxima: those stay Known (1778, 14137)."""
    problems, known = diff_program(generate(RandomDrawer(seed), "wide"))
    assert not problems or "segment_reduce" in known

    def program(m, weights, reduce="min"):
        x = m.tensor([[-0.05, 0.25], [-0.05, math.nan]], requires_grad=True)
        y = m.segment_reduce(x, reduce, lengths=m.tensor([2]))
        return m.autograd.grad((y * m.tensor(weights)).sum(), x)[0].tolist()
    ours, theirs = program(gradkit, [1.0, 1.0]), program(torch, [1.0, 1.0])
    assert ours == theirs == [[0.5, 0.0], [0.5, 1.0]]  # shared, and to the NaN
    assert (program(gradkit, [-1.0, 1.0])[0][0], program(torch, [-1.0, 1.0])[0][0]) == \
        (-0.5, -1.0)  # torch's whole negative gradient to each tie
    ours, theirs = program(gradkit, [1.0, 1.0], "prod"), program(torch, [1.0, 1.0], "prod")
    assert math.isnan(ours[1][1]) and theirs[1][1] == 0.25  # torch's product of the others


@pytest.mark.parametrize("d", [1, 2, 3])
@pytest.mark.parametrize("bias", [False, True])
def test_transposed_convolution_with_an_empty_output_has_zero_gradients(d, bias):
    """torch computes nothing for a float32 transposed convolution whose padding leaves an
    empty output (oneDNN's): the gradients are zeros; gradkit's cropped a computed region, and
    its backward multiplied the zeros of the crop by an infinite input (wide seed 43285)."""
    def program(m):
        t = m.tensor([[-math.inf, 0.6826568]], requires_grad=True)
        weight = t.reshape(-1).repeat(8)[:2 * 2 ** d].reshape((2, 1) + (2,) * d)
        b = m.tensor([0.5, 1.0], requires_grad=True) if bias else None
        y = getattr(m.nn.functional, f"conv_transpose{d}d")(t.reshape((1, 2) + (1,) * d),
                                                            weight, b, 1, 1, 0, 2)
        grads = m.autograd.grad((y * 2).sum(), [t] + ([b] if bias else []))
        return str([tuple(y.shape)] + [g.tolist() for g in grads])
    assert _outcome(lambda: program(gradkit)) == _outcome(lambda: program(torch))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shapes", [((4, 3, 2), (4, 2, 2)), ((2, 1, 3, 7), (3, 7, 5)),
                                    ((2, 5, 8), (2, 8, 9)), ((3, 1, 399), (3, 399, 1)),
                                    ((2, 8, 8), (2, 8, 8))])
def test_small_batched_products_add_in_torchs_order(dtype, shapes):
    """torch's bmm (and a matmul of batches, and their backward) runs its own loop for
    matrices under 400 multiply-adds: each entry adds its products to 0 in order, each
    rounded; NumPy's BLAS fuses them, so products of equal rows that cancel exactly in torch
    left rounding errors here (nn_new seed 334183). From 400 on both use a BLAS (2 x 8 x 8)."""
    rng = np.random.default_rng(0)
    pairs = [[rng.standard_normal(s).astype(dtype) for s in shapes] for _ in range(20)]

    def program(m):
        return m.stack([m.matmul(m.tensor(a), m.tensor(b)) for a, b in pairs])
    assert np.array_equal(program(gradkit).numpy(), program(torch).numpy())


def _softmax_backward_data(m, g, out):
    if m is torch:
        return torch._softmax_backward_data(g, out, -1, torch.float32)
    return softmax_backward_data(g, out, dim=-1)


def test_softmax_double_backward_is_torchs_formula():
    """softmax's backward is torch's _softmax_backward_data, an op whose own derivative is
    softmax_double_backward's ``g * gg - sum(out * g) * gg - g * sum(out * gg)`` (node
    SoftmaxBackwardDataBackward0, saving grad_output and output); the composite's derivative
    rounded otherwise, so rows torch keeps equal came apart (nn_new seed 334183: a float32
    second derivative through two attentions over equal keys 0.8 % from torch's). Rows of 2,
    3 and 4 entries, whose sums both libraries add alike (from 5 on torch's vectorized sum
    adds in another order), agree bit for bit (softmax's own values are an ulp apart at
    times, exp's rounding: the op's inputs are given)."""
    rng = np.random.default_rng(1)
    cases = []
    for n in (2, 3, 4):
        for _ in range(10):
            e = np.exp(rng.standard_normal((4, n)))
            cases.append([(e / e.sum(1, keepdims=True)).astype(np.float32)] +
                         [rng.standard_normal((4, n)).astype(np.float32) for _ in range(2)])

    def program(m):
        results = []
        for out, g, w in cases:
            out, g = m.tensor(out, requires_grad=True), m.tensor(g, requires_grad=True)
            g_input = _softmax_backward_data(m, g, out)
            node = g_input.grad_fn
            saved = type(node).__name__, node._saved_grad_output.tolist()
            results += [g_input, *m.autograd.grad(g_input, (g, out), m.tensor(w))]
        return (m.cat([r.reshape(-1) for r in results]), *saved)
    (ours, *ours_node), (theirs, *theirs_node) = program(gradkit), program(torch)
    assert np.array_equal(ours.detach().numpy(), theirs.detach().numpy())
    assert ours_node == theirs_node

    def attention_like(m):  # equal scores: softmax's values are exact in both
        x = m.zeros(3, 4, requires_grad=True)
        g, = m.autograd.grad(m.softmax(x * 2.0, -1), x, m.tensor(cases[-1][1][:3]),
                             create_graph=True)
        return m.autograd.grad(g, x, m.tensor(cases[-1][2][:3]))[0]
    assert np.array_equal(attention_like(gradkit).numpy(), attention_like(torch).numpy())
    problems, known = diff_program(generate(RandomDrawer(334183), "nn_new"))
    assert not problems or known is not None


@pytest.mark.parametrize("p", [1.0, 2.0, 3.0, math.inf])
@pytest.mark.parametrize("dtype", ["float32", "complex64", "float64"])
def test_renorm_backward_accumulates_in_double_as_torchs(p, dtype):
    """torch's renorm_backward computes the norm and the sum in the accumulate type (float64
    for float32 and complex64) and rounds the gradient after; gradkit's ran in float32, an
    ulp or more apart (a gradient of rounding noise, 4.9e-9 against torch's 9.2e-9; 0 of 40
    random float32 or complex64 gradients bitwise torch's before, 40 now). Complex inf-norms
    stay the documented wart (torch's NaN), tested below."""
    values = [[-2.2, 0.4, 1.3], [0.3, 1.7, -0.2], [1.8150166, 0.6115132, 0.0]]

    def program(m):
        x = m.tensor(values, dtype=getattr(m, dtype), requires_grad=True)
        if dtype == "complex64" and p == math.inf:
            x = m.tensor(values, dtype=m.float32).to(m.complex64).requires_grad_()
        r = x.renorm(p, 0, 1.0)
        return m.autograd.grad(r, x, m.ones_like(r) * 0.3)[0]
    assert np.array_equal(program(gradkit).numpy(), program(torch).numpy())


def test_svd_product_then_complex_inf_renorm_is_the_nan_renorm_known():
    """Known (docs/numerics.md, "finds no element equal to"; strided_breadth seed 1724859):
    torch's complex64 inf-norm renorm gradient is NaN, which its svd_backward before it then
    refuses as a phase dependence; gradkit's gradient is finite, torch's complex128 one
    rounded."""
    problems, known = diff_program(generate(RandomDrawer(1724859), "strided_breadth"))
    assert not problems or known.startswith("renorm of a complex tensor by its inf-norm")

    def program(m, dtype):
        x = m.tensor([[1.8150166 + 0.6115132j]], dtype=dtype, requires_grad=True)
        u, s, vh = m.linalg.svd(x, full_matrices=False)
        r = ((u * s.unsqueeze(-2).to(u.dtype)) @ vh).renorm(math.inf, -2, 1.0)
        return m.autograd.grad((r * (0.3 - 0.7j)).sum().real, x)[0]
    with pytest.raises(RuntimeError, match="specified up to multiplication by e"):
        program(torch, torch.complex64)
    np.testing.assert_allclose(program(gradkit, gradkit.complex64).numpy(),
                               program(torch, torch.complex128).numpy(), rtol=1e-5)


def test_log_of_a_self_cosine_loss_after_a_complex_qr_an_ulp_apart_is_rounding_amplified():
    """Known difference (docs/numerics.md, "from gradkit's value of that step"; breadth seed
    1681399): Q of a 1 x 1 complex QR is an ulp from torch's (MKL's Householder scalar
    multiplies by 1 / beta, OpenBLAS's divides), so Q R is too; the log of the
    cosine_embedding_loss of that vector with itself (3e-13 of noise) has a gradient of two
    terms of 0.5 that cancel, which the ulp moves by 5e-4. From the same value both
    libraries' gradients are equal, so torch's chain from gradkit's value is gradkit's."""
    def product(m):
        q, r = m.linalg.qr(m.tensor([[1.8763520477833389 + 0.13900980482912195j]],
                                    dtype=m.complex128))
        return (q @ r).real.item()
    assert product(gradkit) == 1.8763520477833389 != product(torch)

    def gradient(m, value):
        a = m.tensor([[value]], dtype=m.float64, requires_grad=True)
        loss = m.cosine_embedding_loss(a, a, m.tensor([1.0], dtype=m.float64), 0.1, 2)
        return m.autograd.grad(loss.log(), a)[0].item()
    for value in (product(gradkit), product(torch)):
        assert gradient(gradkit, value) == gradient(torch, value)
    assert gradient(torch, product(gradkit)) != gradient(torch, product(torch))
    problems, known = diff_program(generate(RandomDrawer(1681399), "breadth"))
    assert not problems or known.startswith("a step's own rounding a few ulps from torch's")


def test_gradients_through_abs_of_a_one_entry_complex_q_are_rounding_noise():
    """Known difference (docs/numerics.md, "of a 1 x 1 complex QR is 1 in exact arithmetic";
    strided_breadth seed 1764692): Q of a 1 x 1 complex QR is the entry's phase, so |Q| is 1
    and its derivative 0 in exact arithmetic; QR's backward cancels 1 x 1 complex products,
    which torch's MKL gemm rounds fused and NumPy's BLAS not, so both libraries' derivatives
    are noise of another size, and acosh of that 1 + ulp (derivative 5e7) makes second
    derivatives of 1e-8 that differ entirely."""
    z = -0.27630842821813917 + 0.22006062873317345j

    def derivatives(m):
        a = m.tensor([[z]], dtype=m.complex128, requires_grad=True)
        q = m.linalg.qr(a + 2 * m.eye(1, dtype=m.complex128))[0]
        g, = m.autograd.grad(m.acosh(q.abs()).sum(), a, create_graph=True)
        g2, = m.autograd.grad(g.real.sum() + g.imag.sum(), a)
        return q.detach().numpy(), g.detach().numpy(), g2.numpy()
    (q, g, g2), (q_torch, g_torch, g2_torch) = derivatives(gradkit), derivatives(torch)
    assert np.array_equal(q, q_torch) and np.array_equal(g, g_torch)
    assert abs(q[0, 0]) == 1.0000000000000002 and 0 < np.abs(g2).max() < 1e-7 and \
        0 < np.abs(g2_torch).max() < 1e-7 and not np.allclose(g2, g2_torch, rtol=1e-2, atol=0)
    x, y = np.array([[0.9 + 0.1j]]), np.array([[-0.7 - 0.9j]])  # the gemm's rounding
    assert not np.array_equal((torch.tensor(x) @ torch.tensor(y)).numpy(), x @ y)
    problems, known = diff_program(generate(RandomDrawer(1764692), "strided_breadth"))
    assert problems and known == "gradients through |Q| of a 1 x 1 complex QR (1 in exact " \
                                 "arithmetic): rounding noise in both"


def test_log_softmax_double_backward_is_torchs_formula():
    """log_softmax's backward is torch's _log_softmax_backward_data, an op whose derivatives
    are torch's ``gg - sum(gg * exp(out))`` and ``-sum(g) * exp(out) * gg`` (node
    LogSoftmaxBackwardDataBackward0); the composite's ``-(gg * sum(g)) * exp(out)`` rounded
    otherwise (float64 rows of 2 to 4 entries: 0 to 7 of 200 bitwise torch's, all now; in
    float32 exp's own rounding differs)."""
    rng = np.random.default_rng(3)
    cases = []
    for n in (2, 3, 4):
        for _ in range(10):
            x = rng.standard_normal((4, n))
            cases.append([x - np.log(np.exp(x).sum(1, keepdims=True))] +
                         [rng.standard_normal((4, n)) for _ in range(2)])

    def program(m):
        results = []
        for out, g, w in cases:
            out, g = m.tensor(out, requires_grad=True), m.tensor(g, requires_grad=True)
            g_input = torch._log_softmax_backward_data(g, out, -1, torch.float64) \
                if m is torch else log_softmax_backward_data(g, out, dim=-1)
            node = type(g_input.grad_fn).__name__
            results += m.autograd.grad(g_input, (g, out), m.tensor(w))
        return m.cat([r.reshape(-1) for r in results]), node
    (ours, ours_node), (theirs, theirs_node) = program(gradkit), program(torch)
    assert np.array_equal(ours.numpy(), theirs.numpy()) and ours_node == theirs_node
