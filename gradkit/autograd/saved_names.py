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
from gradkit.autograd.graph import FREED_ENTRY, FREED_MESSAGE, Node, SavedTensor
from gradkit.autograd.raw_saved import SavedTensor as RawSavedTensor
from gradkit.autograd.saved_hidden import TORCH_HIDDEN

_WRAPPED_DTYPES = {bool: np.bool_, int: np.int64, float: np.float64, complex: np.complex128}
_TORCH_INPUT_NAMES = ("self", "other")  # torch's names of the first two inputs of most ops
_TORCH_ATTR_NAMES = {"shape": ("shape", "sym_sizes")}  # x.shape is torch's _saved_self_sym_sizes
# parameters torch keeps as an int: a loss's reduction is at::Reduction's enum
_TORCH_PARAMETER_FORMS = {"reduction": {"none": 0, "mean": 1, "sum": 2}}
_NONE = frozenset()


def _saved_keys(op, torch_only: bool = False) -> dict:
    """``_saved_<key>`` names of an op's save entries -> entry index (torch's names:
    ``self``, ``other`` (or the op's ``torch_input_names``) for inputs, ``result``,
    ``<input>_<attr>`` for metadata, or the op's ``torch_result_names`` for results), and of its
    parameters (``dim``, ``keepdim``; not the ``_name`` ones, which torch has not) -> None.
    With ``torch_only``, not gradkit's own spellings (``x``, ``x_shape``) of these."""
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
            aliases = {torch_names[index]} | (set() if torch_only else aliases)
        if kind == "result" and index < len(result_names):
            aliases = {result_names[index]} | (set() if torch_only else aliases)
        for alias in aliases:
            attr_aliases = _TORCH_ATTR_NAMES.get(attr, (attr,))
            for attr_alias in attr_aliases[-1:] if torch_only else attr_aliases:
                keys[alias + ("_" + attr_alias if attr_alias else "")] = entry_index
    keys.update(getattr(op, "torch_saved", {}))  # name -> fn(node): torch's form of a value
    return keys


def _hidden(node: Node) -> frozenset:
    """The op's names that torch's node of this class has not (``sum()``'s SumBackward0 keeps
    no ``dim``; no reduction keeps its ``dtype``)."""
    return TORCH_HIDDEN.get(type(node).__name__, _NONE)


def _no_attribute(node: Node, name: str) -> AttributeError:
    return AttributeError(f"'{type(node).__name__}' object has no attribute '{name}'")


def _saved_attribute(node: Node, key: str):
    """``node._saved_<key>``: what the node's op saved under that name, or a parameter."""
    keys = _saved_keys(node.op)
    if key not in keys or key in _hidden(node):
        raise _no_attribute(node, "_saved_" + key)
    entry_index = keys[key]
    if entry_index is None:  # a parameter: plain values stay readable after backward
        value = (node.params or {}).get(key)
        return _TORCH_PARAMETER_FORMS[key][value] if key in _TORCH_PARAMETER_FORMS else value
    if callable(entry_index):  # the op's torch_saved: a value in torch's form
        return entry_index(node)
    return saved_entry(node, entry_index)


def saved_entry(node: Node, entry_index: int):
    """Entry ``entry_index`` of what the node saved, unpacked (None where the gradients
    the node computes do not read it); once backward freed them, a saved size, dtype or int
    is still read (torch frees only its saved tensors), a tensor raises torch's error."""
    saved = node.saved
    if saved is None:
        saved = node._extras and node._extras.kept_meta
        if saved is None and _unsaved(node, entry_index):
            return None
        if saved is None or saved[entry_index] is FREED_ENTRY:
            raise RuntimeError(FREED_MESSAGE)
    value = saved[entry_index]
    if type(value) in _WRAPPED_DTYPES and getattr(node.op, "number_edges", False):
        # add, mul, div, where made the Python number a tensor ("wrapped number"): torch's
        # node saved that 0-d tensor
        return Tensor._make(np.asarray(value, dtype=_WRAPPED_DTYPES[type(value)]))
    return value.unpack(node, True) if type(value) is SavedTensor else value


def _unsaved(node: Node, entry_index: int) -> bool:
    """Whether the node saved nothing in that entry, as no rule that runs reads it (``x * y``
    with only ``x`` needing a gradient saves no ``self``): torch's undefined saved variable,
    None after backward too. Found from the edges, which backward keeps."""
    op = node.op
    if getattr(op, "saves_read", None) is None:
        return False
    edges = node.input_meta if op.saves_for_every_tensor else node._next
    keep = op.save_mask(sum(1 << i for i, edge in enumerate(edges) if edge is not None))
    return bool(keep) and not keep[entry_index]


def _raw_keys(node: Node, torch_only: bool = False) -> dict:
    """``_raw_saved_<key>`` names -> entry index: the save entries that hold a tensor (a
    whole input or result, not a Python number the op took)."""
    op, saved = node.op, node.saved
    spec = getattr(op, "save_spec", ())
    keys = {key: getattr(entry, "entry", entry)  # a torch_saved form naming an entry
            for key, entry in _saved_keys(op, torch_only).items()}
    return {key: entry for key, entry in keys.items()
            if type(entry) is int and spec[entry][0] != "inputs" and not spec[entry][2]
            and (saved is None or saved[entry] is None or type(saved[entry]) is SavedTensor)}


def _raw_attribute(node: Node, key: str) -> RawSavedTensor:
    """``node._raw_saved_<key>``: the saved tensor itself (its hooks can be set)."""
    raw_saved = getattr(node.op, "raw_saved", None)
    if raw_saved is not None and key not in _hidden(node):  # a one_node op's own
        return raw_saved(node, key)
    entry = _raw_keys(node).get(key)
    if entry is None or key in _hidden(node):
        raise _no_attribute(node, "_raw_saved_" + key)
    return RawSavedTensor(node, entry)


def saved_names(node: Node) -> set:
    """The ``_saved_*`` and ``_raw_saved_*`` names of this node (torch's ``dir(grad_fn)``
    shows only them)."""
    hidden = _hidden(node)
    return {"_saved_" + key for key in _saved_keys(node.op, True) if key not in hidden} | \
        {"_raw_saved_" + key for key in getattr(node.op, "raw_names", None) or
         _raw_keys(node, True) if key not in hidden}


def _node_dir(node: Node) -> list:
    """``dir(grad_fn)``: Node's names less the ``_saved_*`` of other ops (the properties are
    declared once on Node for every op)."""
    own = saved_names(node)
    return [name for name in object.__dir__(node)
            if not name.startswith(("_saved_", "_raw_saved_")) or name in own]


Node.__dir__ = _node_dir


def declare_saved_names(op) -> None:
    """Make ``node._saved_<key>`` readable for the save entries of ``op`` (torch's
    introspection). Properties on Node, not a ``__getattr__``: with one, CPython 3.11 cannot
    specialise any attribute read of a Node, and the engine reads them all the time."""
    for key in _saved_keys(op):
        name = "_saved_" + key
        if name not in Node.__dict__:
            setattr(Node, name, property(lambda node, key=key: _saved_attribute(node, key),
                                         doc=f"What the node's op saved as ``{key}``."))
        if "_raw" + name not in Node.__dict__:
            setattr(Node, "_raw" + name, property(
                lambda node, key=key: _raw_attribute(node, key),
                doc=f"The tensor the node's op saved as ``{key}``, itself."))
