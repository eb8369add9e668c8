"""``gradkit.nn.modules``: where torch keeps ``module`` (the Module class and its global
hooks), for code that spells ``nn.modules.module.register_module_forward_hook``, and
``utils`` (``consume_prefix_in_state_dict_if_present``)."""
from gradkit.nn.modules import module, utils

__all__ = ["module", "utils"]
