"""torch.testing: ``assert_close`` (and the deprecated ``assert_allclose``) and ``make_tensor``."""
from gradkit.testing.comparison import assert_allclose, assert_close
from gradkit.testing.creation import make_tensor

__all__ = ["assert_allclose", "assert_close", "make_tensor"]
