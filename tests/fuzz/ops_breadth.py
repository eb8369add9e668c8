"""The breadth op table: the public ops the other tables never draw (linear algebra, sorting,
reductions over dim tuples and with dtype=, the softmax family, triangular/diagonal views,
products, scatter, nn.functional; gradkit has no index_put), with Python scalars in
parameter positions.

Linear algebra builds its matrices from the input's first ``n * n`` values, shifted by ``2 I``
(well conditioned) or made Hermitian positive definite, so random inputs stay in the domain;
only gauge-free results are compared (eigenvalues, ``U S Vh``, ``|Q|``), as LAPACK builds may
choose other signs/phases of singular and eigen vectors.
"""
from __future__ import annotations

import math

import numpy as np

from .ops_core import OpSpec, _dim, _gather

_SCALARS = (0.5, -1.0, 2, 0, -0.0, math.inf, -2.5)


def _square(lib, x, n):
    return x.reshape(-1)[:n * n].reshape(n, n)


def _shifted(lib, x, n):
    return _square(lib, x, n) + 2 * lib.eye(n, dtype=x.dtype)


def _hermitian_pd(lib, x, n):
    m = _square(lib, x, n)
    return m @ m.mT.conj() + lib.eye(n, dtype=x.dtype)


def _n(draw, shapes):
    numel = int(np.prod(shapes[0]))
    top = math.isqrt(numel)
    return {"n": draw.integer(0 if draw.chance(0.1) else 1, top)} if top else None


def _n_rhs(draw, shapes):
    p = _n(draw, shapes)
    return p if p and int(np.prod(shapes[1])) >= p["n"] else None


def _rhs(x, y, n):
    return y.reshape(-1)[:n].to(x.dtype)


def _dims(draw, shapes):
    """A tuple of distinct dims (possibly empty: torch reduces over all then) and keepdim."""
    nd = len(shapes[0])
    dims = tuple(d - nd if draw.boolean() else d for d in range(nd) if draw.boolean())
    return {"dim": dims, "keepdim": draw.boolean()}


def _var(draw, shapes):
    """dim=() is drawn as None: torch's var/std backward reads () as "no dim reduced" (it
    divides by N - correction with N = 1, inf for correction 1) while the value is over all."""
    p = _dims(draw, shapes)
    return {**p, "dim": p["dim"] or None, "correction": draw.choice((0, 1, 2))}


def _sort(draw, shapes):
    p = _dim(draw, shapes) or {"dim": 0}
    return {**p, "descending": draw.boolean()}


def _topk(draw, shapes):
    p = _dim(draw, shapes)
    if p is None:
        return None
    return {**p, "k": draw.integer(0, shapes[0][p["dim"]]), "largest": draw.boolean()}


def _offset(draw, shapes):
    return {"k": draw.integer(-2, 2)}


def _diagonal(draw, shapes):
    nd = len(shapes[0])
    if nd < 2:
        return None
    d1 = draw.integer(-nd, nd - 1)
    d2 = draw.integer(-nd, nd - 1)
    return {"offset": draw.integer(-2, 2), "dim1": d1, "dim2": d2}


def _narrow(draw, shapes):
    p = _dim(draw, shapes)
    if p is None:
        return None
    n = shapes[0][p["dim"]]
    start = draw.integer(-n, n) if n else 0
    return {**p, "start": start, "length": draw.integer(0, n - start % max(n, 1))}


def _select(draw, shapes):
    p = _dim(draw, shapes)
    if p is None or not shapes[0][p["dim"]]:
        return None
    n = shapes[0][p["dim"]]
    return {**p, "index": draw.integer(-n, n - 1)}


def _roll(draw, shapes):
    nd = len(shapes[0])
    shifts = draw.integer(-3, 3)
    if not nd or draw.boolean():
        return {"shifts": shifts, "dims": None}
    return {"shifts": (shifts,), "dims": (draw.integer(-nd, nd - 1),)}


def _scalar(draw, shapes):
    return {"s": draw.choice(_SCALARS)}


def _clamp_t(draw, shapes):
    return {"which": draw.choice(("min", "max", "both"))}


def _softmax(draw, shapes):
    p = _dim(draw, shapes) or {"dim": 0}
    return {**p, "dtype": draw.choice((None, "float64"))}


def _scatter(draw, shapes):
    p = _gather(draw, shapes)
    return p and {**p, "value": draw.choice((None, 0.5))}


def _split(draw, shapes):
    p = _dim(draw, shapes)
    if p is None:
        return None
    n = shapes[0][p["dim"]]
    first = draw.integer(0, n)
    return {**p, "sizes": [first, n - first] if draw.boolean() else draw.integer(1, 2)}


def _act(draw, shapes):
    return {"fn": draw.choice(tuple(ACTIVATIONS))}


def _loss(draw, shapes):
    nd = len(shapes[0])
    if nd not in (1, 2) or not shapes[0][-1]:
        return None
    classes, batch = shapes[0][-1], shapes[0][0] if nd == 2 else None
    target = [draw.integer(0, classes - 1) for _ in range(batch or 1)]
    return {"target": target if batch is not None else target[0],
            "reduction": draw.choice(("mean", "sum", "none")),
            "smoothing": draw.choice((0.0, 0.0, 0.2))}


def _reduction(draw, shapes):
    return {"reduction": draw.choice(("mean", "sum", "none"))}


def _vnorm(draw, shapes):
    return {**_dims(draw, shapes), "ord": draw.choice((2, 1, math.inf, -math.inf, 0, 3, 0.5))}


def _mnorm(draw, shapes):
    p = _n(draw, shapes)
    return p and {**p, "ord": draw.choice(("fro", "nuc", 1, -1, 2, -2, math.inf))}


def _einsum(draw, shapes):
    return {"eq": draw.choice(("i,i->", "i,j->ij", "ij,j->i", "ij,jk->ik", "ii->i", "ii->",
                               "ij->ji", "bij,bjk->bik", "...i,...i->..."))}


def _einsum_fn(lib, x, y, eq):
    """``eq`` over the inputs' first values, shaped as the equation needs (2 wide)."""
    ins = eq.split("->")[0].split(",")
    ops = []
    for term, t in zip(ins, (x, y)):
        dims = len(term.replace("...", "a"))
        ops.append(t.reshape(-1)[:2 ** dims].reshape((2,) * dims))
    return lib.einsum(eq, *ops)


def _einsum_ok(draw, shapes):
    p = _einsum(draw, shapes)
    need = [2 ** len(t.replace("...", "a")) for t in p["eq"].split("->")[0].split(",")]
    got = [int(np.prod(s)) for s in shapes] + [int(np.prod(shapes[0]))]
    return p if all(g >= n for g, n in zip(got, need)) else None


ACTIVATIONS = {
    "leaky_relu": lambda lib, x: lib.nn.functional.leaky_relu(x, 0.2),
    "elu": lambda lib, x: lib.nn.functional.elu(x, alpha=0.7),
    "gelu_tanh": lambda lib, x: lib.nn.functional.gelu(x, approximate="tanh"),
    "softplus_beta": lambda lib, x: lib.nn.functional.softplus(x, beta=2, threshold=1),
    "logsigmoid": lambda lib, x: lib.nn.functional.logsigmoid(x),
    "silu": lambda lib, x: lib.nn.functional.silu(x),
    "softmin": lambda lib, x: lib.nn.functional.softmin(x, dim=-1),
    "normalize": lambda lib, x: lib.nn.functional.normalize(x, dim=-1),
    "sgn": lambda lib, x: x.sgn(),
    "angle": lambda lib, x: x.angle(),
    "expm1": lambda lib, x: x.expm1(),
    "erf": lambda lib, x: lib.erf(x),
    "log2": lambda lib, x: x.log2(),
    "sinh": lambda lib, x: x.sinh(),
    "acos": lambda lib, x: x.acos(),
}


def _cross_entropy(lib, x, target, reduction, smoothing):
    return lib.nn.functional.cross_entropy(x, lib.tensor(target), reduction=reduction,
                                           label_smoothing=smoothing)


def _flat_index(draw, shapes, unique=False):
    """Up to 4 flat indices into x (negative ones too); distinct when ``unique``."""
    numel = int(np.prod(shapes[0]))
    if not numel:
        return None
    index = [draw.integer(-numel, numel - 1) for _ in range(draw.integer(1, 4))]
    if unique:
        index = list({i % numel: i for i in index}.values())
    return {"index": index}


def _put(draw, shapes):
    accumulate = draw.boolean()
    p = _flat_index(draw, shapes, unique=not accumulate)
    return p and {**p, "accumulate": accumulate}


def _along(draw, shapes, unique=False):
    """A dim of x and a 1-D index along it (repeats unless ``unique``)."""
    p = _dim(draw, shapes)
    if p is None or not shapes[0][p["dim"]]:
        return None
    n = shapes[0][p["dim"]]
    index = [draw.integer(-n if not unique else 0, n - 1) for _ in range(draw.integer(0, 3))]
    return {**p, "index": sorted(set(index)) if unique else index}


def _index_add(draw, shapes):
    p = _along(draw, shapes)
    return p and {**p, "alpha": draw.choice((1, -1.5, 2))}


def _index_fill(draw, shapes):
    p = _along(draw, shapes)
    return p and {**p, "value": draw.choice((0.5, -1.0, None))}


def _scatter_reduce(draw, shapes):
    p = _gather(draw, shapes)
    return p and {**p, "reduce": draw.choice(("sum", "prod", "mean", "amax", "amin")),
                  "include_self": draw.boolean(), "s": draw.choice((1.0, 0.5, -1.0))}


def _histc(draw, shapes):
    return {"bins": draw.integer(1, 5), "low": draw.choice((0, -1.0)),
            "high": draw.choice((0, 1.5))}


def _scalar_of(lib, x, y):
    """A 0-d value of x's dtype that depends on y (any dtype: its real part's sum)."""
    return (y.real.sum() * 0.5).to(x.dtype)


def _source(lib, x, y, index, dim):
    """index_add/index_copy sources: x's slices at index, changed by a value of y."""
    return x.index_select(dim, lib.tensor(index, dtype=lib.int64)) * -0.5 + _scalar_of(lib, x, y)


def _put_fn(lib, x, y, index, accumulate):
    source = lib.ones(len(index), dtype=x.dtype) * _scalar_of(lib, x, y)
    return x.put(lib.tensor(index), source, accumulate=accumulate)


def _unique_fn(lib, x):
    values, inverse, counts = lib.unique(x.real.detach(), return_inverse=True,
                                         return_counts=True)
    return x + inverse + counts.sum() + values.sum()


def _searchsorted_fn(lib, x):
    sequence = lib.sort(x.real.detach().reshape(-1))[0]
    return x + lib.searchsorted(sequence, x.real, right=True)


BREADTH_OPS: dict[str, OpSpec] = {
    # linear algebra
    "b_solve": OpSpec(2, lambda lib, x, y, n: lib.linalg.solve(_shifted(lib, x, n),
                                                                _rhs(x, y, n)), _n_rhs),
    "b_inv": OpSpec(1, lambda lib, x, n: lib.linalg.inv(_shifted(lib, x, n)), _n),
    "b_det": OpSpec(1, lambda lib, x, n: lib.linalg.det(_square(lib, x, n)), _n),
    "b_slogdet": OpSpec(1, lambda lib, x, n: lib.linalg.slogdet(_shifted(lib, x, n))[1], _n),
    "b_cholesky": OpSpec(1, lambda lib, x, n: lib.linalg.cholesky(_hermitian_pd(lib, x, n)),
                         _n),
    "b_qr_abs": OpSpec(1, lambda lib, x, n: lib.linalg.qr(_shifted(lib, x, n))[0].abs(), _n),
    "b_qr_prod": OpSpec(1, lambda lib, x, n: _matmul(*lib.linalg.qr(_shifted(lib, x, n))), _n),
    "b_svdvals": OpSpec(1, lambda lib, x, n: lib.linalg.svdvals(_shifted(lib, x, n)), _n),
    "b_svd_prod": OpSpec(1, lambda lib, x, n: _usv(lib.linalg.svd(_shifted(lib, x, n),
                                                                  full_matrices=False)), _n),
    "b_eigvalsh": OpSpec(1, lambda lib, x, n: lib.linalg.eigvalsh(_hermitian_pd(lib, x, n)),
                         _n),
    "b_eigh_prod": OpSpec(1, lambda lib, x, n: _vwv(lib.linalg.eigh(_hermitian_pd(lib, x, n))),
                          _n),
    "b_vector_norm": OpSpec(1, lambda lib, x, dim, keepdim, ord: lib.linalg.vector_norm(
        x, ord, dim=dim or None, keepdim=keepdim), _vnorm),
    "b_matrix_norm": OpSpec(1, lambda lib, x, n, ord: lib.linalg.matrix_norm(
        _shifted(lib, x, n), ord), _mnorm),
    "b_norm": OpSpec(1, lambda lib, x: x.norm()),
    # sorting
    "b_sort": OpSpec(1, lambda lib, x, dim, descending: lib.sort(
        x, dim=dim, descending=descending, stable=True)[0], _sort),
    "b_argsort": OpSpec(1, lambda lib, x, dim, descending: lib.argsort(
        x, dim=dim, descending=descending, stable=True), _sort),
    "b_topk": OpSpec(1, lambda lib, x, dim, k, largest: lib.topk(
        x, k, dim, largest=largest)[0], _topk),
    # reductions
    "b_sum_dims": OpSpec(1, lambda lib, x, dim, keepdim: x.sum(dim, keepdim=keepdim), _dims),
    "b_sum_dtype": OpSpec(1, lambda lib, x: x.sum(dtype=lib.float64)
                          if not x.is_complex() else x.sum(dtype=lib.complex128)),
    "b_mean_dims": OpSpec(1, lambda lib, x, dim, keepdim: x.mean(dim, keepdim=keepdim), _dims),
    "b_prod": OpSpec(1, lambda lib, x: x.prod()),
    "b_amax_dims": OpSpec(1, lambda lib, x, dim, keepdim: x.amax(dim, keepdim=keepdim), _dims),
    "b_amin_dims": OpSpec(1, lambda lib, x, dim, keepdim: x.amin(dim, keepdim=keepdim), _dims),
    "b_logsumexp_dims": OpSpec(1, lambda lib, x, dim, keepdim: lib.logsumexp(
        x, dim, keepdim=keepdim), _dims),
    "b_var": OpSpec(1, lambda lib, x, dim, keepdim, correction: x.var(
        dim, correction=correction, keepdim=keepdim), _var),
    "b_std": OpSpec(1, lambda lib, x, dim, keepdim, correction: x.std(
        dim, correction=correction, keepdim=keepdim), _var),
    "b_var_mean": OpSpec(1, lambda lib, x, dim, keepdim, correction: _times(*lib.var_mean(
        x, dim, correction=correction, keepdim=keepdim)), _var),
    "b_std_mean": OpSpec(1, lambda lib, x, dim, keepdim, correction: _times(*lib.std_mean(
        x, dim, correction=correction, keepdim=keepdim)), _var),
    "b_cumsum_dtype": OpSpec(1, lambda lib, x, dim: lib.cumsum(x, dim, dtype=lib.float64)
                             if not x.is_complex() else lib.cumsum(x, dim), _dim),
    "b_softmax": OpSpec(1, lambda lib, x, dim, dtype: lib.softmax(
        x, dim, dtype=dtype and getattr(lib, dtype)), _softmax),
    "b_log_softmax": OpSpec(1, lambda lib, x, dim, dtype: lib.nn.functional.log_softmax(
        x, dim, dtype=dtype and getattr(lib, dtype)), _softmax),
    # elementwise with Python scalars and tensor bounds
    "b_where_scalar": OpSpec(1, lambda lib, x, s: lib.where(x.real > 0, x, s), _scalar),
    "b_where_scalar_first": OpSpec(1, lambda lib, x, s: lib.where(x.real < 0, s, x), _scalar),
    "b_clamp_scalar": OpSpec(1, lambda lib, x, s: x.clamp(min=s), _scalar),
    "b_clamp_tensor": OpSpec(2, lambda lib, x, y, which: x.clamp(
        **({"min": y} if which == "min" else {"max": y} if which == "max" else
           {"min": y, "max": y * 0.5})), _clamp_t),
    "b_add_alpha": OpSpec(2, lambda lib, x, y, s: lib.add(x, y, alpha=s), _scalar),
    "b_pow_scalar": OpSpec(1, lambda lib, x, s: x.abs() ** s, _scalar),
    "b_act": OpSpec(1, lambda lib, x, fn: ACTIVATIONS[fn](lib, x), _act),
    # triangular, diagonal and other views
    "b_tril": OpSpec(1, lambda lib, x, k: lib.tril(x, k), _offset),
    "b_triu": OpSpec(1, lambda lib, x, k: x.triu(k), _offset),
    "b_diag": OpSpec(1, lambda lib, x, k: lib.diag(x, k), _offset),
    "b_diagonal": OpSpec(1, lambda lib, x, offset, dim1, dim2: lib.diagonal(
        x, offset, dim1, dim2), _diagonal),
    "b_diag_embed": OpSpec(1, lambda lib, x, k: lib.diag_embed(x, k), _offset),
    "b_narrow": OpSpec(1, lambda lib, x, dim, start, length: x.narrow(dim, start, length),
                       _narrow),
    "b_select": OpSpec(1, lambda lib, x, dim, index: x.select(dim, index), _select),
    "b_roll": OpSpec(1, lambda lib, x, shifts, dims: lib.roll(x, shifts, dims), _roll),
    "b_flip_all": OpSpec(1, lambda lib, x: x.flip(tuple(range(x.dim())))),
    # products
    "b_einsum": OpSpec(2, _einsum_fn, _einsum_ok),
    "b_bmm": OpSpec(2, lambda lib, x, y: lib.bmm(x, y.to(x.dtype).transpose(1, 2))),
    "b_mm": OpSpec(2, lambda lib, x, y: lib.mm(x, y.mT)),
    "b_inner": OpSpec(2, lambda lib, x, y: lib.inner(x, y)),
    "b_outer": OpSpec(2, lambda lib, x, y: lib.outer(x.reshape(-1), y.reshape(-1))),
    "b_dot": OpSpec(2, lambda lib, x, y: lib.dot(x, y)),
    "b_mv": OpSpec(2, lambda lib, x, y: lib.mv(x, y)),
    "b_matmul_bcast": OpSpec(2, lambda lib, x, y: lib.matmul(x.unsqueeze(0), y)),
    # scatter and index_put
    "b_scatter": OpSpec(2, lambda lib, x, y, dim, index, value: x.scatter(
        dim, lib.tensor(index), value if value is not None else
        y.reshape(-1)[:1].expand(lib.tensor(index).shape).to(x.dtype)), _scatter),
    "b_scatter_add": OpSpec(1, lambda lib, x, dim, index: x.scatter_add(
        dim, lib.tensor(index), lib.ones(lib.tensor(index).shape, dtype=x.dtype)), _gather),
    "b_masked_fill_t": OpSpec(2, lambda lib, x, y: x.masked_fill(x.real > 0, y.sum().to(
        x.dtype))),
    # joining and splitting
    "b_cat3": OpSpec(2, lambda lib, x, y, dim: lib.cat([x, y, x], dim), _dim),
    "b_stack_dim": OpSpec(2, lambda lib, x, y, dim: lib.stack([x, y], dim), _dim),
    "b_split_sizes": OpSpec(1, lambda lib, x, dim, sizes: lib.split(x, sizes, dim)[-1],
                            _split),
    "b_chunk": OpSpec(1, lambda lib, x, dim: lib.chunk(x, 3, dim)[0], _dim),
    "b_unbind": OpSpec(1, lambda lib, x, dim: lib.unbind(x, dim)[0], _dim),
    # nn.functional losses
    "b_cross_entropy": OpSpec(1, _cross_entropy, _loss),
    "b_nll_loss": OpSpec(1, lambda lib, x, target, reduction, smoothing: lib.nn.functional
                         .nll_loss(x, lib.tensor(target), reduction=reduction), _loss),
    "b_mse": OpSpec(2, lambda lib, x, y, reduction: lib.nn.functional.mse_loss(
        x, y, reduction=reduction), _reduction),
    "b_bce_logits": OpSpec(2, lambda lib, x, y, reduction: lib.nn.functional
                           .binary_cross_entropy_with_logits(x, y.sigmoid(),
                                                             reduction=reduction), _reduction),
    "b_layer_norm": OpSpec(1, lambda lib, x: lib.nn.functional.layer_norm(x, x.shape[-1:])),
    "b_linear": OpSpec(2, lambda lib, x, y: lib.nn.functional.linear(x, y)),
    # lane index: masked/flat/indexed selection and writes, scatter_reduce, searching, complex
    "b_masked_select": OpSpec(1, lambda lib, x: lib.masked_select(x, x.real > 0)),
    "b_masked_scatter": OpSpec(2, lambda lib, x, y: x.masked_scatter(
        x.real > 0, lib.cat([y.real.reshape(-1).to(x.dtype), x.reshape(-1)]))),
    "b_take": OpSpec(1, lambda lib, x, index: x.take(lib.tensor(index)), _flat_index),
    "b_take_along_dim": OpSpec(1, lambda lib, x, dim, index: lib.take_along_dim(
        x, lib.tensor(index), dim), _gather),
    "b_take_along_flat": OpSpec(1, lambda lib, x, index: lib.take_along_dim(
        x, lib.tensor(index)), _flat_index),
    "b_put": OpSpec(2, _put_fn, _put),
    "b_index_add": OpSpec(2, lambda lib, x, y, dim, index, alpha: x.index_add(
        dim, lib.tensor(index, dtype=lib.int64), _source(lib, x, y, index, dim), alpha=alpha),
                          _index_add),
    "b_index_copy": OpSpec(2, lambda lib, x, y, dim, index: x.index_copy(
        dim, lib.tensor(index, dtype=lib.int64), _source(lib, x, y, index, dim)),
                           lambda draw, shapes: _along(draw, shapes, unique=True)),
    "b_index_fill": OpSpec(2, lambda lib, x, y, dim, index, value: x.index_fill(
        dim, lib.tensor(index, dtype=lib.int64), _scalar_of(lib, x, y) if value is None
        else value), _index_fill),
    "b_scatter_reduce": OpSpec(1, lambda lib, x, dim, index, reduce, include_self, s:
                               x.scatter_reduce(dim, lib.tensor(index), x.gather(
                                   dim, lib.tensor(index)) * s, reduce,
                                   include_self=include_self), _scatter_reduce),
    "b_nonzero": OpSpec(1, lambda lib, x: x + lib.nonzero(x.real > 0).sum()
                        + lib.nonzero(x, as_tuple=True)[0].sum()),
    "b_argwhere": OpSpec(1, lambda lib, x: x + lib.argwhere(x.real < 0).sum()),
    "b_bucketize": OpSpec(1, lambda lib, x: x + lib.bucketize(
        x.real, lib.tensor([-1.0, 0.0, 0.5], dtype=x.real.dtype))),
    "b_searchsorted": OpSpec(1, _searchsorted_fn),
    "b_unique": OpSpec(1, _unique_fn),
    "b_histc": OpSpec(1, lambda lib, x, bins, low, high: x.sum() + lib.histc(
        x.real.detach(), bins, low, high), _histc),
    "b_complex": OpSpec(2, lambda lib, x, y: lib.complex(
        x.real, x.real * 0.5 + _scalar_of(lib, x.real, y))),
    "b_polar": OpSpec(2, lambda lib, x, y: lib.polar(
        x.real.abs(), x.real * 2 + _scalar_of(lib, x.real, y))),
}


def _matmul(a, b):
    return a @ b


def _times(a, b):
    return a * b


def _usv(usv):
    u, s, vh = usv
    return (u * s.unsqueeze(-2).to(u.dtype)) @ vh


def _vwv(wv):
    w, v = wv
    return (v * w.unsqueeze(-2).to(v.dtype)) @ v.mT.conj()


# lane scans: scans and order statistics (values and indices compared through one tensor)
def _values_indices(result):
    return result[0] * 1 + result[1]


def _kth(draw, shapes):
    p = _dim(draw, shapes)
    if p is None:
        return {"dim": 0, "k": 1, "keepdim": draw.boolean()}
    return {**p, "k": draw.integer(1, max(shapes[0][p["dim"]], 1)), "keepdim": draw.boolean()}


def _dim_keep_or_all(draw, shapes):
    p = _dim(draw, shapes)
    return {"dim": None if p is None or draw.chance(0.3) else p["dim"], "keepdim": draw.boolean()}


def _median_fn(name):
    def median(lib, x, dim, keepdim):
        fn = getattr(lib, name)
        return fn(x) if dim is None else _values_indices(fn(x, dim, keepdim))
    return median


BREADTH_OPS.update({
    "b_cumprod": OpSpec(1, lambda lib, x, dim: lib.cumprod(x, dim), _dim),
    "b_cumprod_dtype": OpSpec(1, lambda lib, x, dim: lib.cumprod(x, dim, dtype=lib.float64)
                              if not x.is_complex() else x.cumprod(dim), _dim),
    "b_logcumsumexp": OpSpec(1, lambda lib, x, dim: lib.logcumsumexp(x, dim), _dim),
    "b_cummax": OpSpec(1, lambda lib, x, dim: _values_indices(lib.cummax(x, dim)), _dim),
    "b_cummin": OpSpec(1, lambda lib, x, dim: _values_indices(x.cummin(dim)), _dim),
    "b_kthvalue": OpSpec(1, lambda lib, x, dim, k, keepdim: _values_indices(lib.kthvalue(
        x, k, dim, keepdim)), _kth),
    "b_median": OpSpec(1, _median_fn("median"), _dim_keep_or_all),
    "b_nanmedian": OpSpec(1, _median_fn("nanmedian"), _dim_keep_or_all),
    "b_mode": OpSpec(1, lambda lib, x, dim, keepdim: _values_indices(lib.mode(
        x, dim if dim is not None else -1, keepdim)), _dim_keep_or_all),
    "b_msort": OpSpec(1, lambda lib, x: lib.msort(x)),
    "b_aminmax": OpSpec(1, lambda lib, x, dim, keepdim: _times(*lib.aminmax(
        x, dim=dim, keepdim=keepdim)), _dim_keep_or_all),
    "b_count_nonzero": OpSpec(1, lambda lib, x, dim, keepdim: x * lib.count_nonzero(
        x, dim if dim is not None else ()).sum(), _dim_keep_or_all),
})

# lane elem: torch API breadth (gradkit/ops/binary_math.py, elementwise_special.py,
# products.py, rearrange.py), drawn on the class's inputs as they come (other dtypes and
# shapes than an op takes give torch's errors, compared too)
_WEIGHTS = (0.3, 0.5, 0.75, 1.0, -0.5, 1.5, 0)


def _weight(draw, shapes):
    return {"w": draw.choice(_WEIGHTS)}


def _beta_alpha(draw, shapes):
    return {"beta": draw.choice((1, 0, 0.5, -2)), "alpha": draw.choice((1, 2.5, -1, 0))}


def _special_unary(draw, shapes):
    return {"fn": draw.choice(tuple(SPECIAL_UNARY))}


def _tensordot(draw, shapes):
    return {"dims": draw.integer(0, min(len(shapes[0]), len(shapes[1]), 2))}


def _tile(draw, shapes):
    return {"dims": tuple(draw.integer(0 if draw.chance(0.1) else 1, 2)
                          for _ in range(draw.integer(0, 3)))}


def _movedim(draw, shapes):
    nd = len(shapes[0])
    if not nd:
        return None
    count = draw.integer(1, nd)
    return {"source": tuple(draw.integer(-nd, nd - 1) for _ in range(count)),
            "destination": tuple(draw.integer(-nd, nd - 1) for _ in range(count))}


def _diff(draw, shapes):
    p = _dim(draw, shapes)
    return p and {**p, "n": draw.integer(0, 3)}


def _rot90(draw, shapes):
    nd = len(shapes[0])
    if nd < 2:
        return None
    return {"k": draw.integer(-2, 5), "dims": (draw.integer(-nd, nd - 1),
                                               draw.integer(-nd, nd - 1))}


def _indexing(draw, shapes):
    return {"indexing": draw.choice(("ij", "xy"))}


SPECIAL_UNARY = {
    "erfc": lambda lib, x: lib.erfc(x),
    "erfinv": lambda lib, x: lib.erfinv(x.tanh()),
    "logit": lambda lib, x: x.sigmoid().logit(),
    "logit_eps": lambda lib, x: lib.logit(x, eps=0.2),
    "sinc": lambda lib, x: lib.sinc(x),
    "frac": lambda lib, x: (x * 2.5).frac(),
    "nan_to_num": lambda lib, x: (x / x.abs().detach().amax()).nan_to_num(),
    "nan_to_num_given": lambda lib, x: lib.nan_to_num(x.log(), nan=0.5, posinf=2.0,
                                                      neginf=-3.0),
}


def _first(x, n):
    return x.reshape(-1)[:n]


ELEM_OPS: dict[str, OpSpec] = {
    "e_atan2": OpSpec(2, lambda lib, x, y: lib.atan2(x, y)),
    "e_hypot": OpSpec(2, lambda lib, x, y: lib.hypot(x, y)),
    "e_xlogy": OpSpec(2, lambda lib, x, y: lib.xlogy(x, y.abs())),
    "e_xlogy_scalar": OpSpec(1, lambda lib, x, s: lib.xlogy(x, abs(s) + 0.5), _scalar),
    "e_logaddexp": OpSpec(2, lambda lib, x, y: lib.logaddexp(x, y)),
    "e_logaddexp2": OpSpec(2, lambda lib, x, y: x.logaddexp2(y)),
    "e_fmod": OpSpec(2, lambda lib, x, y: lib.fmod(x, y)),
    "e_fmod_scalar": OpSpec(1, lambda lib, x, s: x.fmod(s), _scalar),
    "e_lerp": OpSpec(2, lambda lib, x, y, w: lib.lerp(x, y, w), _weight),
    "e_lerp_tensor": OpSpec(2, lambda lib, x, y: x.lerp(y, y)),
    "e_addcmul": OpSpec(2, lambda lib, x, y, s: lib.addcmul(x, y, x, value=s), _scalar),
    "e_addcdiv": OpSpec(2, lambda lib, x, y, w: lib.addcdiv(y, x, y.abs() + 0.5, value=w),
                        _weight),
    "e_special_unary": OpSpec(1, lambda lib, x, fn: SPECIAL_UNARY[fn](lib, x), _special_unary),
    "e_trace": OpSpec(1, lambda lib, x: lib.trace(x)),
    "e_tensordot": OpSpec(2, lambda lib, x, y, dims: lib.tensordot(x, y, dims), _tensordot),
    "e_addmm": OpSpec(2, lambda lib, x, y, beta, alpha: lib.addmm(
        x.sum(-1, keepdim=True), x, y.mT, beta=beta, alpha=alpha), _beta_alpha),
    "e_addmv": OpSpec(2, lambda lib, x, y, beta, alpha: lib.addmv(
        x[:, 0], x, y[0], beta=beta, alpha=alpha), _beta_alpha),
    "e_baddbmm": OpSpec(2, lambda lib, x, y, beta, alpha: lib.baddbmm(
        x.sum(-1, keepdim=True), x, y.mT, beta=beta, alpha=alpha), _beta_alpha),
    "e_addbmm": OpSpec(2, lambda lib, x, y, beta, alpha: lib.addbmm(
        x.sum(0).sum(-1, keepdim=True), x, y.mT, beta=beta, alpha=alpha), _beta_alpha),
    "e_kron": OpSpec(2, lambda lib, x, y: lib.kron(x, y)),
    "e_cross": OpSpec(2, lambda lib, x, y: lib.linalg.cross(_first(x, 3), _first(y, 3))),
    "e_cross_broadcast": OpSpec(2, lambda lib, x, y: lib.cross(
        _first(x, 3).unsqueeze(0), _first(y, 6).reshape(2, 3), dim=1)),
    "e_meshgrid": OpSpec(2, lambda lib, x, y, indexing: _times(*lib.meshgrid(
        x.reshape(-1), y.reshape(-1), indexing=indexing)), _indexing),
    "e_tile": OpSpec(1, lambda lib, x, dims: lib.tile(x, dims), _tile),
    "e_movedim": OpSpec(1, lambda lib, x, source, destination: x.movedim(source, destination),
                        _movedim),
    "e_diff": OpSpec(1, lambda lib, x, dim, n: lib.diff(x, n, dim), _diff),
    "e_diff_prepend": OpSpec(2, lambda lib, x, y, dim, n: x.diff(n, dim, prepend=y,
                                                                  append=x), _diff),
    "e_rot90": OpSpec(1, lambda lib, x, k, dims: lib.rot90(x, k, dims), _rot90),
}
BREADTH_OPS.update(ELEM_OPS)


# lane linalg2: torch.linalg breadth (solve_triangular, LU, eig, pinv, lstsq, matrix_exp, the
# compositions and the _ex forms), on the matrices above; gauge-free results only
def _triangular(draw, shapes):
    p = _n_rhs(draw, shapes)
    return p and {**p, "upper": draw.boolean(), "left": draw.boolean(),
                  "unitriangular": draw.boolean()}


def _rhs_matrix(x, y, n):
    return _rhs(x, y, n).reshape(n, 1) if n else _rhs(x, y, n).reshape(0, 1)


def _power(draw, shapes):
    p = _n(draw, shapes)
    return p and {**p, "k": draw.integer(-2, 4)}


def _cond_order(draw, shapes):
    p = _n(draw, shapes)  # the orders torch's backward takes (it fills in place for the rest)
    return p and {**p, "p": draw.choice((None, 2, -2, "nuc"))}


def _vander_n(draw, shapes):
    p = _n(draw, shapes)
    return p and p["n"] > 0 and {**p, "size": draw.integer(2, 4)}


def _eigenpairs(lib, values, vectors):
    """sum_i L_i |V_i|^2: free of the pairs' order and of each eigenvector's phase."""
    return (vectors * vectors.conj() * values.unsqueeze(-2)).sum(-1)


LINALG2_OPS: dict[str, OpSpec] = {
    "l_solve_triangular": OpSpec(2, lambda lib, x, y, n, upper, left, unitriangular:
                                 lib.linalg.solve_triangular(
                                     _shifted(lib, x, n), _rhs_matrix(x, y, n).mT if not left
                                     else _rhs_matrix(x, y, n), upper=upper, left=left,
                                     unitriangular=unitriangular), _triangular),
    "l_lu_factor": OpSpec(1, lambda lib, x, n: lib.linalg.lu_factor(_shifted(lib, x, n))[0], _n),
    "l_lu_lower": OpSpec(1, lambda lib, x, n: lib.linalg.lu(_shifted(lib, x, n))[1], _n),
    "l_lu_upper": OpSpec(1, lambda lib, x, n: lib.linalg.lu(_shifted(lib, x, n))[2], _n),
    "l_lu_solve": OpSpec(2, lambda lib, x, y, n: lib.linalg.lu_solve(
        *lib.linalg.lu_factor(_shifted(lib, x, n)), _rhs_matrix(x, y, n)), _n_rhs),
    "l_lu_unpack": OpSpec(1, lambda lib, x, n: lib.lu_unpack(
        *lib.linalg.lu_factor(_shifted(lib, x, n)))[2], _n),
    "l_eigvals_exp": OpSpec(1, lambda lib, x, n: lib.linalg.eigvals(
        _shifted(lib, x, n)).exp().sum(), _n),
    "l_eig_pairs": OpSpec(1, lambda lib, x, n: _eigenpairs(
        lib, *lib.linalg.eig(_shifted(lib, x, n))), _n),
    "l_pinv": OpSpec(1, lambda lib, x, n: lib.linalg.pinv(_shifted(lib, x, n)), _n),
    "l_pinv_hermitian": OpSpec(1, lambda lib, x, n: lib.linalg.pinv(
        _hermitian_pd(lib, x, n), hermitian=True), _n),
    "l_lstsq": OpSpec(2, lambda lib, x, y, n: lib.linalg.lstsq(
        _shifted(lib, x, n), _rhs_matrix(x, y, n))[0], _n_rhs),
    "l_matrix_exp": OpSpec(1, lambda lib, x, n: lib.linalg.matrix_exp(_square(lib, x, n)), _n),
    "l_matrix_power": OpSpec(1, lambda lib, x, n, k: lib.linalg.matrix_power(
        _shifted(lib, x, n), k), _power),
    "l_cond": OpSpec(1, lambda lib, x, n, p: lib.linalg.cond(_shifted(lib, x, n), p),
                     _cond_order),
    "l_multi_dot": OpSpec(1, lambda lib, x, n: lib.linalg.multi_dot(
        [_square(lib, x, n), _shifted(lib, x, n), _first(x, n)]), _n),
    "l_vecdot": OpSpec(1, lambda lib, x, dim: lib.linalg.vecdot(x, x * 2 + 1, dim=dim), _dim),
    "l_vander": OpSpec(1, lambda lib, x, n, size: lib.linalg.vander(_first(x, n), N=size),
                       _vander_n),
    "l_tensorinv": OpSpec(1, lambda lib, x, n: lib.linalg.tensorinv(
        _shifted(lib, x, n).reshape(n, 1, n), ind=1), _n),
    "l_inv_ex": OpSpec(1, lambda lib, x, n: lib.linalg.inv_ex(_shifted(lib, x, n))[0], _n),
    "l_cholesky_ex": OpSpec(1, lambda lib, x, n: lib.linalg.cholesky_ex(
        _hermitian_pd(lib, x, n))[0], _n),
    # a finite right-hand side: NumPy's LAPACK (OpenBLAS) and torch's (MKL) divide an infinite
    # complex one differently (NaN against inf), as in b_solve
    "l_solve_ex": OpSpec(2, lambda lib, x, y, n: lib.linalg.solve_ex(
        _shifted(lib, x, n), _rhs(x, y, n).nan_to_num())[0], _n_rhs),
    "l_householder_product": OpSpec(1, lambda lib, x, n: lib.linalg.householder_product(
        _square(lib, x, n), _first(x, n) * 0.5), _n),
    "l_diagonal": OpSpec(1, lambda lib, x, k: lib.linalg.diagonal(x, offset=k)
                         if x.ndim >= 2 else x, _offset),
}
BREADTH_OPS.update(LINALG2_OPS)
