"""torch's expectations of utils.checkpoint (non-reentrant): warnings, recomputation checks,
keyword arguments, inputs without grad."""
import warnings

import pytest

from .twin import leaf, like_torch, raises_like_torch


def checkpoint_of(lib):
    return __import__(lib.__name__ + ".utils.checkpoint", fromlist=["checkpoint"]).checkpoint


def test_checkpoint_warns_unless_use_reentrant_is_explicit():
    # torch: test_checkpoint_warns_if_use_reentrant_not_passed_explcitly
    def program(lib):
        a = leaf(lib, 1)
        found = []
        for kwargs in ({"use_reentrant": False}, {}):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                checkpoint_of(lib)(lambda x: x * 1, a, **kwargs)
            found.append(any("use_reentrant parameter should be passed explicitly"
                             in str(w.message) for w in caught))
        return found

    assert like_torch(program) == [False, True]


def _changes_on_recompute(first, then):
    calls = [0]

    def fn(x):
        calls[0] += 1
        return first(x) if calls[0] == 1 else then(x)

    return fn


@pytest.mark.parametrize("case,match", [
    ("fewer", "A different number of tensors was saved"),
    ("other metadata", "tensors have different metadata")])
def test_checkpoint_detects_a_recomputation_that_saves_differently(case, match):
    # torch: test_checkpoint_detects_non_determinism
    def program(lib):
        def three(x):
            return x.sin().exp().sin()

        def two(x):
            return x.sin().exp()

        def two_other(x):
            return x.sin() * lib.tensor([1.0, 2.0], dtype=lib.float64)

        fn = _changes_on_recompute(three, two) if case == "fewer" else \
            _changes_on_recompute(two, two_other)
        out = checkpoint_of(lib)(fn, leaf(lib, 1), use_reentrant=False)
        out.sum().backward()

    raises_like_torch(program, RuntimeError, match)


@pytest.mark.parametrize("input_requires_grad", [True, False])
def test_checkpoint_with_keyword_arguments_matches_plain_gradients(input_requires_grad):
    # torch: test_checkpointing_without_reentrant (small)
    def program(lib):
        w1, w2 = leaf(lib, 4, 6, seed=1), leaf(lib, 6, 4, seed=2)

        def block(data):
            return (data @ w1).relu() @ w2

        xs = [leaf(lib, 1, 4, seed=3 + i, requires_grad=input_requires_grad) for i in range(4)]
        lib.stack([checkpoint_of(lib)(block, data=x, use_reentrant=False) for x in xs]) \
            .mean().backward()
        with_checkpoint = (w1.grad, w2.grad)
        w1.grad = w2.grad = None
        lib.stack([block(x) for x in xs]).mean().backward()
        return with_checkpoint, (w1.grad, w2.grad)

    (c1, c2), (p1, p2) = like_torch(program)
    assert abs(c1.numpy() - p1.numpy()).max() < 1e-12 and abs(c2.numpy() - p2.numpy()).max() < 1e-12
