"""torch's ``node._saved_<name>`` for ops whose node keeps the value under another name or in
another form: results torch names (``indices``, ``U``/``S``/``Vh``), inputs torch names
otherwise (``mat1``, ``target``), parameters in torch's form (conv's ``stride``, split's
``split_size``) and sizes read from a saved shape (``self_sym_numel``). Every value here is
computed when it is read, from what the node already holds: recording a node costs nothing
more (tests/benchmarks/bench_instructions.py)."""
from __future__ import annotations

import math

from gradkit._tensor import Tensor
from gradkit.backend import get_array_module
from gradkit.autograd.graph import FREED_MESSAGE
from gradkit.autograd.saved_names import declare_saved_names, saved_entry
from gradkit.ops.activations import logsigmoid
from gradkit.ops.activations_gated import _rrelu_in_place, _rrelu_with_noise
from gradkit.ops.clamp import _clamp_tensors
from gradkit.ops.conv import convolution
from gradkit.ops.ctc import ctc_nll, log_alphas
from gradkit.ops.elementwise import square
from gradkit.ops.extremes import _max_dim, _min_dim, amax, amin
from gradkit.ops.index_ops import index_add, index_copy
from gradkit.ops.index_reduce import _index_reduce
from gradkit.ops.index_put import index_put_add
from gradkit.ops.indexing import _index, index_put_key
from gradkit.ops.joining import _split, _split_equal
from gradkit.ops.embedding import _embedding
from gradkit.ops.layers import _layer_norm, addmm as _linear_addmm, mm as _linear_mm
from gradkit.ops.linalg import matmul
from gradkit.ops.linalg_cholesky_solve import _cholesky_solve
from gradkit.ops.linalg_decompositions import _eigh, _qr, _svd
from gradkit.ops.linalg_eig import _eig
from gradkit.ops.linalg_householder import _householder_product
from gradkit.ops.linalg_lu import _lu, _lu_factor_ex, _lu_unpack, lu_factor_ex
from gradkit.ops.linalg_norms import vector_norm
from gradkit.ops.linalg_pinv import _lstsq
from gradkit.ops.linalg_slogdet import _slogdet
from gradkit.ops.linalg_det import det
from gradkit.ops.linalg_solvers import _cholesky, _solve, inv
from gradkit.ops.losses import _mse, _nll
from gradkit.ops.losses_margin import _multilabel_margin, _multilabel_terms, norm_over_a_dim
from gradkit.ops.losses_more import _huber, _smooth_l1
from gradkit.ops.order_statistics import (
    _aminmax, _kthvalue, _median_dim, _mode, _nanmedian_dim)
from gradkit.ops.pooling import max_pool_with_indices
from gradkit.ops.products import addbmm, addmm
from gradkit.ops.reduction import logsumexp, mean, sum as sum_op
from gradkit.ops.running_extremes import _cummax, _cummin
from gradkit.ops.shape import repeat
from gradkit.ops.slicing import _roll
from gradkit.ops.sorting import _sort, _sort_stable, _topk
from gradkit.ops.triangular import _diagonal_copy
from gradkit.ops.unary_breadth import _BOUNDS
from gradkit.ops.statistics import nansum
from gradkit.ops.variance import _std_mean, _var_mean, std, var
from gradkit.ops.view_scatter import _narrow_copy

_DECLARED = []  # every op given a name here: declare_saved_names runs once over them


def _results(op, *names: str) -> None:
    """torch's names of an op's results (``torch_result_names``): result i is ``names[i]``."""
    op.torch_result_names = names
    _DECLARED.append(op)


def _inputs(op, *names: str) -> None:
    """torch's names of an op's inputs, in order."""
    op.torch_input_names = names
    _DECLARED.append(op)


def _forms(op, **forms) -> None:
    """``_saved_<name>`` computed by ``forms[name](node)``: torch's form of a value."""
    op.torch_saved = {**getattr(op, "torch_saved", {}), **forms}
    _DECLARED.append(op)


def _entry(index: int):
    """Save entry ``index``, unpacked (torch's name for it differs between overloads); its
    ``entry`` gives ``_raw_saved_<name>`` the tensor itself."""
    def entry(node):
        return saved_entry(node, index)
    entry.entry = index
    return entry


def _param(name: str, form=lambda value: value):
    return lambda node: form(node.params[name])


def _constant(value):
    """A value torch's node keeps that gradkit's op only has one of (it refuses the others)."""
    return lambda node: value


def _shape(node, index: int, entry: int | None = None) -> tuple | None:
    """The shape of input ``index``: the node's record of it (kept for inputs needing a
    gradient), else that of save entry ``entry`` (a tensor or a saved shape)."""
    meta = node.input_meta[index] if node.input_meta else None
    if meta is not None:
        return tuple(meta[0])
    value = None if entry is None else saved_entry(node, entry)
    return None if value is None else tuple(value) if isinstance(value, tuple) else \
        tuple(value.shape)


def _strides(index: int, input_index: int | None = None):
    """torch's ``*_sym_strides``: the saved input's strides in elements. Read from the saved
    tensor, so None where the node kept none and freed with it (torch keeps the strides);
    with ``input_index``, () for an input needing no gradient (torch keeps none for it)."""
    def strides(node):
        if input_index is not None and node.next_functions[input_index][0] is None:
            return ()
        value = saved_entry(node, index)
        if value is None:
            return None
        return value.stride()
    return strides


def _lu_of_a(part: int, transposed: bool = False):
    """solve's LU (``part`` 0) or pivots (1) of the saved A, as torch's getrf gives them, or
    det's and slogdet's, which torch factors as A.mT (its column-major A): computed when read,
    gradkit's backward works from A itself."""
    def lu_part(node):
        a = saved_entry(node, 0)
        if a is None:
            return None
        real = transposed and not a.is_complex()  # torch factors a complex A itself
        return lu_factor_ex(a.detach().mT if real else a.detach())[part]
    return lu_part


def _as_tensor(value) -> Tensor | None:
    """A raw array an op was given (rrelu's noise, an index key) as torch's tensor."""
    return value if value is None or type(value) is Tensor else Tensor._make(value)


def _unary(node, fn):
    """``fn`` of the saved input 0, outside the graph (None where the node kept none)."""
    x = saved_entry(node, 0)
    return None if x is None else fn(x.detach())


def _size(index: int, entry: int, axis: int):
    return lambda node: _shape(node, index, entry)[axis]


# -- results torch names ------------------------------------------------------------------
for _op in (_max_dim, _min_dim, _sort, _sort_stable, _topk, _kthvalue, _median_dim,
            _nanmedian_dim, _mode, _cummax, _cummin):
    _results(_op, "result", "indices")
_results(_aminmax, "min", "max")
_results(inv, "inverse")
_results(_cholesky, "L")
_results(_qr, "Q", "R")
_results(_svd, "U", "S", "Vh")
_results(_eigh, "eigenvalues", "eigenvectors")
_results(_eig, "eigenvalues", "eigenvectors")
_results(_lstsq, "solution")
_results(_lu, "P", "L", "U")
_results(_lu_factor_ex, "LU", "pivots")
_results(_slogdet, "sign")
_results(_std_mean, "result0")
_results(ctc_nll, "result0")  # each sample's nll; result1 (log_alpha) is computed when read

# -- inputs torch names -----------------------------------------------------------------
for _op in (det, _slogdet, _solve):
    _inputs(_op, "A")
_inputs(_householder_product, "input", "tau")
_inputs(_cholesky_solve, "self", "input2")
_inputs(_clamp_tensors, "self", "min", "max")
_inputs(_layer_norm, "input", "weight", "bias")
_inputs(convolution, "input", "weight", "bias")
_inputs(_linear_addmm, "self", "mat1", "mat2")  # linear's addmm(bias, x, w.t()): addmm's
_inputs(_linear_mm, "self", "mat2")  # linear's mm(x, w.t()) without a bias
_inputs(_index_reduce, "self", "dim", "index", "source")
for (_name, _lower), _ops in _BOUNDS.items():  # clamp_min / clamp_max: a number or a tensor
    _forms(_ops[0], **{_name[6:]: _param("bound")})
    _inputs(_ops[1], "self", _name[6:])
for _op in (_mse, _huber, _smooth_l1):
    _inputs(_op, "self", "target")

# -- values in torch's form, read from what the node holds -----------------------------------
_forms(square, exponent=_constant(2))  # torch's square is pow(x, 2)
# torch's CPU kernel keeps exp(-|x|) for its backward; gradkit's reads x
_forms(logsigmoid, buffer=lambda node: _unary(node, lambda x: x.abs().neg().exp()))
_forms(matmul, vec=_entry(1), tensor=_entry(1),  # mv's and dot's second inputs
       self_sym_strides=_strides(0), mat2_sym_strides=_strides(1))
for _op in (addmm, _linear_addmm):
    _forms(_op, mat1_sym_sizes=lambda node: _shape(node, 1, 0), mat1_sym_strides=_strides(0, 1),
           mat2_sym_sizes=lambda node: _shape(node, 2, 1), mat2_sym_strides=_strides(1, 2))
_forms(_linear_addmm, alpha=_constant(1), beta=_constant(1))
_forms(_linear_mm, self_sym_sizes=lambda node: _shape(node, 0, 0),
       self_sym_strides=_strides(0, 0), mat2_sym_sizes=lambda node: _shape(node, 1, 1),
       mat2_sym_strides=_strides(1, 1))
_forms(mean, self_sym_numel=lambda node: math.prod(saved_entry(node, 0)))
# (S's size from the outputs' metadata, which backward does not free)
_forms(_svd, S_sym_argsize_minus_1=lambda node: node.extras().output_meta[1][0][-1])
_forms(_lu_unpack, LU_data_sym_argsize_minus_1=lambda node: saved_entry(node, 0)[-1],
       LU_data_sym_argsize_minus_2=lambda node: saved_entry(node, 0)[-2])
_forms(addbmm, batch1_sym_argsize_0=_size(1, 0, 0), batch1_sym_argsize_1=_size(1, 0, 1),
       batch2_sym_argsize_2=_size(2, 1, 2))
for _op in (_lu, _lu_factor_ex):
    _forms(_op, pivot=_constant(True))  # gradkit's LU always pivots
# left: gradkit solves left=False as a transposed left solve (another last node)
_forms(_solve, left=_constant(True), LU=_lu_of_a(0), pivots=_lu_of_a(1))
for _op in (det, _slogdet):
    _forms(_op, LU=_lu_of_a(0, transposed=True), pivots=_lu_of_a(1, transposed=True))
_forms(_huber, delta=_param("width"))
_forms(_smooth_l1, beta=_param("width"))
_forms(norm_over_a_dim, p=_param("ord"))
_forms(repeat, repeats=_param("sizes", tuple))
_forms(_roll, shifts=_param("shifts", lambda s: (s,) if type(s) is int else tuple(s)),
       dims=_param("dims", lambda d: () if d is None else (d,) if type(d) is int else tuple(d)))
_forms(_diagonal_copy, dim1=_constant(0), dim2=_constant(1))  # diag of a matrix
_forms(_narrow_copy, length=lambda node: node.params["end"] - node.params["start"])
for _op in (index_add, index_copy):
    _forms(_op, source_dim=lambda node: len(saved_entry(node, 3)))
_forms(_embedding, padding_idx=_param("padding_idx", lambda i: -1 if i is None else i),
       scale_grad_by_freq=_param("scale_grad_by_freq"), sparse=_constant(False),
       weight_sym_argsize_0=lambda node: saved_entry(node, 1)[0])
for _op in (_rrelu_with_noise, _rrelu_in_place):  # the noise is passed as an array
    _forms(_op, noise=lambda node: _as_tensor(saved_entry(node, 1)))


# split's sections: torch's split_size (an int; the first piece's size where gradkit's
# node holds the pieces) or split_sizes (a list)
for _op in (_split, _split_equal):  # (derived_op gives split_copy, unsafe_split these too)
    _forms(_op, split_size=_param("sections", lambda s: s if type(s) is int else s[0]),
           split_sizes=_param("sections", lambda s: s if type(s) is int else tuple(s)))


def _conv_padding(node) -> tuple:
    """torch's symmetric padding per dim: the 'before' of gradkit's (before, after) pairs."""
    return tuple(node.params["padding"][0::2])


_forms(convolution, stride=lambda node: tuple(node.params["geometry"][3]),
       dilation=lambda node: tuple(node.params["geometry"][4]), padding=_conv_padding,
       transposed=_constant(False),
       output_padding=lambda node: (0,) * len(node.params["geometry"][3]),
       # torch's (0,) for no bias; gradkit's node records no bias needing no gradient either
       bias_sym_sizes_opt=lambda node: _shape(node, 2) or (0,))


def _index_key(node) -> tuple | None:
    """torch's ``indices``: one entry per indexed dim, a tensor or None (a full slice); freed
    by backward as torch's SavedVariables."""
    if node.saved is None:
        raise RuntimeError(FREED_MESSAGE)
    key = node.params["key"]
    key = key if isinstance(key, tuple) else (key,)
    return tuple(_as_tensor(k) if hasattr(k, "ndim") else None for k in key)


def _index_reduce_index(node):
    """index_reduce's 1-D index: gradkit's node keeps it broadcast to the source's shape (a
    0-d source's: 0-d)."""
    index, dim = saved_entry(node, 2), saved_entry(node, 1)
    if index is None or index.ndim == 0:
        return None if index is None else index.reshape(1)
    return index[tuple(slice(None) if axis == dim else 0 for axis in range(index.ndim))]


_forms(_index_reduce, index=_index_reduce_index)
# (the input's size stays readable after backward: the node's record of it)
_forms(_index, indices=_index_key, self_sym_sizes=lambda node: _shape(node, 0, 0))
_forms(index_put_key, indices=_index_key, accumulate=_constant(False))
_forms(index_put_add, indices=_index_key, accumulate=_constant(True))
_forms(_layer_norm, normalized_shape=lambda node: tuple(
    _shape(node, 0, 0)[axis] for axis in node.params["axes"]))


def _layer_norm_statistics(node) -> tuple:
    """torch's native_layer_norm results 1 and 2: the mean and 1 / std over the normalized
    dims (gradkit's backward recomputes them from the saved input)."""
    x, axes = saved_entry(node, 0).detach(), node.params["axes"]
    variance = x.var(axes, unbiased=False, keepdim=True)
    return x.mean(axes, keepdim=True), (variance + node.params["eps"]).rsqrt()


_forms(_layer_norm, result1=lambda node: _layer_norm_statistics(node)[0],
       result2=lambda node: _layer_norm_statistics(node)[1])


def _nll_total_weight(node) -> Tensor:
    """nll_loss's total_weight: the summed weights of the targets not ignored."""
    target, weight = saved_entry(node, 1).detach(), saved_entry(node, 2)
    kept = target != node.params["ignore_index"]
    total = kept.sum() if weight is None else \
        (weight.detach()[target.masked_fill(~kept, 0)] * kept).sum()
    xp = get_array_module(target._data)
    return Tensor._make(xp.asarray(total.item(), dtype=node.input_meta[0][1]))


def _multilabel_is_target(node) -> Tensor:
    """multilabel_margin_loss's is_target: 1 at each class listed in the sample's targets."""
    x, target = saved_entry(node, 0)._data, saved_entry(node, 1)._data
    xp = get_array_module(x)
    one_hot = _multilabel_terms(xp, x, target)[2]
    return Tensor._make(one_hot.any(1).reshape(x.shape).astype(x.dtype))


def _pooling_argument(name: str):
    """max pooling's argument ``name`` as torch's node keeps it (the op's node holds its window
    map; the functions pass torch's arguments along)."""
    def argument(node):
        arguments = node.params.get("torch_arguments") or {}
        if name not in arguments:  # adaptive pooling's node; kernel_size of a fractional one
            raise AttributeError(f"'{node.name()}' object has no attribute '_saved_{name}'")
        return arguments[name]
    return argument


_forms(max_pool_with_indices, **{name: _pooling_argument(name) for name in (
    "kernel_size", "stride", "padding", "dilation", "ceil_mode", "output_size")})
def _ctc_log_alpha(node) -> Tensor | None:
    log_probs, targets = saved_entry(node, 0), saved_entry(node, 1)
    if log_probs is None:
        return None
    params = node.params
    xp = get_array_module(log_probs._data)
    return Tensor._make(xp.asarray(log_alphas(
        log_probs._data, targets._data, params["input_lengths"], params["target_lengths"],
        params["blank"])))


_forms(ctc_nll, result1=_ctc_log_alpha)
_forms(_nll, total_weight=_nll_total_weight)
_forms(_multilabel_margin, is_target=_multilabel_is_target)


def _dim_list(node):
    """torch's ``int[]`` dim: a tuple, also for one dim (``sum(x, 1)._saved_dim == (1,)``;
    torch shows a negative dim as 2**64 + dim, a binding wart gradkit does not copy)."""
    dim = node.params.get("dim")
    return (dim,) if type(dim) is int else dim


def _correction(node):
    """The correction torch's var/std node keeps: from ``unbiased`` (1 or 0), else as given,
    else 1 where a dim was given (torch's dim signature defaults ``unbiased=True``)."""
    params = node.params
    if params.get("unbiased") is not None:
        return int(params["unbiased"])
    if params.get("correction") is not None:
        return params["correction"]
    return None if params.get("dim") is None else 1


def _dim_list_or_all(node):
    """amax/amin's ``int[] dim=[]``: () for all dims."""
    return _dim_list(node) or ()


for _op in (sum_op, mean, nansum, logsumexp, vector_norm, norm_over_a_dim):
    _forms(_op, dim=_dim_list)
for _op in (amax, amin):
    _forms(_op, dim=_dim_list_or_all)
for _op in (var, std, _var_mean, _std_mean):
    _forms(_op, dim=_dim_list, correction=_correction)

for _op in dict.fromkeys(_DECLARED):
    declare_saved_names(_op)
