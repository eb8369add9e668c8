"""F.pad's reflect, replicate and circular modes with negative pads, against torch: values,
gradients and errors (torch's kernels read each output from a source index of the input, so
replicate may repeat an edge past what a negative pad crops)."""
import itertools

import numpy as np
import pytest

import gradkit

torch = pytest.importorskip("torch")

from fuzz.opinfo_samples import differing_samples, op_db  # noqa: E402


def _run(lib, shape, pad, mode, **kwargs):
    """(kind, values, input gradient) or (error type, message)."""
    data = np.random.default_rng(0).standard_normal(shape)
    x = lib.tensor(data, requires_grad=True)
    try:
        out = lib.nn.functional.pad(x, pad, mode=mode, **kwargs)
    except Exception as error:  # noqa: BLE001 - the error is what is compared
        return type(error).__name__, str(error)
    if out.numel() == 0:  # torch's reflection_pad3d_backward leaves such a gradient unwritten
        return "ok", list(out.shape)
    weights = lib.tensor(np.arange(out.numel(), dtype=np.float64).reshape(tuple(out.shape)))
    (out * weights).sum().backward()
    return "ok", out.detach().numpy().tolist(), x.grad.numpy().tolist()


def _cases():
    for left, right in itertools.product(range(-5, 6), repeat=2):
        yield (1, 1, 4), (left, right)
    for pads in itertools.product((-3, -1, 0, 2), (-3, -1, 0, 2), (-3, -1, 0, 2), (-2, 0, 1)):
        yield (1, 3, 3), pads
    for a, b, c in itertools.product((-3, -1, 1), (-2, 0, 1), (-2, -1, 1)):
        yield (1, 2, 2, 3), (a, 0, 0, b, c, 0)
    yield (2, 4), (-1, 2)
    yield (0, 2, 4), (-1, 3)


_CASES = list(_cases())


@pytest.mark.parametrize("mode", ["replicate", "reflect"])
def test_negative_pads_match_torch(mode):
    differing = [(shape, pad) for shape, pad in _CASES
                 if _run(gradkit, shape, pad, mode) != _run(torch, shape, pad, mode)]
    assert not differing


def test_circular_matches_torch_where_torch_wraps_once():
    """Where torch's circular pad wraps past the cropped part it returns uninitialized memory
    (or an internal error); gradkit refuses those, and agrees everywhere else."""
    for shape, pad in _CASES:
        expected, got = _run(torch, shape, pad, "circular"), _run(gradkit, shape, pad, "circular")
        if got[0] == "RuntimeError" and got[1].startswith("circular padding"):
            sizes = shape[-len(pad) // 2:][::-1]
            assert any(max(pad[2 * i], pad[2 * i + 1]) >
                       size + min(pad[2 * i], 0) + min(pad[2 * i + 1], 0)
                       for i, size in enumerate(sizes))
            continue
        if expected[0] == "RuntimeError" and "The size of tensor a" in expected[1]:
            assert got[0] == "ok" and 0 in got[1]  # torch's broadcast error; gradkit: empty
            continue
        assert got == expected, (shape, pad)


def test_an_empty_reflect_pad_has_a_zero_gradient():
    x = gradkit.ones(1, 2, 2, 3, requires_grad=True)
    gradkit.nn.functional.pad(x, (-3, 0, 0, 0, 1, 0), mode="reflect").sum().backward()
    assert x.grad.tolist() == gradkit.zeros(1, 2, 2, 3).tolist()


def test_replicate_repeats_the_edge_past_the_crop():
    x = gradkit.arange(4.0).reshape(1, 1, 4)
    out = gradkit.nn.functional.pad(x, (-5, 6), mode="replicate")
    assert out.tolist() == [[[3.0] * 5]]  # index min(max(j + 5, 0), 3): the last element


@pytest.mark.parametrize("mode,pad", [("replicate", (-4, 5, 0, 0)), ("reflect", (-2, 1, 1, -1)),
                                      ("replicate", (1, -2, -1, 2, 0, -1))])
def test_gradcheck_and_gradgradcheck(mode, pad):
    x = gradkit.tensor(np.random.default_rng(1).standard_normal((1, 2, 3, 4)),
                       requires_grad=True)

    def run(x):
        return gradkit.nn.functional.pad(x, pad, mode=mode)
    assert gradkit.autograd.gradcheck(run, (x,))
    assert gradkit.autograd.gradgradcheck(run, (x,))


@pytest.mark.parametrize("shape,pad,kwargs", [
    ((4,), (1, 1), {}), ((1, 1, 1, 1, 4), (1, 1), {}), ((1, 1, 4), (1, 1), {"value": 1.0}),
    ((1, 1, 4), (1, 1, 1), {}), ((1, 1, 4), (1,) * 8, {}), ((1, 1, 4), (-5, -5), {}),
    ((1, 3, 3), (-2, -2, -2, -2), {}), ((1, 3, 3), (-2, -2, 0, 0), {}),
    ((1, 2, 3, 3), (-2, -2, -2, -2, -1, -1), {}), ((1, 2, 3, 3), (0, 0, 0, 0, -1, -2), {}),
    ((1, 1, 4), (-3, 2), {}), ((1, 1, 4), (5, 0), {}), ((1, 1, 4), (-3, -3), {}),
])
@pytest.mark.parametrize("mode", ["replicate", "reflect", "circular"])
def test_errors_match_torch(shape, pad, kwargs, mode):
    assert _run(gradkit, shape, pad, mode, **kwargs) == _run(torch, shape, pad, mode, **kwargs)


def test_a_zero_value_is_accepted_in_every_mode():
    for mode in ("replicate", "reflect", "circular"):
        assert _run(gradkit, (1, 1, 4), (1, 1), mode, value=0.0) == \
            _run(torch, (1, 1, 4), (1, 1), mode, value=0.0)


_PAD = [o for o in op_db if o.name == "nn.functional.pad"]


@pytest.mark.parametrize("opinfo", _PAD, ids=lambda o: o.variant_test_name)
def test_torch_samples_of_pad_agree(opinfo):
    differing = differing_samples(opinfo, (torch.float64, torch.float32), ("op",))
    assert not differing, differing


@pytest.mark.parametrize("pad", [(1,), (1,) * 6])
def test_constant_pad_nd_length_errors_match_torch(pad):
    messages = []
    for lib in (torch, gradkit):
        with pytest.raises(RuntimeError) as info:
            lib.constant_pad_nd(lib.zeros(1, 2), pad)
        messages.append(str(info.value))
    assert messages[0] == messages[1]
