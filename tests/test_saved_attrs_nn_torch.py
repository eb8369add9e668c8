"""The grad_fn graphs of torch.nn.functional's pooling, padding, normalization and convolution
ops as a user inspects them, compared with torch 2.13 on the same program: the node torch's
``grad(create_graph=True)`` gives (``MaxPool2DWithIndicesBackwardBackward0``), and the saved
names and values of the nodes gradkit records as one (tests/fuzz/saved_attrs_scan.py)."""
import numpy as np
import pytest

import gradkit

torch = pytest.importorskip("torch")

from test_saved_attrs_torch import _form, _read, hooks_refusal  # noqa: E402 - after torch's skip


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
    "adaptive_avg_pool2d_unbatched": ("adaptive_avg_pool2d", (3,), (3, 6, 6)),
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


def _leaves(lib, shapes):
    return [None if s is None else _leaf(lib, s) for s in shapes]


def _running(lib, c):
    """Running statistics: the program gets them as constants."""
    return lib.zeros(c, dtype=lib.float64), lib.ones(c, dtype=lib.float64)


# name -> (program(lib, *leaves), leaf shapes; None: an absent argument)
NODES = {
    "conv_transpose2d": (lambda lib, x, w, b: lib.nn.functional.conv_transpose2d(
        x, w, b, stride=2, padding=1, output_padding=1), [(1, 2, 4, 4), (2, 3, 3, 3), (3,)]),
    "conv_transpose2d_no_bias": (lambda lib, x, w: lib.nn.functional.conv_transpose2d(
        x, w, stride=(2, 1), padding=(1, 0)), [(1, 2, 4, 4), (2, 3, 3, 3)]),
    "conv_transpose1d_groups": (lambda lib, x, w: lib.nn.functional.conv_transpose1d(
        x, w, groups=2, dilation=2), [(1, 2, 4), (2, 1, 3)]),
    # (None, 0) for the absent bias
    "conv2d_no_bias": (lambda lib, x, w: lib.nn.functional.conv2d(x, w, padding=1),
                       [(1, 2, 4, 4), (3, 2, 3, 3)]),
    "batch_norm": (lambda lib, x, w, b: lib.nn.functional.batch_norm(
        x, *_running(lib, 3), w, b, True, 0.1, 1e-3), [(2, 3, 4), (3,), (3,)]),
    "batch_norm_no_statistics": (lambda lib, x: lib.nn.functional.batch_norm(
        x, None, None, None, None, True), [(2, 3, 4)]),
    "batch_norm_eval": (lambda lib, x, w: lib.nn.functional.batch_norm(
        x, *_running(lib, 3), w, None, False, 0.1, 1e-3), [(2, 3, 4), (3,)]),
    "group_norm": (lambda lib, x, w, b: lib.nn.functional.group_norm(x, 2, w, b, 1e-3),
                   [(2, 4, 3, 2), (4,), (4,)]),
    "group_norm_no_weight": (lambda lib, x: lib.nn.functional.group_norm(x, 2), [(2, 4, 3)]),
    "group_norm_no_samples": (lambda lib, x: lib.nn.functional.group_norm(x, 1), [(0, 2, 3)]),
    "layer_norm_no_bias": (lambda lib, x, w: lib.nn.functional.layer_norm(x, (3,), w),
                           [(2, 3), (3,)]),
    "layer_norm_no_weight": (lambda lib, x: lib.nn.functional.layer_norm(x, (2, 3)),
                             [(2, 2, 3)]),
    "avg_pool2d": (lambda lib, x: lib.nn.functional.avg_pool2d(x, 2, 1, 1, True, False, 2),
                   [(1, 2, 4, 4)]),
    "avg_pool2d_defaults": (lambda lib, x: lib.nn.functional.avg_pool2d(x, (2, 3)),
                            [(1, 2, 4, 4)]),
    "avg_pool3d": (lambda lib, x: lib.nn.functional.avg_pool3d(x, 2), [(1, 2, 4, 4, 4)]),
    # torch's 1-d kernel: avg_pool2d over a unit height, its kernel size the stride
    # (the node below its squeeze is inspected)
    "avg_pool1d": (lambda lib, x: lib.nn.functional.avg_pool1d(x, 2), [(1, 2, 4)]),
    "adaptive_avg_pool2d": (lambda lib, x: lib.nn.functional.adaptive_avg_pool2d(x, 3),
                            [(1, 2, 4, 4)]),
    # torch's enums as ints: interpolation (bilinear 0, nearest 1, bicubic 2), padding (zeros 0,
    # border 1, reflection 2)
    "grid_sample": (lambda lib, x, g: lib.nn.functional.grid_sample(
        x, g, mode="nearest", padding_mode="reflection", align_corners=True),
        [(1, 2, 4, 4), (1, 3, 3, 2)]),
    "grid_sample_bicubic": (lambda lib, x, g: lib.nn.functional.grid_sample(
        x, g.detach(), mode="bicubic", align_corners=False), [(1, 2, 4, 4), (1, 3, 3, 2)]),
    "pixel_shuffle": (lambda lib, x: lib.nn.functional.pixel_shuffle(x, 2), [(1, 8, 2, 2)]),
    "pixel_unshuffle": (lambda lib, x: lib.nn.functional.pixel_unshuffle(x, 2), [(1, 2, 4, 4)]),
    "channel_shuffle": (lambda lib, x: lib.nn.functional.channel_shuffle(x, 2), [(1, 4, 2, 2)]),
    # torch's pad node saves the input itself, its edge the input's
    "reflect2d": (lambda lib, x: lib.nn.functional.pad(x, (1, 1, 2, 0), mode="reflect"),
                  [(2, 3, 4)]),
    "replicate3d": (lambda lib, x: lib.nn.functional.pad(x, (1, 0, 1, 1, 0, 2), "replicate"),
                    [(1, 2, 3, 3, 3)]),
}


def _inspect(lib, name: str) -> dict:
    program, shapes = NODES[name]
    leaves = _leaves(lib, shapes)
    y = program(lib, *leaves)
    node = y.grad_fn
    if name == "avg_pool1d":
        node = node.next_functions[0][0]
    names = sorted(n for n in dir(node) if n.startswith(("_saved_", "_raw_saved_")))
    saved = [n for n in names if n.startswith("_saved_")]
    before = {n: _read(node, n) for n in saved}
    raw = {n: type(getattr(node, n)).__name__ for n in names if n.startswith("_raw")}
    lib.autograd.backward(y, lib.ones_like(y))
    return {"class": type(node).__name__, "names": names, "before": before, "raw": raw,
            "after": {n: _read(node, n) for n in saved},
            "next": [None if f is None else type(f).__name__ for f, _ in node.next_functions]}


# Known: layer_norm's mean and 1 / std are computed when read (gradkit's node saves the input):
# no raw saved tensor of theirs (docs/torch_expectations.md)
COMPUTED = ("_raw_saved_result1", "_raw_saved_result2")


@pytest.mark.parametrize("name", NODES)
def test_nn_node_saved_attributes_as_torch(name):
    """Names (``dir``), raw saved tensors, values before and after backward (parameters stay,
    tensors raise, an absent one stays None) and edges ((None, 0) for an absent bias)."""
    theirs = _inspect(torch, name)
    if name.startswith("layer_norm"):
        theirs["names"] = [n for n in theirs["names"] if n not in COMPUTED]
        theirs["raw"] = {n: kind for n, kind in theirs["raw"].items() if n not in COMPUTED}
    assert _inspect(gradkit, name) == theirs


def test_layer_norm_statistics_have_no_raw_saved_tensor():
    """Known: torch's ``_raw_saved_result1``/``result2`` of NativeLayerNormBackward0."""
    x = _leaf(gradkit, (2, 3))
    node = gradkit.nn.functional.layer_norm(x, (3,)).grad_fn
    assert node._saved_result1.shape == (2, 1)
    with pytest.raises(AttributeError, match="no attribute '_raw_saved_result1'"):
        _ = node._raw_saved_result1


@pytest.mark.parametrize("name", ["batch_norm", "group_norm"])
def test_norm_statistics_values_as_torch(name):
    """``_saved_result1``/``_saved_result2``: the forward's mean and 1 / std."""
    def statistics(lib):
        program, shapes = NODES[name]
        node = program(lib, *_leaves(lib, shapes)).grad_fn
        return [node._saved_result1.detach().numpy(), node._saved_result2.detach().numpy()]
    for ours, theirs in zip(statistics(gradkit), statistics(torch), strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def _raw_hooks(lib, name: str, raw_name: str, twice: bool = False):
    """``_raw_saved_<raw_name>.register_hooks`` of a node gradkit records as one: packed now,
    unpacked at each read and in backward."""
    program, shapes = NODES[name]
    leaves = _leaves(lib, shapes)
    y = program(lib, *leaves)
    calls = []
    raw = getattr(y.grad_fn, "_raw_saved_" + raw_name)
    raw.register_hooks(lambda t: calls.append("pack") or t, lambda t: calls.append("unpack") or t)
    if twice:
        raw.register_hooks(lambda t: t, lambda t: t)
    seen = _form(getattr(y.grad_fn, "_saved_" + raw_name))
    lib.autograd.backward(y, lib.ones_like(y))
    return type(raw).__name__, calls, seen


@pytest.mark.parametrize("name, raw_name", [("conv_transpose2d", "weight"),
                                            ("batch_norm", "running_mean"),
                                            ("group_norm", "result1"),
                                            ("avg_pool2d", "self")])
def test_one_node_raw_saved_hooks_as_torch(name, raw_name):
    assert _raw_hooks(gradkit, name, raw_name) == _raw_hooks(torch, name, raw_name)


@pytest.mark.parametrize("case", ["twice", "none", "freed"])
def test_one_node_raw_saved_refusals_as_torch(case):
    """torch's RuntimeError texts: hooks set twice, on an absent tensor, after backward."""
    def refusal(lib):
        name = "group_norm_no_weight" if case == "none" else "group_norm"
        program, shapes = NODES[name]
        y = program(lib, *_leaves(lib, shapes))
        return hooks_refusal(lib, y, y.grad_fn._raw_saved_weight if case == "none" else
                             y.grad_fn._raw_saved_input, case)
    expected = refusal(torch)
    assert refusal(gradkit) == expected
    assert expected.startswith("Calling register_hooks on a saved tensor")
