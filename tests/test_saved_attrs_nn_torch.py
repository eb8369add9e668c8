"""The grad_fn graphs of torch.nn.functional's pooling, padding, normalization and convolution
ops as a user inspects them, compared with torch 2.13 on the same program: the node torch's
``grad(create_graph=True)`` gives (``MaxPool2DWithIndicesBackwardBackward0``), and the saved
names and values of the nodes gradkit records as one (tests/fuzz/saved_attrs_scan.py)."""
import pytest

import gradkit

torch = pytest.importorskip("torch")


def _leaf(lib, shape):
    gen = torch.Generator().manual_seed(0)
    value = torch.randn(shape, generator=gen, dtype=torch.float64)
    return lib.tensor(value.numpy(), requires_grad=True)


# name -> (F's function, arguments after the input, input shape)
POOLS_AND_PADS = {
    "max_pool1d": ("max_pool1d", (2,), (2, 3, 6)),
    "max_pool2d": ("max_pool2d", (2,), (2, 3, 6, 6)),
    "max_pool2d_unbatched": ("max_pool2d", (2,), (3, 6, 6)),
    "max_pool3d": ("max_pool3d", (2,), (2, 3, 4, 4, 4)),
    "adaptive_max_pool1d": ("adaptive_max_pool1d", (3,), (2, 3, 6)),
    "adaptive_max_pool2d": ("adaptive_max_pool2d", (3,), (2, 3, 6, 6)),
    "adaptive_max_pool3d": ("adaptive_max_pool3d", (3,), (2, 3, 6, 6, 6)),
    "fractional_max_pool2d": ("fractional_max_pool2d", (2, 3), (2, 3, 6, 6)),
    "fractional_max_pool3d": ("fractional_max_pool3d", (2, 3), (2, 3, 6, 6, 6)),
    "avg_pool1d": ("avg_pool1d", (2,), (2, 3, 6)),
    "avg_pool2d": ("avg_pool2d", (2,), (2, 3, 6, 6)),
    "avg_pool3d": ("avg_pool3d", (2,), (2, 3, 4, 4, 4)),
    "adaptive_avg_pool1d": ("adaptive_avg_pool1d", (3,), (2, 3, 6)),
    "adaptive_avg_pool2d": ("adaptive_avg_pool2d", (3,), (2, 3, 6, 6)),
    "adaptive_avg_pool3d": ("adaptive_avg_pool3d", (3,), (2, 3, 6, 6, 6)),
    "reflect1d": ("pad", ((1, 1), "reflect"), (2, 3, 6)),
    "reflect2d": ("pad", ((1, 1, 2, 0), "reflect"), (2, 3, 6, 6)),
    "reflect3d": ("pad", ((1, 1, 1, 1, 0, 1), "reflect"), (2, 3, 4, 4, 4)),
    "replicate1d": ("pad", ((1, 2), "replicate"), (2, 3, 6)),
    "replicate2d": ("pad", ((1, 1, 1, 1), "replicate"), (2, 3, 6, 6)),
    "replicate3d": ("pad", ((1, 1, 1, 1, 1, 1), "replicate"), (2, 3, 4, 4, 4)),
}


def _second_order_names(lib, name: str) -> tuple:
    """The grad_fn names of the output and of its gradient built with create_graph."""
    function, args, shape = POOLS_AND_PADS[name]
    x = _leaf(lib, shape)
    kwargs = {"output_size": args[1]} if function.startswith("fractional") else {}
    if kwargs:
        args = args[:1]
    y = getattr(lib.nn.functional, function)(x, *args, **kwargs)
    g, = lib.autograd.grad(y, x, lib.ones_like(y), create_graph=True)
    return type(y.grad_fn).__name__, type(g.grad_fn).__name__


@pytest.mark.parametrize("name", POOLS_AND_PADS)
def test_pool_and_pad_second_order_node_as_torch(name):
    """torch's pooling and padding backwards read the input (a zero derivative there): their
    gradient's node is ``<the op's node>BackwardBackward0`` (1-d ones: below a squeeze)."""
    ours = _second_order_names(gradkit, name)
    assert ours == _second_order_names(torch, name)
    assert "BackwardBackward0" in ours[1] or ours[1] == "SqueezeBackward1"
