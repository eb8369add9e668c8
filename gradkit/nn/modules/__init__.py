"""``gradkit.nn.modules``: where torch keeps ``module`` (the Module class and its global
hooks), for code that spells ``nn.modules.module.register_module_forward_hook``, ``lazy``
(``nn.modules.lazy.LazyModuleMixin``) and ``utils``
(``consume_prefix_in_state_dict_if_present``)."""
from gradkit.nn.modules import lazy, module, utils

__all__ = ["lazy", "module", "utils"]
