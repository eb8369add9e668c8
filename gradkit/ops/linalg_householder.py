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
    (input, input2), op(Q) = Q^H with ``transpose``: the full Q from householder_product of the
    reflectors padded to m columns, so the gradient is that product's."""
    _check_ormqr(input, input2, input3, left)
    # one node, as torch's OrmqrBackward0: it saves all three inputs and the result, so a
    # write into any of them before backward is refused
    return one_node("OrmqrBackward0", partial(_ormqr_product, left=left, transpose=transpose),
                    (input, input2, input3), {"self": 0, "input2": 1, "input3": 2,
                                              "result": "result"},
                    {"left": left, "transpose": transpose})


def _ormqr_product(input, input2, input3, left: bool, transpose: bool) -> Tensor:
    m, k = input.shape[-2], input2.shape[-1]
    reflectors = input[..., :k]
    if k < m:  # zero columns, without a graph (input may have no column to take them from)
        reflectors = cat([reflectors, input.new_zeros((*input.shape[:-1], m - k))], -1)
    q = householder_product(reflectors, input2)
    q = mH(q) if transpose else q
    # torch's result is LAPACK's, by columns: the transposed product's C order, transposed
    return matmul(input3.mT, q.mT).mT if left else matmul(q.mT, input3.mT).mT
