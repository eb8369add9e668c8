"""``gradkit.nn.modules``: where torch keeps ``module`` (the Module class and its global
hooks), for code that spells ``nn.modules.module.register_module_forward_hook``."""
from gradkit.nn.modules import module

__all__ = ["module"]
