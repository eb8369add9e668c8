"""Loss modules (``criterion = nn.CrossEntropyLoss()``), thin over nn.functional."""
from __future__ import annotations

from gradkit.nn import functional as F  # noqa: N812 - torch convention
from gradkit.nn.loss_more import _Reduced, _Weighted


class MSELoss(_Reduced):
    """Mean squared error: ``nn.MSELoss()(prediction, target)``."""

    def forward(self, input, target):
        return F.mse_loss(input, target, reduction=self.reduction)


class CrossEntropyLoss(_Weighted):
    """Cross entropy of logits against class indices (or class probabilities).

    >>> nn.CrossEntropyLoss()(gradkit.zeros(2, 4), gradkit.tensor([1, 3])).item()  # ln 4
    1.3862943649291992
    """

    def __init__(self, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean", label_smoothing: float = 0.0) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input, target):
        return F.cross_entropy(input, target, self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class NLLLoss(_Weighted):
    """Negative log likelihood of log-probabilities against class indices."""

    def __init__(self, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input, target):
        return F.nll_loss(input, target, self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class BCEWithLogitsLoss(_Weighted):
    """Binary cross entropy of sigmoid(logits), computed stably."""

    def __init__(self, weight=None, size_average=None, reduce=None, reduction: str = "mean",
                 pos_weight=None) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input, target):
        return F.binary_cross_entropy_with_logits(input, target, self.weight,
                                                  reduction=self.reduction,
                                                  pos_weight=self.pos_weight)
