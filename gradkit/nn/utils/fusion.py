"""torch.nn.utils.fusion: fold an eval-mode BatchNorm into the conv or linear layer before it.

With s = bn.weight / √(running_var + eps): W' = W · s (per output channel) and
b' = (b − running_mean) · s + bn.bias, so ``fused(x) == bn(conv(x))`` in eval mode.
"""
from __future__ import annotations

import copy

from gradkit import creation, ops
from gradkit._tensor import Tensor
from gradkit.nn.module import Module
from gradkit.nn.parameter import Parameter


def _check_eval(layer: Module, bn: Module) -> None:
    if layer.training or bn.training:
        raise AssertionError("Fusion only for eval!")


def _check_running_stats(bn: Module) -> None:
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")


def fuse_conv_bn_eval(conv: Module, bn: Module, transpose: bool = False) -> Module:
    """A copy of ``conv`` computing ``bn(conv(x))`` (both in eval mode); ``transpose`` for a
    ConvTranspose, whose output channels are the weight's dim 1."""
    _check_eval(conv, bn)
    _check_running_stats(bn)
    fused = copy.deepcopy(conv)
    fused.weight, fused.bias = fuse_conv_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight,
        bn.bias, transpose)
    return fused


def fuse_conv_bn_weights(conv_w: Tensor, conv_b: Tensor | None, bn_rm: Tensor, bn_rv: Tensor,
                         bn_eps: float, bn_w: Tensor | None, bn_b: Tensor | None,
                         transpose: bool = False) -> tuple[Parameter, Parameter]:
    """The fused conv (weight, bias) as new Parameters, in the conv's dtypes."""
    weight_dtype = conv_w.dtype
    bias_dtype = conv_b.dtype if conv_b is not None else weight_dtype
    conv_b = creation.zeros_like(bn_rm) if conv_b is None else conv_b
    bn_w = creation.ones_like(bn_rm) if bn_w is None else bn_w
    bn_b = creation.zeros_like(bn_rm) if bn_b is None else bn_b
    var_rsqrt = ops.rsqrt(ops.add(bn_rv, bn_eps))
    shape = ([1, -1] if transpose else [-1, 1]) + [1] * (conv_w.ndim - 2)
    fused_w = ops.mul(conv_w, ops.mul(bn_w, var_rsqrt).reshape(shape)).to(dtype=weight_dtype)
    fused_b = ops.add(ops.mul(ops.mul(ops.sub(conv_b, bn_rm), var_rsqrt), bn_w),
                      bn_b).to(dtype=bias_dtype)
    return Parameter(fused_w, conv_w.requires_grad), Parameter(fused_b, conv_b.requires_grad)


def fuse_linear_bn_eval(linear: Module, bn: Module) -> Module:
    """A copy of ``linear`` computing ``bn(linear(x))`` (both in eval mode)."""
    _check_eval(linear, bn)
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError("To fuse, linear.out_features == bn.num_features or "
                             f"bn.num_features == 1, got linear.out_features="
                             f"{linear.out_features} and bn.num_features={bn.num_features}")
    _check_running_stats(bn)
    fused = copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_linear_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight,
        bn.bias)
    return fused


def fuse_linear_bn_weights(linear_w: Tensor, linear_b: Tensor | None, bn_rm: Tensor,
                           bn_rv: Tensor, bn_eps: float, bn_w: Tensor,
                           bn_b: Tensor) -> tuple[Parameter, Parameter]:
    """The fused linear (weight, bias) as new Parameters, in the linear's dtypes."""
    weight_dtype = linear_w.dtype
    bias_dtype = linear_b.dtype if linear_b is not None else weight_dtype
    linear_b = creation.zeros_like(bn_rm) if linear_b is None else linear_b
    scale = ops.mul(bn_w, ops.rsqrt(ops.add(bn_rv, bn_eps)))
    fused_w = ops.mul(linear_w, scale.unsqueeze(-1).to(dtype=weight_dtype))
    fused_b = ops.add(ops.mul(ops.sub(linear_b, bn_rm), scale), bn_b).to(dtype=bias_dtype)
    return Parameter(fused_w, linear_w.requires_grad), Parameter(fused_b,
                                                                 linear_b.requires_grad)


__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
           "fuse_linear_bn_weights"]
