"""torch.utils.data._utils: ``collate`` (its ``default_collate_fn_map`` is what users extend)."""
from gradkit.utils.data._utils import collate  # noqa: F401
