"""gradkit.nn: layers (Modules), Parameter, init and functional, with torch.nn's names."""
from gradkit._not_implemented import module_getattr
from gradkit.nn import functional, init, utils
from gradkit.nn.activation import (
    GELU, Flatten, LogSoftmax, ReLU, Sigmoid, Softmax, Softmin, Tanh)
from gradkit.nn.activation_more import (
    CELU, ELU, GLU, SELU, Hardshrink, Hardsigmoid, Hardswish, Hardtanh, LeakyReLU, LogSigmoid,
    Mish, PReLU, ReLU6, RReLU, SiLU, Softplus, Softshrink, Softsign, Tanhshrink, Threshold)
from gradkit.nn.container import ModuleList, Sequential
from gradkit.nn.layers import Conv2d, Dropout, Embedding, LayerNorm, Linear, MaxPool2d
from gradkit.nn.layers_more import (
    AdaptiveAvgPool2d, AvgPool1d, AvgPool2d, BatchNorm1d, BatchNorm2d, Conv1d, ConvTranspose2d,
    GroupNorm, InstanceNorm2d, MaxPool1d, MaxUnpool1d, MaxUnpool2d, RMSNorm)
from gradkit.nn.loss import BCEWithLogitsLoss, CrossEntropyLoss, MSELoss, NLLLoss
from gradkit.nn.loss_more import (
    BCELoss, CosineEmbeddingLoss, CosineSimilarity, GaussianNLLLoss, HingeEmbeddingLoss,
    HuberLoss, KLDivLoss, L1Loss, MarginRankingLoss, MultiLabelMarginLoss,
    MultiLabelSoftMarginLoss, MultiMarginLoss, PairwiseDistance, PoissonNLLLoss, SmoothL1Loss,
    SoftMarginLoss, TripletMarginLoss, TripletMarginWithDistanceLoss, CTCLoss)
from gradkit.nn.module import Module
from gradkit.nn.parameter import Parameter

__all__ = ["Module", "Parameter", "Sequential", "ModuleList", "Linear", "Conv2d", "Embedding",
           "LayerNorm", "Dropout", "MaxPool2d", "ReLU", "Tanh", "Sigmoid", "GELU", "Flatten",
           "Softmax", "LogSoftmax", "Softmin", "Conv1d", "ConvTranspose2d", "BatchNorm1d",
           "BatchNorm2d", "InstanceNorm2d", "GroupNorm", "RMSNorm", "MaxPool1d", "AvgPool1d",
           "AvgPool2d", "AdaptiveAvgPool2d",
           "MSELoss", "CrossEntropyLoss", "NLLLoss", "BCEWithLogitsLoss", "functional", "init",
           "utils",
           # lane nnact: activations, losses and similarity layers
           "CELU", "ELU", "GLU", "SELU", "Hardshrink", "Hardsigmoid", "Hardswish", "Hardtanh",
           "LeakyReLU", "LogSigmoid", "Mish", "PReLU", "ReLU6", "RReLU", "SiLU", "Softplus",
           "Softshrink", "Softsign", "Tanhshrink", "Threshold", "BCELoss", "CosineEmbeddingLoss",
           "CosineSimilarity", "GaussianNLLLoss", "HingeEmbeddingLoss", "HuberLoss", "KLDivLoss",
           "L1Loss", "MarginRankingLoss", "MultiLabelMarginLoss", "MultiLabelSoftMarginLoss",
           "MultiMarginLoss", "PairwiseDistance", "PoissonNLLLoss", "SmoothL1Loss",
           "SoftMarginLoss", "TripletMarginLoss",
           # lane random
           "CTCLoss", "MaxUnpool1d", "MaxUnpool2d", "TripletMarginWithDistanceLoss"]

__getattr__ = module_getattr(__name__)  # names torch features gradkit lacks
