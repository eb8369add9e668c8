"""Differences the fuzzer found in the twenty-first session, each program run in gradkit and in
torch 2.13 (skipped without torch)."""
import math

import numpy as np
import pytest
from cpu_kernels import assert_lapack_known
from fuzz.known import diff_program
from fuzz.programs import RandomDrawer, generate
from test_found_twentieth import _outcome  # with the signs of zeros

import gradkit

torch = pytest.importorskip("torch")
_NAN, _INF = float("nan"), float("inf")


@pytest.mark.parametrize("data", [[[0.5, 1.0], [0.2, 3.0]], [[_NAN, 1.0], [0.2, _NAN]],
                                  [[_INF, -_INF], [_INF, 2.0]], [[-0.0, 0.0], [0.0, -0.0]]])
@pytest.mark.parametrize("initial", [None, 0.5, 2.0, -0.0, 0.0, _NAN, -_INF])
@pytest.mark.parametrize("reduce", ["max", "min"])
@pytest.mark.parametrize("part", ["value", "grad"])
def test_segment_reduce_max_min_fold_from_initial_and_give_others_zero(data, initial, reduce,
                                                                       part):
    """torch's kernel folds a max/min segment from ``initial`` keeping the first of tied
    values (so a zero's sign is the first zero's, ``initial``'s when it is one: wide seed
    57910), and its backward writes the gradient into the elements equal to the result only,
    so the others get 0 where the gradient is NaN or inf (wide seeds 70781, 81881, 98866:
    gradkit multiplied it by a 0 mask, NaN)."""
    def call(m):
        x = m.tensor(data, dtype=m.float64, requires_grad=True)
        y = m.segment_reduce(x, reduce, lengths=m.tensor([2, 0]), initial=initial)
        if part == "value":
            return y
        return m.autograd.grad(y, x, m.tensor([[3.0, -_NAN], [_NAN, _INF]],
                                              dtype=m.float64))[0]
    assert _outcome(lambda: call(gradkit)) == _outcome(lambda: call(torch))


@pytest.mark.parametrize("seed, cls, known_as", [
    (93342, "wide", "a step that turns a rounding difference of its input into another number"),
    (57992, "wide", "a step that turns a rounding difference of its input into another number"),
    (354233, "strided", "the negation of a complex zero: +0.0 in torch's full vectors, -0.0 in "
                        "its tail"),
    (1892547, "strided_breadth", "in-place arithmetic on an overlapping view: torch updates a "
                                 "shared location once per element sharing it"),
    (1868663, "breadth", "gradients of eig (eigh, svd) where eigenvalues (singular values) "
                         "repeat up to rounding"),
    (1865622, "breadth", "as_strided past a reduced loss's element: torch's keeps its "
                         "elementwise buffer's storage")])
def test_documented_differences_are_known(seed, cls, known_as):
    """gammainc(a, x) at a = x = 0 is NaN, at 4e-18 (an inverse FFT's zero bin, exactly 0 in
    torch's) 1; the cosine similarity of a float32 1 - cos that is 0 here and 6e-8 in torch
    (gammainc's ulps apart before it) is 0 or 1. torch's vectorized complex negation is
    0 - z, +0.0 of a zero, but in its scalar tail. asinh_ of an as_strided view whose
    elements overlap: torch's kernel applies it once per element, twice to a location two
    elements share. The
    legacy svd's singular values of a tiled matrix (2.0 twice): their second derivative
    divides by the difference, NaN here, rounding noise's quotient in torch. torch's reduced
    smooth_l1_loss keeps its elementwise losses' storage: as_strided_scatter past its element
    is in bounds there (its backward raises), refused here."""
    problems, known = diff_program(generate(RandomDrawer(seed), cls))
    assert problems and known == known_as


@pytest.mark.parametrize("time, pad", [(1, 0), (0, 2), (2, 1), (3, -1)])
def test_conv_tbc_kernel_positions_meeting_no_input_are_skipped(time, pad):
    """torch's conv_tbc (and its composite backward) skips a kernel position that meets no
    input row: an empty output's gradients are constants, so the second derivative of a
    path through it is none, not 0 times an inf weight, NaN (wide seed 68097); an empty
    time padded is the bias, a fresh tensor an in-place add may write."""
    def call(m):
        x = m.tensor([[[2.0]]] * time, dtype=m.float64).reshape(time, 1, 1).requires_grad_()
        w = m.tensor([[[_INF]], [[3.0]]], dtype=m.float64, requires_grad=True)
        b = m.tensor([-0.0], dtype=m.float64, requires_grad=True)
        y = m.conv_tbc(x, w, b, pad)
        grads = m.autograd.grad((y * 2).sum(), (x, w, b), create_graph=True)
        total = sum(g.sum() for g in grads if g.requires_grad)
        seconds = m.autograd.grad(total, (x, w, b), allow_unused=True) \
            if isinstance(total, m.Tensor) else ()
        y.detach().add_(1)
        return m.cat([y.detach().flatten()] + [g.detach().flatten() for g in grads] +
                     [m.tensor([g.requires_grad for g in grads], dtype=m.float64)] +
                     [m.tensor([s is None for s in seconds], dtype=m.float64)] +
                     [s.flatten() for s in seconds if s is not None])
    assert _outcome(lambda: call(gradkit)) == _outcome(lambda: call(torch))


@pytest.mark.parametrize("name", ["tan_", "sqrt_", "reciprocal_", "sigmoid_"])
@pytest.mark.parametrize("create_graph", [False, True])
def test_in_place_op_on_a_0d_as_strided_view_reads_its_gradient(name, create_graph):
    """An in-place op on a 0-d ``as_strided`` view of a 0-d tensor: its backward replays the
    view on a NumPy scalar gradient, whose ``__array_interface__`` points into a temporary;
    the view read freed memory (wide seed 107830: a float32 second derivative 1.0011 for
    torch's -0.0331, first derivatives wrong too)."""
    def call(m):
        x = m.tensor(0.3, dtype=m.float64, requires_grad=True)
        base = x.clone()
        view = base.as_strided((), (), 0)
        getattr(view, name)()
        first, = m.autograd.grad(view, x, create_graph=create_graph)
        if not create_graph:
            return first
        return m.stack([first, m.autograd.grad(first, x)[0]])
    assert _outcome(lambda: call(gradkit)) == _outcome(lambda: call(torch))


def _kron_operand(m, shape: tuple, layout: str):
    """A tensor of ``shape`` whose dims lie in memory in the order ``layout`` names (a
    permutation, "step": every other element of its last dim, "expand": its first size-1 dim
    expanded from a one-element stride)."""
    values = np.arange(1.0, 1.0 + math.prod(shape)).reshape(shape)
    if layout == "step":
        return m.tensor(np.repeat(values, 2, axis=-1).copy())[..., ::2]
    if layout == "expand":
        return m.tensor(values).as_strided(shape, [1] * len(shape))
    order = [int(d) for d in layout]
    inner = m.tensor(np.ascontiguousarray(values.transpose(order)).ravel())
    return inner.reshape([shape[d] for d in order]).permute(*np.argsort(order).tolist())


_KRON_CASES = [((1, 3, 1), "012", (2, 3, 1), "210"), ((1, 3, 1), "021", (1, 3, 1), "012"),
               ((1, 3, 1), "012", (1, 3, 1), "021"), ((2, 3, 1), "102", (1, 3, 1), "012"),
               ((1, 3), "01", (1, 3, 1), "021"), ((1, 3, 1), "021", (2, 1, 3), "120"),
               ((2, 1, 3), "step", (1, 3, 1), "210"), ((3, 1), "10", (2, 3), "10"),
               ((1, 2, 1), "expand", (2, 3, 1), "201"), ((3,), "0", (1, 2, 1), "102")]


@pytest.mark.parametrize("shape_a, layout_a, shape_b, layout_b", _KRON_CASES)
def test_kron_orders_its_product_by_the_views_strides_of_size_one_dims(shape_a, layout_a,
                                                                      shape_b, layout_b):
    """torch's kron views its operands with size-1 dims inserted (c10's computeStride gives
    those dims strides of their own), TensorIterator's mul orders the product's dims by them,
    and the product is viewed as the result, or the view refused; gradkit took NumPy's
    reshape strides, raised where torch computed and laid results out otherwise (breadth seed
    1899161: kron of a (1,3,1) tensor and an irfftn result of strides (1, 2, 6))."""
    def call(m):
        out = m.kron(_kron_operand(m, shape_a, layout_a), _kron_operand(m, shape_b, layout_b))
        return m.cat([out.flatten(), m.tensor(out.stride(), dtype=out.dtype)])
    assert _outcome(lambda: call(gradkit)) == _outcome(lambda: call(torch))


@pytest.mark.parametrize("make", [lambda: np.ones((3, 1)).T, lambda: np.ones((1, 3, 1)).T,
                                  lambda: np.ones((2, 1, 6))[..., ::2],
                                  lambda: np.ones((2, 3)).T])
def test_tensor_of_a_numpy_array_keeps_its_dense_strides(make):
    """torch.tensor copies a dense NumPy array keeping its strides, a size-1 dim's too (a
    (1, 3) array transposed from (3, 1) has strides (1, 1)); gradkit's copy took NumPy's
    own ones for those dims (kron orders its product by them)."""
    def call(m):
        return m.tensor(m.tensor(make()).stride(), dtype=m.float64)
    assert _outcome(lambda: call(gradkit)) == _outcome(lambda: call(torch))


_WITH_A_0D_FLOAT64 = {
    "div": lambda m, x, t2: x / t2, "addcdiv": lambda m, x, t2: m.addcdiv(x, x, t2, value=0.75),
    "addcdiv_bool": lambda m, x, t2: m.addcdiv(x, m.tensor([True, False, True]), t2, value=0.75),
    "atan2": lambda m, x, t2: m.atan2(x, t2), "hypot": lambda m, x, t2: m.hypot(x, t2),
    "pow": lambda m, x, t2: m.pow(x, t2)}


@pytest.mark.parametrize("op", list(_WITH_A_0D_FLOAT64))
@pytest.mark.parametrize("create_graph", [False, True])
def test_float32_gradient_through_a_0d_float64_operand_stays_float32(op, create_graph):
    """torch's backward computes in the dtypes its type promotion gives: a float32 gradient
    over a 0-d float64 divisor stays float32 (as do value * a bool tensor1 of addcdiv, and
    atan2, hypot and pow's formulas with a 0-d float64 operand); a
    plain backward here divided NumPy arrays, which promote a 0-d float64 array, so gradients
    came out float64-exact (strided_breadth seed 1846700: a complex addcdiv's second
    derivative, 0.11027422 for torch's 0.11027421)."""
    c = np.array([0.1, 0.7, 0.3333], dtype=np.float32)

    def call(m):
        t2 = m.tensor(1.2345678901234, dtype=m.float64, requires_grad=True)
        x = m.tensor(c, requires_grad=True)
        out = _WITH_A_0D_FLOAT64[op](m, x, t2)
        grads = m.autograd.grad((out * m.tensor([0.37, -1.3, 2.9])).sum(), (x, t2),
                                create_graph=create_graph)
        return m.cat([g.detach().double().reshape(-1) for g in grads])
    assert _outcome(lambda: call(gradkit)) == _outcome(lambda: call(torch))


def test_second_derivative_of_a_singular_real_det_divides_by_a_lapack_zero():
    """det's second derivative at a singular matrix goes through the SVD's backward, which
    divides by the singular values' differences: of a float32 constant 4 x 4 matrix NumPy's
    LAPACK leaves two exact zeros (NaN here) where MKL leaves 1e-21 and 4e-36 (finite in
    torch); the true value is 0 (det's second derivative vanishes at rank n - 3), in float64
    both come within 1e-20 of it: a documented LAPACK zero (strided_breadth seed 1935499)."""
    def second(m, dtype):
        x = m.full((4, 4), 11.02303695678711, dtype=dtype, requires_grad=True)
        g, = m.autograd.grad(m.linalg.det(x) * 2.0, x, create_graph=True)
        w = m.tensor(np.arange(16.0).reshape(4, 4) / 7, dtype=dtype)
        return m.autograd.grad((g * w).sum(), x)[0].detach().numpy()
    for m in (gradkit, torch):  # (|det''| ~ 1e4 at a generic matrix of these entries)
        assert np.abs(second(m, m.float64)).max() < 1e-20
    assert np.isnan(second(gradkit, gradkit.float32)).all()
    problems, known = diff_program(generate(RandomDrawer(1935499), "strided_breadth"))
    assert_lapack_known(problems, known, "a derivative infinite at 0 of an entry a LAPACK "
                                         "routine left 0 on one side only")


def test_fractional_power_of_lapack_noise_of_another_sign_is_known():
    """U S V^H of [[0, 0], [a, a]] has an entry 0 in exact arithmetic that both LAPACKs leave
    as float32 rounding noise, of opposite signs (5e-8 here, -1.7e-7 in torch):
    float_power(x, -2.5) of it is 1.7e18 here and NaN in torch, and so is the gradient
    (breadth seed 1951073): a documented difference, neither side computes the 0."""
    def entry(m):
        a = m.tensor([[0.0, 0.0], [0.93005449, 0.93005449]])
        u, s, vh = m.linalg.svd(a)
        return float((u * s.unsqueeze(-2) @ vh)[0, 1])
    for m in (gradkit, torch):
        assert abs(entry(m)) < 1e-6
    problems, known = diff_program(generate(RandomDrawer(1951073), "breadth"))
    assert_lapack_known(problems, known, "a step undefined below 0 of LAPACK rounding noise")


def test_second_derivative_of_eigvalsh_at_a_repeated_eigenvalue_is_known():
    """eigvalsh's second derivative goes through the eigenvectors, whose derivative divides by
    the eigenvalues' differences: at 3 ones(3, 3) + I (eigenvalue 1 twice) it depends on the
    basis LAPACK picks of that eigenspace and on its rounding, so the two libraries' are
    finite and apart (strided_breadth seed 1958176: 604.333 here, 604.347 in torch): the
    documented repeated-spectrum difference, now for eigvalsh under create_graph too."""
    def second(m):
        a = m.tensor(3 * np.ones((3, 3)) + np.eye(3), requires_grad=True)
        w = m.tensor([0.3, -1.1, 0.7], dtype=m.float64)
        g, = m.autograd.grad((m.linalg.eigvalsh(a) * w).sum(), a, create_graph=True)
        return m.autograd.grad((g * m.tensor(np.arange(9.0).reshape(3, 3) / 5)).sum(), a)[0]
    for m in (gradkit, torch):
        assert np.isfinite(second(m).numpy()).all()
    problems, known = diff_program(generate(RandomDrawer(1958176), "strided_breadth"))
    assert_lapack_known(problems, known, "gradients of eig (eigh, svd) where eigenvalues")
