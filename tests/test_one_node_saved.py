"""torch's ``node._saved_<name>`` of ops gradkit composes and records as torch's one node
(ops/one_node.py): interpolate's Upsample*Backward0, unfold/fold's Im2Col/Col2Im, pdist.
torch's test_autograd.py test_grad_fn_attr_bindings reads some of these."""
import pytest

import gradkit

torch = pytest.importorskip("torch")

PROGRAMS = {
    "linear_size": lambda lib, fn: fn.interpolate(_x(lib, 1), 4, mode="linear"),
    "linear_scale": lambda lib, fn: fn.interpolate(_x(lib, 1), scale_factor=0.5, mode="linear"),
    "linear_recomputed": lambda lib, fn: fn.interpolate(_x(lib, 1), scale_factor=2.5,
                                                      mode="linear", recompute_scale_factor=True),
    "linear_corners": lambda lib, fn: fn.interpolate(_x(lib, 1), scale_factor=2, mode="linear",
                                                   align_corners=True),
    "nearest_1d": lambda lib, fn: fn.interpolate(_x(lib, 1), scale_factor=2.0),
    "nearest_exact": lambda lib, fn: fn.interpolate(_x(lib, 1), size=3, mode="nearest-exact"),
    "nearest_2d": lambda lib, fn: fn.interpolate(_x(lib, 2), scale_factor=(2.0, 1.5)),
    "bilinear": lambda lib, fn: fn.interpolate(_x(lib, 2), scale_factor=(2.0, 1.5),
                                             mode="bilinear"),
    "bicubic": lambda lib, fn: fn.interpolate(_x(lib, 2), size=(3, 4), mode="bicubic",
                                            align_corners=True),
    "bilinear_antialias": lambda lib, fn: fn.interpolate(_x(lib, 2), size=(3, 4), mode="bilinear",
                                                       antialias=True),
    "trilinear": lambda lib, fn: fn.interpolate(_x(lib, 3), scale_factor=2, mode="trilinear"),
    "nearest_3d": lambda lib, fn: fn.interpolate(_x(lib, 3), size=(3, 3, 3)),
    "unfold": lambda lib, fn: fn.unfold(lib.ones(1, 1, 3, 3, requires_grad=True), 2, padding=1,
                                      stride=2),
    "unfold_3d_input": lambda lib, fn: fn.unfold(lib.ones(2, 4, 5, requires_grad=True), (2, 3)),
    "fold": lambda lib, fn: fn.fold(lib.ones(1, 4, 4, requires_grad=True), (3, 3), 2),
    "pdist_1": lambda lib, fn: lib.pdist(lib.ones(3, 2, requires_grad=True), p=1),
    "pdist_default": lambda lib, fn: lib.pdist(lib.ones(3, 2, requires_grad=True)),
}


def _x(lib, spatial: int):
    return lib.ones((1, 1) + (2, 3, 2)[:spatial], requires_grad=True)


def _plain_saved(lib, program) -> dict:
    """Every non-tensor ``_saved_`` value torch's node has (name -> (type, value)), read before
    and after backward (they outlive it)."""
    out = program(lib, lib.nn.functional)
    node = out.grad_fn
    t_node = torch_node(program)
    names = sorted(n for n in dir(t_node) if n.startswith("_saved_") and
                   not isinstance(getattr(t_node, n), torch.Tensor))
    read = {}
    for when in ("before", "after"):
        for name in names:
            value = getattr(node, name, "missing")
            read[when, name] = (type(value).__name__, value)
        if when == "before":
            out.sum().backward()
    return node.name(), read


def torch_node(program):
    return program(torch, torch.nn.functional).grad_fn


@pytest.mark.parametrize("program", PROGRAMS.values(), ids=PROGRAMS.keys())
def test_saved_sizes_scales_and_flags_match_torch(program):
    name, theirs = _plain_saved(torch, program)
    assert theirs  # each program has some: the test reads something
    assert _plain_saved(gradkit, program) == (name, theirs)


def test_pdist_saved_tensors_match_torch_and_are_freed_by_backward():
    x = gradkit.tensor([[0.0, 1.0], [2.0, 4.0], [1.0, 1.0]], requires_grad=True)
    t = torch.tensor(x.tolist(), requires_grad=True)
    out, t_out = gradkit.pdist(x, p=1), torch.pdist(t, p=1)
    assert out.grad_fn._saved_result.tolist() == t_out.grad_fn._saved_result.tolist()
    assert out.grad_fn._saved_self.tolist() == t_out.grad_fn._saved_self.tolist()
    out.sum().backward()
    with pytest.raises(RuntimeError, match="after they have already been freed"):
        _ = out.grad_fn._saved_self
    assert out.grad_fn._saved_p == 1.0


def test_saved_values_torch_keeps_as_given_differ_as_documented():
    """docs/torch_expectations.md: gradkit's node keeps the value it uses."""
    x = gradkit.ones(2, 2, requires_grad=True)
    t = torch.ones(2, 2, requires_grad=True)
    assert t.as_strided((3,), (1,)).grad_fn._saved_storage_offset is None
    assert x.as_strided((3,), (1,)).grad_fn._saved_storage_offset == 0
    assert x.as_strided((3,), (1,), 1).grad_fn._saved_storage_offset == \
        t.as_strided((3,), (1,), 1).grad_fn._saved_storage_offset == 1
    given = 1 + 0j
    assert torch.threshold(t, given, given).grad_fn._saved_threshold == given
    saved = gradkit.threshold(x, given, given).grad_fn._saved_threshold
    assert (type(saved), saved) == (float, 1.0)
    assert gradkit.threshold(x, 1.0, 2.0).tolist() == torch.threshold(t, 1.0, 2.0).tolist()
