"""torch's expectations of anomaly mode, gradcheck, version counters and reentrant backward."""
import warnings

import pytest

from .twin import data, leaf, like_torch, raises_like_torch

SIZE = 10


def _nan_function(lib):
    """sum(0) whose backward puts a NaN in its 0th or 1st input gradient."""

    class NanGrad(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, b, fail_first):
            ctx.fail_first = fail_first
            return a.sum(0, keepdim=True)

        @staticmethod
        def backward(ctx, g):
            gi = g.clone().expand(SIZE).clone()
            gi[0] = 0
            gi[0] /= 0
            return (gi, None, None) if ctx.fail_first else (None, gi, None)

    return NanGrad


def test_nan_in_backward_is_silent_without_anomaly_mode():
    # torch: test_anomaly_detect_nan (first part)
    def program(lib):
        x = leaf(lib, SIZE, positive=True)
        _nan_function(lib).apply(x, x, True).backward()
        return bool(lib.isnan(x.grad).any())

    assert like_torch(program) is True


@pytest.mark.parametrize("fail_first,index,forward_inside", [(True, "0th", False),
                                                             (False, "1th", True)])
def test_anomaly_mode_names_the_function_and_output_of_a_nan(fail_first, index, forward_inside):
    # torch: test_anomaly_detect_nan
    def program(lib):
        x = leaf(lib, SIZE, positive=True)
        fn = _nan_function(lib)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                if forward_inside:
                    with lib.autograd.detect_anomaly():
                        fn.apply(x, x, fail_first).backward()
                else:
                    out = fn.apply(x, x, fail_first)
                    with lib.autograd.detect_anomaly():
                        out.backward()
            except RuntimeError as e:
                message = str(e)
        reports = " ".join(str(w.message) for w in caught)
        return message, ("No forward pass information" in reports,
                         "fn.apply(x, x, fail_first)" in reports)

    message, flags = like_torch(program)
    assert f"Function 'NanGradBackward' returned nan values in its {index} output." in message
    assert flags == ((False, True) if forward_inside else (True, False))


def test_anomaly_mode_reports_the_parent_forward_during_double_backward():
    # torch: test_nested_anomaly_detect_nan
    def program(lib):
        class Outer(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.x = x
                return x.sum(0, keepdim=True)

            @staticmethod
            def backward(ctx, g):
                g = g.clone().expand(SIZE)
                return Inner.apply(g * ctx.x, g + ctx.x)

        class Inner(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                return a * 2.0 + b

            @staticmethod
            def backward(ctx, g):
                g1, g2 = g.clone(), g.clone()
                g2[0] = 0
                g2[0] /= 0
                return g1, g2

        x = leaf(lib, SIZE, positive=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                with lib.autograd.detect_anomaly():
                    gx, = lib.autograd.grad(Outer.apply(x), (x,), create_graph=True)
                    gx.sum().backward()
            except RuntimeError as e:
                message = str(e)
        reports = " ".join(str(w.message) for w in caught)
        return message, ("Outer.apply" in reports, "Inner.apply" in reports,
                         "Previous calculation was induced by" in reports)

    message, flags = like_torch(program)
    assert "Function 'InnerBackward' returned nan values in its 1th output." in message
    assert flags == (True, True, True)


def test_anomaly_mode_warns_then_raises_the_version_error():
    # torch: test_anomaly_grad_warnings
    def program(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                with lib.autograd.detect_anomaly():
                    a = leaf(lib, 5)
                    d1 = a + 1
                    d2 = d1 ** 2
                    d1 += 1
                    lib.autograd.grad(d2.sum(), a)
            except RuntimeError as e:
                message = str(e)
        texts = [str(w.message) for w in caught]
        return ("modified by an inplace operation" in message,
                any("Anomaly Detection has been enabled" in t for t in texts),
                any("Error detected in PowBackward0" in t for t in texts))

    assert like_torch(program) == (True, True, True)


def test_gradcheck_of_a_single_tensor_input():
    # torch: test_gradcheck_single_input
    def program(lib):
        return (lib.autograd.gradcheck(lambda x: x.mul(5), leaf(lib, 10)),
                lib.autograd.gradgradcheck(lambda x: x.mul(5), leaf(lib, 10)))

    assert like_torch(program) == (True, True)


def test_gradcheck_fails_for_a_detached_output_with_nonzero_numerical_grad():
    # torch: test_gradcheck_fail_when_no_differentiable_outputs_and_num_grad_not_zero
    raises_like_torch(lambda lib: lib.autograd.gradcheck(lambda x: x.detach(), leaf(lib, 3, 3)),
                      RuntimeError, "Numerical gradient for function expected to be zero")


def _jittery(lib):
    """Identity whose backward multiplies by 1 + jitter * noise (and is itself jittery)."""

    class Jitter(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, jitter=0.0):
            ctx.jitter = jitter
            return x

        @staticmethod
        def backward(ctx, g):
            noise = lib.rand(g.shape, dtype=g.dtype)
            return Jitter.apply(g, ctx.jitter) * (1 + noise * ctx.jitter), None

    return Jitter


@pytest.mark.parametrize("fast_mode", [False, True])
def test_gradcheck_detects_nondeterministic_backward_unless_tolerated(fast_mode):
    # torch: test_gradcheck_nondeterministic (fast mode: fixed in gradkit, which did not run
    # the vjps twice there)
    def program(lib):
        fn, x = _jittery(lib), leaf(lib, 5, 5)
        return (lib.autograd.gradcheck(lambda t: fn.apply(t, 0.0), x, fast_mode=fast_mode),
                lib.autograd.gradcheck(lambda t: fn.apply(t, 1e-6), x, nondet_tol=1e-5,
                                       fast_mode=fast_mode),
                lib.autograd.gradgradcheck(lambda t: fn.apply(t, 1e-12), x, nondet_tol=1e-5,
                                           fast_mode=fast_mode))

    assert like_torch(program) == (True, True, True)
    raises_like_torch(lambda lib: lib.autograd.gradcheck(
        lambda t: _jittery(lib).apply(t, 1e-6), leaf(lib, 5, 5), fast_mode=fast_mode),
        RuntimeError, "Backward is not reentrant")
    raises_like_torch(lambda lib: lib.autograd.gradgradcheck(
        lambda t: _jittery(lib).apply(t, 1e-12), leaf(lib, 5, 5), fast_mode=fast_mode),
        RuntimeError, "Backward is not reentrant")


def test_views_share_the_version_counter():
    # torch: test_version_counter (without .data)
    def program(lib):
        x = leaf(lib, 1, 2, requires_grad=False)
        before = x._version
        x.add_(1).add_(1)
        bumped = x._version > before
        xz = x[:]
        same = [x._version == xz._version]
        xz.add_(1)
        same.append(x._version == xz._version)
        return bumped, same

    assert like_torch(program) == (True, [True, True])


def test_setting_data_keeps_version_counter_and_identity():
    # torch: test_version_counter (the .data part), test_set_data_preserve_pyobj
    def program(lib):
        x = leaf(lib, 1, 2, requires_grad=False)
        xz = x[:]
        before, ident = x._version, id(x)
        x.data = lib.zeros(2, 3, dtype=lib.float64)
        kept = x._version == before and id(x) == ident
        x.add_(1)
        return kept, x._version > before, x._version == xz._version

    assert like_torch(program) == (True, True, True)


def _reentrant_countdown(lib, order=None):
    """x - 1 whose backward runs its own backward again until x < 0."""

    class Countdown(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            with lib.enable_grad():
                ctx.x = x.detach().requires_grad_(True) - 1
            return ctx.x.detach()

        @staticmethod
        def backward(ctx, g):
            if order is not None:
                order.append("Reentrant")
            if ctx.x < 0:
                return g
            with lib.enable_grad():
                Countdown.apply(ctx.x).sum().backward()
            return g

    return Countdown


def _countdown_from(lib, start):
    v = lib.tensor(start, dtype=lib.float64, requires_grad=True)
    _reentrant_countdown(lib).apply(v).sum().backward()
    return v.grad


def test_nested_reentrant_backward():
    # torch: test_deep_reentrant (a shallow depth)
    like_torch(lambda lib: _countdown_from(lib, 50.0))


def test_deep_reentrant_backward_does_not_overflow():
    # torch: test_deep_reentrant
    like_torch(lambda lib: _countdown_from(lib, 2000.0))


def test_reentrant_backward_runs_before_older_ready_nodes():
    # torch: test_reentrant_priority
    def program(lib):
        order = []

        class Mark(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, g):
                order.append("MyFunction")
                return g

        a = Mark.apply(lib.tensor(6.0, dtype=lib.float64, requires_grad=True))
        b = _reentrant_countdown(lib, order).apply(
            lib.tensor(9.0, dtype=lib.float64, requires_grad=True))
        (a * b).backward()
        return order

    order = like_torch(program)
    assert len(order) == 11 and order.count("Reentrant") == 10 and order[-1] == "MyFunction"


def test_leaf_hook_that_runs_its_own_backward():
    # torch: test_reentrant_with_leaf_variable_hook
    def program(lib):
        param = leaf(lib, 10)
        handle = None

        def penalty(grad):
            handle.remove()
            old = grad
            param.grad = None
            with lib.enable_grad():
                g = grad.detach().requires_grad_()
                ((g * 2) + param.detach().requires_grad_()).sum().backward()
            result = g.grad + grad
            param.grad = old
            return result

        handle = param.register_hook(penalty)
        (param * param).sum().backward()
        return param.grad

    like_torch(program)


def test_non_leaf_hook_that_runs_its_own_backward():
    # torch: test_reentrant_with_non_leaf_variable_hook
    def program(lib):
        param = leaf(lib, 10)
        handle = None

        def increase(grad):
            handle.remove()
            with lib.enable_grad():
                g = grad.detach().requires_grad_()
                ((g * 2) + 5).sum().backward()
            return g.grad + grad

        tmp = param * param
        handle = tmp.register_hook(increase)
        tmp.sum().backward()
        return param.grad

    grad = like_torch(program)
    assert abs(grad.numpy() - 6 * data(10)).max() < 1e-12


def test_checkpointed_blocks_backward_like_the_plain_ones():
    # torch: test_checkpointing (small)
    def program(lib):
        from_lib = __import__(lib.__name__ + ".utils.checkpoint", fromlist=["checkpoint"])
        w = leaf(lib, 4, 4, seed=1)

        def block(x):
            return (x @ w).relu() @ w

        inputs = [leaf(lib, 1, 4, seed=2 + i) for i in range(5)]
        outs = [from_lib.checkpoint(block, x, use_reentrant=False) for x in inputs]
        lib.stack(outs).mean().backward()
        return w.grad, [x.grad for x in inputs]

    like_torch(program)
