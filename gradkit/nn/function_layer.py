"""The shell of a layer over one nn.functional function and the settings it was built with."""
from __future__ import annotations

from gradkit.nn.module import Module


class FunctionLayer(Module):
    """``function(input, *settings)``: the settings are attributes, named in ``settings``,
    and printed as torch's layers print them (``name=value``; ``inplace`` only when True)."""

    settings: tuple = ()

    def forward(self, input):
        return type(self).function(input, *(getattr(self, name) for name in self.settings))

    def extra_repr(self) -> str:
        shown = [f"{name}={getattr(self, name)}" for name in self.settings if name != "inplace"]
        if getattr(self, "inplace", False):
            shown.append("inplace=True")
        return ", ".join(shown)
