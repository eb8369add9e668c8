"""Differences found in the twenty-third session (fuzzer seeds and the scans they led to), each
program run in gradkit and in torch 2.13 (skipped without torch)."""
import math

import numpy as np
import pytest

import gradkit
from fuzz.known import diff_program
from fuzz.programs import RandomDrawer, generate

torch = pytest.importorskip("torch")


def _bits(array) -> list:
    """Each value exactly, a NaN as 'nan' and a zero with its sign."""
    return ["nan" if math.isnan(v) else repr(float(v)) for v in np.asarray(array).ravel()]


def _logit_gradient(lib, eps, create_graph: bool, forward: bool, grad_mode: bool) -> list:
    x = lib.tensor([-0.0, 0.0, 1.0, 0.5, 2.0, -1e-310, math.nan], dtype=lib.float64)
    v = lib.tensor([1.0, -1.0, -1.0, 1.0, 1.0, 1.0, 1.0], dtype=lib.float64)
    args = () if eps is None else (eps,)
    if forward:
        fa = lib.autograd.forward_ad
        with fa.dual_level(), lib.set_grad_enabled(grad_mode):
            return _bits(fa.unpack_dual(lib.logit(fa.make_dual(x, v), *args)).tangent.numpy())
    x.requires_grad_()
    g, = lib.autograd.grad(lib.logit(x, *args), x, v, create_graph=create_graph)
    return _bits(g.detach().numpy())


@pytest.mark.parametrize("eps", [None, -1.0, 0.0, 0.1])
@pytest.mark.parametrize("create_graph,forward,grad_mode",
                         [(False, False, True), (True, False, True), (False, True, True),
                          (False, True, False)])
def test_logit_gradient_at_zero_is_torchs(eps, create_graph, forward, grad_mode):
    """wide seed 271624: the logit_ of a -0.0 with upstream -1 had gradient +inf here and -inf
    in torch. Without grad mode torch runs its kernel, which gives dy * inf at x = 0 whatever
    the zero's sign; with grad mode, its composite formula divides by x (1 - x), -0.0 there."""
    assert _logit_gradient(gradkit, eps, create_graph, forward, grad_mode) == \
        _logit_gradient(torch, eps, create_graph, forward, grad_mode)


def _norm_and_derivatives(lib, p: float, v: float, shape: tuple, dim) -> list:
    x = lib.full(shape, v, dtype=lib.float64, requires_grad=True)
    y = lib.linalg.vector_norm(x, p, dim=dim)
    g, = lib.autograd.grad(y.sum(), x, create_graph=True)
    gg, = lib.autograd.grad(g.sum(), x)
    return _bits(y.detach().numpy()) + _bits(g.detach().numpy()) + _bits(gg.numpy())


@pytest.mark.parametrize("p", [2.0, 3.0, 1.5, -2.0])
@pytest.mark.parametrize("shape,dim", [((), None), ((), -1), ((), 0), ((), []), ((), (0,)),
                                       ((1,), None), ((1,), -1), ((1, 1), (0, 1))])
def test_the_norm_of_one_element_is_torchs(p, shape, dim):
    """wide seed 294545 (a triplet margin loss of 0-d tensors, so pairwise_distance's norm over
    dim -1 of a 0-d tensor): torch's norm of one element is its |x|, but a 0-d tensor's over
    a named dim is reduced as any other, (|x|^p)^(1/p), and sqrt(x²) for p = 2 (inf at
    1e300). gradkit took |x| for every one-element norm."""
    for v in (1e-6, 1e300, 2.5, -1e-200):
        assert _norm_and_derivatives(gradkit, p, v, shape, dim) == \
            _norm_and_derivatives(torch, p, v, shape, dim)


def test_pairwise_distance_of_0d_tensors_is_torchs():
    """The seed's own call: the distance of 0-d tensors reduces their difference + eps."""
    def distance(lib):
        x = lib.tensor(-0.53, dtype=lib.float64, requires_grad=True)
        y = lib.nn.functional.pairwise_distance(x, x * 1, p=3.0)
        g, = lib.autograd.grad(y, x, create_graph=True)
        return _bits(y.detach().numpy()) + _bits(lib.autograd.grad(g, x)[0].numpy())
    assert distance(gradkit) == distance(torch)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_lerp_to_negative_zero_with_weight_one_is_known(dtype):
    """Known difference (docs/numerics.md, "torch's vectorized `lerp`"; breadth seed 2207478):
    torch's scalar loop, as gradkit, gives end - (end - self)(1 - w) = -0.0 for
    lerp(-0.0, -0.0, 1); its vectorized loop end + (end - self)(w - 1) = +0.0."""
    def signs(lib, n):
        x = lib.full((n,), -0.0, dtype=getattr(lib, dtype))
        return np.signbit(lib.lerp(x, x, 1.0).numpy())
    assert signs(gradkit, 64).all() and signs(torch, 1).all()
    assert not signs(torch, 64)[:32].any()
    problems, known = diff_program(generate(RandomDrawer(2207478), "breadth"))
    assert problems and known.startswith("lerp with weight 1 to -0.0")


def _fused_at_the_range_end(lib, n: int) -> list:
    out = []
    for c in (-1.5e308, -math.inf, math.inf, 1e308, -0.0):
        a = lib.full((n,), 1e308, dtype=lib.float64)
        b = lib.full((n,), 2.5, dtype=lib.float64)
        c = lib.full((n,), c, dtype=lib.float64)
        out += _bits(lib.addcmul(c, a, b).numpy()) + _bits(lib.add(c, a, alpha=2.5).numpy())
        out += _bits(lib.addcmul(c, a, -b, value=0.5).numpy())
    return out


@pytest.mark.parametrize("n", [1, 20])
def test_a_fused_product_beyond_the_range_is_exact(n):
    """torch's add with alpha and addcmul are one fma: 1e308 * 2.5 - 1.5e308 is 1e308 (gradkit
    gave inf), and 1e308 * 2.5 - inf is -inf (gradkit: inf - inf = NaN). Found beside wide seed
    308608, whose batch norm below is one too."""
    assert _fused_at_the_range_end(gradkit, n) == _fused_at_the_range_end(torch, n)


@pytest.mark.parametrize("values", [[-1.7e308], [1.7e308], [-1.7e308, -1.7e308], [1e300, 3.0]])
def test_batch_norm_output_at_the_range_end_is_torchs(values):
    """ATen's batch norm writes x * alpha + beta as one fma: for a single -1.7e308, beta is
    +inf and the exact product finite, so the output is inf; gradkit's composed product
    overflowed to -inf first (NaN), and its correction to the fused value could not mend a
    NaN."""
    def output(lib):
        x = lib.tensor(values, dtype=lib.float64).reshape(1, 1, -1).requires_grad_()
        w = lib.tensor([1.5], dtype=lib.float64, requires_grad=True)
        out = lib.native_batch_norm(x, w, None, None, None, True, 0.1, 0.1)[0]
        return _bits(out.detach().numpy()) + sum(
            (_bits(g.numpy()) for g in lib.autograd.grad(out.sum(), [x, w])), [])
    assert output(gradkit) == output(torch)


@pytest.mark.parametrize("n", [1, 2, 16])
def test_layer_norm_of_a_huge_mean_is_known(n):
    """Known difference (docs/numerics.md, "torch's `layer_norm` and `group_norm` of a row";
    wide seed 308608): torch's moments combine an empty vector lane's through inf · 0, NaN;
    gradkit's rows of equal values normalize to 0, as torch's own do with a tail of one."""
    def norms(lib, count):
        x = lib.full((1, 1, count), 1e200, dtype=lib.float64)
        return [lib.nn.functional.layer_norm(x, (count,), eps=0.1).numpy(),
                lib.group_norm(x, 1, eps=0.1).numpy()]
    assert all((out == 0).all() for out in norms(gradkit, n) + norms(torch, 17))
    assert all(np.isnan(out).all() for out in norms(torch, n))
    problems, known = diff_program(generate(RandomDrawer(308608), "wide"))
    assert problems and known.startswith("layer/group norm of a row whose mean exceeds")


def test_a_float_from_an_integer_tensor_torch_marks_is_the_known_requires_grad():
    """greater_ of an int64 tensor with a float requiring grad, then copysign of it: torch's
    integer tensor requires grad (the documented wart), so the float copy does too; a
    sigmoid_ saves it, exp2_ writes it, and torch's backward refuses (wide seed 322809); its
    backward of the copy alone fails an internal assert. gradkit's integer tensor requires no
    grad, so nothing is saved and backward runs."""
    flag = torch.tensor([[1]]).greater_(torch.tensor([[0.5]], requires_grad=True))
    with pytest.raises(RuntimeError, match="isDifferentiableType"):
        flag.copysign(-1.0).sum().backward()
    problems, known = diff_program(generate(RandomDrawer(322809), "wide"))
    assert problems and known == \
        "an integer tensor written with a value that requires grad does not require grad"


def test_an_lu_zero_pivot_of_an_infinite_matrix_in_forward_is_known():
    """Known difference (the LAPACK-of-a-non-finite-matrix Known; strided_breadth seed
    2240137): OpenBLAS's LU of this matrix divides by the inf pivots, so an exact 0 pivot is
    left and gradkit's solve refuses the matrix as singular; torch's MKL carries NaN on."""
    rows = [[0.5, 0, 0], [math.inf, -0.9, 0.8], [0.3, -math.inf, 0.7]]
    a, b = (lib.tensor(rows, dtype=lib.complex128) for lib in (gradkit, torch))
    with pytest.raises(RuntimeError, match="input matrix is singular"):
        gradkit.linalg.solve(a, gradkit.ones(3, dtype=gradkit.complex128))
    assert torch.linalg.solve(b, torch.ones(3, dtype=torch.complex128)).isnan().all()
    problems, known = diff_program(generate(RandomDrawer(2240137), "strided_breadth"))
    assert problems and known.startswith("a LAPACK routine of a non-finite matrix")


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("rows", [1, 5])
def test_cross_rounds_as_torchs_kernel(dtype, rows):
    """torch's cross kernel, measured: float and double as a_j b_k - a_k b_j in one fma,
    complex double with each complex product's parts fused, half and complex float rounded at
    each step. gradkit's complex product was NumPy's, which fuses in its SIMD loop and not
    for 0-d scalars, so the cross of a complex128 3-vector with itself was 0 here and
    rounding noise in torch (strided_breadth seed 2252841: a NaN pattern downstream), and a
    complex64 or float16 cross differed in the last bit at a quarter of the values."""
    rng = np.random.default_rng(rows)
    shape = (rows, 3) if rows > 1 else (3,)
    a, b = (rng.standard_normal(shape) + (1j * rng.standard_normal(shape)
                                           if dtype.startswith("complex") else 0)
            for _ in range(2))
    outs = [[lib.linalg.cross(lib.tensor(x).to(getattr(lib, dtype)),
                              lib.tensor(y).to(getattr(lib, dtype))).numpy()
             for x, y in ((a, b), (a, a))] for lib in (gradkit, torch)]
    for ours, theirs in zip(*outs):
        np.testing.assert_array_equal(ours.view(np.uint8), theirs.view(np.uint8))


def test_a_float_computed_from_an_integer_tensor_torch_marks_is_the_known_requires_grad():
    """less_equal_ of an int64 tensor with a float requiring grad, then arccos of it: torch's
    integer tensor requires grad (the documented wart), so its arccos does too; gradkit's
    requires none, so neither does the arccos (wide seed 387429)."""
    for lib in (torch, gradkit):
        flag = lib.zeros(2, dtype=lib.int64).less_equal_(lib.tensor(0.5, requires_grad=True))
        assert flag.arccos().requires_grad == (lib is torch)
    problems, known = diff_program(generate(RandomDrawer(387429), "wide"))
    assert problems and known == \
        "an integer tensor written with a value that requires grad does not require grad"


def test_a_write_through_an_unsafe_piece_into_a_saved_result_is_known():
    """Known difference (docs/api.md, "reaches torch's backward"; wide seed 368254): an
    unsafe_chunk piece of segment_reduce's result, written in place (no version check, as
    torch documents): torch's prod gradient reads the written output (grad * output / data),
    gradkit's composed node its own product, the unwritten gradient."""
    def gradient(lib):
        x = lib.tensor([[0.3, -0.2]], requires_grad=True)
        out = lib.segment_reduce(x, "prod", lengths=lib.tensor([1, 0, 0]), initial=0.5)
        lib.unsafe_chunk(out, 1, -1)[0].logical_or_(lib.tensor(1.0))
        weights = lib.tensor([[2.0, 3.0], [1.0, 1.0], [1.0, 1.0]])
        return lib.autograd.grad((out * weights).sum(), x)[0].tolist()
    assert gradient(gradkit) == [[1.0, 1.5]]
    np.testing.assert_allclose(gradient(torch), [[2 / 0.3, 3 / -0.2]], rtol=1e-6)
    problems, known = diff_program(generate(RandomDrawer(368254), "wide"))
    assert problems and known.startswith("a write through an unsafe split's piece")


@pytest.mark.parametrize("bound", ["clamp_max_", "clamp_min_"])
def test_an_in_place_clamp_by_a_tensor_tie_written_into_a_slot_is_known(bound):
    """Known difference (the vectorized-tie Known; wide seed 382576): clamp_max_ by a tensor
    of -0.0 against +0.0 keeps the input in torch's scalar loop (as gradkit) and takes the
    bound in its vectorized lanes. The Known now also finds the step that wrote a slot in
    place after the step that made it."""
    def signs(lib, n):
        x = lib.full((n,), -0.0, dtype=lib.float64)
        return np.signbit(getattr(x, bound)(lib.zeros(n, dtype=lib.float64)).numpy())
    assert signs(gradkit, 64).all() and signs(torch, 1).all() and not signs(torch, 64).any()
    problems, known = diff_program(generate(RandomDrawer(382576), "wide"))
    assert problems and known.startswith("max/min/clamp tie of 0.0 and -0.0")


def test_torchs_backward_of_a_reshaped_conj_view_out_of_range_is_known():
    """Known difference (docs/autograd.md, "regenerates its `grad_fn` from the conj alone";
    wide seed 383153): the adjoint of a complex 0-d clone (a conj view), unsqueeze_ of it and
    an index_put_ into it. torch's backward replays the view on dims it no longer has
    ("Dimension out of range"); gradkit's refuses at its own check, as var_mean saved the
    base the write moved."""
    problems, known = diff_program(generate(RandomDrawer(383153), "wide"))
    assert problems and known.startswith("torch's backward of a conj view reshaped in place")
    assert any("Dimension out of range" in p or "error type" in p for p in problems)


def test_a_view_of_a_base_squared_in_place_then_detached_is_known():
    """Known difference (docs/autograd.md, "The two differ only when the base is"; views seed
    7204377): y.mul_(y) saves y itself, then y.detach_(). torch rebuilds the earlier view's
    history at its first read, from the detached base: no gradient. gradkit's view kept the
    history of the write, whose node refuses the detached saved tensor."""
    def outcome(lib):
        x = lib.tensor([-0.24, 0.46], requires_grad=True)
        y = x.clone()
        view = y.squeeze()
        y.mul_(y)
        y.detach_()
        try:
            return lib.autograd.grad((view * 2).sum(), x, allow_unused=True)[0]
        except RuntimeError as error:
            return str(error)
    assert outcome(torch) is None
    assert outcome(gradkit).startswith("Trying to use a saved tensor that has been detached")
    problems, known = diff_program(generate(RandomDrawer(7204377), "views"))
    assert problems and known.startswith("a view of a base written in place, then detach_()ed")


@pytest.mark.parametrize("name", ["asin", "acos"])
@pytest.mark.parametrize("z", [1e200j, -1e200j, complex(1e200, 1e200), 0.5 + 2j])
def test_complex_asin_and_acos_derivatives_at_a_huge_argument_are_torchs(name, z):
    """torch's derivative is (-x * x + 1).rsqrt(); gradkit's was (1 - x * x).rsqrt(), and a
    tensor's 1 - z multiplies z by -1 + 0j (torch's rsub too), NaN beside the inf part of
    z² = -inf + 0j: the gradient with create_graph was NaN where torch's is 0 (scan of
    complex derivatives at extremes)."""
    def derivatives(lib):
        x = lib.tensor([z], dtype=lib.complex128, requires_grad=True)
        g, = lib.autograd.grad(getattr(lib, name)(x), x, lib.ones_like(x), create_graph=True)
        gg, = lib.autograd.grad(g, x, lib.full_like(g, 0.5 - 0.25j))
        return [_bits(t.detach().resolve_conj().numpy().view(np.float64)) for t in (g, gg)]
    assert derivatives(gradkit) == derivatives(torch)


@pytest.mark.parametrize("alpha", [2, 2.5, -1, 0.5 + 1j])
def test_complex_sub_gradient_of_other_is_torchs_zero_signs(alpha):
    """torch's gradient of sub's other is -grad * conj(alpha): the negation first, then a
    complex product. gradkit's grad * -conj(alpha) gave -2 + 0j where torch's is -2 - 0j
    (scan of complex binary ops at one element)."""
    def gradients(lib):
        out = []
        for upstream in (1 + 0j, -1 + 0j, 1j, -1j, complex(-0.0, 1)):
            x = lib.tensor([0.5 + 0.5j], dtype=lib.complex128, requires_grad=True)
            y = lib.tensor([1 + 1j], dtype=lib.complex128, requires_grad=True)
            g, = lib.autograd.grad(lib.sub(x, y, alpha=alpha), y,
                                   lib.tensor([upstream], dtype=lib.complex128))
            out += _bits(g.numpy().view(np.float64))
        return out
    assert gradients(gradkit) == gradients(torch)


@pytest.mark.parametrize("dtype", ["complex128", "complex64"])
def test_complex_pow_gradient_of_a_negative_zero_imaginary_exponent_is_torchs(dtype):
    """torch's pow_backward_self takes exponent - 1 with its sub, whose complex alpha product
    makes a -0.0 imaginary part +0.0; gradkit's exponent - 1 kept -0.0, so the gradient of
    0.5 ** (-2 - 0j) had imaginary part +0.0 where torch's is -0.0 (complex binary scan)."""
    def gradient(lib):
        x = lib.tensor([0.5 + 0j, -1.5 + 2j], dtype=getattr(lib, dtype), requires_grad=True)
        y = lib.tensor([complex(-2, -0.0), complex(3, -0.0)], dtype=getattr(lib, dtype))
        return _bits(lib.autograd.grad((x ** y).sum().real, x)[0].numpy().view(
            np.float64 if dtype == "complex128" else np.float32))
    assert gradient(gradkit) == gradient(torch)


@pytest.mark.parametrize("value", [0.0, 1.5, -300.0])
def test_float16_batch_norm_gradient_of_a_constant_batch_is_torchs(value):
    """torch's float16 batch norm backward runs in float with the float16 statistics it
    saved; gradkit's gradient went back through the statistics' rounding to float16, so the
    middle element of a constant batch's input gradient was -0.167 where torch's is 0
    (scanred lane, left open there)."""
    def gradients(lib):
        x = lib.full((3, 1), value, dtype=lib.float16, requires_grad=True)
        w = lib.ones(1, dtype=lib.float16, requires_grad=True)
        out = lib.nn.functional.batch_norm(x, None, None, w, None, training=True)
        weights = lib.tensor([[1.0], [2.0], [3.0]], dtype=lib.float16)
        return [g.tolist() for g in lib.autograd.grad((out * weights).sum(), [x, w])]
    assert gradients(gradkit) == gradients(torch)


def test_a_write_into_x_after_x_remainder_a_number_is_the_known_shared_tangent():
    """Known difference (docs/autograd.md, "is x's own tangent tensor"; fwd seed 746326):
    torch's tangent of x % number is x's tangent tensor itself, so a later masked_fill_ of x
    zeroes the result's tangent too; gradkit's result keeps a tangent of its own."""
    def tangent(lib):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            x = fw.make_dual(lib.tensor([0.3, 0.7], dtype=lib.float64),
                             lib.ones(2, dtype=lib.float64))
            out = x % -1.5
            x.masked_fill_(lib.tensor([True, False]), 0.0)
            return fw.unpack_dual(out).tangent.tolist()
    assert tangent(torch) == [0.0, 1.0] and tangent(gradkit) == [1.0, 1.0]
    problems, known = diff_program(generate(RandomDrawer(746326), "fwd"))
    assert problems and known.startswith("torch's tangent of x % number is x's own tangent")


def test_a_dual_written_into_a_view_of_a_bool_tensor_is_known():
    """Known difference (docs/autograd.md, "fails an internal assert there"; fwd seed
    731635): torch's forward AD asserts on b[::2] = dual of a bool b; gradkit writes the
    value and b takes no tangent, as both do for a write into the whole of b."""
    def outcome(lib, whole: bool):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            x = fw.make_dual(lib.tensor([0.3], dtype=lib.float64), lib.ones(1, dtype=lib.float64))
            b = lib.tensor([True, False])
            try:
                if whole:
                    b.copy_(x.expand(2))
                else:
                    b[::2] = x.sum()
            except RuntimeError as error:
                return str(error)
            return b.tolist(), fw.unpack_dual(b).tangent
    assert outcome(gradkit, False) == ([True, False], None)
    assert outcome(gradkit, True) == outcome(torch, True) == ([True, True], None)
    assert "INTERNAL ASSERT FAILED" in outcome(torch, False)
    problems, known = diff_program(generate(RandomDrawer(731635), "fwd"))
    assert problems and known.startswith("torch's forward AD asserts on a dual written")


@pytest.mark.parametrize("seed,known", [
    (753154, "torch's vmapped forward AD refuses the tangent of an empty advanced index"),
    (772423, "a view of a base written in place, then detach_()ed, keeps its history")])
def test_fwd_seeds_of_torch_warts_are_known(seed, known):
    """fwd seed 753154: hessian of an empty advanced index, refused by torch's vmapped forward
    AD where one sample computes (docs/func.md, "the tangent of an empty advanced index").
    fwd seed 772423: func.grad through a view of a base squared in place, then detach_()ed:
    gradkit's kept history refuses the written saved tensor (docs/autograd.md)."""
    problems, found = diff_program(generate(RandomDrawer(seed), "fwd"))
    assert problems and found == known
