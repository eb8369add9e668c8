"""``gradkit.nn.modules.module``: ``Module`` and the global module hooks, as
``torch.nn.modules.module`` has them."""
from gradkit.nn.module import Module
from gradkit.nn.module_global_hooks import (
    register_module_backward_hook, register_module_buffer_registration_hook,
    register_module_forward_hook, register_module_forward_pre_hook,
    register_module_full_backward_hook, register_module_full_backward_pre_hook,
    register_module_module_registration_hook, register_module_parameter_registration_hook)

__all__ = ["Module", "register_module_backward_hook", "register_module_buffer_registration_hook",
           "register_module_forward_hook", "register_module_forward_pre_hook",
           "register_module_full_backward_hook", "register_module_full_backward_pre_hook",
           "register_module_module_registration_hook",
           "register_module_parameter_registration_hook"]
