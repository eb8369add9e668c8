"""``linalg.householder_product``: the first n columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^H
(LAPACK's orgqr), with torch's householder_product_backward; torch's LAPACK-named ``geqrf``
(not differentiable), ``orgqr`` and ``ormqr`` (composed from householder_product)."""
from __future__ import annotations


from functools import partial

import numpy as np

from gradkit import return_types
from gradkit._tensor import Tensor
from gradkit.ops._op import op
from gradkit.ops.complex import conj
from gradkit.ops.joining import cat
from gradkit.ops.linalg import matmul
from gradkit.ops.linalg_solvers import mH
from gradkit.ops.methods import tensor_method
from gradkit.ops.one_node import one_node
from gradkit.ops.piecewise import ones_like, zeros_like
from gradkit.ops.reduction import sum
from gradkit.ops.triangular import diag_embed, diagonal, tril
from gradkit.ops.unary_helpers import kernel_error, scalar_type_name
from gradkit.ops.result_layout import by_columns
from gradkit.tensor_arguments import tensor_parameters

_NAME = "torch.linalg.householder_product"


def _check(a, tau) -> None:
    if a.ndim < 2:
        raise RuntimeError(f"{_NAME}: input must have at least 2 dimensions.")
    if a.shape[-2] < a.shape[-1]:
        raise RuntimeError(f"{_NAME}: input.shape[-2] must be greater than or equal to "
                           "input.shape[-1]")
    if tau.ndim == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    if a.shape[-1] < tau.shape[-1]:
        raise RuntimeError(f"{_NAME}: input.shape[-1] must be greater than or equal to "
                           "tau.shape[-1]")
    if a.ndim - tau.ndim != 1:
        raise RuntimeError(f"{_NAME}: Expected tau to have one dimension less than input, but "
                           f"got tau.ndim equal to {tau.ndim} and input.ndim is equal to "
                           f"{a.ndim}")
    if tuple(tau.shape[:-1]) != tuple(a.shape[:-2]):
        raise RuntimeError(f"{_NAME}: Expected batch dimensions of tau to be equal to "
                           f"input.shape[:-2], but got {list(tau.shape[:-1])}")
    if tau.dtype != a.dtype:
        raise RuntimeError(f"{_NAME}: tau dtype {scalar_type_name(tau)} does not match input "
                           f"dtype {scalar_type_name(a)}")
    if a.dtype.kind not in "fc" or a.dtype == np.float16:
        raise kernel_error("orgqr_cpu")(a)


def _reflectors(a):
    """The vectors v_i as columns: A's strictly lower part with ones on the diagonal (built
    from A itself, so on A's device)."""
    n = a.shape[-1]
    eye = diag_embed(ones_like(diagonal(a, 0, -2, -1)))
    if a.shape[-2] > n:
        eye = cat([eye, zeros_like(a[..., n:, :])], -2)
    return tril(a, -1) + eye


@op(save=("A", "tau", "result"), node_name="LinalgHouseholderProductBackward0")
@by_columns()
def _householder_product(xp, A, tau):  # noqa: N803 - torch's name
    _check(A, tau)
    m, n = A.shape[-2:]
    eye = xp.eye(m, n, dtype=A.dtype)
    vectors = xp.tril(A, -1) + eye
    q = xp.broadcast_to(eye, A.shape).copy()
    for i in reversed(range(tau.shape[-1])):  # Q = H_i Q, from the last reflector on
        v = vectors[..., :, i:i + 1]
        q = q - tau[..., i, None, None] * v * (xp.conj(xp.swapaxes(v, -1, -2)) @ q)
    return q


def _reflect(v, t, k, left: bool):
    """(I - t v v^H) K (``left``) or K (I - t v v^H), out of place (t of shape (..., 1))."""
    t = t[..., None]
    if left:
        return k - (t * v) * matmul(mH(v), k)
    return k - matmul(k, t * v) * mH(v)


def _householder_vjp(g, a, tau, q):
    """torch's householder_product_backward: K = Q gQ^H moved along the reflectors, each
    inverted by H(sigma_i), sigma_i = tau_i / (tau_i ||v_i||^2 - 1)."""
    m, n = a.shape[-2:]
    k = tau.shape[-1]
    if k == 0 or m == 0 or n == 0:
        return zeros_like(a), zeros_like(tau)
    vectors = _reflectors(a)
    columns = vectors[..., :k]
    sigma = tau / (tau * sum(columns * conj(columns), -2) - 1.0)
    moved = _reflect(vectors[..., 0:1], sigma[..., 0:1], matmul(q, mH(g)), True)
    v_grads, tau_grads = [], []
    for i in range(k):
        v, t = vectors[..., i:i + 1], tau[..., i:i + 1]
        part = v[..., i:, :]
        vh_k = matmul(mH(part), moved[..., i:, :])
        k_v = matmul(moved[..., :, i:], part)
        t_u = t[..., None]
        v_grads.append(conj(-t_u * vh_k)[..., 0, :, None] - (t_u * k_v))
        tau_grads.append(-conj(matmul(vh_k[..., :, i:], part))[..., 0])
        if i != k - 1:
            moved = _reflect(vectors[..., i + 1:i + 2], sigma[..., i + 1:i + 2], moved, True)
            moved = _reflect(v, t, moved, False)
    if k < n:  # the columns past tau's do not enter Q
        v_grads.append(zeros_like(a[..., k:]))
    return tril(cat(v_grads, -1), -1), cat(tau_grads, -1)


def _householder_jvp(tangents, a, tau, q):
    """torch's householder_product_jvp: dQ = sum_i H_1 .. H_{i-1} dH_i H_{i+1} .. H_k, the
    right part got from Q by the inverse reflectors H(sigma_i)."""
    t_a, t_tau = tangents
    k = tau.shape[-1]
    vectors = _reflectors(a)
    d_vectors = zeros_like(a) if t_a is None else tril(t_a, -1)
    d_tau = zeros_like(tau) if t_tau is None else t_tau
    columns = vectors[..., :k]
    sigma = tau / (tau * sum(columns * conj(columns), -2) - 1.0)
    d_q = q * 0.0
    if k == 0:  # no reflectors (a may have no columns): Q is constant
        return d_q
    right, left = q, diag_embed(ones_like(a[..., :, 0]))
    for i in range(k):
        v, dv = vectors[..., i:i + 1], d_vectors[..., i:i + 1]
        t, dt = tau[..., i:i + 1], d_tau[..., i:i + 1]
        right = _reflect(v, sigma[..., i:i + 1], right, True)
        d_h = _outer_times(v, v, dt, right) + _outer_times(dv, v, t, right) + \
            _outer_times(v, dv, t, right)
        d_q = d_q + matmul(left, d_h)
        left = _reflect(v, t, left, False)
    return d_q


def _outer_times(u, v, t, k):
    """-t u v^H K."""
    return -(t[..., None] * u) * matmul(mH(v), k)


_householder_product.defvjp_all(_householder_vjp)
_householder_product.defjvp_all(_householder_jvp)
_householder_product.name, _householder_product.profiler_name = \
    "linalg_householder_product", "gradkit::linalg_householder_product"


def householder_product(input, tau):  # noqa: A002 - torch's parser's name
    """The first n columns of the product of the Householder reflectors I - tau_i v_i v_i^H
    whose vectors v_i are the columns of input below its diagonal (with a 1 on it), as geqrf
    stores them."""
    return _householder_product(input, tau)


# -- torch's LAPACK-named forms: geqrf, orgqr, ormqr ---------------------------------------------

GeqrfResult = return_types.geqrf


@op(outputs=2, node_name="GeqrfBackward0")
@by_columns(0)
def _geqrf(xp, x):
    if x.ndim < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    if x.dtype.kind not in "fc" or x.dtype == np.float16:
        raise kernel_error("geqrf_cpu")(x)
    k = min(x.shape[-2:])
    if x.size == 0:  # nothing to reflect
        return x.copy(), xp.zeros(x.shape[:-2] + (k,), x.dtype)
    h, tau = xp.linalg.qr(x, mode="raw")  # LAPACK's geqrf, h in Fortran order
    return xp.ascontiguousarray(xp.swapaxes(h, -1, -2)), tau


def _no_geqrf_derivative(*_, **__):
    raise NotImplementedError("the derivative for 'geqrf' is not implemented.")


_geqrf.defvjp_all(_no_geqrf_derivative)
_geqrf.defjvp_all(_no_geqrf_derivative)
_geqrf.name, _geqrf.profiler_name = "geqrf", "gradkit::geqrf"


@tensor_method()
def geqrf(input: Tensor) -> GeqrfResult:  # noqa: A002 - torch's name
    """(a, tau): LAPACK's QR of input, R on and above a's diagonal, the Householder vectors
    below it (``householder_product(a, tau)`` is Q). Not differentiable, as torch's."""
    return GeqrfResult(*_geqrf(input))


@tensor_method()
def orgqr(input: Tensor, input2: Tensor) -> Tensor:  # noqa: A002 - torch's names
    """``householder_product`` by its LAPACK name (whose tau torch names ``input2``)."""
    return householder_product(input, input2)


def _check_ormqr(a, tau, other, left: bool) -> None:
    """torch's ormqr checks, in its order."""
    name = "torch.ormqr"
    for label, m in (("input", a), ("other", other)):
        if m.ndim < 2:
            raise RuntimeError(f"{name}: {label} must have at least 2 dimensions.")
    side = -2 if left else -1
    if other.shape[side] != a.shape[-2]:
        raise RuntimeError(f"{name}: other.shape[{side}] must be equal to input.shape[-2]")
    if tau.ndim == 0 or tau.shape[-1] != min(other.shape[side], a.shape[-1]):
        raise RuntimeError(f"{name}: tau.shape[-1] must be equal to min(other.shape[{side}], "
                           "input.shape[-1])")
    for label, m, wanted in (("tau", tau, a.ndim - 1), ("other", other, a.ndim)):
        if m.ndim != wanted:
            relation = "one dimension less than" if label == "tau" else \
                "the same number of dimensions as"
            raise RuntimeError(f"{name}: Expected {label} to have {relation} input, but got "
                               f"{label}.ndim equal to {m.ndim} and input.ndim is equal to "
                               f"{a.ndim}")
    for label, batch in (("tau", tau.shape[:-1]), ("other", other.shape[:-2])):
        if tuple(batch) != tuple(a.shape[:-2]):
            raise RuntimeError(f"{name}: Expected batch dimensions of {label} to be equal to "
                               f"input.shape[:-2], but got {list(batch)}")
    for label, m in (("tau", tau), ("other", other)):
        if m.dtype != a.dtype:
            raise RuntimeError(f"{name}: Expected input and {label} to have the same dtype, but "
                               f"input has dtype{scalar_type_name(a._data)} and {label} has dtype "
                               f"{scalar_type_name(m._data)}")
    if a.dtype.np.kind not in "fc" or a.dtype.np == np.float16:
        raise kernel_error("ormqr_cpu")(a._data)


@tensor_method()
@tensor_parameters("input2", "input3")
def ormqr(input: Tensor, input2: Tensor, input3: Tensor, left: bool = True,  # noqa: A002
          transpose: bool = False) -> Tensor:
    """op(Q) input3 (``left=False``: input3 op(Q)) for the m x m Q = H_1 ... H_k of geqrf's
    (input, input2), op(Q) = Q^H with ``transpose``: the reflectors applied one after another
    as LAPACK's ormqr applies them; the gradient is torch's ormqr_backward."""
    _check_ormqr(input, input2, input3, left)
    # one node, as torch's OrmqrBackward0: it saves all three inputs and the result, so a
    # write into any of them before backward is refused
    return one_node("OrmqrBackward0", partial(_reflected, left=left, transpose=transpose),
                    (input, input2, input3), {"self": 0, "input2": 1, "input3": 2,
                                              "result": "result"},
                    {"left": left, "transpose": transpose})


@op(save=("a", "tau", "c"))
@by_columns()  # torch's result is LAPACK's, by columns
def _reflected(xp, a, tau, c, *, left=True, transpose=False):
    """op(Q) c (``left``) or c op(Q), one reflector H_i = I - tau_i v_i v_i^H after another
    as torch's LAPACK applies them: H_i to the rows (columns) from i on only, and not at all
    where tau_i is 0, so an inf or NaN of c stays out of the rows (columns) it does not reach
    (a product with the Q formed spreads it: 0 * inf, strided_breadth seeds 1773947,
    1960590); within them it spreads as these products spread it (MKL's float32 kernel at
    times otherwise)."""
    m, k = a.shape[-2], tau.shape[-1]
    vectors = xp.tril(a[..., :k], -1) + xp.eye(m, k, dtype=a.dtype)
    rows = xp.arange(m)[:, None] if left else xp.arange(m)[None, :]
    out = c.copy()
    order = range(k) if left == transpose else reversed(range(k))  # H_k first for Q c
    for i in order:
        v = vectors[..., :, i:i + 1] if left else xp.swapaxes(vectors[..., :, i:i + 1], -1, -2)
        t = tau[..., i, None, None]
        t = xp.conj(t) if transpose else t
        live = (rows >= i) & (t != 0)
        with np.errstate(invalid="ignore"):  # (0 * inf where not live: not used)
            if left:   # H c = c - tau v (v^H c)
                w = xp.sum(xp.where(live, xp.conj(v) * out, 0), -2, keepdims=True)
                out = xp.where(live, out - t * v * w, out)
            else:      # c H = c - tau (c v) v^H
                w = xp.sum(xp.where(live, out * v, 0), -1, keepdims=True)
                out = xp.where(live, out - t * w * xp.conj(v), out)
    return out


def _q_and_reflectors(a, tau):
    """Q (m x m) from householder_product of the reflectors padded to m columns with zeros
    (a has a column when tau has an entry), and those padded reflectors."""
    m, k = a.shape[-2], tau.shape[-1]
    reflectors = cat([a[..., :k]] + [zeros_like(a[..., :1])] * (m - k), -1)
    return householder_product(reflectors, tau), reflectors


def _reflected_vjp(g, a, tau, c, needs, left, transpose):
    """torch's ormqr_backward: other's gradient is ormqr with the other transpose; input's
    and tau's are householder_product's of Q's gradient (g c^H for Q c)."""
    g_c = _reflected(a, tau, g, left=left, transpose=not transpose) if needs[2] else None
    if not (needs[0] or needs[1]):
        return None, None, g_c
    if tau.shape[-1] == 0:  # Q is I whatever a is: no gradient (None), as torch's
        return None, None, g_c
    q, reflectors = _q_and_reflectors(a, tau)
    g_op = matmul(g, mH(c)) if left else matmul(mH(c), g)
    g_reflectors, g_tau = _householder_vjp(mH(g_op) if transpose else g_op, reflectors, tau, q)
    k = tau.shape[-1]
    g_a = cat([g_reflectors[..., :k], zeros_like(a[..., k:])], -1)
    return g_a, g_tau, g_c


def _reflected_jvp(tangents, a, tau, c, left, transpose):
    """op(dQ) c + op(Q) dc, dQ householder_product's tangent."""
    t_a, t_tau, t_c = tangents
    out = None if t_c is None else _reflected(a, tau, t_c, left=left, transpose=transpose)
    if (t_a is None and t_tau is None) or tau.shape[-1] == 0:
        return c * 0.0 if out is None else out
    q, reflectors = _q_and_reflectors(a, tau)
    d_reflectors = None if t_a is None else _q_and_reflectors(t_a, tau)[1]
    d_q = _householder_jvp((d_reflectors, t_tau), reflectors, tau, q)
    d_q = mH(d_q) if transpose else d_q
    term = matmul(d_q, c) if left else matmul(c, d_q)
    return term if out is None else out + term


_reflected.defvjp_all(_reflected_vjp, needs=True)
_reflected.defjvp_all(_reflected_jvp)
_reflected.name, _reflected.profiler_name = "ormqr", "gradkit::ormqr"
