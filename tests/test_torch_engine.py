"""Engine behaviour compared with torch on the same program: the order in which tensor
hooks, retain_grad, node pre/post hooks and post-accumulate-grad hooks run, seen through
hooks that change the gradient (so a different order gives different numbers)."""
import itertools

import pytest

import gradkit

torch = pytest.importorskip("torch")

from torch_expectations.functions import no_grad_function  # noqa: E402 - one definition


def _values(gs):
    return [None if g is None else g.tolist() for g in gs]


def _register_leaf_hook(lib, kind, x, node, log):
    """One hook of ``kind`` on leaf ``x`` or on its AccumulateGrad ``node``; each logs what it
    sees and most change the gradient."""
    if kind == "double":
        x.register_hook(lambda g: (log.append(("double", g.tolist())), g * 2)[1])
    elif kind == "plus_one":
        x.register_hook(lambda g: (log.append(("plus_one", g.tolist())), g + 1)[1])
    elif kind == "node_prehook":
        node.register_prehook(lambda gs: (log.append(("pre", _values(gs))), (gs[0] * 3,))[1])
    elif kind == "node_posthook":
        node.register_hook(lambda gi, go: log.append(("post", _values(gi), _values(go),
                                                      x.grad.tolist())))
    elif kind == "post_accumulate":
        def scale_grad(t):
            log.append(("post_accumulate", t.grad.tolist()))
            with lib.no_grad():
                t.grad.mul_(10)
        x.register_post_accumulate_grad_hook(scale_grad)


def _leaf_program(lib, kinds, how):
    log = []
    x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
    y = x * x
    node = y.grad_fn.next_functions[0][0]
    assert type(node).__name__ == "AccumulateGrad"
    for kind in kinds:
        _register_leaf_hook(lib, kind, x, node, log)
    if how == "backward":
        y.sum().backward()
    elif how == "create_graph":
        y.sum().backward(create_graph=True)
        log.append(("requires_grad", x.grad.requires_grad))
    elif how == "inputs":
        y.sum().backward(inputs=[x])
    else:
        log.append(("grad", lib.autograd.grad(y.sum(), x)[0].tolist()))
    log.append(("x.grad", None if x.grad is None else x.grad.tolist()))
    return log


LEAF_HOOKS = ("double", "plus_one", "node_prehook", "node_posthook", "post_accumulate")


@pytest.mark.parametrize("how", ["backward", "create_graph", "inputs", "autograd.grad"])
@pytest.mark.parametrize("kinds", list(itertools.permutations(LEAF_HOOKS, 4)),
                         ids="-".join)
def test_leaf_hook_order_matches_torch(kinds, how):
    assert _leaf_program(gradkit, kinds, how) == _leaf_program(torch, kinds, how)


def _register_non_leaf_hook(kind, y, log):
    if kind == "double":
        y.register_hook(lambda g: (log.append(("double", g.tolist())), g * 2)[1])
    elif kind == "plus_one":
        y.register_hook(lambda g: (log.append(("plus_one", g.tolist())), g + 1)[1])
    elif kind == "retain_grad":
        y.retain_grad()
    elif kind == "node_prehook":
        y.grad_fn.register_prehook(lambda gs: (log.append(("pre", _values(gs))),
                                               (gs[0] * 3,))[1])
    elif kind == "node_posthook":
        y.grad_fn.register_hook(lambda gi, go: (log.append(("post", _values(gi), _values(go))),
                                                tuple(None if g is None else g * 5 for g in gi))[1])


def _non_leaf_program(lib, kinds, how):
    log = []
    x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
    y = x * 3
    for kind in kinds:
        _register_non_leaf_hook(kind, y, log)
    z = (y * y).sum()
    if how == "backward":
        z.backward()
    elif how == "grad_y":
        log.append(("grad", _values(lib.autograd.grad(z, y))))
    else:  # the node of y runs and y's gradient is captured as well
        log.append(("grad", _values(lib.autograd.grad(z, [x, y]))))
    log.append(("y.grad", None if y.grad is None else y.grad.tolist()))
    log.append(("x.grad", None if x.grad is None else x.grad.tolist()))
    return log


NON_LEAF_HOOKS = ("double", "plus_one", "retain_grad", "node_prehook", "node_posthook")


@pytest.mark.parametrize("how", ["backward", "grad_y", "grad_x_y"])
@pytest.mark.parametrize("kinds", list(itertools.permutations(NON_LEAF_HOOKS)), ids="-".join)
def test_non_leaf_hook_order_matches_torch(kinds, how):
    assert _non_leaf_program(gradkit, kinds, how) == _non_leaf_program(torch, kinds, how)


def _two_outputs_program(lib):
    """Hooks on two outputs of one node run per tensor in order of first registration."""
    log = []
    x = lib.tensor([1.0, 2.0, 3.0, 4.0], dtype=lib.float64, requires_grad=True)
    a, b = x.split(2)
    b.register_hook(lambda g: (log.append(("b", g.tolist())), g * 2)[1])
    a.retain_grad()
    a.register_hook(lambda g: (log.append(("a", g.tolist())), g + 1)[1])
    b.register_hook(lambda g: (log.append(("b2", g.tolist())), g + 1)[1])
    a.grad_fn.register_prehook(lambda gs: (log.append(("pre", _values(gs))), None)[1])
    (a * 2 + b * 3).sum().backward()
    return log, a.grad.tolist(), x.grad.tolist()


def test_hooks_on_outputs_of_one_node_match_torch():
    assert _two_outputs_program(gradkit) == _two_outputs_program(torch)


def _undefined_leaf_grad_program(lib):
    """A Function that returns None for its input: the leaf's AccumulateGrad still runs its
    node hooks (with a None gradient) but accumulates nothing."""
    log = []

    NoGrad = no_grad_function(lib)

    x = lib.tensor([1.0], requires_grad=True)
    y = NoGrad.apply(x)
    node = y.grad_fn.next_functions[0][0]
    x.register_hook(lambda g: log.append(("tensor hook", _values([g]))))
    node.register_prehook(lambda gs: log.append(("pre", _values(gs))))
    node.register_hook(lambda gi, go: log.append(("post", _values(gi), _values(go))))
    x.register_post_accumulate_grad_hook(lambda t: log.append("post_accumulate"))
    y.sum().backward()
    return log, x.grad


def test_leaf_hooks_without_a_gradient_match_torch():
    assert _undefined_leaf_grad_program(gradkit) == _undefined_leaf_grad_program(torch)


def _none_gradient_hook_program(lib, leaf):
    """Tensor hooks see None where no gradient arrived, and may not replace it."""
    log = []

    NoGrad = no_grad_function(lib)

    x = lib.tensor([1.0], requires_grad=True)
    y = x if leaf else x * 3
    y.register_hook(lambda g: log.append(g))
    (NoGrad.apply(y).sum() + (x * 2).sum()).backward()
    log.append(x.grad.tolist())
    y.register_hook(lambda g: lib.ones(1))
    with pytest.raises(RuntimeError, match="can't replace a None gradient with a non-None"):
        NoGrad.apply(y).sum().backward()
    return log


@pytest.mark.parametrize("leaf", [True, False])
def test_tensor_hooks_see_none_gradients_like_torch(leaf):
    assert _none_gradient_hook_program(gradkit, leaf) == _none_gradient_hook_program(torch, leaf)


# -- functional: shapes of Jacobians and Hessians with size-1 output dims ----------------------

FUNCTIONAL_OUTPUTS = {
    "scalar": lambda t: (t * t * t).sum(),
    "shape_1": lambda t: (t * t * t).sum().reshape(1),
    "shape_1_1_1": lambda t: (t * t * t).sum().reshape(1, 1, 1),
    "shape_2_1": lambda t: (t * t * t).sum(1, keepdim=True),
}


def _functional_results(lib, name, what):
    """Shapes and values of one functional transform, or its error."""
    functional = lib.autograd.functional
    x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=lib.float64)
    f = FUNCTIONAL_OUTPUTS[name]
    v = lib.ones(2, 2, dtype=lib.float64)
    calls = {
        "jacobian": lambda: functional.jacobian(f, x),
        "jacobian_vectorized": lambda: functional.jacobian(f, x, vectorize=True),
        "hessian": lambda: functional.hessian(f, x),
        "hessian_tuple": lambda: functional.hessian(lambda a, b: f(a * b), (x, x)),
        "hessian_forward": lambda: functional.hessian(f, x, outer_jacobian_strategy="forward-mode",
                                                      vectorize=True),
        "vhp": lambda: functional.vhp(f, x, v),
        "hvp": lambda: functional.hvp(f, x, v),
    }
    try:
        result = calls[what]()
    except RuntimeError as exc:
        return str(exc)
    flat = []
    stack = [result]
    while stack:  # nested tuples of tensors, in order
        item = stack.pop(0)
        if isinstance(item, (tuple, list)):
            stack[:0] = list(item)
        else:
            flat.append((tuple(item.shape), item.tolist()))
    return flat


@pytest.mark.parametrize("what", ["jacobian", "jacobian_vectorized", "hessian", "hessian_tuple",
                                  "hessian_forward", "vhp", "hvp"])
@pytest.mark.parametrize("name", FUNCTIONAL_OUTPUTS)
def test_functional_shapes_match_torch(name, what):
    assert _functional_results(gradkit, name, what) == _functional_results(torch, name, what)


def test_hessian_of_a_tuple_output_is_refused_like_torch():
    x = gradkit.ones(2, dtype=gradkit.float64)
    with pytest.raises(RuntimeError, match="should return a single Tensor"):
        gradkit.autograd.functional.hessian(lambda t: ((t * t).sum(),), x)


# -- checkpoint: double backward and early stop ------------------------------------------------

def _checkpoint_module(lib):
    import importlib
    return importlib.import_module(lib.__name__ + ".utils.checkpoint")


CHECKPOINTED = {"exp": lambda a: a.exp(), "sin_times_a": lambda a: a.sin() * a,
                "chain": lambda a: (a * a).tanh().exp() / (a + 2)}


def _checkpoint_double_backward(lib, f):
    x = lib.tensor([0.5, 1.5], dtype=lib.float64, requires_grad=True)
    y = _checkpoint_module(lib).checkpoint(f, x, use_reentrant=False)
    g, = lib.autograd.grad(y.sum(), x, create_graph=True)
    g.sum().backward()
    return [round(v, 12) for v in g.tolist()], [round(v, 12) for v in x.grad.tolist()]


@pytest.mark.parametrize("f", CHECKPOINTED.values(), ids=CHECKPOINTED.keys())
def test_checkpoint_double_backward_matches_torch(f):
    assert _checkpoint_double_backward(gradkit, f) == _checkpoint_double_backward(torch, f)


def _early_stop_program(lib, enable):
    """What the recomputation runs: with early stop it ends once exp's result is back."""
    checkpoint_module = _checkpoint_module(lib)
    log = []

    def f(a):
        log.append("start")
        b = a.exp()  # the one tensor backward needs
        log.append("after exp")
        return b + 1

    x = lib.tensor([0.5, 1.5], dtype=lib.float64, requires_grad=True)
    if enable is None:
        y = checkpoint_module.checkpoint(f, x, use_reentrant=False)
    else:
        with checkpoint_module.set_checkpoint_early_stop(enable):
            y = checkpoint_module.checkpoint(f, x, use_reentrant=False)
    with checkpoint_module.set_checkpoint_early_stop(not enable):  # read in forward only
        y.sum().backward()
    return log, x.grad.tolist()


@pytest.mark.parametrize("enable", [None, True, False])
def test_checkpoint_early_stop_matches_torch(enable):
    assert _early_stop_program(gradkit, enable) == _early_stop_program(torch, enable)


# -- anomaly mode: one warning per link of a double-backward chain -----------------------------

def _anomaly_warnings(lib, order):
    """The anomaly warnings of a NaN in the ``order``-th backward of x ** (order - 0.5) at 0:
    (0 * inf in the last backward) per
    warning, its first line and the lines of this file in its traceback."""
    import warnings
    x = lib.tensor([0.0, 1.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with lib.autograd.detect_anomaly():
            g = (x ** (order - 0.5)).sum()
            for _ in range(order - 1):
                g, = lib.autograd.grad(g.sum(), x, create_graph=True)
            with pytest.raises(RuntimeError, match="returned nan values") as info:
                lib.autograd.grad((g * 0).sum(), x)
    texts = [str(w.message) for w in caught
             if w.category is UserWarning and "has been enabled" not in str(w.message)]
    return str(info.value), [[line.strip() for line in text.strip("\n").splitlines()
                              if line == text.strip("\n").splitlines()[0] or __file__ in line]
                             for text in texts]


@pytest.mark.parametrize("order", [2, 3])
def test_anomaly_warnings_of_higher_order_backward_match_torch(order):
    assert _anomaly_warnings(gradkit, order) == _anomaly_warnings(torch, order)


def _unreached_output_program(lib):
    """The hooks of an output that no gradient reached run too, with None."""
    log = []
    x = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    a, b = x.split(2)
    b.register_hook(lambda g: log.append(("b", _values([g]))))
    a.register_hook(lambda g: log.append(("a", _values([g]))))
    (a * 2).sum().backward()
    return log, x.grad.tolist()


def test_hooks_of_an_unreached_output_match_torch():
    assert _unreached_output_program(gradkit) == _unreached_output_program(torch)


@pytest.mark.parametrize("retained_before", [True, False])
def test_backward_into_a_non_leaf_input_retains_its_gradient_once_like_torch(retained_before):
    """backward(inputs=(d,)) of a non-leaf d: d retains its gradient (after its tensor hooks),
    d's node runs (its prehooks and post hooks), and a d that already retained its gradient
    does not get it twice."""
    def program(lib):
        log = []
        a = lib.tensor([1.0, -2.0], dtype=lib.float64, requires_grad=True)
        d = a.clone()
        if retained_before:
            d.retain_grad()
        d.register_hook(lambda g: (log.append("tensor"), g * 3)[1])
        d.grad_fn.register_prehook(lambda gs: (log.append("pre"), None)[1])
        d.grad_fn.register_hook(lambda gi, go: log.append("post"))
        (d * 2).sum().backward(inputs=(d,))
        return log, d.grad.tolist(), d.retains_grad, a.grad

    assert program(gradkit) == program(torch)
