"""torch's TestNestedCheckpoint expectations: checkpoints nested in checkpoints and in grad(),
with and without early stop, give the plain values and free their graphs; non-tensor inputs and
outputs, keyword arguments, hooks on the original graph, reentrant backward from a hook, and
the early-stop settings."""
import collections
import weakref

import pytest

from .test_autograd_checkpoint import checkpoint_of
from .twin import data, like_torch, raises_like_torch

EARLY_STOP = pytest.mark.parametrize("early_stop", [True, False])


def _utils(lib):
    return __import__(lib.__name__ + ".utils.checkpoint", fromlist=["checkpoint"])


def grad_of(lib, fn):
    def wrapper(x):
        with lib.enable_grad():
            grad_input, = lib.autograd.grad(fn(x), inputs=(x,), create_graph=True)
        return grad_input
    return wrapper


def summed(fn):
    return lambda x: fn(x).sum()


def checkpointed(lib, fn):
    return lambda *args, **kwargs: checkpoint_of(lib)(fn, *args, use_reentrant=False, **kwargs)


def _pairs(lib, fn):
    """(plain function, the same function with checkpoints put in various places)."""
    g, c = (lambda f: grad_of(lib, f)), (lambda f: checkpointed(lib, f))
    return [(fn, (c(fn), c(c(fn)))),
            (g(fn), (g(c(fn)), g(c(c(fn))))),
            (g(g(fn)), (g(c(g(fn))), c(g(g(c(fn)))), g(c(g(c(fn)))))),
            (g(g(g(fn))), (g(c(g(g(c(fn))))), g(c(g(c(g(c(fn))))))))]


def _graph_dies(lib, fn) -> bool:
    """Tag every node of fn's graph with a fresh object: none survives the graph."""
    class Tag:
        pass

    def scope():
        out = fn(lib.tensor(data(seed=3), dtype=lib.float64, requires_grad=True))
        refs, seen, queue = [], set(), collections.deque([out.grad_fn])
        while queue:
            node = queue.popleft()
            if node is None or node in seen:
                continue
            seen.add(node)
            tag = Tag()
            node.metadata["tag"] = tag
            refs.append(weakref.ref(tag))
            queue.extend(next_node for next_node, _ in node.next_functions)
        return refs

    return all(ref() is None for ref in scope())


@EARLY_STOP
@pytest.mark.parametrize("inner", ["chain", "grads inside"])
def test_nested_checkpoints_give_the_plain_values_and_free_their_graphs(early_stop, inner):
    # torch: test_nested_checkpoint
    def program(lib):
        def chain(x):
            return x.sin().exp().sin()

        def grads_inside(x):
            a, b = x.sin().exp().sin(), x.sin().exp().sin()
            lib.autograd.grad(a, x)
            lib.autograd.grad(b, x)
            return x.sin()

        fn = chain if inner == "chain" else grads_inside
        x = lib.tensor(data(seed=1), dtype=lib.float64, requires_grad=True)
        results = []
        with _utils(lib).set_checkpoint_early_stop(early_stop):
            for expected_fn, actual_fns in _pairs(lib, fn):
                expected = expected_fn(x)
                for actual_fn in actual_fns:
                    results.append((bool(lib.allclose(expected, actual_fn(x))),
                                    _graph_dies(lib, actual_fn)))
        return results

    assert all(ok and dies for ok, dies in like_torch(program))


@EARLY_STOP
def test_nested_checkpoint_with_two_children(early_stop):
    # torch: test_nested_checkpoint_two_children
    def program(lib):
        g, c = (lambda f: grad_of(lib, f)), (lambda f: checkpointed(lib, f))

        def f(x):
            return x.sin().exp().sin()

        def h(x):
            return x.cos().sin().exp()

        def hc(x):
            return c(h)(c(f)(x))

        a = lib.tensor(data(3, 3, seed=2), dtype=lib.float64, requires_grad=True)
        with _utils(lib).set_checkpoint_early_stop(early_stop):
            expected = g(summed(g(summed(lambda x: h(f(x))))))(a)
            first = g(summed(g(summed(c(hc)))))(a)
            second = g(summed(c(g(summed(c(hc))))))(a)
            dies = [_graph_dies(lib, g(c(hc))), _graph_dies(lib, g(summed(g(summed(c(hc)))))),
                    _graph_dies(lib, g(summed(c(g(summed(c(hc)))))))]
        return bool(lib.allclose(expected, first)), bool(lib.allclose(expected, second)), dies

    assert like_torch(program) == (True, True, [True, True, True])


@EARLY_STOP
def test_non_tensor_inputs_outputs_and_keyword_arguments(early_stop):
    # torch: test_nested_checkpoint_non_tensor_inputs_and_outputs, test_nested_checkpoint_kwargs
    def program(lib):
        def mixed(k, a, b, f):
            return f(k * a * b.exp()), 1, "abcd"

        def with_keyword(a, blah=None):
            out = a.sin().exp()
            return (out * blah if blah is not None else out).sin().exp()

        a = lib.tensor(2.0, dtype=lib.float64, requires_grad=True)
        b = lib.tensor(3.0, dtype=lib.float64, requires_grad=True)
        with _utils(lib).set_checkpoint_early_stop(early_stop):
            out, one, text = checkpoint_of(lib)(mixed, 3, a, b, lib.sin, use_reentrant=False)
            keyword = checkpoint_of(lib)(with_keyword, a, blah=b, use_reentrant=False)
        return (one, text, lib.autograd.grad(out, (a, b)),
                lib.autograd.grad(mixed(3, a, b, lib.sin)[0], (a, b)),
                lib.autograd.grad(keyword, (a, b)), lib.autograd.grad(with_keyword(a, blah=b),
                                                                      (a, b)))

    one, text, got, expected, got_kw, expected_kw = like_torch(program)
    assert (one, text) == (1, "abcd")
    for pair in ((got, expected), (got_kw, expected_kw)):
        assert all(abs(x.numpy() - y.numpy()).max() < 1e-12 for x, y in zip(*pair))


@EARLY_STOP
def test_hooks_on_the_original_graph_run_once(early_stop):
    # torch: test_nested_checkpoint_same_graph
    def program(lib):
        calls = []
        a = lib.tensor(1.0, requires_grad=True)
        with _utils(lib).set_checkpoint_early_stop(early_stop):
            out = checkpoint_of(lib)(lambda t: t.sin().cos().sin(), a, use_reentrant=False)
        out.grad_fn.next_functions[0][0].register_hook(lambda *args: calls.append(1))
        out.backward()
        return len(calls), a.grad

    assert like_torch(program)[0] == 1


@EARLY_STOP
def test_backward_from_a_hook_skips_the_checkpointed_part(early_stop):
    # torch: test_nested_checkpoint_reentrant_backwards
    def program(lib):
        def fn(t):
            x = t.sin().cos()
            return x, x.sin()

        a = lib.tensor(1.0, requires_grad=True)
        with _utils(lib).set_checkpoint_early_stop(early_stop):
            x, out = checkpoint_of(lib)(fn, a, use_reentrant=False)
        out.grad_fn.register_hook(lambda *args: x.backward(retain_graph=True))
        out.backward(retain_graph=True)
        return a.grad

    like_torch(program)


def _counted_block(calls):
    def block(x):
        y = x.sin().cos()
        calls[0] += 1  # clone saves nothing: it runs again only without early stop
        return y.clone()
    return block


@pytest.mark.parametrize("context,local,reruns", [
    (None, None, False), (None, False, True), (None, True, False), (False, None, True),
    (True, None, False), ("False then True", False, False), (False, True, True),
    (True, False, False)])
def test_early_stop_settings_and_their_precedence(context, local, reruns):
    # torch: test_nested_checkpoint_set_early_stop
    def program(lib):
        calls = [0]
        kwargs = {} if local is None else {"early_stop": local}
        a = lib.tensor(1.0, requires_grad=True)
        set_early_stop = _utils(lib).set_checkpoint_early_stop
        if context is None:
            out = checkpoint_of(lib)(_counted_block(calls), a, use_reentrant=False, **kwargs)
        elif context == "False then True":
            with set_early_stop(False), set_early_stop(True):
                out = checkpoint_of(lib)(_counted_block(calls), a, use_reentrant=False, **kwargs)
        else:
            with set_early_stop(context):
                out = checkpoint_of(lib)(_counted_block(calls), a, use_reentrant=False, **kwargs)
        out.backward()
        return calls[0]

    assert like_torch(program) == (2 if reruns else 1)


@EARLY_STOP
def test_a_block_that_saves_nothing_is_not_rerun(early_stop):
    # torch: test_nested_checkpoint_set_early_stop_no_recompution_needed (case 2; case 1 counts
    # dispatched ops with a TorchDispatchMode)
    def program(lib):
        calls = [0]

        def clone(x):
            calls[0] += 1
            return x.clone()

        a = lib.tensor(1.0, requires_grad=True)
        with _utils(lib).set_checkpoint_early_stop(early_stop):
            out = checkpoint_of(lib)(clone, a, use_reentrant=False)
        out.backward()
        return calls[0]

    assert like_torch(program) == 1


def test_a_rerun_that_saves_more_is_refused_without_early_stop():
    # torch: test_checkpoint_detects_non_determinism (saving more during recomputation)
    def program(lib, early_stop):
        calls = [0]

        def saves_more_when_rerun(x):
            calls[0] += 1
            out = x.sin().exp()
            return out.sin() if calls[0] > 1 else out

        a = lib.tensor(data(1), dtype=lib.float64, requires_grad=True)
        with _utils(lib).set_checkpoint_early_stop(early_stop):
            out = checkpoint_of(lib)(saves_more_when_rerun, a, use_reentrant=False)
        out.backward()
        return a.grad

    like_torch(lambda lib: program(lib, True))
    raises_like_torch(lambda lib: program(lib, False), RuntimeError,
                      "trying to save more tensors during recomputation")
