"""``node._raw_saved_<name>``: a saved tensor itself (torch's ``torch._C._autograd.SavedTensor``),
whose ``register_hooks(pack, unpack)`` packs it now and unpacks it at each later use."""
from __future__ import annotations

from gradkit.autograd import graph

FREED_HOOKS = (
    "Calling register_hooks on a saved tensor after it has been freed. Saved intermediate "
    "values of the graph are freed when you call .backward() or autograd.grad(). Specify "
    "retain_graph=True if you need to backward through the graph a second time or if you need "
    "to access saved variables after calling backward.")


class SavedTensor:
    """Save entry ``entry`` of ``node``, as torch's raw saved variable shows it."""

    __slots__ = ("_node", "_entry")

    def __init__(self, node: graph.Node, entry: int) -> None:
        self._node, self._entry = node, entry

    def register_hooks(self, pack_hook, unpack_hook) -> None:
        """``pack_hook(tensor)`` now; ``unpack_hook(packed)`` gives the tensor at each use
        (backward, ``_saved_<name>``)."""
        node = self._node
        held = None if node.saved is None else node.saved[self._entry]
        refuse_hooks(pack_hook, unpack_hook, node.saved is None, held is None,
                     held is not None and held.unpack_hook is not None)
        tensor = held.unpack(node, True)
        held.grad_edge = graph._history_edge(tensor, held.output_nr >= 0)
        held.packed = pack_hook(tensor)
        held.unpack_hook = unpack_hook
        held.tensor = held.data = None  # the pack holds it now, as under saved_tensors_hooks


def refuse_hooks(pack_hook, unpack_hook, freed: bool, none: bool, set_before: bool) -> None:
    """torch's refusals of ``register_hooks``, in its order: not two functions, a saved tensor
    freed by backward, one of value None, one whose hooks were set before."""
    if not (callable(pack_hook) and callable(unpack_hook)):
        raise TypeError("register_hooks(): incompatible function arguments")
    if freed:
        raise RuntimeError(FREED_HOOKS)
    if none:
        raise RuntimeError("Calling register_hooks on a saved tensor with value None is "
                           "forbidden")
    if set_before:
        raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have already "
                           "been set. Hint: only one pair of hooks is allowed at a time.")
