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
    return {**p, "k": draw.integer(0, shapes[0][p["dim"]]), "largest": draw.boolean(),
            "sorted": draw.boolean()}


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


def split_cut(draw, shapes):
    """A dim, its size and a first piece's size (0 to all of it), or None for a 0-d input."""
    p = _dim(draw, shapes)
    if p is None:
        return None
    n = shapes[0][p["dim"]]
    return p, n, draw.integer(0, n)


def _split(draw, shapes):
    cut = split_cut(draw, shapes)
    if cut is None:
        return None
    p, n, first = cut
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
    "b_topk": OpSpec(1, lambda lib, x, dim, k, largest, sorted=True: lib.topk(
        x, k, dim, largest=largest, sorted=sorted)[0], _topk),
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


# lane shape2: shape / combination / distance functions; tuple results are joined into one
# tensor (flattened and concatenated) so a program goes on with one value
def _joined(lib, parts):
    return lib.cat([p.reshape(-1) for p in parts])


def _sections(draw, shapes):
    p = _dim(draw, shapes)
    return p and {**p, "sections": draw.integer(0 if draw.chance(0.05) else 1, 4)}


def _split_indices(draw, shapes):
    p = _dim(draw, shapes)
    return p and {**p, "indices": tuple(draw.integer(-3, 5) for _ in range(draw.integer(0, 3)))}


def _select_at(draw, shapes):
    p = _dim(draw, shapes)
    if not p:
        return None
    size = shapes[0][p["dim"]]
    return {**p, "index": draw.integer(-size, size - 1) if size else 0}


def _slice_at(draw, shapes):
    p = _dim(draw, shapes)
    bound = (lambda: None if draw.chance(0.3) else draw.integer(-4, 4))
    return p and {**p, "start": bound(), "end": bound(), "step": draw.integer(1, 3)}


def _diagonal_at(draw, shapes):
    nd = len(shapes[0])
    if nd < 2:
        return None
    dim1 = draw.integer(-nd, nd - 1)
    dim2 = draw.choice([d for d in range(nd) if d != dim1 % nd])
    return {"offset": draw.integer(-2, 2), "dim1": dim1, "dim2": dim2}


def _repeats(draw, shapes):
    nd = len(shapes[0])
    dim = draw.integer(-nd, nd - 1) if nd and draw.boolean() else None
    return {"repeats": draw.integer(0, 3), "dim": dim}


def _combination(draw, shapes):
    return {"r": draw.integer(0, 3), "with_replacement": draw.boolean()}


def _p_norm(draw, shapes):
    return {"p": draw.choice((0, 0.5, 1, 1.5, 2, 3, math.inf))}


def _cdist_mode(draw, shapes):
    return {"p": draw.choice((0.5, 1, 2, 2, 3, math.inf)),
            "mode": draw.choice(("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                                 "donot_use_mm_for_euclid_dist"))}


def _renorm(draw, shapes):
    p = _dim(draw, shapes)
    return p and {**p, "p": draw.choice((1, 2, 3.5, math.inf)),
                  "maxnorm": draw.choice((0.0, 0.5, 1.0, 5.0))}


def _at_least(draw, shapes):
    return {"n": draw.integer(1, 3)}


def _rows(x):
    """x as a matrix of rows (a 0-d or 1-d x: one row)."""
    return x.reshape(1, -1) if x.dim() < 2 else x.reshape(-1, x.shape[-1])


SHAPE2_OPS: dict[str, OpSpec] = {
    "s_atleast": OpSpec(1, lambda lib, x, n: (lib.atleast_1d, lib.atleast_2d,
                                              lib.atleast_3d)[n - 1](x), _at_least),
    "s_hstack": OpSpec(2, lambda lib, x, y: lib.hstack([x, y])),
    "s_vstack": OpSpec(2, lambda lib, x, y: lib.vstack([x, y])),
    "s_dstack": OpSpec(2, lambda lib, x, y: lib.dstack([x, x, y])),
    "s_column_stack": OpSpec(2, lambda lib, x, y: lib.column_stack([x, y])),
    "s_tensor_split": OpSpec(1, lambda lib, x, dim, sections: _joined(
        lib, lib.tensor_split(x, sections, dim)), _sections),
    "s_tensor_split_indices": OpSpec(1, lambda lib, x, dim, indices: _joined(
        lib, x.tensor_split(list(indices), dim)), _split_indices),
    "s_hsplit": OpSpec(1, lambda lib, x, dim, sections: _joined(lib, lib.hsplit(x, sections)),
                       _sections),
    "s_flipud": OpSpec(1, lambda lib, x: lib.flipud(x)),
    "s_fliplr": OpSpec(1, lambda lib, x: x.fliplr()),
    "s_cartesian_prod": OpSpec(2, lambda lib, x, y: lib.cartesian_prod(
        x.reshape(-1)[:4], y.reshape(-1)[:3].to(x.dtype))),
    "s_combinations": OpSpec(1, lambda lib, x, r, with_replacement: lib.combinations(
        x.reshape(-1)[:5], r, with_replacement), _combination),
    # no empty 1-d block: torch's backward then reads the blocks after it one row too high
    # (docs/numerics.md), the forward puts it in a row of its own
    "s_block_diag": OpSpec(2, lambda lib, x, y: lib.block_diag(
        _rows(x), *([y.reshape(-1)[:3]] if y.numel() else []),
        *([x.reshape(-1)[0]] if x.numel() else []))),
    "s_diagflat": OpSpec(1, lambda lib, x, offset: lib.diagflat(x.reshape(-1)[:6], offset),
                         lambda draw, shapes: {"offset": draw.integer(-2, 2)}),
    "s_select_scatter": OpSpec(1, lambda lib, x, dim, index: lib.select_scatter(
        x, x.select(dim, index) * 2, dim, index), _select_at),
    "s_slice_scatter": OpSpec(1, lambda lib, x, dim, start, end, step: x.slice_scatter(
        x.narrow_copy(dim, 0, x.shape[dim])[start:end:step] if dim % x.dim() == 0 else
        x.movedim(dim, 0)[start:end:step].movedim(0, dim) * 3, dim, start, end, step),
        _slice_at),
    "s_diagonal_scatter": OpSpec(1, lambda lib, x, offset, dim1, dim2: lib.diagonal_scatter(
        x, x.diagonal(offset, dim1, dim2).exp(), offset, dim1, dim2), _diagonal_at),
    # a start >= 0: torch's gradient for a negative one is zero (docs/numerics.md)
    "s_narrow_copy": OpSpec(1, lambda lib, x, dim, index: lib.narrow_copy(
        x, dim, index % max(x.shape[dim], 1), x.shape[dim] - index % max(x.shape[dim], 1)),
        _select_at),
    "s_repeat_interleave": OpSpec(1, lambda lib, x, repeats, dim: x.repeat_interleave(
        repeats, dim), _repeats),
    "s_vander": OpSpec(1, lambda lib, x, n: lib.vander(x.reshape(-1)[:4].detach(), n),
                       lambda draw, shapes: {"n": draw.integer(0, 4)}),
    "s_cdist": OpSpec(2, lambda lib, x, y, p, mode: lib.cdist(
        _rows(x), _rows(y).reshape(-1)[:2 * _rows(x).shape[-1]].reshape(-1, _rows(x).shape[-1])
        .to(x.dtype), p, mode), _cdist_mode),
    "s_cdist_self": OpSpec(1, lambda lib, x, p: lib.cdist(_rows(x), _rows(x), p), _p_norm),
    "s_dist": OpSpec(2, lambda lib, x, y, p: lib.dist(x, y.to(x.dtype), p), _p_norm),
    "s_renorm": OpSpec(1, lambda lib, x, dim, p, maxnorm: x.renorm(p, dim, maxnorm), _renorm),
    "s_addr": OpSpec(2, lambda lib, x, y, beta, alpha: lib.addr(
        _rows(x), _rows(x)[:, 0], y.reshape(-1)[:_rows(x).shape[1]].to(x.dtype), beta=beta,
        alpha=alpha), _beta_alpha),
    "s_chain_matmul": OpSpec(2, lambda lib, x, y: lib.chain_matmul(
        _rows(x), _rows(x).mT, _rows(y).to(x.dtype)[:_rows(x).shape[0]])),
    "s_trapezoid": OpSpec(1, lambda lib, x, dim: lib.trapezoid(x, dim=dim), _dim),
    "s_trapezoid_x": OpSpec(2, lambda lib, x, y, dim: lib.trapezoid(
        x, y.reshape(-1)[:x.shape[dim]].to(x.dtype), dim=dim), _dim),
    "s_cumulative_trapezoid": OpSpec(1, lambda lib, x, dim: lib.cumulative_trapezoid(
        x, dx=0.5, dim=dim), _dim),
    "s_adjoint": OpSpec(1, lambda lib, x: _rows(x).adjoint()),
    "s_swapdims": OpSpec(1, lambda lib, x, dim: x.swapdims(dim, 0), _dim),
}
BREADTH_OPS.update(SHAPE2_OPS)


# lane elem2: more torch breadth (gradkit/ops/binary_breadth.py, unary_breadth.py, gamma.py,
# statistics.py, logdet), drawn on the class's inputs as they come
_QUANTILE_MODES = ("linear", "lower", "higher", "midpoint", "nearest")


def _gamma_unary(draw, shapes):
    return {"fn": draw.choice(tuple(GAMMA_UNARY))}


def _quantile(draw, shapes):
    p = _dim_keep_or_all(draw, shapes)
    return {**p, "q": draw.choice((0.0, 0.25, 0.5, 0.9, 1.0, (0.1, 0.6))),
            "interpolation": draw.choice(_QUANTILE_MODES)}


def _correction(draw, shapes):
    return {"correction": draw.choice((0, 1, 2))}


def _q_of(lib, x, q):
    """q as the draw says: a number, or a 1-D tensor of x's dtype."""
    return lib.tensor(q, dtype=x.dtype) if isinstance(q, tuple) else q


GAMMA_UNARY = {
    "lgamma": lambda lib, x: lib.lgamma(x),
    "digamma": lambda lib, x: lib.digamma(x),
    "trigamma": lambda lib, x: lib.polygamma(1, x),
    "polygamma3": lambda lib, x: x.polygamma(3),
    "mvlgamma": lambda lib, x: lib.mvlgamma(x.abs() + 1.5, 2),
    "i0": lambda lib, x: lib.i0(x),
    "deg2rad": lambda lib, x: lib.deg2rad(x) + x.rad2deg(),
    # off the powers of 2 where the mantissa jumps (a last-bit difference upstream, seed 4447)
    "frexp": lambda lib, x: lib.frexp(x * 1.7 + 0.1).mantissa,
}

ELEM2_OPS: dict[str, OpSpec] = {
    "e2_copysign": OpSpec(2, lambda lib, x, y: lib.copysign(x, y)),
    "e2_copysign_scalar": OpSpec(1, lambda lib, x, s: x.copysign(s), _scalar),
    "e2_fmax": OpSpec(2, lambda lib, x, y: lib.fmax(x, y)),
    "e2_fmin": OpSpec(2, lambda lib, x, y: x.fmin(y)),
    "e2_nextafter": OpSpec(2, lambda lib, x, y: lib.nextafter(x, y)),
    "e2_ldexp": OpSpec(2, lambda lib, x, y: lib.ldexp(x, y)),
    "e2_float_power": OpSpec(2, lambda lib, x, y: lib.float_power(x.abs(), y)),
    "e2_float_power_scalar": OpSpec(1, lambda lib, x, s: lib.float_power(x, s), _scalar),
    "e2_rsub": OpSpec(2, lambda lib, x, y, s: lib.rsub(x, y, alpha=s), _scalar),
    "e2_rsub_scalar": OpSpec(1, lambda lib, x, s: lib.rsub(x, s), _scalar),
    "e2_clamp_min": OpSpec(2, lambda lib, x, y: lib.clamp_min(x, y)),
    "e2_clamp_max_scalar": OpSpec(1, lambda lib, x, s: x.clamp_max(s), _scalar),
    "e2_gamma_unary": OpSpec(1, lambda lib, x, fn: GAMMA_UNARY[fn](lib, x), _gamma_unary),
    "e2_nansum": OpSpec(1, lambda lib, x, dim, keepdim: lib.nansum(
        (x.log() if x.is_floating_point() else x), dim, keepdim), _dims),
    "e2_nanmean": OpSpec(1, lambda lib, x, dim, keepdim: lib.nanmean(x.log(), dim, keepdim),
                         _dims),
    "e2_quantile": OpSpec(1, lambda lib, x, q, dim, keepdim, interpolation: lib.quantile(
        x, _q_of(lib, x, q), dim, keepdim, interpolation=interpolation), _quantile),
    "e2_nanquantile": OpSpec(1, lambda lib, x, q, dim, keepdim, interpolation: lib.nanquantile(
        x.log(), _q_of(lib, x, q), dim, keepdim, interpolation=interpolation), _quantile),
    "e2_cov": OpSpec(1, lambda lib, x, correction: lib.cov(
        x.reshape(x.shape[0], -1) if x.dim() > 2 else x, correction=correction), _correction),
    "e2_corrcoef": OpSpec(1, lambda lib, x: lib.corrcoef(x.reshape(x.shape[0], -1)
                                                         if x.dim() > 2 else x)),
    "e2_logdet": OpSpec(1, lambda lib, x, n: lib.logdet(_shifted(lib, x, n)), _n),
}
BREADTH_OPS.update(ELEM2_OPS)


# lane nnact: the activations and losses of gradkit/ops/activations_more.py, activations_gated.py,
# losses_more.py and losses_margin.py (special values put inputs on the kinks: 0, ±inf, NaN)
NN_ACTIVATIONS = {
    "celu": lambda lib, x: lib.nn.functional.celu(x, 0.5),
    "selu": lambda lib, x: lib.nn.functional.selu(x),
    "relu6": lambda lib, x: lib.nn.functional.relu6(x * 4),
    "hardtanh": lambda lib, x: lib.nn.functional.hardtanh(x, -0.5, 2.0),
    "hardsigmoid": lambda lib, x: lib.nn.functional.hardsigmoid(x * 3),
    "hardswish": lambda lib, x: lib.nn.functional.hardswish(x * 3),
    "mish": lambda lib, x: lib.nn.functional.mish(x),
    "softsign": lambda lib, x: lib.nn.functional.softsign(x),
    "tanhshrink": lambda lib, x: lib.nn.functional.tanhshrink(x),
    "softshrink": lambda lib, x: lib.nn.functional.softshrink(x, 0.5),
    "hardshrink": lambda lib, x: x.hardshrink(0.5),
    "threshold": lambda lib, x: lib.nn.functional.threshold(x, 0.0, -1.5),
    "rrelu": lambda lib, x: lib.nn.functional.rrelu(x, 0.1, 0.4),
    "clamp_min": lambda lib, x: x.clamp_min(0.5),
}
_NN_POINTWISE = {
    "l1": lambda nnf, x, y, r: nnf.l1_loss(x, y, reduction=r),
    "smooth_l1": lambda nnf, x, y, r: nnf.smooth_l1_loss(x, y, reduction=r, beta=0.5),
    "huber": lambda nnf, x, y, r: nnf.huber_loss(x, y, reduction=r, delta=0.5),
    "soft_margin": lambda nnf, x, y, r: nnf.soft_margin_loss(x, y.sign().detach(), reduction=r),
    "hinge": lambda nnf, x, y, r: nnf.hinge_embedding_loss(x, y.sign().detach(), reduction=r),
    "bce": lambda nnf, x, y, r: nnf.binary_cross_entropy(x.sigmoid(), y.sigmoid(), reduction=r),
    "kl_div_log": lambda nnf, x, y, r: nnf.kl_div(x, y, reduction=r, log_target=True),
    "kl_div": lambda nnf, x, y, r: nnf.kl_div(x, y.sigmoid(), reduction=r),
    "poisson": lambda nnf, x, y, r: nnf.poisson_nll_loss(x, y.abs(), full=True, reduction=r),
    "gaussian": lambda nnf, x, y, r: nnf.gaussian_nll_loss(x, y, y.abs().detach() + 0.1,
                                                       reduction=r),
    "margin_ranking": lambda nnf, x, y, r: nnf.margin_ranking_loss(x, y, y.sign().detach(), 0.3,
                                                               reduction=r),
    "multilabel_soft_margin": lambda nnf, x, y, r: nnf.multilabel_soft_margin_loss(
        x, y.sigmoid().detach(), reduction=r),
}


def _nn_activation(draw, shapes):
    return {"fn": draw.choice(tuple(NN_ACTIVATIONS))}


def _nn_pointwise(draw, shapes):
    return {"fn": draw.choice(tuple(_NN_POINTWISE)), "reduction": draw.choice(
        ("mean", "sum", "none", "batchmean"))}


def _even_dim(draw, shapes):
    p = _dim(draw, shapes)
    return p if p and shapes[0][p["dim"]] % 2 == 0 else None


def _margin_targets(draw, shapes):
    """Class indices for multi_margin (one per row) and index lists for multilabel_margin."""
    nd = len(shapes[0])
    if nd not in (1, 2) or not shapes[0][-1]:
        return None
    classes, rows = shapes[0][-1], shapes[0][0] if nd == 2 else 1
    lists = [[draw.integer(-1, classes - 1) for _ in range(classes)] for _ in range(rows)]
    return {"labels": [draw.integer(0, classes - 1) for _ in range(rows)],
            "lists": lists if nd == 2 else lists[0], "p": draw.choice((1, 2)),
            "reduction": draw.choice(("mean", "sum", "none"))}


def _distance(draw, shapes):
    return {"p": draw.choice((2.0, 1.0, 3.0)), "keepdim": draw.boolean(),
            "dim": draw.integer(-1, 0)}


def _prelu(lib, x, y):
    """prelu with one weight, a value of y's."""
    return lib.nn.functional.prelu(x, _scalar_of(lib, x, y).reshape(1) * 0.25)


NN_OPS: dict[str, OpSpec] = {
    "n_activation": OpSpec(1, lambda lib, x, fn: NN_ACTIVATIONS[fn](lib, x), _nn_activation),
    "n_glu": OpSpec(1, lambda lib, x, dim: lib.nn.functional.glu(x, dim), _even_dim),
    "n_prelu": OpSpec(2, _prelu),
    "n_pointwise_loss": OpSpec(2, lambda lib, x, y, fn, reduction: _NN_POINTWISE[fn](
        lib.nn.functional, x, y, reduction), _nn_pointwise),
    "n_multi_margin": OpSpec(1, lambda lib, x, labels, lists, p, reduction: lib.nn.functional
                             .multi_margin_loss(x, lib.tensor(labels).reshape(-1)[:x.shape[0]]
                                                if x.ndim == 2 else lib.tensor(labels[0]),
                                                p=p, reduction=reduction), _margin_targets),
    "n_multilabel_margin": OpSpec(1, lambda lib, x, labels, lists, p, reduction: lib.nn
                                  .functional.multilabel_margin_loss(x, lib.tensor(lists),
                                                                     reduction=reduction),
                                  _margin_targets),
    "n_cosine_similarity": OpSpec(2, lambda lib, x, y, p, keepdim, dim: lib.nn.functional
                                  .cosine_similarity(x, y, dim), _distance),
    "n_pairwise_distance": OpSpec(2, lambda lib, x, y, p, keepdim, dim: lib.nn.functional
                                  .pairwise_distance(x, y, p, keepdim=keepdim), _distance),
    "n_triplet": OpSpec(2, lambda lib, x, y, p, keepdim, dim: lib.nn.functional
                        .triplet_margin_loss(x, y, x * 0.5 - y, p=p, swap=keepdim), _distance),
    "n_cosine_embedding": OpSpec(2, lambda lib, x, y, p, keepdim, dim: lib.nn.functional
                                 .cosine_embedding_loss(x, y, lib.ones(x.shape[:1]) * (
                                     -1.0 if keepdim else 1.0), margin=0.2), _distance),
}
BREADTH_OPS.update(NN_OPS)


# lane nnpool: pooling, normalization, convolution variants, attention, resampling. Each
# draws a layout for the input's values ((N, C, *spatial), N = 0 for an empty input) and
# arguments torch accepts or refuses; complex inputs pool their real part (gradkit does not
# repeat torch's dtype refusals of these kernels one by one).

def _grid(n: int, d: int) -> tuple:
    """``d`` sizes whose product is ``n`` (its prime factors dealt round the dims)."""
    sizes, f, i = [1] * d, 2, 0
    while n > 1:
        while n % f:
            f += 1
        sizes[i % d] *= f
        n //= f
        i += 1
    return tuple(sizes)


def _layout(shape, d: int, channels: int = 1) -> tuple:
    n = int(np.prod(shape))
    if n == 0:
        return (0, channels) + (2,) * d
    if n % channels:
        channels = 1
    if d == 0:  # (N, C): the values are the batch
        return (n // channels, channels)
    return (1, channels) + _grid(n // channels, d)


def _real(x):
    return x.real if x.is_complex() else x


def _window_params(draw, d, with_dilation=True):
    kernel = tuple(draw.integer(1, 3) for _ in range(d))
    return {"kernel_size": kernel if draw.boolean() else kernel[0],
            "stride": None if draw.chance(0.3) else tuple(draw.integer(1, 3) for _ in range(d)),
            "padding": tuple(draw.integer(0, k // 2) for k in kernel),
            "ceil_mode": draw.boolean(),
            **({"dilation": draw.integer(1, 2)} if with_dilation else {})}


def _max_pool_params(draw, shapes):
    d = draw.integer(1, 3)
    p = _window_params(draw, d)
    if d == 1:
        p = {k: (v[0] if isinstance(v, tuple) else v) for k, v in p.items()}
    return {"d": d, "shape": _layout(shapes[0], d, draw.integer(1, 2)),
            "return_indices": draw.boolean(), **p}


def _max_pool_fn(lib, x, d, shape, **p):
    out = getattr(lib.nn.functional, f"max_pool{d}d")(_real(x).reshape(shape), **p)
    return out[0] * 1 + out[1] if p["return_indices"] else out


def _avg_pool_params(draw, shapes):
    d = draw.integer(1, 3)
    p = _window_params(draw, d, with_dilation=False)
    if d == 1:
        p = {k: (v[0] if isinstance(v, tuple) else v) for k, v in p.items()}
    elif draw.chance(0.3):
        p["divisor_override"] = draw.integer(1, 4)
    return {"d": d, "shape": _layout(shapes[0], d), "count_include_pad": draw.boolean(), **p}


def _adaptive_params(draw, shapes):
    kind = draw.choice(("avg1", "avg2", "avg3", "max1", "max2"))
    d = int(kind[-1])
    return {"kind": kind, "shape": _layout(shapes[0], d),
            "size": tuple(draw.integer(1, 4) for _ in range(d))}


def _adaptive_fn(lib, x, kind, shape, size):
    name = f"adaptive_{kind[:3]}_pool{kind[-1]}d"
    return getattr(lib.nn.functional, name)(_real(x).reshape(shape), size)


def _lp_params(draw, shapes):
    d = draw.integer(1, 2)
    kernel = draw.integer(1, 3)
    return {"d": d, "shape": _layout(shapes[0], d), "kernel": kernel,
            "norm": draw.choice((1, 2, 3.0, 1.5, math.inf)),
            "stride": None if draw.boolean() else draw.integer(1, 2), "ceil": draw.boolean()}


def _lp_fn(lib, x, d, shape, kernel, norm, stride, ceil):
    fn = getattr(lib.nn.functional, f"lp_pool{d}d")
    return fn(_real(x).reshape(shape).abs() + 0.5, norm, kernel, stride, ceil)


def _conv_params(draw, shapes):
    kind = draw.choice(("conv1d", "conv3d", "conv_transpose1d", "conv_transpose2d"))
    d = {"conv1d": 1, "conv3d": 3, "conv_transpose1d": 1, "conv_transpose2d": 2}[kind]
    groups = draw.integer(1, 2)
    shape = _layout(shapes[0], d, groups * draw.integer(1, 2))
    groups = groups if shape[1] % groups == 0 else 1
    out = groups * draw.integer(1, 2)
    kernel = tuple(draw.integer(1, 2) for _ in range(d))
    w = (shape[1], out // groups) + kernel if "transpose" in kind \
        else (out, shape[1] // groups) + kernel
    if int(np.prod(shapes[1])) < int(np.prod(w)):
        return None
    p = {"kind": kind, "shape": shape, "w": w, "stride": draw.integer(1, 2),
         "padding": draw.integer(0, 1), "dilation": draw.integer(1, 2), "groups": groups}
    if "transpose" in kind:
        p["output_padding"] = draw.integer(0, 1)
    return p


def _conv_fn(lib, x, y, kind, shape, w, **p):
    weight = y.reshape(-1)[:int(np.prod(w))].reshape(w)
    return getattr(lib.nn.functional, kind)(x.reshape(shape), weight, **p)


def _norm_params(draw, shapes):
    kind = draw.choice(("batch_train", "batch_eval", "instance", "group", "rms", "lrn"))
    return {"kind": kind, "shape": _layout(shapes[0], draw.integer(0, 2), draw.integer(1, 4)),
            "eps": draw.choice((1e-5, 1e-2)), "momentum": draw.choice((0.1, 0.5))}


def _norm_fn(lib, x, kind, shape, eps, momentum):
    x = _real(x).reshape(shape)
    nnf, c = lib.nn.functional, shape[1]
    stats = (lib.zeros(c, dtype=x.dtype) + 0.5, lib.ones(c, dtype=x.dtype) * 2)
    if kind in ("batch_train", "batch_eval"):
        out = nnf.batch_norm(x, *stats, training=kind == "batch_train", momentum=momentum,
                             eps=eps)
        return out * 1 + stats[0].sum() + stats[1].sum()
    if kind == "instance":
        return nnf.instance_norm(x, *stats, momentum=momentum, eps=eps) + stats[1].sum()
    if kind == "group":
        return nnf.group_norm(x, 1 if c % 2 else 2, eps=eps)
    if kind == "rms":
        return nnf.rms_norm(x, shape[-1:], eps=eps)
    return nnf.local_response_norm(x, 2, alpha=0.1, beta=0.75, k=1.0)


def _sdpa_params(draw, shapes):
    n, m = int(np.prod(shapes[0])), int(np.prod(shapes[1]))
    if not n or not m:
        return None
    e = draw.integer(1, 2)
    if n % e or m % e:
        e = 1
    return {"e": e, "mask": draw.choice(("none", "causal", "bool", "float")),
            "scale": draw.choice((None, 0.5))}


def _sdpa_fn(lib, x, y, e, mask, scale):
    q, kv = x.reshape(-1, e), y.reshape(-1, e).to(x.dtype)
    allowed = (lib.arange(kv.shape[0]) % 2 == 0) | (lib.arange(q.shape[0])[:, None] % 3 == 1)
    kwargs = {"is_causal": True} if mask == "causal" else \
        {"attn_mask": allowed} if mask == "bool" else \
        {"attn_mask": lib.where(allowed, 0.0, -math.inf).to(x.dtype)} if mask == "float" else {}
    return lib.nn.functional.scaled_dot_product_attention(q, kv, kv, scale=scale, **kwargs)


def _resample_params(draw, shapes):
    kind = draw.choice(("nearest", "linear", "bilinear", "shuffle", "unshuffle", "unfold",
                        "fold"))
    d = {"linear": 1, "nearest": draw.integer(1, 2)}.get(kind, 2)
    p = {"kind": kind, "shape": _layout(shapes[0], d, 4 if kind == "shuffle" else 1)}
    if kind in ("nearest", "linear", "bilinear"):
        if draw.boolean():
            p["size"] = tuple(draw.integer(1, 5) for _ in range(d))
        else:
            p["scale_factor"] = draw.choice((2, 0.5, 1.5, 3))
        if kind != "nearest":
            p["align_corners"] = draw.boolean()
    else:
        p["k"] = draw.integer(1, 2)
    return p


def _resample_fn(lib, x, kind, shape, k=1, **p):
    x, nnf = _real(x).reshape(shape), lib.nn.functional
    if kind in ("nearest", "linear", "bilinear"):
        return nnf.interpolate(x, mode=kind, **p)
    if kind == "shuffle":
        return nnf.pixel_shuffle(x, k)
    if kind == "unshuffle":
        return nnf.pixel_unshuffle(x, k)
    blocks = nnf.unfold(x, k)
    return blocks if kind == "unfold" else nnf.fold(blocks, tuple(shape[2:]), k)


NNPOOL_OPS: dict[str, OpSpec] = {
    "n_max_pool": OpSpec(1, _max_pool_fn, _max_pool_params),
    "n_avg_pool": OpSpec(1, lambda lib, x, d, shape, **p: getattr(
        lib.nn.functional, f"avg_pool{d}d")(_real(x).reshape(shape), **p), _avg_pool_params),
    "n_adaptive_pool": OpSpec(1, _adaptive_fn, _adaptive_params),
    "n_lp_pool": OpSpec(1, _lp_fn, _lp_params),
    "n_conv": OpSpec(2, _conv_fn, _conv_params),
    "n_norm": OpSpec(1, _norm_fn, _norm_params),
    "n_sdpa": OpSpec(2, _sdpa_fn, _sdpa_params),
    "n_resample": OpSpec(1, _resample_fn, _resample_params),
}
BREADTH_OPS.update(NNPOOL_OPS)


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


# lane fft: torch.fft's transforms (n / s crop and pad, dims in any order, every norm) and
# shifts. No empty input: torch 2.13's CPU (MKL) backend refuses an FFT of an empty batch,
# gradkit returns the empty result (docs/api.md)
_NORMS = (None, "backward", "ortho", "forward")


def _fft_1d(draw, shapes):
    p = _dim(draw, shapes)
    if p is None or 0 in shapes[0]:
        return None
    n = None if draw.boolean() else draw.integer(0 if draw.chance(0.1) else 1, 6)
    return {**p, "n": n, "norm": draw.choice(_NORMS)}


def _fft_nd(draw, shapes):
    if 0 in shapes[0]:
        return None
    nd = len(shapes[0])
    dims = [d - nd if draw.boolean() else d for d in range(nd) if draw.boolean()]
    if draw.boolean():
        dims.reverse()
    dim = None if draw.chance(0.3) else tuple(dims)
    count = len(dims) if dim is not None else draw.integer(0, nd)
    s = None if draw.boolean() else tuple(
        -1 if draw.chance(0.2) else draw.integer(0 if draw.chance(0.05) else 1, 5)
        for _ in range(count))
    return {"s": s, "dim": dim, "norm": draw.choice(_NORMS)}


def _fft_2d(draw, shapes):
    p = _fft_nd(draw, shapes)
    return p and {**p, "dim": (-2, -1) if p["dim"] is None or draw.boolean() else p["dim"]}


def _shift_dims(draw, shapes):
    nd = len(shapes[0])
    dims = tuple(d - nd if draw.boolean() else d for d in range(nd) if draw.boolean())
    return {"dim": None if not dims or draw.boolean() else dims}


def _transform(name: str, params) -> OpSpec:
    return OpSpec(1, lambda lib, x, **k: getattr(lib.fft, name)(x, **k), params)


FFT_OPS: dict[str, OpSpec] = {
    **{f"fft_{name}": _transform(name, _fft_1d)
       for name in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")},
    **{f"fft_{name}n": _transform(f"{name}n", _fft_nd)
       for name in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")},
    **{f"fft_{name}2": _transform(f"{name}2", _fft_2d)
       for name in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")},
    "fft_fftshift": _transform("fftshift", _shift_dims),
    "fft_ifftshift": _transform("ifftshift", _shift_dims),
}
BREADTH_OPS.update(FFT_OPS)
# lane special: torch.special (the functions torch does not differentiate enter as
# x + f(x.detach()), so that their values reach the compared outputs and gradients)
SPECIAL_FUNCTIONS = {
    "erfcx": lambda lib, x: lib.special.erfcx(x),
    "entr": lambda lib, x: lib.special.entr(x),
    "ndtr": lambda lib, x: lib.special.ndtr(x),
    "ndtri": lambda lib, x: lib.special.ndtri(x.sigmoid()),
    "log_ndtr": lambda lib, x: lib.special.log_ndtr(x * 4),
    "i0e": lambda lib, x: lib.special.i0e(x * 5),
    "i1": lambda lib, x: lib.special.i1(x * 5),
    "i1e": lambda lib, x: lib.special.i1e(x * 5),
    "expit": lambda lib, x: lib.special.expit(x),
    "psi": lambda lib, x: lib.special.psi(x.abs() + 0.5),
    "gammaln": lambda lib, x: lib.special.gammaln(x),
    "multigammaln": lambda lib, x: lib.special.multigammaln(x.abs() + 2.0, 3),
}
NO_GRAD_SPECIAL = ("airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1",
                    "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0",
                    "modified_bessel_k1", "scaled_modified_bessel_k0",
                    "scaled_modified_bessel_k1", "spherical_bessel_j0")
POLYNOMIALS = ("chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
                "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
                "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
                "shifted_chebyshev_polynomial_w", "hermite_polynomial_h",
                "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p")


def _special_function(draw, shapes):
    return {"fn": draw.choice(tuple(SPECIAL_FUNCTIONS))}


def _no_grad_special(draw, shapes):
    return {"fn": draw.choice(NO_GRAD_SPECIAL), "scale": draw.choice((1.0, 4.0, 30.0))}


def _polynomial(draw, shapes):
    return {"fn": draw.choice(POLYNOMIALS), "n": draw.choice((0, 1, 2, 3, 5, 7, 9, 12, -1, 2.5))}


SPECIAL_OPS: dict[str, OpSpec] = {
    "sp_function": OpSpec(1, lambda lib, x, fn: SPECIAL_FUNCTIONS[fn](lib, x), _special_function),
    "sp_no_grad": OpSpec(1, lambda lib, x, fn, scale: x + getattr(lib.special, fn)(
        x.detach() * scale), _no_grad_special),
    "sp_polynomial": OpSpec(1, lambda lib, x, fn, n: x + getattr(lib.special, fn)(
        x.detach().tanh(), n), _polynomial),
    # (a degree of at most 1e4: torch's legendre runs a loop of n steps, 1e12 did not end in
    # strided_breadth seed 2261257)
    "sp_polynomial_tensor_n": OpSpec(2, lambda lib, x, y, fn, n: x + getattr(lib.special, fn)(
        x.detach(), (y.detach().abs() * 4).floor().clamp(max=1e4)), _polynomial),
    "sp_xlog1py": OpSpec(2, lambda lib, x, y: lib.special.xlog1py(x, y.abs() - 0.5)),
    "sp_xlog1py_scalar": OpSpec(1, lambda lib, x, s: lib.special.xlog1py(s, x.abs()), _scalar),
    "sp_zeta_q": OpSpec(1, lambda lib, x: lib.special.zeta(3.5, x.abs() + 0.5)),
    "sp_zeta": OpSpec(2, lambda lib, x, y: lib.special.zeta(x.detach().abs() + 1.5,
                                                            y.abs() + 0.25)),
    "sp_gammainc": OpSpec(2, lambda lib, x, y: lib.special.gammainc(x.detach().abs() * 30,
                                                                     y.abs() * 30)),
    "sp_gammaincc": OpSpec(2, lambda lib, x, y: lib.special.gammaincc(x.detach().abs() + 0.5,
                                                                       y.abs())),
}
BREADTH_OPS.update(SPECIAL_OPS)


# lane fuzznn: the nn.functional ops merged without draws (multi-head attention, bilinear,
# embedding_bag, channel_shuffle, the dropout forms at p = 0 and 1, affine_grid + grid_sample,
# max_unpool, triplet_margin_with_distance_loss, ctc_loss) and the recurrent cells run on
# weights that are functions of the leaves. Weights are the leaves' values tiled to the shape
# needed, so every leaf's gradient flows through them; inputs must not be empty.
def _tiled(t, shape):
    """``t``'s real values, repeated to fill ``shape``."""
    flat = _real(t).reshape(-1)
    n = int(np.prod(shape))
    return flat.repeat(-(-n // flat.numel()))[:n].reshape(shape)


def _nonempty(shapes) -> bool:
    return all(int(np.prod(s)) for s in shapes)


def _mha_params(draw, shapes):
    if not _nonempty(shapes):
        return None
    mask = draw.choice(("none", "bool", "float", "bool3d", "causal"))
    return {"heads": draw.integer(1, 2), "head_dim": draw.integer(1, 2),
            "tgt": draw.integer(1, 3), "src": draw.integer(1, 3),
            "batch": draw.choice((None, 1, 2)), "mask": mask,
            "padding": draw.choice(("none", "bool", "float")),
            "need_weights": draw.boolean(), "average": draw.boolean(),
            "zero_attn": draw.chance(0.3), "bias_kv": draw.chance(0.3),
            "separate": draw.chance(0.3), "in_bias": draw.boolean()}


def _mha_fn(lib, x, y, heads, head_dim, tgt, src, batch, mask, padding, need_weights, average,
            zero_attn, bias_kv, separate, in_bias):
    e = heads * head_dim
    lead = (batch,) if batch else ()
    q = _tiled(x, (tgt, *lead, e))
    k = _tiled(y, (src, *lead, e)).to(q.dtype)
    w = _tiled(y, (3 * e, e)).to(q.dtype) * 0.5
    # True where a query may not look at a key (every query sees key 0)
    blocked = (lib.arange(src) % 2 == 1) & (lib.arange(tgt)[:, None] % 3 != 1)
    attn_mask = None if mask in ("none", "causal") else blocked if mask == "bool" else \
        lib.where(blocked, -math.inf, 0.0).to(q.dtype) if mask == "float" else \
        blocked.expand((batch or 1) * heads, tgt, src)
    if mask == "causal":
        attn_mask = lib.ones(tgt, src, dtype=lib.bool).triu(1)
    last = lib.arange(src) == src - 1
    pad = None if padding == "none" else (last.expand(batch, src) if batch else last)
    if pad is not None and padding == "float":
        pad = lib.where(pad, -math.inf, 0.0).to(q.dtype)
    kv_bias = _tiled(x, (1, 1, e)) if bias_kv else None
    out, weights = lib.nn.functional.multi_head_attention_forward(
        q, k, k.sin(), e, heads, None if separate else w,
        _tiled(x, (3 * e,)) if in_bias else None, kv_bias, kv_bias, zero_attn, 0.0,
        _tiled(x, (e, e)), _tiled(y, (e,)).to(q.dtype), key_padding_mask=pad,
        need_weights=need_weights, attn_mask=attn_mask, use_separate_proj_weight=separate,
        q_proj_weight=w[:e], k_proj_weight=w[e:2 * e], v_proj_weight=w[2 * e:],
        average_attn_weights=average, is_causal=mask == "causal")
    return out if weights is None else lib.cat([out.reshape(-1), weights.reshape(-1)])


def _bilinear_params(draw, shapes):
    if not _nonempty(shapes):
        return None
    return {"lead": draw.choice(((), (2,), (3,), (2, 1))), "a": draw.integer(1, 3),
            "b": draw.integer(1, 3), "out": draw.integer(1, 2), "bias": draw.boolean()}


def _bilinear_fn(lib, x, y, lead, a, b, out, bias):
    x1 = x.reshape(-1).repeat(a * int(np.prod(lead)))[:a * int(np.prod(lead))].reshape(
        *lead, a)
    x2 = _tiled(y, (*lead, b)).to(x.dtype)
    weight = (_tiled(y, (out, a, b)) * 0.5).to(x.dtype)
    return lib.nn.functional.bilinear(x1, x2, weight, _tiled(x, (out,)) if bias else None)


def _bag_params(draw, shapes):
    if not _nonempty(shapes):
        return None
    num, mode = draw.integer(1, 4), draw.choice(("sum", "mean", "max"))
    p = {"num": num, "dim": draw.integer(1, 3), "mode": mode,
         "weighted": draw.chance(0.5 if mode == "sum" else 0.05),
         "padding_idx": None if draw.boolean() else draw.integer(-num, num - 1)}
    if draw.boolean():  # (B, L) indices, a bag per row
        rows, length = draw.integer(1, 3), draw.integer(1, 3)
        p["indices"] = [[draw.integer(0, num - 1) for _ in range(length)] for _ in range(rows)]
        return {**p, "offsets": None, "last": False}
    indices = [draw.integer(0, num - 1) for _ in range(draw.integer(0, 5))]
    cuts = sorted(draw.integer(0, len(indices)) for _ in range(draw.integer(0, 3)))
    last = draw.boolean()
    return {**p, "indices": indices, "offsets": [0, *cuts] + ([len(indices)] if last else []),
            "last": last}


def _bag_fn(lib, x, y, num, dim, mode, weighted, padding_idx, indices, offsets, last):
    weight = _tiled(x, (num, dim))
    index = lib.tensor(indices, dtype=lib.int64)
    psw = _tiled(y, tuple(index.shape)).to(weight.dtype) if weighted and index.numel() else \
        lib.ones(index.shape, dtype=weight.dtype) if weighted else None
    return lib.nn.functional.embedding_bag(
        index, weight, None if offsets is None else lib.tensor(offsets), mode=mode,
        per_sample_weights=psw, include_last_offset=last, padding_idx=padding_idx)


def _shuffle_params(draw, shapes):
    groups = draw.integer(1, 3)
    return {"shape": _layout(shapes[0], draw.integer(0, 2), groups * draw.integer(1, 2)),
            "groups": groups}


_DROPOUTS = ("dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
             "feature_alpha_dropout")


def _dropout_params(draw, shapes):
    kind = draw.choice(_DROPOUTS)
    rank = draw.integer(1, 5)
    shape = tuple(shapes[0]) if draw.chance(0.2) else _layout(shapes[0], max(rank - 2, 0)) \
        if rank >= 2 else (int(np.prod(shapes[0])),)
    return {"kind": kind, "shape": shape, "p": draw.choice((0.0, 1.0)),
            "training": draw.chance(0.7)}


def _dropout_fn(lib, x, kind, shape, p, training):
    return getattr(lib.nn.functional, kind)(x.reshape(shape), p, training)


def _grid_params(draw, shapes):
    if not _nonempty(shapes):
        return None
    return {"shape": _layout(shapes[0], 2, draw.integer(1, 2)), "affine": draw.boolean(),
            "out": (draw.integer(1, 3), draw.integer(1, 3)),
            "mode": draw.choice(("bilinear", "nearest")),
            "padding_mode": draw.choice(("zeros", "border", "reflection")),
            "align_corners": draw.choice((None, True, False))}


def _grid_fn(lib, x, y, shape, affine, out, mode, padding_mode, align_corners):
    image = _real(x).reshape(shape)
    n = shape[0]
    if affine:
        theta = _tiled(y, (n, 2, 3)).to(image.dtype) * 1.5
        grid = lib.nn.functional.affine_grid(theta, (n, shape[1], *out),
                                             align_corners=align_corners)
    else:
        grid = _tiled(y, (n, *out, 2)).to(image.dtype) * 1.3
    if padding_mode != "zeros":  # torch 2.13 segfaults clipping a non-finite point
        grid = grid.nan_to_num(0.0, 3.0, -3.0)
    return lib.nn.functional.grid_sample(image, grid, mode=mode, padding_mode=padding_mode,
                                         align_corners=align_corners)


def _unpool_params(draw, shapes):
    d = draw.integer(1, 2)
    kernel = draw.integer(1, 3)
    stride = draw.choice((None, 1, 2, 3))
    padding = draw.integer(0, kernel // 2)
    shape = _layout(shapes[0], d, draw.integer(1, 2))
    extra = None if draw.boolean() else draw.integer(0, stride or kernel)
    step = stride or kernel
    pooled = [(n + 2 * padding - kernel) // step + 1 for n in shape[2:]]
    # no empty unpooled plane: torch returns it without checking the indices (its backward
    # then raises), where gradkit refuses the indices at once
    if min((p - 1) * step - 2 * padding + kernel + (extra or 0) for p in pooled) <= 0:
        return None
    return {"d": d, "shape": shape, "kernel": kernel, "stride": stride, "padding": padding,
            "extra": extra}


def _unpool_fn(lib, x, d, shape, kernel, stride, padding, extra):
    nnf = lib.nn.functional
    pooled, indices = getattr(nnf, f"max_pool{d}d")(_real(x).reshape(shape), kernel, stride,
                                                    padding, return_indices=True)
    step = stride or kernel
    size = None if extra is None else tuple(
        (n - 1) * step - 2 * padding + kernel + extra for n in pooled.shape[2:])
    return getattr(nnf, f"max_unpool{d}d")(pooled, indices, kernel, stride, padding, size)


_DISTANCES = {
    "default": lambda nnf: None,
    "l1": lambda nnf: lambda a, b: nnf.pairwise_distance(a, b, 1.0),
    "cosine": lambda nnf: lambda a, b: 1.0 - nnf.cosine_similarity(a, b),
}


def _triplet_distance_params(draw, shapes):
    return {"distance": draw.choice(tuple(_DISTANCES)), "margin": draw.choice((1.0, 0.3, 0.0)),
            "swap": draw.boolean(), "reduction": draw.choice(("mean", "sum", "none"))}


def _triplet_distance_fn(lib, x, y, distance, margin, swap, reduction):
    nnf = lib.nn.functional
    return nnf.triplet_margin_with_distance_loss(
        x, y, x * 0.5 - y, distance_function=_DISTANCES[distance](nnf), margin=margin,
        swap=swap, reduction=reduction)


def _ctc_params(draw, shapes):
    if not _nonempty(shapes[:1]):
        return None
    steps, batch, classes = draw.integer(1, 5), draw.choice((None, 1, 2)), draw.integer(2, 4)
    blank = draw.choice((0, classes - 1))
    labels = [c for c in range(classes) if c != blank]
    lengths = [draw.integer(0, min(3, steps + 1)) for _ in range(batch or 1)]
    targets = [[draw.choice(labels) for _ in range(n)] for n in lengths]
    return {"steps": steps, "batch": batch, "classes": classes, "blank": blank,
            "targets": targets, "lengths": lengths, "inputs": [
                draw.integer(max(n, 1), steps) if draw.chance(0.8) else steps for n in lengths],
            "padded": batch is None or draw.boolean(), "as_tensors": draw.boolean(),
            "reduction": draw.choice(("mean", "sum", "none")), "zero_infinity": draw.boolean()}


def _ctc_fn(lib, x, steps, batch, classes, blank, targets, lengths, inputs, padded,
            as_tensors, reduction, zero_infinity):
    lead = (batch,) if batch else ()
    log_probs = _tiled(x, (steps, *lead, classes)).log_softmax(-1)
    if padded:
        width = max(lengths)
        rows = [t + [blank if blank else 1] * (width - len(t)) for t in targets]
        target = lib.tensor(rows if batch else rows[0], dtype=lib.int64)
    else:
        target = lib.tensor(sum(targets, []), dtype=lib.int64)
    if batch is None:
        inputs, lengths = inputs[0], lengths[0]
    if as_tensors:
        inputs, lengths = lib.tensor(inputs), lib.tensor(lengths)
    elif batch:
        inputs, lengths = tuple(inputs), tuple(lengths)
    return lib.nn.functional.ctc_loss(log_probs, target, inputs, lengths, blank=blank,
                                      reduction=reduction, zero_infinity=zero_infinity)


_CELLS = {"lstm": ("LSTMCell", 4), "gru": ("GRUCell", 3), "rnn_tanh": ("RNNCell", 1),
          "rnn_relu": ("RNNCell", 1)}


def _cell_params(draw, shapes):
    if not _nonempty(shapes):
        return None
    return {"kind": draw.choice(tuple(_CELLS)), "size": draw.integer(1, 3),
            "hidden": draw.integer(1, 3), "batch": draw.choice((None, 1, 2)),
            "bias": draw.boolean(), "with_state": draw.chance(0.7)}


def _cell_fn(lib, x, y, kind, size, hidden, batch, bias, with_state):
    """One step of an RNN cell whose parameters are replaced by tensors made of the leaves'
    values (deleted, then set as plain attributes: the cell's forward reads them)."""
    name, gates = _CELLS[kind]
    extra = {"nonlinearity": kind[4:]} if name == "RNNCell" else {}
    dtype = _real(x).dtype
    cell = getattr(lib.nn, name)(size, hidden, bias=bias, dtype=dtype, **extra)
    weights = {"weight_ih": _tiled(y, (gates * hidden, size)) * 0.5,
               "weight_hh": _tiled(x, (gates * hidden, hidden)) * 0.5,
               "bias_ih": _tiled(x, (gates * hidden,)), "bias_hh": _tiled(y, (gates * hidden,))}
    for key, value in weights.items():
        if key.startswith("weight") or bias:
            delattr(cell, key)
            setattr(cell, key, value.to(dtype))
    lead = (batch,) if batch else ()
    state = _tiled(y, (*lead, hidden)).to(dtype) if with_state else None
    if kind == "lstm" and with_state:
        state = (state, _tiled(x, (*lead, hidden)))
    out = cell(_tiled(x, (*lead, size)), state)
    return lib.cat([out[0].reshape(-1), out[1].reshape(-1)]) if kind == "lstm" else out


FUZZNN_OPS: dict[str, OpSpec] = {
    "f_multi_head_attention": OpSpec(2, _mha_fn, _mha_params),
    "f_bilinear": OpSpec(2, _bilinear_fn, _bilinear_params),
    "f_embedding_bag": OpSpec(2, _bag_fn, _bag_params),
    "f_channel_shuffle": OpSpec(1, lambda lib, x, shape, groups: lib.nn.functional
                                .channel_shuffle(x.reshape(shape), groups), _shuffle_params),
    "f_dropout": OpSpec(1, _dropout_fn, _dropout_params),
    "f_grid_sample": OpSpec(2, _grid_fn, _grid_params),
    "f_max_unpool": OpSpec(1, _unpool_fn, _unpool_params),
    "f_triplet_distance": OpSpec(2, _triplet_distance_fn, _triplet_distance_params),
    "f_ctc_loss": OpSpec(1, _ctc_fn, _ctc_params),
    "f_rnn_cell": OpSpec(2, _cell_fn, _cell_params),
}
BREADTH_OPS.update(FUZZNN_OPS)


# lane fuzzb: this session's new ops (inverse hyperbolics, in-place variants and in-place
# views, as_strided / unfold and the *_copy functions, legacy linalg, cholesky_solve /
# inverse, geqrf / ormqr, ldl, ATen's nn spellings); special values, 0-size and complex come
# from the class's leaves
def _shift(draw, shapes):
    return {"shift": draw.choice((0.0, 0.0, 1.0, 1.5))}


_COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge", "less", "greater_equal", "not_equal")


def _compare_params(draw, shapes):
    return {"name": draw.choice(_COMPARISONS), "scalar": draw.choice((None, None, 0.0, 0.5))}


def _compare_(lib, x, y, name, scalar):
    return getattr(x, name + "_")(y if scalar is None else scalar)


def _logical_params(draw, shapes):
    return {"name": draw.choice(("logical_and", "logical_or", "logical_xor", "logical_not"))}


def _logical_(lib, x, y, name):
    return getattr(x, name + "_")() if name == "logical_not" else getattr(x, name + "_")(y)


def _fill_diagonal(draw, shapes):
    return {"value": draw.choice((0.0, -1.5, 2, math.nan)), "wrap": draw.boolean()}


def _squeeze_params(draw, shapes):
    nd = len(shapes[0])
    return {"dim": draw.choice((None, draw.integer(-nd, nd - 1) if nd else None,
                                tuple(d for d in range(nd) if draw.boolean())))}


def _unsqueeze_params(draw, shapes):
    nd = len(shapes[0])
    return {"dim": draw.integer(-nd - 1, nd)}


def _transpose_params(draw, shapes):
    nd = max(len(shapes[0]), 1)
    return {"name": draw.choice(("transpose_", "swapaxes_", "swapdims_")),
            "d0": draw.integer(-nd, nd - 1), "d1": draw.integer(-nd, nd - 1)}


def _geometry_params(draw, shapes):
    """A size, stride and storage offset reaching at most the input's element count (a view
    of a smaller storage, an expanded one, is refused by both)."""
    numel = int(np.prod(shapes[0]))
    size = tuple(draw.integer(0 if draw.chance(0.1) else 1, 3) for _ in range(draw.integer(0, 3)))
    stride = tuple(draw.integer(0, 3) for _ in size)
    reach = sum((n - 1) * s for n, s in zip(size, stride) if n)
    offset = draw.choice((None, 0, 1, 2))
    if 0 not in size and (offset or 0) + reach >= numel and not draw.chance(0.05):
        return None
    return {"size": size, "stride": stride, "offset": offset}


def _strided_fn(name):
    def fn(lib, x, size, stride, offset):
        call = getattr(lib, name) if name != "as_strided_" else lib.Tensor.as_strided_
        return call(x, size, stride, offset)
    return fn


def _scatter_fn(lib, x, y, size, stride, offset):
    src = _tiled(y, size).to(x.dtype) if int(np.prod(size)) and y.numel() else \
        lib.zeros(size, dtype=x.dtype)
    return lib.as_strided_scatter(x, src, size, stride, offset)


def _unfold_params(draw, shapes):
    nd = len(shapes[0])
    n = shapes[0][draw.integer(0, nd - 1)] if nd else 1
    return {"dim": draw.integer(-nd, nd - 1) if nd else 0,
            "size": draw.integer(0, n + (1 if draw.chance(0.05) else 0)),
            "step": draw.integer(1, 3)}


def _copy_params(draw, shapes):
    nd = len(shapes[0])
    kind = draw.choice(("view_copy", "t_copy", "transpose_copy", "unsqueeze_copy",
                        "squeeze_copy", "select_copy", "slice_copy", "diagonal_copy",
                        "alias_copy", "unbind_copy", "split_copy", "detach_copy",
                        "unsafe_split", "unsafe_chunk", "view_as_real_copy"))
    dim = draw.integer(-nd, nd - 1) if nd else 0
    return {"kind": kind, "dim": dim, "other": draw.integer(-nd, max(nd - 1, 0)),
            "k": draw.integer(-2, 3)}


def _copy_fn(lib, x, kind, dim, other, k):
    """One of torch's *_copy functions (or an unsafe split's last piece)."""
    if kind == "view_copy":
        return lib.view_copy(x, (-1,))
    if kind in ("t_copy", "alias_copy", "detach_copy", "view_as_real_copy"):
        return getattr(lib, kind)(x)
    if kind == "transpose_copy":
        return lib.transpose_copy(x, dim, other)
    if kind == "unsqueeze_copy":
        return lib.unsqueeze_copy(x, other)
    if kind == "squeeze_copy":
        return lib.squeeze_copy(x, dim)
    if kind == "select_copy":
        return lib.select_copy(x, dim, k)
    if kind == "slice_copy":
        return lib.slice_copy(x, dim, k, None, 2)
    if kind == "diagonal_copy":
        return lib.diagonal_copy(x, k, dim, other)
    if kind == "unbind_copy":
        return lib.unbind_copy(x, dim)[k]
    pieces = getattr(lib, kind.replace("_copy", ""))(x, max(k, 1), dim) if kind != \
        "split_copy" else lib.split_copy(x, max(k, 1), dim)
    return pieces[-1]


def _legacy_params(draw, shapes):
    p = _n_rhs(draw, shapes) if len(shapes) > 1 else _n(draw, shapes)
    return p and {**p, "flag": draw.boolean(), "flag2": draw.boolean()}


def _legacy_svd(lib, x, n, flag, flag2):
    u, s, v = lib.svd(_shifted(lib, x, n), some=flag, compute_uv=flag2)
    return s if not flag2 else (u * s.unsqueeze(-2).to(u.dtype)) @ v.mT.conj()


def _triangular_solve(lib, x, y, n, flag, flag2):
    return lib.triangular_solve(_rhs_matrix(x, y, n), _shifted(lib, x, n), upper=flag,
                                transpose=flag2)[0]


def _lu_solve(lib, x, y, n, flag, flag2):
    return lib.lu_solve(_rhs_matrix(x, y, n), *lib.lu(_shifted(lib, x, n)))


def _cholesky_solve(lib, x, y, n, flag, flag2):
    factor = lib.linalg.cholesky(_hermitian_pd(lib, x, n), upper=flag)
    return lib.cholesky_solve(_rhs_matrix(x, y, n), factor, upper=flag)


def _cholesky_inverse(lib, x, n, flag, flag2):
    return lib.cholesky_inverse(lib.linalg.cholesky(_hermitian_pd(lib, x, n), upper=flag),
                                upper=flag)


def _ormqr(lib, x, y, n, flag, flag2):
    """Q (from geqrf's reflectors) times a right-hand side: |.| is free of LAPACK's signs."""
    a, tau = lib.geqrf(_shifted(lib, x, n).detach())
    rhs = _rhs_matrix(x, y, n)
    return lib.ormqr(a, tau, rhs if flag else rhs.mT, left=flag, transpose=flag2)


def _ldl_solve(lib, x, y, n, flag, flag2):
    ld, pivots = lib.linalg.ldl_factor(_hermitian_pd(lib, x, n).detach(), hermitian=flag)
    return lib.linalg.ldl_solve(ld, pivots, _rhs_matrix(x, y, n).detach(), hermitian=flag)


def _conv_params(draw, shapes):
    if not _nonempty(shapes):
        return None
    d = draw.integer(1, 2)
    return {"shape": _layout(shapes[0], d, draw.choice((1, 2))), "kernel": draw.integer(1, 2),
            "stride": draw.integer(1, 2), "padding": draw.integer(0, 1),
            "transposed": draw.boolean(), "bias": draw.boolean()}


def _convolution(lib, x, y, shape, kernel, stride, padding, transposed, bias):
    image = _real(x).reshape(shape)
    channels, d = shape[1], len(shape) - 2
    weight = _tiled(y, (channels, 1) + (kernel,) * d).to(image.dtype)
    b = _tiled(y, (1,)).to(image.dtype) if bias else None
    return lib.convolution(image, weight, b, (stride,) * d, (padding,) * d, (1,) * d,
                           transposed, (0,) * d, 1)


def _norm_params(draw, shapes):
    return {"kind": draw.choice(("native_layer_norm", "layer_norm", "native_batch_norm",
                                 "batch_norm", "group_norm", "native_group_norm",
                                 "instance_norm", "rms_norm")),
            "affine": draw.boolean(), "eps": draw.choice((1e-5, 0.1))}


def _aten_norm(lib, x, y, kind, affine, eps):
    """ATen's normalization spellings on x as (N, C, L) with C = 1 (or its last dim)."""
    t = _real(x).reshape(1, 1, -1) if x.ndim < 2 else _real(x).reshape(x.shape[0], 1, -1)
    c = t.shape[1]
    w = _tiled(y, (c,)).to(t.dtype) if affine and y.numel() else None
    b = (w * 0.5 - 1) if w is not None else None
    if kind in ("native_layer_norm", "layer_norm", "rms_norm"):
        shape, w = t.shape[-1:], _tiled(y, t.shape[-1:]).to(t.dtype) if w is not None else None
        if kind == "rms_norm":
            return lib.rms_norm(t, shape, w, eps)
        out = getattr(lib, kind)(t, shape, w, None if w is None else w * 0.5 - 1, eps)
        return out[0] if kind == "native_layer_norm" else out
    if kind in ("native_batch_norm", "batch_norm"):
        args = (t, w, b, None, None, True, 0.1, eps)
        return lib.native_batch_norm(*args)[0] if kind == "native_batch_norm" else \
            lib.batch_norm(*args, False)
    if kind == "group_norm":
        return lib.group_norm(t, 1, w, b, eps)
    if kind == "native_group_norm":
        return lib.native_group_norm(t, w, b, t.shape[0], c, t.shape[-1], 1, eps)[0]
    return lib.instance_norm(t, w, b, None, None, True, 0.1, eps, False)


def _loss_params(draw, shapes):
    return {"kind": draw.choice(("bce_logits", "cosine_embedding", "hinge_embedding", "kl_div",
                                 "margin_ranking", "poisson_nll", "triplet_margin")),
            "reduction": draw.choice((0, 1, 2)), "flag": draw.boolean()}


def _aten_loss(lib, x, y, kind, reduction, flag):
    """ATen's loss spellings, the reduction an int (0 none, 1 mean, 2 sum)."""
    a = _real(x)
    b = _tiled(y, tuple(a.shape)).to(a.dtype) if y.numel() else a * 0.5
    sign = lib.where(b > 0, 1.0, -1.0).to(a.dtype)
    if kind == "bce_logits":
        return lib.binary_cross_entropy_with_logits(a, b.sigmoid(), None, None, reduction)
    if kind == "cosine_embedding":
        flat = a.reshape(1, -1)
        return lib.cosine_embedding_loss(flat, b.reshape(1, -1), sign.reshape(-1)[:1], 0.1,
                                         reduction)
    if kind == "hinge_embedding":
        return lib.hinge_embedding_loss(a, sign, 1.0, reduction)
    if kind == "kl_div":
        return lib.kl_div(a, b if flag else b.sigmoid(), reduction, log_target=flag)
    if kind == "margin_ranking":
        return lib.margin_ranking_loss(a, b, sign, 0.2, reduction)
    if kind == "poisson_nll":
        return lib.poisson_nll_loss(a, b.abs(), flag, not flag, 1e-8, reduction)
    return lib.triplet_margin_loss(a.reshape(1, -1), b.reshape(1, -1), (a - b).reshape(1, -1),
                                   1.0, 2.0, 1e-6, flag, reduction)


def _pad_params(draw, shapes):
    nd = len(shapes[0])
    return {"pad": tuple(draw.integer(-1, 2) for _ in range(2 * draw.integer(0, min(nd, 2)))),
            "value": draw.choice((0, -1.5, math.inf))}


FUZZB_OPS: dict[str, OpSpec] = {
    "fb_acosh": OpSpec(1, lambda lib, x, shift: lib.acosh(x + shift), _shift),
    "fb_asinh": OpSpec(1, lambda lib, x: x.asinh()),
    "fb_atanh": OpSpec(1, lambda lib, x: lib.atanh(x)),
    "fb_acosh_": OpSpec(1, lambda lib, x: x.acosh_(), inplace=True),
    "fb_asinh_": OpSpec(1, lambda lib, x: x.asinh_(), inplace=True),
    "fb_atanh_": OpSpec(1, lambda lib, x: lib.atanh_(x), inplace=True),
    "fb_conj_physical": OpSpec(1, lambda lib, x: lib.conj_physical(x)),
    "fb_conj_physical_": OpSpec(1, lambda lib, x: x.conj_physical_(), inplace=True),
    "fb_compare_": OpSpec(2, _compare_, _compare_params, inplace=True),
    "fb_logical_": OpSpec(2, _logical_, _logical_params, inplace=True),
    "fb_cumsum_": OpSpec(1, lambda lib, x, dim: x.cumsum_(dim), _dim, inplace=True),
    "fb_tril_": OpSpec(1, lambda lib, x, k: x.tril_(k), _offset, inplace=True),
    "fb_triu_": OpSpec(1, lambda lib, x, k: x.triu_(k), _offset, inplace=True),
    "fb_fill_diagonal_": OpSpec(1, lambda lib, x, value, wrap: x.fill_diagonal_(value, wrap),
                                _fill_diagonal, inplace=True),
    "fb_squeeze_": OpSpec(1, lambda lib, x, dim: x.squeeze_() if dim is None else
                          x.squeeze_(dim), _squeeze_params, inplace=True),
    "fb_unsqueeze_": OpSpec(1, lambda lib, x, dim: x.unsqueeze_(dim), _unsqueeze_params,
                            inplace=True),
    "fb_t_": OpSpec(1, lambda lib, x: x.t_(), inplace=True),
    "fb_transpose_": OpSpec(1, lambda lib, x, name, d0, d1: getattr(x, name)(d0, d1),
                            _transpose_params, inplace=True),
    "fb_as_strided": OpSpec(1, _strided_fn("as_strided"), _geometry_params),
    "fb_as_strided_copy": OpSpec(1, _strided_fn("as_strided_copy"), _geometry_params),
    "fb_as_strided_": OpSpec(1, _strided_fn("as_strided_"), _geometry_params, inplace=True),
    "fb_as_strided_scatter": OpSpec(2, _scatter_fn, _geometry_params),
    "fb_unfold": OpSpec(1, lambda lib, x, dim, size, step: x.unfold(dim, size, step),
                        _unfold_params),
    "fb_unfold_copy": OpSpec(1, lambda lib, x, dim, size, step: lib.unfold_copy(
        x, dim, size, step), _unfold_params),
    "fb_view_copies": OpSpec(1, _copy_fn, _copy_params),
    "fb_svd_legacy": OpSpec(1, _legacy_svd, _legacy_params),
    "fb_qr_legacy": OpSpec(1, lambda lib, x, n, flag, flag2: _matmul(
        *lib.qr(_shifted(lib, x, n), some=flag)), _legacy_params),
    "fb_cholesky_legacy": OpSpec(1, lambda lib, x, n, flag, flag2: lib.cholesky(
        _hermitian_pd(lib, x, n), upper=flag), _legacy_params),
    "fb_triangular_solve": OpSpec(2, _triangular_solve, _legacy_params),
    "fb_lu_legacy": OpSpec(1, lambda lib, x, n, flag, flag2: lib.lu(_shifted(lib, x, n))[0],
                           _legacy_params),
    "fb_lu_solve_legacy": OpSpec(2, _lu_solve, _legacy_params),
    "fb_pinverse": OpSpec(1, lambda lib, x, n, flag, flag2: lib.pinverse(
        _shifted(lib, x, n)), _legacy_params),
    "fb_cholesky_solve": OpSpec(2, _cholesky_solve, _legacy_params),
    "fb_cholesky_inverse": OpSpec(1, _cholesky_inverse, _legacy_params),
    "fb_ormqr": OpSpec(2, _ormqr, _legacy_params),
    "fb_ldl_solve": OpSpec(2, _ldl_solve, _legacy_params),
    "fb_convolution": OpSpec(2, _convolution, _conv_params),
    "fb_native_dropout": OpSpec(1, lambda lib, x, p: lib.native_dropout(x, p, True)[0],
                                lambda draw, shapes: {"p": draw.choice((0.0, 1.0))}),
    "fb_aten_norm": OpSpec(2, _aten_norm, _norm_params),
    "fb_aten_loss": OpSpec(2, _aten_loss, _loss_params),
    "fb_constant_pad_nd": OpSpec(1, lambda lib, x, pad, value: lib.constant_pad_nd(
        x, pad, value), _pad_params),
    "fb_embedding": OpSpec(1, lambda lib, x: lib.embedding(
        _real(x).reshape(x.shape[0], -1) if x.ndim else _real(x).reshape(1, 1),
        lib.tensor([[0, x.shape[0] - 1 if x.ndim else 0]])) if x.numel() else x),
}
BREADTH_OPS.update(FUZZB_OPS)

# ops added after tests pinned breadth seeds: only the strided_breadth class draws them (in
# BREADTH_OPS they would move every breadth seed to another program)
LATER_BREADTH_OPS: dict[str, OpSpec] = {
    "s_pdist": OpSpec(1, lambda lib, x, p: lib.nn.functional.pdist(_rows(x), p), _p_norm),
}
