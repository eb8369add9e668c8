"""gradkit.nn.utils, as torch.nn.utils: gradient clipping, parameter/vector conversion,
sequence packing (``rnn``), ``parametrize`` / ``parametrizations``, weight and spectral norm,
``stateless.functional_call``, ``prune``, conv/linear-BatchNorm fusion and skip_init."""
from gradkit.nn.utils import parametrizations, parametrize, prune, rnn, stateless
from gradkit.nn.utils.clip_grad import (
    clip_grad_norm, clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm)
from gradkit.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters
from gradkit.nn.utils.fusion import (
    fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval, fuse_linear_bn_weights)
from gradkit.nn.utils.init import (
    convert_conv2d_weight_memory_format, convert_conv3d_weight_memory_format, skip_init)
from gradkit.nn.utils.weight_norm import (
    remove_spectral_norm, remove_weight_norm, spectral_norm, weight_norm)

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_",
           "get_total_norm", "parameters_to_vector", "vector_to_parameters", "parametrize",
           "parametrizations", "prune", "rnn", "weight_norm", "remove_weight_norm", "spectral_norm",
           "remove_spectral_norm", "stateless", "fuse_conv_bn_eval", "fuse_conv_bn_weights",
           "fuse_linear_bn_eval", "fuse_linear_bn_weights", "skip_init",
           "convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]
