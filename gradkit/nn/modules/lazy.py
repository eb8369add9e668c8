"""``gradkit.nn.modules.lazy``: where torch keeps ``LazyModuleMixin``."""
from gradkit.nn.lazy import LazyModuleMixin

__all__ = ["LazyModuleMixin"]
