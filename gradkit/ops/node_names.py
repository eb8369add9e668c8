"""Torch's names for the backward nodes of ops whose torch counterpart is one of several
overloads (``sum`` -> ``SumBackward0`` without a dim, ``SumBackward1`` with one) or is spelt
otherwise than our op's name: ``type(y.grad_fn).__name__`` and ``y.grad_fn.name()`` say
what torch says. Every other op's node is named from the op (``mul`` -> ``MulBackward0``)."""
from __future__ import annotations

from gradkit.autograd.saved_names import declare_saved_names
from gradkit.ops.arithmetic import add, div, floor_divide, mul, pow, remainder, sub
from gradkit.ops.binary_math import addcdiv, addcmul, fmod, lerp, xlogy
from gradkit.ops.elementwise import log1p, square
from gradkit.ops.activations import logsigmoid
from gradkit.ops.piecewise import round as round_op, where
from gradkit.ops.gamma import _polygamma
from gradkit.ops.padding import pad
from gradkit.ops.masked_fill import masked_fill
from gradkit.ops.conversion import fill
from gradkit.ops.index_ops import index_fill
from gradkit.ops.indexing import scatter
from gradkit.ops.linalg import _bmm, matmul
from gradkit.ops.products import addbmm, addmm, addmv, baddbmm
from gradkit.ops.reduction import mean, sum
from gradkit.ops.scans import prod
from gradkit.ops.shape import squeeze

_PYTHON_SCALARS = (bool, int, float, complex)


def _by_dim(base: str):
    """``<base>Backward1`` for a reduction over ``dim``, ``<base>Backward0`` over everything."""
    def name(params, inputs) -> str:
        return f"{base}Backward{0 if params is None or params.get('dim') is None else 1}"
    return name


def _pow_name(params, inputs) -> str:
    base, exponent = inputs
    if type(base) in _PYTHON_SCALARS:
        return "PowBackward2"  # number ** tensor
    return "PowBackward0" if type(exponent) in _PYTHON_SCALARS else "PowBackward1"


def _scalar_or_tensor(base: str, index: int):
    """``<base>Backward0`` when input ``index`` is a number, ``<base>Backward1`` for a tensor."""
    def name(params, inputs) -> str:
        return f"{base}Backward{0 if type(inputs[index]) in _PYTHON_SCALARS else 1}"
    return name


def _remainder_name(params, inputs) -> str:
    """remainder.Scalar (a number divisor), remainder.Tensor, and remainder.Scalar_Tensor (a
    number dividend), which has no derivative in torch."""
    if type(inputs[0]) in _PYTHON_SCALARS:
        return "NotImplemented"
    return f"RemainderBackward{0 if type(inputs[1]) in _PYTHON_SCALARS else 1}"


def _scatter_name(params, inputs) -> str:
    """scatter.src (``ScatterBackward0``) or scatter.value, a number (``ScatterBackward1``)."""
    return f"ScatterBackward{1 if type(inputs[3]) in _PYTHON_SCALARS else 0}"


def _xlogy_name(params, inputs) -> str:
    """xlogy.Tensor, xlogy.Scalar_Self (a number x), xlogy.Scalar_Other (a number y)."""
    x, y = inputs
    overload = 1 if type(x) in _PYTHON_SCALARS else 2 if type(y) in _PYTHON_SCALARS else 0
    return f"XlogyBackward{overload}"


def _squeeze_name(params, inputs) -> str:
    dim = None if params is None else params.get("dim")
    return "SqueezeBackward0" if dim is None else \
        "SqueezeBackward1" if isinstance(dim, int) else "SqueezeBackward2"


_MATMUL_NAMES = {(2, 2): "MmBackward0", (2, 1): "MvBackward0", (1, 1): "DotBackward0"}


def _matmul_name(params, inputs) -> str:
    return _MATMUL_NAMES.get((inputs[0].ndim, inputs[1].ndim), "MatmulBackward0")


sum.node_name_rule = _by_dim("Sum")
mean.node_name_rule = _by_dim("Mean")
prod.node_name_rule = _by_dim("Prod")
pow.node_name_rule = _pow_name
remainder.node_name_rule = _remainder_name
scatter.node_name_rule = _scatter_name
fill.node_name_rule = _scalar_or_tensor("Fill", 1)  # fill.Scalar, fill.Tensor
fill.in_place_node_names = {"FillBackward0": "FillBackward2", "FillBackward1": "FillBackward3"}
masked_fill.node_name_rule = _scalar_or_tensor("MaskedFill", 2)
index_fill.node_name_rule = _scalar_or_tensor("IndexFill", 3)
squeeze.node_name_rule = _squeeze_name
# round.decimals (0 too) is torch's second overload; its in-place polygamma_ its own node
round_op.node_name_rule = lambda params, inputs: \
    f"RoundBackward{0 if params is None or params.get('decimals') is None else 1}"
_polygamma.in_place_node_names = {"PolygammaBackward0": "PolygammaBackward1"}
_PAD_NODES = {"constant": "ConstantPadNd", "reflect": "ReflectionPad{}D",
              "replicate": "ReplicationPad{}D"}  # circular: torch copies slices (CopySlices)


def pad_node_name(params: dict, inputs=None) -> str:
    """The name of torch's node of ``pad`` with ``params`` (mode, pad)."""
    name = _PAD_NODES.get(params.get("mode", "constant"), "Pad")
    return name.format(len(params.get("pad", ())) // 2) + "Backward0"


pad.node_name_rule = pad_node_name
matmul.node_name_rule = _matmul_name
fmod.node_name_rule = _scalar_or_tensor("Fmod", 1)
lerp.node_name_rule = _scalar_or_tensor("Lerp", 2)
xlogy.node_name_rule = _xlogy_name
square.node_name = "PowBackward0"
log1p.node_name = "Log1PBackward0"
logsigmoid.node_name = "LogSigmoidBackward0"
floor_divide.node_name = "NotImplemented"  # torch has no derivative: backward raises
# torch's add, sub, mul, div and where wrap a Python number operand as a tensor: an edge
# (None, 0) in next_functions, where its Scalar overloads (x ** 2, x % 2) have none
for _op in (add, sub, mul, div, where):
    _op.number_edges = True

# torch's names of saved inputs where the second is not ``other`` (``_saved_exponent``)
pow.torch_input_names = ("self", "exponent")
matmul.torch_input_names = _bmm.torch_input_names = ("self", "mat2")
where.torch_input_names = ("condition", "self", "other")
lerp.torch_input_names = ("self", "end", "weight")
addcmul.torch_input_names = addcdiv.torch_input_names = ("self", "tensor1", "tensor2")
addmm.torch_input_names = ("self", "mat1", "mat2")
addmv.torch_input_names = ("self", "mat", "vec")
baddbmm.torch_input_names = addbmm.torch_input_names = ("self", "batch1", "batch2")
for _op in (pow, matmul, _bmm, where, lerp, addcmul, addcdiv, addmm, addmv, baddbmm, addbmm):
    declare_saved_names(_op)

