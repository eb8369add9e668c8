"""torch's names of saved inputs where its op's second input is not ``other`` (the default):
``_saved_index`` of ``take``, ``_saved_mask`` of ``masked_fill``, ``_saved_target`` of the
losses, ``_saved_dim`` of ``gather`` (found by ``tests/fuzz/saved_attrs_scan.py --by-node``).
Most are the op's own input names after ``self``."""
from __future__ import annotations

from gradkit.autograd.saved_names import declare_saved_names
from gradkit.ops.activations_gated import _glu_backward, _prelu_kernel
from gradkit.ops.complex_build import complex_
from gradkit.ops.distances import _cdist
from gradkit.ops.embedding import _embedding
from gradkit.ops.index_ops import (
    index_add, index_copy, index_fill, masked_scatter, masked_select, put, take)
from gradkit.ops.indexing import gather, index_select, scatter, scatter_add
from gradkit.ops.linalg_lu import _lu_solve
from gradkit.ops.linalg_pinv import _lstsq
from gradkit.ops.losses import _bce_logits, _nll
from gradkit.ops.losses_margin import _multi_margin, _soft_margin
from gradkit.ops.losses_more import _binary_cross_entropy
from gradkit.ops.masked_fill import masked_fill
from gradkit.ops.matrix_products import addr
from gradkit.ops.padding import pad
from gradkit.ops.scatter_reduce import _scatter_reduce
from gradkit.ops.unpooling import max_unpool_op

_NAMED = {_embedding: ("indices", "weight"), _cdist: ("x1", "x2"),
          complex_: ("real", "imag"), _lstsq: ("self", "b"),
          _lu_solve: ("LU", "pivots", "B"), addr: ("self", "vec1", "vec2"),
          _glu_backward: ("grad_output", "self")}
for _op in (gather, index_add, index_copy, index_fill, index_select, masked_fill, masked_scatter,
            masked_select, scatter, scatter_add, _scatter_reduce, _binary_cross_entropy,
            _bce_logits, _multi_margin, _soft_margin, _nll, take, put, _prelu_kernel,
            max_unpool_op, *_NAMED):
    # x is torch's self
    _op.torch_input_names = _NAMED.get(_op) or ("self", *_op.input_names[1:])
    declare_saved_names(_op)
pad.torch_saved = {"padding": lambda node: tuple(node.params["pad"])}  # reflect/replicate
declare_saved_names(pad)
