"""torch's expectations of saved tensors and saved-tensor hooks: what a node saved (and which
tensor objects it gives back), default hooks (nesting, disabling, errors, double backward,
wrapped numbers), save_on_cpu with checkpoint, and a pack hook that writes its input."""
import gc
import os
import tempfile
import uuid
import warnings
import weakref

import pytest

from .test_autograd_checkpoint import checkpoint_of
from .twin import data, like_torch, raises_like_torch


def _leaf(lib, *shape, seed=0, dtype="float64"):
    return lib.tensor(data(*shape, seed=seed), dtype=getattr(lib, dtype), requires_grad=True)


def hooks(lib, pack, unpack):
    return lib.autograd.graph.saved_tensors_hooks(pack, unpack)


def test_saved_inputs_are_the_tensors_themselves_and_outputs_are_not():
    # torch: test_no_unnecessary_unwrapping
    def program(lib):
        a = _leaf(lib, 5)
        original = a.detach().clone()
        b = a * a
        c = a * b
        d = lib.exp(a)
        same = [b.grad_fn._saved_self is a, b.grad_fn._saved_other is a,
                c.grad_fn._saved_self is a, c.grad_fn._saved_other is b,
                d.grad_fn._saved_result is d]
        result = d.grad_fn._saved_result
        c.sum().backward()
        return same, result, d, a.detach() - original

    same, result, d, change = like_torch(program)
    assert same == [True, True, True, True, False] and (change.numpy() == 0).all()

    def freed(lib):
        a = _leaf(lib, 5)
        c = a * (a * a)
        c.sum().backward()
        return c.grad_fn._saved_self

    raises_like_torch(freed, RuntimeError, "after they have already been freed")


def test_a_saved_output_shares_its_version_counter():
    # torch: test_saved_variable_version_counter
    def program(lib):
        b = lib.exp(_leaf(lib, 2))
        unpacked = b.grad_fn._saved_result
        before = (b._version == unpacked._version, (b - unpacked).detach())
        with lib.no_grad():
            b += 1
        return before, (b._version == unpacked._version, (b - unpacked).detach())

    (same_before, diff_before), (same_after, diff_after) = like_torch(program)
    assert same_before and same_after and (diff_after.numpy() == 0).all()


def test_detaching_a_saved_input_in_place_breaks_backward_but_not_a_saved_output():
    # torch: test_saved_variable_saved_original_inplace_detach
    def saved_input(lib):
        a = lib.tensor(1.0, requires_grad=True).clone()
        b = a.sin()
        a.detach_()
        b.backward()

    raises_like_torch(saved_input, RuntimeError,
                      "Trying to use a saved tensor that has been detached")

    def saved_output(lib):
        leaf = lib.tensor(1.0, requires_grad=True)
        a = leaf.clone()
        b = a.exp()
        a.detach_()
        b.backward()
        return leaf.grad

    like_torch(saved_output)


@pytest.mark.parametrize("pack_factor,unpack_factor", [(1, 1), (2, 0.5), (2, 1)])
def test_default_hooks_change_what_backward_reads(pack_factor, unpack_factor):
    # torch: test_saved_variable_packing_unpacking_saved_original_with_default_hooks
    def program(lib):
        with hooks(lib, lambda x: pack_factor * x, lambda x: unpack_factor * x):
            a = _leaf(lib, 5)
            y = a * a
            saved = (y.grad_fn._saved_self.detach(), y.grad_fn._saved_other.detach())
            y.sum().backward()
        return saved, a.grad, a.detach()

    (s1, s2), grad, a = like_torch(program)
    factor = pack_factor * unpack_factor
    assert abs(s1.numpy() - factor * a.numpy()).max() < 1e-12
    assert abs(grad.numpy() - 2 * factor * a.numpy()).max() < 1e-12


def test_default_hooks_pack_each_saved_tensor_and_stop_at_the_block_end():
    # torch: ..._with_default_hooks (the warnings and the exit),
    # test_saved_variable_packing_unpacking_did_not_save_original_with_default_hooks
    def program(lib):
        def pack(x):
            warnings.warn("pack", stacklevel=2)
            return x

        with hooks(lib, pack, lambda x: x):
            a = lib.ones(5, requires_grad=True)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                a * a
        with hooks(lib, lambda x: x, lambda x: x):
            b = _leaf(lib, 5)
            y = lib.exp(b)
            result = y.grad_fn._saved_result
            y.sum().backward()
        c = _leaf(lib, 5, seed=1)
        z = c * c
        z.sum().backward()
        return len(caught), result, y, b.grad, z.grad_fn is not None, c.grad

    count, *_ = like_torch(program)
    assert count == 2


def test_nested_default_hooks_use_the_innermost():
    # torch: test_setting_default_saved_variable_hooks_twice_should_not_fail, ..._use_inner
    def program(lib):
        with hooks(lib, lambda x: 3 * x, lambda x: 3 * x):
            b = _leaf(lib, 5)
            with hooks(lib, lambda x: 5 * x, lambda x: 5 * x):
                a = _leaf(lib, 5, seed=1)
                y = a * a
            z = b * b
        y.sum().backward()
        z.sum().backward()
        return a.grad / a.detach(), b.grad / b.detach()

    ratio_a, ratio_b = like_torch(program)
    assert abs(ratio_a.numpy() - 50).max() < 1e-9 and abs(ratio_b.numpy() - 18).max() < 1e-9


def test_disabled_hooks_refuse_to_start_and_nest():
    # torch: test_disabling_saved_tensor_hooks, test_disabling_saved_tensor_hooks_nested
    def hooks_inside_disabled(lib):
        with lib.autograd.graph.disable_saved_tensors_hooks("error message"):
            with hooks(lib, lambda x: x, lambda x: x):
                pass

    def disabled_inside_hooks(lib):
        with hooks(lib, lambda x: x, lambda x: x):
            with lib.autograd.graph.disable_saved_tensors_hooks("error message"):
                pass

    def nested(lib):
        with lib.autograd.graph.disable_saved_tensors_hooks("outer"):
            with lib.autograd.graph.disable_saved_tensors_hooks("inner"):
                with hooks(lib, lambda x: x, lambda x: x):
                    pass

    raises_like_torch(hooks_inside_disabled, RuntimeError, "error message")
    raises_like_torch(disabled_inside_hooks, RuntimeError, "error message")
    raises_like_torch(nested, RuntimeError, "inner")

    def outer_again(lib):
        with lib.autograd.graph.disable_saved_tensors_hooks("outer"):
            with lib.autograd.graph.disable_saved_tensors_hooks("inner"):
                pass
            with hooks(lib, lambda x: x, lambda x: x):
                pass

    raises_like_torch(outer_again, RuntimeError, "outer")


def test_errors_of_pack_and_unpack_hooks_reach_the_caller():
    # torch: test_saved_tensor_hooks_custom_error_propagation
    class CustomError(Exception):
        pass

    def fail(what):
        def hook(x):
            raise CustomError(what)
        return hook

    def in_pack(lib):
        with hooks(lib, fail("pack"), lambda x: x):
            lib.sin(lib.tensor(1.0, requires_grad=True))

    def in_unpack(lib):
        with hooks(lib, lambda x: x, fail("unpack")):
            lib.sin(lib.tensor(1.0, requires_grad=True)).backward()

    raises_like_torch(in_pack, CustomError, "pack")
    raises_like_torch(in_unpack, CustomError, "unpack")


def test_a_function_saving_an_intermediate_under_hooks():
    # torch: test_saved_tensor_hooks_custom_function_intermediates
    def program(lib):
        class ExpTimesIntermediate(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x.exp().clone().detach_().requires_grad_(True))
                return x.exp()

            @staticmethod
            def backward(ctx, g):
                intermediate, = ctx.saved_tensors
                return g * intermediate

        a = lib.tensor(1.0, requires_grad=True)
        with hooks(lib, lambda x: x, lambda x: x):
            out = ExpTimesIntermediate.apply(a)
        out.backward()
        return a.grad

    like_torch(program)


def test_hooks_run_once_per_saved_tensor():
    # torch: test_unpack_hooks_exec_count
    def program(lib):
        counts = [0, 0]

        def pack(x):
            counts[0] += 1
            return x

        def unpack(x):
            counts[1] += 1
            return x

        x, y = lib.ones(4, requires_grad=True), lib.ones(4)
        with hooks(lib, pack, unpack):
            out = x * y
            seen = list(counts)
            out.sum().backward()
        return seen, counts

    assert like_torch(program) == ([1, 0], [1, 1])


def test_writing_what_unpack_returned_leaves_the_input_alone():
    # torch: test_saved_tensors_hook_version_counter_not_shared
    def program(lib):
        a = lib.tensor(1.0, requires_grad=True)
        replacement = a.clone()
        versions = []

        class Sin(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x.sin()

            @staticmethod
            def backward(ctx, g):
                x, = ctx.saved_tensors
                versions.append(a._version)
                x.add_(1)
                versions.append(a._version)
                return g

        with hooks(lib, lambda x: replacement, lambda x: x):
            b = Sin.apply(a)
        b.backward()
        return versions, a.grad

    versions, _ = like_torch(program)
    assert versions[0] == versions[1]


def test_save_on_cpu_with_checkpoint_gives_the_plain_gradients():
    # torch: test_save_on_cpu_and_checkpoint
    def program(lib):
        a = _leaf(lib, 2, 2)
        a.pow(2).pow(2).pow(2).pow(2).sum().backward()
        plain = a.grad.clone()
        a.grad = None
        with lib.autograd.graph.save_on_cpu():
            h = checkpoint_of(lib)(lambda x: x.pow(2).pow(2), a.pow(2), use_reentrant=False)
            h.pow(2).sum().backward()
        outer = a.grad.clone()
        a.grad = None

        def inner_save_on_cpu(x):
            h = x.pow(2)
            with lib.autograd.graph.save_on_cpu():
                h = h.pow(2).pow(2)
            return h.pow(2)

        checkpoint_of(lib)(inner_save_on_cpu, a, use_reentrant=False).sum().backward()
        return plain, outer, a.grad

    plain, outer, inner = like_torch(program)
    assert abs(outer.numpy() - plain.numpy()).max() < 1e-9
    assert abs(inner.numpy() - plain.numpy()).max() < 1e-9


def test_a_pack_hook_that_writes_its_input_is_refused():
    # torch: test_pack_hook_with_inplace_modification_should_fail
    def increments(x):
        x += 1
        return x

    def program(lib):
        a = _leaf(lib, 5)
        with hooks(lib, increments, lambda x: x):
            lib.exp(a)

    raises_like_torch(program, RuntimeError,
                      "A saved tensor pack hook is modifying its input in place.")


def test_saved_tensors_kept_on_disk():
    # torch: test_saving_variable_to_disk
    def program(lib):
        with tempfile.TemporaryDirectory() as folder:
            def pack(x):
                name = os.path.join(folder, str(uuid.uuid4()))
                lib.save(x, name)
                return name

            with hooks(lib, pack, lambda name: lib.load(name)):
                a = lib.ones(5, requires_grad=True)
                y = a * a
                saved = y.grad_fn._saved_self
                y.sum().backward()
        return saved.detach(), a.grad

    saved, grad = like_torch(program)
    assert (saved.numpy() == 1).all() and (grad.numpy() == 2).all()


@pytest.mark.parametrize("where", ["forward", "double backward", "both"])
def test_default_hooks_in_double_backward(where):
    # torch: test_default_saved_tensors_hooks_double_backward
    def program(lib):
        doubling = hooks(lib, lambda x: 2 * x, lambda x: x)
        forward_hooks = doubling if where in ("forward", "both") else hooks(lib, lambda x: x,
                                                                           lambda x: x)
        with forward_hooks:
            a = _leaf(lib, 5)
            s = (a ** 3).sum()
        backward_hooks = hooks(lib, lambda x: 2 * x, lambda x: x) \
            if where in ("double backward", "both") else hooks(lib, lambda x: x, lambda x: x)
        with backward_hooks:
            g, = lib.autograd.grad(s, (a,), create_graph=True)
            g.sum().backward()
        return a.grad / a.detach()

    ratio = like_torch(program)
    expected = {"forward": 12, "double backward": 24, "both": 48}[where]
    assert abs(ratio.numpy() - expected).max() < 1e-9


def test_a_python_number_operand_is_not_packed():
    # torch: test_wrapped_number_saved_tensors_hooks
    def program(lib):
        def never(x):
            raise RuntimeError("this hook should not be called")

        with hooks(lib, never, never):
            a = _leaf(lib, 5)
            return lib.autograd.grad((a * 3).sum(), (a,))

    like_torch(program)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("pin_memory", [True, False])
def test_save_on_cpu_keeps_values_and_dtype(dtype, pin_memory):
    # torch: test_graph_save_on_cpu (dense CPU tensors)
    def program(lib):
        with lib.autograd.graph.save_on_cpu(pin_memory):
            a = _leaf(lib, 5, dtype=dtype)
            y = a * a
            saved = y.grad_fn._saved_self
            kept = (str(saved.dtype).split(".")[1], (saved - a).detach(),
                    (y.grad_fn._saved_other - a).detach())
            y.sum().backward()
        return kept, (a.grad - 2 * a).detach()

    (dtype_name, d1, d2), grad_diff = like_torch(program)
    assert dtype_name == dtype and not d1.numpy().any() and not grad_diff.numpy().any()


def test_leaving_a_hooks_block_from_unpack_does_not_break_the_stack():
    # torch: test_saved_tensor_hooks_extra_exit_during_bw_no_crash (misuse that must not crash)
    def program(lib):
        def unpack(x):
            inner.__exit__()
            return x

        inner = hooks(lib, lambda x: x, unpack)
        outer = hooks(lib, lambda x: x, lambda x: x)
        grads = []
        for _ in range(3):
            with outer:
                inner.__enter__()
                x = _leaf(lib, 3, 3)
                x.sin().sum().backward()
                grads.append(x.grad)
        for _ in range(3):
            inner.__exit__()
        a = lib.tensor(1.0, requires_grad=True)
        a.exp().backward()  # no hooks are left on the stack
        return grads, a.grad

    like_torch(program)


def test_entering_a_hooks_block_from_unpack_keeps_nothing_alive():
    # torch: test_saved_tensor_hooks_extra_enter_during_bw_no_leak
    def program(lib):
        def scope():
            def unpack(x):
                weak_block().__enter__()
                return x

            block = hooks(lib, lambda x: x, unpack)
            weak_block = weakref.ref(block)
            x = _leaf(lib, 3, 3)
            with block:
                x.sin().sum().backward()
            return weakref.ref(unpack)

        gc.disable()
        try:
            return scope()() is None
        finally:
            gc.enable()

    assert like_torch(program) is True
