"""gradkit.optim.lr_scheduler: torch.optim.lr_scheduler's schedules, step for step."""
from gradkit._not_implemented import module_getattr
from gradkit.optim.lr_scheduler._base import (
    LambdaLR,
    LRScheduler,
    MultiplicativeLR,
    MultiStepLR,
    StepLR,
    _LRScheduler,  # noqa: F401 - torch's deprecated alias, importable as there
)
from gradkit.optim.lr_scheduler._factors import ConstantLR, ExponentialLR, LinearLR, PolynomialLR
from gradkit.optim.lr_scheduler._composite import ChainedScheduler, ReduceLROnPlateau, SequentialLR
from gradkit.optim.lr_scheduler._cyclic import (
    CosineAnnealingLR,
    CosineAnnealingWarmRestarts,
    CyclicLR,
    OneCycleLR,
)

__all__ = ["LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR",
           "ExponentialLR", "SequentialLR", "CosineAnnealingLR", "ChainedScheduler",
           "ReduceLROnPlateau", "CyclicLR", "CosineAnnealingWarmRestarts", "OneCycleLR",
           "PolynomialLR", "LRScheduler"]

__getattr__ = module_getattr(__name__)  # names torch features gradkit lacks
