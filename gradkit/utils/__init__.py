"""gradkit.utils: activation checkpointing (``gradkit.utils.checkpoint``), data loading
(``gradkit.utils.data``), ``swap_tensors`` and ``as_torch``."""
from gradkit._not_implemented import module_getattr
from gradkit.utils import checkpoint  # noqa: F401 - torch.utils.checkpoint without an import
from gradkit.utils import data  # noqa: F401 - torch.utils.data without an import
from gradkit.utils._swap import swap_tensors  # noqa: F401 - torch.utils.swap_tensors

__getattr__ = module_getattr(__name__)
