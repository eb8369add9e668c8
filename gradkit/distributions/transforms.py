"""``gradkit.distributions.transforms``: the transforms of torch.distributions.transforms
(transform_base.py, transform_kinds.py, transform_structured.py, transform_cat.py)."""
from gradkit.distributions.transform_base import (  # noqa: F401
    ComposeTransform, IndependentTransform, Transform, identity_transform)
from gradkit.distributions.transform_kinds import (  # noqa: F401
    AbsTransform, AffineTransform, ExpTransform, PowerTransform, SigmoidTransform,
    SoftmaxTransform, SoftplusTransform, TanhTransform)
from gradkit.distributions.transform_cat import CatTransform, StackTransform  # noqa: F401
from gradkit.distributions.transform_structured import (  # noqa: F401
    CorrCholeskyTransform, CumulativeDistributionTransform, LowerCholeskyTransform,
    PositiveDefiniteTransform, ReshapeTransform, StickBreakingTransform)

__all__ = ["AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform",
           "CorrCholeskyTransform", "CumulativeDistributionTransform", "ExpTransform",
           "IndependentTransform", "LowerCholeskyTransform", "PositiveDefiniteTransform",
           "PowerTransform", "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform",
           "SoftplusTransform", "StackTransform", "StickBreakingTransform", "TanhTransform",
           "Transform", "identity_transform"]
