"""LazyLinear: a Linear whose ``in_features`` is read from its first input (torch.nn's lazy
module), then a plain Linear."""
from __future__ import annotations

from gradkit import creation
from gradkit.autograd.grad_mode import no_grad
from gradkit.nn.layers import Linear


class LazyLinear(Linear):
    """Linear(in_features inferred, out_features). Until the first call the weight has no
    columns (torch's is an UninitializedParameter); the first call sizes it from the input's
    last dim, initializes weight and bias as Linear does (the same Parameter objects, so an
    optimizer made before still holds them) and the module becomes a Linear, as torch's.

    >>> layer = gradkit.nn.LazyLinear(2)
    >>> layer(gradkit.ones(5, 3)).shape, layer
    (gradkit.Size([5, 2]), Linear(in_features=3, out_features=2, bias=True))
    """

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(0, out_features, bias, device, dtype)

    def reset_parameters(self) -> None:
        """Nothing before the weight is sized (no draw from the generator, as torch)."""
        if self.in_features:
            super().reset_parameters()

    def initialize_parameters(self, input) -> None:
        """Size the weight from ``input``'s last dim and initialize it and the bias."""
        self.in_features = input.shape[-1]
        with no_grad():
            self.weight.data = creation.empty(self.out_features, self.in_features,
                                              dtype=self.weight.dtype, device=self.weight.device)
        self.reset_parameters()
        self.__class__ = self.cls_to_become

    def forward(self, x):
        self.initialize_parameters(x)
        return self.forward(x)  # Linear's, now
