"""torch.nn API details against torch itself: functional extras, clipping, hooks, save/load.

Each story runs the same program with ``lib`` = gradkit and ``lib`` = torch and compares what
it returns (numbers, structure, error messages).
"""
import math

import numpy as np
import pytest

import gradkit
from gradkit.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")


def _host(value):
    """Tensors (nested in lists/tuples/dicts) as NumPy arrays, for comparing across libraries."""
    if isinstance(value, (gradkit.Tensor, torch.Tensor)):
        return value.detach().numpy()
    if isinstance(value, (list, tuple)):
        return [_host(v) for v in value]
    if isinstance(value, dict):
        return {k: _host(v) for k, v in value.items()}
    return value


def assert_same(program, rtol=1e-5, atol=1e-6):
    """``program(lib)`` gives the same numbers and structure under gradkit and torch."""
    _assert_close(_host(program(gradkit)), _host(program(torch)), rtol, atol)


def _assert_close(got, expected, rtol, atol):
    if isinstance(expected, list):
        assert isinstance(got, list) and len(got) == len(expected)
        for g, e in zip(got, expected):
            _assert_close(g, e, rtol, atol)
    elif isinstance(expected, dict):
        assert list(got) == list(expected)
        for key in expected:
            _assert_close(got[key], expected[key], rtol, atol)
    elif isinstance(expected, np.ndarray):
        assert got.shape == expected.shape and got.dtype == expected.dtype, (got, expected)
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)
    elif isinstance(expected, float):  # a float32 .item(): the last bits may differ
        assert got == pytest.approx(expected, rel=rtol, abs=atol)
    else:
        assert got == expected


def same_error(program):
    """``program`` raises the same exception type and message under gradkit and torch."""
    with pytest.raises(Exception) as expected:
        program(torch)
    with pytest.raises(type(expected.value), match=_escaped(str(expected.value))):
        program(gradkit)


def _escaped(message):
    import re
    return re.escape(message.split("\n")[0])


X = [[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]]

# -- softmax family ----------------------------------------------------------------------


@pytest.mark.parametrize("call", [
    lambda lib, x: lib.nn.functional.softmax(x, dim=-1),
    lambda lib, x: lib.nn.functional.softmax(x, dim=0, dtype=lib.float64),
    lambda lib, x: lib.nn.functional.log_softmax(x, 1, dtype=lib.float64),
    lambda lib, x: lib.nn.functional.softmin(x, dim=1),
    lambda lib, x: x.softmax(-1),
    lambda lib, x: x.softmax(dim=0),
    lambda lib, x: x.log_softmax(-1, lib.float64),
    lambda lib, x: lib.softmax(x, 0, lib.float64),
    lambda lib, x: lib.log_softmax(x, dim=1),
    lambda lib, x: lib.softmax(x, dim=1, dtype=lib.float64).sum(dtype=lib.float32),
], ids=["F.softmax", "F.softmax-dtype", "F.log_softmax-dtype", "F.softmin", "method",
        "method-dim", "method-dtype", "torch.softmax-dtype", "torch.log_softmax", "sum-dtype"])
def test_softmax_spellings_match_torch(call):
    def program(lib):
        x = lib.tensor(X, requires_grad=True)
        out = call(lib, x)
        (out * lib.arange(out.numel()).reshape(out.shape)).sum().backward()
        return [out, x.grad]
    assert_same(program)


def test_softmax_without_dim_warns_and_picks_torchs_dim():
    for lib in (gradkit, torch):
        with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
            lib.nn.functional.softmax(lib.tensor(X))
    with pytest.warns(UserWarning):
        assert_same(lambda lib: lib.nn.functional.softmax(lib.tensor(X)))

# -- one_hot and normalize ----------------------------------------------------------------


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.functional.one_hot(lib.tensor([0, 2, 1])),
    lambda lib: lib.nn.functional.one_hot(lib.tensor([0, 2, 1]), num_classes=5),
    lambda lib: lib.nn.functional.one_hot(lib.tensor([[0], [3]]), 4),
    lambda lib: lib.nn.functional.one_hot(lib.tensor(2), 3),
    lambda lib: lib.nn.functional.one_hot(lib.zeros(0, dtype=lib.long), 3),
])
def test_one_hot_matches_torch(call):
    assert_same(call)


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.functional.one_hot(lib.tensor([0.0, 1.0])),
    lambda lib: lib.nn.functional.one_hot(lib.tensor([0, 1], dtype=lib.int32), 3),
    lambda lib: lib.nn.functional.one_hot(lib.tensor([-1, 1])),
    lambda lib: lib.nn.functional.one_hot(lib.tensor([4]), 3),
    lambda lib: lib.nn.functional.one_hot(lib.zeros(0, dtype=lib.long)),
    lambda lib: lib.nn.functional.normalize(lib.tensor([1, 2])),
], ids=["float", "int32", "negative", "too-big", "empty", "normalize-int"])
def test_one_hot_and_normalize_errors_match_torch(call):
    same_error(call)


@pytest.mark.parametrize("p,dim", [(2.0, 1), (1.0, 0), (math.inf, 1), (3.0, -1), (0.5, 1),
                                   (-math.inf, 1)])
def test_normalize_matches_torch_with_gradients_at_zero_rows(p, dim):
    def program(lib):
        x = lib.tensor([[0.0, 0.0, 0.0], [3.0, -4.0, 1.0], [2.0, 2.0, -1.0]], requires_grad=True)
        out = lib.nn.functional.normalize(x, p=p, dim=dim)
        (out * lib.arange(9.0).reshape(3, 3)).sum().backward()
        return [out, x.grad]
    assert_same(program, rtol=1e-5)


@pytest.mark.parametrize("p", [1.0, 2.0, 3.0, math.inf])
def test_normalize_gradgradcheck(p):
    x = gradkit.tensor([[0.3, -1.2, 2.0], [1.5, 0.7, -0.4]], dtype=gradkit.float64,
                       requires_grad=True)

    def f(t):
        return gradkit.nn.functional.normalize(t, p=p, dim=1)
    assert gradcheck(f, (x,))
    assert gradgradcheck(f, (x,))


def test_vector_norm_forward_mode_matches_its_gradient():
    from gradkit.autograd import forward_ad
    from gradkit.ops.linalg_norms import vector_norm
    x = gradkit.tensor([[0.3, -1.2, 2.0], [1.5, 0.7, -0.4]], dtype=gradkit.float64)
    tangent = gradkit.tensor([[1.0, 0.5, -2.0], [0.1, 0.2, 0.3]], dtype=gradkit.float64)
    for p in (1.0, 2.0, 3.0, math.inf):
        with forward_ad.dual_level():
            out = vector_norm(forward_ad.make_dual(x, tangent), p, 1)
            jvp = forward_ad.unpack_dual(out).tangent
        leaf = x.clone().requires_grad_()
        (grad,) = gradkit.autograd.grad(vector_norm(leaf, p, 1).sum(), leaf)
        np.testing.assert_allclose(jvp.numpy(), (grad * tangent).sum(1).numpy())

# -- gradient clipping ---------------------------------------------------------------------


def _params(lib):
    a = lib.nn.Parameter(lib.tensor([3.0, -4.0]))
    b = lib.nn.Parameter(lib.tensor([[1.0, 2.0]]))
    unused = lib.nn.Parameter(lib.tensor([1.0]))
    a.grad = lib.tensor([3.0, -4.0])
    b.grad = lib.tensor([[12.0, -0.5]])
    return [a, b, unused]


@pytest.mark.parametrize("norm_type", [2.0, 1, math.inf, 3.5, 0, "inf"])
@pytest.mark.parametrize("max_norm", [1.0, 100.0])
def test_clip_grad_norm_matches_torch(norm_type, max_norm):
    def program(lib):
        params = _params(lib)
        total = lib.nn.utils.clip_grad_norm_(params, max_norm, norm_type=norm_type)
        return [total, *(p.grad for p in params)]
    assert_same(program)


def test_clip_grad_norm_takes_a_tensor_a_generator_and_nothing():
    assert_same(lambda lib: lib.nn.utils.clip_grad_norm_(_params(lib)[0], 1.0))
    assert_same(lambda lib: lib.nn.utils.clip_grad_norm_((p for p in _params(lib)), 1.0))
    assert_same(lambda lib: lib.nn.utils.clip_grad_norm_([], 1.0))
    with pytest.warns(UserWarning, match="`parameters` is an empty generator"):
        gradkit.nn.utils.clip_grad_norm_((p for p in []), 1.0)


def test_clip_grad_norm_nonfinite_raises_or_spreads_nan_as_torch():
    def poisoned(lib):
        params = _params(lib)
        params[0].grad[0] = float("nan")
        return params

    same_error(lambda lib: lib.nn.utils.clip_grad_norm_(poisoned(lib), 1.0,
                                                        error_if_nonfinite=True))

    def program(lib):
        params = poisoned(lib)
        total = lib.nn.utils.clip_grad_norm_(params, 1.0)
        return [total, params[1].grad]
    assert_same(program)


def test_clip_grad_value_matches_torch():
    def program(lib):
        params = _params(lib)
        assert lib.nn.utils.clip_grad_value_(params, 3.5) is None
        return [p.grad for p in params]
    assert_same(program)


def test_parameters_to_vector_round_trip_matches_torch():
    def program(lib):
        params = _params(lib)
        vec = lib.nn.utils.parameters_to_vector(params)
        lib.nn.utils.vector_to_parameters(vec * 2, params)
        return [vec, *params]
    assert_same(program)

# -- module hooks -------------------------------------------------------------------------


def _two_layer(lib):
    model = lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.Tanh(), lib.nn.Linear(2, 1))
    with lib.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(lib.linspace(-1.0, 1.0, p.numel()).reshape(p.shape) * (i + 1))
    return model


def _inputs(lib, requires_grad=True):
    return lib.tensor([[1.0, -2.0, 0.5], [0.3, 0.2, -1.0]], requires_grad=requires_grad)


def _logged(log, name):
    def hook(module, *tensors):
        log.append([name, type(module).__name__, *[_host(t) for t in tensors]])
    return hook


def test_forward_hooks_order_prepend_kwargs_and_replacement_match_torch():
    def program(lib):
        log = []
        model = _two_layer(lib)
        first = model[0]
        first.register_forward_pre_hook(_logged(log, "pre"))
        first.register_forward_pre_hook(_logged(log, "pre-first"), prepend=True)
        first.register_forward_pre_hook(lambda m, args, kwargs: ((args[0] * 2,), kwargs),
                                        with_kwargs=True)
        first.register_forward_hook(_logged(log, "post"))
        first.register_forward_hook(lambda m, args, kwargs, out: out + 1, with_kwargs=True)
        model[1].register_forward_hook(lambda m, args, out: out * 3)
        removed = model[2].register_forward_hook(lambda m, args, out: out * 100)
        removed.remove()
        out = model(_inputs(lib))
        return [log, out]
    assert_same(program)


def test_forward_pre_hook_single_value_is_wrapped_and_bad_kwargs_result_raises():
    def program(lib):
        layer = _two_layer(lib)[0]
        layer.register_forward_pre_hook(lambda m, args: args[0] + 1)
        return layer(_inputs(lib))
    assert_same(program)

    def bad(lib):
        layer = _two_layer(lib)[0]
        layer.register_forward_pre_hook(lambda m, args, kwargs: 5, with_kwargs=True)
        return layer(_inputs(lib))
    same_error(bad)


def test_always_called_forward_hook_runs_when_forward_raises():
    for lib in (gradkit, torch):
        log = []

        class Failing(lib.nn.Module):
            def forward(self, x):
                raise ValueError("broken forward")

        module = Failing()
        module.register_forward_hook(_logged(log, "always"), always_call=True)
        module.register_forward_hook(_logged(log, "normal"))
        with pytest.raises(ValueError, match="broken forward"):
            module(lib.ones(1))
        assert log == [["always", "Failing", [np.ones(1, np.float32)], None]]


@pytest.mark.parametrize("input_requires_grad", [True, False])
def test_full_backward_hooks_see_and_replace_gradients_as_torch(input_requires_grad):
    def program(lib):
        log = []
        model = _two_layer(lib)
        for index in (0, 2):
            model[index].register_full_backward_pre_hook(_logged(log, f"pre{index}"))
            model[index].register_full_backward_hook(_logged(log, f"hook{index}"))
        model[1].register_full_backward_pre_hook(lambda m, grad_output: (grad_output[0] * 10,))
        if input_requires_grad:
            model[0].register_full_backward_hook(lambda m, gi, go: (gi[0] * -1,))
        x = _inputs(lib, input_requires_grad)
        if input_requires_grad:
            model(x).sum().backward()
        else:
            with pytest.warns(UserWarning, match="Full backward hook is firing when gradients"):
                model(x).sum().backward()
        return [log, x.grad, [p.grad for p in model.parameters()]]
    assert_same(program)


def test_full_backward_hook_with_several_inputs_and_outputs_matches_torch():
    def program(lib):
        log = []

        class Mix(lib.nn.Module):
            def forward(self, a, scale, b):
                return a * b * scale, a - b

        module = Mix()
        module.register_full_backward_hook(_logged(log, "hook"))
        module.register_full_backward_pre_hook(_logged(log, "pre"))
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, -1.0])
        prod, diff = module(a, 2.0, b)
        (prod.sum() + 3 * diff.sum()).backward()
        return [log, a.grad]
    assert_same(program)


def test_backward_hook_errors_match_torch():
    def wrong_count(lib):
        layer = _two_layer(lib)[0]
        layer.register_full_backward_hook(lambda m, gi, go: (gi[0], gi[0]))
        layer(_inputs(lib)).sum().backward()
    same_error(wrong_count)

    def wrong_pre_count(lib):
        layer = _two_layer(lib)[0]
        layer.register_full_backward_pre_hook(lambda m, go: (go[0], go[0]))
        layer(_inputs(lib)).sum().backward()
    same_error(wrong_pre_count)

    def returns_grads_without_inputs(lib):
        layer = _two_layer(lib)[0]
        layer.register_full_backward_hook(lambda m, gi, go: (go[0],))
        with pytest.warns(UserWarning, match="Full backward hook is firing"):
            layer(_inputs(lib, requires_grad=False)).sum().backward()
    same_error(returns_grads_without_inputs)


def test_backward_hook_node_name_and_handles_match_torch():
    def program(lib):
        log = []
        layer = _two_layer(lib)[0]
        handle = layer.register_full_backward_hook(_logged(log, "hook"))
        out = layer(_inputs(lib))
        name = out.grad_fn.name()
        handle.remove()
        layer(_inputs(lib)).sum().backward()
        with lib.no_grad():
            unhooked = layer(_inputs(lib)).grad_fn
        return [name, log, unhooked]
    assert_same(program)


def test_named_modules_matches_torch():
    def program(lib):
        model = lib.nn.Sequential(_two_layer(lib), lib.nn.ReLU())
        model.add_module("shared", model[0][0])
        return [[name, type(m).__name__] for name, m in model.named_modules()] + \
            [[name for name, _ in model.named_modules(prefix="root", remove_duplicate=False)]]
    assert_same(program)

# -- state dicts ----------------------------------------------------------------------------


class _WithBuffer:
    """A model with a persistent and a non-persistent buffer, built for either library."""

    @staticmethod
    def make(lib):
        model = _two_layer(lib)
        model[0].register_buffer("running", lib.tensor([1.0, 2.0]))
        model[0].register_buffer("scratch", lib.zeros(2), persistent=False)
        return model


def test_state_dict_round_trip_matches_torch():
    def program(lib):
        source = _WithBuffer.make(lib)
        state = source.state_dict()
        target = _WithBuffer.make(lib)
        with lib.no_grad():
            for p in target.parameters():
                p.zero_()
        result = target.load_state_dict(state)
        return [list(state), dict(state), [result.missing_keys, result.unexpected_keys],
                dict(target.state_dict()), [p.requires_grad for p in target.parameters()]]
    assert_same(program)


def test_load_state_dict_not_strict_reports_keys_as_torch():
    def program(lib):
        state = _WithBuffer.make(lib).state_dict()
        del state["0.weight"]
        state["extra.bias"] = lib.ones(1)
        result = _WithBuffer.make(lib).load_state_dict(state, strict=False)
        return [result.missing_keys, result.unexpected_keys, str(result),
                str(_WithBuffer.make(lib).load_state_dict(_WithBuffer.make(lib).state_dict()))]
    assert_same(program)


@pytest.mark.parametrize("damage", ["missing", "unexpected", "both", "shape", "not-tensor"])
def test_load_state_dict_errors_match_torch(damage):
    def program(lib):
        state = _WithBuffer.make(lib).state_dict()
        if damage in ("missing", "both"):
            del state["2.bias"]
        if damage in ("unexpected", "both"):
            state["head.weight"] = lib.ones(1)
        if damage == "shape":
            state["0.running"] = lib.ones(3)
        if damage == "not-tensor":
            state["0.running"] = [1.0, 2.0]
        _WithBuffer.make(lib).load_state_dict(state)

    with pytest.raises(RuntimeError) as expected:
        program(torch)
    with pytest.raises(RuntimeError) as got:
        program(gradkit)
    assert str(got.value).replace("gradkit", "torch") == str(expected.value)


def test_load_state_dict_assign_takes_the_tensors_as_torch():
    def program(lib):
        model = _WithBuffer.make(lib)
        model[2].requires_grad_(False)
        state = {k: v * 2 for k, v in _WithBuffer.make(lib).state_dict().items()}
        model.load_state_dict(state, assign=True)
        params = dict(model.named_parameters())
        return [dict(model.state_dict()), [type(p).__name__ for p in params.values()],
                [p.requires_grad for p in params.values()],
                model[0].running is state["0.running"]]
    assert_same(program)

# -- save / load ----------------------------------------------------------------------------


def _checkpoint(lib):
    """A training checkpoint as torch tutorials write it: model, optimizer, numbers, a tensor
    stored twice."""
    model = _two_layer(lib)
    optimizer = lib.optim.Adam(model.parameters(), lr=0.1)
    model(_inputs(lib)).sum().backward()
    optimizer.step()
    shared = lib.arange(4.0).reshape(2, 2)
    return model, optimizer, {
        "epoch": 3, "loss": 0.25, "best": float("inf"), "name": "run-1", "note": None,
        "model": model.state_dict(), "optimizer": optimizer.state_dict(),
        "pair": (shared, shared), "history": [1.5, -2, True], "weight": model[0].weight,
        "ints": lib.tensor([[1, -2]]), "flags": lib.tensor([True, False]),
        "leaf": lib.tensor([1.0, 2.0], requires_grad=True)}


def _describe(loaded, lib):
    """What must survive a round trip: values, types, requires_grad, shared identity."""
    pair = loaded["pair"]
    groups = loaded["optimizer"].pop("param_groups")  # torch's groups hold more options
    return [_host(loaded), [[g["lr"], g["betas"], g["params"]] for g in groups],
            type(loaded["model"]).__name__,
            type(loaded["weight"]).__name__, loaded["weight"].requires_grad,
            loaded["leaf"].requires_grad, loaded["leaf"].is_leaf, pair[0] is pair[1],
            isinstance(loaded["pair"], tuple), sorted(loaded["optimizer"]["state"])]


@pytest.mark.parametrize("to_file", [True, False], ids=["path", "buffer"])
def test_save_load_round_trip_matches_torch(tmp_path, to_file):
    import io

    def program(lib):
        _, _, checkpoint = _checkpoint(lib)
        target = tmp_path / f"{lib.__name__}.pt" if to_file else io.BytesIO()
        lib.save(checkpoint, target)
        if not to_file:
            target.seek(0)
        return _describe(lib.load(target, weights_only=True), lib)
    assert_same(program)


def test_resuming_from_a_checkpoint_trains_on_as_torch(tmp_path):
    def program(lib):
        _, _, checkpoint = _checkpoint(lib)
        lib.save(checkpoint, tmp_path / "ckpt.pt")
        loaded = lib.load(tmp_path / "ckpt.pt", map_location="cpu")
        model = _two_layer(lib)
        optimizer = lib.optim.Adam(model.parameters(), lr=0.1)
        model.load_state_dict(loaded["model"])
        optimizer.load_state_dict(loaded["optimizer"])
        losses = []
        for _ in range(3):
            optimizer.zero_grad()
            loss = model(_inputs(lib)).pow(2).sum()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        return [losses, dict(model.state_dict())]
    assert_same(program)


def test_save_refuses_objects_it_cannot_store_safely(tmp_path):
    class Opaque:
        pass
    with pytest.raises(TypeError, match=r"cannot store obj\['layers'\]\[1\], an object of type "
                                        r".*Opaque.*pickles nothing; see docs/serialization.md"):
        gradkit.save({"layers": [gradkit.ones(1), Opaque()]}, tmp_path / "x.pt")
    with pytest.raises(TypeError, match="an object of type Linear"):
        gradkit.save(gradkit.nn.Linear(2, 2), tmp_path / "model.pt")
    with pytest.raises(TypeError, match="does not pickle"):
        import pickle
        gradkit.save(gradkit.ones(1), tmp_path / "x.pt", pickle_module=pickle)


def test_load_refuses_torch_pickles_and_foreign_files(tmp_path):
    torch.save({"w": torch.ones(2)}, tmp_path / "torch.pt")
    with pytest.raises(RuntimeError, match="a torch.save \\(pickle\\) checkpoint; gradkit reads "
                                           "only the files gradkit.save writes"):
        gradkit.load(tmp_path / "torch.pt")
    (tmp_path / "text.pt").write_text("hello")
    with pytest.raises(RuntimeError, match="not a gradkit save file"):
        gradkit.load(tmp_path / "text.pt")
    with pytest.raises(TypeError, match="does not unpickle"):
        gradkit.load(tmp_path / "text.pt", encoding="latin1")


def test_load_refuses_an_unknown_entry_in_a_crafted_manifest(tmp_path):
    import json
    import zipfile
    path = tmp_path / "crafted.pt"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("manifest.json", json.dumps({
            "format": "gradkit-save", "version": 1,
            "root": {"type": "dict", "items": [["x", {"type": "pickle", "data": "..."}]]}}))
    with pytest.raises(RuntimeError, match="unknown entry type 'pickle'"):
        gradkit.load(path)


def test_load_to_cuda_without_a_gpu_says_so_as_torch(tmp_path):
    if gradkit.cuda.is_available():
        pytest.skip("a GPU is present")
    gradkit.save(gradkit.ones(1), tmp_path / "x.pt")
    torch.save(torch.ones(1), tmp_path / "t.pt")
    with pytest.raises(RuntimeError) as expected:
        torch.load(tmp_path / "t.pt", map_location="cuda")
    with pytest.raises(RuntimeError, match=_escaped(str(expected.value))):
        gradkit.load(tmp_path / "x.pt", map_location="cuda")
    assert gradkit.load(tmp_path / "x.pt", map_location={"cuda:0": "cpu"}).device.type == "cpu"


def test_save_load_keeps_dtypes_devices_and_sizes(tmp_path):
    values = [gradkit.float64, gradkit.device("cpu"), gradkit.Size([2, 3]), 1 + 2j,
              gradkit.zeros(2, dtype=gradkit.complex64), np.arange(3), float("-inf")]
    gradkit.save(values, tmp_path / "x.pt")
    loaded = gradkit.load(tmp_path / "x.pt")
    assert loaded[:4] == values[:4] and type(loaded[2]) is gradkit.Size
    assert loaded[4].dtype == gradkit.complex64
    np.testing.assert_array_equal(loaded[5], values[5])
    assert loaded[6] == float("-inf")


@pytest.mark.parametrize("module", ["gradkit.serialization", "gradkit.serialization_span",
                                    "gradkit.nn.utils.clip_grad",
                                    "gradkit.nn.functional", "gradkit.nn.utils.prune"])
def test_docstring_examples(module):
    import doctest
    import importlib
    result = doctest.testmod(importlib.import_module(module),
                             extraglobs={"gradkit": gradkit, "F": gradkit.nn.functional})
    assert result.attempted > 0 and result.failed == 0

# -- binary_cross_entropy_with_logits: one node, as torch ---------------------------------


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_bce_with_logits_node_values_and_gradients_match_torch(reduction, weighted):
    def program(lib):
        x = lib.tensor([[0.5, -1.0, 2.0], [3.0, -20.0, 0.0]], requires_grad=True)
        target = lib.tensor([[1.0, 0.0, 0.5], [0.2, 1.0, 0.0]], requires_grad=True)
        extra = {"weight": lib.tensor([1.0, 2.0, 0.5]),
                 "pos_weight": lib.tensor([3.0, 1.0, 0.25])} if weighted else {}
        loss = lib.nn.functional.binary_cross_entropy_with_logits(x, target, reduction=reduction,
                                                                  **extra)
        (loss * lib.arange(1.0, loss.numel() + 1).reshape(loss.shape)).sum().backward()
        return [loss.grad_fn.name(), loss, x.grad, target.grad]
    assert_same(program)


@pytest.mark.parametrize("weighted", [False, True])
def test_bce_with_logits_gradgradcheck_and_forward_mode(weighted):
    from gradkit.autograd import forward_ad
    F = gradkit.nn.functional
    extra = {"weight": gradkit.tensor([1.0, 2.0, 0.5], dtype=gradkit.float64),
             "pos_weight": gradkit.tensor([3.0, 1.0, 0.25], dtype=gradkit.float64)} \
        if weighted else {}
    x = gradkit.tensor([0.5, -1.0, 2.0], dtype=gradkit.float64, requires_grad=True)
    target = gradkit.tensor([1.0, 0.0, 0.5], dtype=gradkit.float64, requires_grad=True)

    def f(a, b):
        return F.binary_cross_entropy_with_logits(a, b, **extra)
    assert gradcheck(f, (x, target))
    assert gradgradcheck(f, (x, target))
    tangent = gradkit.tensor([1.0, -0.5, 2.0], dtype=gradkit.float64)
    with forward_ad.dual_level():
        out = f(forward_ad.make_dual(x.detach(), tangent), target.detach())
        jvp = forward_ad.unpack_dual(out).tangent
    (grad,) = gradkit.autograd.grad(f(x, target), x)
    np.testing.assert_allclose(jvp.item(), (grad * tangent).sum().item())


def test_bce_with_logits_weight_requiring_grad_is_refused_as_torch():
    same_error(lambda lib: lib.nn.functional.binary_cross_entropy_with_logits(
        lib.zeros(2), lib.ones(2), weight=lib.ones(2, requires_grad=True)))

# -- bfloat16: refused with a clear error -------------------------------------------------


@pytest.mark.parametrize("make", [
    lambda g, np_bf16: g.tensor([1.5], dtype=g.bfloat16),
    lambda g, np_bf16: g.zeros(2, dtype=g.bfloat16),
    lambda g, np_bf16: g.randn(2, dtype=g.bfloat16),
    lambda g, np_bf16: g.ones(2).to(g.bfloat16),
    lambda g, np_bf16: g.ones(2).to(dtype=g.bfloat16),
    lambda g, np_bf16: g.nn.Linear(2, 2).to(g.bfloat16),
    lambda g, np_bf16: g.from_numpy(np.ones(2, np_bf16)),
    lambda g, np_bf16: g.tensor(np.ones(2, np_bf16)),
    lambda g, np_bf16: g.ones(2).sum(dtype=g.bfloat16),
    lambda g, np_bf16: g.ones(2, 2).softmax(1, g.bfloat16),
], ids=["tensor", "zeros", "randn", "to", "to-kw", "module-to", "from_numpy", "tensor-array",
        "sum-dtype", "softmax-dtype"])
def test_bfloat16_tensors_are_refused_naming_the_reasons(make):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    with pytest.raises(TypeError, match="gradkit does not support bfloat16 tensors: .*float32"
                                        ".*float64.* use float32 or float16"):
        make(gradkit, ml_dtypes.bfloat16)


def test_bfloat16_dtype_can_be_named_and_saved(tmp_path):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    assert repr(gradkit.bfloat16) == "gradkit.bfloat16" and gradkit.bfloat16.is_floating_point
    assert gradkit.ones(1).dtype != gradkit.bfloat16
    array = np.array([1.5, -2.25], dtype=ml_dtypes.bfloat16)  # a NumPy array may be bfloat16
    gradkit.save({"dtype": gradkit.bfloat16, "array": array}, tmp_path / "x.pt")
    loaded = gradkit.load(tmp_path / "x.pt")
    assert loaded["dtype"] is gradkit.bfloat16
    assert loaded["array"].dtype == array.dtype and loaded["array"].tolist() == [1.5, -2.25]


def test_without_ml_dtypes_bfloat16_is_named_as_missing():
    from gradkit._not_implemented import module_getattr
    with pytest.raises(AttributeError, match="gradkit does not implement torch.bfloat16 "
                                             r"\(the dtype needs the ml_dtypes package"):
        module_getattr("gradkit")("bfloat16")
