"""torch's expectations from the newer test file not covered elsewhere: setup_context with
default forward arguments, `.grad` read from several threads, what a dual keeps alive, tangent
sizes and storage, and anomaly mode's NaN check switch and metadata cleanup."""
import gc
import threading
import warnings
import weakref
from concurrent.futures import ThreadPoolExecutor

import pytest

from .functions import identity_function
from .twin import like_torch, raises_like_torch


@pytest.mark.parametrize("kind", ["staticmethod", "classmethod"])
def test_setup_context_sees_forward_default_arguments(kind):
    # torch: test_setup_context_when_forward_has_default_args
    def program(lib):
        def forward(x, y=3):
            return lib.pow(x, y)

        def setup_context(ctx, inputs, output):
            x, y = inputs
            ctx.save_for_backward(x)
            ctx.y = y

        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * ctx.y * lib.pow(x, ctx.y - 1), None

        if kind == "staticmethod":
            members = {"forward": staticmethod(forward),
                       "setup_context": staticmethod(setup_context),
                       "backward": staticmethod(backward)}
        else:
            members = {"forward": classmethod(lambda cls, x, y=3: forward(x, y)),
                       "setup_context": classmethod(lambda cls, *a: setup_context(*a)),
                       "backward": classmethod(lambda cls, *a: backward(*a))}
        cube = type("PowFunction", (lib.autograd.Function,), members)
        x = lib.tensor(2.0, requires_grad=True)
        y = cube.apply(x)
        return y, lib.autograd.grad(y, x)[0]

    y, grad = like_torch(program)
    assert float(y) == 8 and float(grad) == 12


def test_grad_read_from_threads_is_one_tensor():
    # torch: test_grad_thread_safety
    def program(lib):
        same = []
        for _ in range(5):
            t = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
            (t ** 2).sum().backward()
            barrier = threading.Barrier(4)

            def read(t=t, barrier=barrier):
                barrier.wait()
                return t.grad

            with ThreadPoolExecutor(max_workers=4) as pool:
                futures = [pool.submit(read) for _ in range(4)]
                same.append(all(f.result() is t.grad for f in futures))
        return same

    assert like_torch(program) == [True] * 5


def test_a_dual_keeps_its_tangent_alive_and_nothing_else_does():
    # torch: test_forward_level_cleanup
    def program(lib):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            tangent = lib.ones(2, requires_grad=True)
            ref = weakref.ref(tangent)
            dual = fw.make_dual(lib.zeros(2), tangent)
            reused = fw.unpack_dual(dual).tangent is tangent
            del tangent
            alive_with_dual = ref() is not None
            del dual
            return reused, alive_with_dual, ref() is None

    assert like_torch(program) == (True, True, True)


def test_tangent_size_must_match_and_a_slice_of_a_larger_tangent_does():
    # torch: test_size_check
    def program(lib):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            fw.make_dual(lib.zeros(2), lib.ones(3))

    raises_like_torch(program, RuntimeError,
                      "Trying to set a forward gradient that has a different size")

    def sliced(lib):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            return fw.unpack_dual(fw.make_dual(lib.zeros(2), lib.arange(3.0)[1:])).tangent

    assert like_torch(sliced).tolist() == [1.0, 2.0]


def test_tangent_of_a_primal_that_views_a_larger_storage_is_a_copy():
    # torch: test_metadata_check_checks_storage_numel (its storage-length and as_strided checks
    # need storage APIs gradkit does not expose)
    def program(lib):
        fw = lib.autograd.forward_ad
        primal = lib.arange(5.0)[:4].detach()
        tangent = lib.ones(4)
        with fw.dual_level():
            unpacked = fw.unpack_dual(fw.make_dual(primal, tangent)).tangent
            unpacked *= 2
            return tangent, unpacked

    tangent, unpacked = like_torch(program)
    assert tangent.tolist() == [1.0] * 4 and unpacked.tolist() == [2.0] * 4


def _nan_function(lib):
    class NaNGrad(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            return lib.tensor(float("nan")).expand(3, 3)

    return NaNGrad


def test_anomaly_mode_without_the_nan_check():
    # torch: test_anomaly_mode_no_check_nan
    def program(lib):
        with warnings.catch_warnings(record=True):
            warnings.simplefilter("always")
            with lib.autograd.detect_anomaly(check_nan=False):
                inp = lib.ones(3, 3, requires_grad=True)
                out = _nan_function(lib).apply(inp).sum()
                out.backward(retain_graph=True)
                with lib.autograd.detect_anomaly(check_nan=True):
                    try:
                        out.backward(retain_graph=True)
                    except RuntimeError as error:
                        message = str(error)
                out.backward()
        return message

    assert "Function 'NaNGradBackward' returned nan values in its 0th output." in \
        like_torch(program)


@pytest.mark.parametrize("nested", [False, True])
def test_anomaly_mode_keeps_no_node_alive(nested):
    # torch: test_anomaly_assign_parent_cleanup, test_nested_anomaly_printstack_cleanup
    def program(lib):
        class Tag:
            pass

        def scope():
            if not nested:
                x = lib.ones(2, 2, requires_grad=True)
                t = x.exp()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    with lib.autograd.detect_anomaly():
                        lib.autograd.grad(t, x, lib.ones_like(t), create_graph=True)
            else:
                class Keeps(lib.autograd.Function):
                    @staticmethod
                    def forward(ctx, x):
                        ctx.save_for_backward(x)
                        return x

                    @staticmethod
                    def backward(ctx, g):
                        x, = ctx.saved_tensors
                        return Poisons.apply(x)

                class Poisons(lib.autograd.Function):
                    @staticmethod
                    def forward(ctx, x):
                        return x

                    @staticmethod
                    def backward(ctx, g):
                        return g + float("nan")

                inp = lib.ones(1, requires_grad=True)
                t = Keeps.apply(inp)
                ginp, = lib.autograd.grad(t, (inp,), create_graph=True)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    try:
                        with lib.autograd.detect_anomaly():
                            ginp.backward()
                    except RuntimeError:
                        pass
            tag = Tag()
            t.grad_fn.metadata[0] = tag
            return t, weakref.ref(tag)

        t, ref = scope()
        alive = ref() is not None
        del t
        return alive, ref() is None

    assert like_torch(program) == (True, True)


def test_a_dual_with_a_tangent_that_requires_grad_leaves_its_level_cleanly():
    # torch: test_backward_graph_destruction (a cycle dual -> tangent -> node -> dual)
    def program(lib):
        fw = lib.autograd.forward_ad
        a = lib.ones(10, requires_grad=True)
        with fw.dual_level():
            da = fw.make_dual(lib.ones_like(a) * 0.5, a)
            db = da.exp()
            tangent = fw.unpack_dual(db).tangent
            needs_grad = tangent.requires_grad
        return needs_grad, tangent

    needs_grad, tangent = like_torch(program)
    assert needs_grad is True


def test_gradcheck_of_a_number_to_a_tensor_power():
    # torch: test_pow_scalar_base
    def program(lib):
        a = lib.arange(1, 13, dtype=lib.float64).view(3, 4).requires_grad_()
        return lib.autograd.gradcheck(lambda t: lib.pow(2, t), (a,))

    assert like_torch(program) is True


def test_grad_fn_of_a_real_view_first_read_under_no_grad():
    # torch: test_first_grad_fn_access_in_no_grad_mode
    def program(lib):
        a = lib.tensor([1 + 1j], requires_grad=True).clone()
        v = a.real
        a.add_(1)
        with lib.no_grad():
            has_grad_fn = v.grad_fn is not None
        v.sum().backward()
        return has_grad_fn, v

    assert like_torch(program)[0] is True


def test_saved_second_output_keeps_its_output_number():
    # torch: test_save_output_nr
    def program(lib):
        seen = []

        class Halves(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x[:5], x[5:]

            @staticmethod
            def backward(ctx, *grads):
                return lib.cat(grads)

        class Doubles(lib.autograd.Function):
            @staticmethod
            def forward(ctx, b):
                ctx.save_for_backward(b)
                return b * 2

            @staticmethod
            def backward(ctx, g):
                b, = ctx.saved_tensors
                seen.append(b.output_nr)
                return g * 2

        x = lib.tensor([float(i) for i in range(10)], requires_grad=True)
        _, b = Halves.apply(x)
        Doubles.apply(b).sum().backward()
        return b.output_nr, seen, x.grad

    output_nr, seen, _ = like_torch(program)
    assert output_nr == 1 and seen == [1]


def test_data_of_a_tensor_that_requires_grad_must_stay_floating():
    # torch: test_set_data_self_requires_grad
    def program(lib):
        a = lib.tensor(1.0, requires_grad=True)
        a.data = lib.tensor(2.0)
        a.data = lib.tensor(3, dtype=lib.int64)

    raises_like_torch(program, RuntimeError, "must be floating point or complex dtype")


def test_set_multithreading_enabled_as_context_and_function():
    # torch: test_set_multithreading_enabled_as_context_manager_and_function
    def program(lib):
        switch, enabled = lib.autograd.set_multithreading_enabled, \
            lib.autograd.is_multithreading_enabled
        seen = []
        for value in (False, True):
            with switch(value):
                seen.append(enabled())
            seen.append(enabled())
        with switch(False):
            switch(True)
            seen.append(enabled())
        seen.append(enabled())
        switch(False)
        seen.append(enabled())
        switch(True)
        return seen + [enabled()]

    assert like_torch(program) == [False, True, True, True, True, True, False, True]


@pytest.mark.parametrize("with_backward", [False, True])
def test_a_ctx_attribute_referring_to_the_output_is_collected(with_backward):
    # torch: test_custom_function_cycle (a cycle output -> node -> ctx -> dict -> output)
    def program(lib):
        class Scaled(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, metadata):
                x = x.clone()
                ctx.meta = metadata
                ctx.save_for_backward(x)
                return x

            @staticmethod
            def backward(ctx, g):
                x, = ctx.saved_tensors
                return g * x, None

        def scope():
            a = lib.tensor(3.14, requires_grad=True)
            metadata = {}
            out = Scaled.apply(a, metadata)
            metadata["foo"] = out
            if with_backward:
                out.sum().backward()
            return weakref.ref(out)

        gc.disable()
        try:
            ref = scope()
            alive = ref() is not None
        finally:
            gc.enable()
        gc.collect()
        return alive, ref() is None

    assert like_torch(program) == (True, True)


@pytest.mark.parametrize("custom", [True, False])
@pytest.mark.parametrize("tensor_hook", [True, False])
def test_a_hook_holding_its_node_stays_alive_with_the_graph(custom, tensor_hook):
    # torch: test_hook_closure_cycle
    def program(lib):
        count = [0]

        class Tag:
            pass

        def scope():
            a = lib.tensor(1.0, requires_grad=True)
            b = identity_function(lib).apply(a) if custom else a.clone()
            grad_fn_b = b.grad_fn
            tag = Tag()

            def hook(*args):
                grad_fn_b, tag  # noqa: B018 - the closure holds them
                count[0] += 1

            if tensor_hook:
                b.register_hook(hook)
            else:
                b.grad_fn.register_hook(hook)
            return b.clone(), weakref.ref(tag)

        gc.disable()
        try:
            out, ref = scope()
            out.backward(retain_graph=True)
            gc.collect()
            out.backward(retain_graph=True)
            alive = ref() is not None
            del out
            gc.collect()
            return count[0], alive, ref() is None
        finally:
            gc.enable()

    assert like_torch(program) == (2, True, True)


@pytest.mark.parametrize("hooks", [1, 3])
@pytest.mark.parametrize("input_requires_grad", [True, False])
def test_full_backward_hooks_with_create_graph_leave_no_cycle(hooks, input_requires_grad):
    # torch: test_create_graph_and_full_backward_hook_cycle
    def program(lib):
        class Tag:
            pass

        a = lib.tensor(1.0, requires_grad=True)

        class Square(lib.nn.Module):
            def forward(self, x):
                return x ** 2 * a ** 2

        def scope():
            t = lib.tensor([0.5, 1.5], requires_grad=input_requires_grad)
            module = Square()
            for _ in range(hooks):
                module.register_full_backward_hook(lambda m, grad_in, grad_out: None)
            tmp = module(t)
            tag = Tag()
            tmp.grad_fn.metadata["a"] = tag
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                tmp.exp().sum().backward(create_graph=True)
            found = sum("Using backward() with create_graph=True" in str(w.message)
                        for w in caught)
            a.grad = t.grad = None
            return found, weakref.ref(tag)

        # torch warns once per process unless told to always warn (its test does the same);
        # gradkit warns every time
        always = getattr(lib, "set_warn_always", None)
        before = lib.is_warn_always_enabled() if always else None
        if always:
            always(True)
        try:
            found, ref = scope()
        finally:
            if always:
                always(before)
        gc.collect()
        return found, ref() is None

    assert like_torch(program) == (1, True)
