"""utils.checkpoint (recompute in backward, RNG replay) and concurrent backward in threads."""
import threading

import numpy as np
import pytest

import gradkit
from gradkit.autograd.graph import saved_tensors_hooks
from gradkit.utils.checkpoint import checkpoint


def f64(values, requires_grad=True):
    return gradkit.tensor(values, dtype=gradkit.float64, requires_grad=requires_grad)


def block(x, w):
    """A small layer with dropout made from gradkit.rand, so the mask depends on the RNG."""
    h = (x @ w).tanh()
    keep = (gradkit.rand(*h.shape) > 0.5).to(h.dtype)
    return (h * keep * 2).sin() * x.sum()


def _leaves():
    rng = np.random.default_rng(3)
    return f64(rng.standard_normal((4, 3))), f64(rng.standard_normal((3, 3)))


def _gradients(run, count_saved=None):
    """Gradients of x and w, and (count, bytes) packed by saved-tensor hooks around ``run``."""
    x, w = _leaves()
    packed = []
    gradkit.manual_seed(1)
    with saved_tensors_hooks(lambda t: packed.append(t.nbytes) or t, lambda t: t):
        out = run(x, w)
    out.sum().backward()
    return x.grad.numpy(), w.grad.numpy(), (len(packed), sum(packed))


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_same_gradients_while_holding_fewer_saved_tensors(use_reentrant):
    plain_x, plain_w, plain_saved = _gradients(block)
    ck_x, ck_w, ck_saved = _gradients(
        lambda x, w: checkpoint(block, x, w, use_reentrant=use_reentrant))
    np.testing.assert_array_equal(ck_x, plain_x)
    np.testing.assert_array_equal(ck_w, plain_w)
    assert plain_saved[0] >= 6
    # non-reentrant keeps indices only; reentrant keeps just its two inputs
    assert ck_saved == ((0, 0) if not use_reentrant else (2, 4 * 3 * 8 + 3 * 3 * 8))


def test_without_rng_replay_the_dropout_mask_changes():
    plain_x, _, _ = _gradients(block)
    ck_x, _, _ = _gradients(lambda x, w: checkpoint(block, x, w, preserve_rng_state=False))
    assert not np.allclose(ck_x, plain_x)


def test_recomputation_does_not_disturb_the_callers_random_stream():
    x, w = _leaves()
    gradkit.manual_seed(5)
    out = checkpoint(block, x, w)
    expected_next = gradkit.rand(3).numpy()
    gradkit.manual_seed(5)
    out = checkpoint(block, x, w)
    out.sum().backward()       # recomputes block, which draws random numbers
    np.testing.assert_array_equal(gradkit.rand(3).numpy(), expected_next)


def test_only_the_checkpointed_segment_is_recomputed():
    calls = []

    def segment(x):
        calls.append(1)
        return x.exp().sin()

    x = f64([0.1, 0.2])
    out = (checkpoint(segment, x) * 3).sum()
    assert calls == [1]
    out.backward()
    assert calls == [1, 1]
    np.testing.assert_allclose(x.grad.numpy(), 3 * np.cos(np.exp([0.1, 0.2])) * np.exp([0.1, 0.2]))


def test_retain_graph_recomputes_again_and_kwargs_pass_through():
    x = f64([0.3, 0.6])
    out = checkpoint(lambda a, scale: (a * scale).exp(), x, scale=2.0).sum()
    out.backward(retain_graph=True)
    first = x.grad.numpy().copy()
    out.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * first)


def test_double_backward_through_checkpoint():
    x = f64([0.3, 0.6])
    g, = gradkit.autograd.grad(checkpoint(lambda a: a ** 3, x).sum(), x, create_graph=True)
    g.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 6 * np.array([0.3, 0.6]))


def test_same_gradients_as_torch_checkpoint():
    torch = pytest.importorskip("torch")
    import torch.utils.checkpoint as tcheck

    def program(lib, ck):
        x = lib.tensor(np.linspace(-1, 1, 6).reshape(2, 3), dtype=lib.float64,
                       requires_grad=True)
        w = lib.tensor(np.linspace(0.5, 1.5, 9).reshape(3, 3), dtype=lib.float64,
                       requires_grad=True)
        out = ck(lambda a, b: (a @ b).tanh() * a, x, w, use_reentrant=False)
        (out ** 2).sum().backward()
        return x.grad.numpy(), w.grad.numpy()

    for ours, theirs in zip(program(gradkit, checkpoint), program(torch, tcheck.checkpoint),
                            strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_errors():
    with pytest.raises(ValueError, match="Unexpected keyword arguments: scale"):
        checkpoint(lambda a, scale: a * scale, f64([1.0]), use_reentrant=True, scale=2.0)
    first = [True]

    def changes_between_runs(a):
        if first.pop() if first else False:
            return a * a      # saves two tensors the first time...
        return a + 1          # ...and none when recomputed

    out = checkpoint(changes_between_runs, f64([1.0]))
    with pytest.raises(RuntimeError, match="A different number of tensors was saved during the "
                       "original forward and recomputation"):
        out.sum().backward()


# -- threads ---------------------------------------------------------------------------

def _worker(seed, results, barrier):
    rng = np.random.default_rng(seed)
    a = f64(rng.standard_normal((8, 8)))
    b = f64(rng.standard_normal((8, 8)))
    barrier.wait()
    for _ in range(20):  # long enough for the two backward passes to interleave
        a.grad = b.grad = None
        ((a @ b).tanh() * a).sum().backward()
    results[seed] = (a.grad.numpy().copy(), b.grad.numpy().copy(), a.detach(), b.detach())


@pytest.mark.parametrize("multithreading", [True, False])
def test_two_threads_backward_concurrently(multithreading):
    results = {}
    barrier = threading.Barrier(2)
    with gradkit.autograd.set_multithreading_enabled(multithreading):
        threads = [threading.Thread(target=_worker, args=(s, results, barrier)) for s in (1, 2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert sorted(results) == [1, 2]
    for ga, gb, a, b in results.values():
        a, b = a.requires_grad_(True), b.requires_grad_(True)
        ((a @ b).tanh() * a).sum().backward()   # the same program, alone on this thread
        np.testing.assert_allclose(ga, a.grad.numpy(), rtol=1e-12)
        np.testing.assert_allclose(gb, b.grad.numpy(), rtol=1e-12)


def test_threads_accumulating_into_a_shared_leaf():
    w = f64(np.ones(4))
    barrier = threading.Barrier(4)

    def work():
        barrier.wait()
        for _ in range(25):
            (w * 2).sum().backward()

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    np.testing.assert_array_equal(w.grad.numpy(), np.full(4, 2.0 * 4 * 25))
