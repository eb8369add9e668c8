"""More programs the differential fuzzer (tests/fuzz) found gradkit and torch to disagree on,
each run in both (the seed that found it in the test's comment); the first ones are in
test_torch_fuzz_found.py."""
import dataclasses
import math
import types
import warnings

import numpy as np
import pytest
from fuzz.known import (
    _agree_but_for_rounding, _cov_of_noise_over_zero, _in_place_division_by_zero_of_noise,
    _max_distance_among_rounded_ties, _phase_check_of_huge_gradients,
    _zero_of_noise_of_another_sign, _fft_at_non_finite,
    diff_program, known_difference)
from fuzz.programs import Leaf, Program, RandomDrawer, Step, generate
from fuzz.runner import Result, compare, leaf_values, run
from fuzz.shrink import shrink
from cpu_kernels import numpy_log_of_a_negative_sets_the_sign_bit, torch_float32_gelu_is_nan_at_inf
from test_torch_numerics import assert_same_as_torch, with_grads

import gradkit
from gradkit.backend import get_array_module
from gradkit.ops.fused import fused_multiply_add
from gradkit.ops.promotion import NumpyOperand

torch = pytest.importorskip("torch")


def _both_refuse_the_write(program, *args, match="modified by an inplace operation"):
    """torch and gradkit both refuse backward through a saved tensor written in place."""
    for m in (torch, gradkit):
        with pytest.raises(RuntimeError, match=match):
            program(m, *args)


@pytest.mark.parametrize("unset", ["detach_", "requires_grad_false"])
def test_saved_leaf_detached_in_place_still_reaches_its_accumulator(unset):
    """A leaf saved for backward, then ``detach_()``-ed (or ``requires_grad_(False)``):
    torch's SavedVariable gives its data on the leaf's accumulator, so the create_graph
    gradient requires grad and double backward runs (seed 673161)."""
    def program(m):
        a = m.tensor([1.0, -2.0, 3.0], dtype=m.float64, requires_grad=True)
        w = m.tensor([[1.0, 2.0, 0.5], [0.0, -1.0, 4.0], [2.0, 1.0, 1.0]], dtype=m.float64,
                     requires_grad=True)
        out = m.matmul(a, w)
        a.detach_() if unset == "detach_" else a.requires_grad_(False)
        (gw,) = m.autograd.grad(out.sum(), [w], create_graph=True)
        assert gw.requires_grad
        (ggw,) = m.autograd.grad((gw * gw).sum(), [w], allow_unused=True,
                                 materialize_grads=True)
        return gw, ggw, m.tensor(a.grad is None)
    assert_same_as_torch(program)


def test_saved_leaf_whose_accumulator_died_raises_as_torch():
    """The saved leaf's accumulator is gone once nothing in the graph reaches it (a leaf
    matmul saves as torch saves a view of it: a 1-D operand times a matrix)."""
    a = gradkit.tensor([1.0, 2.0], requires_grad=True)
    node = (a @ gradkit.ones(2, 2, requires_grad=True)).grad_fn
    a.detach_()
    op, saved = node.op, node.saved
    del node
    with pytest.raises(RuntimeError, match="No grad accumulator for a saved leaf"):
        saved[0].unpack(types.SimpleNamespace(op=op, saved=saved), True)


@pytest.mark.parametrize("product, detached", [
    (lambda m, a, w: a * w[0], "a"), (lambda m, a, w: w @ a, "a"),
    (lambda m, a, w: m.dot(a, w[0]), "a"), (lambda m, a, w: m.mm(w, a.unsqueeze(1)), "w"),
    (lambda m, a, w: a @ w, "a"), (lambda m, a, w: m.inner(a, w[0]), "a"),
    (lambda m, a, w: m.nn.functional.linear(a, w), "w"),
    (lambda m, a, w: m.nn.functional.linear(a, w), "a"),
    (lambda m, a, w: w.expand(2, 3, 3) @ a, "w")],
    ids=["mul", "mat_vec", "dot", "mm", "vec_mat", "inner", "linear_weight", "linear_1d_input",
         "batched"])
def test_saved_leaf_detached_in_place_has_a_graph_only_where_torch_saved_a_view(product,
                                                                                 detached):
    """torch's SavedVariable gives a leaf it saved itself back as the leaf, which no longer
    requires grad after detach_(): the other input's create_graph gradient has no graph
    (mul, dot, mv, mm). Where torch saved a view of the leaf (matmul's unsqueezed vector,
    inner's permuted operands, linear's transposed weight, batched operands), the view's
    history still reaches the leaf's accumulator (seeds 673161; 2031201: gradkit reattached
    every leaf)."""
    def program(m):
        a = m.tensor([1.0, -2.0, 3.0], dtype=m.float64, requires_grad=True)
        w = m.tensor([[1.0, 2.0, 0.5], [0.0, -1.0, 4.0], [2.0, 1.0, 1.0]], dtype=m.float64,
                     requires_grad=True)
        out = product(m, a, w)
        (a if detached == "a" else w).detach_()
        (g,) = m.autograd.grad(out.sum(), [w if detached == "a" else a], create_graph=True,
                               allow_unused=True)
        return g, m.tensor(g is not None and g.requires_grad)
    assert_same_as_torch(program)


@pytest.mark.parametrize("cast", [
    lambda m, x, z: x.__setitem__(slice(None, None, 2), z),
    lambda m, x, z: x[:2].copy_(z),
    lambda m, x, z: z.to(m.float32),
    lambda m, x, z: z.float(),
], ids=["setitem", "copy_", "to", "float"])
def test_complex_to_real_casts_warn_once_as_torch(cast, monkeypatch):
    """torch warns (once per process) that a complex to real cast drops the imaginary part;
    gradkit says so too, at the user's line (found beside seed 667186)."""
    from gradkit import _user_frames
    monkeypatch.setattr(_user_frames, "_warned_once", set())
    x, z = gradkit.zeros(4), gradkit.tensor([1 + 2j, 3j])
    with pytest.warns(UserWarning, match="^Casting complex values to real discards the "
                      "imaginary part$") as caught:
        cast(gradkit, x, z)
    assert caught[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cast(gradkit, x, z)  # once per process, as torch's TORCH_WARN_ONCE


def test_complex_to_real_setitem_with_an_advanced_key_raises_without_warning(monkeypatch):
    from gradkit import _user_frames
    monkeypatch.setattr(_user_frames, "_warned_once", set())
    for m in (torch, gradkit):
        x = m.zeros(2)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with pytest.raises(RuntimeError, match="Index put requires the source and "
                               "destination dtypes match"):
                x[m.tensor([0])] = m.tensor([1 + 1j])


def test_complex_to_bool_is_non_zero_without_warning():
    def program(m):
        z = m.tensor([1j, 0j, 2.5 + 0j, complex("nan")])
        into = m.zeros(4, dtype=m.bool)
        into.copy_(z)
        return z.bool(), into
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_same_as_torch(program)


def test_complex_self_division_has_torchs_tiny_imaginary_part():
    """torch's complex division (Smith's, fused) gives x / x a tiny imaginary part, and so
    gradkit's: log then pow give torch's finite number (seeds 629909, 2856107)."""
    def chain(m):
        x = m.tensor(2.5 + 0.1j, dtype=m.complex128)
        one = m.div(x, x)
        return one, m.pow(m.log(one), m.tensor(0.1, dtype=m.complex128))
    assert 0 < abs(chain(torch)[0].imag.item()) < 1e-12
    assert_same_as_torch(chain, rtol=1e-12)


def _assert_gradient_at_a_repeated_spectrum(loss, dtype) -> None:
    """loss's gradient (with its graph) at diag(2, 2, 1), whose spectrum repeats, as torch's."""
    def program(m):
        x = m.tensor([[2.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 1.0]],
                     dtype=getattr(m, dtype), requires_grad=True)
        (g,) = m.autograd.grad(loss(m, x), x, create_graph=True)
        return (g,)
    assert_same_as_torch(program, atol=1e-12)


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("loss", [
    lambda m, x: m.linalg.svdvals(x).sum(),
    lambda m, x: m.linalg.matrix_norm(x, "nuc"),
    lambda m, x: m.linalg.cond(x, "nuc"),
], ids=["svdvals", "nuc", "cond_nuc"])
def test_singular_values_gradient_is_finite_at_repeated_values(loss, dtype):
    """Only the singular values reach the loss: torch's svd_backward takes U diag(gS) Vh,
    with no division by s_j² - s_i² (NaN at repeated values before; breadth seed 814)."""
    _assert_gradient_at_a_repeated_spectrum(loss, dtype)


def test_writing_a_slice_into_the_transpose_reads_the_old_values():
    """Documented (docs/numerics.md): torch copies ``x[:, :1]`` (broadcast) into ``x.t()``
    element by element, reading elements it already wrote; gradkit copies the old values,
    as a clone of the slice would in both (seed 751622)."""
    def write(m, value_of):
        x = m.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]])
        x.t()[:] = value_of(x[:, :1])
        return x.tolist()
    expected = write(torch, lambda x: x.clone())
    assert write(gradkit, lambda x: x) == expected == write(gradkit, lambda x: x.clone())
    assert write(torch, lambda x: x) != expected


_EDGES = [float("-inf"), -0.0, 0.0, 3.0, -2.0, float("inf"), float("nan")]


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("power", [
    lambda m, x, d: x ** m.tensor(0.5, dtype=d),
    lambda m, x, d: x ** m.tensor([0.5], dtype=d),
    lambda m, x, d: x.reshape(-1, 1) ** m.tensor([0.5, 2.0], dtype=d),
    lambda m, x, d: m.pow(float("-inf"), x * 0 + 0.5),
    lambda m, x, d: x ** 0.5,
    lambda m, x, d: x ** -0.5,
], ids=["0d_exponent", "broadcast_exponent", "row_exponent", "number_base", "number_half",
        "number_minus_half"])
def test_powers_of_one_half_at_minus_inf_and_minus_zero(power, dtype):
    """A tensor exponent of 0.5 is C's pow in torch (inf at -inf, +0 at -0.0), where NumPy took
    sqrt for a broadcast exponent (seed 784459); float16's number powers are pow too."""
    def program(m):
        d = getattr(m, dtype)
        return (power(m, m.tensor(_EDGES, dtype=d), d),)
    assert_same_as_torch(program)


@pytest.mark.parametrize("read_grad_fn_first", [False, True])
def test_write_into_a_view_made_stale_by_a_write_into_its_base(read_grad_fn_first):
    """Documented (docs/autograd.md): torch's in-place check reads a stale view's grad_fn
    field and refuses the write as for a leaf, unless grad_fn was read first; gradkit writes
    (seeds 819026, 852562)."""
    def write(m):
        a = m.tensor(0.5, requires_grad=True)
        base = m.zeros(3)
        view = base[1:]
        base[0] = a * 2  # the base gains a history through another write
        if read_grad_fn_first:
            assert view.grad_fn is not None
        view.mul_(3)
        (g,) = m.autograd.grad(base.sum(), a)
        return g.item()
    assert write(gradkit) == 2.0
    if read_grad_fn_first:
        assert write(torch) == 2.0
    else:
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            write(torch)


_NO_DEGREES_OF_FREEDOM = [
    ("var", lambda m: m.tensor([1.0]).var()),
    ("std", lambda m: m.tensor([1.0]).std()),
    ("var_mean", lambda m: m.var_mean(m.tensor([1.0]))),
    ("std_mean", lambda m: m.std_mean(m.tensor([[1.0, 2.0]]), 0)),
    ("var", lambda m: m.tensor([1.0, 2.0]).var(correction=2)),
    ("var", lambda m: m.zeros(0, 2).var(1)),
    (None, lambda m: m.tensor([1.0, 2.0]).var()),
    (None, lambda m: m.tensor([1.0]).var(correction=0)),
]


@pytest.mark.parametrize("name,call", _NO_DEGREES_OF_FREEDOM)
def test_variance_without_degrees_of_freedom_warns_torchs_text(name, call):
    """torch's UserWarning (not NumPy's RuntimeWarnings) when n <= correction, at the
    user's line; the values are torch's NaN or inf."""
    texts = {}
    for m in (torch, gradkit):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            call(m)
        texts[m] = [str(w.message).split(" (Triggered internally")[0] for w in caught]
        if m is gradkit:
            assert all(w.category is UserWarning and w.filename == __file__ for w in caught)
    assert texts[gradkit] == texts[torch]
    assert bool(texts[torch]) == (name is not None)
    if name:
        assert texts[gradkit][0].startswith(f"{name}(): degrees of freedom is <= 0.")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same_as_torch(lambda m: tuple(m.atleast_1d(t) for t in (
            call(m) if isinstance(call(m), tuple) else (call(m),))))


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_sgn_second_derivative_at_zero_is_nan_as_torch(dtype):
    """torch's sgn_backward divides by |z| before masking the zero: its second derivative at
    z = 0 is NaN (breadth seed 14453); the first derivative there is 0 in both."""
    def program(m):
        z = m.tensor([0j, 1 + 2j, -3j], dtype=getattr(m, dtype), requires_grad=True)
        (g,) = m.autograd.grad((m.sgn(z) * (1 + 2j)).real.sum(), z, create_graph=True)
        (gg,) = m.autograd.grad((g * g.conj()).real.sum() + g.real.sum(), z)
        return g, gg
    assert_same_as_torch(program, rtol=1e-5)


@pytest.mark.parametrize("dtype", ["float64"])
def test_svd_of_infinite_entries_is_nan_as_torch(dtype):
    """NumPy's gesdd may not converge on an infinite entry (LinAlgError); torch's MKL gives NaN
    singular values (breadth seed 14785; on some matrices, float32 and complex ones here, MKL
    gives up too, with its error code: docs/numerics.md's LAPACK-at-non-finite difference)."""
    def program(m):
        x = m.diagflat(m.tensor([0.7, -float("inf"), -float("inf")], dtype=getattr(m, dtype)), 2)
        return (m.linalg.svdvals(x),)  # (torch's svd with vectors raises "error code: 2" here)
    assert_same_as_torch(program)


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("loss", [
    lambda m, x: (m.linalg.eigvalsh(x) * m.tensor([1.0, 2.0, 3.0], dtype=m.float64)).sum(),
    lambda m, x: m.linalg.eigvalsh(x, UPLO="U").pow(2).sum(),
], ids=["weighted", "squares_upper"])
def test_eigenvalues_gradient_is_finite_at_repeated_values(loss, dtype):
    """Only the eigenvalues reach the loss: torch's eigh backward takes V diag(gL) V^H, with no
    division by L_j - L_i (NaN at repeated eigenvalues before; breadth seeds 15726, 17842)."""
    _assert_gradient_at_a_repeated_spectrum(loss, dtype)


# -- lane fuzzb: the breadth class's draws of this session's new ops ---------------------------

def test_ldl_solve_of_empty_matrices_as_torch():
    """An empty matrix (and an empty batch of them) solves to an empty result."""
    for shape, rhs in (((0, 0), (0, 1)), ((2, 0, 0), (0, 3)), ((0, 2, 2), (2, 3))):
        assert_same_as_torch(lambda m, shape=shape, rhs=rhs: m.linalg.ldl_solve(
            *m.linalg.ldl_factor(m.ones(shape, dtype=m.float64), hermitian=True),
            m.ones(rhs, dtype=m.float64), hermitian=True))


_ONE_VALUE_NORMS = [
    lambda m, x: m.instance_norm(x, None, None, None, None, True, 0.1, 1e-5, False),
    lambda m, x: m.batch_norm(x.reshape(1, 1), None, None, None, None, True, 0.1, 1e-5, False),
    lambda m, x: m.native_batch_norm(x.reshape(1, 1), None, None, None, None, True, 0.1,
                                     1e-5)[1],
    lambda m, x: m.group_norm(x, 1),
    lambda m, x: m.native_group_norm(x, None, None, 1, 1, 1, 1, 1e-5)[2],
]


@pytest.mark.parametrize("norm", _ONE_VALUE_NORMS)
def test_aten_norms_of_one_value_per_channel_as_torch(norm):
    """ATen's spellings normalize a single value per channel (or group) to 0; only F's have the
    Python check that refuses it. The statistics are torch's (rstd 1/sqrt(eps))."""
    assert_same_as_torch(lambda m: norm(m, m.tensor([[[0.5]]], dtype=m.float64)))


@pytest.mark.parametrize("norm,words", [
    (lambda nnf, x: nnf.instance_norm(x), "more than 1 spatial element when training"),
    (lambda nnf, x: nnf.batch_norm(x.reshape(1, 1), None, None, training=True),
     "more than 1 value per channel when training"),
    (lambda nnf, x: nnf.group_norm(x, 1), "more than 1 value per channel when training")])
def test_functional_norms_of_one_value_per_channel_still_raise(norm, words):
    for m in (torch, gradkit):
        with pytest.raises(ValueError, match=f"Expected {words}, got input size"):
            norm(m.nn.functional, m.tensor([[[0.5]]], dtype=m.float64))


def test_aten_norm_of_one_value_updates_running_var_to_nan_as_torch():
    """The unbiased running variance of one value is ATen's 0 / 0."""
    def program(m):
        mean, var = m.zeros(1, dtype=m.float64), m.ones(1, dtype=m.float64)
        m.batch_norm(m.ones(1, 1, dtype=m.float64), None, None, mean, var, True, 0.1, 1e-5,
                     False)
        m.instance_norm(m.ones(2, 1, 1, dtype=m.float64), None, None, mean, var, True, 0.1,
                        1e-5, False)
        return mean, var
    assert_same_as_torch(program)


@pytest.mark.parametrize("pad,value,dtype", [
    ((), 0, "float64"), ((), math.inf, "int64"), ((0, 0), math.inf, "int64"),
    ((-1, 0), math.inf, "int64"), ((1, 0), math.inf, "int64"), ((1, 0), 1e30, "uint8"),
    ((1, 0), -1, "uint8"), ((1, 0), 1e300, "float32"), ((-2, -1), 0, "float64"),
    ((-3, 1), 0, "float64"), ((-1, -1), 0, "float64")])
def test_constant_pad_nd_narrows_then_fills_as_torch(pad, value, dtype):
    """torch narrows by the negative pads first (a negative length is refused) and checks the
    value only when it fills new elements; a 0-d tensor pads to itself."""
    def program(m):
        x = m.tensor(2.0 if not pad else [1.0, 2.0], dtype=m.float64, requires_grad=True)
        out = m.constant_pad_nd(x.to(getattr(m, dtype)), pad, value)
        if not out.is_floating_point():
            return out
        return out, m.autograd.grad(out.sum(), x)[0]
    assert_same_as_torch(program)


def test_native_dropout_refusals_and_empty_input_as_torch():
    """Complex input requiring grad is refused (as torch's autograd does), an integer or bool
    one while training (the float scale cannot be written into it); an empty input is
    returned itself, with a mask of its dtype."""
    for call in (lambda m: m.native_dropout(m.ones(1, dtype=m.complex64, requires_grad=True),
                                            0.5, False),
                 lambda m: m.native_dropout(m.ones(1, 1, dtype=m.int64), 1.0, True),
                 lambda m: m.native_dropout(m.ones(2, dtype=m.bool), 0.0, None)):
        assert_same_as_torch(call)
    for m in (torch, gradkit):
        x = m.zeros(2, 0, requires_grad=True)
        out, mask = m.native_dropout(x, 0.5, True)
        assert out is x and mask.dtype == m.float32 and mask.shape == x.shape


@pytest.mark.parametrize("shape,dtype", [((2, 3), "int64"), ((1, 1), "bool"), ((1, 1), "float16"),
                                         ((2, 0, 0), "int64"), ((0, 0), "float16")])
def test_legacy_cholesky_checks_shape_then_kernel_dtype_as_torch(shape, dtype):
    """torch.cholesky refuses a dtype in its kernel (NotImplementedError), after the shape
    checks; an empty batch runs no kernel and is returned."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same_as_torch(lambda m: m.cholesky(m.ones(shape, dtype=getattr(m, dtype))))


@pytest.mark.parametrize("shape,dim", [((0, 3), -1), ((2, 3), -1), ((0, 3), 5)])
def test_cumsum_in_place_of_bool_as_torch(shape, dim):
    """An empty bool tensor runs no kernel: only the dim is checked."""
    assert_same_as_torch(lambda m: m.zeros(shape, dtype=m.bool).cumsum_(dim))


@pytest.mark.parametrize("call", [
    lambda m, x: m.select_copy(x, 0, 1), lambda m, x: m.slice_copy(x, 0, -1, None, 2),
    lambda m, x: m.diagonal_copy(x)])
@pytest.mark.parametrize("requires_grad", [False, True])
def test_copies_record_complex_outputs_as_torch(call, requires_grad):
    """select_copy and slice_copy refuse to record a complex output; diagonal_copy records."""
    assert_same_as_torch(lambda m: call(m, m.ones(2, 2, dtype=m.complex128,
                                                  requires_grad=requires_grad)))


@pytest.mark.parametrize("call", [lambda m: m.unsafe_chunk(m.tensor(1.0), 1, 0),
                                  lambda m: m.chunk(m.tensor(1.0), 0),
                                  lambda m: m.tensor(1.0).chunk(2)])
def test_chunk_of_a_0d_tensor_raises_as_torch(call):
    assert_same_as_torch(call)


@pytest.mark.parametrize("call", [
    lambda m: m.split(m.tensor(1.0), 1, 5), lambda m: m.split_copy(m.tensor(1.0), 1, 0),
    lambda m: m.tensor(1.0).split([1]), lambda m: m.unsafe_split(m.tensor(1.0), 1, 0)])
def test_split_of_a_0d_tensor_raises_as_torch(call):
    """Before the dim check (breadth seed 21146)."""
    assert_same_as_torch(call)


@pytest.mark.parametrize("groups", [1, 2])
def test_channel_shuffle_is_never_a_view_as_torch(groups):
    """A write into the input leaves the shuffled tensor as it was, also where the shuffle
    moves nothing (breadth seed 21446)."""
    def program(m):
        x = m.arange(4.0).reshape(1, 2, 2)
        out = m.nn.functional.channel_shuffle(x, groups)
        x.add_(10)
        return out, m.tensor(out._is_view())
    assert_same_as_torch(program)


@pytest.mark.parametrize("call", [
    lambda m, t: m.convolution(t(1, 1, 1), t(1, 1, 2), None, (2,), (0,), (1,), True, (0,), 1),
    lambda m, t: m.nn.functional.conv2d(t(1, 1, 1, 1), t(1, 1, 1, 1)),
    lambda m, t: m.nn.functional.conv3d(t(1, 1, 1, 1, 1), t(1, 1, 1, 1, 1)),
    lambda m, t: m.nn.functional.conv_transpose3d(t(1, 1, 1, 1, 1), t(1, 1, 1, 1, 1)),
    lambda m, t: m.nn.functional.conv1d(t(1, 1, 1), t(1, 1, 1), dilation=2),
    lambda m, t: m.nn.functional.conv1d(t(1, 1, 1), t(1, 1, 2))])
def test_convolution_of_bool_refused_by_torchs_kernels(call):
    """torch's CPU convolution kernels have no bool instance (breadth seed 21531); the shape
    checks come first."""
    assert_same_as_torch(lambda m: call(m, lambda *shape: m.ones(shape, dtype=m.bool)))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_aten_batch_norm_of_one_value_leaves_torchs_rounding_noise(dtype):
    """torch's CPU kernel computes ``x * invstd + (-mean * invstd)`` (fused), which leaves
    rounding noise, not 0, at a single value per channel (breadth seed 25540); gradkit's
    kernel arithmetic gives the same bits (docs/numerics.md)."""
    def norm(m):
        x = m.tensor([[0.3]], dtype=getattr(m, dtype))
        return m.batch_norm(x, None, None, None, None, True, 0.1, 1e-5, False).item()
    assert norm(gradkit) == norm(torch) != 0.0


def test_native_dropout_of_an_empty_leaf_leaves_it_a_leaf_where_torch_moves_it():
    """Known difference (docs/api.md): both return the empty input itself; torch also gives
    the leaf the dropout's node, and its backward then raises."""
    x = torch.zeros(2, 0, requires_grad=True)
    out, _ = torch.native_dropout(x, 0.5, True)
    assert out is x and not x.is_leaf
    with pytest.raises(RuntimeError, match="leaf variable has been moved into the graph"):
        out.sum().backward()
    y = gradkit.zeros(2, 0, requires_grad=True)
    out, _ = gradkit.native_dropout(y, 0.5, True)
    assert out is y and y.is_leaf
    out.sum().backward()
    assert y.grad.shape == (2, 0)


def test_as_strided_in_place_on_a_view_with_history_records_as_torch():
    """Breadth seed 27178 (once a known difference, fixed by h-texp4): AsStridedBackward1."""
    def restride(m):
        view = m.tensor(0.5, dtype=m.float64, requires_grad=True).tile((2,)).swapdims(-1, 0)
        return view.as_strided_((1,), (1,), 0)
    assert restride(torch).grad_fn.name() == restride(gradkit).grad_fn.name() \
        == "AsStridedBackward1"


@pytest.mark.parametrize("shuffle", ["pixel_shuffle", "pixel_unshuffle"])
def test_pixel_shuffle_by_one_is_not_a_view_as_torch(shuffle):
    """A write into the input leaves the result as it was (breadth seed 29583)."""
    def program(m):
        x = m.arange(4.0).reshape(1, 1, 2, 2)
        out = getattr(m.nn.functional, shuffle)(x, 1)
        x.add_(10)
        return out, m.tensor(out._is_view())
    assert_same_as_torch(program)


def test_as_strided_scatter_of_an_empty_slice_with_zero_strides_as_torch():
    """No element is written twice when the slice is empty (breadth seed 31976); x's gradient
    passes whole (torch's is its written slice, empty: a known difference)."""
    def program(m):
        x = m.tensor(0.3 + 0j, dtype=m.complex128, requires_grad=True)
        return x, m.as_strided_scatter(x, m.zeros(2, 3, 0, dtype=m.complex128), (2, 3, 0),
                                       (2, 0, 1), 2)
    assert_same_as_torch(lambda m: program(m)[1])
    x, out = program(gradkit)
    assert gradkit.autograd.grad(out.real, x)[0].item() == 1


@pytest.mark.parametrize("shape", [(1, 1, 0), (0, 1)])
def test_native_batch_norm_training_on_an_empty_input_raises_as_torch(shape):
    """Its statistics kernel refuses an empty input; torch.batch_norm and evaluation mode do
    not (breadth seed 34317)."""
    assert_same_as_torch(lambda m: m.native_batch_norm(m.zeros(shape), None, None, None, None,
                                                       True, 0.1, 0.1))
    assert_same_as_torch(lambda m: m.native_batch_norm(
        m.zeros(shape), None, None, m.zeros(1), m.ones(1), False, 0.1, 0.1)[0])
    assert_same_as_torch(lambda m: m.batch_norm(m.zeros(shape), None, None, None, None, True,
                                                0.1, 0.1, False))


def test_atanh_turns_a_last_bit_difference_at_one_into_another_number():
    """Why atanh joins the rounding-amplifying steps of known.py (breadth seed 32667: |Q| of a
    1 x 1 QR is 1 in torch's LAPACK, 1 - ulp in gradkit's): both libraries agree on each."""
    below_one = float(np.nextafter(np.float32(1), np.float32(0)))
    assert_same_as_torch(lambda m: m.atanh(m.tensor([1.0, below_one])))
    assert gradkit.atanh(gradkit.tensor(below_one)).item() == pytest.approx(8.664, abs=1e-3)


@pytest.mark.parametrize("write", [lambda s: s.unsqueeze_(0), lambda s: s.mul_(2)])
def test_lstsq_saves_its_solution_as_torch(write):
    """A write into lstsq's solution before backward is refused, as torch's (its backward
    saves the solution; breadth seeds 24415, 24880, 27920, 30986, 31497)."""
    def program(m):
        a = m.tensor([[2.5, 1.0], [0.5, 3.0]], dtype=m.float64, requires_grad=True)
        solution = m.linalg.lstsq(a, m.ones(2, 1, dtype=m.float64))[0]
        write(solution)
        return m.autograd.grad(solution.sum(), a)[0]
    expected = pytest.raises(RuntimeError, match="one of the variables needed for gradient")
    for m in (torch, gradkit):
        with expected:
            program(m)


def test_as_strided_of_a_lapack_factor_reads_torchs_layout():
    """householder_product's factor is column-major in both (breadth seed 45543, a Known while
    gradkit's was C-contiguous), so as_strided reads the same elements."""
    def factor(m):
        a = m.tensor([[1.0, 0.5, 0.2], [0.3, 2.0, 0.1], [0.4, 0.6, 1.5]], dtype=m.float64)
        return m.linalg.householder_product(a, m.tensor([0.5, 0.2], dtype=m.float64))
    mine, theirs = factor(gradkit), factor(torch)
    assert mine.stride() == theirs.stride() == (1, 3)
    np.testing.assert_allclose(mine.as_strided((3,), (1,)).numpy(), theirs.numpy()[:, 0])
    np.testing.assert_allclose(theirs.as_strided((3,), (1,)).numpy(), theirs.numpy()[:, 0])


def test_kron_saves_no_view_of_its_inputs():
    """torch's kron reshapes its inputs with _unsafe_view (no views, versions of their own): a
    write into an input after kron leaves its backward intact (breadth seeds 27972, 40169)."""
    def program(m):
        x = m.tensor([[0.5, 2.0], [1.0, -1.0]], dtype=m.float64, requires_grad=True)
        y = m.tril(x, 0)
        k = m.kron(y, y)
        y.mul_(3)
        (g,) = m.autograd.grad(k.abs().sum(), x)
        return k, g
    assert_same_as_torch(program)
    k = gradkit.kron(gradkit.ones(2, 2, requires_grad=True), gradkit.ones(3, requires_grad=True))
    mul = k.grad_fn.next_functions[0][0]
    assert [f[0].name() for f in mul.next_functions] == ["UnsafeViewBackward0"] * 2


def test_ormqr_saves_its_result_as_torch():
    """torch's OrmqrBackward0 saves its result: writing into it before backward raises in both
    (breadth seeds 55357, 28122, 28785, 37951, 38665, 45031, 47712)."""
    def program(m):
        a = m.tensor([[1.0, 0.5], [0.3, -1.0], [2.0, 0.1]], dtype=m.float64, requires_grad=True)
        tau = m.tensor([1.2, 0.7], dtype=m.float64, requires_grad=True)
        c = m.tensor([[0.5, 1.0], [-1.0, 2.0], [0.0, 1.0]], dtype=m.float64, requires_grad=True)
        r = m.ormqr(a, tau, c)
        r.mul_(2)
        return m.autograd.grad(r.sum(), [a, tau, c])
    _both_refuse_the_write(program)
    assert gradkit.ormqr(gradkit.ones(3, 2, requires_grad=True), gradkit.ones(2),
                         gradkit.ones(3, 2)).grad_fn.name() == "OrmqrBackward0"


def test_complex_saves_its_parts_as_torch():
    """torch's ComplexBackward0 saves real and imag: a write into a part before backward
    raises in both (breadth seed 35729); without the write the gradients agree."""
    def program(m, write):
        r = m.tensor([1.0, 2.0], dtype=m.float64, requires_grad=True)
        i = m.tensor([0.5, -1.0], dtype=m.float64, requires_grad=True)
        rr, ii = r * 1, i * 1
        z = m.complex(rr, ii)
        if write:
            ii.add_(1)
        return m.autograd.grad((z * z).abs().sum(), [r, i])
    _both_refuse_the_write(program, True)
    assert_same_as_torch(lambda m: program(m, False))
    node = gradkit.complex(gradkit.ones(2, requires_grad=True), gradkit.ones(2)).grad_fn
    assert node._saved_real.shape == (2,) and node._saved_imag is None  # torch's too


@pytest.mark.parametrize("written", ["real", "imag"])
def test_complex_keeps_only_the_parts_that_need_a_gradient(written):
    """torch's ComplexBackward0 keeps a part only when it needs a gradient: a write into the
    other one before backward computes (strided_breadth seed 6207: gradkit refused it)."""
    def program(m):
        r = m.tensor([1.0, 2.0], dtype=m.float64, requires_grad=written == "imag") * 1
        i = m.tensor([0.5, -1.0], dtype=m.float64, requires_grad=written == "real") * 1
        z = m.complex(r, i)
        (r if written == "real" else i).add_(1)
        return m.autograd.grad(z.abs().sum(), [r if written == "imag" else i])
    assert_same_as_torch(program)


@pytest.mark.parametrize("alpha", [
    lambda m: m.tensor(2.0), lambda m: m.tensor(2), lambda m: m.tensor([2.0]),
    lambda m: m.tensor(2.0, requires_grad=True)], ids=["float", "int", "1d", "requires_grad"])
@pytest.mark.parametrize("name", ["add", "sub"])
def test_alpha_as_a_zero_dim_tensor_is_its_number(name, alpha):
    """torch takes a 0-d tensor that requires no grad as the Scalar alpha; other tensors are
    a TypeError (found by h-optim: gradkit raised AttributeError)."""
    def program(m):
        x = m.tensor([1.0, 2.0], dtype=m.float64, requires_grad=True)
        y = m.tensor([0.5, -1.0], dtype=m.float64, requires_grad=True)
        out = getattr(x, name)(y, alpha=alpha(m))
        integers = getattr(m, name)(m.tensor([1, 2]), m.tensor([3, 4]), alpha=alpha(m))
        return (out, integers) + m.autograd.grad(out.sum(), [x, y])
    assert_same_as_torch(program)


@pytest.mark.parametrize("x_shape, y_shape, dtypes", [
    ((0,), (0,), ("bool", "bool")), ((3,), (3,), ("bool", "bool")),
    ((2, 3), (3,), ("bool", "bool")), ((2, 0), (0,), ("bool", "bool")),
    ((3,), (3,), ("float32", "float64")), ((2, 3), (3,), ("float32", "complex64")),
    ((3,), (2,), ("float32", "float64")), ((3,), (3,), ("int64", "int64"))])
def test_inner_refuses_as_torch(x_shape, y_shape, dtypes):
    """inner of 1-D tensors is torch's dot kernel, which refuses bool even when empty, and
    operands of two dtypes are refused before any kernel (breadth seed 25939)."""
    def program(m):
        x = m.ones(x_shape, dtype=getattr(m, dtypes[0]))
        return m.inner(x, m.ones(y_shape, dtype=getattr(m, dtypes[1])))
    assert_same_as_torch(program)


@pytest.mark.parametrize("fn", ["huber_loss", "smooth_l1_loss"])
@pytest.mark.parametrize("bool_input", [True, False])
def test_pointwise_loss_of_a_bool_operand_as_torch(fn, bool_input):
    """huber writes into input's dtype, so a bool (or integer) input is refused; smooth_l1
    takes a bool operand forward and in its first backward, and its double backward refuses
    it, as torch's (breadth seeds 25792, 23122)."""
    def program(m, depth):
        x = m.tensor([0.3, 2.0], dtype=m.float64, requires_grad=True)
        b = m.tensor([True, False])
        out = getattr(m.nn.functional, fn)(*((b, x) if bool_input else (x, b)), reduction="sum")
        (g,) = m.autograd.grad(out, x, create_graph=True)
        return (out, g) + (m.autograd.grad(g.sum(), x) if depth == 2 else ())
    assert_same_as_torch(lambda m: program(m, 1))
    assert_same_as_torch(lambda m: program(m, 2))


def test_huber_of_an_integer_input_is_refused_as_torch():
    """torch's huber kernel cannot write a Double loss into a Long input (breadth seed 25792)."""
    assert_same_as_torch(lambda m: m.nn.functional.huber_loss(
        m.tensor([3, 1]), m.tensor([0.5, 1.0], dtype=m.float64)))


def test_cholesky_of_a_complex_product_with_an_infinity_refuses_as_torch():
    """Breadth seed 24151: torch's complex product [[-inf]] @ [[-inf]].mH is NaN + NaNj (its
    gemm of one entry multiplies by 1 + 0j), so its cholesky refuses the matrix; gradkit's
    product is the same now (gradkit/ops/complex_products.py; it was inf + NaNj and
    factored), and so is the refusal."""

    def program(m):
        x = m.tensor([[complex(-math.inf, 0)]], dtype=m.complex64)
        return m.linalg.cholesky(x @ x.mT.conj() + m.eye(1, dtype=m.complex64))
    for m in (torch, gradkit):
        with pytest.raises(RuntimeError, match="not positive-definite"):
            program(m)
    problems, known = diff_program(shrink(generate(RandomDrawer(24151), "breadth")))
    assert not problems or known.startswith(("a LAPACK routine of a non-finite matrix",
                                             "complex matmul with infinite entries"))


def test_copysign_by_a_nan_reads_its_sign_bit_and_is_documented():
    """Breadth seed 21105: copysign(x, log(x)) at a negative x reads the sign bit of the NaN
    log made, -nan in NumPy's float32 log (and its float64 one on AVX-512 CPUs) and +nan in
    torch (a known, documented difference); with a NaN of a given sign both agree."""
    def made(m, dtype):
        x = m.tensor([-0.5, 2.0], dtype=getattr(m, dtype))
        return m.copysign(m.tensor([1.0, 1.0], dtype=getattr(m, dtype)), m.log(x)).numpy()
    float64_sign = -1.0 if numpy_log_of_a_negative_sets_the_sign_bit() else 1.0
    with np.errstate(invalid="ignore"):
        for dtype, sign in (("float32", -1.0), ("float64", float64_sign)):
            assert made(gradkit, dtype)[0] == sign and made(torch, dtype)[0] == 1.0
            assert made(gradkit, dtype)[1] == made(torch, dtype)[1] == 1.0
    assert_same_as_torch(with_grads(lambda m, x: m.copysign(x, m.tensor([math.nan, -math.nan])),
                                    [0.5, -2.0]))
    problems, known = diff_program(shrink(generate(RandomDrawer(21105), "breadth")))
    assert problems and known.startswith("copysign(x, NaN) reads the NaN's sign bit")


def test_eigh_gradient_at_a_repeated_spectrum_agrees():
    """Breadth seed 22185: eigh of outer(v, v) @ outer(v, v).mH + I, whose eigenvalue 1
    repeats, divides the eigenvectors' gradient by a rounding-noise difference. Once a known
    difference (torch NaN, gradkit finite); with torch's skew-Hermitian projection of V^H gV
    (h-gradgrad) the gradients agree on this AVX2 CPU. The noise is MKL's, picked by CPU: on
    another CPU one side may still give NaN or refuse the phase (the documented entry)."""
    v = [0.8 - 0.3j, -0.32 + 0.34j, 0.76 + 0.24j]

    def values(m):
        x = m.tensor(v, dtype=m.complex128)
        h = m.outer(x, x) @ m.outer(x, x).mT.conj() + m.eye(3, dtype=m.complex128)
        return m.linalg.eigvalsh(h)
    assert_same_as_torch(values, atol=1e-12)
    assert np.abs(np.diff(values(gradkit).numpy()[:2])) < 1e-12
    problems, known = diff_program(shrink(generate(RandomDrawer(22185), "breadth")))
    assert not problems or known.startswith("gradients of eig"), problems


def test_a_phase_check_refused_at_a_repeated_spectrum_is_known_only_as_such():
    """The repeated-spectrum entry takes one side's refusal of the eigenvectors' phase in a
    backward (CPU-dependent noise, seed 22185) but not another error, nor differing values."""
    program = Program("breadth", (Leaf((3,), "complex128", True),), (
        Step("b_outer", (0, 0), {}), Step("b_eigh_prod", (1,), {"n": 3})), True, 22185)
    theirs = run(program, torch)
    if theirs.error is not None:  # torch's own phase check refuses it on some CPUs
        theirs = run(program, gradkit)
    assert theirs.error is None
    phase = "linalg_eigh_backward: The eigenvectors in the complex case are specified up to " \
        "multiplication by e^{i phi}. The specified loss function depends on this quantity"
    refused = theirs._replace(error=("double backward", "RuntimeError", "RuntimeError"),
                              grads2=[], message=phase)
    assert known_difference(program, refused, theirs).startswith("gradients of eig")
    assert known_difference(program, theirs, refused).startswith("gradients of eig")
    assert known_difference(program, refused._replace(message="another error"), theirs) is None
    values = [v + 1 for v in theirs.values]
    assert known_difference(program, refused._replace(values=values), theirs) is None


def test_spectral_norm_second_derivative_at_an_infinity_is_torch_s():
    """Breadth seed 22302: matrix_norm(ord=2) of [[inf]] runs an SVD; the second derivative
    through its singular vectors is NaN in torch, whose svd backward keeps the inf - inf of
    its skew terms' diagonal. gradkit zeroed that diagonal and gave 0 (a difference once
    documented); it keeps it now, so both give NaN. Finite matrices agree to second order."""
    def program(m, value):
        x = m.tensor([[value]], dtype=m.float64, requires_grad=True)
        (g,) = m.autograd.grad(m.linalg.matrix_norm(x, 2), x, create_graph=True)
        return g, m.autograd.grad(g.sum(), x, allow_unused=True, materialize_grads=True)[0]
    assert_same_as_torch(lambda m: program(m, 0.5))
    assert_same_as_torch(with_grads(lambda m, x: m.linalg.matrix_norm(x, 2),
                                    [[1.0, 0.3], [-0.4, 2.0]]))
    with np.errstate(invalid="ignore", divide="ignore"):
        for m in (torch, gradkit):
            assert np.isnan(program(m, math.inf)[1].numpy()).all()
    assert diff_program(shrink(generate(RandomDrawer(22302), "breadth"))) == ([], None)


@pytest.mark.parametrize("value", [math.nan, -0.5, 0.5])
def test_nll_loss_gradient_keeps_a_zero_edge_to_its_input(value):
    """torch's NllLossBackwardBackward0 has a zero derivative in the input, so a second
    backward reaches it: through prelu at a NaN input that zero meets the NaN and gives NaN
    (breadth seed 34628)."""
    def program(m):
        x = m.tensor([[value]], dtype=m.float64, requires_grad=True)
        w = m.tensor([0.3], dtype=m.float64, requires_grad=True)
        loss = m.nn.functional.nll_loss(m.nn.functional.prelu(x, w), m.tensor([0]),
                                        reduction="none")
        gx, gw = m.autograd.grad(loss.sum(), (x, w), create_graph=True)
        return (gx, gw) + m.autograd.grad(gx.sum() * 0.3 + gw.sum() * 0.5, (x, w))
    assert_same_as_torch(program)
    logits = gradkit.randn(2, 3, requires_grad=True)
    (g,) = gradkit.autograd.grad(gradkit.nn.functional.nll_loss(logits, gradkit.tensor([0, 2])),
                                 logits, create_graph=True)
    assert g.requires_grad and g.grad_fn.name() == "NllLossBackwardBackward0"


@pytest.mark.parametrize("reduce", ["var", "std", "var_mean", "std_mean"])
@pytest.mark.parametrize("dim, correction", [(1, 2), (1, 3), (None, 4)])
def test_complex_variance_without_degrees_of_freedom_sums_its_parts(reduce, dim, correction):
    """With no degree of freedom left torch sums the real and imaginary parts' variances, so
    a real part's inf plus an imaginary part's 0/0 is NaN, not inf (breadth seed 34634)."""
    def program(m):
        x = m.tensor([[0, 1 + 0j], [0, 2j]], dtype=m.complex128)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            out = getattr(m, reduce)(x, dim=dim, correction=correction)
        return out if isinstance(out, tuple) else (out,)
    assert_same_as_torch(program)


def test_values_computed_from_torchs_uninitialized_multi_margin_loss_are_known():
    """multi_margin_loss of an empty batch is NaN averaged in gradkit and torch's uninitialized
    output; the documented difference covers the steps computed from it (breadth seed 55291)."""
    program = Program("breadth", (Leaf((0, 1), "float64", True),), (
        Step("n_multi_margin", (0,), {"labels": [], "lists": [], "p": 1, "reduction": "mean"}),
        Step("b_count_nonzero", (1,), {"dim": None, "keepdim": True})), False, 55291)
    problems, known = diff_program(program)
    assert any(p.startswith("values[2]") for p in problems) or not problems
    assert known == ("multi_margin_loss of an empty batch: torch returns uninitialized memory"
                     if problems else None)
    loss = gradkit.nn.functional.multi_margin_loss(gradkit.zeros(0, 1),
                                                   gradkit.zeros(0, dtype=gradkit.int64))
    assert math.isnan(loss.item()) and gradkit.count_nonzero(loss).item() == 1


def test_a_step_refusing_the_nan_of_an_empty_multi_margin_loss_is_known():
    """gradkit's NaN mean of an empty batch is refused by a later SVD (as torch refuses NaN),
    where torch's uninitialized output is a number: the same documented difference (breadth
    seed 90217)."""
    program = Program("breadth", (Leaf((0, 3), "float64", True),), (
        Step("n_multi_margin", (0,), {"labels": [], "lists": [], "p": 2, "reduction": "mean"}),
        Step("l_cond", (1,), {"n": 1, "p": None})), True, 90217)
    problems, known = diff_program(program)
    assert known == ("multi_margin_loss of an empty batch: torch returns uninitialized memory"
                     if problems else None)
    for m in (torch, gradkit):
        with pytest.raises(RuntimeError, match="input matrix contained non-finite values"):
            m.linalg.cond(m.tensor([[math.nan]], dtype=m.float64))


@pytest.mark.parametrize("values", [[0.0, math.nan], [0.0, math.inf, 2.0], [1.5, 0.0, -2.0, 0.5],
                                    [0.0, 0.0, 3.0]])
def test_cumprod_second_derivative_at_zeros_leaves_each_element_out_as_torch(values):
    """With a zero, torch's graph-recording cumprod backward builds each element's products
    from prods before it and cumprods after it, so a NaN element does not reach its own row's
    second derivative (breadth seed 41152)."""
    def program(m):
        x = m.tensor(values, dtype=m.float64, requires_grad=True)
        w = m.tensor([0.3, -0.7, 1.1, 0.2][:len(values)], dtype=m.float64)
        (g,) = m.autograd.grad((m.cumprod(x, 0) * w).sum(), [x], create_graph=True)
        (gg,) = m.autograd.grad((g * w.flip(0)).sum(), [x])
        return g, gg
    assert_same_as_torch(program)


def test_copysign_by_a_nan_whose_sign_numpy_cleared_is_known():
    """copysign by log(-NaN): -NaN in torch, a NaN whose sign NumPy may clear here, so the
    results agree in magnitude only; documented as NaN's sign bit not compared (breadth seed
    45514, where var's 0/0 is the -NaN)."""
    def program(m):
        y = -m.tensor([math.nan, 1.5])     # -NaN in both
        return m.copysign(m.tensor([2.0, 3.0]), y.log()), y
    mine, theirs = program(gradkit), program(torch)
    assert np.signbit(mine[1].numpy()).tolist() == np.signbit(theirs[1].numpy()).tolist()
    assert np.abs(mine[0].numpy()).tolist() == np.abs(theirs[0].numpy()).tolist() == [2.0, 3.0]
    program = Program("breadth", (Leaf((), "float32", False), Leaf((), "float32", False)), (
        Step("b_var_mean", (0,), {"dim": None, "keepdim": True, "correction": 2}),
        Step("e2_nanquantile", (2,), {"q": (0.1, 0.6), "dim": 0, "keepdim": True,
                                      "interpolation": "lower"}),
        Step("e2_copysign", (1, 3), {})), False, 45514)
    problems, known = diff_program(program)
    assert problems and all(p.startswith("values[4]") for p in problems)
    assert known.startswith("copysign")  # either NaN-sign-bit entry (21105's reads it first)


def test_std_of_complex_values_equal_but_for_rounding_is_known():
    """std of equal complex values: rounding noise (3e-17 here, 0 in torch's Welford pass),
    so its gradient is noise over noise; documented (breadth seed 45892)."""
    def program(m):
        x = (m.tensor(0.18682104 + 0.6135006j, dtype=m.complex128) * 1.1).expand(12)
        return m.std(x.clone(), correction=2)
    mine, theirs = program(gradkit), program(torch)
    assert abs(mine.item()) < 1e-12 and abs(theirs.item()) < 1e-12
    problems, known = diff_program(generate(RandomDrawer(45892), "breadth"))
    assert known == "the gradient of std at elements equal but for rounding is noise over noise" \
        or not problems


def test_vector_norm_ord_0_counting_rounding_noise_is_known():
    """vector_norm(ord=0) counts an entry of rounding noise (torch's rfft of a layer_norm
    that cancels but for rounding: 4e-8) that is an exact 0 here; documented as a step that
    turns a last-bit difference into another number (breadth seed 49949)."""
    def program(m):
        return tuple(m.linalg.vector_norm(m.tensor(v), ord=0) for v in ([4.2e-8, 1.4], [0.0, 1.4]))
    assert_same_as_torch(program)
    assert [t.item() for t in program(gradkit)] == [2.0, 1.0]
    problems, known = diff_program(generate(RandomDrawer(49949), "breadth"))
    assert known == "a step that turns a rounding difference of its input into another number" \
        or not problems


def test_as_strided_scatter_self_gradient_is_known_before_a_shared_double_backward_error():
    """as_strided_scatter's gradient of self is the derivative here, torch's the written slice
    (documented); a later double backward both refuse does not hide it (breadth seed 53842)."""
    def grads(m):
        x = m.tensor([-0.3, 0.5], requires_grad=True)
        y = m.as_strided_scatter(x, m.tensor(2.0), (), (), 0)
        return m.autograd.grad((y * m.tensor([3.0, 5.0])).sum(), [x])[0].tolist()
    assert (grads(gradkit), grads(torch)) == ([0.0, 5.0], [3.0, 0.0])
    program = Program("breadth", (Leaf((1,), "float32", True),), (
        Step("n_multilabel_margin", (0,), {"labels": [0], "lists": [0], "p": 1,
                                           "reduction": "sum"}),
        Step("fb_as_strided_scatter", (0, 1), {"size": (), "stride": (), "offset": 0})),
        True, 53842)
    problems, known = diff_program(program)
    assert problems and all(p.startswith("grads") for p in problems)
    assert known == ("as_strided_scatter's gradient of self is the derivative (torch's is the "
                     "written slice)")


def test_as_strided_scatter_self_gradient_is_known_beside_an_ffts_signed_zeros():
    """strided seed 162919: as_strided_scatter's gradient of self (documented) and, in the
    values, irfftn's signed zeros (pocketfft's, documented) at once; the gradient of the
    scatter's output agrees (retain_grad), so the Known takes both."""
    program = Program("strided_breadth", (Leaf((1, 1), "complex64", True, layout="offset"),), (
        Step("fb_as_strided_scatter", (0, 0), {"size": (1, 1), "stride": (0, 3),
                                               "offset": None}),
        Step("n_conv", (1, 1), {"kind": "conv3d", "shape": (1, 1, 1, 1, 1),
                                "w": (1, 1, 1, 1, 1), "stride": 1, "padding": 1,
                                "dilation": 1, "groups": 1}),
        Step("fft_irfftn", (2,), {"s": (-1, 3), "dim": (2, 1), "norm": "backward"})),
        False, 162919)
    problems, known = diff_program(program)
    assert problems == [] or known == ("as_strided_scatter's gradient of self is the "
                                       "derivative (torch's is the written slice)")
    mine, theirs = run(program, gradkit), run(program, torch)
    assert [p.split(":")[0] for p in compare(mine, theirs._replace(
        grads=mine.grads))] in ([], ["signed zero in values[3]"])


def test_ldl_factor_of_a_non_finite_matrix_is_known():
    """ldl_factor of [[inf, inf], [inf, 1.65]]: gradkit's sytf2 meets a NaN pivot and reports
    it (info 2, and ldl_factor raises); torch's MKL leaves it (info 0). Documented (breadth
    seed 55562)."""
    a = [[math.inf, math.inf], [math.inf, 1.65]]
    assert torch.linalg.ldl_factor_ex(torch.tensor(a)).info.item() == 0
    assert gradkit.linalg.ldl_factor_ex(gradkit.tensor(a)).info.item() == 2
    with pytest.raises(RuntimeError, match=r"^torch.linalg.ldl_factor: Unknown error code: 2.$"):
        gradkit.linalg.ldl_factor(gradkit.tensor(a))
    problems, known = diff_program(generate(RandomDrawer(55562), "breadth"))
    assert known == "a LAPACK routine of a non-finite matrix: OpenBLAS's inf/NaN, not MKL's" \
        or not problems



def test_phase_check_of_nan_singular_vectors_of_a_non_finite_matrix_is_known():
    """svdvals of a complex [[-inf]]: OpenBLAS leaves U NaN (MKL: 1), so gradkit's double
    backward refuses the NaN phase term, where torch's computes. Documented (breadth seed
    92801)."""
    def double_backward(m):
        x = m.tensor([[complex(-math.inf, 0)]], dtype=m.complex64, requires_grad=True)
        (g,) = m.autograd.grad(m.linalg.svdvals(x).sum(), [x], create_graph=True)
        return m.autograd.grad((g * (0.5 - 0.2j)).real.sum(), [x])
    double_backward(torch)
    with pytest.raises(RuntimeError, match="svd_backward: The singular vectors in the complex "
                       "case are specified up to multiplication by e"):
        double_backward(gradkit)
    problems, known = diff_program(generate(RandomDrawer(92801), "breadth"))
    assert known == "a LAPACK routine of a non-finite matrix: OpenBLAS's inf/NaN, not MKL's" \
        or not problems

@pytest.mark.parametrize("padding_mode", ["zeros", "border"])
def test_nearest_grid_sample_input_gradient_keeps_a_zero_edge_to_the_grid(padding_mode):
    """torch's GridSampler2DBackwardBackward0 gives the grid a zero gradient of the input's
    gradient in nearest mode; a NaN in the grid's history turns it into NaN in a second
    backward (breadth seed 35400)."""
    def program(m):
        x = m.tensor([math.inf, 0.5], requires_grad=True)
        v = m.var(x, correction=0) if padding_mode == "border" else x.sum() * 0
        image = (v + m.tensor([1.0, 2.0, 3.0, 4.0])).reshape(1, 1, 2, 2)
        grid = (v.reshape(1, 1, 1, 1).expand(1, 3, 3, 2) * 1.3).nan_to_num(0.0, 3.0, -3.0)
        out = m.nn.functional.grid_sample(image, grid, mode="nearest", padding_mode=padding_mode,
                                          align_corners=True)
        (g,) = m.autograd.grad((out * 0.7).sum(), [x], create_graph=True)
        (gg,) = m.autograd.grad((g * m.tensor([0.3, -0.4])).sum(), [x], allow_unused=True,
                                materialize_grads=True)
        return out, g, gg
    assert_same_as_torch(program)


@pytest.mark.parametrize("nonfinite", [math.nan, math.inf])
def test_cumprod_second_derivative_at_a_non_finite_element_next_to_a_zero(nonfinite):
    """With a zero in the input, cumprod's graph-recording backward is torch's per-element
    products of predecessors and successors (no division), so the second derivative at a NaN
    or inf element is finite as torch's (breadth seed 62284: gradkit's was NaN)."""
    def program(m):
        x = m.tensor([[0.5, nonfinite, 2.0], [0.8, 0.0, -1.5], [1.5, 2.0, 3.0]],
                     dtype=m.float64, requires_grad=True)
        out = m.cumprod(x, 1)
        (g,) = m.autograd.grad((out * m.arange(9.0, dtype=m.float64).reshape(3, 3)).sum(),
                               [x], create_graph=True)
        (gg,) = m.autograd.grad((g * g.detach().nan_to_num(0.5, 2.0, -2.0)).sum(), [x])
        return out, g, gg
    assert_same_as_torch(program)


@pytest.mark.parametrize("first", [complex(math.inf, 0), complex(-math.inf, 1),
                                   complex(1, math.nan), complex(math.nan, 1)],
                         ids=["inf", "-inf+1j", "nan_imag", "nan_real"])
@pytest.mark.parametrize("create_graph", [False, True])
def test_complex_logcumsumexp_at_non_finite_values(first, create_graph):
    """torch's complex logcumsumexp adds the first element to log(0) too (a NaN part makes it
    NaN, -inf + 1j gives -inf + 0j), and its backward's complex sub and add multiply by
    1 + 0j, so an infinite result makes every gradient NaN (breadth seed 59749: gradkit's
    plain backward subtracted with NumPy's - and left the last gradient finite)."""
    def program(m):
        x = m.tensor([[first, first, -0.65 - 0.59j], [0.5 + 1j, first, 0.25j]],
                     dtype=m.complex128, requires_grad=True)
        out = m.logcumsumexp(x, 1)
        g = m.tensor([[0.3 + 0.1j, -0.5 + 0.2j, 0.7 - 0.4j]] * 2, dtype=m.complex128)
        empty = m.logcumsumexp(m.zeros(2, 0, dtype=m.complex128), 1)
        return (out, empty) + m.autograd.grad(out, [x], g, create_graph=create_graph)
    assert_same_as_torch(program)


@pytest.mark.parametrize("pool", [
    lambda m, x: m.nn.functional.max_pool1d(x.reshape(1, 2, 4), 2),
    lambda m, x: m.nn.functional.max_pool2d(x.reshape(1, 2, 2, 2), 2, return_indices=True)[0],
    lambda m, x: m.nn.functional.max_pool3d(x.reshape(1, 1, 2, 2, 2), 1, padding=0),
    lambda m, x: m.nn.functional.adaptive_max_pool1d(x.reshape(1, 2, 4), 3)],
    ids=["max_pool1d", "max_pool2d", "max_pool3d", "adaptive_max_pool1d"])
@pytest.mark.parametrize("write", [False, True])
def test_max_pool_refuses_a_write_into_its_input_before_backward(pool, write):
    """torch's max pooling node saves its input (with the indices): writing into it, even
    only its imaginary part through conj_physical_() of the complex base of a .real view,
    makes backward raise (breadth seed 57657: gradkit saved only the shape and computed)."""
    def program(m):
        x = m.tensor([1 + 2j, 3 - 1j, 0.5 + 0.5j, -1j, 2.0, -0.5, 1.5j, 0.25],
                     dtype=m.complex64, requires_grad=True)
        base = x * 1
        out = pool(m, base.real)
        if write:
            base.conj_physical_()
        return m.autograd.grad(out.sum(), [x])
    if write:
        _both_refuse_the_write(program)
    else:
        assert_same_as_torch(program)


@pytest.mark.parametrize("write", [False, True])
@pytest.mark.parametrize("transpose", [False, True])
def test_triangular_solve_refuses_a_write_into_b_before_backward(write, transpose):
    """torch.triangular_solve's node (TriangularSolveBackward0) saves b too, though its
    gradients do not read it: a write into b (even logical_not_ of a complex leaf it was
    viewed from) makes backward raise (breadth seed 65524: gradkit's solve saved A and X)."""
    def program(m):
        a = m.tensor([[2.0, 1.0 - 1j], [0.0, 3.0 + 0.5j]], dtype=m.complex128,
                     requires_grad=True)
        leaf = m.tensor([1.0 + 1j, 2.0 - 0.5j], dtype=m.complex128, requires_grad=True)
        b = leaf * 1
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            x, copy = m.triangular_solve(b.reshape(2, 1), a, upper=True, transpose=transpose)
        if write:
            b.logical_not_()
        assert x.grad_fn.name() == "TriangularSolveBackward0"
        return (x, copy) + m.autograd.grad(
            (0.7 * x.real - 0.3 * x.imag).sum() + copy.abs().sum(), [a, leaf])
    if write:
        _both_refuse_the_write(program)
    else:
        assert_same_as_torch(program)


@pytest.mark.parametrize("transform", [
    lambda m, x: m.fft.irfft(x, dim=0, n=5), lambda m, x: m.fft.fft(x, dim=0),
    lambda m, x: m.fft.rfft(x.real, dim=0), lambda m, x: m.fft.irfftn(x, dim=(1, 0)),
    lambda m, x: m.fft.fftn(x.mT, dim=(1, 0)), lambda m, x: m.fft.rfftn(x.real.mT, dim=(1, 0))],
    ids=["irfft", "fft", "rfft", "irfftn", "fftn_transposed", "rfftn_transposed"])
def test_fft_output_laid_out_as_torch(transform):
    """torch's FFT along a dim other than the last returns ATen's _exec_fft layout (batch
    dims outermost by input stride, transformed dims innermost), so reshaping it copies and a
    later write into the result does not reach what the reshape fed (breadth seed 59706:
    gradkit's contiguous irfft output made cholesky_ex's saved input a view, and backward
    refused the write unsqueeze_ made)."""
    def program(m):
        x = m.tensor([[1.0 + 1j, 2.0 - 1j, 0.5j, 3.0], [0.25, -1.0 + 2j, 1.5, -0.5j],
                      [2.0, 0.5 - 0.5j, -1j, 1.0]], dtype=m.complex128, requires_grad=True)
        out = transform(m, x)
        square = out.reshape(-1)[:4].reshape(2, 2)
        product = square @ square.mT.conj() + m.eye(2, dtype=square.dtype)
        factor = m.linalg.cholesky_ex(product)[0]
        out.unsqueeze_(1)
        return (out, m.tensor(out.stride()), factor) + m.autograd.grad(factor.abs().sum(), [x])
    assert_same_as_torch(program)


def test_cholesky_of_an_infinite_complex_gram_matrix_refuses_as_torch():
    """Breadth seed 59823: torch's 1x1 complex x @ x.mH of -inf is NaN (its BLAS multiplies
    by 1 + 0j), so its Cholesky factorization refuses; gradkit's product is NaN too now (it
    was inf + NaN j and factored to inf)."""
    def gram(m):
        x = m.tensor([[complex(-math.inf, 0)]], dtype=m.complex128)
        return x @ x.mH + m.eye(1, dtype=m.complex128)
    for m in (torch, gradkit):
        assert np.isnan(np.asarray(gram(m).numpy()).real).all()
        with pytest.raises(m.linalg.LinAlgError, match="not positive-definite"):
            m.linalg.cholesky(gram(m))
    # a NaN gram matrix is refused alike
    nan = [[complex(math.nan, 0)]]
    for m in (torch, gradkit):
        with pytest.raises(m.linalg.LinAlgError, match="not positive-definite"):
            m.linalg.cholesky(m.tensor(nan, dtype=m.complex128))


def test_remainder_across_a_multiple_after_rounding_is_known():
    """torch's float32 sin(asin(x)) is one ulp above x where NumPy's is x, so x % sin(asin(x))
    is 0 here and x in torch: remainder of values one ulp either side of a multiple jumps by
    the divisor; documented as a step that turns a last-bit difference into another number
    (main seed 1320653)."""
    def program(m):
        x = m.tensor(0.35022116)
        return m.remainder(x, x), m.remainder(x, m.nextafter(x, m.tensor(1.0)))
    assert_same_as_torch(program)
    mine = program(gradkit)
    assert mine[0].item() == 0.0 and mine[1].item() == pytest.approx(0.35022116)
    problems, known = diff_program(generate(RandomDrawer(1320653)))
    assert known == "a step that turns a rounding difference of its input into another number" \
        or not problems


@pytest.mark.parametrize("compute", [
    lambda m, wide, narrow: narrow.real.expand(2, 2, 3) + wide,
    lambda m, wide, narrow: wide.real + narrow.abs().expand(2, 2, 3).double(),
    lambda m, wide, narrow: narrow.real.expand(2, 2, 3).to(m.int64).sigmoid() * wide.real,
    lambda m, wide, narrow: narrow.real.expand(2, 2, 3).to(m.int64) / 2 + wide.real,
    lambda m, wide, narrow: narrow.real.expand(2, 2, 3).to(m.int32).exp() + wide.real],
    ids=["add_complex", "add_double", "sigmoid_of_int", "div_of_int", "exp_of_int"])
def test_promoting_an_expanded_operand_gives_a_c_ordered_result_as_torch(compute):
    """torch's CPU kernels promote an input with ``to``, which copies an expanded tensor into
    C order; NumPy's astype laid its stride-0 dims out innermost, so the result was
    column-major-ish and ``view(-1)`` refused it (hooks seed 1165942: the real part of a
    complex leaf, expanded, plus that leaf)."""
    def program(m):
        narrow = m.tensor([[[1.0 + 2j, -0.5 + 1j, 2.0 - 1j]]], dtype=m.complex64,
                          requires_grad=True)
        wide = m.tensor([[[0.5 - 1j, 1.5 + 0.5j, -2.0 + 0.25j]]] * 2, dtype=m.complex128,
                        requires_grad=True)
        out = compute(m, wide, narrow)
        flat = out.view(-1)
        return (flat, m.tensor(out.stride()),
                *m.autograd.grad(flat.abs().sum(), [narrow, wide], allow_unused=True,
                                 materialize_grads=True))
    assert_same_as_torch(program)


def test_complex_quotient_that_is_exactly_real_times_inf_is_torchs():
    """torch's (x + x) / x is 2 - tiny j, so a later infinite factor makes the imaginary part
    -inf; gradkit's quotient rounds as torch's, and so does the product (dtypes seed
    1189539)."""
    def program(m):
        x = m.tensor(1.5 - 0.7j, dtype=m.complex128, requires_grad=True)
        out = x + x
        out /= x
        quotient = out.detach().clone()
        out *= math.inf
        return quotient, out.detach()
    assert program(torch)[1].item() == complex(math.inf, -math.inf)
    assert_same_as_torch(program, rtol=0)


def _write_without_derivative_into_a_view(m, write, base_requires_grad: bool, end: str):
    """``write(view, other)`` (an op torch has no derivative for) into a slice of a clone;
    what ``end`` then gives: the gradient of ``other`` (None when not reached) or the error."""
    other = m.tensor([1.5, -2.0], dtype=m.float64, requires_grad=True)
    base = m.tensor([4.0, 5.0, -3.0], dtype=m.float64, requires_grad=base_requires_grad)
    copy = base.clone()
    write(copy[1:], other)
    try:
        if end == "grad":
            return m.autograd.grad(copy.sum(), [other], allow_unused=True)[0]
        if end == "grad_strict":
            return m.autograd.grad(copy.sum(), [other])[0]
        copy.sum().backward()
        return other.grad
    except RuntimeError as error:
        return str(error).replace("_ is not", " is not")  # torch names the in-place variant


@pytest.mark.parametrize("end", ["grad", "grad_strict", "backward"])
@pytest.mark.parametrize("base_requires_grad", [False, True])
@pytest.mark.parametrize("write", [lambda v, o: v.floor_divide_(o), lambda v, o: v.heaviside_(o)],
                         ids=["floor_divide_", "heaviside_"])
def test_write_without_derivative_into_a_view_loses_the_other_operand_as_torch(
        write, base_requires_grad, end):
    """torch's NotImplemented node keeps edges only to inputs that require grad, and CopySlices
    takes its edges after the first as the other inputs': when the view's old values require no
    grad, ``view //= y`` does not reach y (autograd.grad gives None or "not used in the graph"),
    while a plain backward still raises (mixed seed 1232943: gradkit raised for the
    gradient of y)."""
    mine = _write_without_derivative_into_a_view(gradkit, write, base_requires_grad, end)
    theirs = _write_without_derivative_into_a_view(torch, write, base_requires_grad, end)
    assert theirs is None or isinstance(theirs, str)
    assert mine == theirs


def test_integer_tensor_written_with_a_grad_value_then_viewed_is_the_documented_wart():
    """Documented (docs/numerics.md, "leaves the integer tensor not requiring grad"; indexing
    seed 1263898): torch's integer tensor written through a slice with a 0-d value that
    requires grad takes a CopySlices history, so its next view raises "Autograd not support
    dtype: Long"; gradkit's does not require grad and views it, and the write still makes the
    gradient of an op that saved the old values fail as torch's would."""
    def program(m):
        x = m.tensor([1 + 2j], dtype=m.complex128, requires_grad=True)
        counts = m.tensor([3])
        product = counts * x
        counts[::2] = x.sum()
        return counts, product, x
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the complex value cast to an integer
        counts, _, _ = program(torch)
        assert counts.requires_grad
        with pytest.raises(RuntimeError, match="Autograd not support dtype: Long"):
            counts[...]
        counts, product, x = program(gradkit)
    assert not counts.requires_grad and counts[...].tolist() == [1]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        gradkit.autograd.grad(product.abs().sum(), [x])


@pytest.mark.parametrize("base_dtype, exponent_dtype", [
    ("int16", "float64"), ("uint8", "float64"), ("bool", "float64"), ("float32", "float64"),
    ("float64", "float32"), ("int64", "float32"), ("float32", "complex128"),
    ("int32", "complex64")])
def test_pow_exponent_gradient_takes_the_log_of_the_base_in_the_result_dtype(
        base_dtype, exponent_dtype):
    """torch's pow_backward_exponent casts the base to the result dtype before its log: a 0-d
    int16 (or float32) base of a float64 exponent has a float64 log, where gradkit took it in
    float32 and the gradient was one float32 rounding off (mixed seeds 1305807, 1065223)."""
    def program(m):
        base = m.tensor(3, dtype=getattr(m, base_dtype))
        exponent = m.tensor([0.3, -0.7, 1.9], dtype=getattr(m, exponent_dtype),
                            requires_grad=True)
        (grad,) = m.autograd.grad((base ** exponent).abs().sum(), [exponent], create_graph=True)
        return (grad,) + m.autograd.grad(grad.abs().sum(), [exponent])
    assert_same_as_torch(program, atol=0, rtol=0)


@pytest.mark.parametrize("power", [lambda m, x, e: x ** e, lambda m, x, e: m.pow(x, e)],
                         ids=["operator", "function"])
def test_pow_by_a_bool_tensor_exponent_differentiates_where_torch_raises(power):
    """Deliberate difference (docs/numerics.md, "raises computing `exponent - 1`"; mixed seed
    1306895, pow(x, x.bool())): gradkit's gradient is e * x ** (e - 1) in x's dtype; torch's
    backward computes the bool exponent minus 1 and raises."""
    def gradient(m):
        x = m.tensor([1.5, 0.0, -2.0], dtype=m.float64, requires_grad=True)
        return m.autograd.grad(power(m, x, x.bool()).sum(), [x])[0]
    with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with a bool tensor"):
        gradient(torch)
    assert gradient(gradkit).tolist() == [1.0, 0.0, 1.0]  # x ** 1 where x != 0, x ** 0 at 0


def test_remainder_by_a_divisor_one_ulp_apart_is_the_documented_rounding_step():
    """Documented (docs/numerics.md, "turn a last-bit difference"; special seed 1320653):
    float32 sin(asin(x)) is x here and one ulp above it in torch (SLEEF), so x % it is 0 here
    and x in torch; the inputs agree to rounding."""
    def program(m):
        x = m.tensor(0.35022116, dtype=m.float32)
        divisor = m.sin(m.asin(x))
        return x, divisor, m.remainder(x, divisor)
    (x, their_divisor, theirs), (_, my_divisor, mine) = program(torch), program(gradkit)
    assert my_divisor.item() == x.item() and mine.item() == 0
    assert their_divisor.item() == np.nextafter(np.float32(x.item()), np.float32(1))
    assert theirs.item() == x.item()


def test_float32_std_of_equal_values_has_a_noise_gradient_in_both():
    """Documented (docs/numerics.md, "noise divided by rounding noise"; core seed 1327208): the
    complex64 std of three equal values is float32 rounding noise (7e-8) in both, and its
    gradient (x - mean) / std is noise over noise: torch's backward mean rounds to x (0), and
    since the twenty-fourth session (a complex mean divides as torch's complex quotient)
    gradkit's does too."""
    def program(m):
        x = m.tensor([0.02643799 + 0.02898655j, 0.922685 + 0.84255284j], dtype=m.complex64,
                     requires_grad=True)
        std = x[[1, 1, 1]].std(0)
        return (std,) + m.autograd.grad(std, [x])
    (their_std, theirs), (my_std, mine) = program(torch), program(gradkit)
    assert 0 < my_std.item() < 1e-6 and 0 < their_std.item() < 1e-6
    assert mine[0].item() == theirs[0].item() == 0  # the element not in the std
    assert theirs[1].item() == mine[1].item() == 0


def _product_then_detach_in_place(m, shape):
    """x @ x.mT of x = stack((v, v)), then x.detach_(): the gradient of v, or the error."""
    v = m.ones(shape, dtype=m.complex64, requires_grad=True)
    x = m.stack((v, v))
    product = x @ x.transpose(-1, -2)
    x.detach_()
    try:
        return m.autograd.grad(product.abs().sum(), [v], allow_unused=True)[0]
    except RuntimeError as error:
        return str(error)


def test_detaching_a_saved_matmul_operand_in_place():
    """Documented (docs/autograd.md, "which the detach does not reach"; edge seed 1132220):
    torch's matmul of 3-D operands saves reshaped views, so detach_() of the operand does not
    reach them and backward computes; gradkit saves the operand and refuses, as torch's mm
    does for 2-D operands."""
    message = "Trying to use a saved tensor that has been detached in-place"
    theirs = _product_then_detach_in_place(torch, (1, 2))
    assert not isinstance(theirs, str) and theirs.shape == (1, 2)
    assert _product_then_detach_in_place(gradkit, (1, 2)).startswith(message)
    for m in (torch, gradkit):  # the 2-D product (x of v's shape) refuses in both
        v = m.ones((2, 2), requires_grad=True)
        x = v * 1
        product = x @ x.t()
        x.detach_()
        with pytest.raises(RuntimeError, match=message):
            product.sum().backward()


def test_complex_dot_at_inf_then_where_agrees_with_torch():
    """Special seed 1141885: the complex dot of [a, -inf] with itself is inf + nan j in torch
    (C's products summed) and was nan + nan j in NumPy's BLAS, so a where() on its real part
    picked the other side; gradkit sums C's products now (gradkit/ops/complex_products.py)."""
    def program(m):
        x = m.tensor([-0.28 + 0.125j, complex(-math.inf, 0)], dtype=m.complex128)
        product = m.matmul(x, x)
        return product, m.where(product.real > 0, x, -x)
    (their_product, theirs), (my_product, mine) = program(torch), program(gradkit)
    for product in (their_product, my_product):
        assert product.real.item() == math.inf and math.isnan(product.imag.item())
    assert theirs[0].item() == mine[0].item() == -0.28 + 0.125j


def test_float32_gelu_at_inf_then_a_backward_both_refuse():
    """Documented (docs/numerics.md, "oneDNN kernel"; mixed seed 2002663): float32 gelu of
    more than one element is NaN at +inf in torch's oneDNN kernel on AVX-512 CPUs (inf on
    AVX2 ones) and inf here; a later
    floor_divide's backward raises alike in both, so the difference stays in the values."""
    def program(m):
        x = m.tensor([0.5, math.inf], dtype=m.float32, requires_grad=True)
        y = m.nn.functional.gelu(x)
        quotient = m.floor_divide(y, y)
        with pytest.raises(RuntimeError, match="derivative for aten::floor_divide is not"):
            quotient.sum().backward()
        return y.detach()
    theirs, mine = program(torch), program(gradkit)
    # at 0.5, torch's own kernel's bits; oneDNN's AVX2 erf may round it an ulp apart
    assert mine[0].item() == torch.nn.functional.gelu(torch.tensor([0.5])).item()
    assert abs(mine[0].item() - theirs[0].item()) <= np.spacing(np.float32(mine[0].item()))
    assert mine[1].item() == math.inf  # torch's own kernel's, and its oneDNN's on AVX2 CPUs
    assert math.isnan(theirs[1].item()) if torch_float32_gelu_is_nan_at_inf() else \
        theirs[1].item() == math.inf


def test_bool_tensor_written_with_a_grad_value_then_retained_is_the_documented_wart():
    """Documented (docs/numerics.md, "leaves the integer tensor not requiring grad"; indexing
    seed 1415034): torch's bool tensor written through a mask with a value that requires grad
    requires grad, so retain_grad() runs there and the next in-place add fails on its dtype;
    gradkit's does not require grad and refuses retain_grad()."""
    def program(m):
        flags = m.tensor([False])
        flags[m.tensor([True])] = m.tensor([1 + 1j], dtype=m.complex128, requires_grad=True)
        return flags
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the complex value cast to bool
        theirs, mine = program(torch), program(gradkit)
    assert theirs.requires_grad and not mine.requires_grad
    theirs.retain_grad()
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type Bool"):
        theirs.add_(0.5)
    with pytest.raises(RuntimeError, match="can't retain_grad on Tensor that has requires_grad"):
        mine.retain_grad()
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type Bool"):
        mine.add_(0.5)


def test_view_as_complex_of_an_empty_tensor_from_numpy_is_the_documented_stride_check():
    """Documented (docs/api.md, "does not check the strides of an empty tensor"; edge seed
    1427996): torch's tensor of an empty NumPy array has strides 0, which view_as_complex
    refuses; gradkit takes it, and a later backward through a value written in place fails
    alike in both."""
    leaf = np.zeros((0, 0, 2), dtype=np.float32)
    with pytest.raises(RuntimeError, match="Tensor must have a last dimension with stride 1"):
        torch.view_as_complex(torch.tensor(leaf))
    assert gradkit.view_as_complex(gradkit.tensor(leaf)).shape == (0, 0)
    for m in (torch, gradkit):
        x = m.tensor(leaf, requires_grad=True)
        square = x.clone()
        square *= square
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            m.autograd.grad(square.sum(), [x])


def test_retain_grad_of_a_view_made_stale_by_copy_into_its_base_is_the_documented_wart():
    """Documented (docs/autograd.md, "takes the view for a leaf and ignores the call"; views
    seed 1434881): ``base.copy_(x)`` gives the base a history; torch's is_leaf then reads the
    stale grad_fn field of a view made before, so retain_grad() of that view is ignored and
    its .grad stays None; gradkit retains it. Gradients of x agree."""
    def program(m):
        x = m.tensor([1 + 1j], dtype=m.complex64, requires_grad=True)
        base = m.tensor([2 + 0j], dtype=m.complex64)
        view = base.unsqueeze(0)
        base.copy_(x)
        view.retain_grad()
        ((view * 2).abs().sum() + (base * 3).abs().sum()).backward()
        return view.grad, x.grad
    (their_view, their_x), (my_view, my_x) = program(torch), program(gradkit)
    assert their_view is None  # 2 x / |x| in gradkit: d|2 view| / d view
    np.testing.assert_allclose(my_view.numpy(), [[(2 ** 0.5) * (1 + 1j)]], rtol=1e-6)
    np.testing.assert_allclose(my_x.numpy(), their_x.numpy(), rtol=1e-6)


def test_write_into_a_view_after_its_base_was_detached_is_the_documented_difference():
    """Documented (docs/autograd.md, "gradkit keeps the view's history as of the write"; views
    seed 1448033): a write through one view gives the base a history, then base.detach_();
    torch rebuilds another view lazily from the detached base (no grad), so masked_fill_ into
    it runs; gradkit's view kept its history and refuses the write as into a view of a leaf."""
    def program(m):
        x = m.tensor(1 + 1j, dtype=m.complex128, requires_grad=True)
        base = m.tensor(2 + 0j, dtype=m.complex128)
        view = base.t()
        other = view.view_as(view)
        other *= x
        base.detach_()
        view.masked_fill_(view.real > 0, -2.0)
        return view
    theirs = program(torch)
    assert theirs.item() == -2 and not theirs.requires_grad
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is "
                                           "being used in an in-place operation"):
        program(gradkit)


def test_complex_einsum_dot_at_inf_then_a_shared_backward_error_agrees_with_torch():
    """Mixed seed 2089487: a complex batched dot (einsum) of rows with -inf entries is
    inf + nan j or -inf - inf j in torch's kernel (C's products summed), as gradkit's now (it
    was nan + nan j); a backward that finds no output requiring grad fails alike in both."""
    inf = math.inf
    rows = [[[0.26 + 0.24j, complex(-inf, 0), -0.71 - 0.66j],
             [complex(-inf, 0), 0.70 - 0.92j, complex(-inf, 0)]],
            [[0j, 0.26 + 0.29j, 0j], [0.6 + 0.17j, complex(-inf, 0), -0.59 + 0.87j]]]

    def program(m):
        x = m.tensor(rows, dtype=m.complex128, requires_grad=True)
        x.detach_()
        out = m.einsum("...i,...i->...", x.sum(-3, keepdim=True), x)
        with pytest.raises(RuntimeError, match="does not require grad"):
            out.sum().backward()
        return out
    theirs, mine = program(torch).numpy(), program(gradkit).numpy()
    assert np.isinf(theirs).any()
    for part in (np.real, np.imag):
        assert np.array_equal(part(theirs), part(mine), equal_nan=True)


def test_unbind_output_after_its_base_was_written_and_detached_is_the_documented_difference():
    """Documented (docs/autograd.md, "stays unusable after the base's `detach_()`"; views seed
    2105617): unbind's outputs of a base that required no grad, the base then written with a
    value that requires grad and detached: torch's outputs are plain tensors again; gradkit's
    stay unusable, reading grad_fn raises torch's message for such a view."""
    def program(m):
        x = m.tensor([1.5], dtype=m.float64, requires_grad=True)
        base = m.tensor([1.0, 2.0, 3.0], dtype=m.float64)
        parts = base.unbind(0)
        base.sub_(x)
        base.detach_()
        return parts
    theirs = program(torch)
    assert [(p.requires_grad, p.grad_fn) for p in theirs] == [(False, None)] * 3
    mine = program(gradkit)
    with pytest.raises(RuntimeError, match="This view is the output of a function that returns "
                                           "multiple views"):
        assert mine[0].grad_fn is None  # not reached: reading it raises


def _write_after_making_outputs(m, split: bool, requires_grad_later: bool):
    """unbind's (split's) outputs of a base that required no grad, then the base gains grad
    (a write of a value that requires grad, or requires_grad_()); the refusal's message."""
    base = m.tensor([1.0, 2.0, 3.0], dtype=m.float64)
    parts = base.split(1) if split else base.unbind(0)
    try:
        if requires_grad_later:
            base.requires_grad_()
            parts[0].mul_(2)
        else:
            base.sub_(m.tensor(2.0, dtype=m.float64, requires_grad=True))
            assert parts[0].grad_fn is None  # not reached: reading it raises
    except RuntimeError as error:
        return str(error)
    return None


@pytest.mark.parametrize("requires_grad_later", [False, True])
@pytest.mark.parametrize("split", [False, True])
def test_multi_output_views_made_without_grad_name_no_grad_mode_as_torch(split,
                                                                         requires_grad_later):
    """torch's message reads the view's grad_fn field as it was made: outputs of a base that
    required no grad then had none ("A view was created in no_grad mode"), even once the base
    requires grad; gradkit read the base's current flag and said "Output 0 of Unbind is a
    view" (found beside views seed 2105617)."""
    theirs = _write_after_making_outputs(torch, split, requires_grad_later)
    assert theirs.startswith("A view was created in no_grad mode")
    assert _write_after_making_outputs(gradkit, split, requires_grad_later) == theirs


@pytest.mark.parametrize("reduce", ["var", "std", "var_mean", "std_mean"])
@pytest.mark.parametrize("dtype", ["float64", "float32", "complex128"])
@pytest.mark.parametrize("dim", [0, (0, 2)])
def test_variance_of_equal_values_along_a_dim_is_zero_as_torchs_welford_pass(reduce, dtype,
                                                                            dim):
    """torch's Welford pass keeps the mean of equal values exact, so their variance along a
    dim is 0 (NumPy's two-pass left 2.8e-17 for std), and std's gradient there is torch's
    masked 0, its second derivative NaN (breadth seed 16983: std_mean of a bilinear's equal
    rows)."""
    def program(m):
        x = m.tensor(np.full((3, 2, 1), -0.19234415), dtype=getattr(m, dtype),
                     requires_grad=True)
        y = x * m.tensor([[[1.0], [0.7]]], dtype=x.dtype)     # equal along dim 0 only
        out = getattr(m, reduce)(y, dim, correction=0)
        out = out[0] * out[1] if isinstance(out, tuple) else out
        (g,) = m.autograd.grad(out.abs().sum(), [x], create_graph=True)
        (gg,) = m.autograd.grad(g.abs().sum(), [x], allow_unused=True, materialize_grads=True)
        return out, g, gg
    assert_same_as_torch(program)


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_variance_of_equal_values_over_everything_is_rounding_noise_in_both(dtype):
    """Reducing every dim, torch's var and std are two-pass as NumPy's: both leave noise; its
    var_mean and std_mean keep the Welford pass, 0 (breadth seed 79355)."""
    for m in (gradkit, torch):
        x = m.full((3,), -0.19234415, dtype=getattr(m, dtype))
        assert 0 < m.var(x).item() < 1e-32 and 0 < m.var(x[None], 1).item() < 1e-32
        assert m.var(x[None].expand(2, 3), 1).tolist() == [0.0, 0.0]
        assert m.var_mean(x)[0].item() == m.std_mean(x[None], 1, keepdim=True)[0].item() == 0


def test_fft_zero_sign_through_a_branch_cut_is_known():
    """Known difference (docs/numerics.md, "a branch cut after it"; breadth seed 15820):
    pocketfft's rfft leaves +0j where torch's MKL leaves -0j, so float_power of that negative
    real number gives the conjugate of torch's."""
    def transform(m):
        spectrum = m.fft.rfft(m.tensor([-0.3, 0.0, 0.0, 0.0, 0.0], dtype=m.float64))
        return spectrum.resolve_conj().numpy(), m.float_power(spectrum, -2.5).numpy()
    (mine, mine_power), (theirs, their_power) = transform(gradkit), transform(torch)
    np.testing.assert_array_equal(mine, theirs)                  # equal as numbers
    assert np.signbit(mine.imag).tolist() == [False, False, False]
    assert np.signbit(theirs.imag).tolist() == [False, True, False]
    np.testing.assert_allclose(mine_power[::2], their_power[::2])
    np.testing.assert_allclose(mine_power[1], np.conj(their_power[1]))
    assert abs(mine_power[1].imag) > 1
    program = Program("breadth", (Leaf((1,), "float64", True),), (
        Step("b_diag", (0,), {"k": 0}),
        Step("fft_ihfft", (1,), {"dim": -2, "n": 5, "norm": "backward"}),
        Step("e2_float_power_scalar", (2,), {"s": -2.5})), False, 15820)
    problems, known = diff_program(program)
    assert problems and known == "the sign of a zero imaginary part an FFT leaves, through a " \
        "branch cut"


@pytest.mark.parametrize("pool", [
    lambda m, x: m.nn.functional.max_pool1d(x, 2),
    lambda m, x: m.nn.functional.max_unpool1d(*m.nn.functional.max_pool1d(
        x, 2, return_indices=True), 2, output_size=(5,)),
    lambda m, x: m.nn.functional.adaptive_max_pool1d(x, 3),
    lambda m, x: m.nn.functional.max_pool2d(x.unsqueeze(0), (1, 2), padding=(0, 1)),
    lambda m, x: m.nn.functional.max_pool3d(x.unsqueeze(0).unsqueeze(0), (1, 1, 2)),
], ids=["max_pool1d", "max_unpool1d", "adaptive", "max_pool2d_padded", "max_pool3d"])
def test_max_pool_backward_reads_its_input_with_a_zero_derivative(pool):
    """torch's max-pooling backward takes the input and differentiates as zeros_like(self)
    there: with create_graph the gradient requires grad, and a second derivative through it
    is 0 times what came before (NaN after `inf - inf * x`; breadth seed 15309: gradkit's
    gradient had no graph, so no second derivative)."""
    def program(m):
        x = m.tensor([[[0.3, 0.5, -1.0, 2.0]]], dtype=m.float64, requires_grad=True)
        outs = []
        for scale in (2.0, math.inf):
            y = m.rsub(x, x, alpha=scale)
            (g,) = m.autograd.grad(pool(m, y).sum(), [x], create_graph=True)
            assert g.requires_grad
            (gg,) = m.autograd.grad((g * g.detach().nan_to_num()).sum(), [x])
            outs += [g, gg]
        return tuple(outs)
    assert_same_as_torch(program)


@pytest.mark.parametrize("mask", [None, "bool", "float"])
def test_attention_row_of_minus_inf_scores_weighs_nothing_as_torchs_safe_softmax(mask):
    """A row whose scores are all -inf because of the values (an infinite query), not only
    the mask, reads 0 with zero score gradients as torch's safe softmax and CPU flash kernel;
    a key gradient meeting the infinite query is NaN in both (breadth seed 19417: fused
    attention at an infinite input was NaN here)."""
    def program(m):
        q = m.tensor([[[math.inf, 1.0], [0.5, 0.2], [-math.inf, 0.0]]], dtype=m.float64,
                     requires_grad=True)
        k = m.tensor([[[-1.0, 0.3], [-2.0, 0.1], [-0.5, 0.4]]], dtype=m.float64,
                     requires_grad=True)
        v = m.tensor([[[2.0, 1.0], [3.0, -1.0], [0.5, 0.25]]], dtype=m.float64,
                     requires_grad=True)
        allowed = m.tensor([[True, False, True]] * 3)
        attn_mask = {None: None, "bool": allowed,
                     "float": m.where(allowed, 0.0, -math.inf).to(m.float64)}[mask]
        out = m.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask)
        return (out,) + m.autograd.grad((out * m.tensor([1.0, -2.0])).sum(), [q, k, v])
    assert_same_as_torch(program)


def test_max_unpool_of_attention_rows_equal_in_exact_arithmetic_agrees():
    """nn_new seed 1686: float32 attention rows that are equal in exact arithmetic come out
    one ulp apart in torch, so max pooling picks another element of the tie and max_unpool
    places it elsewhere. It was the Known "turn a last-bit difference" while gradkit's
    batched products fused their multiply-adds; they are torch's small bmm loop now, so the
    rows are torch's bit for bit and the program agrees."""
    program = Program("nn_new", (Leaf((), "float32", True),), (
        Step("f_multi_head_attention", (0, 0), {
            "heads": 2, "head_dim": 2, "tgt": 3, "src": 3, "batch": 1, "mask": "float",
            "padding": "none", "need_weights": False, "average": True, "zero_attn": False,
            "bias_kv": False, "separate": False, "in_bias": False}),
        Step("f_max_unpool", (1,), {"d": 1, "shape": (1, 1, 12), "kernel": 3, "stride": 2,
                                    "padding": 0, "extra": 1})), False, 1686)
    mine, theirs = run(program, gradkit), run(program, torch)
    assert np.array_equal(mine.values[1], theirs.values[1])
    assert diff_program(program) == ([], None)
    # exactly equal inputs are no excuse: a tie broken otherwise there is a mismatch
    same = Result(None, [np.ones(3, np.float32)], [False], [0], [], [])
    assert not _agree_but_for_rounding(Step("f_max_unpool", (0,), {}), same, same)


def test_gradient_through_ctc_of_constant_log_softmax_rows_is_rounding_noise_in_both():
    """Known difference (docs/numerics.md, "of a row of equal values is rounding noise"; nn_new
    seed 1894): one value tiled into every log-probability has the gradient
    sum(g) * (1 - sum(softmax)), 0 but for rounding, which each side rounds apart."""
    def grads(m):
        x = m.tensor(0.4075, dtype=m.float32, requires_grad=True)
        log_probs = x.reshape(1).repeat(16).reshape(4, 1, 4).log_softmax(-1)
        loss = m.nn.functional.ctc_loss(log_probs, m.tensor([[0, 0]]), m.tensor([4]),
                                        m.tensor([2]), blank=3, reduction="sum")
        (g,) = m.autograd.grad(loss * 1e8, [x])
        return loss.item(), g.item()
    (mine, g_mine), (theirs, g_theirs) = grads(gradkit), grads(torch)
    assert mine == pytest.approx(theirs, rel=1e-6)
    assert abs(g_mine) <= 1e8 * 1e-6 and abs(g_theirs) <= 1e8 * 1e-6   # noise, scaled by 1e8
    program = Program("nn_new", (Leaf((), "complex64", True), Leaf((), "int64", False)), (
        Step("f_ctc_loss", (0,), {
            "steps": 4, "batch": 1, "classes": 4, "blank": 3, "targets": [[0, 0]],
            "lengths": [2], "inputs": [4], "padded": True, "as_tensors": True,
            "reduction": "sum", "zero_infinity": True}),
        Step("f_embedding_bag", (2, 2), {
            "num": 1, "dim": 2, "mode": "sum", "weighted": True, "padding_idx": None,
            "indices": [[0, 0], [0, 0], [0, 0]], "offsets": None, "last": False}),
        Step("exp", (3,), {})), False, 1894, True)
    problems, known = diff_program(program)
    assert not problems or known == \
        "the gradient through ctc_loss of constant log_softmax rows is rounding noise"


@pytest.mark.parametrize("loss", ["multi_margin_loss", "multilabel_margin_loss"])
@pytest.mark.parametrize("dtype", ["complex128", "int64", "bool"])
@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("requires_grad", [False, True])
def test_margin_loss_of_an_empty_batch_checks_no_dtype_as_torch(loss, dtype, reduction,
                                                               requires_grad):
    """torch's margin-loss kernels (and their dtype checks) run for a non-empty batch only:
    an empty complex or integral batch computes a loss of its dtype (its sum and mean are
    torch's uninitialized memory, so only their dtype and shape are compared), and a complex
    one that requires grad is refused by autograd (breadth seed 66947)."""
    if requires_grad and dtype != "complex128":
        pytest.skip("only floating tensors require grad")

    def program(m):
        x = m.zeros((0, 3), dtype=getattr(m, dtype), requires_grad=requires_grad)
        target = m.zeros((0,) if loss == "multi_margin_loss" else (0, 3), dtype=m.int64)
        out = getattr(m.nn.functional, loss)(x, target, reduction=reduction)
        return (out if reduction == "none" else m.tensor(out.shape), m.tensor(out.requires_grad),
                m.zeros(1, dtype=out.dtype))
    assert_same_as_torch(program)
    # a non-empty batch of those dtypes is refused by the kernel, in both
    with pytest.raises(NotImplementedError, match="not implemented for"):
        getattr(gradkit.nn.functional, loss)(
            gradkit.zeros((2, 3), dtype=getattr(gradkit, dtype)),
            gradkit.zeros((2,) if loss == "multi_margin_loss" else (2, 3), dtype=gradkit.int64))


def test_known_differences_read_a_corrcoef_of_a_0d_tensor():
    """corrcoef of corrcoef's 0-d result: the known-difference check reads it as one variable
    of one observation (breadth seed 67629 stopped the run with an AxisError)."""
    program = Program("breadth", (Leaf((2,), "float64", False),), (
        Step("e2_corrcoef", (0,), {}), Step("e2_corrcoef", (1,), {})), False, 67629)
    mine, theirs = run(program, gradkit), run(program, torch)
    assert known_difference(program, mine, theirs).startswith("corrcoef")  # one value: c / c
    for m in (gradkit, torch):
        inner = m.corrcoef(m.tensor([0.97566785, -0.7538094], dtype=m.float64))
        assert inner.item() == 1.0 and math.isnan(m.corrcoef(inner).item())


@pytest.mark.parametrize("n", [-1, -2, 1])
def test_matrix_power_minus_one_is_the_saved_inverse_itself(n):
    """torch's matrix_power(x, -1) returns linalg.inv's result itself, which its node saves:
    writing into it before backward is refused (breadth seed 68357: gradkit cloned it)."""
    def program(m):
        x = m.tensor([[2.0, 1.0 - 1j], [0.5j, 3.0]], dtype=m.complex128, requires_grad=True)
        y = m.linalg.matrix_power(x, n)
        name = y.grad_fn.name()
        y.mul_(2)
        return (m.tensor(len(name)),) + m.autograd.grad(y.abs().sum(), x)
    if n != -1:
        assert_same_as_torch(program)
        return
    _both_refuse_the_write(program, match="modified by an inplace operation: .*which is "
                                          "output 0 of LinalgInvEx")


@pytest.mark.parametrize("pool", [
    lambda m, x: m.nn.functional.avg_pool1d(x, 2),
    lambda m, x: m.nn.functional.avg_pool2d(x.unsqueeze(0), (1, 2), padding=(0, 1),
                                            divisor_override=3),
    lambda m, x: m.nn.functional.avg_pool3d(x.unsqueeze(0).unsqueeze(0), (1, 1, 2),
                                            count_include_pad=False),
    lambda m, x: m.nn.functional.lp_pool1d(x, 2.0, 2),
    lambda m, x: m.nn.functional.adaptive_avg_pool1d(x, 3),
    lambda m, x: m.nn.functional.adaptive_avg_pool2d(x, (1, 2)),
    lambda m, x: m.nn.functional.adaptive_avg_pool3d(x.unsqueeze(0), 1),
], ids=["avg_pool1d", "avg_pool2d", "avg_pool3d", "lp_pool1d", "adaptive_avg_pool1d",
        "adaptive_avg_pool2d", "adaptive_avg_pool3d_to_one"])
def test_average_pooling_backward_reads_its_input_with_a_zero_derivative(pool):
    """torch's avg_pool backward takes the input with a zero derivative, as max pooling's
    (adaptive too, but for one output per plane, which is a mean): a second derivative through
    it is 0 times what came before, NaN after `x * inf` (breadth seed 68854: gradkit's
    composed pooling had no such edge)."""
    def program(m):
        x = m.tensor([[[0.3, 0.5, -1.0, 2.0]]], dtype=m.float64, requires_grad=True)
        outs = []
        for scale in (2.0, math.inf):
            (g,) = m.autograd.grad(pool(m, x * scale).sum(), [x], create_graph=True)
            gg = m.autograd.grad((g * g.detach().nan_to_num()).sum(), [x], allow_unused=True,
                                 materialize_grads=True)[0] if g.requires_grad else m.zeros(1)
            outs += [g, m.tensor(g.requires_grad), gg]
        return tuple(outs)
    assert_same_as_torch(program)


@pytest.mark.parametrize("size", [3, 1])
def test_average_pooling_refuses_a_write_into_its_input_before_backward(size):
    """The same saved input: a write into it before backward is refused, as torch's (not for
    an adaptive pool to one element, torch's mean, which saves nothing)."""
    def program(m):
        x = m.tensor([[[0.3, 0.5, -1.0, 2.0]]], dtype=m.float64, requires_grad=True)
        base = x * 1
        out = m.nn.functional.adaptive_avg_pool1d(base, size).sum()
        if size > 1:
            out = out + m.nn.functional.avg_pool1d(base, 2).sum()
        base.mul_(2)
        return m.autograd.grad(out.sum(), [x])
    if size == 1:
        assert_same_as_torch(program)
        return
    _both_refuse_the_write(program)


@pytest.mark.parametrize("matrix", [
    [[4.0, 1.0], [3.0, 5.0]],                                # not symmetric: the upper is read
    [[2.0, 1 - 1j], [1 + 1j, 3.0]],
    [[4.0, 1 - 2j], [3 + 1j, 5.0]],
], ids=["real", "hermitian", "complex"])
@pytest.mark.parametrize("upper", [False, True])
def test_upper_cholesky_factors_the_upper_triangle_with_potrfs_zero_signs(matrix, upper):
    """torch's upper Cholesky factor is LAPACK potrf('U') of x's upper triangle: its zeros are
    +0j (gradkit conjugated the lower factor: -0j, which atanh's branch cut turned into the
    conjugate; breadth seed 70864), and a non-Hermitian x's upper triangle is the one read."""
    dtype = "complex128" if any(isinstance(v, complex) for row in matrix for v in row) \
        else "float64"

    def program(m):
        x = m.tensor(matrix, dtype=getattr(m, dtype), requires_grad=True)
        factor = m.linalg.cholesky(x, upper=upper)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            legacy = m.cholesky(x, upper=upper)
        parts = [factor.real, factor.imag] if factor.is_complex() else [factor]
        (g,) = m.autograd.grad((factor.abs() * m.tensor([[1.0, 0.5], [-0.3, 2.0]])).sum(), [x])
        return tuple(p.detach() for p in parts) + (legacy.detach(),), g.resolve_conj().numpy()
    assert_same_as_torch(lambda m: program(m)[0])
    # the gradients agree to rounding (a Hermitian diagonal's imaginary part is 1e-17 noise)
    np.testing.assert_allclose(program(gradkit)[1], program(torch)[1], atol=1e-12)
    program = Program("breadth", (Leaf((), "complex128", True),), (
        Step("fb_cholesky_legacy", (0,), {"n": 1, "flag": True, "flag2": False}),
        Step("fb_atanh_", (1,), {})), False, 70864, True)
    assert diff_program(program) == ([], None)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("sizes", [(1, 5), (2, 10), (3, 7), (7, 29), (13, 17)])
def test_linear_resampling_weights_are_torchs_at_an_infinite_input(dtype, sizes):
    """torch's source index is `scale * (dst + 0.5) - 0.5` rounded once (its compiled fma,
    in float32 for float32 input), the index floorf's: a weight of 3e-17 where gradkit's was
    0 (or the reverse) decides between inf and 0 * inf = NaN (breadth seed 70839)."""
    n_in, n_out = sizes

    def program(m):
        x = m.tensor(np.linspace(-1.0, 2.0, n_in), dtype=getattr(m, dtype), requires_grad=True)
        y = x * m.tensor([1.0] * (n_in - 1) + [math.inf], dtype=x.dtype)
        out = m.nn.functional.interpolate(y.reshape(1, 1, -1), size=n_out, mode="linear")
        grid = m.nn.functional.interpolate(y.reshape(1, 1, 1, -1).expand(1, 1, 2, n_in),
                                           size=(3, n_out), mode="bilinear")
        (g,) = m.autograd.grad(out.sum() + grid.sum(), [x])
        return out, grid, g
    assert_same_as_torch(program, rtol=1e-5)


def test_nearest_grid_gradient_into_ctc_double_backward_is_known():
    """Known difference (docs/numerics.md, "walks through it into the nodes before"; nn_new
    seeds 8461, 13569): torch's zero grid gradient of nearest grid_sample is its backward
    node's output, so differentiating it again reaches ctc_loss's backward, which has no
    derivative; gradkit's zero has no graph."""
    def grid_gradient(m):
        image = m.tensor([[[[0.3, -0.2, 0.5]]]], dtype=m.float64)
        grid = m.tensor([[[[0.1, 0.0], [0.7, 0.2]], [[-0.6, 0.1], [0.3, -0.4]]]],
                        dtype=m.float64, requires_grad=True)
        sampled = m.nn.functional.grid_sample(image, grid, mode="nearest", align_corners=True)
        log_probs = sampled.reshape(4, 1, 1).expand(4, 1, 3).log_softmax(-1)
        loss = m.nn.functional.ctc_loss(log_probs, m.tensor([[1]]), m.tensor([4]),
                                        m.tensor([1]), reduction="sum")
        return grid, m.autograd.grad(loss, [grid], create_graph=True)[0]
    grid, mine = grid_gradient(gradkit)
    assert not mine.requires_grad and not mine.numpy().any()
    grid, theirs = grid_gradient(torch)
    assert theirs.requires_grad and not theirs.detach().numpy().any()
    with pytest.raises(RuntimeError, match="derivative for aten::_ctc_loss_backward is not"):
        torch.autograd.grad(theirs.sum(), [grid])
    program = Program("nn_new", (Leaf((), "float64", True), Leaf((), "float64", False)), (
        Step("f_grid_sample", (1, 0), {
            "shape": (1, 1, 1, 1), "affine": True, "out": (1, 3), "mode": "nearest",
            "padding_mode": "zeros", "align_corners": True}),
        Step("f_ctc_loss", (2,), {
            "steps": 4, "batch": 1, "classes": 4, "blank": 0, "targets": [[2]], "lengths": [1],
            "inputs": [3], "padded": False, "as_tensors": True, "reduction": "none",
            "zero_infinity": True})), True, 13569, True)
    problems, known = diff_program(program)
    assert problems and known.startswith("nearest grid_sample's zero grid gradient has no graph")


def test_householder_product_that_overflows_is_known():
    """Known difference (docs/numerics.md, "which entries end as `inf` and which as NaN";
    breadth seed 76674): float32 reflectors of count values overflow in both routines; the
    finite entries agree, the non-finite ones are inf in one and NaN in the other."""
    program = Program("breadth", (Leaf((3, 2, 3), "float32", True),), (
        Step("b_count_nonzero", (0,), {"dim": 1, "keepdim": True}),
        Step("e_meshgrid", (1, 1), {"indexing": "ij"}),
        Step("l_householder_product", (2,), {"n": 18})), True, 76674, True)
    mine, theirs = run(program, gradkit), run(program, torch)
    a, b = mine.values[3], theirs.values[3]
    finite = np.isfinite(a) & np.isfinite(b)
    np.testing.assert_allclose(a[finite], b[finite], rtol=1e-4)
    assert np.array_equal(np.isfinite(a), np.isfinite(b)) and not np.isfinite(b).all()
    problems, known = diff_program(program)
    assert not problems or known.startswith("a LAPACK routine of a non-finite matrix")


@pytest.mark.parametrize("value", [0.5, math.nan, math.inf, -0.0])
@pytest.mark.parametrize("shape", [(), (3,)])
def test_dropout_of_everything_differentiates_a_0d_input(value, shape):
    """dropout(p=1) multiplies by a 0-d NumPy scale, which promotion wraps in an ndarray
    subclass: its backward took that for a CuPy array and asked for CUDA (nn_new seed 14879)."""
    def program(m):
        x = m.full(shape, value, dtype=m.float64, requires_grad=True)
        out = m.nn.functional.dropout(x, p=1.0, training=True)
        out.sum().backward()
        return out, x.grad
    assert_same_as_torch(program)
    assert get_array_module(np.asarray(2.0).view(NumpyOperand)) is np


@pytest.mark.parametrize("bag", [[1, 0, 0], [0, 1, 2], [2, 0, 1], [0, 0], [3, 1, 3], [4, 2]])
def test_embedding_bag_max_counts_a_nan_only_as_the_first_row(bag):
    """torch's max bag starts from its first row and takes a strictly greater one, so a NaN
    wins only as the first row (nn_new seed 14712: gradkit's max propagated every NaN)."""
    def program(m):
        weight = m.tensor([[math.nan, 1.0], [0.5, math.nan], [2.0, -1.0], [-math.inf, -math.inf],
                           [0.0, -0.0]], dtype=m.float64, requires_grad=True)
        out = m.nn.functional.embedding_bag(m.tensor([bag]), weight, mode="max")
        aten = m.embedding_bag(weight.detach(), m.tensor(bag), m.tensor([0]), mode=2)
        return (out, aten[0], aten[3]) + m.autograd.grad((out * m.tensor([1.0, -2.0])).sum(),
                                                          [weight])
    assert_same_as_torch(program)


@pytest.mark.parametrize("inplace", [False, True])
def test_leaky_relu_backward_reads_its_input_with_a_zero_derivative(inplace):
    """torch's leaky_relu_backward keeps an edge to x whose derivative is zero, as relu's and
    hardtanh's: a second derivative through it is 0 times what came before, NaN after an
    infinite factor (found beside breadth seed 68854's average pooling)."""
    def program(m):
        x = m.tensor([0.5, -0.3, 2.0], dtype=m.float64, requires_grad=True)
        outs = []
        for scale in (2.0, math.inf):
            y = x * scale
            out = m.nn.functional.leaky_relu(y, 0.2, inplace=inplace)
            (g,) = m.autograd.grad(out.sum(), [x], create_graph=True)
            (gg,) = m.autograd.grad((g * g.detach()).sum(), [x])
            outs += [g, gg]
        return tuple(outs)
    assert_same_as_torch(program)


def test_complex_linear_at_inf_is_the_blas_wart():
    """Known difference (docs/numerics.md, "BLAS kernel computes"; breadth seed 78482):
    linear(x, x) of a complex column with -inf is x @ x^T, a BLAS product: its finite entries
    agree, and which non-finite ones are inf and which NaN is each kernel's."""
    def outer(m):
        x = m.tensor([[0.3 + 0.6j], [complex(-math.inf, 0)], [0.5 - 0.1j]], dtype=m.complex128)
        return m.nn.functional.linear(x, x).numpy()
    mine, theirs = outer(gradkit), outer(torch)
    finite = np.isfinite(mine) & np.isfinite(theirs)
    np.testing.assert_allclose(mine[finite], theirs[finite])
    assert np.array_equal(finite, np.isfinite(theirs)) and not finite.all()
    assert np.isnan(theirs[1]).all() and np.isinf(mine[1, 0])   # torch's gemm: the row NaN
    program = Program("breadth", (Leaf((3,), "complex128", True, True),
                                  Leaf((), "complex128", False)), (
        Step("s_combinations", (0,), {"r": 1, "with_replacement": True}),
        Step("b_linear", (2, 2), {})), False, 78482)
    problems, known = diff_program(program)
    assert not problems or known == \
        "complex matmul with infinite entries: inf or NaN as the BLAS kernel computes"


def test_float32_std_of_equal_values_over_everything_is_known_rounding_noise():
    """Known difference (docs/numerics.md, "noise divided by rounding noise"; breadth seed
    83455): torch's float32 two-pass std of six equal values is 6.5e-8 (its mean rounded),
    NumPy's is 0, so the gradients through it are noise (or torch's masked 0) apart."""
    def std(m):
        x = m.full((1, 1, 3, 2), 0.74034256, dtype=m.float32)
        return m.std(x, dim=(-3, -2, -1), correction=1).item()
    assert 0 <= std(gradkit) < 1e-6 and 0 <= std(torch) < 1e-6
    program = Program("breadth", (Leaf((), "float32", True),), (
        Step("f_grid_sample", (0, 0), {"shape": (1, 1, 1, 1), "affine": False, "out": (3, 2),
                                       "mode": "bilinear", "padding_mode": "reflection",
                                       "align_corners": True}),
        Step("e_logaddexp2", (0, 1), {}),
        Step("b_std", (2,), {"dim": (-3, -2, -1), "keepdim": False, "correction": 1})),
        True, 83455)
    problems, known = diff_program(program)
    assert not problems or known == \
        "the gradient of std at elements equal but for rounding is noise over noise"


@pytest.mark.parametrize("scatter", [
    lambda m, x: m.select_scatter(x, x.select(1, 0) * 10, 1, 0),
    lambda m, x: m.slice_scatter(x, x[:1] * 10, 0, 0, 1),
    lambda m, x: m.diagonal_scatter(x, x.diagonal() * 10),
], ids=["select", "slice", "diagonal"])
def test_scatter_into_an_overlapping_view_is_known(scatter):
    """Known difference (docs/numerics.md, "its `clone_preserve_strides`"; breadth seed 83197):
    torch's view scatters clone an overlapping view with its strides, so the scattered values
    land on aliased elements; gradkit's result is dense and holds exactly what was scattered."""
    def view_of(m):
        return m.arange(9.0, dtype=m.float64).as_strided((3, 2), (1, 1), 1)
    mine, theirs = scatter(gradkit, view_of(gradkit)), scatter(torch, view_of(torch))
    dense = scatter(torch, view_of(torch).contiguous())   # torch's, of a dense copy
    assert mine.stride() == (2, 1) and theirs.stride() == (1, 1)
    assert mine.tolist() == dense.tolist() != theirs.tolist()
    assert _scatter_known()


def _scatter_known() -> bool:
    program = Program("breadth", (Leaf((), "float64", True), Leaf((1,), "float64", True)), (
        Step("f_grid_sample", (1, 1), {
            "shape": (1, 1, 1, 1), "affine": True, "out": (3, 3), "mode": "bilinear",
            "padding_mode": "border", "align_corners": True}),
        Step("fb_as_strided_", (2,), {"size": (3, 3, 2), "stride": (1, 2, 1), "offset": 1}),
        Step("s_select_scatter", (3,), {"dim": -1, "index": -2})), False, 83197, True)
    problems, known = diff_program(program)
    return not problems or known == \
        "select/slice/diagonal_scatter of an overlapping view: torch keeps the overlap"


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular", "constant"])
def test_padding_backward_reads_its_input_as_torchs(mode):
    """torch's reflection and replication pads save the input and differentiate their
    backward as zeros_like(self) there (circular and constant pads do not): a second
    derivative after `x * inf` is NaN, and a write into the input before backward is refused
    (found beside breadth seed 68854's average pooling)."""
    def program(m):
        x = m.tensor([0.5, -0.3, 0.7], dtype=m.float64, requires_grad=True)
        outs = []
        for scale in (2.0, math.inf):
            out = m.nn.functional.pad((x * scale).reshape(1, 1, -1), (2, 1), mode=mode)
            (g,) = m.autograd.grad(out.sum(), [x], create_graph=True)
            gg = m.autograd.grad(g.sum(), [x])[0] if g.requires_grad else m.zeros(3)
            outs += [g, m.tensor(g.requires_grad), gg]
        base = x * 1
        out = m.nn.functional.pad(base.reshape(1, 1, -1), (1, 1), mode=mode)
        base.mul_(2)
        try:
            outs.append(m.autograd.grad(out.sum(), [x])[0])
        except RuntimeError as error:
            outs.append(m.tensor("modified by an inplace operation" in str(error)))
        return tuple(outs)
    assert_same_as_torch(program)


@pytest.mark.parametrize("norm", [
    lambda m, t: m.nn.functional.group_norm(t, 1),
    lambda m, t: m.nn.functional.batch_norm(t, None, None, training=True),
    lambda m, t: m.nn.functional.batch_norm(t, m.zeros(1, dtype=t.dtype), m.ones(1, dtype=t.dtype),
                                            training=False),
    lambda m, t: m.nn.functional.instance_norm(t),
    lambda m, t: m.native_group_norm(t, None, None, 2, 1, 3, 1, 1e-5)[0],
], ids=["group_norm", "batch_norm", "batch_norm_eval", "instance_norm", "native_group_norm"])
@pytest.mark.parametrize("write", [False, True])
def test_composed_norms_refuse_a_write_into_their_input_before_backward(norm, write):
    """torch's fused normalization nodes save the input: a write into it before backward is
    refused (breadth seed 85905: gradkit's composition saved only derived tensors)."""
    def program(m):
        x = m.tensor([[[1.0, 2.0, 4.0]], [[0.5, -1.0, 3.0]]], dtype=m.float64,
                     requires_grad=True)
        base = x * 1
        out = norm(m, base)
        if write:
            base.mul_(2)
        return m.autograd.grad((out * m.tensor([1.0, -2.0, 0.5])).sum(), [x])
    if not write:
        assert_same_as_torch(program)
        return
    _both_refuse_the_write(program)


@pytest.mark.parametrize("solver", ["solve", "solve_ex"])
@pytest.mark.parametrize("which", ["a", "b"])
def test_solve_refuses_a_write_into_its_result_for_either_gradient(solver, which):
    """torch's solve node saves its result whichever input needs a gradient: a write into
    the result before backward is refused even when only B requires grad (breadth seed
    86047: gradkit kept the result only for A's gradient)."""
    def program(m, write):
        a = m.tensor([[2.0, 0.5], [0.25, 3.0]], dtype=m.float64, requires_grad=which == "a")
        b = m.tensor([[0.5, 1.5], [-1.0, 2.0]], dtype=m.float64, requires_grad=which == "b")
        x = getattr(m.linalg, solver)(a, b)
        x = x[0] if solver == "solve_ex" else x
        if write:
            x.transpose_(-1, -1)
        return m.autograd.grad((x * x.detach()).sum(), [a if which == "a" else b])
    assert_same_as_torch(lambda m: program(m, False))
    _both_refuse_the_write(program, True)


@pytest.mark.parametrize("detached", ["batch1", "batch2"])
def test_bmm_saves_its_operands_themselves(detached):
    """torch's bmm is its own op: BmmBackward0 saves self and mat2 themselves, so a leaf
    detached in place after it comes back without history and the other operand's
    create_graph gradient has no graph (gradkit recorded a batched matmul, whose saved views
    reattached the leaf)."""
    def program(m):
        b1 = m.tensor([[[1.0, 2.0], [3.0, 4.0]]], dtype=m.float64, requires_grad=True)
        b2 = m.tensor([[[1.0, -1.0], [0.5, 2.0]]], dtype=m.float64, requires_grad=True)
        out = m.bmm(b1, b2)
        node = out.grad_fn
        saved = (node.name(), node._saved_self is b1, node._saved_mat2 is b2)
        gone, kept = (b1, b2) if detached == "batch1" else (b2, b1)
        gone.detach_()
        (g,) = m.autograd.grad(out.sum(), [kept], create_graph=True)
        return g, m.tensor(g.requires_grad), m.tensor(saved == ("BmmBackward0", True, True))
    assert_same_as_torch(program)


def test_bmm_double_backward_records_torchs_nodes():
    """torch's bmm gradients are bmm's of the other operand's transposed conjugate."""
    def nodes(m):
        a = m.ones(2, 2, 3, dtype=m.complex128, requires_grad=True)
        b = m.ones(2, 3, 4, dtype=m.complex128, requires_grad=True)
        grads = m.autograd.grad(m.bmm(a, b).abs().sum(), (a, b), create_graph=True)
        return [(g.grad_fn.name(), [n.name() if n else None for n, _ in g.grad_fn.next_functions])
                for g in grads]
    assert nodes(gradkit) == nodes(torch)


@pytest.mark.parametrize("dtype", ["uint16", "uint32", "uint64"])
def test_bmm_of_wide_unsigned_names_torchs_kernel(dtype):
    """torch's bmm kernel refuses the wide unsigned types under its own name, "bmm"."""
    def program(m):
        return m.bmm(m.ones(1, 2, 2, dtype=getattr(m, dtype)), m.ones(1, 2, 2,
                                                                     dtype=getattr(m, dtype)))
    assert_same_as_torch(program)


@pytest.mark.parametrize("detached", ["x", "y"])
def test_outer_saves_what_torchs_saves(detached):
    """torch's outer is ``x.reshape(n, 1) * y``: y is saved itself (detached in place, it
    comes back without history: x's create_graph gradient has no graph), x as a view (its
    history still reaches x's accumulator). gradkit unsqueezed both."""
    def program(m):
        x = m.tensor([1.0, 2.0], dtype=m.float64, requires_grad=True)
        y = m.tensor([3.0, -1.0, 2.0], dtype=m.float64, requires_grad=True)
        out = m.outer(x, y)
        gone, kept = (x, y) if detached == "x" else (y, x)
        gone.detach_()
        (g,) = m.autograd.grad(out.sum(), [kept], create_graph=True)


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("keepdim", [False, True])
def test_complex_logsumexp_gradient_with_a_nan_part_in_the_result(create_graph, keepdim):
    """torch's logsumexp backward is ``exp(x - result)``, and its complex sub multiplies the
    result by 1 + 0j: a result of inf + nan j makes every element's gradient NaN (main seed
    1562005: gradkit's raw-array backward subtracted plainly and gave 0 for finite x)."""
    def program(m):
        x = m.tensor([[complex(-0.4, 0.7), complex(math.inf, math.nan), complex(0.5, -1.0)]],
                     dtype=m.complex128, requires_grad=True)
        out = m.logsumexp(x, 1, keepdim=keepdim)
        (g,) = m.autograd.grad(out.real.sum(), [x], create_graph=create_graph)
        return out, g
    assert_same_as_torch(program)


def test_sine_of_a_huge_argument_one_ulp_apart_is_the_documented_rounding_step():
    """Documented (docs/numerics.md, "turn a last-bit difference"; dtypes seeds 1585067,
    2227027 and 2717347): float32 exp(exp(5) / 2) is 1.7e32, where torch's exp is one ulp
    from NumPy's; one ulp there is 1e25, so the sines of the two are unrelated numbers (in
    both alike)."""
    def program(m):
        x = m.tensor(1.6885295e32, dtype=m.float32)
        return m.sin(x), m.sin(m.nextafter(x, m.tensor(math.inf)))
    assert_same_as_torch(program)
    mine = program(gradkit)
    assert abs(mine[0].item() - mine[1].item()) > 0.1
    x_mine, x_theirs = (m.exp(m.exp(m.tensor(5, dtype=m.uint8)) * 0.5).item()
                        for m in (gradkit, torch))
    assert abs(x_mine - x_theirs) <= float(np.spacing(np.float32(x_mine)))
    # 2227027: sin(4 ** exp(2)), 28096.67 against .69; 2717347: |x| ** y at y ~ 1e23, whose
    # phase Im(y log |x|) ~ 2.5e22 follows |x|'s last bit
    for seed in (1585067, 2227027, 2717347):
        problems, known = diff_program(generate(RandomDrawer(seed)))
        assert known == "a step that turns a rounding difference of its input into another " \
            "number" or not problems


def test_pow_result_written_by_a_complex_overflow_refuses_backward_as_torch():
    """Mixed seed 1666399: torch's x ** y saves its result even when y needs no gradient, so
    a later exp_() of it fails backward, in torch and in gradkit (once a documented
    difference: gradkit differentiated). The exp_ overflows: exp(a + bj) with b ~ -2.6e18 is
    inf * cis(b), whose signs are rounding noise (a known rounding step)."""
    def program(m, write):
        x = m.tensor([6.8539815 + 0.4570272j], dtype=m.complex64, requires_grad=True)
        y = (x * x).detach()
        out = (x.abs() + 0.5) ** (y * 0.5)
        if write:
            out.mul_(0.5).exp_()
        return out, m.autograd.grad(out.real.sum(), [x])[0]
    assert_same_as_torch(lambda m: program(m, False), rtol=1e-4)  # exp(y log x), y log x ~ 47
    _both_refuse_the_write(program, True, match="which is output 0 of Pow1, is at version")
    # the fuzz program's exp_ of the power, |.| cis(Im ~ 1e18): signs of rounding noise
    problems, known = diff_program(generate(RandomDrawer(1666399)))
    assert known == "a step that turns a rounding difference of its input into another " \
        "number" or not problems


def test_retain_grad_of_a_view_made_before_its_base_requires_grad_is_documented():
    """Documented (docs/autograd.md, "made before its base's `requires_grad_()`) has"; views
    seed 1669961): such a view requires grad in torch, as a leaf whose retain_grad() is a
    no-op; gradkit's does not require grad, so its retain_grad() raises."""
    def make(m):
        base = m.tensor(0.5 + 0.75j, dtype=m.complex64)
        view = base.reshape(-1)
        base.requires_grad_()
        return base, view
    base, view = make(torch)
    assert view.requires_grad and view.is_leaf
    view.retain_grad()
    (view * 2).real.sum().backward()
    assert view.grad is None and base.grad is None
    base, view = make(gradkit)
    assert not view.requires_grad
    with pytest.raises(RuntimeError,
                       match="can't retain_grad on Tensor that has requires_grad=False"):
        view.retain_grad()
    problems, known = diff_program(generate(RandomDrawer(1669961), "views"))
    assert known == "a view made before its base's requires_grad_() does not require grad" \
        or not problems


@pytest.mark.parametrize("shapes", [((1, 2), (2,)), ((2, 2), (2,)), ((2, 1, 2), (2,)),
                                    ((1, 1, 2), (2,)), ((2,), (2,)), ((2, 2), (2, 2)),
                                    ((2,), (3, 2, 2)), ((2, 2, 2), (2, 2)), ((2,), (2, 2))])
@pytest.mark.parametrize("which", [0, 1])
def test_matrix_vector_product_keeps_a_known_zero_gradient_for_its_matrix(shapes, which):
    """torch's mv backward (and a batched matrix times a vector, folded into one mv) passes
    an efficient zero gradient to the matrix without multiplying it by the vector's inf; the
    vector's gradient and other products compute on zeros, NaN there (special seed 1671773:
    abs(x @ v) with an infinite v gave gradkit a NaN second derivative for x)."""
    def program(m):
        x, y = (m.full(shape, 0.5, dtype=m.float64) for shape in shapes)
        (y if which == 0 else x).view(-1)[1 - which] = -math.inf
        wrt = (x, y)[which].requires_grad_()
        (g,) = m.autograd.grad(m.matmul(x, y).abs().sum(), [wrt], create_graph=True)
        return m.autograd.grad(g.sum(), [wrt])[0] * 1   # torch's zero tensor, materialized
    assert_same_as_torch(program)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("exponent", [3, -2, 3.0, -2.0, -1])
def test_real_powers_three_and_minus_two_are_torch_products(dtype, exponent):
    """torch computes a real x ** 3 as x * x * x and x ** -2 as 1 / (x * x), not with pow: one
    ulp apart from NumPy's pow, which a later // turns into another integer (dtypes seed
    1865987: float32 (1/3) ** -2 // 0.5 is 17 in torch, was 18 here). Exact, in place too;
    the gradient as well where it is such a power (x ** -1's -x ** -2, x ** 3's 3 x ** 2;
    x ** -2's -2 x ** -3 is pow, SLEEF's in torch: to rounding)."""
    values = np.concatenate([np.linspace(-5, 5, 401), [1 / 3, 0.1, 0.0, -0.0, math.inf]])

    def program(m, gradient):
        x = m.tensor(values, dtype=getattr(m, dtype), requires_grad=True)
        out = x ** exponent
        if gradient:
            return m.autograd.grad(out.sum(), [x])
        written = x.detach().clone().pow_(exponent)
        return out, written, m.floor_divide(written, 0.5)
    assert_same_as_torch(lambda m: program(m, False), rtol=0.0)
    assert_same_as_torch(lambda m: program(m, True), rtol=0.0 if exponent != -2 else 1e-6)


_FULL_KEYS = [((), ()), ((), ...), ((2, 3), slice(None)), ((2, 3), (..., slice(None))),
              ((2, 3), slice(0, 5))]


@pytest.mark.parametrize("shape,key,value", [
    (shape, key, value) for shape, key in _FULL_KEYS for value in ("number", "same", "row")]
    + [((2, 3), key, value) for key in (slice(1, None), 0) for value in ("number", "row")])
def test_setitem_of_all_elements_is_a_copy_whose_old_values_get_no_graph(shape, key, value):
    """x[key] = v where key is full slices (or () or ...): torch's slicing returns x itself
    and the write is x's own copy_ or fill_, whose gradient for the old values is zeros with
    no graph; a double backward then ends there (mixed seed 2393159: gradkit's index_put
    kept g's graph, so var's gradient at zero degrees of freedom required grad)."""
    def program(m):
        x = m.tensor(np.linspace(-1, 1, int(np.prod(shape))).reshape(shape), dtype=m.float64,
                     requires_grad=True)
        y = x * 2
        y[key] = -1.5 if value == "number" else m.full(
            shape if value == "same" else shape[-1:], -1.5, dtype=m.float64)
        y.sigmoid_()
        (g,) = m.autograd.grad(y.sum(), [x], create_graph=True)
        return y, g, m.tensor(g.requires_grad)
    assert_same_as_torch(program)


def test_var_at_zero_degrees_of_freedom_written_whole_has_no_second_derivative():
    """The seed itself (mixed 2393159): var of one complex element, overwritten by x[()] = v."""
    def program(m):
        x = m.tensor(complex(math.inf, 0), dtype=m.complex128, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            v = x.var(0)
        v[()] = -1.5
        v.sigmoid_()
        (g,) = m.autograd.grad(v * 0.7, [x], create_graph=True)
        return g, m.tensor(g.requires_grad)
    assert_same_as_torch(program)


@pytest.mark.parametrize("program", [
    lambda m, x: 1 - x, lambda m, x: 2.5 - x, lambda m, x: x.__rsub__(2),
    lambda m, x: m.rsub(x, 2, alpha=3), lambda m, x: m.rsub(x, m.tensor(2.0, dtype=m.float64)),
    lambda m, x: m.tensor(2.0, dtype=m.float64) - x, lambda m, x: x - 1],
    ids=["one_minus", "float_minus", "dunder", "rsub_alpha", "rsub_tensor", "tensor_minus",
         "minus_one"])
def test_a_number_minus_a_tensor_is_torchs_rsub(program):
    """``2 - x`` is torch's rsub.Scalar (RsubBackward1, ``_saved_alpha``), a tensor minus x a
    sub; gradients and double backward as torch's (gradkit recorded SubBackward0)."""
    def run_it(m):
        x = m.tensor([1.0, -2.0], dtype=m.float64, requires_grad=True)
        out = program(m, x)
        g, = m.autograd.grad((out * out).sum(), x, create_graph=True)
        gg, = m.autograd.grad(g.sum(), x)
        return out, g, gg, m.tensor(out.grad_fn._saved_alpha)
    assert_same_as_torch(run_it)
    x = gradkit.tensor([1.0], requires_grad=True)
    t_x = torch.tensor([1.0], requires_grad=True)
    assert program(gradkit, x).grad_fn.name() == program(torch, t_x).grad_fn.name()


_NO_DERIVATIVE_IN_PLACE = {
    "ifloordiv": lambda m, y: y.__ifloordiv__(2),
    "ifloordiv_tensor": lambda m, y: y.__ifloordiv__(m.tensor([2.0, 3.0])),
    "floor_divide_": lambda m, y: y.floor_divide_(2),
    "floor_divide_view": lambda m, y: y[0:1].floor_divide_(2),
    "heaviside_": lambda m, y: y.heaviside_(m.tensor(0.5)),
    "heaviside_view": lambda m, y: y[1:].heaviside_(m.tensor(0.5)),
    "floor_divide": lambda m, y: m.floor_divide(y, 2), "heaviside": lambda m, y: m.heaviside(
        y, m.tensor(0.5)),
}


@pytest.mark.parametrize("write", list(_NO_DERIVATIVE_IN_PLACE))
def test_an_in_place_op_without_derivative_names_torchs_in_place_overload(write):
    """torch's backward error names the in-place overload, ``aten::floor_divide_`` (``//=``),
    ``aten::heaviside_``; gradkit named the out-of-place op."""
    def program(m):
        x = m.tensor([1.5, -2.5], requires_grad=True)
        y = x * 1
        out = _NO_DERIVATIVE_IN_PLACE[write](m, y)
        (y if write.endswith("view") else out).sum().backward()
    assert_same_as_torch(program)


@pytest.mark.parametrize("write", ["floor_divide_", "heaviside_", "floor_divide"])
def test_forward_ad_through_an_in_place_op_without_derivative_names_torchs_overload(write):
    def program(m):
        with m.autograd.forward_ad.dual_level():
            dual = m.autograd.forward_ad.make_dual(m.tensor([1.5]), m.tensor([1.0])) * 1
            _NO_DERIVATIVE_IN_PLACE[write](m, dual)
    assert_same_as_torch(program)


def _t(m, value):
    return m.tensor(value)


# torch converts a one-element tensor given for a Scalar argument to its number, and its C++
# messages print that number as C++ prints a double (-1, 2.5): not the tensor's repr
_SCALAR_ARGUMENT_MESSAGES = {
    "uniform_": lambda m: m.ones(2).uniform_(_t(m, 2.5), _t(m, 1.0)),
    "uniform_int_tensors": lambda m: m.ones(2).uniform_(_t(m, 2), _t(m, 1)),
    "uniform_numbers": lambda m: m.ones(2).uniform_(2.0, 1.0),
    "normal_": lambda m: m.ones(2).normal_(0, _t(m, -1.0)),
    "normal": lambda m: m.normal(0.0, -1.5, (2,)),
    "exponential_": lambda m: m.ones(2).exponential_(_t(m, -1.0)),
    "geometric_": lambda m: m.ones(2).geometric_(_t(m, 1.5)),
    "cauchy_": lambda m: m.ones(2).cauchy_(0, _t(m, -1.0)),
    "log_normal_": lambda m: m.ones(2).log_normal_(0, _t(m, -1.0)),
    "bernoulli_": lambda m: m.ones(2).bernoulli_(1.5),
    "renorm_float": lambda m: m.renorm(m.ones(2, 2), 2, 0, -1.0),
    "renorm_tensor": lambda m: m.renorm(m.ones(2, 2), 2, 0, _t(m, -1.5)),
    "randint": lambda m: m.randint(5, 1, (2,)),
    "randint_empty_range": lambda m: m.randint(0, (2,)),
    "randint_tensor_bound": lambda m: m.randint(_t(m, 3), 1, (2,)),
}


@pytest.mark.parametrize("name", list(_SCALAR_ARGUMENT_MESSAGES))
def test_messages_print_a_scalar_argument_as_torchs_cpp(name):
    """gradkit's messages showed a tensor given as a Scalar by its repr (``tensor(-1.)``), and
    randint's empty range was NumPy's ValueError."""
    assert_same_as_torch(_SCALAR_ARGUMENT_MESSAGES[name])


_FILL_VALUES = {
    "fill_1d": lambda m: m.ones(2).fill_(m.tensor([1.0, 2.0])),
    "fill_one_element": lambda m: m.ones(2).fill_(m.tensor([1.0])),
    "fill_2d": lambda m: m.ones(2).fill_(m.ones(2, 2)),
    "fill_not_broadcasting": lambda m: m.ones(2).fill_(m.ones(3)),
    "fill_function": lambda m: m.fill(m.ones(2), m.tensor([1.0])),
    "fill_0d": lambda m: m.ones(2).fill_(m.tensor(2.0)),
    "masked_fill_1d": lambda m: m.ones(2).masked_fill(m.tensor([True, False]), m.tensor([1.0])),
    "masked_fill_in_place": lambda m: m.ones(2).masked_fill_(m.tensor([True, False]),
                                                             m.tensor([1.0, 2.0])),
    "masked_fill_int_mask": lambda m: m.ones(2).masked_fill(m.tensor([1, 0]), m.tensor([1.0])),
    "masked_fill_2d": lambda m: m.masked_fill(m.ones(2), m.tensor(True), m.ones(2, 2)),
    "masked_fill_0d": lambda m: m.ones(2).masked_fill(m.tensor([True, False]), m.tensor(3.0)),
}


@pytest.mark.parametrize("name", list(_FILL_VALUES))
def test_fill_values_must_be_0d_as_torchs(name):
    """torch's fill_ and masked_fill refuse a value tensor with dimensions, even of one
    element (gradkit wrote its element, or broadcast it)."""
    assert_same_as_torch(_FILL_VALUES[name])


@pytest.mark.parametrize("exponent", ["tensor", "number", "complex"])
def test_complex_power_that_overflows_is_cpow_infinity(exponent):
    """torch's complex pow is cpow, exp(y log x): a power that overflows is inf + 0j for a
    real base and exponent, where NumPy's multiplied-out integer power gives NaN (dtypes seed
    2494987: complex64 81 ** 81)."""
    def program(m):
        x = m.tensor([81, 20, 1e20, 3 + 4j, -81, 81j, 0.5], dtype=m.complex64)
        y = {"tensor": x, "number": 81, "complex": m.tensor(81.5 + 0.5j, dtype=m.complex64)}
        return x ** y[exponent], x.to(m.complex128) ** 200
    assert_same_as_torch(program, rtol=1e-5)


def test_float32_second_derivative_of_cancelling_terms_is_noise_in_both():
    """Documented (docs/numerics.md, "further from its own float64 gradient"; special seed
    2505013): d2/dx2 of x / relu(x) is 0, a sum of terms of size 1/x**2 that cancel; in
    float32 at x = 0.0067 both libraries leave noise far above float32's tolerance, which
    torch's float64 run shows."""
    def second(m, dtype):
        x = m.tensor([0.006655622], dtype=getattr(m, dtype), requires_grad=True)
        (g,) = m.autograd.grad((x / m.relu(x)).sum() * 0.3, [x], create_graph=True)
        return m.autograd.grad((g * 0.7).sum(), [x])[0].item()
    assert abs(second(torch, "float64")) < 1e-9 and abs(second(gradkit, "float64")) < 1e-9
    assert abs(second(torch, "float32")) > 1e-5 and abs(second(gradkit, "float32")) > 1e-5
    problems, known = diff_program(generate(RandomDrawer(2505013)))
    assert known == "single-precision gradients that torch's own double-precision ones show " \
        "are noise" or not problems


def test_write_into_a_stale_view_then_backward_through_its_saved_value_is_documented():
    """Documented (docs/autograd.md, "unless something read its `grad_fn` first"; indexing
    seed 2670146): torch refuses the write into a view made stale by a write into its base
    as for a leaf; gradkit writes, and its backward then refuses the view mul saved."""
    def program(m):
        w = m.tensor([2.0], requires_grad=True)
        other = m.tensor([1.0, 3.0], requires_grad=True)
        base = m.zeros(1)
        view = base[..., 0]
        out = view * other
        base.copy_(w)           # the base gains a history; the view's grad_fn is stale
        view[()] = 5.0
        return m.autograd.grad(out.sum(), [other])
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used"):
        program(torch)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        program(gradkit)
    problems, known = diff_program(generate(RandomDrawer(2670146)))
    assert known == "a write into a view made stale by a write into its base (torch raises " \
        "as for a leaf)" or not problems


def test_ldexp_saves_other_and_its_result_not_self():
    """torch's LdexpBackward0 saves other and the result: a write into self after ldexp is
    allowed, and both gradients are torch's (breadth seed 88968)."""
    def program(m):
        x = m.tensor(1.5, dtype=m.float64, requires_grad=True).clone()
        e = m.tensor(0.5, dtype=m.float64, requires_grad=True)
        y = m.ldexp(x, e)
        x.eq_(1.5)
        return m.autograd.grad(y, [x, e], create_graph=True)
    assert_same_as_torch(program)


def _bools(m, *shape):
    return m.ones(*shape, dtype=m.bool)


# torch's out-of-place masked_fill expands (mask, self) first, then runs masked_fill_, which
# checks the value's dimensions, then the mask's dtype, then broadcasts the mask to self
_MASKED_FILL_ORDER = {
    "mask_broadcasts_input": lambda m: m.ones(3).masked_fill(_bools(m, 2, 3), 2.0),
    "mask_broadcasts_input_tensor_value": lambda m: m.masked_fill(
        m.ones(1, 3, dtype=m.float64), _bools(m, 2, 1), m.tensor(2.0)),
    "impossible_broadcast": lambda m: m.ones(3).masked_fill(_bools(m, 2), 2.0),
    "impossible_broadcast_inner": lambda m: m.ones(2, 3).masked_fill(_bools(m, 4, 1, 2), 2.0),
    "impossible_broadcast_before_value": lambda m: m.ones(3).masked_fill(_bools(m, 2),
                                                                        m.ones(2)),
    "impossible_broadcast_before_dtype": lambda m: m.ones(3).masked_fill(
        m.ones(2, dtype=m.int64), 2.0),
    "int_mask_that_broadcasts": lambda m: m.ones(3).masked_fill(m.ones(2, 3, dtype=m.int64), 1.),
    "in_place_value_before_broadcast": lambda m: m.ones(3).masked_fill_(_bools(m, 2), m.ones(2)),
    "in_place_dtype_before_broadcast": lambda m: m.ones(3).masked_fill_(
        m.ones(2, dtype=m.int64), 2.0),
    "in_place_impossible_broadcast": lambda m: m.ones(3).masked_fill_(_bools(m, 2), 2.0),
    "in_place_mask_larger_than_input": lambda m: m.ones(3).masked_fill_(_bools(m, 2, 3), 2.0),
    "gradient_through_broadcast": with_grads(
        lambda m, x, v: x.masked_fill(m.tensor([[True, False, True], [False, False, True]]), v),
        [1.0, 2.0, 3.0], 2.0),
}


@pytest.mark.parametrize("name", list(_MASKED_FILL_ORDER))
def test_masked_fill_broadcasts_and_checks_in_torchs_order(name):
    """Out-of-place masked_fill whose mask broadcasts the input to a larger size: torch's
    result size, and its errors in its order (gradkit checked the value and dtype first, and
    named the input as tensor a of the broadcast; the mask's dtype was NumPy's name)."""
    assert_same_as_torch(_MASKED_FILL_ORDER[name])


_SETITEM_KEYS = {"int": lambda m: 0, "full_slice": lambda m: slice(None),
                 "int_and_slice": lambda m: (0, slice(0, 2)), "ellipsis": lambda m: ...,
                 "ellipsis_int": lambda m: (..., 0), "none": lambda m: None,
                 "true": lambda m: True, "index": lambda m: m.tensor([0, 1]),
                 "list": lambda m: [0], "row_mask": lambda m: m.tensor([True, False]),
                 "full_mask": lambda m: m.ones(2, 3, dtype=m.bool),
                 "index_pair": lambda m: (m.tensor([0, 1]), m.tensor([0, 2]))}
_SETITEM_VALUES = {"4": lambda m: m.ones(4), "2x4": lambda m: m.ones(2, 4),
                   "3x3": lambda m: m.ones(3, 3), "leading_one": lambda m: m.ones(1, 2, 3),
                   "5x3_float64": lambda m: m.ones(5, 3, dtype=m.float64),
                   "list": lambda m: [1.0, 2.0, 3.0], "tuple": lambda m: (1.0,),
                   "array": lambda m: np.ones(3), "float32_scalar": lambda m: np.float32(1.0),
                   "none": lambda m: None}


@pytest.mark.parametrize("value", list(_SETITEM_VALUES))
@pytest.mark.parametrize("key", list(_SETITEM_KEYS))
def test_setitem_of_a_value_that_does_not_fit_raises_as_torch(key, value):
    """``x[0] = <4 elements>`` into a row of 3: torch copies into the view of a basic key
    (expand's errors), index_put's message for an advanced key, and refuses a value that is
    not a tensor or a number (gradkit wrote lists and arrays, and leaked NumPy's errors)."""
    def program(m):
        x = m.zeros(2, 3)
        x[_SETITEM_KEYS[key](m)] = _SETITEM_VALUES[value](m)
        return x
    assert_same_as_torch(program)


@pytest.mark.parametrize("program", [
    lambda m: m.ones(4).expand(3), lambda m: m.ones(2, 4).expand(3),
    lambda m: m.ones(3).expand(-1, 3), lambda m: m.ones(3, dtype=m.float64).expand(2, 2),
    lambda m: m.ones(2, 1, dtype=m.int64).expand(3, 2, 2),
    lambda m: m.addmm(m.ones(3, 1, 4), m.ones(2, 3), m.ones(3, 4)),
    lambda m: m.addmm(m.ones(1, 2, 4, dtype=m.float64), m.ones(2, 3, dtype=m.float64),
                      m.ones(3, 4, dtype=m.float64))],
    ids=["size", "too_few_sizes", "leading_minus_one", "float64", "int64", "addmm_size",
         "addmm_too_few_sizes"])
def test_expand_refuses_with_torchs_messages(program):
    """expand's messages name the innermost dimension that does not fit and the tensor's
    type (gradkit printed the whole shapes, and ``gradkit.Tensor``)."""
    assert_same_as_torch(program)


def _graph(node) -> str:
    """A node's name and its edges, down to the leaves (AccumulateGrad named as gradkit's)."""
    if node is None:
        return "None"
    edges = ", ".join(f"({_graph(n)}, {nr})" for n, nr in node.next_functions)
    return f"{node.name().replace('torch::autograd::AccumulateGrad', 'AccumulateGrad')}[{edges}]"


def _scale_function(m):
    """A custom Function called with a number between its tensors."""
    class Scale(m.autograd.Function):
        @staticmethod
        def forward(ctx, a, k, b):
            return a * k + b

        @staticmethod
        def backward(ctx, g):
            return g, None, g
    return Scale


_TORCH_EDGES = {
    "add_number": lambda m, x: m.add(x, 2), "number_plus": lambda m, x: 2 + x,
    "minus_number": lambda m, x: x - 2, "number_minus": lambda m, x: 2 - x,
    "times_number": lambda m, x: x * 2, "number_times": lambda m, x: 2.5 * x,
    "number_over": lambda m, x: 2 / x,
    "divided_by_number": lambda m, x: m.div(x, 2), "square": lambda m, x: x.pow(2),
    "number_power": lambda m, x: 2 ** x, "where_number": lambda m, x: m.where(x > 0, x, 2.0),
    "where_number_first": lambda m, x: m.where(x > 0, 2.0, x),
    "where_tensors": lambda m, x: m.where(x > 0, x, m.zeros(2)),
    "fmod_number": lambda m, x: m.fmod(x, 2), "remainder_number": lambda m, x: x % 2,
    "number_remainder": lambda m, x: 2 % x, "floor_divide_number": lambda m, x: x // 2,
    "floor_divide": lambda m, x: x // x, "lerp_number": lambda m, x: m.lerp(x, x * 2, 0.5),
    "xlogy_number": lambda m, x: m.xlogy(x, 2.0), "number_xlogy": lambda m, x: m.xlogy(2.0, x),
    "copysign_number": lambda m, x: m.copysign(x, -1.0),
    "masked_fill_number": lambda m, x: x.masked_fill(x > 0, 1.0),
    "masked_fill_tensor": lambda m, x: x.masked_fill(x > 0, m.tensor(1.0)),
    "clamp_numbers": lambda m, x: m.clamp(x, 0, 1),
    "clamp_min_tensor": lambda m, x: m.clamp(x, min=m.tensor(0.0)),
    "index_select": lambda m, x: m.index_select(x, 0, m.tensor([0])),
    "gather": lambda m, x: m.gather(x, 0, m.tensor([0])),
    "scatter": lambda m, x: m.scatter(x, 0, m.tensor([0]), x),
    "scatter_number": lambda m, x: m.scatter(x, 0, m.tensor([0]), 2.0),
    "index_fill": lambda m, x: m.index_fill(x, 0, m.tensor([0]), 2.0),
    "take": lambda m, x: m.take(x, m.tensor([0])),
    "masked_scatter": lambda m, x: m.masked_scatter(x, x > 0, x),
    "nll_loss": lambda m, x: m.nn.functional.nll_loss(x.unsqueeze(0), m.tensor([0])),
    "embedding": lambda m, x: m.nn.functional.embedding(m.tensor([0]), x.unsqueeze(1)),
    "heaviside": lambda m, x: m.heaviside(x, m.tensor(1.0)),
    "function_with_a_number": lambda m, x: _scale_function(m).apply(x, 2, x),
}


@pytest.mark.parametrize("name", list(_TORCH_EDGES))
def test_next_functions_have_torchs_edges(name):
    """torch gives an edge to each input its overload differentiates: a Python number an op
    takes as a Scalar (x ** 2, x % 2, a custom Function's) has none, one add/mul/div/where
    wrap as a tensor has (None, 0); an index, mask or condition has none; a node without
    derivative keeps the inputs that require grad (gradkit had an edge for every input)."""
    graphs = []
    for m in (torch, gradkit):
        x = m.tensor([1.5, 2.0], requires_grad=True)
        graphs.append(_graph(_TORCH_EDGES[name](m, x).grad_fn))
    assert graphs[1] == graphs[0]


@pytest.mark.parametrize("program", [lambda m, x: x // 2, lambda m, x: 2 % x,
                                     lambda m, x: m.heaviside(x, x)])
def test_a_node_without_derivative_is_named_and_raises_as_torchs(program):
    """torch's NotImplemented node: its class name in type() and a tensor's repr, its C++
    name in name(), and backward's error when it is reached."""
    seen = []
    for m in (torch, gradkit):
        y = program(m, m.tensor([1.5, 2.0], dtype=m.float64, requires_grad=True))
        node = y.grad_fn
        seen.append((node.name(), type(node).__name__, repr(y).split("grad_fn=")[1],
                     repr(node).split(" object")[0]))
    assert seen[1] == seen[0]
    assert seen[0][:2] == ("torch::autograd::NotImplemented", "NotImplemented")

    def backward(m):
        x = m.tensor([1.5, 2.0], dtype=m.float64, requires_grad=True)
        return m.autograd.grad(program(m, x).sum(), [x])
    assert_same_as_torch(backward)


_FULL_WRITES = {
    "slice_number": lambda m, x, v: x.__setitem__(slice(None), 1.0),
    "ellipsis_number": lambda m, x, v: x.__setitem__(..., 1.0),
    "slice_of_all_number": lambda m, x, v: x.__setitem__(slice(0, 3), 1.0),
    "slice_0d_tensor": lambda m, x, v: x.__setitem__(slice(None), m.tensor(2.0)),
    "ellipsis_0d_view": lambda m, x, v: x.__setitem__(..., v.sum()),
    "slice_same_shape": lambda m, x, v: x.__setitem__(slice(None), v),
    "ellipsis_same_shape": lambda m, x, v: x.__setitem__(..., v),
    "slice_broadcast": lambda m, x, v: x.__setitem__(slice(None), v[:1] * 1),
    "slice_int_tensor": lambda m, x, v: x.__setitem__(slice(None), m.tensor([1, 2, 3])),
    "slice_float64": lambda m, x, v: x.__setitem__(slice(None), v.double()),
    "fill_number": lambda m, x, v: x.fill_(2.0),
    "fill_tensor": lambda m, x, v: x.fill_(v.sum()),
    "fill_function_number": lambda m, x, v: m.fill(x, 2.0),
    "fill_function_tensor": lambda m, x, v: m.fill(x, v.sum()),
    "copy": lambda m, x, v: x.copy_(v),
}


@pytest.mark.parametrize("name", list(_FULL_WRITES))
def test_a_write_of_all_elements_records_torchs_node(name):
    """``x[:] = 1.0`` is torch's fill_ of a 0-d tensor (FillBackward3, an edge for the value),
    ``x[:] = v`` its copy_ (whose name() is ``torch::autograd::CopyBackwards``); fill_ of a
    number is FillBackward2, the out-of-place fill FillBackward0/1 (gradkit recorded
    CopyBackwards, or FillBackward0 for every fill)."""
    graphs = []
    for m in (torch, gradkit):
        x = m.tensor([1.5, 2.0, 3.0], requires_grad=True) * 2
        v = m.tensor([4.0, 5.0, 6.0], requires_grad=True)
        out = _FULL_WRITES[name](m, x, v)
        graphs.append(_graph((x if out is None else out).grad_fn))
    assert graphs[1] == graphs[0]


@pytest.mark.parametrize("weights_require_grad", [False, True])
@pytest.mark.parametrize("family", ["Dirichlet", "Beta"])
def test_dirichlet_rsample_double_backward_raises_as_torch(family, weights_require_grad):
    """torch's Dirichlet.rsample is a Function with a once_differentiable backward: the
    create_graph gradient has no graph (or, when the upstream gradient has one, torch's
    DelayedError node); gradkit raised NotImplementedError from _dirichlet_grad's rule."""
    def program(m):
        c = m.tensor([1.5, 2.0, 0.7], dtype=m.float64, requires_grad=True)
        w = m.tensor([1.0, 2.0, 3.0], dtype=m.float64, requires_grad=weights_require_grad)
        d = m.distributions.Dirichlet(c) if family == "Dirichlet" else \
            m.distributions.Beta(c[:2], c[1:])
        (g,) = m.autograd.grad((d.rsample() * (w if family == "Dirichlet" else w[:2])).sum(),
                               [c], create_graph=True)
        return m.autograd.grad(g.sum(), [c])
    assert_same_as_torch(program)


_NUMBER_GIVEN = {"0d": lambda m: m.tensor(1.5), "one_element": lambda m: m.tensor([1.5]),
                 "0d_int": lambda m: m.tensor(1), "0d_requiring_grad": lambda m: m.tensor(
                     1.5, requires_grad=True), "two_elements": lambda m: m.tensor([1.5, 2.0])}


def _x(m):
    return m.tensor([-2.0, 0.5, 3.0])


def _drawn(out):
    """What a random fill gives that both libraries agree on: its shape and dtype."""
    return out.new_tensor(list(out.shape))


_NUMBER_PARAMETERS = {
    "full": lambda m, v: m.full((2,), v), "full_like": lambda m, v: m.full_like(_x(m), v),
    "arange": lambda m, v: m.arange(v),
    "threshold": lambda m, v: m.nn.functional.threshold(_x(m), v, 0.0),
    "threshold_value": lambda m, v: m.nn.functional.threshold(_x(m), 0.0, v),
    "threshold_": lambda m, v: m.nn.functional.threshold_(_x(m), v, 0.0),
    "leaky_relu": lambda m, v: m.nn.functional.leaky_relu(_x(m), v),
    "leaky_relu_": lambda m, v: m.nn.functional.leaky_relu_(_x(m), v),
    "elu": lambda m, v: m.nn.functional.elu(_x(m), v),
    "elu_": lambda m, v: m.nn.functional.elu_(_x(m), v),
    "celu": lambda m, v: m.nn.functional.celu(_x(m), v),
    "softplus": lambda m, v: m.nn.functional.softplus(_x(m), v),
    "softplus_keyword": lambda m, v: m.nn.functional.softplus(_x(m), beta=v),
    "softplus_threshold": lambda m, v: m.nn.functional.softplus(_x(m), 1, v),
    "hardtanh": lambda m, v: m.nn.functional.hardtanh(_x(m), v),
    "hardtanh_max": lambda m, v: m.nn.functional.hardtanh(_x(m), -1.0, v),
    "hardtanh_": lambda m, v: m.nn.functional.hardtanh_(_x(m), v),
    "hardshrink": lambda m, v: m.nn.functional.hardshrink(_x(m), v),
    "softshrink": lambda m, v: m.nn.functional.softshrink(_x(m), v),
    "rrelu": lambda m, v: m.nn.functional.rrelu(_x(m), v, 2.0),
    "add_alpha": lambda m, v: m.add(_x(m), _x(m), alpha=v),
    "addcmul_value": lambda m, v: m.addcmul(_x(m), _x(m), _x(m), value=v),
    "addcdiv_value": lambda m, v: m.addcdiv(_x(m), _x(m), _x(m), value=v),
    "addmv_alpha": lambda m, v: m.addmv(m.ones(2), m.ones(2, 2), m.ones(2), alpha=v),
    "uniform_": lambda m, v: _drawn(_x(m).uniform_(v, 3)),
    "normal_": lambda m, v: _drawn(_x(m).normal_(0, v)),
    "exponential_": lambda m, v: _drawn(_x(m).exponential_(v)),
    "cauchy_": lambda m, v: _drawn(_x(m).cauchy_(0, v)),
    "log_normal_": lambda m, v: _drawn(_x(m).log_normal_(0, v)),
    "random_": lambda m, v: _drawn(_x(m).random_(v, 5) if v.dtype == m.int64 and not v.ndim
                                   else _x(m).random_(2, 5)),
    "normal_size": lambda m, v: _drawn(m.normal(0.0, v, (2,)) if not v.ndim and
                                       not v.requires_grad else m.normal(0.0, 1.0, (2,))),
    "norm": lambda m, v: m.norm(_x(m), v), "dist": lambda m, v: m.dist(_x(m), _x(m), v),
    "renorm": lambda m, v: m.renorm(m.ones(2, 2), v, 0, 1.0),
    "pdist": lambda m, v: m.nn.functional.pdist(m.ones(3, 2), v),
    "histc": lambda m, v: m.histc(_x(m), 4, v, 5),
    "logit": lambda m, v: m.logit(_x(m), v * 0.1),
    "isclose": lambda m, v: m.isclose(_x(m), _x(m), v),
    "pad": lambda m, v: m.nn.functional.pad(_x(m), (1, 1), value=v),
    "constant_pad_nd": lambda m, v: m.constant_pad_nd(_x(m), (1, 1), v),
    "huber_loss": lambda m, v: m.nn.functional.huber_loss(_x(m), _x(m) * 0, delta=v),
    "smooth_l1_loss": lambda m, v: m.nn.functional.smooth_l1_loss(_x(m), _x(m) * 0, beta=v),
    "margin_ranking_loss": lambda m, v: m.nn.functional.margin_ranking_loss(
        _x(m), _x(m), _x(m), margin=v),
    "dropout": lambda m, v: m.nn.functional.dropout(_x(m), v * 0.1, False),
    "polygamma": lambda m, v: m.polygamma(v, _x(m)),
    "mvlgamma": lambda m, v: m.mvlgamma(_x(m) + 5, v),
    "layer_norm": lambda m, v: m.nn.functional.layer_norm(_x(m), (3,), eps=v),
    "nan_to_num": lambda m, v: m.nan_to_num(_x(m), v),
    "hinge_embedding_loss": lambda m, v: m.nn.functional.hinge_embedding_loss(
        _x(m), _x(m).sign(), margin=v),
    "cosine_similarity": lambda m, v: m.nn.functional.cosine_similarity(_x(m), _x(m), 0, v),
    "cdist": lambda m, v: m.cdist(_x(m).reshape(3, 1), _x(m).reshape(3, 1), v),
    "cross_entropy_label_smoothing": lambda m, v: m.nn.functional.cross_entropy(
        _x(m).reshape(1, 3), m.tensor([0]), label_smoothing=v * 0.5),
    "new_full": lambda m, v: _x(m).new_full((2,), v),
}


@pytest.mark.parametrize("given", list(_NUMBER_GIVEN))
@pytest.mark.parametrize("name", list(_NUMBER_PARAMETERS))
def test_a_number_parameter_given_a_tensor_is_read_as_torchs_parser_reads_it(name, given):
    """torch's parser takes a tensor for a Scalar (Number), double (float) or int64 (int)
    parameter only 0-d and not requiring grad (an integer one for an int), as its number
    (full's dtype follows it); anything else is its TypeError. gradkit broadcast a
    one-element tensor, and failed on a 0-d one in NumPy or with its own errors."""
    assert_same_as_torch(lambda m: _NUMBER_PARAMETERS[name](m, _NUMBER_GIVEN[given](m)))


@pytest.mark.parametrize("program", [
    lambda m, x: x * 2, lambda m, x: 2.5 * x, lambda m, x: x * True, lambda m, x: x / 2,
    lambda m, x: x * (1 + 2j), lambda m, x: m.mul(x, 3)],
    ids=["int", "float_first", "bool", "divisor", "complex", "function"])
def test_a_wrapped_number_is_saved_as_torchs_0d_tensor(program):
    """torch's mul and div make a Python number operand a 0-d tensor (int64, float64,
    complex128 or bool) and save it as ``_saved_other``; ``2.5 * x`` is ``x.mul(2.5)``
    (gradkit saved the number, and put it first for a reflected product)."""
    def saved(m):
        node = program(m, m.ones(2, requires_grad=True)).grad_fn
        return node._saved_other, m.tensor(node._saved_self is None)
    assert_same_as_torch(saved)


_SEVERAL_SIGNATURES = {
    "std_correction": lambda m, v: m.std(_x(m), correction=v),
    "var_correction": lambda m, v: m.var(_x(m), correction=v),
    "arange_step": lambda m, v: m.arange(0, 3, v),
    "random_bounds": lambda m, v: _drawn(_x(m).random_(v, v + 3)),
    "normal_size": lambda m, v: _drawn(m.normal(0.0, v, (2,))),
}


@pytest.mark.parametrize("given", ["0d", "0d_int"])
@pytest.mark.parametrize("name", list(_SEVERAL_SIGNATURES))
def test_a_0d_tensor_is_a_number_where_torch_has_several_signatures(name, given):
    """Where torch's function has several signatures, a 0-d tensor (an integer one for an
    int) is still read as a number (gradkit failed in NumPy or refused it)."""
    if name == "random_bounds" and given == "0d":
        given = "0d_int"  # random_'s bounds are ints: a float tensor matches no signature
    assert_same_as_torch(lambda m: _SEVERAL_SIGNATURES[name](m, _NUMBER_GIVEN[given](m)))


@pytest.mark.parametrize("given", ["one_element", "0d_requiring_grad", "two_elements"])
@pytest.mark.parametrize("name", list(_SEVERAL_SIGNATURES))
def test_a_tensor_no_signature_reads_is_a_type_error_as_torchs(name, given):
    """Documented (docs/api.md): both refuse with a TypeError; torch's message lists its
    signatures ("received an invalid combination of arguments"), gradkit's is one line."""
    for m in (torch, gradkit):
        with pytest.raises(TypeError):
            _SEVERAL_SIGNATURES[name](m, _NUMBER_GIVEN[given](m))


@pytest.mark.parametrize("program", [
    lambda m, x: x.pow(2), lambda m, x: m.where(x > 0, x, 2.0), lambda m, x: x * 2,
    lambda m, x: x.masked_fill(x > 0, 1.0), lambda m, x: m.index_select(x, 0, m.tensor([0])),
    lambda m, x: m.clamp(x, min=m.tensor(0.0))],
    ids=["square", "where_number", "times_number", "masked_fill", "index_select", "clamp"])
def test_a_node_hook_sees_one_gradient_per_torch_edge(program):
    """A node's post hook gets grad_inputs for the edges of next_functions, and what it
    returns replaces them (gradkit passed one per input: x ** 2 gave the hook two)."""
    def run(m):
        x = m.tensor([1.0, -2.0], dtype=m.float64, requires_grad=True)
        y = program(m, x)
        seen = []

        def hook(grad_inputs, grad_outputs):
            seen.append(len(grad_inputs))
            return tuple(None if g is None else g * 3 for g in grad_inputs)
        y.grad_fn.register_hook(hook)
        (g,) = m.autograd.grad(y.sum(), [x])
        return g, m.tensor(seen)
    assert_same_as_torch(run)
def _complex_operands(dtype, n=1000, seed=0):
    """n complex numbers: normal parts, a third of them a zero, an infinity, NaN or extreme."""
    rng = np.random.default_rng(seed)
    specials = [0.0, -0.0, 1.0, -np.inf, np.inf, np.nan, 1e-30, 3e38, -2.5]
    parts = rng.standard_normal((2, n))
    special = rng.random((2, n)) < 0.3
    parts[special] = rng.choice(specials, special.sum())
    out = np.empty(n, dtype)
    out.real, out.imag = parts  # parts[0] + 1j * parts[1] would make inf * 1j's real part NaN
    return out


def _same_bits(got, expected, what: str):
    """Each part equal, zeros' signs too (any NaN stands for any NaN)."""
    for part in (np.real, np.imag):
        mine, theirs = part(got), part(expected)
        nan = np.isnan(theirs)
        np.testing.assert_array_equal(np.isnan(mine), nan, err_msg=what)
        np.testing.assert_array_equal(mine[~nan], theirs[~nan], err_msg=what)
        np.testing.assert_array_equal(np.signbit(mine[~nan]), np.signbit(theirs[~nan]),
                                      err_msg=what)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_division_rounds_as_torch(dtype):
    """torch divides complex numbers by Smith's method with fused multiply-adds, so z / z is
    1 - ulp where NumPy's unfused division gives 1 (and long() then 0 or 1: dtypes seed
    2856107); 1 / z, reciprocal, z ** -1 and a real number divisor (z + 0j) go the same way."""
    x, y = _complex_operands(dtype, seed=1), _complex_operands(dtype, seed=2)
    cases = {"x / y": lambda m, a, b: a / b, "x / x": lambda m, a, b: a / a,
             "x / 3.0": lambda m, a, b: a / 3.0, "div_": lambda m, a, b: a.clone().div_(b),
             "reciprocal": lambda m, a, b: a.reciprocal(), "1 / x": lambda m, a, b: 1 / a,
             "x ** -1": lambda m, a, b: a ** -1,
             "real / complex": lambda m, a, b: m.true_divide(a.real, b)}
    for name, fn in cases.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = fn(torch, torch.tensor(x), torch.tensor(y)).numpy()
            got = fn(gradkit, gradkit.tensor(x), gradkit.tensor(y)).numpy()
        _same_bits(got, expected, name)
    problems, _ = diff_program(generate(RandomDrawer(2856107)))
    assert not problems


def test_complex_division_gradients_are_torchs():
    """The gradients of complex division are torch's formulas through the same division
    (grad / conj(y), -grad * conj(x / y / y)), to any order (seed 2856107)."""
    assert_same_as_torch(with_grads(lambda m, x, y: x / y, [0.5 - 1.25j, 3.0 + 0.1j],
                                    [-0.7 + 0.2j, 1e-3 - 2.0j], dtype="complex128"), rtol=0)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("shapes", [((2, 2), (2, 2)), ((2, 2, 3), (2, 3, 2)), ((4, 3), (3, 2))],
                         ids=["mm", "bmm", "mm_k3"])
def test_complex_matrix_product_of_negative_zero_terms_is_positive_zero(shapes, dtype):
    """torch's complex gemm sums into +0.0: where every term's part is -0.0 (-1 * 0), the
    product's part is +0.0; NumPy's small complex products left -0.0 (dtypes seed 2903259,
    (x - 300) ** (x - 300) overflowing to signed zeros before a matmul)."""
    def program(m):
        a = m.full(shapes[0], -1 - 1j, dtype=getattr(m, dtype))
        b = m.zeros(shapes[1], dtype=getattr(m, dtype))
        return m.view_as_real(m.matmul(a, b)), m.view_as_real(m.matmul(b.mT, a.mT))
    assert_same_as_torch(program, rtol=0)
    problems, _ = diff_program(generate(RandomDrawer(2903259)))
    assert not problems


def test_integer_step_result_written_with_a_grad_value_then_retained_is_the_documented_wart():
    """Documented (docs/numerics.md, "leaves the integer tensor not requiring grad"; indexing
    seed 2928722): an integer tensor made by an op (not a leaf), written through an empty mask
    with a value that requires grad, requires grad in torch, so retain_grad() runs there and
    backward then fails on the write into the tensor mul saved; gradkit's does not require
    grad and refuses retain_grad(), and its backward fails alike."""
    def program(m):
        x = m.tensor(1.5, requires_grad=True)
        counts = m.tensor([1, 2, 3]) * 2
        y = x * counts
        counts[m.tensor([False, False, False])] = y.sum()
        return x, y, counts
    (_, _, theirs), (_, _, mine) = program(torch), program(gradkit)
    assert theirs.requires_grad and not mine.requires_grad
    theirs.retain_grad()
    with pytest.raises(RuntimeError, match="can't retain_grad on Tensor that has requires_grad"):
        mine.retain_grad()
    _both_refuse_the_write(lambda m: program(m)[1].sum().backward())
    problems, known = diff_program(generate(RandomDrawer(2928722)))
    assert known == "an integer tensor written with a value that requires grad does not " \
        "require grad" or not problems


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_log1p_is_torchs_kahan_form(dtype):
    """torch's CPU log1p of a complex z is Kahan's log(u) * (z / (u - 1)), u = 1 + z: NaN at
    inf + nan j and 0.3 + inf j (NumPy's is inf + ...), z itself at 1e-300 (NumPy's 0), and
    the imaginary zero's sign of z kept (special seed 3006781: log1p(2 * (inf + 0j)))."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z = _complex_operands(dtype, seed=3)
        specials = np.array([complex(math.inf, math.nan), complex(0.3, math.inf), 1e-30 + 0j,
                             complex(0.3, -0.0), -1 + 0j, complex(-2, -0.0)], dtype)
        for values in (z, specials):
            _same_bits(gradkit.log1p(gradkit.tensor(values)).numpy(),
                       torch.log1p(torch.tensor(values)).numpy(), "log1p")
    assert_same_as_torch(with_grads(lambda m, x: m.log1p(x), [0.5 - 1.25j, -0.3 + 0.3j],
                                    dtype="complex128"), rtol=1e-15)
    problems, _ = diff_program(generate(RandomDrawer(3006781)))
    assert not problems


@pytest.mark.parametrize("shape, target", [((1, 1), (1, 1, 3)), ((3, 1), (4, 3, 1)),
                                           ((1, 3, 3), (4, 1, 3, 3)), ((), (1,)),
                                           ((1, 1, 1), (3, 1, 3)), ((3,), (1, 3))])
def test_expand_has_torchs_strides_of_one_element_dims(shape, target):
    """expand keeps a kept dim's stride (size 1 too) and gives a new leading dim the extent
    of the dims after it, as torch's inferExpandGeometry (NumPy's broadcast_to gives them 0)."""
    def program(m):
        return m.tensor(m.ones(shape).expand(target).stride())
    assert_same_as_torch(program, rtol=0)


def test_copy_from_an_expanded_tensor_into_its_expanded_slice_is_refused():
    """x[0:1] = x[..., :1] for x = ones(1, 1).expand(1, 1, 3): the slice has torch's strides
    (1, 1, 0), the value expanded to it (0, 0, 0), so copy_ does not take it for a copy onto
    itself and refuses the expanded target, as torch (views seed 3074801); x[0:1] = x is
    a copy onto itself, which both allow."""
    def program(m, value):
        x = m.ones(1, 1, dtype=m.float64).expand(1, 1, 3)
        x[0:1] = value(x)
        return x
    for m in (torch, gradkit):
        with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
            program(m, lambda x: x[..., :1])
    assert_same_as_torch(lambda m: program(m, lambda x: x))
    problems, _ = diff_program(generate(RandomDrawer(3074801)))
    assert not problems


def test_where_on_a_rounding_noise_condition_is_the_documented_amplification():
    """Documented (docs/numerics.md, "turn a last-bit difference"; core seed 3145072):
    float32 logsumexp(log_softmax(x)) is rounding noise around 0, exactly 0 here and 6e-8 in
    torch (whose log_softmax is an ulp off), so where(. > 0) picks the other value."""
    def program(m):
        x = m.tensor([0.00513239, -0.23957191], dtype=m.float32)
        noise = m.logsumexp(m.log_softmax(x, 0), -1)
        return noise, m.where(noise > 0, m.ones(()), m.zeros(()))
    (their_noise, theirs), (my_noise, mine) = program(torch), program(gradkit)
    assert abs(their_noise.item()) < 1e-6 and abs(my_noise.item()) < 1e-6
    assert theirs.item() == 1 and mine.item() == 0
    problems, known = diff_program(generate(RandomDrawer(3145072)))
def test_float32_values_that_torchs_float64_run_shows_are_noise_are_known():
    """A float32 Gumbel sample a few ulp from torch's, doubled, through a LogNormal's mean
    (exp of it: 4.9e18) and a sine: torch's own float32 sine is as far from its float64 one
    as from gradkit's. Documented (dist seed 20522)."""
    problems, known = diff_program(generate(RandomDrawer(20522), "dist"))
    assert known == "single-precision values that torch's own double-precision ones show " \
        "are noise" or not problems
    # a wrong value of a well-conditioned float32 program is not noise
    program = Program("core", (Leaf((3,), "float32", True),), (Step("sin", (0,), {}),),
                      False, 5)
    theirs = run(program, torch)
    wrong = theirs._replace(values=theirs.values[:1] + [theirs.values[1] * 1.01])
    assert compare(wrong, theirs) and known_difference(program, wrong, theirs) is None


def test_an_ill_conditioned_float64_gradient_is_known():
    """The KL divergence of a Uniform 1e-11 wide from a Gamma: its float64 gradient sums terms
    of 1e14 that cancel to 3e4, and torch's own moves in the seventh digit when its inputs move
    an ulp, as far as gradkit's is from it. Documented (dist seed 24225)."""
    program = generate(RandomDrawer(24225), "dist")
    problems, known = diff_program(program)
    assert known == "an ill-conditioned result: torch's own moves as much when its inputs " \
        "move an ulp" or not problems
    nudged = run(program, torch, math.inf)
    assert compare(nudged, run(program, torch))  # the input's last bit shows in the gradient
    # a wrong gradient of a well-conditioned program is not noise
    program = Program("core", (Leaf((3,), "float64", True),), (Step("exp", (0,), {}),),
                      False, 5)
    theirs = run(program, torch)
    wrong = theirs._replace(grads=[theirs.grads[0] * (1 + 1e-5)])
    assert compare(wrong, theirs) and known_difference(program, wrong, theirs) is None


@pytest.mark.parametrize("make", ["chunk", "unbind", "no_grad_slice", "chunk_int"])
@pytest.mark.parametrize("write", ["logical_and_", "no_grad_mul_"])
def test_unrecorded_write_into_a_view_that_refuses_writes_makes_it_stale(make, write):
    """A write autograd does not record (``logical_and_``, or any under no_grad) into a split
    output or a view made under no_grad: torch regenerates the view's history when it is next
    read, and that raises; a view of an integer tensor has none to regenerate (breadth seed
    93115)."""
    def program(m):
        x = m.tensor([0.5, 1.5], requires_grad=True)
        base = x.clone()
        if make == "chunk":
            view = m.chunk(x, 2)[0]
        elif make == "unbind":
            view = base.unbind(0)[0]
        elif make == "no_grad_slice":
            with m.no_grad():
                view = base[0:1]
        else:
            view = m.tensor([1, 2]).chunk(2)[0]
        if write == "logical_and_":
            view.logical_and_(view)
        else:
            with m.no_grad():
                view.mul_(2)
        out = [view.requires_grad]
        for read in (lambda: view.grad_fn, lambda: view.is_leaf,
                     lambda: (view * 2).sum().backward()):
            try:
                out.append(type(read()).__name__)
            except RuntimeError as e:
                out.append(str(e))
        return out
    assert program(gradkit) == program(torch)


def test_max_pool_window_of_padding_only_passes_no_gradient_where_torch_writes_the_next_plane():
    """kernel 2 with dilation 2 and padding 1 over one row: the second window reads padding
    only, -inf with index 1, past its one-element plane. torch's backward writes that window's
    gradient at index 1, the next plane's element; gradkit's drops it. Documented (breadth
    seed 95687)."""
    def program(m):
        x = m.tensor([[[[0.5]], [[-1.5]]]], dtype=m.float64, requires_grad=True)
        out, index = m.nn.functional.max_pool2d(x, (2, 1), padding=(1, 0), ceil_mode=True,
                                                dilation=2, return_indices=True)
        (grad,) = m.autograd.grad((out * m.tensor([[[[1.0]], [[2.0]]]])).sum(), x)
        return out.detach().numpy().ravel().tolist(), index.numpy().ravel().tolist(), \
            grad.numpy().ravel().tolist()
    (out, index, torch_grad), (gradkit_out, gradkit_index, grad) = program(torch), \
        program(gradkit)
    assert (out, index) == (gradkit_out, gradkit_index) == ([-math.inf] * 2, [1, 1])
    assert torch_grad == [0.0, 1.0] and grad == [0.0, 0.0]
    problems, known = diff_program(generate(RandomDrawer(95687), "breadth"))
    assert known == "max pooling over a window of padding only: torch's backward writes into " \
        "the next plane" or not problems


def test_polynomial_degree_floored_from_a_value_one_ulp_from_one_is_known():
    """|Q| of a 1 x 1 complex64 QR is 1 to rounding: 0.99999994 here, 1.0000001 in torch;
    the fuzzer's polynomial degree floor(4 |n|) is then 3 or 4. The same n gives the same
    value on both sides (breadth seed 99391)."""
    assert_same_as_torch(lambda m: m.special.shifted_chebyshev_polynomial_w(
        m.tensor([0.99999994, 1.0000001]), (m.tensor([0.99999994, 1.0000001]) * 4).floor()))
    problems, known = diff_program(generate(RandomDrawer(99391), "breadth"))
    assert known == "a step that turns a rounding difference of its input into another " \
        "number" or not problems


def test_matmul_of_two_dtypes_with_an_empty_batch_is_the_documented_difference():
    """Documented (docs/numerics.md, "`matmul` of two dtypes is refused whatever the shapes";
    mixed seed 3197583): torch's batched path gives (3, 1) int32 @ (0, 1, 1) float64 an empty
    float64 result (the seed's program then fails in torch's backward, where gradkit never
    got: its matrix there is a float one, which torch folds when it requires grad). gradkit
    computes an integer or bool matrix's product as torch's (such a matrix never requires
    grad) and refuses a float one's as torch refuses the other order, in torch's words."""
    def program(m, order):
        a = m.ones(3, 1, dtype=m.int32)
        b = m.zeros(0, 3, 1, dtype=m.float64, requires_grad=True).sum(-2, keepdim=True)
        return m.matmul(*order(a, b))
    assert program(torch, lambda a, b: (a, b)).shape == (0, 3, 1)
    for m in (torch, gradkit):
        with pytest.raises(RuntimeError, match="the same dtype, but got: double != int$"):
            program(m, lambda a, b: (b, a.mT))
    assert program(gradkit, lambda a, b: (a, b)).shape == (0, 3, 1)
    with pytest.raises(RuntimeError, match="^expected scalar type Float but found Double$"):
        program(gradkit, lambda a, b: (a.float(), b))  # (bmm's words: the path torch takes)
    problems, known = diff_program(generate(RandomDrawer(3197583)))
    assert known == "matmul of two dtypes with an empty batch: torch computes on one path " \
        "only" or not problems


@pytest.mark.parametrize("dtype", ["int64", "int16", "uint8", "bool", "float16", "float32",
                                   "complex64"])
def test_matmul_dtype_error_names_the_c_types(dtype):
    """torch's message names the C types (long int, c10::Half, c10::complex<float>, ...)."""
    def program(m):
        return m.ones(2, 2, dtype=getattr(m, dtype)) @ m.ones(2, 2, dtype=m.float64)
    assert_same_as_torch(program)


@pytest.mark.parametrize("exponent", [1, 1.0, True, 1 + 0j])
def test_power_by_one_copies_the_signs_of_zeros(exponent):
    """torch's pow by a number equal to 1 copies x: complex -0.0 + 0j keeps its -0.0, where
    NumPy's x ** 1 multiplies and gives 0j (dtypes seed 3319331: (0.0 * x) ** 1)."""
    def program(m):
        x = m.tensor([complex(-0.0, 0.0), complex(0.0, -0.0), complex(math.inf, -0.0)],
                     dtype=m.complex128, requires_grad=True)
        y = (x * 1) ** exponent
        inplace = x.detach().clone()
        inplace **= exponent
        return (m.view_as_real(y), m.view_as_real(inplace),
                *m.autograd.grad(y.abs().sum(), [x]))
    assert_same_as_torch(program, rtol=0)
    problems, _ = diff_program(generate(RandomDrawer(3319331)))
    assert not problems


def test_write_into_a_flat_view_made_stale_by_copy_into_its_base_is_documented():
    """Documented (docs/autograd.md, "unless something read its `grad_fn` first"; views seed
    3342865): a view(-1) made before base.copy_(x) gave the base a history; torch's in-place
    check reads the view's stale grad_fn and refuses the write as into a leaf; gradkit writes,
    as torch does once the view's grad_fn has been read."""
    def program(m, read_grad_fn):
        x = m.tensor(1.5, dtype=m.float64, requires_grad=True)
        base = m.tensor(0.5, dtype=m.float64)
        view = base.view(-1)
        base.copy_(x)
        if read_grad_fn:
            assert view.grad_fn is not None
        view.masked_fill_(view > 0, -2.0)
        return view, m.autograd.grad(base.sum(), [x], allow_unused=True)[0]
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        program(torch, False)
    assert_same_as_torch(lambda m: program(m, True))
    program(gradkit, False)
    problems, known = diff_program(generate(RandomDrawer(3342865)))
    assert known == "a write into a view made stale by a write into its base (torch raises " \
        "as for a leaf)" or not problems


def test_hook_added_to_a_stale_view_is_the_documented_difference():
    """Documented (docs/autograd.md, "joins the hooks registered before the write"; hooks seed
    3363502): v = base.squeeze(0) has a hook, then v[1:2] = v[:1] writes through a slice of v,
    which leaves v's grad_fn stale until read; torch adds a second hook to the dict on v's old
    node (it sees the gradient through the value read before the write); gradkit hooks v's
    current node, as torch does once v.grad_fn was read."""
    def program(m, read_grad_fn):
        x = m.tensor([0.5 + 0.1j, -0.4 + 0.7j], dtype=m.complex128, requires_grad=True)
        view = (x * 1).squeeze(0)
        seen = []
        view.register_hook(lambda g: g * 2)
        view[1:2] = view[..., :1]
        if read_grad_fn:
            assert view.grad_fn is not None
        view.register_hook(lambda g: seen.append(g.detach().clone()) or -g)
        (view * m.tensor([1 + 2j, 3 - 1j], dtype=m.complex128)).sum().real.backward()
        return seen[0], x.grad
    assert_same_as_torch(lambda m: program(m, True))
    (their_seen, their_grad), (my_seen, my_grad) = program(torch, False), program(gradkit, False)
    assert their_seen.tolist() == [6 + 2j, 0j] and my_seen.tolist() == [1 - 2j, 3 + 1j]
    assert their_grad.tolist() != my_grad.tolist()
    problems, known = diff_program(generate(RandomDrawer(3363502)))
    assert known == "a hook added to a view made stale by a write joins the earlier hooks on " \
        "the old node in torch" or not problems


def test_sine_of_a_power_of_float32_exp_is_the_documented_rounding_step():
    """Documented (docs/numerics.md, "turn a last-bit difference"; dtypes seed 3220491): NumPy's
    float32 exp(2) is an ulp from torch's (gradkit keeps NumPy's fast float32 kernels), x ** x
    makes that 2.6e-6 relative at 2.6e6, where one float32 ulp is 0.25: the sines are other
    numbers. Each step agrees with torch but for rounding; only the sine tells them apart."""
    def steps(m):
        e = m.exp(m.tensor([2], dtype=m.uint8))
        return e, e ** e, m.sin(e ** e)
    mine, theirs = (tuple(v.numpy() for v in steps(m)) for m in (gradkit, torch))
    for a, b in zip(mine[:2], theirs[:2]):
        np.testing.assert_allclose(a, b, rtol=1e-5)
    assert abs(float(mine[2][0]) - float(theirs[2][0])) > 1e-3  # the sine is another number
    problems, known = diff_program(generate(RandomDrawer(3220491)))
    assert known == "a step that turns a rounding difference of its input into another number" \
        or not problems
@pytest.mark.parametrize("dims", [2, 3, 4])
def test_sdpa_math_backend_scales_copies_so_a_write_into_the_query_is_allowed(dims):
    """Below 4 dims torch's CPU attention is its math backend, which multiplies q and k by
    sqrt(scale) first and saves those copies: a write into the query after it does not
    touch backward. The 4-d flash kernel saves the query itself and refuses (breadth seed
    99024)."""
    def program(m):
        rng = np.random.default_rng(99024)
        shape = (2, 2, 3, 2)[4 - dims:]
        q = m.tensor(rng.standard_normal(shape), dtype=m.float32)
        k = m.tensor(rng.standard_normal(shape), dtype=m.float32, requires_grad=True)
        out = m.nn.functional.scaled_dot_product_attention(q, k, k, scale=-0.6)
        q.ge_(0.5)
        return (out,) + m.autograd.grad(out.sum(), k)
    if dims == 4:
        _both_refuse_the_write(program)
    else:
        assert_same_as_torch(program, rtol=1e-5)


@pytest.mark.parametrize("value", [math.inf, 2.0])
def test_sdpa_row_attending_to_nothing_has_softmax_gradient_zero_times_g(value):
    """A row whose scores are all -inf weighs 0 (torch's safe softmax); its backward is
    softmax's, 0 * (g - sum(g * 0)): 0, but NaN where g is infinite, from an infinite value
    (breadth seed 99024)."""
    def program(m):
        kv = m.tensor([[value], [-0.0]], requires_grad=True)
        q = m.tensor([[-0.48641694]], requires_grad=True)
        mask = m.tensor([[0.0, -math.inf]])
        out = m.nn.functional.scaled_dot_product_attention(q, kv, kv, attn_mask=mask)
        return (out,) + m.autograd.grad((out * 0.7).sum(), [q, kv])
    assert_same_as_torch(program)


def test_attention_double_backward_with_signed_zeros_before_it_is_known():
    """Multi-head attention (need_weights=False: torch's fused kernel, no second derivative)
    of a -0.0 input: torch's output zeros are -0.0, gradkit's products' +0.0, as any matrix
    product's zero sum may be; the documented double backward difference still applies
    (breadth seed 98517)."""
    problems, known = diff_program(generate(RandomDrawer(98517), "breadth"))
    assert known == "embedding_bag's and multi-head attention's second derivatives exist " \
        "(torch's fused kernels have none)" or not problems
    # a real difference before the double backward is not covered
    program = shrink(generate(RandomDrawer(98517), "breadth"))
    mine, theirs = run(program, gradkit), run(program, torch)
    wrong = mine._replace(values=[v + 1.0 for v in mine.values])
    assert known_difference(program, wrong, theirs) != known


@pytest.mark.parametrize("pos_weight", [None, [1.7]])
def test_bce_with_logits_backward_is_torchs_term_by_term(pos_weight):
    """binary_cross_entropy_with_logits' input gradient is sigmoid(x) - target as torch's: at
    the logits of the target itself that is their rounding difference (5.6e-17), which an
    infinite incoming gradient (a Bernoulli's perplexity into a Pareto sample of 1e94) makes
    inf; (1 - target) - sigmoid(-x) was 0 and the gradient NaN (dist seed 31072)."""
    def program(m):
        x = m.tensor([-0.35865353427449076, 0.8, -2.0], dtype=m.float64, requires_grad=True)
        p = m.sigmoid(x)
        d = m.distributions.Bernoulli(probs=p)
        weight = None if pos_weight is None else m.tensor(pos_weight, dtype=m.float64)
        loss = m.nn.functional.binary_cross_entropy_with_logits(
            d.logits, d.probs, reduction="none", pos_weight=weight)
        g = m.tensor([math.inf, 1.5, -0.5], dtype=m.float64)
        first = m.autograd.grad(loss, x, g, create_graph=True)[0]
        finite = m.autograd.grad(loss, x, g.nan_to_num(posinf=2.0), create_graph=True)[0]
        return (loss, first.detach(), finite) + m.autograd.grad(finite.sum(), x)
    assert_same_as_torch(program, rtol=1e-12)
    problems, known = diff_program(generate(RandomDrawer(31072), "dist"))
    assert not problems
def _assert_bitwise_equal(mine: np.ndarray, theirs: np.ndarray):
    """Equal in every bit that matters: each part's value and the sign of its zeros."""
    assert mine.dtype == theirs.dtype
    for part in (np.real, np.imag):
        np.testing.assert_array_equal(part(mine), part(theirs))
        numbers = ~np.isnan(part(theirs))
        np.testing.assert_array_equal(np.signbit(part(mine))[numbers],
                                      np.signbit(part(theirs))[numbers])


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("exponent", [4, -3, 5.0, 7 + 0j, "tensor", 0.5 + 0j])
def test_complex_power_by_an_integer_is_cpow_as_torchs(dtype, exponent):
    """torch's complex x ** n is cpow's exp(n log x) (but for the powers it multiplies out or
    takes a root of), where NumPy multiplies integer powers out: (-1) ** -1 is
    -1 - 1.2e-16j in torch and -1 - 0j in NumPy, which a division by zero then shows as
    inf - inf j against inf + nan j (dtypes seed 3610307). 0.5 + 0j is sqrt, as 0.5."""
    rng = np.random.default_rng(3610307)
    x = (rng.normal(size=200) * 3 + 1j * rng.normal(size=200) * 3).astype(dtype)
    x[:4] = [-1, -3, 1j, -2j]
    powers = np.resize(np.array([2, -1, 3, -4, 0.5], dtype=dtype), x.shape)
    results = []
    for m in (gradkit, torch):
        base = m.tensor(x)
        power = base ** (m.tensor(powers) if exponent == "tensor" else exponent)
        results.append(power.numpy())
    _assert_bitwise_equal(*results)


def test_complex_power_by_minus_one_then_divided_by_zero_is_torchs_infinity():
    """The seed's program: the tiny imaginary part of cpow's (-1) ** -1 divided by zero is
    -inf, as torch's (dtypes seed 3610307)."""
    def program(m):
        x = m.tensor([[-1, -1, -3]], dtype=m.int16).to(m.complex128)
        z = x ** x - -1.5
        z /= False
        return z, x ** x
    results = [tuple(t.numpy() for t in program(m)) for m in (gradkit, torch)]
    for mine, theirs in zip(*results, strict=True):
        _assert_bitwise_equal(mine, theirs)


def test_gradient_of_a_complex_power_by_an_integer_is_torchs():
    """The base's gradient n x ** (n - 1) is a cpow too (dtypes seed 3610307)."""
    def program(m):
        x = m.tensor([-1 + 0j, -3 + 0.5j, 2j], dtype=m.complex128, requires_grad=True)
        y = m.tensor([-1 + 0j, 3 + 0j, 4 + 0j], dtype=m.complex128, requires_grad=True)
        out = x ** y
        return (out,) + m.autograd.grad(out.abs().sum(), [x, y])
    assert_same_as_torch(program, rtol=1e-12)


def test_cast_truncating_a_dot_product_rounded_apart_is_documented():
    """Documented (docs/numerics.md, "turn a last-bit difference"; dtypes seed 3572947): a
    complex64 dot product that is 2 + 4j exactly, summed by NumPy's OpenBLAS and by torch's
    MKL, rounds to 2 on one side and just below it on the other, and a cast to int16
    truncates the two apart. A cast of equal numbers is never excused."""
    program = Program("dtypes", (Leaf((2,), "complex64", True),), (
        Step("scalar_op", (0,), {"op": "/", "scalar": 1 + 2j, "left": True}),
        Step("matmul", (1, 0), {}), Step("cast", (2,), {"dtype": "int16"})), False, 3572947)
    mine, theirs = run(program, gradkit), run(program, torch)
    products = [r.values[2] for r in (mine, theirs)]
    np.testing.assert_allclose(*products, rtol=1e-6)  # the products agree to rounding
    for result, product in zip((mine, theirs), products, strict=True):
        assert result.values[3] == np.trunc(product.real)  # each side truncates its own
    if np.array_equal(*products):  # this machine's BLAS rounds the sum as torch's MKL does
        assert mine.values[3] == theirs.values[3]
        return
    assert mine.values[3] != theirs.values[3]
    assert known_difference(program, mine, theirs).startswith("a step that turns a rounding")
    # gradkit's cast of torch's very product, yet another integer: a wrong cast, not excused
    wrong_cast = mine._replace(values=[*theirs.values[:3], mine.values[3]])
    assert known_difference(program, wrong_cast, theirs) is None


def test_long_of_torchs_in_place_complex_quotient_rounded_apart_is_documented():
    """Documented (docs/numerics.md, "turn a last-bit difference"; dtypes seed 3812483):
    torch's complex64 x /= x of a short tensor divides the elements past its last full
    vector with its scalar formula, which leaves 0.9999999 where x / x (vectorized) gives
    1; long() truncates the two apart. Each side's long() is its own quotient truncated."""
    program = Program("dtypes", (Leaf((3, 1, 2), "complex64", True),), (
        Step("add", (0, 0), {}), Step("ibinop", (1, 1), {"op": "/"}),
        Step("unary", (2,), {"fn": "long"})), False, 3812483)
    mine, theirs = run(program, gradkit), run(program, torch)
    quotients = [r.values[2] for r in (mine, theirs)]
    np.testing.assert_allclose(*quotients, rtol=1e-6)
    for result, quotient in zip((mine, theirs), quotients, strict=True):
        np.testing.assert_array_equal(result.values[3], np.trunc(quotient.real))
    x = torch.tensor(leaf_values(program.leaves, program.seed)[0]) * 2
    in_place = x.clone()
    in_place /= in_place
    assert not torch.equal(in_place, x / x)  # torch's own two roundings
    if mine.values[3].tolist() == theirs.values[3].tolist():
        pytest.skip("gradkit's quotients truncate as torch's in-place ones here")
    assert known_difference(program, mine, theirs).startswith("a step that turns a rounding")
    wrong = mine._replace(values=[*theirs.values[:3], 1 - theirs.values[3]])
    assert known_difference(program, wrong, theirs) is None  # a long() of equal numbers


@pytest.mark.parametrize("fn", ["long", "trunc", "floor"])
def test_rounding_to_an_integer_excuses_only_numbers_that_differ(fn):
    """The known difference reads long(), trunc and floor as it reads a cast: results that
    differ where their inputs are equal are a mismatch."""
    program = Program("dtypes", (Leaf((2,), "float32", False),), (
        Step("unary", (0,), {"fn": fn}),), False, 1)
    near = np.array([1.0, np.nextafter(np.float32(1), np.float32(0))], dtype=np.float32)
    rounded = {"floor": np.floor}.get(fn, np.trunc)
    mine = Result(error=None, values=[near, rounded(near)], flags=[False, False], slots=[0, 1],
                  grads=[], grads2=[])
    apart = mine._replace(values=[near[::-1], rounded(near[::-1])])
    assert known_difference(program, mine, apart).startswith("a step that turns a rounding")
    equal_inputs = mine._replace(values=[near, rounded(near) + 1])
    assert known_difference(program, equal_inputs, mine) is None


def test_second_hook_on_a_stale_unbind_output_is_documented():
    """Documented (docs/autograd.md, "first hook only"; hooks seed 3902318): an
    unbind output with a hook, its base then written in place: torch registers a second hook
    without reading the stale grad_fn and raises at backward; gradkit raises at once. Both
    raise torch's message, and a first hook after the write raises in both."""
    def program(m, hook_before):
        x = m.tensor([1.0, 2.0], dtype=m.float64, requires_grad=True)
        y = x + x
        first, _ = y.unbind(0)
        if hook_before:
            first.register_hook(lambda g: -g)
        y.sigmoid_()
        first.register_hook(lambda g: 2 * g)
        first.backward()
    stale = "Output 0 of Unbind is a view and its base or another view of its base has been"
    for m in (torch, gradkit):
        with pytest.raises(RuntimeError, match=stale):
            program(m, False)
    with pytest.raises(RuntimeError, match=stale) as theirs:
        program(torch, True)
    assert theirs.traceback[-1].name != "register_hook"  # torch's backward raised it
    with pytest.raises(RuntimeError, match=stale) as mine:
        program(gradkit, True)
    assert any(entry.name == "register_hook" for entry in mine.traceback)
    problems, known = diff_program(generate(RandomDrawer(3902318)))
    assert known == "a second hook on a stale unbind/split output raises at once (torch: at " \
        "the next read of its grad_fn)"


@pytest.mark.parametrize("dtypes", [("float64", "complex128"), ("complex128", "float64"),
                                    ("float32", "float64")])
@pytest.mark.parametrize("shapes", [((1, 2, 0), (1, 0, 3)), ((2, 0, 1), (2, 1, 3))])
def test_empty_bmm_of_two_dtypes_is_torchs_with_its_gradients(dtypes, shapes):
    """torch's bmm answers an empty product of two dtypes (zeros in mat2's dtype) before its
    dtype check; the gradients flow back to each operand in its own dtype (mixed seed
    3942879)."""
    def program(m):
        x = m.ones(shapes[0], dtype=getattr(m, dtypes[0]), requires_grad=True)
        y = m.ones(shapes[1], dtype=getattr(m, dtypes[1]), requires_grad=True)
        out = m.bmm(x, y)
        gx, gy = m.autograd.grad(out.sum().abs(), [x, y], allow_unused=True)
        return out, gx, gy
    assert_same_as_torch(program)


@pytest.mark.parametrize("equation", ["...i,...i->...", "ij,jk->ik"])
def test_empty_einsum_of_two_dtypes_saves_its_operands_as_torch(equation):
    """An empty einsum of a double and a complex tensor is a bmm that saves the double operand
    itself (not a complex copy): writing it in place afterwards makes backward raise torch's
    error (mixed seed 3942879)."""
    def program(m, write):
        x = m.ones((1, 0), dtype=m.complex128, requires_grad=True)
        y = m.log(x.abs() + 0.5)
        out = m.einsum(equation, y, x if equation.startswith("...") else x.t())
        if write:
            y.clamp_(-1, 0.3)
        (g,) = m.autograd.grad(out.sum().real, [x])
        return out, g
    assert_same_as_torch(lambda m: program(m, False))
    for m in (torch, gradkit):  # gradkit names the saved tensor as its other messages do
        with pytest.raises(RuntimeError, match=r"modified by an inplace operation: \[\w+\.\w+ "
                           r"\[1, 1, 0\]\], which is output 0 of \w+, is at version 1; "
                           "expected version 0 instead"):
            program(m, True)


_EMPTY_NORMS = {
    "batch_norm": lambda m, x, w, b, rm, rv: m.batch_norm(x, w, b, rm, rv, True, 0.1, 0.1, False),
    "batch_norm_eval": lambda m, x, w, b, rm, rv: m.batch_norm(x, w, b, rm, rv, False, 0.1, -1.0,
                                                               False),
    "F.batch_norm": lambda m, x, w, b, rm, rv: m.nn.functional.batch_norm(x, rm, rv, w, b, True),
    "instance_norm": lambda m, x, w, b, rm, rv: m.instance_norm(x, w, b, rm, rv, True, 0.1, 0.1,
                                                                False),
    "instance_norm_eval": lambda m, x, w, b, rm, rv: m.instance_norm(x, w, b, rm, rv, False, 0.1,
                                                                     0.1, False),
}


@pytest.mark.parametrize("norm", list(_EMPTY_NORMS))
@pytest.mark.parametrize("shape", [(1, 2, 0), (0, 2, 3), (2, 0, 3)])
@pytest.mark.parametrize("dtypes, stats", [
    (("int64", "int64", "float32"), False), (("float32", "float64", None), False),
    (("bool", "bool", "int64"), False), (("float64", None, None), False),
    (("float32", "float32", "float32"), True), (("float64", None, None), True)])
def test_empty_batch_and_instance_norm_are_atens_shortcut(norm, shape, dtypes, stats):
    """ATen's batch_norm of an empty input skips its checks and kernel: a clone times
    ``weight[0]`` plus ``bias[0]``, 0-d, so an int64 input with a float32 bias gives float32
    and a float64 weight keeps a float32 input's dtype; an empty weight raises select's error;
    instance_norm repeats its weights N times and sets its running statistics to the mean of
    their N copies (breadth seed 103242)."""
    x_dtype, w_dtype, b_dtype = dtypes

    def program(m):
        x = m.zeros(shape, dtype=getattr(m, x_dtype))
        grad_able = w_dtype in ("float32", "float64")
        w = None if w_dtype is None else m.tensor([1.5, 2.0][:shape[1]],
                                                  dtype=getattr(m, w_dtype)).requires_grad_(
                                                      grad_able)
        b = None if b_dtype is None else m.tensor([0.5, -1.0][:shape[1]],
                                                  dtype=getattr(m, b_dtype))
        rm, rv = (m.tensor([0.1, 0.3][:shape[1]], dtype=m.float64),
                  m.tensor([1.0, 3.0][:shape[1]], dtype=m.float64)) if stats else (None, None)
        out = _EMPTY_NORMS[norm](m, x, w, b, rm, rv)
        extra = (rm, rv) if stats else ()
        if not (grad_able and out.requires_grad):
            return (out, *extra)
        (gw,) = m.autograd.grad(out.sum(), [w], create_graph=True)
        return (out, gw, *extra)
    assert_same_as_torch(program)


def test_batch_norms_argument_checks_are_torchs():
    """F.batch_norm's eps checks are its Python wrapper's (torch.batch_norm normalizes with any
    eps); running statistics given one without the other are a ValueError; instance_norm
    without its running statistics in evaluation mode names them both; native_batch_norm and
    group_norm refuse an integer input, empty or not, in their kernels' words."""
    def ones(m, *shape, dtype="float32"):
        return m.ones(shape, dtype=getattr(m, dtype))
    programs = [
        lambda m: m.batch_norm(m.arange(4.0).reshape(2, 2), None, None, None, None, True, 0.1,
                               0.0, False),
        lambda m: m.batch_norm(ones(m, 2, 2), None, None, ones(m, 2) * 0, ones(m, 2), False,
                               0.1, -0.5, False),
        lambda m: m.nn.functional.batch_norm(ones(m, 2, 2), None, None, training=True, eps=0.0),
        lambda m: m.nn.functional.batch_norm(ones(m, 2, 2), ones(m, 2), ones(m, 2), eps=-1.0),
        lambda m: m.batch_norm(ones(m, 2, 2), None, None, ones(m, 2), None, True, 0.1, 1e-5,
                               False),
        lambda m: m.batch_norm(ones(m, 2, 2, dtype="int64"), None, None, None, ones(m, 2), True,
                               0.1, 1e-5, False),
        lambda m: m.nn.functional.instance_norm(ones(m, 2, 2, 3), ones(m, 2), ones(m, 2),
                                                use_input_stats=False, eps=-1.0),
        lambda m: m.instance_norm(ones(m, 1, 2, 3), None, None, None, None, False, 0.1, 1e-5,
                                  False),
        lambda m: m.native_batch_norm(ones(m, 0, 2, dtype="int64"), None, None, None, None, True,
                                      0.1, 1e-5),
        lambda m: m.native_batch_norm(ones(m, 2, 2, dtype="int64"), None, None, None, None, True,
                                      0.1, 1e-5),
        lambda m: m.native_batch_norm(ones(m, 0, 2), None, None, None, None, True, 0.1, 1e-5),
        lambda m: m.native_batch_norm(ones(m, 0, 2), ones(m, 2), None, ones(m, 2), ones(m, 2),
                                      False, 0.1, 1e-5),
        lambda m: m.nn.functional.group_norm(ones(m, 2, 2, 3, dtype="int64"), 1),
        lambda m: m.group_norm(ones(m, 0, 2, 3, dtype="bool"), 1),
        lambda m: m.native_group_norm(ones(m, 0, 2, 3), None, None, 0, 2, 3, 1, 1e-5),
    ]
    for program in programs:
        assert_same_as_torch(program)


_FLOAT_PARAMETERS = ("pad", "hinge_embedding_loss", "logit", "nan_to_num", "layer_norm",
                     "huber_loss", "cosine_similarity", "cdist", "margin_ranking_loss",
                     "isclose", "cross_entropy_label_smoothing", "pdist")


@pytest.mark.parametrize("name", _FLOAT_PARAMETERS)
@pytest.mark.parametrize("given", ["python", "0d", "0d_imaginary"])
def test_a_float_parameter_given_a_complex_is_torchs(name, given):
    """A ``double`` parameter refuses a Python complex (its parser's TypeError) and reads a
    complex 0-d tensor as item<double>(): its real part, or its overflow error when the
    imaginary part is not 0 (gradkit failed in NumPy or its own comparisons)."""
    value = {"python": lambda m: 1.5 + 0j, "0d": lambda m: m.tensor(1.5 + 0j),
             "0d_imaginary": lambda m: m.tensor(1.5 + 1j)}[given]
    assert_same_as_torch(lambda m: _NUMBER_PARAMETERS[name](m, value(m)))


@pytest.mark.parametrize("smoothing", [-0.25, -5.0, float("nan"), 0.0, 0.3, 1.0, 1.5, 2.0])
@pytest.mark.parametrize("target", ["index", "probabilities"])
def test_cross_entropy_label_smoothing_is_checked_as_torch(smoothing, target):
    """torch refuses only a label_smoothing above 1 (printed as its C++ double: ``Got: 2``); a
    negative or NaN one smooths nothing."""
    def program(m):
        logits = m.tensor([[1.0, 2.0, 0.5], [0.0, -1.0, 3.0]], dtype=m.float64,
                          requires_grad=True)
        labels = m.tensor([0, 2]) if target == "index" else \
            m.tensor([[0.2, 0.3, 0.5], [1.0, 0.0, 0.0]], dtype=m.float64)
        loss = m.nn.functional.cross_entropy(logits, labels, label_smoothing=smoothing)
        return (loss, *m.autograd.grad(loss, [logits]))
    assert_same_as_torch(program)


def test_masked_select_of_a_non_finite_householder_product_is_known():
    """Known difference (docs/numerics.md, "A later step may make another value, or shape";
    breadth seed 104672): householder_product of a complex [[-inf]] is inf + nanj in torch's
    LAPACK and NaN here; masked_select of its ``real > 0`` keeps one element in torch and none
    here. The product's finite entries (none) agree, so what differs is downstream of it."""
    program = Program("breadth", (Leaf((), "complex64", True, True),), (
        Step("l_householder_product", (0,), {"n": 1}), Step("b_masked_select", (1,), {})),
        True, 104672, True)
    mine, theirs = run(program, gradkit), run(program, torch)
    assert not np.isfinite(mine.values[1]).any() and not np.isfinite(theirs.values[1]).any()
    assert mine.values[2].shape != theirs.values[2].shape
    problems, known = diff_program(program)
    assert problems and known.startswith("a LAPACK routine of a non-finite matrix")


@pytest.mark.parametrize("name", ["histc", "arange", "std_correction", "var_correction",
                                  "arange_step"])
@pytest.mark.parametrize("given", ["python", "0d", "0d_imaginary"])
def test_a_number_read_as_a_double_given_a_complex_is_its_real_part(name, given):
    """A Scalar the op reads as a double (std's correction, histc's range, arange's bounds)
    takes a complex number, Python's or a 0-d tensor, as its real part, and raises
    c10::Scalar's overflow error when the imaginary part is not 0 (breadth seed 106209: std
    of a complex 0-d correction; gradkit compared complex numbers or made an empty arange)."""
    call = {**_NUMBER_PARAMETERS, **_SEVERAL_SIGNATURES}[name]
    value = {"python": lambda m: 2 + 0j, "0d": lambda m: m.tensor(2 + 0j),
             "0d_imaginary": lambda m: m.tensor(2 + 1j)}[given]
    assert_same_as_torch(lambda m: call(m, value(m)))


_INPUT_SCALARS = {
    "leaky_relu": lambda m, x, v: m.nn.functional.leaky_relu(x, v),
    "leaky_relu_": lambda m, x, v: m.nn.functional.leaky_relu_(x.clone(), v),
    "elu": lambda m, x, v: m.nn.functional.elu(x, v),
    "elu_": lambda m, x, v: m.nn.functional.elu_(x.clone(), v),
    "softplus": lambda m, x, v: m.nn.functional.softplus(x, v),
    "hardshrink": lambda m, x, v: m.nn.functional.hardshrink(x, v),
    "addcmul": lambda m, x, v: m.addcmul(x, x, x, value=v),
    "addcdiv": lambda m, x, v: m.addcdiv(x, x, x + 3, value=v),
}


@pytest.mark.parametrize("name", list(_INPUT_SCALARS))
@pytest.mark.parametrize("given", ["python", "0d", "python_imaginary", "0d_imaginary"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_complex_scalar_of_a_real_op_is_its_real_part(name, given, dtype):
    """A Scalar the op converts to its real input's dtype takes a complex number's real part,
    and raises c10's overflow error naming that type (float, double) when its imaginary part
    is not 0 (breadth seeds 106990: addcmul's value, 107519: leaky_relu's slope, given a
    complex 0-d tensor; gradkit raised, or computed in complex)."""
    value = {"python": lambda m: 2 + 0j, "0d": lambda m: m.tensor(2 + 0j),
             "python_imaginary": lambda m: 0.5 + 1j,
             "0d_imaginary": lambda m: m.tensor(0.5 + 1j)}[given]

    def program(m):
        x = m.tensor([0.5, -1.5, 2.0], dtype=getattr(m, dtype), requires_grad=True)
        out = _INPUT_SCALARS[name](m, x, value(m))
        return (out, *m.autograd.grad(out.sum(), [x]))
    assert_same_as_torch(program)


def test_nan_to_num_reads_its_numbers_before_refusing_a_complex_gradient():
    """torch's parser refuses a nan given as a tensor requiring grad before the op refuses to
    differentiate a complex input (breadth seed 107311)."""
    def program(m):
        x = m.tensor(1 + 1j, requires_grad=True)
        return m.nan_to_num(x, m.tensor(0.5, requires_grad=True) * 1)
    assert_same_as_torch(program)


@pytest.mark.parametrize("name", ["elu", "celu", "selu"])
@pytest.mark.parametrize("alpha", [-1.0, -0.0, 0.0, 2.0])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_elu_of_a_signed_zero_is_the_zero_itself(name, alpha, dtype):
    """torch's elu kernel gives x * scale at x = +0 and -0, not alpha * expm1(0), whose sign is
    alpha's: elu(0, alpha=-1) is 0 (breadth seed 108660, the alpha a complex 0-d tensor)."""
    def program(m):
        x = m.tensor([0.0, -0.0, -1e-30, 1e-30, -2.0, 3.0], dtype=getattr(m, dtype),
                     requires_grad=True)
        args = () if name == "selu" else (alpha,) if name == "elu" or alpha else (1.0,)
        out = getattr(m.nn.functional, name)(x, *args)
        return (out, *m.autograd.grad(out.sum(), [x]))
    assert_same_as_torch(program)


@pytest.mark.parametrize("rows", [
    [[1.0, 0.0], [math.nan, 3.0]], [[1.0, 0.0], [math.nan, 3.0], [5.0, 1.0]],
    [[math.nan, 0.0], [math.nan, 3.0], [5.0, 1.0]], [[1.0, 2.0, 3.0], [4.0, math.nan, 6.0],
                                                      [7.0, 8.0, math.nan]],
    [[0.0, 1.0], [0.0, math.nan]]])
@pytest.mark.parametrize("dtype", ["float64", "float32", "complex128"])
def test_lu_pivots_skip_a_nan_as_lapacks_idamax(rows, dtype):
    """LAPACK's i?amax never finds a NaN larger, so a column's pivot is its largest finite
    entry unless the NaN comes first; NumPy's argmax picked the first NaN, and LU's factors
    differed in their finite entries too (breadth seed 108897: lu of a conv_transpose2d of
    corrcoef's NaNs)."""
    def program(m):
        a = m.tensor(rows, dtype=getattr(m, dtype))
        lu, pivots, info = m.linalg.lu_factor_ex(a)
        return lu, pivots, info, m.linalg.lu(a).U
    assert_same_as_torch(program)


def test_bilinear_grid_sample_at_an_infinite_point_is_known():
    """Known difference (docs/numerics.md, "at a non-finite grid point"; breadth seed 108284):
    the input's first derivative agrees (the outside corners left out), its second derivative
    through the grid's gradient is NaN in torch and 0 here."""
    def program(m):
        image = m.tensor([[[[0.75]]]], dtype=m.float64, requires_grad=True)
        grid = m.tensor([[[[math.inf, 0.5]]]], dtype=m.float64, requires_grad=True)
        out = m.nn.functional.grid_sample(image, grid, align_corners=False)
        g_image, g_grid = m.autograd.grad(out.sum(), [image, grid], create_graph=True)
        return g_image, m.autograd.grad(g_grid.sum(), [image], allow_unused=True)[0]
    (first, second), (t_first, t_second) = (
        [t.detach().numpy() for t in program(m)] for m in (gradkit, torch))
    np.testing.assert_array_equal(first, t_first)
    assert np.isnan(t_second).all() and (second == 0).all()
    problems, known = diff_program(generate(RandomDrawer(108284), "breadth"))
    assert problems and known.startswith("bilinear grid_sample at a non-finite grid point")


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_softshrink_zero_of_a_negative_input_is_known(dtype):
    """Known difference (docs/numerics.md, "`softshrink` of a negative `x` inside"; breadth
    seed 109194): torch's vectorized loop gives +0.0 for the elements of its full vectors
    (their width is the machine's) and its scalar tail x * 0 = -0.0; gradkit -0.0
    throughout, torch's scalar result. One element is all tail, and agrees."""
    def zeros(m, n):
        out = m.nn.functional.softshrink(m.full((n,), -0.25, dtype=getattr(m, dtype)))
        return np.signbit(out.numpy())
    assert zeros(gradkit, 65).all() and zeros(torch, 1).all() and zeros(gradkit, 1).all()
    assert not zeros(torch, 65)[:32].any() and zeros(torch, 65)[-1]
    program = Program("breadth", (Leaf((3, 3), "float64", True), Leaf((), "int64", False)),
                      (Step("n_activation", (0,), {"fn": "softshrink"}),), False, 109194, True)
    problems, known = diff_program(program)
    assert not problems or known.startswith("softshrink's zero of a negative x")


@pytest.mark.parametrize("program", [
    lambda m, x: m.nn.functional.threshold(x, 0.5 + 0j, 2 + 0j),
    lambda m, x: m.nn.functional.threshold(x, m.tensor(0.5 + 0j), 2),
    lambda m, x: m.nn.functional.threshold(x, 0.5 + 1j, 2),
    lambda m, x: m.nn.functional.threshold_(x.detach().clone(), m.tensor(0.5 + 0j), 2 + 0j),
    lambda m, x: m.renorm(x.reshape(1, 3), 2, 0, m.tensor(1 + 0j)),
    lambda m, x: m.renorm(x.reshape(1, 3), 2 + 0j, 0, 1 + 1j),
    lambda m, x: x.reshape(1, 3).renorm(2, 0, 1 + 0j)],
    ids=["threshold", "threshold_0d", "threshold_imaginary", "threshold_", "renorm_maxnorm",
         "renorm_p", "renorm_method"])
def test_threshold_and_renorm_of_a_complex_number_as_torch(program):
    """threshold converts a complex threshold or value to its real input's dtype (the real
    part; gradkit failed in backward, breadth seed 110622); renorm refuses a complex p or
    maxnorm with its own message ("must be real-valued"; gradkit's comparison raised a
    TypeError, breadth seed 109729)."""
    def run(m):
        x = m.tensor([0.2, 0.7, -1.0], dtype=m.float64, requires_grad=True)
        out = program(m, x)
        return (out, *m.autograd.grad(out.sum(), [x])) if out.requires_grad else out
    assert_same_as_torch(run)


@pytest.mark.parametrize("create_graph", [True, False])
@pytest.mark.parametrize("eps", [math.nan, 0.2, 0.0, -1.0, -0.25, None])
def test_logit_gradient_is_masked_by_any_eps_as_torch(eps, create_graph):
    """Building a graph, torch's logit backward (its composite formula) is g / (x (1 - x))
    inside [eps, 1 - eps] and 0 elsewhere for any eps, a NaN x or eps included; a plain
    backward (its kernel) is NaN outside [0, 1] for no or a negative eps and leaves a NaN x or
    eps unmasked (breadth seed 112417: an eps made NaN from a graph tensor of special values;
    gradkit gave the kernel's answer in a double backward). That is the kernel's scalar loop,
    which a one-element tensor takes on every CPU; its vectorized loop masks as the formula
    (test_logit_kernels_vectorized_loop_masks_a_nan_x_or_eps)."""
    def program(m, values):
        x = m.tensor(values, dtype=m.float64, requires_grad=True)
        out = m.logit(x, eps)
        g, = m.autograd.grad(out.sum(), [x], create_graph=create_graph)
        return (out, g, *m.autograd.grad(g.sum(), [x])) if create_graph else (out, g)
    values = [0.1, 0.5, 0.9, 0.0, 1.0, math.nan, -0.5, 1.5]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for chunk in [values] if create_graph else [[v] for v in values]:
            assert_same_as_torch(lambda m, chunk=chunk: program(m, chunk))


@pytest.mark.parametrize("eps", [math.nan, 0.2, 0.0])
def test_logit_kernels_vectorized_loop_masks_a_nan_x_or_eps(eps):
    """Known (docs/numerics.md, "vectorized loop masks as the formula"): torch's logit
    backward kernel runs tensors of two SIMD vectors or more (8 float64 elements on AVX2, 16
    on AVX-512) through a loop that masks a NaN x or eps to 0, as its formula does, the rest
    through a scalar loop that passes them; gradkit's plain backward is the scalar loop on any
    length, so it does not depend on the CPU. 64 elements take the vectorized loop on both."""
    values = [0.5, math.nan, 0.9, 1.5] * 16

    def grad(m, values, create_graph=False):
        x = m.tensor(values, dtype=m.float64, requires_grad=True)
        g, = m.autograd.grad(m.logit(x, eps).sum(), [x], create_graph=create_graph)
        return g.detach().numpy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        vectorized, formula = grad(torch, values), grad(torch, values, create_graph=True)
        scalar = np.concatenate([grad(torch, [v]) for v in values[:4]])
        mine = grad(gradkit, values)
    np.testing.assert_array_equal(vectorized, formula)
    np.testing.assert_array_equal(mine, np.tile(scalar, 16))
    unmasked = np.isnan(np.tile([0.5, math.nan, 0.9, 1.5], 16)) | math.isnan(eps)
    np.testing.assert_array_equal(mine[~unmasked], vectorized[~unmasked])
    assert (vectorized[unmasked] == 0).all() and not (mine[unmasked] == 0).any()


def test_logdet_of_an_infinite_matrix_is_a_known_lapack_difference():
    """Known difference (docs/numerics.md, "OpenBLAS and torch's MKL propagate"; breadth seed
    113324): logdet of a matrix with an infinite entry (x log inf in a column stack) is inf
    here and NaN in torch, as slogdet's LU of it; logdet is one of the LAPACK steps now."""
    problems, known = diff_program(generate(RandomDrawer(113324), "breadth"))
    assert problems and known.startswith("a LAPACK routine of a non-finite matrix")
    for m in (gradkit, torch):
        value = m.logdet(m.tensor([[math.inf, 0.5], [1.0, 2.0]]) + 2 * m.eye(2))
        assert not math.isfinite(value.item())


@pytest.mark.parametrize("op", ["squeeze_", "unsqueeze_", "t_", "transpose_", "as_strided_"])
@pytest.mark.parametrize("made", ["split", "no_grad"])
def test_an_in_place_view_op_makes_views_that_refuse_writes_stale(op, made):
    """An in-place view op (squeeze_, t_, as_strided_, ...) bumps its tensor's version, so the
    other views of its memory that refuse in-place writes (split outputs, views made under
    no_grad) are stale as after a write: torch regenerates one when read, and raises
    (breadth seed 113031: split of a histc, then squeeze_; gradkit computed)."""
    def program(m):
        x = m.tensor([0.5, 1.0, 2.0], dtype=m.float64, requires_grad=True)
        h = x * 1
        if made == "split":
            view = h.split([2, 1])[0]
        else:
            with m.no_grad():
                view = h[:2]
        if op == "transpose_":
            h.unsqueeze_(0).transpose_(0, 1)
        elif op == "as_strided_":
            h.as_strided_((3,), (1,))
        else:
            getattr(h, op)(*([0] if op == "unsqueeze_" else []))
        return m.autograd.grad((view * 2).sum(), [x])
    assert_same_as_torch(program)


@pytest.mark.parametrize("shape, dim", [((1, 0), None), ((0,), 0), ((2, 0, 2), 1),
                                        ((0, 3), 0)])
@pytest.mark.parametrize("correction", [-1, -0.5, 0, 1])
def test_variance_of_nothing_with_a_negative_correction_is_nan(shape, dim, correction):
    """The variance of an empty reduction is NaN whatever the correction: with a negative one
    gradkit's NumPy var divided an empty sum by -correction and gave 0 (breadth seed 114728:
    std of a (1, 0) tensor, correction a 0-d int tensor of -1)."""
    def program(m):
        x = m.zeros(shape, dtype=m.float32, requires_grad=True)
        std = x.std(dim, correction=correction)
        return (std, x.var(dim, correction=correction, keepdim=True),
                *m.var_mean(x.to(m.complex64), dim, correction=correction),
                *m.autograd.grad(std.sum(), [x]))


def test_cast_of_a_power_of_float32_exp_keeps_the_low_bits_of_either():
    """Documented (docs/numerics.md, "keeps the low bits of a number"; dtypes seed 4353875):
    NumPy's float32 exp(2) is an ulp from torch's, x ** x grows that to 1.4e-6 relative at
    2.6e6 (a few float32 ulp, other integer parts), and a cast to int16 keeps the low bits
    of each side's own number."""
    def steps(m):
        e = m.exp(m.tensor(2, dtype=m.uint8))
        return e ** e, (e ** e).to(m.int16)
    (mine, my_low), (theirs, their_low) = (
        tuple(v.numpy() for v in steps(m)) for m in (gradkit, torch))
    np.testing.assert_allclose(mine, theirs, rtol=1e-5)
    assert math.trunc(float(mine)) != math.trunc(float(theirs))
    for value, low_bits in ((mine, my_low), (theirs, their_low)):
        assert int(low_bits) == (math.trunc(float(value)) + 2 ** 15) % 2 ** 16 - 2 ** 15
    assert int(my_low) != int(their_low)
    problems, known = diff_program(generate(RandomDrawer(4353875)))
    assert known == "a cast to an integer dtype keeps the low bits of a float one ulp from " \
        "torch's" or not problems


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("square", [True, False])
def test_complex_product_is_the_fused_rounding_torch_uses_in_its_tail(dtype, square):
    """Documented (docs/numerics.md, "Every element is one of the two roundings"): gradkit's
    complex product is NumPy's fused ``ac - bd``, ``ad + bc``; torch's rounds the four products
    in whole SIMD vectors and fuses (most of) the loop's leftover elements, so each of its
    elements is one of the two roundings, and a long x * x has elements of both."""
    rng = np.random.default_rng(3)
    x = (rng.uniform(-1, 1, 203) + 1j * rng.uniform(-1, 1, 203)).astype(dtype)
    y = x if square else (rng.uniform(-1, 1, 203) + 1j * rng.uniform(-1, 1, 203)).astype(dtype)
    a, b, c, d = x.real, x.imag, y.real, y.imag
    fused = fused_multiply_add(np, a, c, -(b * d)) + 1j * fused_multiply_add(np, a, d, b * c)
    unfused = (a * c - b * d) + 1j * (a * d + b * c)
    mine = (gradkit.tensor(x) * gradkit.tensor(y)).numpy()
    theirs = (torch.tensor(x) * torch.tensor(y)).numpy()
    np.testing.assert_array_equal(mine, fused.astype(dtype))
    assert np.all((theirs == fused) | (theirs == unfused))
    assert np.any(fused != unfused)  # the two roundings do part here


def test_write_into_a_stale_view_then_into_a_leaf_fails_a_step_later_here():
    """Documented (docs/autograd.md, "unless something read its `grad_fn` first"; indexing seed
    4858986): a view made before its base required grad, written after a write gave the base a
    history: torch's in-place check reads the view's stale grad_fn and raises as for a leaf,
    unless grad_fn was read first; gradkit writes, as torch then does. The program's next
    write, into a leaf that requires grad, is refused by both."""
    def program(m, read_grad_fn):
        leaf = m.tensor([0.5, -1.0, 2.0], requires_grad=True)
        base = m.tensor(0.3)
        view = base[()]
        base[()] = leaf.sum()
        if read_grad_fn:
            assert view.grad_fn is not None
        view[()] = base.sum()
        return leaf, view
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used"):
        program(torch, False)
    assert_same_as_torch(lambda m: program(m, True)[1])
    np.testing.assert_array_equal(program(gradkit, False)[1].detach().numpy(),
                                  program(torch, True)[1].detach().numpy())
    for m in (torch, gradkit):
        leaf, view = program(m, True)
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used"):
            leaf[m.tensor([1, 0], dtype=m.int32)] = view.sum()
    problems, known = diff_program(generate(RandomDrawer(4858986)))
    assert known == "a write into a view made stale by a write into its base (torch raises " \
        "as for a leaf)" or not problems


def test_complex_product_that_overflows_is_inf_here_and_nan_in_torchs_vector_loop():
    """Documented (docs/numerics.md, "torch's unfused `ac - bd` is"; mixed seed 4952887): z * z
    of z near 1e181(1 + 1j): a * c and b * d both overflow, so torch's vectorized real part is
    inf - inf, NaN, where gradkit's fused one (and torch's own leftover element) is -inf."""
    z = np.full(9, 1.1e181 + 1.3e181j, dtype=np.complex128)
    theirs = (torch.tensor(z) * torch.tensor(z)).numpy()
    mine = (gradkit.tensor(z) * gradkit.tensor(z)).numpy()
    assert np.all(mine.real == -np.inf) and np.all(mine.imag == np.inf)
    assert np.isnan(theirs.real).any() and np.all(theirs.imag == np.inf)
    assert np.all(np.isnan(theirs.real) | (theirs.real == -np.inf))
    problems, known = diff_program(generate(RandomDrawer(4952887)))
    assert known.startswith("a complex product: torch's vector loop") or not problems


def test_copy_from_a_complex_view_of_the_same_pair_is_a_full_overlap():
    """torch's overlap check compares the memory range and the strides in elements, not the
    shapes: a (1,) complex view of a (2,) real tensor is the same memory with the same strides,
    so copy_ from it passes (the real part, broadcast), and backward then refuses the complex
    product saved before the write (views seed 4988833). A shifted view still overlaps."""
    def program(m):
        leaf = m.tensor([0.5, -1.25], dtype=m.float64, requires_grad=True)
        pair = leaf.clone()
        view = m.view_as_complex(pair).unsqueeze(0)
        view.mul_(view)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch's (and gradkit's) discarded imaginary part
            pair.copy_(view)
        return pair
    assert_same_as_torch(program, rtol=0)
    for m in (torch, gradkit):
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            program(m).sum().backward()
        x = m.zeros(4, dtype=m.float64)
        with pytest.raises(RuntimeError, match="some elements of the input tensor and the "
                           "written-to tensor refer to a single memory location"):
            x[:2].copy_(m.view_as_complex(x.view(2, 2)))


def test_maximum_of_a_float32_gelu_of_inf_follows_each_sides_gelu():
    """Documented (docs/numerics.md, "oneDNN kernel"; special seed 5018909): torch's float32
    gelu of more than one element is NaN at +inf (oneDNN, on AVX-512 CPUs), gradkit's inf (as
    torch's on AVX2 ones); a maximum with y
    then picks and differentiates as it would with that NaN or inf in place of the gelu."""
    values = [0.3, math.inf, 0.5]

    def program(m, first):
        x = m.tensor(values, dtype=m.float32, requires_grad=True)
        y = m.tensor(0.4, dtype=m.float32, requires_grad=True)
        g = first(m, x)
        out = m.maximum(g, y)
        return (g, out) + m.autograd.grad(out.sum(), [y])
    mine, theirs = (program(m, lambda m, x: m.nn.functional.gelu(x)) for m in (gradkit, torch))
    assert math.isinf(mine[0][1].item())
    assert math.isnan(theirs[0][1].item()) if torch_float32_gelu_is_nan_at_inf() else \
        math.isinf(theirs[0][1].item())
    np.testing.assert_allclose(mine[0].detach().numpy()[[0, 2]],
                               theirs[0].detach().numpy()[[0, 2]], rtol=1e-6)
    for m, result in ((gradkit, mine), (torch, theirs)):
        replayed = program(m, lambda m, x, own=result[0].detach(): own)  # its gelu's values
        for a, b in zip(result[1:], replayed[1:]):
            np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    problems, known = diff_program(generate(RandomDrawer(5018909)))
    assert known == "float32 gelu gives 0.0 (NaN) in torch's oneDNN kernel where gradkit " \
        "gives -0.0 (inf)" or not problems


def test_write_into_a_reshaped_view_made_stale_by_a_write_into_its_slice():
    """Documented (docs/autograd.md, "unless something read its `grad_fn` first"; views seed
    5187465): x.reshape(-1) of a 1-D x is a view; a write into its slice gives the base a
    history and leaves the view's grad_fn stale, so torch's next write into the view raises
    as for a leaf unless grad_fn was read first; gradkit writes, as torch then does."""
    def program(m, read_grad_fn):
        source = m.tensor([0.5, -1.0, 2.0], dtype=m.float64, requires_grad=True)
        base = m.tensor([0.25, 1.5, -3.0], dtype=m.float64)
        view = base.reshape(-1)
        view[1:3] = source[..., :1]
        if read_grad_fn:
            assert view.grad_fn is not None
        view.masked_fill_(view > 0, -2.0)
        return (view,) + m.autograd.grad(view.sum(), [source])
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used"):
        program(torch, False)
    assert_same_as_torch(lambda m: program(m, True))
    for a, b in zip(program(gradkit, False), program(torch, True)):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    problems, known = diff_program(generate(RandomDrawer(5187465)))
    assert known == "a write into a view made stale by a write into its base (torch raises " \
        "as for a leaf)" or not problems


def test_abs_of_a_prod_along_a_dim_second_derivative_beside_an_inf():
    """torch's ProdBackward1 (prod along a dim) keeps sgn's zero tensor zero, as the full
    prod's: the second derivative of |prod(x, -1)| beside an inf is inf, not 0 * inf = NaN
    (mixed seed 5250399)."""
    values = np.array([[-0.9778936, -0.8048619, -np.inf], [0.4405451, -0.8908937, -0.0],
                       [-0.16416803, np.inf, 0.9145717]], dtype=np.float32)

    def program(m):
        x = m.tensor(values, requires_grad=True)
        g, = m.autograd.grad(x.prod(-1, keepdim=True).abs().sum(), x, create_graph=True)
        weights = m.tensor(np.linspace(0.1, 0.9, 9, dtype=np.float32).reshape(3, 3))
        return (g,) + m.autograd.grad((g * weights).sum(), x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same_as_torch(program)


def test_atanh_in_place_of_a_rounded_one_is_a_known_rounding_step():
    """Known difference (docs/numerics.md, "`atanh` (or `atanh_`) of a 1 one ulp either side";
    breadth seed 110686): |Q| of a 1 x 1 complex QR is 1 but for rounding, which atanh_ turns
    into inf or NaN. Since |z| is hypot(re, im), as torch's, that program agrees (lane
    bfuzzD); atanh of 1 and of 1 - ulp still differ as documented."""
    assert diff_program(generate(RandomDrawer(110686), "breadth")) == ([], None)
    for m in (gradkit, torch):
        assert m.atanh(m.tensor([1.0, 1.0 - 2.0 ** -53], dtype=m.float64)).tolist() == \
            [math.inf, pytest.approx(18.714973875118524)]
    for m in (gradkit, torch):
        assert math.isinf(m.atanh(m.tensor(1.0, dtype=m.float64)).item())
        assert math.isnan(m.atanh(m.tensor(1.0 + 2.0 ** -52, dtype=m.float64)).item())


def test_in_place_complex_power_by_a_huge_exponent_is_a_sine_of_noise():
    """Documented (docs/numerics.md, "turn a last-bit difference"; dtypes seed 5394155): y =
    sin(sum(300 ** x)) is about 1e29 (agreeing but for rounding), so x **= y is |.| cis of
    Im(y log x) ~ 1e29, whose ulp is many periods: the infinities' signs are noise."""
    values = np.array([[[-0.977198 - 0.58941605j, 0.75291869 + 0.7678852j]],
                       [[-0.12304904 + 0.78026275j, 0.14372105 - 0.58398083j]]])

    def operands(m):
        x = 300 ** m.tensor(values)
        return x, m.sin(x.sum())
    (x_mine, y_mine), (x_theirs, y_theirs) = operands(gradkit), operands(torch)
    for a, b in ((x_mine, x_theirs), (y_mine, y_theirs)):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-9)
    argument = np.imag(y_theirs.numpy() * np.log(x_theirs.numpy()))
    assert np.all(np.spacing(np.abs(argument)) > 2 * np.pi)  # one ulp spans periods
    problems, known = diff_program(generate(RandomDrawer(5394155)))
    assert known == "a step that turns a rounding difference of its input into another " \
        "number" or not problems


@pytest.mark.parametrize("dtypes", [("complex128", "float32"), ("float64", "float32"),
                                    ("float32", "complex128")])
@pytest.mark.parametrize("shapes", [((3, 0, 1), (3, 1, 0)), ((2, 3, 0), (2, 0, 2)),
                                    ((0, 2, 2), (0, 2, 2))])
@pytest.mark.parametrize("beta", [0, 1.5])
def test_baddbmm_of_two_dtypes_summing_nothing_is_torchs(dtypes, shapes, beta):
    """torch's baddbmm answers a product with nothing summed before its dtype check: batch2's
    dtype, zeros at beta == 0, else beta * input cast (its complex part dropped); each
    operand's gradient in its own dtype (breadth seed 128270)."""
    def program(m):
        x, y = (m.full(shape, 0.5 - 0.25j if "complex" in dtype else 0.5,
                       dtype=getattr(m, dtype), requires_grad=True)
                for shape, dtype in zip(shapes, dtypes))
        x_in = x.sum(-1, keepdim=True).expand(shapes[0][0], shapes[0][1], shapes[1][2])
        with warnings.catch_warnings():  # (the complex cast's warning: both warn once a
            warnings.simplefilter("ignore")  # process, test_complex_to_real_casts_warn_once)
            out = m.baddbmm(x_in, x, y, beta=beta, alpha=2.5)
        grads = m.autograd.grad(out.abs().sum(), [x, y], allow_unused=True)
        return (out,) + tuple(grads)
    assert_same_as_torch(program)


@pytest.mark.parametrize("beta,dtype", [(2j, "float32"), (2j, "float64"), (1.5, "int64")])
def test_baddbmm_of_two_dtypes_refuses_a_beta_its_result_cannot_hold(beta, dtype):
    """torch scales the cast input in place: a wider result type is refused by name."""
    def program(m):
        x = m.ones(1, 2, 0, dtype=m.complex128)
        y = m.ones(1, 0, 2, dtype=getattr(m, dtype))
        return m.baddbmm(m.ones(1, 2, 2, dtype=m.complex128), x, y, beta=beta)
    assert_same_as_torch(program)


@pytest.mark.parametrize("d", [1, 2])
def test_max_unpool_of_nothing_gives_a_gradient_without_history(d):
    """torch's max_unpool backward (max_pool_double_backward) answers an empty input with a
    fresh empty tensor, so a double backward stops there and never reaches ctc_loss's
    backward, whose derivative neither library has (nn_new seed 56220)."""
    def program(m):
        nnf = m.nn.functional
        x = m.zeros((2, 0), dtype=m.float64, requires_grad=True)
        pool, unpool = getattr(nnf, f"max_pool{d}d"), getattr(nnf, f"max_unpool{d}d")
        pooled, indices = pool(x.reshape((0, 1) + (2,) * d), 1, 3, return_indices=True)
        log_probs = unpool(pooled, indices, 1, 3).sum().repeat(24).reshape(4, 2, 3)
        loss = nnf.ctc_loss(log_probs.log_softmax(-1), m.tensor([[1, 1, 2], [1, 1, 1]]),
                            (4, 3), (3, 0), reduction="none")
        (grad,) = m.autograd.grad(loss.sum(), [x], create_graph=True)
        (grad2,) = m.autograd.grad(grad.sum(), [x])
        return grad, grad2, m.tensor(grad.requires_grad)
    assert_same_as_torch(program)
    problems, _ = diff_program(generate(RandomDrawer(56220), "nn_new"))
    assert problems == []


@pytest.mark.parametrize("p", [1.5, 3.0, 2.0, 1.0, 0.5])
@pytest.mark.parametrize("shape", [(1, 0), (0,), (2,)])
def test_second_derivative_of_a_norm_of_nothing_divides_as_torchs(p, shape):
    """torch's norm_backward divides the unexpanded gradient by norm ** (p - 1) before it
    multiplies the input: at a zero norm of an empty input the second derivative with
    respect to that gradient is 0 / 0 = NaN for 1 < p != 2 (breadth seed 110337: the NaN
    reached eig's gauge check, which raised in torch)."""
    def program(m):
        x = m.zeros(shape, dtype=m.float64, requires_grad=True)
        v = m.tensor(1.0, dtype=m.float64, requires_grad=True)
        results = []
        for norm in (m.dist(x, m.zeros(shape, dtype=m.float64), p),
                     m.linalg.vector_norm(x, p, dim=-1, keepdim=True).sum()):
            (gx,) = m.autograd.grad(norm, [x], grad_outputs=v, create_graph=True)
            results += m.autograd.grad(gx.sum(), [v, x], allow_unused=True)
        return tuple(results)
    assert_same_as_torch(program)
    if shape == (1, 0) and p == 1.5:
        problems, _ = diff_program(generate(RandomDrawer(110337), "breadth"))
        assert problems == []


def test_an_error_after_dist_p0s_backward_is_known():
    """torch's dist(p=0) backward raises for ``other``, gradkit passes no gradient and goes
    on to its double backward, where eig's gauge check (a NaN from std of one element)
    raises, as torch's does with p=1 (breadth seed 127440)."""
    program = generate(RandomDrawer(127440), "breadth")
    _, known = diff_program(program)
    assert known == "dist(p=0) passes no gradient (torch's backward for `other` raises)"
    assert run(program, gradkit).error[0] == "double backward"


@pytest.mark.parametrize("shape", [(0,), (2, 0)])
def test_internal_factories_give_their_size_as_one_tuple(shape):
    """``zeros()`` with no size is torch's TypeError now, so gradkit's own callers pass the
    size as one tuple: trapezoid of no samples is a zero of the other dims, even 0-d (breadth
    seed 110804), as is a vmap over an empty batch's stand-in sample."""
    assert_same_as_torch(with_grads(lambda m, y: m.trapezoid(y, dim=-1), np.zeros(shape)))
    out = gradkit.func.vmap(lambda t: t.sum())(gradkit.zeros(shape[::-1]))
    assert tuple(out.shape) == (shape[-1],)


@pytest.mark.parametrize("dtype", ["complex64", "complex128", "float64"])
@pytest.mark.parametrize("dim", [-1, None])
def test_prod_over_one_element_with_a_zero_passes_the_gradient_through(dtype, dim):
    """torch's prod_safe_zeros_backward returns the gradient itself for a size-1 dim (and a
    full product of one element): no graph through x, so the second derivative beside a NaN
    stays finite (mixed seed 5486871: prod of square(x) at x = [[nan], [-0.0]])."""
    def program(m):
        x = m.tensor([[complex("nan")], [-0.0]] if dtype != "float64" else [[math.nan], [-0.0]],
                     dtype=getattr(m, dtype), requires_grad=True)
        rows = [m.square(x)] if dim is not None else [m.square(x[:1]), m.square(x[1:])]
        out = sum(((m.prod(r, dim=dim, keepdim=True) if dim is not None else m.prod(r))
                   * (1.5 - 0.5j if dtype != "float64" else 1.5)).sum() for r in rows)
        (gx,) = m.autograd.grad(out.real if out.is_complex() else out, [x], create_graph=True)
        (ggx,) = m.autograd.grad((gx * gx.conj()).real.sum() if gx.is_complex()
                                 else (gx * gx).sum(), [x])
        return gx, ggx
    assert_same_as_torch(program)
    if dtype == "complex64" and dim == -1:
        problems, _ = diff_program(generate(RandomDrawer(5486871)))
        assert problems == []


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_prod_over_one_element_with_a_zero_passes_gradgradcheck(dtype):
    """The size-1 product's gradient (ones) stays differentiable twice, zero present or not."""
    x = gradkit.tensor(np.array([[0.0], [0.7], [-1.3]], dtype=dtype), requires_grad=True)
    for dim in (0, 1):
        def f(t, dim=dim):
            return gradkit.prod(t[:1] if dim == 0 else t, dim=dim)
        assert gradkit.autograd.gradcheck(f, (x,))
        assert gradkit.autograd.gradgradcheck(f, (x,))


def test_in_place_complex_division_by_zero_of_rounding_noise_is_known():
    """Documented (docs/numerics.md, "are exactly 0 where gradkit's"; dtypes seed 5593763):
    torch's complex64 ``x /= x`` of a short tensor takes its scalar formula, exactly real,
    where gradkit's (Smith's, fused, as torch's vectorized ``x / x``) leaves ~1e-9j; over
    -0.0 that noise is inf and torch's 0 is NaN."""
    values = np.array([-0.64114344 + 0.79879487j, 0.42842627 + 0.45298457j], np.complex64)

    def in_place(m, divisor):
        x = m.tensor(values)
        x /= x
        quotient = x.clone()
        x /= divisor
        return quotient.numpy(), x.numpy()
    (q_mine, out_mine), (q_theirs, out_theirs) = (in_place(m, -0.0) for m in (gradkit, torch))
    assert np.all(q_theirs.imag == 0) and np.all(q_mine.imag != 0)
    np.testing.assert_allclose(q_mine, q_theirs, rtol=1e-6)
    np.testing.assert_array_equal(  # gradkit's in-place is torch's out-of-place x / x
        q_mine, (torch.tensor(values) / torch.tensor(values)).numpy())
    assert np.all(np.isnan(out_theirs.imag)) and np.all(np.isinf(out_mine.imag))
    problems, known = diff_program(generate(RandomDrawer(5593763)))
    assert problems and known == \
        "an in-place division by zero of a dividend that agrees but for rounding"
    (_, out_mine), (_, out_theirs) = (in_place(m, 2.0) for m in (gradkit, torch))
    np.testing.assert_allclose(out_mine, out_theirs, rtol=1e-6)  # a nonzero divisor: noise


def test_in_place_division_by_a_nonzero_is_not_that_known_difference():
    """The entry needs the last write to divide by zero: the same program dividing by 2,
    with a value made to differ, is not this difference."""
    program = generate(RandomDrawer(5593763))
    last = program.steps[-1]
    assert last.op == "iscalar_op" and last.params["scalar"] == 0
    changed = dataclasses.replace(program, steps=program.steps[:-1] + (
        last._replace(params={"op": "/", "scalar": 2.0}),))
    mine, theirs = run(changed, gradkit), run(changed, torch)
    slot = len(program.leaves) + len(program.steps) - 1
    assert not _in_place_division_by_zero_of_noise(changed, mine, theirs)
    theirs.values[slot] = theirs.values[slot] + 1  # now it differs, but not over a zero
    assert not _in_place_division_by_zero_of_noise(changed, mine, theirs)


@pytest.mark.parametrize("name, input_shape, input_dtype, weight_shape, weight_dtype, bias", [
    ("conv1d", (0, 1, 2), "float32", (1, 1, 2), "float64", None),
    ("conv1d", (0, 1, 4), "float64", (2, 1, 2), "float32", "float64"),
    ("conv2d", (0, 2, 4, 4), "float32", (2, 1, 2, 2), "float64", "float32"),
    ("conv3d", (0, 1, 3, 3, 3), "float64", (1, 1, 2, 2, 2), "float32", None),
    ("conv1d", (0, 1, 4), "float32", (1, 1, 2), "float64", "float64"),  # bias still checked
    ("conv1d", (1, 1, 4), "float32", (1, 1, 2), "float64", None),  # non-empty: weight checked
])
def test_convolution_of_an_empty_batch_skips_the_weight_dtype_check(
        name, input_shape, input_dtype, weight_shape, weight_dtype, bias):
    """torch's empty backend computes ``input * weight.flatten()[0]``: an empty batch takes
    any float weight dtype, keeps the input's dtype and gives the weight a zero gradient;
    the bias dtype is still checked (seed 402963)."""
    def program(m):
        groups = 2 if input_shape[1] == 2 else 1
        x = m.zeros(*input_shape, dtype=getattr(m, input_dtype), requires_grad=True)
        w = m.ones(*weight_shape, dtype=getattr(m, weight_dtype), requires_grad=True)
        leaves = [x, w]
        if bias is not None:
            leaves.append(m.ones(weight_shape[0], dtype=getattr(m, bias), requires_grad=True))
        out = getattr(m.nn.functional, name)(*leaves, groups=groups, stride=2)
        return (out,) + m.autograd.grad(out.sum(), leaves)
    assert_same_as_torch(program)


@pytest.mark.parametrize("shape", [(1, 0, 2), (1, 2, 2)])
def test_ldexp_result_written_in_place_refuses_backward_for_self_alone(shape):
    """torch saves ldexp's result (other's gradient reads it) even when only self needs a
    gradient: saved outputs are never skipped, so an in-place ``cumsum_`` of the result
    refuses backward, empty or not (seed 401282)."""
    def program(m):
        x = m.zeros(*shape, dtype=m.float64, requires_grad=True)
        y = m.ldexp(x, m.tensor(3))
        y.cumsum_(1)
        y.sum().backward()
    _both_refuse_the_write(program, match=r"output 0 of LdexpBackward0|output 0 of Ldexp")



@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("given", ["python", "0d_tensor"])
def test_softplus_complex_beta_computes_but_refuses_double_backward(dtype, given):
    """A complex beta (imaginary part 0) computes softplus and its gradient as its real
    value, but torch's softplus_double_backward compares ``x * beta < threshold`` and has no
    complex less-than (seed 201361)."""
    def program(m, create_graph):
        x = m.tensor([0.3, -1.0, 30.0], dtype=getattr(m, dtype), requires_grad=True)
        beta = complex(0.1) if given == "python" else m.tensor(complex(0.1))
        y = m.nn.functional.softplus(x, beta, 5)
        (g,) = m.autograd.grad(y.sum(), x, create_graph=create_graph)
        if create_graph:
            g.sum().backward()
        return y, g
    assert_same_as_torch(lambda m: program(m, False))
    assert_same_as_torch(lambda m: program(m, True))
    with pytest.raises(NotImplementedError, match='"lt_cpu" not implemented for'):
        program(gradkit, True)


def test_histc_of_a_rounded_bin_edge_is_a_known_rounding_step():
    """Known difference (docs/numerics.md, "`histc` counts a value one ulp either side of a
    bin edge"; breadth seed 201754): |Q| of a 1 x 1 complex QR is 1 but for rounding, and 1 is
    the edge between histc(bins=3, min=0, max=1.5)'s last two bins."""
    problems, known = diff_program(generate(RandomDrawer(201754), "breadth"))
    assert problems and known == "a step that turns a rounding difference of its input into " \
        "another number"
    for m in (gradkit, torch):
        below = m.tensor([1.0 - 2.0 ** -53], dtype=m.float64)
        for value, counts in ((below, [0.0, 1.0, 0.0]), (below * 0 + 1, [0.0, 0.0, 1.0])):
            assert m.histc(value, bins=3, min=0, max=1.5).tolist() == counts


@pytest.mark.parametrize("needs", ["x", "e", "both"])
@pytest.mark.parametrize("call", [
    lambda m, x, e: m.pow(x, e), lambda m, x, e: x ** e, lambda m, x, e: x.pow(e[0]),
    lambda m, x, e: m.pow(x[0], e), lambda m, x, e: m.float_power(x, e)],
    ids=["pow", "**", "0-d exponent", "0-d base", "float_power"])
def test_pow_of_two_tensors_keeps_its_result_whichever_needs_a_gradient(call, needs):
    """torch's Pow1 (tensor ** tensor) saves its result whichever input needs a gradient
    (saved outputs are never skipped), so a later in-place write into the result refuses
    backward even when only the base needs one."""
    def program(m):
        x = m.tensor([1.5, 2.0, 0.5], dtype=m.float64, requires_grad=needs != "e")
        e = m.tensor([2.0, 0.5, 3.0], dtype=m.float64, requires_grad=needs != "x")
        y = call(m, x, e)
        y.mul_(2)
        y.sum().backward()
    _both_refuse_the_write(program, match=r"output 0 of Pow1")


def test_pow_of_a_number_base_reads_its_result():
    """Pow2 (number ** tensor) reads its result for the exponent's gradient."""
    def program(m):
        y = m.pow(2.0, m.tensor([2.0, 0.5], dtype=m.float64, requires_grad=True))
        y.mul_(2)
        y.sum().backward()
    _both_refuse_the_write(program, match=r"output 0 of Pow2")


@pytest.mark.parametrize("exponent", [2.5, 2, 0.5])
def test_pow_by_a_number_saves_no_result(exponent):
    """Pow0 (tensor ** number) saves the base only: writing into the result is allowed."""
    def program(m):
        x = m.tensor([1.5, 2.0, 0.5], dtype=m.float64, requires_grad=True)
        y = m.pow(x, exponent)
        y.mul_(2)
        (g,) = m.autograd.grad(y.sum(), x)
        return y, g
    assert_same_as_torch(program)


@pytest.mark.parametrize("bounds", [(-3.0, math.nan), (math.nan, 2.0), (math.nan, math.nan)])
@pytest.mark.parametrize("inplace", [False, True])
def test_hardtanh_of_a_nan_bound_is_nan_as_torch_clamp(bounds, inplace):
    """hardtanh is torch's clamp: a NaN bound (here a max of 0-d NaN from a triplet loss of
    infinities) makes every value NaN; the gradient masks only the edges a number bounds
    (breadth seed 135772)."""
    def program(m):
        x = m.tensor([0.79, -5.0, 5.0, math.nan], dtype=m.float64, requires_grad=True)
        y = m.nn.functional.hardtanh(x * 1, *bounds, inplace=inplace)
        (g,) = m.autograd.grad(y.sum(), x, create_graph=True)
        return y, g
    assert_same_as_torch(program)
    problems, known = diff_program(generate(RandomDrawer(135772), "breadth"))
    assert not problems, (problems, known)


@pytest.mark.parametrize("beta", [0.5, 0.0, 1.0, 2])
@pytest.mark.parametrize("name", ["addmm", "addmv", "baddbmm", "addbmm", "addbmm-no-batch"])
def test_integer_product_of_nothing_summed_scales_its_input_in_place(name, beta):
    """With nothing summed torch's integer addmm, baddbmm and addbmm run ``result.mul_(beta)``,
    which refuses a float beta but 0 ("result type Float can't be cast to the desired output
    type Long"; addmv's kernel truncates it) (breadth seed 136484)."""
    def program(m):
        i64 = m.int64
        x, v, b3, b0 = (m.ones(*s, dtype=i64) for s in ((2, 0), (0,), (2, 2, 0), (0, 2, 1)))
        calls = {"addmm": lambda: m.addmm(m.ones(2, 2, dtype=i64), x, x.mT, beta=beta),
                 "addmv": lambda: m.addmv(m.ones(2, dtype=i64), x, v, beta=beta),
                 "baddbmm": lambda: m.baddbmm(m.ones(2, 2, 2, dtype=i64), b3, b3.mT, beta=beta),
                 "addbmm": lambda: m.addbmm(m.ones(2, 2, dtype=i64), b3, b3.mT, beta=beta),
                 "addbmm-no-batch": lambda: m.addbmm(m.ones(2, 2, dtype=i64), b0, b0.mT,
                                                     beta=beta)}
        return calls[name]()
    assert_same_as_torch(program)
    if name == "addmm" and beta == 0.5:
        problems, known = diff_program(generate(RandomDrawer(136484), "breadth"))
        assert not problems, (problems, known)


def test_complex_reciprocal_of_zero_has_torch_s_unsigned_nan():
    """special seed 6032581: 1 / sqrt(0j) is inf + nan j with the NaN's sign bit clear in
    torch (the FPU's 0 / 0 sets it); catan's zero imaginary part copies that sign, and asin
    on its branch cut then gave -1.02j where torch gives +1.02j."""
    for dtype in ("complex128", "complex64"):
        values = [0j, -0j, complex(-0.0, 0.0), complex(-0.0, -0.0)]
        ours, theirs = (lib.tensor(values, dtype=getattr(lib, dtype)).rsqrt().atan().asin()
                        .tolist() for lib in (gradkit, torch))
        assert ours == theirs
        for fn in ("rsqrt", "reciprocal"):
            got, expected = (getattr(lib.tensor(values, dtype=getattr(lib, dtype)), fn)().numpy()
                             for lib in (gradkit, torch))
            np.testing.assert_array_equal(np.signbit(got.imag), np.signbit(expected.imag))


def test_fft_zero_sign_is_known():
    """Known difference (docs/numerics.md, "of a zero it leaves is the algorithm's";
    breadth seed 110647): hfft of a -0.0 input is six zeros in both, one of them -0.0, not
    the same one in pocketfft and MKL."""
    outs = {m: m.fft.hfft(m.tensor([complex(-0.0, 0.0)], dtype=m.complex128), n=6).numpy()
            for m in (gradkit, torch)}
    assert (outs[gradkit] == 0).all() and (outs[torch] == 0).all()
    assert np.signbit(outs[gradkit]).sum() == np.signbit(outs[torch]).sum() == 1
    assert (np.signbit(outs[gradkit]) != np.signbit(outs[torch])).any()
    problems, known = diff_program(generate(RandomDrawer(110647), "breadth"))
    assert problems and known == "the sign of a zero an FFT leaves"


def test_matrix_exp_gradient_of_a_large_incoming_gradient_is_known():
    """Known difference (docs/numerics.md, "amplify each algorithm's"; breadth seed 128972):
    d exp(a) / da of a 1 x 1 matrix is g e^a; with g ~ 1e10 the exp of the block matrix
    [[a, g], [0, a]] scales and squares many times, and both libraries round a relative
    1e-6 or so off (gradkit's the nearer)."""
    a, g = 0.5515263514229836, 1.7e10
    errors = {}
    for m in (gradkit, torch):
        x = m.tensor([[a]], dtype=m.float64, requires_grad=True)
        (grad,) = m.autograd.grad(m.linalg.matrix_exp(x), x, m.tensor([[g]], dtype=m.float64))
        errors[m] = abs(grad.item() / (g * math.exp(a)) - 1)
    assert errors[gradkit] < 1e-5 and errors[torch] < 1e-5
    assert errors[gradkit] <= errors[torch]
    problems, known = diff_program(generate(RandomDrawer(128972), "breadth"))
    assert problems and known.startswith("matrix_exp's gradient for a large incoming gradient")


def test_eig_vectors_of_a_repeated_eigenvalue_are_known():
    """Known difference (docs/numerics.md, "basis of its eigenspace (not an orthogonal one)";
    breadth seed 137918): c J + 2 I (J all ones, 4 x 4) has eigenvalue 2 three times; each library's
    eigenvectors of it are eigenvectors, a basis of the eigenspace of its own choice, so
    the fuzzer's sum_i L_i |V_i|^2 differs while the eigenvalues agree."""
    c = -0.09177007526159286
    spectra = []
    for m in (gradkit, torch):
        a = m.full((4, 4), c, dtype=m.float64) + 2 * m.eye(4, dtype=m.float64)
        values, vectors = m.linalg.eig(a)
        residual = (a.to(m.complex128) @ vectors - vectors * values).abs().max().item()
        assert residual < 1e-12
        spectra.append(np.sort_complex(values.numpy()))
    np.testing.assert_allclose(spectra[0], spectra[1], atol=1e-12)
    np.testing.assert_allclose(spectra[0].real, sorted([2.0] * 3 + [2 + 4 * c]), atol=1e-12)
    problems, known = diff_program(generate(RandomDrawer(137918), "breadth"))
    assert problems and known == "eig's eigenvectors of a repeated eigenvalue: any basis of " \
        "its eigenspace"


def test_branch_cut_of_a_complex_cross_of_itself_is_torchs():
    """breadth seed 141451, a Known until the twenty-third session: cross(v, v) of a complex
    v is rounding noise, and acosh_ of it sits on acosh's branch cut at 0, the imaginary part
    +-pi/2 by the noise's sign. gradkit's products cancelled exactly where torch's left
    1e-17; its cross now rounds as torch's kernel, so the noise and the signs are torch's."""
    values = [[0.3 + 0.7j, -1.1 + 0.2j, 0.5 - 0.4j], [0.9 + 1.3j, -0.2 - 0.6j, 1.7 + 0.1j]]
    outs = []
    for m in (gradkit, torch):
        v = m.tensor(values, dtype=m.complex128)
        cross = m.linalg.cross(v, v)
        assert cross.abs().max().item() < 1e-15
        outs.append((cross.numpy().copy(), cross.acosh_().numpy()))
    for ours, theirs in zip(*outs):
        np.testing.assert_array_equal(ours.view(np.uint8), theirs.view(np.uint8))
    problems, known = diff_program(generate(RandomDrawer(141451), "breadth"))
    assert not problems


@pytest.mark.parametrize("bound", ["clamp_min", "clamp_max", "clamp"])
def test_clamp_by_a_tensor_keeps_its_input_at_a_signed_zero_tie_as_torchs_scalar_loop(bound):
    """Known difference (docs/numerics.md, "a clamp by tensor bounds"; breadth seed 1427259):
    at a tie of 0.0 and -0.0, torch's scalar loop (tensors shorter than its vector width, and
    the tail) keeps the clamped input, gradkit everywhere; torch's vectorized lanes may pick
    the bound."""
    def signs(m, n):
        x, bound_t = m.zeros(n, dtype=m.float64), m.full((n,), -0.0, dtype=m.float64)
        call = {"clamp": lambda: m.clamp(x, min=bound_t), "clamp_min": lambda: m.clamp_min(
            x, bound_t), "clamp_max": lambda: m.clamp_max(x, bound_t)}[bound]
        return np.signbit(call().numpy())
    assert not signs(torch, 1).any() and not signs(gradkit, 1).any()
    assert not signs(gradkit, 9).any() and not signs(torch, 9)[-1]
    program = Program("breadth", (Leaf((3, 3, 3), "float64", True, True),),
                      (Step("e_addcmul", (0, 0), {"s": 2}), Step("e2_clamp_min", (1, 0), {})),
                      False, 1427259, True)
    problems, known = diff_program(program)
    assert not problems or known.startswith("max/min/clamp tie")


def test_div_by_a_zero_number_of_rounding_noise_is_that_known_difference():
    """The entry covers ``x.div_(0)`` too (breadth seed 1481578): a complex lu_solve of
    A x = A is 1 + 2e-17j here and 1 - 2e-17j in torch, so over 0 its imaginary part is inf
    of either sign; both backward passes then fail alike (lu_solve of a different dtype)."""
    for m in (gradkit, torch):
        assert m.tensor([1 + 2e-17j]).div_(0).imag.item() == math.inf
        assert m.tensor([1 - 2e-17j]).div_(0).imag.item() == -math.inf
    program = generate(RandomDrawer(1481578), "breadth")
    assert program.steps[-1].op == "num_div_" and program.steps[-1].params["s"] == 0
    problems, known = diff_program(program)
    assert problems and known == \
        "an in-place division by zero of a dividend that agrees but for rounding"


def test_cov_without_degrees_of_freedom_of_complex_noise_is_known():
    """Known (docs/numerics.md, "with no degree of freedom divides"; breadth seed 1508442):
    cov of 2 complex observations with correction=2 divides by 0, and the imaginary part of
    a variance is rounding noise of either sign (torch's and gradkit's differ), so inf of
    that sign; with a degree of freedom left the noise is below 1e-9 in both."""
    rows = np.array([[0.56189424 + 0.9374787j, -0.2483864 + 0.9469068j],
                     [-0.2837816 + 0.19214772j, -0.14804418 - 0.67717594j]], np.complex64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # both warn of no degree of freedom
        for m in (gradkit, torch):
            variances = m.cov(m.tensor(rows), correction=1).numpy().diagonal()
            assert np.abs(variances.imag).max() < 1e-9
            assert np.isinf(m.cov(m.tensor(rows), correction=2).numpy().imag).all()
    problems, known = diff_program(generate(RandomDrawer(1508442), "breadth"))
    assert not problems or known.startswith("cov with no degree of freedom")
    step = Step("e2_cov", (0,), {"correction": 1})  # with a degree of freedom: not this entry
    program = Program("breadth", (Leaf((2, 2), "complex64", True),), (step,), False, 1508442)
    mine, theirs = run(program, gradkit), run(program, torch)
    theirs.values[1] = theirs.values[1] + 1
    assert not _cov_of_noise_over_zero(program, mine, theirs)


@pytest.mark.parametrize("seed, op", [(176727, "b_add_alpha"), (1657730, "e2_rsub")])
def test_an_infinite_alpha_of_rounding_noise_is_known(seed, op):
    """Known (docs/numerics.md, "`add(x, y, alpha=inf)` (or `rsub`'s) of a `y`"): x + inf * y
    of a y that is rounding noise around 0 is inf of its sign (strided seed 176727: a complex
    cov's imaginary diagonal; strided_breadth seed 1657730: torch divides one complex64
    element x / x to an exact 1 - 0j, gradkit to 1 - 1e-8j); a finite alpha agrees."""
    program = generate(RandomDrawer(seed), "strided_breadth")
    assert any(s.op == op and s.params["s"] == math.inf for s in program.steps)
    problems, known = diff_program(program)
    assert not problems or known == \
        "a step that turns a rounding difference of its input into another number"
    finite = dataclasses.replace(program, steps=tuple(
        s._replace(params={"s": 2.0}) if s.op == op else s for s in program.steps))
    assert diff_program(finite)[0] == []


def test_max_distance_gradient_among_ties_rounding_decides_is_known():
    """Known (docs/numerics.md, "the coordinates whose difference ties"; strided_breadth seed
    1688935): cdist(p=3) is an ulp from torch's (Sleef's pow), so a p=inf pdist after it ties
    otherwise and its gradient lands elsewhere; with the same inputs it is not this entry."""
    program = generate(RandomDrawer(1688935), "strided_breadth")
    mine, theirs = run(program, gradkit), run(program, torch)
    first_order = (mine._replace(grads2=[]), theirs._replace(error=None, grads2=[]))
    assert not compare(*first_order) or _max_distance_among_rounded_ties(program, *first_order)
    same_inputs = first_order[1]._replace(values=first_order[0].values)
    assert not _max_distance_among_rounded_ties(program, first_order[0], same_inputs)


def test_a_copy_from_a_conj_view_of_its_destination_is_known():
    """Known (docs/numerics.md, "reads elements it has already written"; conj_views seed
    327845): x[..., 0:2] = x.conj()[..., :1] reads the source whole here (both elements
    conj(x0)); torch's copy_ kernel reads x0 after writing it. A copy from a conj view of
    another tensor agrees, and is not this entry."""
    def program(m, itself):
        x = m.tensor([[1 + 1j, 2 + 2j]])
        source = (x if itself else x.clone()).conj()
        x[..., 0:2] = source[..., :1]
        return x.tolist()
    assert program(gradkit, True) == [[1 - 1j, 1 - 1j]]
    # torch's elements read x0 before or after its write, as its loop (its CPU's) goes
    assert all(v in (1 - 1j, 1 + 1j) for v in program(torch, True)[0])
    assert program(gradkit, False) == program(torch, False)
    problems, known = diff_program(generate(RandomDrawer(327845), "conj_views"))
    assert not problems or known.startswith("a copy from a conj view of its own destination")
    other = generate(RandomDrawer(327845), "conj_views")
    steps = list(other.steps)
    steps[1] = steps[1]._replace(inputs=(0,))  # conj of the leaf, not of the written clone
    problems, known = diff_program(dataclasses.replace(other, steps=tuple(steps)))
    assert not problems


def test_float32_group_norm_of_a_large_mean_is_known():
    """Known (docs/numerics.md, "as `x * scale + (b - mean * scale)`"; breadth seed
    1533484): torch's float32 group_norm of one value 7.7e8 with w = 7.7e8, b = w / 2 - 1,
    eps = 0.1 cancels two products of 1.9e18 in float32; its float64 result is b, as
    gradkit's float32 one."""
    def program(m, dtype):
        x = m.tensor([[[7.683984e+08]]], dtype=dtype)
        w = m.tensor([7.683984e+08], dtype=dtype)
        return m.group_norm(x, 1, w, w * 0.5 - 1, 0.1).item()
    exact = program(torch, torch.float64)
    assert program(gradkit, gradkit.float32) == pytest.approx(exact, rel=1e-6)
    assert program(torch, torch.float32) != pytest.approx(exact, rel=1e-3)
    problems, known = diff_program(generate(RandomDrawer(1533484), "breadth"))
    assert not problems or known.startswith("a float32 group_norm: torch's fused")


def test_phase_check_of_huge_gradients_is_known():
    """Known (docs/numerics.md, "tolerance is torch's, absolute (1e-2)"; breadth seed
    1693459): gradkit's eig backward refuses a phase term of -2**19, the rounding of gradients
    of 1e22 that torch summed otherwise; gradients of ordinary size are not this entry."""
    program = generate(RandomDrawer(1693459), "breadth")
    problems, known = diff_program(program)
    assert not problems or known.startswith("the phase check of complex eigen/singular")
    mine, theirs = run(program, gradkit), run(program, torch)
    if mine.error is not None:  # (this CPU's rounding refused: the entry's own case)
        small = theirs._replace(grads=[None if g is None else g * 1e-20 for g in theirs.grads],
                                grads2=[None if g is None else g * 1e-20 for g in theirs.grads2])
        assert not _phase_check_of_huge_gradients(program, mine, small)


def test_float32_noise_known_takes_a_double_run_that_fails_in_double_backward():
    """Known difference (docs/numerics.md, "further from its own float64 gradient"; nn_new
    seed 324334): a complex64 chain of ctc_loss, bilinear and grid_sample; float32 bilinear
    rounds its first contraction otherwise in each library (torch's products unfused, NumPy's
    OpenBLAS with FMA) and the chain amplifies the ulp to 1.5 % of a gradient, both libraries
    as far from the complex128 run. That run (as the program) raises in its double backward
    (ctc_loss has none), which left the Known without its reference gradients."""
    def first(m, dtype):
        v = m.tensor([3.295836925506592, 2.1972246170043945], dtype=getattr(m, dtype))
        x1, x2 = v.repeat(3).reshape(2, 3), v.repeat(2).reshape(2, 2)
        return m.nn.functional.bilinear(x1, x2, (v.repeat(3) * 0.5).reshape(1, 3, 2))[1, 0]
    assert first(torch, "float32").item() != first(gradkit, "float32").item()  # an ulp apart
    assert first(torch, "float64").item() == pytest.approx(first(gradkit, "float64").item(),
                                                           rel=1e-15)
    problems, known = diff_program(generate(RandomDrawer(324334), "nn_new"))
    assert problems and known == "single-precision gradients that torch's own " \
        "double-precision ones show are noise"


def test_zero_of_noise_of_another_sign_is_known():
    """Known (docs/numerics.md, "noise of the other sign"; strided_breadth seed 1688020):
    batch_norm of two equal float32 values is 2.8e-6 in torch and -8.2e-7 here (rounding
    noise), so its truncating division by -0.5 is -0.0 there and 0.0 here; where the noise
    has one sign in both, a differing zero sign is not this entry."""
    program = generate(RandomDrawer(1688020), "strided_breadth")
    problems, known = diff_program(program)
    assert not problems or known.startswith("a zero made from rounding noise")
    mine, theirs = run(program, gradkit), run(program, torch)
    if problems:
        same_signs = theirs._replace(values=[
            np.copysign(t, m) if t.dtype.kind == "f" and t.shape == m.shape else t
            for m, t in zip(mine.values, theirs.values)])
        same_signs.values[-1] = -mine.values[-1]  # (the zeros still differ in sign)
        assert not _zero_of_noise_of_another_sign(program, mine, same_signs)


def test_fft_of_non_finite_values_read_by_a_later_mask_is_known():
    """Known (docs/numerics.md, "multiplies every element by its twiddle factor";
    strided_breadth seed 1686381): an FFT of [-0, inf] gives NaN parts (pocketfft) where
    MKL's are inf or 0; masked_scatter's mask x.real > 0 then routes finite gradients
    otherwise. With finite inputs the FFT is not this entry."""
    program = generate(RandomDrawer(1686381), "strided_breadth")
    problems, known = diff_program(program)
    assert not problems or known.startswith("an FFT of non-finite values")
    mine, theirs = run(program, gradkit), run(program, torch)
    finite = theirs._replace(values=[np.nan_to_num(v) for v in theirs.values])
    assert not _fft_at_non_finite(program, mine, finite) or not problems


@pytest.mark.parametrize("mode", ["floor", "trunc"])
def test_div_with_a_rounding_mode_one_ulp_off_a_multiple_is_the_documented_rounding_step(mode):
    """Documented (docs/numerics.md, "`div` with a `rounding_mode`"; breadth seeds 1747053 and
    1747716): |Q| of a 1 x 1 complex QR is 1 + ulp in NumPy's OpenBLAS and 1 in torch's MKL,
    and floor(q / -0.5) is -3 for the one and -2 for the other; torch's own div agrees with
    gradkit's on the same inputs."""
    def program(m):
        one_up = m.tensor(np.nextafter(1.0, 2.0), dtype=m.float64)
        exact = m.tensor(1.0, dtype=m.float64)
        return m.div(one_up, -0.5, rounding_mode=mode), m.div(exact, -0.5, rounding_mode=mode)
    assert_same_as_torch(program)
    above, exact = program(gradkit)
    assert exact.item() == -2 and above.item() == (-3 if mode == "floor" else -2)
    for seed, klass in ((1747053, "breadth"), (1747716, "strided_breadth")):
        problems, known = diff_program(generate(RandomDrawer(seed), klass))
        assert known == "a step that turns a rounding difference of its input into another " \
            "number" or not problems
