"""torch's test/test_utils.py TestCheckpoint (CPU): checkpoint_sequential against the plain
model (lists, Sequential, ModuleList, each use_reentrant), which segments recompute, the
dropout stream replayed, non-tensor inputs and outputs, partial gradients, and a checkpoint run
inside a ``with device(...)`` block."""
import importlib
import warnings

import numpy as np
import pytest

from .twin import data, like_torch, raises_like_torch

REENTRANT = pytest.mark.parametrize("use_reentrant", [True, False])


def _checkpointing(lib):
    return importlib.import_module(f"{lib.__name__}.utils.checkpoint")


def _model(lib):
    """torch's 100-50-20-5 ReLU stack, with weights from NumPy data."""
    model = lib.nn.Sequential(lib.nn.Linear(100, 50), lib.nn.ReLU(), lib.nn.Linear(50, 20),
                              lib.nn.ReLU(), lib.nn.Linear(20, 5), lib.nn.ReLU())
    with lib.no_grad():
        for seed, p in enumerate(model.parameters()):
            p.copy_(lib.tensor(data(*p.shape, seed=seed) * 0.1))
    return model


def _input(lib, requires_grad=True):
    return lib.tensor(data(1, 100, seed=9), dtype=lib.float32, requires_grad=requires_grad)


@REENTRANT
@pytest.mark.parametrize("given", ["list", "Sequential", "ModuleList"])
def test_checkpoint_sequential_gives_the_plain_models_results(use_reentrant, given):
    # torch: test_checkpoint, test_checkpoint_module_list
    def program(lib):
        model = _model(lib)
        functions = {"list": list(model.children()), "Sequential": model,
                     "ModuleList": lib.nn.ModuleList(list(model.children()))}[given]
        x = _input(lib)
        out = _checkpointing(lib).checkpoint_sequential(functions, 2, x,
                                                        use_reentrant=use_reentrant)
        out.sum().backward()
        plain_model, plain_x = _model(lib), _input(lib)
        plain_model(plain_x).sum().backward()
        return ([out, x.grad] + [p.grad for p in model.parameters()],
                [plain_model(plain_x), plain_x.grad] + [p.grad for p in plain_model.parameters()])

    checkpointed, plain = like_torch(program, rtol=1e-5, atol=1e-6)
    for got, expected in zip(checkpointed, plain, strict=True):
        np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), rtol=1e-6)


@REENTRANT
def test_only_the_checkpointed_segments_run_again(use_reentrant):
    # torch: test_checkpoint_trigger
    def program(lib):
        class Net(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.counter = 0

            def forward(self, x):
                self.counter += 1
                return x * lib.tensor(2.0)

        nets = [Net() for _ in range(10)]
        out = _checkpointing(lib).checkpoint_sequential(
            nets, 2, lib.tensor(data(3, 4), requires_grad=True), use_reentrant=use_reentrant)
        counts = [n.counter for n in nets]
        out.sum().backward()
        return counts, [n.counter for n in nets]

    assert like_torch(program) == ([1] * 10, [2] * 5 + [1] * 5)


def test_reentrant_checkpoint_sequential_refuses_grad_and_the_other_does_not():
    # torch: test_checkpoint_valid
    def reentrant(lib):
        model, x = _model(lib), _input(lib)
        out = _checkpointing(lib).checkpoint_sequential(list(model.children()), 2, x,
                                                        use_reentrant=True)
        lib.autograd.grad([out], [x], [lib.ones(1, 5)], create_graph=True)

    raises_like_torch(reentrant, RuntimeError, "torch.utils.checkpoint is incompatible")

    def program(lib):
        model, x = _model(lib), _input(lib)
        plain = lib.autograd.grad([model(x)], [x], [lib.ones(1, 5)], create_graph=True)
        out = _checkpointing(lib).checkpoint_sequential(list(model.children()), 2, x,
                                                        use_reentrant=False)
        checkpointed = lib.autograd.grad([out], [x], [lib.ones(1, 5)], create_graph=True)
        return plain[0], checkpointed[0], checkpointed[0].requires_grad

    plain, checkpointed, requires_grad = like_torch(program, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(plain.detach().numpy(), checkpointed.detach().numpy())
    assert requires_grad


@REENTRANT
def test_checkpoint_sequential_takes_one_input(use_reentrant):
    # torch: test_checkpoint_sequential_deprecated_multiple_args, ..._no_args
    def two_inputs(lib):
        class Two(lib.nn.Module):
            def forward(self, a, b):
                return a, b

        a = b = _input(lib)
        _checkpointing(lib).checkpoint_sequential(lib.nn.Sequential(Two()), 1, a, b)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (use_reentrant is not passed, as in torch's test)
        raises_like_torch(two_inputs, TypeError, "missing 1 required positional argument: 'b'")
        raises_like_torch(lambda lib: _checkpointing(lib).checkpoint_sequential(
            lib.nn.Sequential(), 1), TypeError, "missing 1 required positional argument: 'input'")


def test_checkpoint_sequential_warns_without_use_reentrant_and_refuses_other_keywords():
    def unpassed(lib):
        _checkpointing(lib).checkpoint_sequential([lib.nn.ReLU()], 1, _input(lib))

    with pytest.warns(UserWarning, match="checkpoint_sequential: the use_reentrant "
                                         "parameter should be passed explicitly"):
        like_torch(unpassed)
    raises_like_torch(lambda lib: _checkpointing(lib).checkpoint_sequential(
        [lib.nn.ReLU()], 1, _input(lib), use_reentrant=False, early_stop=True),
        ValueError, "^Unexpected keyword arguments: early_stop$")


def test_reentrant_checkpoint_replays_the_dropout_stream():
    # torch: test_checkpoint_rng_cpu
    def program(lib):
        lib.manual_seed(3)
        x = lib.randn(2000).requires_grad_()
        first, second = lib.nn.Dropout(), lib.nn.Dropout()
        state = lib.get_rng_state()
        _checkpointing(lib).checkpoint(second, first(x), use_reentrant=True).sum().backward()
        checkpointed, x.grad = x.grad, None
        lib.set_rng_state(state)
        second(first(x)).sum().backward()
        return bool((checkpointed == x.grad).all())

    assert like_torch(program) is True


def test_dropout_without_preserving_the_rng_state_runs():
    # torch: test_checkpoint_not_preserve_rng_state_and_without_reentrant (on the CPU)
    def program(lib):
        x = lib.randn(2).requires_grad_()
        out = _checkpointing(lib).checkpoint(lib.nn.Dropout(), x, use_reentrant=False,
                                             preserve_rng_state=False)
        out.sum().backward()
        return x.grad.shape == (2,)

    assert like_torch(program) is True


def _mixed_outputs(t1, t2, scale, t3):
    t4, t5 = t1 + t2 * t3, t1 * t2 + t3
    t4 *= scale
    t5 *= scale
    return scale, t4, None, True, t5, "bar", t1


def test_non_tensor_inputs_and_outputs_pass_through():
    # torch: test_checkpoint_non_tensor, test_checkpoint_non_tensor_inputs_outputs
    def program(lib):
        t1, t2 = (lib.tensor(data(10, seed=s), requires_grad=True) for s in (1, 2))
        res = _checkpointing(lib).checkpoint(_mixed_outputs, t1, t2, 3, lib.tensor(data(10)),
                                             use_reentrant=True)
        res[1].sum().backward(retain_graph=True)
        res[4].sum().backward(retain_graph=True)
        res[6].sum().backward()
        x = lib.tensor(data(1, 100), requires_grad=True)
        _checkpointing(lib).checkpoint(lambda a, b: a if b is None else a + b, x, None,
                                       use_reentrant=True).sum().backward()
        return ([res[i] for i in (0, 2, 3, 5)], res[1], res[4], res[6] is t1,
                type(res[6].grad_fn).__name__, t1.grad, t2.grad, x.grad)

    got = like_torch(program)
    assert got[0] == [3, None, True, "bar"] and not got[3]
    assert got[4] == "CheckpointFunctionBackward"

    def twice(lib):
        t = lib.tensor(data(10), requires_grad=True)
        res = _checkpointing(lib).checkpoint(_mixed_outputs, t, t, 3, t.detach(),
                                             use_reentrant=True)
        res[6].sum().backward()
        res[6].sum().backward()

    raises_like_torch(twice, RuntimeError, "Trying to backward through the graph a second time")


def test_a_checkpoint_of_numbers_returns_numbers():
    # torch: test_checkpoint_no_tensors
    def program(lib):
        return list(_checkpointing(lib).checkpoint(_mixed_outputs, 0.5, 0.25, 3, 0.125,
                                                   use_reentrant=True))

    assert like_torch(program) == [3, 1.59375, None, True, 0.75, "bar", 0.5]


def test_partial_gradients_and_outputs_that_need_none():
    # torch: test_checkpoint_partial_grad
    def program(lib):
        a, b = _input(lib), _input(lib, requires_grad=False)
        out = _checkpointing(lib).checkpoint(lambda t1, t2: (t1, t2), a, b, use_reentrant=True)
        out[0].sum().backward()
        return a.grad, out[1].requires_grad

    like_torch(program)

    def no_output_needs_grad(lib):
        a, b = _input(lib, requires_grad=False), _input(lib)
        _checkpointing(lib).checkpoint(lambda t1, t2: t1, a, b,
                                       use_reentrant=True).sum().backward()

    raises_like_torch(no_output_needs_grad, RuntimeError,
                      r"none of output has requires_grad=True, this checkpoint\(\) is not "
                      "necessary")


@pytest.mark.parametrize("backward_in_the_block", [True, False])
def test_recomputation_runs_under_the_forwards_device_block(backward_in_the_block):
    # torch: test_checkpoint_preserves_device_context (the CPU, as "cpu:0", for the block's
    # device: the recomputation sees it, also from a backward run after the block)
    def program(lib):
        seen = []

        def creates_a_tensor(x):
            made = lib.empty(4).fill_(1)
            seen.append((made.device.type, str(lib.get_default_device())))
            return x * made.sum()

        x = lib.tensor(data(4), requires_grad=True)
        with lib.device("cpu:0") as entered:
            out = _checkpointing(lib).checkpoint(creates_a_tensor, x, use_reentrant=False)
            if backward_in_the_block:
                out.sum().backward()
        if not backward_in_the_block:
            out.sum().backward()
        return seen, str(entered), str(lib.get_default_device()), x.grad

    assert like_torch(program)[:3] == ([("cpu", "cpu:0")] * 2, "cpu:0", "cpu")
