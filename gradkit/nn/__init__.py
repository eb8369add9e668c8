"""gradkit.nn: layers (Modules), Parameter, init and functional, with torch.nn's names."""
from gradkit._not_implemented import module_getattr
from gradkit.nn import functional, grad, init, modules, utils
from gradkit.nn.adaptive import AdaptiveLogSoftmaxWithLoss
from gradkit.nn.activation import (
    GELU, Flatten, LogSoftmax, ReLU, Sigmoid, Softmax, Softmin, Tanh)
from gradkit.nn.activation_more import (
    CELU, ELU, GLU, SELU, Hardshrink, Hardsigmoid, Hardswish, Hardtanh, LeakyReLU, LogSigmoid,
    Mish, PReLU, ReLU6, RReLU, SiLU, Softplus, Softshrink, Softsign, Tanhshrink, Threshold)
from gradkit.nn.attention import MultiheadAttention
from gradkit.nn.container import ModuleList, Sequential
from gradkit.nn.container_more import ModuleDict, ParameterDict, ParameterList
from gradkit.nn.layers_bags import Bilinear, Embedding, EmbeddingBag
from gradkit.nn.layers_deprecated import Container, CrossMapLRN2d, NLLLoss2d
from gradkit.nn.layers_lazy import (
    LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d, LazyConv1d, LazyConv2d, LazyConv3d,
    LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d, LazyInstanceNorm1d,
    LazyInstanceNorm2d, LazyInstanceNorm3d, LazyLinear)
from gradkit.nn.layers_nd import (
    AdaptiveMaxPool3d, BatchNorm3d, Conv3d, ConvTranspose1d, ConvTranspose3d,
    FractionalMaxPool2d, FractionalMaxPool3d, InstanceNorm1d, InstanceNorm3d, LPPool3d,
    MaxUnpool3d)
from gradkit.nn.layers_small import (
    AdaptiveAvgPool1d, AdaptiveAvgPool3d, AdaptiveMaxPool1d, AdaptiveMaxPool2d, AvgPool3d,
    ChannelShuffle, CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d, ConstantPad2d,
    ConstantPad3d, Fold, Unfold, AlphaDropout, Dropout1d, Dropout2d, Dropout3d,
    FeatureAlphaDropout,
    Identity, LocalResponseNorm, LPPool1d, LPPool2d, MaxPool3d, PixelShuffle, PixelUnshuffle,
    ReflectionPad1d, ReflectionPad2d, ReflectionPad3d, ReplicationPad1d, ReplicationPad2d,
    ReplicationPad3d, Softmax2d, Unflatten, Upsample, UpsamplingBilinear2d, UpsamplingNearest2d,
    ZeroPad1d, ZeroPad2d, ZeroPad3d)
from gradkit.nn.layers import Conv2d, Dropout, LayerNorm, Linear, MaxPool2d
from gradkit.nn.layers_more import (
    AdaptiveAvgPool2d, AvgPool1d, AvgPool2d, BatchNorm1d, BatchNorm2d, Conv1d, ConvTranspose2d,
    GroupNorm, InstanceNorm2d, MaxPool1d, MaxUnpool1d, MaxUnpool2d, RMSNorm)
from gradkit.nn.loss import (
    BCEWithLogitsLoss, CrossEntropyLoss, LinearCrossEntropyLoss, LinearCrossEntropyOptions, MSELoss,
    NLLLoss)
from gradkit.nn.loss_more import (
    BCELoss, CosineEmbeddingLoss, CosineSimilarity, GaussianNLLLoss, HingeEmbeddingLoss,
    HuberLoss, KLDivLoss, L1Loss, MarginRankingLoss, MultiLabelMarginLoss,
    MultiLabelSoftMarginLoss, MultiMarginLoss, PairwiseDistance, PoissonNLLLoss, SmoothL1Loss,
    SoftMarginLoss, TripletMarginLoss, TripletMarginWithDistanceLoss, CTCLoss)
from gradkit.nn.module import Module
from gradkit.nn.parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter
from gradkit.nn.transformer import (
    Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder,
    TransformerEncoderLayer)
from gradkit.nn.rnn import GRU, LSTM, RNN, RNNBase
from gradkit.nn.rnn_cells import GRUCell, LSTMCell, RNNCell, RNNCellBase

__all__ = ["Module", "Parameter", "Sequential", "ModuleList", "Linear", "Conv2d", "Embedding",
           "LayerNorm", "Dropout", "MaxPool2d", "ReLU", "Tanh", "Sigmoid", "GELU", "Flatten",
           "Softmax", "LogSoftmax", "Softmin", "Conv1d", "ConvTranspose2d", "BatchNorm1d",
           "BatchNorm2d", "InstanceNorm2d", "GroupNorm", "RMSNorm", "MaxPool1d", "AvgPool1d",
           "AvgPool2d", "AdaptiveAvgPool2d",
           "MSELoss", "CrossEntropyLoss", "NLLLoss", "BCEWithLogitsLoss", "functional", "init",
           "utils", "grad",
           # lane nnact: activations, losses and similarity layers
           "CELU", "ELU", "GLU", "SELU", "Hardshrink", "Hardsigmoid", "Hardswish", "Hardtanh",
           "LeakyReLU", "LogSigmoid", "Mish", "PReLU", "ReLU6", "RReLU", "SiLU", "Softplus",
           "Softshrink", "Softsign", "Tanhshrink", "Threshold", "BCELoss", "CosineEmbeddingLoss",
           "CosineSimilarity", "GaussianNLLLoss", "HingeEmbeddingLoss", "HuberLoss", "KLDivLoss",
           "L1Loss", "MarginRankingLoss", "MultiLabelMarginLoss", "MultiLabelSoftMarginLoss",
           "MultiMarginLoss", "PairwiseDistance", "PoissonNLLLoss", "SmoothL1Loss",
           "SoftMarginLoss", "TripletMarginLoss",
           # lane rnn: recurrent layers, attention, transformer layers, small modules
           "RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell",
           "MultiheadAttention", "ModuleDict", "ParameterDict", "ParameterList", "Bilinear",
           "EmbeddingBag", "BatchNorm3d", "Conv3d", "ConvTranspose1d", "InstanceNorm1d",
           "InstanceNorm3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
           "AdaptiveMaxPool2d", "AvgPool3d", "CircularPad1d", "CircularPad2d", "CircularPad3d",
           "ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "Identity", "LocalResponseNorm",
           "LPPool1d", "LPPool2d", "MaxPool3d", "PixelShuffle", "PixelUnshuffle",
           "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d",
           "ReplicationPad2d", "ReplicationPad3d", "Softmax2d", "Unflatten", "Upsample",
           "UpsamplingBilinear2d", "UpsamplingNearest2d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d",
           "ChannelShuffle", "Fold", "Unfold", "AlphaDropout", "Dropout1d", "Dropout2d",
           "Dropout3d", "FeatureAlphaDropout", "Transformer", "TransformerDecoder",
           "TransformerDecoderLayer", "TransformerEncoder", "TransformerEncoderLayer",
           # lane random
           "CTCLoss", "MaxUnpool1d", "MaxUnpool2d", "TripletMarginWithDistanceLoss",
           # lane nsfunc: the 3-d variants
           "AdaptiveMaxPool3d", "ConvTranspose3d", "LPPool3d", "MaxUnpool3d", "LazyLinear",
           # lane rnnfn
           "FractionalMaxPool2d", "FractionalMaxPool3d",
           # lane nnlazy
           "Buffer", "UninitializedBuffer", "UninitializedParameter", "LazyBatchNorm1d",
           "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyConv1d", "LazyConv2d", "LazyConv3d",
           "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d",
           "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d", "Container",
           "NLLLoss2d", "AdaptiveLogSoftmaxWithLoss", "CrossMapLRN2d",
           # lane texp6: where the global module hooks live (nn.modules.module)
           "modules",
           # lane h-api: torch 2.13's fused head loss
           "LinearCrossEntropyLoss", "LinearCrossEntropyOptions"]

__getattr__ = module_getattr(__name__)  # names torch features gradkit lacks
