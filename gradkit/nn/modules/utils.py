"""``gradkit.nn.modules.utils``: ``consume_prefix_in_state_dict_if_present``, the helper that
lets a plain model load a state dict saved from a wrapped one (torch's DDP ``module.``)."""
from __future__ import annotations

__all__ = ["consume_prefix_in_state_dict_if_present"]


def consume_prefix_in_state_dict_if_present(state_dict: dict, prefix: str) -> None:
    """Strip ``prefix`` from the keys of ``state_dict`` in place (a renamed key moves to the
    end, as torch's), and from its ``_metadata`` keys, where ``""`` (the wrapper's own) stays
    and the wrapped model's key is ``prefix`` without its dots."""
    for key in [k for k in state_dict if k.startswith(prefix)]:
        state_dict[key[len(prefix):]] = state_dict.pop(key)
    metadata = getattr(state_dict, "_metadata", None)
    if metadata is None:
        return
    bare = prefix.replace(".", "")
    for key in [k for k in metadata if k and (k == bare or k.startswith(prefix))]:
        metadata[key[len(prefix):]] = metadata.pop(key)
