"""Towards given inputs (autograd.grad, backward(inputs=...)) a node computes only the input
gradients whose edge leads to one, as torch's should_compute_output: the same program runs in
gradkit and torch and must give the same values, errors and hook calls."""
import pytest

import gradkit

torch = pytest.importorskip("torch")


def _pair(lib, first, second):
    return (lib.tensor(first, requires_grad=True), lib.tensor(second, requires_grad=True))


def _both(program):
    """program(lib) in gradkit and in torch; an exception is its type and message."""
    outcomes = []
    for lib in (gradkit, torch):
        try:
            outcomes.append(program(lib))
        except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
            outcomes.append((type(exc).__name__, str(exc)))
    return outcomes


def _values(gs):
    return [None if g is None else g.tolist() for g in gs]


SKIPPED_SLOT = {  # an op whose derivative in its first input is not implemented in torch
    "gammainc": lambda lib, a, x: lib.special.gammainc(a, x),
    "gammaincc": lambda lib, a, x: lib.special.gammaincc(a, x),
    "igamma": lambda lib, a, x: lib.igamma(a, x),
    "zeta": lambda lib, a, x: lib.special.zeta(a + 2, x),
}


@pytest.mark.parametrize("name", SKIPPED_SLOT)
def test_grad_of_the_other_input_skips_a_derivative_not_implemented(name):
    def program(lib):
        a, x = _pair(lib, [2.0, 3.0], [1.0, 2.0])
        return lib.autograd.grad(SKIPPED_SLOT[name](lib, a, x).sum(), [x])[0].tolist()
    ours, theirs = _both(program)
    assert ours == pytest.approx(theirs, rel=1e-5)


@pytest.mark.parametrize("name", SKIPPED_SLOT)
def test_backward_with_inputs_skips_it_too(name):
    def program(lib):
        a, x = _pair(lib, [2.0, 3.0], [1.0, 2.0])
        SKIPPED_SLOT[name](lib, a, x).sum().backward(inputs=[x])
        return x.grad.tolist(), a.grad
    ours, theirs = _both(program)
    assert ours[0] == pytest.approx(theirs[0], rel=1e-5) and ours[1] is theirs[1] is None


@pytest.mark.parametrize("wanted", ["a", "both", "backward"])
def test_asking_for_the_input_without_derivative_still_raises(wanted):
    def program(lib):
        a, x = _pair(lib, [2.0, 3.0], [1.0, 2.0])
        y = lib.special.gammainc(a, x).sum()
        if wanted == "backward":
            return y.backward()
        return lib.autograd.grad(y, [a] if wanted == "a" else [a, x])
    ours, theirs = _both(program)
    assert ours == theirs
    with pytest.raises(NotImplementedError, match="the derivative for 'igamma: input' is not"):
        program(gradkit)


def test_retained_graph_then_the_other_input_raises():
    def program(lib):
        a, x = _pair(lib, [2.0, 3.0], [1.0, 2.0])
        y = lib.special.gammaincc(a, x).sum()
        first = lib.autograd.grad(y, [x], retain_graph=True)[0].tolist()
        try:
            lib.autograd.grad(y, [a])
        except NotImplementedError as exc:
            return first, str(exc)
    ours, theirs = _both(program)
    assert ours[0] == pytest.approx(theirs[0], rel=1e-5) and ours[1] == theirs[1]
    assert "igammac: input" in ours[1]


def test_create_graph_keeps_the_derivatives_of_what_was_computed():
    def program(lib):
        a, x = _pair(lib, [2.0, 3.0], [1.0, 2.0])
        y = (lib.special.gammainc(a, x) * a.exp()).sum()
        gx, = lib.autograd.grad(y, [x], create_graph=True)
        gxx, = lib.autograd.grad(gx.sum(), [x], retain_graph=True)
        gxa, = lib.autograd.grad(gx.sum(), [a])
        return gx.tolist(), gxx.tolist(), gxa.tolist()
    ours, theirs = _both(program)
    for mine, torchs in zip(ours, theirs):
        assert mine == pytest.approx(torchs, rel=1e-5)


POST_HOOKED = {  # node post hooks see None for the gradients a node skipped
    "mul": lambda lib, a, b, w: (a * b, [b]),
    "lerp": lambda lib, a, b, w: (lib.lerp(a, b, w), [w]),
    "mm": lambda lib, a, b, w: (a[:, None] @ b[None, :], [b]),
    "where": lambda lib, a, b, w: (lib.where(w > 0, a, b), [a]),
    "stack": lambda lib, a, b, w: (lib.stack([a, b, w]), [b]),  # a tensor list: all computed
    "cat": lambda lib, a, b, w: (lib.cat([a, b]), [a]),
    "conv_transpose1d": lambda lib, a, b, w: (lib.nn.functional.conv_transpose1d(
        a[None, None], b[None, None], w[:1]), [b]),
}


@pytest.mark.parametrize("name", POST_HOOKED)
def test_post_hooks_see_none_for_skipped_gradients(name):
    def program(lib):
        a, b = _pair(lib, [1.0, 2.0], [3.0, 4.0])
        w = lib.tensor([0.5, -0.5], requires_grad=True)
        y, inputs = POST_HOOKED[name](lib, a, b, w)
        log = []
        y.grad_fn.register_hook(lambda gi, go: log.append([g is None for g in gi]))
        return _values(lib.autograd.grad(y.sum(), inputs)), log
    ours, theirs = _both(program)
    assert ours == theirs


def test_hooks_on_a_branch_that_leads_nowhere_do_not_run():
    def program(lib):
        log = []
        a, x = _pair(lib, [2.0, 3.0], [1.0, 2.0])
        h = x * 2
        h.register_hook(lambda g: log.append(("h", g.tolist())))
        k = a * 3
        k.register_hook(lambda g: log.append(("k", g.tolist())))
        k.grad_fn.register_prehook(lambda go: log.append(("k pre",)))
        m = h * k
        m.grad_fn.register_prehook(lambda go: log.append(("m pre", _values(go))))
        m.grad_fn.register_hook(lambda gi, go: log.append(("m post", [g is None for g in gi])))
        y = lib.special.gammainc(a, m).sum()
        y.backward(inputs=[h])
        return log, h.grad.tolist(), x.grad, a.grad
    ours, theirs = _both(program)
    assert ours[0][0] == theirs[0][0] and [e[0] for e in ours[0]] == [e[0] for e in theirs[0]]
    assert ours[0][1] == theirs[0][1] == ("m post", [False, True])
    assert ours[1] == pytest.approx(theirs[1], rel=1e-4) and ours[2:] == theirs[2:]


def _custom_function(lib, wrong_shape: bool, log: list):
    class Scale(lib.autograd.Function):
        @staticmethod
        def forward(ctx, p, q):
            return p * q

        @staticmethod
        def backward(ctx, g):
            log.append(tuple(ctx.needs_input_grad))
            return (lib.ones(5) if wrong_shape else g * 2), g * 3
    return Scale


@pytest.mark.parametrize("wrong_shape", [False, True])
def test_custom_function_runs_as_written_and_passes_on_what_is_wanted(wrong_shape):
    """torch: needs_input_grad says what requires grad, post hooks see every gradient, and a
    wrong shape is refused even for an input nobody asked for."""
    def program(lib):
        p, q = _pair(lib, [1.0, 1.0], [1.0, 1.0])
        log = []
        z = _custom_function(lib, wrong_shape, log).apply(p, q)
        z.grad_fn.register_hook(lambda gi, go: log.append(_values(gi)))
        return _values(lib.autograd.grad(z.sum(), [q])), log
    ours, theirs = _both(program)
    assert ours == theirs
    if not wrong_shape:
        assert ours[1] == [(True, True), [[2.0, 2.0], [3.0, 3.0]]]


def test_copy_slices_computes_only_what_leads_to_the_input():
    def program(lib):
        a, x = _pair(lib, [2.0, 3.0], [1.0, 2.0])
        base = x * 1
        base[0:2] = lib.special.gammainc(a, base[0:2].clone())
        base[1:2].mul_(a[:1])
        return lib.autograd.grad(base.sum(), [x])[0].tolist()
    ours, theirs = _both(program)
    assert ours == pytest.approx(theirs, rel=1e-5)


def test_gamma_cdf_gradient_in_its_value_with_parameters_requiring_grad():
    """The program that found it: torch's test detaches the parameters; torch needs not."""
    def program(lib):
        a, b = _pair(lib, [2.0, 3.0], [1.5, 0.5])
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        cdf = lib.distributions.Gamma(a, b).cdf(x)
        return lib.autograd.grad(cdf.sum(), [x, b])[0].tolist()
    ours, theirs = _both(program)
    assert ours == pytest.approx(theirs, rel=1e-5)


@pytest.mark.parametrize("wrt", ["x", "a"])
def test_copy_slices_post_hooks_see_none_for_the_skipped_gradient(wrt):
    def program(lib):
        a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        x = lib.tensor([5.0], requires_grad=True)
        base = a.clone()
        base[0:1].mul_(x)
        log = []
        base.grad_fn.register_hook(lambda gi, go: log.append(_values(gi)))
        return lib.autograd.grad(base.sum(), [x if wrt == "x" else a])[0].tolist(), log
    ours, theirs = _both(program)
    assert ours == theirs


@pytest.mark.parametrize("how", ["anomaly", "profiler", "batched", "jacobian", "vectorized"])
def test_other_engine_paths_skip_it_too(how):
    """Anomaly mode and the profiler watch nodes (another call of the node's backward);
    is_grads_batched and jacobian(vectorize=True) plan the pass to see if it batches."""
    def program(lib):
        a, x = _pair(lib, [2.0, 3.0], [1.0, 2.0])
        if how in ("jacobian", "vectorized"):
            return lib.autograd.functional.jacobian(
                lambda x: lib.special.gammainc(a, x), x, vectorize=how == "vectorized").tolist()
        y = lib.special.gammainc(a, x)
        if how == "batched":
            return lib.autograd.grad(y, [x], lib.eye(2), is_grads_batched=True)[0].tolist()
        watch = lib.autograd.detect_anomaly() if how == "anomaly" else lib.profiler.profile()
        with watch:
            return lib.autograd.grad(y.sum(), [x])[0].tolist()
    ours, theirs = _both(program)
    assert ours == pytest.approx(theirs, rel=1e-5) if how in ("anomaly", "profiler") else \
        [pytest.approx(row, rel=1e-5) for row in theirs] == ours


def test_backward_to_a_non_leaf_runs_its_node_computing_nothing():
    """backward(inputs=[h]) runs h's node (its hooks), whose edges lead to no input: torch's
    post hooks see None for every gradient."""
    def program(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        h = x * 3
        log = []
        h.grad_fn.register_hook(lambda gi, go: log.append(_values(gi)))
        (h * h).sum().backward(inputs=[h])
        return h.grad.tolist(), x.grad, log
    ours, theirs = _both(program)
    assert ours == theirs == ([6.0, 12.0], None, [[None, None]])
