"""gradkit.utils: activation checkpointing (``gradkit.utils.checkpoint``), data loading
(``gradkit.utils.data``) and ``as_torch``."""
from gradkit._not_implemented import module_getattr
from gradkit.utils import checkpoint  # noqa: F401 - torch.utils.checkpoint without an import
from gradkit.utils import data  # noqa: F401 - torch.utils.data without an import

__getattr__ = module_getattr(__name__)
