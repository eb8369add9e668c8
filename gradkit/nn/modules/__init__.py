"""``gradkit.nn.modules``: where torch keeps ``module`` (the Module class and its global
hooks), for code that spells ``nn.modules.module.register_module_forward_hook``, and ``lazy``
(``nn.modules.lazy.LazyModuleMixin``)."""
from gradkit.nn.modules import lazy, module

__all__ = ["lazy", "module"]
