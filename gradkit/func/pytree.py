"""Pytrees for gradkit.func: nested tuples, lists, dicts, OrderedDicts and namedtuples whose
leaves are anything else.

Same flattening order and ``TreeSpec`` text as ``torch.utils._pytree`` for those containers
(dicts in insertion order), so structure errors read as torch's.

>>> leaves, spec = tree_flatten({"w": 1, "b": (2, 3)})
>>> leaves, tree_unflatten([x * 10 for x in leaves], spec)
([1, 2, 3], {'w': 10, 'b': (20, 30)})
"""
from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any


class TreeSpec:
    """The shape of a pytree: a container type, its context (dict keys) and child specs;
    a leaf is ``LEAF`` (shown ``*``)."""

    __slots__ = ("type", "context", "children")

    def __init__(self, kind: type | None, context: list | None, children: list) -> None:
        self.type = kind
        self.context = context
        self.children = children

    def is_leaf(self) -> bool:
        """True for the spec of a leaf."""
        return self.type is None

    @property
    def num_leaves(self) -> int:
        """How many leaves a tree of this spec holds."""
        return 1 if self.is_leaf() else sum(c.num_leaves for c in self.children)

    def __eq__(self, other) -> bool:
        return (isinstance(other, TreeSpec) and self.type is other.type
                and self.context == other.context and self.children == other.children)

    def __hash__(self) -> int:
        return hash((self.type, repr(self.context)))

    def __repr__(self, indent: int = 0) -> str:
        if self.is_leaf():
            return "*"
        text = ""
        if self.children:  # torch's layout: first child inline, the others one per line
            indent += 2
            text = self.children[0].__repr__(indent) + ("," if len(self.children) > 1 else "")
            text += ",".join("\n" + " " * indent + c.__repr__(indent) for c in self.children[1:])
        name = "namedtuple" if _is_namedtuple(self.type) else self.type.__name__
        return f"TreeSpec({name}, {self.context}, [{text}])"


LEAF = TreeSpec(None, None, [])


def _children(tree) -> tuple[type, list | None, list] | None:
    """(container type, context, children) of a container node, None for a leaf."""
    kind = type(tree)
    if kind in (tuple, list):
        return kind, None, list(tree)
    if kind in (dict, OrderedDict):
        return kind, list(tree), list(tree.values())
    if _is_namedtuple(kind):
        return kind, kind, list(tree)
    return None


def _is_namedtuple(kind) -> bool:
    return isinstance(kind, type) and issubclass(kind, tuple) and hasattr(kind, "_fields")


def tree_flatten(tree) -> tuple[list, TreeSpec]:
    """The leaves of ``tree`` (depth first) and its spec."""
    leaves: list = []
    return leaves, _flatten_into(tree, leaves)


def _flatten_into(tree, leaves: list) -> TreeSpec:
    node = _children(tree)
    if node is None:
        leaves.append(tree)
        return LEAF
    kind, context, children = node
    return TreeSpec(kind, context, [_flatten_into(c, leaves) for c in children])


def tree_unflatten(leaves, spec: TreeSpec) -> Any:
    """The pytree of ``spec``'s structure holding ``leaves`` in order."""
    leaves = list(leaves)
    if len(leaves) != spec.num_leaves:
        raise ValueError(f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but the "
                         f"spec refers to a pytree that holds {spec.num_leaves} items ({spec}).")
    return _build(iter(leaves), spec)


def _build(leaves, spec: TreeSpec):
    if spec.is_leaf():
        return next(leaves)
    children = [_build(leaves, c) for c in spec.children]
    if spec.type in (dict, OrderedDict):
        return spec.type(zip(spec.context, children, strict=True))
    return spec.type(*children) if _is_namedtuple(spec.type) else spec.type(children)


def tree_map(fn: Callable, tree) -> Any:
    """``tree`` with every leaf replaced by ``fn(leaf)``."""
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(leaf) for leaf in leaves], spec)


def broadcast_prefix(prefix, tree, spec: TreeSpec | None = None) -> list | None:
    """One entry of ``prefix`` per leaf of ``tree``: a leaf of ``prefix`` stands for the whole
    subtree at its place (vmap's in_dims/out_dims). None when the structures do not match."""
    spec = spec if spec is not None else tree_flatten(tree)[1]
    out: list = []
    return out if _broadcast_into(prefix, spec, out) else None


def _broadcast_into(prefix, spec: TreeSpec, out: list) -> bool:
    node = _children(prefix)
    if node is None:
        out.extend([prefix] * spec.num_leaves)
        return True
    kind, context, children = node
    if spec.is_leaf() or kind is not spec.type or len(children) != len(spec.children):
        return False
    if kind in (dict, OrderedDict) and set(context) != set(spec.context):
        return False
    if kind in (dict, OrderedDict):
        children = [prefix[key] for key in spec.context]
    return all(_broadcast_into(p, s, out) for p, s in zip(children, spec.children, strict=True))


def treespec_pprint(spec: TreeSpec) -> str:
    """``spec`` written as the Python value it describes, leaves as ``*`` (``(*, [*])``)."""
    if spec.is_leaf():
        return "*"
    parts = [treespec_pprint(c) for c in spec.children]
    if spec.type is OrderedDict:
        pairs = zip(spec.context, parts, strict=True)
        return "OrderedDict([" + ", ".join(f"({key!r}, {part})" for key, part in pairs) + "])"
    if _is_namedtuple(spec.type):
        fields = zip(spec.type._fields, parts, strict=True)
        return f"{spec.type.__name__}(" + ", ".join(f"{k}={part}" for k, part in fields) + ")"
    if spec.type is dict:
        pairs = zip(spec.context, parts, strict=True)
        return "{" + ", ".join(f"{key!r}: {part}" for key, part in pairs) + "}"
    if spec.type is tuple:
        return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"
    return "[" + ", ".join(parts) + "]"
