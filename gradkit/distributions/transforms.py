"""``gradkit.distributions.transforms``: the transforms of torch.distributions.transforms
that gradkit has (transform_base.py, transform_kinds.py)."""
from gradkit.distributions.transform_base import (  # noqa: F401
    ComposeTransform, IndependentTransform, Transform, identity_transform)
from gradkit.distributions.transform_kinds import (  # noqa: F401
    AbsTransform, AffineTransform, ExpTransform, PowerTransform, SigmoidTransform,
    SoftmaxTransform, SoftplusTransform, TanhTransform)

__all__ = ["AbsTransform", "AffineTransform", "ComposeTransform", "ExpTransform",
           "IndependentTransform", "PowerTransform", "SigmoidTransform", "SoftmaxTransform",
           "SoftplusTransform", "TanhTransform", "Transform", "identity_transform"]
