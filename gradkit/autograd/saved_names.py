"""``node._saved_<name>``: what a built-in op's node saved, under torch's names.

The names come from the op's declaration (``save=("x", "y", "result", "x.shape")``) plus
torch's spellings: ``self``/``other`` for the first inputs (or the op's
``torch_input_names``), ``self_sym_sizes`` for a saved shape, the op's parameters (``dim``,
``keepdim``), and the op's ``torch_saved`` (name -> ``fn(node)``: a value in torch's form,
such as a one-dim reduction's ``dim`` as the tuple torch's ``int[]`` gives). They are
properties on Node, declared once per name.
"""
from __future__ import annotations

import numpy as np

from gradkit._tensor import Tensor
from gradkit.autograd.graph import FREED_MESSAGE, Node, SavedTensor

_WRAPPED_DTYPES = {bool: np.bool_, int: np.int64, float: np.float64, complex: np.complex128}
_TORCH_INPUT_NAMES = ("self", "other")  # torch's names of the first two inputs of most ops
_TORCH_ATTR_NAMES = {"shape": ("shape", "sym_sizes")}  # x.shape is torch's _saved_self_sym_sizes
# parameters torch keeps as an int: a loss's reduction is at::Reduction's enum
_TORCH_PARAMETER_FORMS = {"reduction": {"none": 0, "mean": 1, "sum": 2}}


def _saved_keys(op) -> dict:
    """``_saved_<key>`` names of an op's save entries -> entry index (torch's names:
    ``self``, ``other`` (or the op's ``torch_input_names``) for inputs, ``result``,
    ``<input>_<attr>`` for metadata, or the op's ``torch_result_names`` for results), and of its
    parameters (``dim``, ``keepdim``; not the ``_name`` ones, which torch has not) -> None."""
    keys = dict.fromkeys(name for name in getattr(op, "param_names", ())
                         if not name.startswith("_"))  # "_name": gradkit's own switch
    names = getattr(op, "input_names", ())
    torch_names = getattr(op, "torch_input_names", _TORCH_INPUT_NAMES)
    result_names = getattr(op, "torch_result_names", ())  # frexp's (mantissa, exponent)
    for entry_index, (kind, index, attr) in enumerate(getattr(op, "save_spec", ())):
        base = (names[index] if kind == "input" else
                "inputs" if kind == "inputs" else "result" + (str(index) if index else ""))
        aliases = {base}
        if kind == "input" and index < len(torch_names):
            aliases.add(torch_names[index])
        if kind == "result" and index < len(result_names):
            aliases.add(result_names[index])
        for alias in aliases:
            for attr_alias in _TORCH_ATTR_NAMES.get(attr, (attr,)):
                keys[alias + ("_" + attr_alias if attr_alias else "")] = entry_index
    keys.update(getattr(op, "torch_saved", {}))  # name -> fn(node): torch's form of a value
    return keys


def _saved_attribute(node: Node, key: str):
    """``node._saved_<key>``: what the node's op saved under that name, or a parameter."""
    keys = _saved_keys(node.op)
    if key not in keys:
        raise AttributeError(f"'{node.name()}' object has no attribute '_saved_{key}'")
    entry_index = keys[key]
    if entry_index is None:  # a parameter: plain values stay readable after backward
        value = (node.params or {}).get(key)
        return _TORCH_PARAMETER_FORMS.get(key, {}).get(value, value)
    if callable(entry_index):  # the op's torch_saved: a value in torch's form
        return entry_index(node)
    return saved_entry(node, entry_index)


def saved_entry(node: Node, entry_index: int):
    """Entry ``entry_index`` of what the node saved, unpacked (None where the gradients
    the node computes do not read it); raises torch's error once backward freed it."""
    if node.saved is None:
        raise RuntimeError(FREED_MESSAGE)
    value = node.saved[entry_index]
    if type(value) in _WRAPPED_DTYPES and getattr(node.op, "number_edges", False):
        # add, mul, div, where made the Python number a tensor ("wrapped number"): torch's
        # node saved that 0-d tensor
        return Tensor._make(np.asarray(value, dtype=_WRAPPED_DTYPES[type(value)]))
    return value.unpack(node, True) if type(value) is SavedTensor else value


def declare_saved_names(op) -> None:
    """Make ``node._saved_<key>`` readable for the save entries of ``op`` (torch's
    introspection). Properties on Node, not a ``__getattr__``: with one, CPython 3.11 cannot
    specialise any attribute read of a Node, and the engine reads them all the time."""
    for key in _saved_keys(op):
        name = "_saved_" + key
        if name not in Node.__dict__:
            setattr(Node, name, property(lambda node, key=key: _saved_attribute(node, key),
                                         doc=f"What the node's op saved as ``{key}``."))
