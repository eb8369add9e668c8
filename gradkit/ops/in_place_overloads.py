"""Where torch's in-place overload of an op differs from the out-of-place one that gradkit's
``inplace`` runs: its checks in their own order, its node's own name."""
from __future__ import annotations

from gradkit.autograd.graph import node_type


def in_place_checks(out_of_place, target, args) -> None:
    """The op's ``check_in_place(target, *args)``, where it has one: the in-place kernel's
    checks, in an order the out-of-place forward does not have (masked_fill_)."""
    check = getattr(out_of_place, "check_in_place", None)
    if check is not None:
        check(target, *args)


def name_in_place_node(out_of_place, node) -> None:
    """Give ``node`` the name of torch's in-place overload (the op's ``in_place_node_names``,
    out-of-place name -> in-place name: fill's FillBackward0/1 -> fill_'s 2/3)."""
    names = getattr(out_of_place, "in_place_node_names", None)
    if names is not None and node is not None:
        node.__class__ = node_type(names.get(type(node).__name__, type(node).__name__))
