"""gradkit.nn.utils: gradient clipping, parameter/vector conversion and sequence packing
(``rnn``), as torch.nn.utils."""
from gradkit.nn.utils import parametrizations, parametrize, rnn
from gradkit.nn.utils.clip_grad import (
    clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm)
from gradkit.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters
from gradkit.nn.utils.weight_norm import (
    remove_spectral_norm, remove_weight_norm, spectral_norm, weight_norm)

__all__ = ["clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm",
           "parameters_to_vector", "vector_to_parameters", "parametrize", "parametrizations",
           "rnn", "weight_norm", "remove_weight_norm", "spectral_norm", "remove_spectral_norm"]
