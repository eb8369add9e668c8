"""Bilinear, Embedding and EmbeddingBag layers (torch's parameters, initialisation and repr)."""
from __future__ import annotations

import math

from gradkit import creation
from gradkit.autograd.grad_mode import no_grad
from gradkit.nn import functional as F  # noqa: N812 - torch convention
from gradkit.nn import init
from gradkit.nn.module import Module
from gradkit.nn.parameter import Parameter


class Bilinear(Module):
    """y = x₁ᵀ A x₂ + b with weight (out, in1, in2), all U(±1/√in1_features).

    >>> gradkit.nn.Bilinear(2, 3, 4)(gradkit.ones(5, 2), gradkit.ones(5, 3)).shape
    gradkit.Size([5, 4])
    """

    def __init__(self, in1_features: int, in2_features: int, out_features: int,
                 bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        self.in1_features, self.in2_features = in1_features, in2_features
        self.out_features = out_features
        self.weight = Parameter(creation.empty((out_features, in1_features, in2_features),
                                               device=device, dtype=dtype))
        self.register_parameter(  # a None parameter when absent, as torch
            "bias", Parameter(creation.empty(out_features, device=device, dtype=dtype))
            if bias else None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.in1_features <= 0:  # the bound below would divide by zero
            raise ValueError(
                f"in1_features must be > 0, but got (in1_features={self.in1_features})")
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


def _lookup_table(module: Module, num_embeddings: int, embedding_dim: int, padding_idx,
                  max_norm, norm_type: float, scale_grad_by_freq: bool, sparse: bool, _weight,
                  requires_grad: bool, device, dtype, padding_message: str) -> None:
    """What Embedding and EmbeddingBag share: the options, the padding row (a negative one
    counts from the end) and the weight, given (of torch's shape) or N(0, 1)."""
    module.num_embeddings, module.embedding_dim = num_embeddings, embedding_dim
    module.max_norm, module.norm_type = max_norm, norm_type
    module.scale_grad_by_freq, module.sparse = scale_grad_by_freq, sparse
    if padding_idx is not None:
        if not -num_embeddings <= padding_idx < num_embeddings:
            raise AssertionError(padding_message)
        padding_idx %= num_embeddings
    module.padding_idx = padding_idx
    if _weight is None:
        module.weight = Parameter(creation.empty((num_embeddings, embedding_dim),
                                                 device=device, dtype=dtype), requires_grad)
        module.reset_parameters()
    else:
        if list(_weight.shape) != [num_embeddings, embedding_dim]:
            raise AssertionError("Shape of weight does not match num_embeddings and "
                                 "embedding_dim")
        module.weight = Parameter(_weight, requires_grad)


def _pretrained_shape(embeddings) -> tuple[int, int]:
    if embeddings.dim() != 2:
        raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
    return tuple(embeddings.shape)


def _options_repr(module: Module) -> str:
    """torch's repr of the options both lookup tables share (after the sizes)."""
    text = ""
    if module.max_norm is not None:
        text += f", max_norm={module.max_norm}"
    if module.norm_type != 2:
        text += f", norm_type={module.norm_type}"
    if module.scale_grad_by_freq is not False:
        text += f", scale_grad_by_freq={module.scale_grad_by_freq}"
    return text


class Embedding(Module):
    """A lookup table of ``num_embeddings`` vectors, initialised N(0, 1) (the padding row 0).

    >>> gradkit.nn.Embedding(10, 3)(gradkit.tensor([[1, 2], [4, 9]])).shape
    gradkit.Size([2, 2, 3])
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0,
                 scale_grad_by_freq: bool = False, sparse: bool = False, _weight=None,
                 _freeze: bool = False, device=None, dtype=None) -> None:
        super().__init__()
        _lookup_table(self, num_embeddings, embedding_dim, padding_idx, max_norm, norm_type,
                      scale_grad_by_freq, sparse, _weight, not _freeze, device, dtype,
                      "Padding_idx must be within num_embeddings")

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def extra_repr(self) -> str:
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            text += f", padding_idx={self.padding_idx}"
        return text + _options_repr(self) + (", sparse=True" if self.sparse is not False else "")

    @classmethod
    def from_pretrained(cls, embeddings, freeze: bool = True, padding_idx: int | None = None,
                        max_norm: float | None = None, norm_type: float = 2.0,
                        scale_grad_by_freq: bool = False, sparse: bool = False) -> Embedding:
        """An Embedding whose weight is ``embeddings`` (2-D), fixed unless ``freeze=False``."""
        rows, cols = _pretrained_shape(embeddings)
        return cls(rows, cols, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse,
                   _weight=embeddings, _freeze=freeze)


class EmbeddingBag(Module):
    """Sums, means or maxima of bags of embeddings (weight N(0, 1), as torch).

    >>> bag = gradkit.nn.EmbeddingBag(10, 3, mode="sum")
    >>> bag(gradkit.tensor([1, 2, 4, 5]), gradkit.tensor([0, 2])).shape
    gradkit.Size([2, 3])
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm: float | None = None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                 sparse: bool = False, _weight=None, include_last_offset: bool = False,
                 padding_idx: int | None = None, device=None, dtype=None) -> None:
        super().__init__()
        _lookup_table(self, num_embeddings, embedding_dim, padding_idx, max_norm, norm_type,
                      scale_grad_by_freq, sparse, _weight, True, device, dtype,
                      "padding_idx must be within num_embeddings")
        self.mode, self.include_last_offset = mode, include_last_offset

    reset_parameters = Embedding.reset_parameters

    def forward(self, input, offsets=None, per_sample_weights=None):
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                               self.scale_grad_by_freq, self.mode, self.sparse,
                               per_sample_weights, self.include_last_offset, self.padding_idx)

    def extra_repr(self) -> str:
        text = f"{self.num_embeddings}, {self.embedding_dim}{_options_repr(self)}"
        text += f", mode={self.mode!r}"
        return text if self.padding_idx is None else text + f", padding_idx={self.padding_idx}"

    @classmethod
    def from_pretrained(cls, embeddings, freeze: bool = True, max_norm: float | None = None,
                        norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        mode: str = "mean", sparse: bool = False,
                        include_last_offset: bool = False,
                        padding_idx: int | None = None) -> EmbeddingBag:
        """An EmbeddingBag whose weight is ``embeddings`` (2-D), fixed unless
        ``freeze=False``."""
        rows, cols = _pretrained_shape(embeddings)
        bag = cls(rows, cols, max_norm, norm_type, scale_grad_by_freq, mode, sparse,
                  _weight=embeddings, include_last_offset=include_last_offset,
                  padding_idx=padding_idx)
        bag.weight.requires_grad = not freeze
        return bag
