"""``x[key]`` records torch's chain of nodes: one view per index of a basic key, left to right
(SelectBackward0, SliceBackward0, UnsqueezeBackward0; AliasBackward0 for a key taking no step),
then IndexBackward0 for the advanced part, with torch's saved values, and the same values,
strides, gradients and in-place behaviour."""
import pytest

import gradkit

torch = pytest.importorskip("torch")

_SAVED = ("dim", "index", "start", "end", "step", "self_sym_sizes")
KEYS = [
    "0", "1", "-1", "1:", "0, 1:", "None", "...", ":", "0, None, 1", ":, :", ":, 1", "..., 1",
    "0, ..., 1", "1:3, ::2", "None, None", "None, ..., None", "::1", "0:3", "0:100", ":, :, :",
    "..., None", "1:, ..., 2:", "(0,)", "0, 0, 0", "2:1", ":, 0:4", ":, 0:100", ":, -4:",
    ":, 1:100", "slice(0, None)", "(slice(None),)", "()", "1, -2:", "-1, 2, -3", "-100:100",
    "T(1)", "T(1), 0", "True", "False", "0, True", "0, [0, 1]", "[0, 1], 0",
    "T([True, False, True])",
]


def _chain(t) -> list:
    """(name, saved values) of each node from t's grad_fn back to the leaf's first node."""
    nodes, fn = [], t.grad_fn
    while fn is not None and not fn.name().endswith("AccumulateGrad"):
        saved = {}
        for name in _SAVED:
            try:
                value = getattr(fn, "_saved_" + name)
            except AttributeError:
                continue
            # torch shows a negative saved index or start as its unsigned 64-bit pattern
            saved[name] = tuple(value) if name == "self_sym_sizes" else value % 2 ** 64
        nodes.append((fn.name(), saved, len(fn.next_functions)))
        fn = fn.next_functions[0][0]
    return nodes[::-1]


def _run(m, key: str):
    leaf = m.arange(60.0).reshape(3, 4, 5).requires_grad_(True)
    z = leaf * 1
    out = eval(f"z[{key}]", {"z": z, "T": m.tensor})  # noqa: S307 - the keys above
    (grad,) = m.autograd.grad(out.sum() * 2, leaf)
    return out, grad


@pytest.mark.parametrize("key", KEYS)
def test_chain_values_and_gradients_as_torch(key):
    (t_out, t_grad), (g_out, g_grad) = _run(torch, key), _run(gradkit, key)
    assert _chain(g_out) == _chain(t_out)
    assert g_out.tolist() == t_out.tolist()
    assert g_grad.tolist() == t_grad.tolist()
    if g_out.numel():
        assert g_out.stride() == t_out.stride()
        assert g_out.storage_offset() == t_out.storage_offset()
    assert g_out._is_view() == t_out._is_view()


@pytest.mark.parametrize("key", ["0, 1:", "0, None, 1", "1:3, ::2", "..., 1", ":, :", "None"])
def test_in_place_write_through_the_chain(key):
    """A write into a view made of several steps replays them (CopySlices on the base)."""
    def program(m):
        leaf = m.arange(60.0).reshape(3, 4, 5).requires_grad_(True)
        z = leaf * 1
        view = eval(f"z[{key}]", {"z": z})  # noqa: S307
        version = z._version
        view.mul_(3)
        assert z._version == view._version == version + 1
        (grad,) = m.autograd.grad((z * z).sum(), leaf)
        return z.grad_fn.name(), z.tolist(), grad.tolist()
    assert program(gradkit) == program(torch)


@pytest.mark.parametrize("key", ["::-1", ":, ::-2", "::0"])
def test_non_positive_steps_refused(key):
    for m in (torch, gradkit):
        with pytest.raises(ValueError) as error:
            eval(f"z[{key}]", {"z": m.ones(3, 4)})  # noqa: S307
        assert str(error.value) == ("slice step cannot be zero" if key == "::0" else
                                    "step must be greater than zero")
