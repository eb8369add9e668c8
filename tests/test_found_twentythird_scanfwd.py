"""Differences found in the twenty-third session's forward-AD scan (scanfwd lane: tangents at the
float range's ends, with and without grad mode), each program run in gradkit and in torch 2.13
(skipped without torch)."""
import math

import numpy as np
import pytest

import gradkit

torch = pytest.importorskip("torch")


def _bits(array) -> list:
    """Each value exactly, a NaN as 'nan' and a zero with its sign."""
    return ["nan" if math.isnan(v) else repr(float(v)) for v in np.asarray(array).ravel()]


def _tangent(lib, f, values, tangent, dtype: str = "float64", grad_mode: bool = True) -> list:
    """The primal and tangent of f at a dual of ``values`` with every tangent ``tangent``."""
    fa = lib.autograd.forward_ad
    x = lib.tensor(values, dtype=getattr(lib, dtype))
    with fa.dual_level(), lib.set_grad_enabled(grad_mode):
        primal, tangent = fa.unpack_dual(f(lib, fa.make_dual(x, lib.full_like(x, tangent))))
        return _bits(primal.detach().numpy()) + _bits(tangent.detach().numpy())


def _assert_agree(ours: list, theirs: list, rel_tol: float = 1e-15) -> None:
    """Bit for bit but for the last bits of finite nonzero values (an ulp from a kernel)."""
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert a == b or 0 not in (float(a), float(b)) and \
            math.isclose(float(a), float(b), rel_tol=rel_tol), (ours, theirs)


def _gradient(lib, f, values, upstream, dtype: str = "float64") -> list:
    x = lib.tensor(values, dtype=getattr(lib, dtype), requires_grad=True)
    y = f(lib, x)
    g, = lib.autograd.grad(y, x, lib.full_like(y, upstream))
    return _bits(g.numpy())


@pytest.mark.parametrize("scale", [1.0, -1.0, math.inf, 1e30, 1e38])
def test_rsqrt_derivative_of_a_huge_float32_is_torchs(scale):
    """scan: the float32 rsqrt tangent inf at x = 1e30 was NaN here, -inf in torch. torch's
    derivative is (-0.5 * t) * out³, out³ = 1e-45 a subnormal; gradkit's -0.5 * out³ first
    underflowed to 0 (a gradient of 1e30 there gave -0.0 for torch's -7e-16)."""
    values = [1e30, 3e29, 5e29, 1e-30, 4.0, 0.0]
    f = lambda lib, x: lib.rsqrt(x)
    for grad_mode in (True, False):
        assert _tangent(gradkit, f, values, scale, "float32", grad_mode) == \
            _tangent(torch, f, values, scale, "float32", grad_mode)
    assert _gradient(gradkit, f, values, scale, "float32") == \
        _gradient(torch, f, values, scale, "float32")


@pytest.mark.parametrize("values", [[0.0, 2.0, 0.0, math.inf], [1e200, 1e200, 1e-200, 1e-200],
                                    [0.0, 3.0, 1.0, -1.0], [0.0, 0.0]])
@pytest.mark.parametrize("scale", [1.0, math.inf])
@pytest.mark.parametrize("grad_mode", [True, False])
def test_prod_tangent_of_two_zeros_picks_by_grad_mode_as_torchs(values, scale, grad_mode):
    """scan: a float32 prod of [inf, inf, 0, 0] had tangent NaN here without grad mode, 0 in
    torch: torch's full prod_backward answers zeros for two zeros without grad mode (its
    forward formula is sum(prod_backward(ones) * t), so an inf tangent still gives NaN), and
    the products of the others with it; a prod over a dim never takes that shortcut."""
    for f in (lambda lib, x: lib.prod(x), lambda lib, x: lib.prod(x, 0)):
        for dtype in ("float32", "float64"):
            assert _tangent(gradkit, f, values, scale, dtype, grad_mode) == \
                _tangent(torch, f, values, scale, dtype, grad_mode)


@pytest.mark.parametrize("duals", [(True, False), (False, True), (True, True)])
def test_copysign_tangent_reads_only_the_magnitudes(duals):
    """scan: copysign(x, y) of a dual y alone had a zero tangent here, none in torch (its
    forward formula reads x's tangent only); both dual, y's zeros changed the zero signs."""
    def run(lib):
        fa = lib.autograd.forward_ad
        x = lib.tensor([0.0, -0.0, 2.0, -3.0, math.inf, math.nan], dtype=lib.float64)
        y = lib.tensor([1.0, -1.0, -0.0, 0.0, -2.0, 5.0], dtype=lib.float64)
        with fa.dual_level():
            args = [fa.make_dual(a, lib.full_like(a, -1.0)) if dual else a
                    for a, dual in zip((x, y), duals)]
            tangent = fa.unpack_dual(lib.copysign(*args)).tangent
            return None if tangent is None else _bits(tangent.numpy())
    assert run(gradkit) == run(torch)


_SOFTMAX_ROWS = [[1.0, 2.0, 3.0, 4.0], [0.0, 0.0, 0.0, 0.0], [-1e308, 1e308, 1.0, 0.0],
                 [1e200, 1e200, 1e-200, 1e-200], [1000.0, 1000.0, -1000.0, 1.0],
                 [math.inf, 1.0, 2.0, 3.0], [0.0, 0.3, -0.7, 1.0]]
_SOFTMAXES = {"softmax": lambda lib, x: lib.softmax(x, 0),
              "log_softmax": lambda lib, x: lib.log_softmax(x, 0),
              "logsumexp": lambda lib, x: lib.logsumexp(x, 0),
              "softmin": lambda lib, x: lib.nn.functional.softmin(x, 0),
              "softmax_dtype": lambda lib, x: lib.softmax(x.float(), 0, dtype=lib.float64),
              "log_softmax_2d": lambda lib, x: lib.log_softmax(x[:4].reshape(2, 2), 1)}


@pytest.mark.parametrize("name", sorted(_SOFTMAXES))
@pytest.mark.parametrize("scale", [1.0, -1.0, 1e308])
def test_softmax_family_tangents_are_torchs_logsumexp_jvp(name, scale):
    """scan: log_softmax's tangent of a constant tangent 1 was -2.2e-16 here, 0 in torch, and
    a tangent of 1e308 gave 0 here, -inf (softmax, log_softmax) or inf (logsumexp) in torch.
    torch's forward formulas go through logsumexp_jvp of the input, sum(e * t) / sum(e) with
    e = exp(x - max x); gradkit weighted t by exp(out) (its out is all backward keeps)."""
    f = _SOFTMAXES[name]
    for values in _SOFTMAX_ROWS:
        # (softmax's own values may be an ulp off: its kernel)
        _assert_agree(_tangent(gradkit, f, values, scale), _tangent(torch, f, values, scale))


@pytest.mark.parametrize("ord", [math.inf, -math.inf])
@pytest.mark.parametrize("values", [[1000.0, 1000.0, -1000.0, 1.0], [3.4e38, 3.4e38, -3.4e38, 1.0],
                                    [0.1, -0.3, 0.3, 0.2], [math.nan, 1.0, -1.0, 0.0],
                                    [0.0, 0.0, 0.0, 0.0]])
@pytest.mark.parametrize("scale", [1.0, -0.7, 1e308])
def test_max_norm_tangent_keeps_the_inputs_precision(ord, values, scale):
    """scan: the float64 inf-norm tangent of three equal extremes was 0.3333333432674408 here
    (1.0 / 3 computed in float32, the default dtype, from the count of extremes), torch's
    0.3333333333333333: torch's norm_jvp sums sgn(x) t * hit / hits in the norm's dtype."""
    f = lambda lib, x: lib.linalg.vector_norm(x, ord)
    for dtype in ("float64", "float32"):
        if dtype == "float32" and scale == 1e308:
            continue
        assert _tangent(gradkit, f, values, scale, dtype) == \
            _tangent(torch, f, values, scale, dtype)


@pytest.mark.parametrize("ord", [3.0, 2.0, 1.5, 4.5])
@pytest.mark.parametrize("scale", [0.0, 1.0])
def test_p_norm_tangent_multiplies_x_by_t_first(ord, scale):
    """scan: the 3-norm of [-1e308, 1e308, 1, 0] with tangent 0 had tangent NaN here, 0 in
    torch: torch's norm_jvp takes |x|^(p-2) * (x t), gradkit x |x|^(p-2) first (inf * 0)."""
    f = lambda lib, x: lib.linalg.vector_norm(x, ord)
    for values in ([-1e308, 1e308, 1.0, 0.0], [1e200, 1e200, 1e-200, 1e-200],
                   [1.0, -2.0, 0.5, 0.0]):
        assert _tangent(gradkit, f, values, scale) == _tangent(torch, f, values, scale)


def _dual_outcome(lib, f, x_values, y_values, duals, scale: float = 1.0):
    """f(x, y) with the inputs named by ``duals`` dual (tangent ``scale``): its tangent's
    bits, None without one, or the error's type and first line."""
    fa = lib.autograd.forward_ad
    x, y = (lib.tensor(v, dtype=lib.float64) for v in (x_values, y_values))
    with fa.dual_level():
        args = [fa.make_dual(a, lib.full_like(a, scale)) if dual else a
                for a, dual in zip((x, y), duals)]
        try:
            tangent = fa.unpack_dual(f(lib, *args)).tangent
        except Exception as e:  # noqa: BLE001 - the outcome compared
            return type(e).__name__, str(e).splitlines()[0]
        return None if tangent is None else _bits(tangent.numpy())


_TWO_OPERANDS = {"nextafter": lambda lib, x, y: lib.nextafter(x, y),
                 "igamma": lambda lib, x, y: lib.igamma(x, y),
                 "igammac": lambda lib, x, y: lib.igammac(x, y),
                 "gammainc": lambda lib, x, y: lib.special.gammainc(x, y),
                 "zeta": lambda lib, x, y: lib.special.zeta(x, y)}


@pytest.mark.parametrize("name", sorted(_TWO_OPERANDS))
@pytest.mark.parametrize("duals", [(True, False), (False, True), (True, True)])
def test_tangents_torch_has_no_formula_for(name, duals):
    """scan: nextafter(x, y) of a dual y alone had a zero tangent here, none in torch (its
    forward formula reads x's only); igamma, igammac and zeta of a dual y alone computed one
    where torch has no forward formula at all and refuses any dual input."""
    f = _TWO_OPERANDS[name]
    x, y = [0.5, 2.0, 3.0], [0.5, 0.7, 1.5]
    assert _dual_outcome(gradkit, f, x, y, duals) == _dual_outcome(torch, f, x, y, duals)


@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, 0.5, math.inf, 0.0])
@pytest.mark.parametrize("duals", [(True, False), (False, True), (True, True)])
@pytest.mark.parametrize("scale", [1.0, 1e308])
def test_dist_tangent_is_torchs_norm_jvp(p, duals, scale):
    """scan: dist of six pairs with tangent 1e308 had tangent -4.1e307 here, NaN in torch:
    torch's dist forward formula is norm_jvp(x - y, tx - ty), its sums before the scale by
    the norm (overflowing), gradkit's the slope of the norm times the tangent."""
    f = lambda lib, x, y: lib.dist(x, y, p)
    x, y = [0.0, -0.0, 0.5, 1e-30, -2.0, 3.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    assert _dual_outcome(gradkit, f, x, y, duals, scale) == \
        _dual_outcome(torch, f, x, y, duals, scale)


@pytest.mark.parametrize("rows", [[[0.0, 0.0], [0.0, 0.0]], [[1.0, 2.0], [2.0, 4.0]],
                                  [[0.0, 1.0], [0.0, 3.0]], [[-0.0, -0.0], [0.0, -0.0]],
                                  [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]],
                                  [[1.0, 2.0], [3.0, 4.0]]])
@pytest.mark.parametrize("transposed", [False, True])
def test_det_tangent_of_a_singular_matrix_is_torchs(rows, transposed):
    """scan: det of a singular matrix raised LinAlgError in forward mode here (its tangent
    took inv(A)); torch's linalg_det_jvp solves through its LU with an exact 0 pivot moved to
    eps, so a rank n - 1 matrix has its adjugate's tangent (2 here: the finite difference)
    and a constant tangent of [[1, 2], [3, 4]] gives -0.0, not 2e-16."""
    def run(lib):
        fa = lib.autograd.forward_ad
        x = lib.tensor(rows, dtype=lib.float64)
        x = x.mT.contiguous().mT if transposed else x
        with fa.dual_level():
            out = []
            for t in (lib.ones_like(x), lib.eye(len(rows), dtype=lib.float64),
                      lib.arange(x.numel(), dtype=lib.float64).reshape(x.shape) - 1.5):
                out += _bits(fa.unpack_dual(lib.linalg.det(fa.make_dual(x, t))).tangent.numpy())
            return out
    _assert_agree(run(gradkit), run(torch))  # (a column-major A's LU solve: an ulp apart)


_PICKS = {"maximum": lambda lib, x, y: lib.maximum(x, y),
          "minimum": lambda lib, x, y: lib.minimum(x, y),
          "fmax": lambda lib, x, y: lib.fmax(x, y), "fmin": lambda lib, x, y: lib.fmin(x, y)}


@pytest.mark.parametrize("name", sorted(_PICKS))
@pytest.mark.parametrize("duals", [(True, False), (False, True), (True, True)])
@pytest.mark.parametrize("scale", [-1.0, 1.0, -0.0])
def test_pick_tangents_keep_torchs_zero_signs(name, duals, scale):
    """scan: maximum(x, y) of a dual x alone with tangent -1 had tangent +0.0 here where y
    wins, -0.0 in torch: torch's t_y + w (t_x - t_y) takes a missing t_y as its zero tensor,
    which adding passes t_x's 0 * -1 on (gradkit added 0.0)."""
    x, y = [0.0, -0.0, 0.5, -2.0, math.nan, 3.0, 1.0], [0.5, 0.0, 0.5, math.inf, 1.0, math.nan,
                                                         -1.0]
    f = _PICKS[name]
    assert _dual_outcome(gradkit, f, x, y, duals, scale) == \
        _dual_outcome(torch, f, x, y, duals, scale)


def _gradient_tangent(lib, f, values, duals=(True, False), scale: float = 1.0,
                      dtype: str = "float64"):
    """Forward over reverse: the tangent of f's gradient (create_graph) where x (``duals[0]``)
    and the incoming gradient (``duals[1]``) are dual; None without one, or the error."""
    fa = lib.autograd.forward_ad
    with fa.dual_level():
        p = lib.tensor(values, dtype=getattr(lib, dtype)).requires_grad_()
        x = fa.make_dual(p, lib.full_like(p, scale)) if duals[0] else p
        up = lib.ones_like(p)
        up = fa.make_dual(up, lib.full_like(p, scale)) if duals[1] else up
        try:
            g, = lib.autograd.grad(f(lib, x), x, up, create_graph=True)
        except Exception as e:  # noqa: BLE001 - the outcome compared
            return type(e).__name__, str(e)
        tangent = fa.unpack_dual(g).tangent
        return _bits(g.detach().numpy()), None if tangent is None else \
            _bits(tangent.detach().numpy())


@pytest.mark.parametrize("eps", [None, -1.0, 0.1])
def test_logit_gradient_tangent_at_nan_is_torchs(eps):
    """scan (forward over reverse): the tangent of logit's create_graph gradient at a NaN x
    was NaN here, 0 in torch: its composite formula without eps is where(0 <= x <= 1,
    g / (x (1 - x)), NaN), so a NaN x takes the NaN's tangent, 0 (gradkit selected NaN where
    x < 0 or x > 1, so a NaN x took the quotient's); the values and the double backward
    (NaN there in both) are as before."""
    f = (lambda lib, x: lib.logit(x)) if eps is None else (lambda lib, x: lib.logit(x, eps))
    values = [math.nan, 2.0, -1.0, 0.0, -0.0, 0.5, 1.0]
    for duals in ((True, False), (True, True)):
        assert _gradient_tangent(gradkit, f, values, duals) == \
            _gradient_tangent(torch, f, values, duals)


@pytest.mark.parametrize("duals", [(True, False), (False, True), (True, True)])
@pytest.mark.parametrize("scale", [1.0, -0.0, math.inf])
def test_relu_gradient_tangent_is_torchs(duals, scale):
    """scan (forward over reverse): the tangent of relu's create_graph gradient for a dual x
    alone was None here, zeros in torch, whose threshold_backward formula is zeros_like(out_t)
    + threshold_backward(g_t, out) (so a -0.0 of g_t reads +0.0 too); hardsigmoid's raised
    gradkit's RuntimeError, torch's NotImplementedError of forward AD."""
    values = [0.3, -0.7, 0.0, math.nan]
    for f in (lambda lib, x: lib.relu(x), lambda lib, x: lib.nn.functional.hardsigmoid(x)):
        for dtype in ("float64", "float32"):
            assert _gradient_tangent(gradkit, f, values, duals, scale, dtype) == \
                _gradient_tangent(torch, f, values, duals, scale, dtype)


@pytest.mark.parametrize("duals", [(True, False), (False, True), (True, True)])
@pytest.mark.parametrize("scale", [1.0, -1.0, math.inf])
@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
def test_mse_tangent_is_torchs_formula(duals, scale, reduction):
    """scan: mse_loss(x, y) of a dual x alone at an infinite y had tangent -inf here, NaN in
    torch: torch's forward formula is mse_loss_backward(t_x, x, y) + mse_loss_backward(t_y,
    y, x) with a missing tangent as zeros, so the target's term is 0 * inf (torch's wart,
    kept), and at x = y its +0.0 turns the other term's -0.0 into +0.0."""
    f = lambda lib, x, y: lib.nn.functional.mse_loss(x, y, reduction=reduction)
    x, y = [0.0, -0.0, 0.5, 0.0, 3.0, math.inf], [0.0, -0.0, 0.5, math.inf, -math.inf, 1.0]
    assert _dual_outcome(gradkit, f, x, y, duals, scale) == \
        _dual_outcome(torch, f, x, y, duals, scale)


@pytest.mark.parametrize("name", ["tanh", "sigmoid"])
@pytest.mark.parametrize("duals", [(True, False), (False, True), (True, True)])
@pytest.mark.parametrize("scale", [1.0, -1.0])
def test_tanh_and_sigmoid_gradient_tangents_keep_torchs_zero_signs(name, duals, scale):
    """scan (forward over reverse): sigmoid's gradient at 1e20 had tangent -0.0 here, +0.0 in
    torch: torch's sigmoid_backward/tanh_backward formula is backward(t_g, out) + out's term,
    the missing t_g a zero tensor the kernel materializes, so a -0.0 term reads +0.0."""
    f = lambda lib, x: getattr(lib, name)(x)
    values = [0.0, -0.0, 40.0, -40.0, 1e20, -1e20, 0.3]
    for dtype in ("float64", "float32"):
        ours = _gradient_tangent(gradkit, f, values, duals, scale, dtype)
        theirs = _gradient_tangent(torch, f, values, duals, scale, dtype)
        _assert_agree(ours[0] + ours[1], theirs[0] + theirs[1],  # (an ulp apart: libm)
                      1e-15 if dtype == "float64" else 1e-6)


@pytest.mark.parametrize("name", ["xlogy", "xlog1py"])
@pytest.mark.parametrize("duals", [(True, False), (False, True), (True, True)])
@pytest.mark.parametrize("scale", [1.0, -1.0])
def test_xlogy_tangent_of_a_dual_y_alone_keeps_torchs_zero_signs(name, duals, scale):
    """scan: xlogy(x, y) of a dual y alone had tangent -0.0 here at x = 0, y = -2, +0.0 in
    torch: its formula xlogy(t_x, y).masked_fill(...) + t_y x / y materializes the missing
    t_x's zero tensor in the first term (xlog1py's alike)."""
    f = (lambda lib, x, y: lib.xlogy(x, y)) if name == "xlogy" else \
        (lambda lib, x, y: lib.special.xlog1py(x, y))
    x, y = [0.0, -0.0, 0.5, 1e20, -2.0, 0.0], [-2.0, 0.5, 1e300, -1e20, math.inf, -math.inf]
    assert _dual_outcome(gradkit, f, x, y, duals, scale) == \
        _dual_outcome(torch, f, x, y, duals, scale)
