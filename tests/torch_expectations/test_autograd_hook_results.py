"""What backward hooks may return (found while porting test_node_lifecycle.py): torch checks a
tensor hook's result, a node's pre- and post-hooks' tuples and a post-accumulate-grad hook's
None as python_hook.cpp does, and a node's hooks see one gradient per output of the node."""
import pytest

from .functions import square_function
from .twin import like_torch, raises_like_torch

WRONG_RESULTS = {
    "a tuple": lambda lib: (lib.ones(4), lib.ones(4)),
    "a list": lambda lib: [lib.ones(4)],
    "an object": lambda lib: object(),
    "a number in a tuple": lambda lib: (1.5, None),
    "a gradient": lambda lib: lib.ones(4),
    "a smaller tensor": lambda lib: lib.ones(3),
    "another dtype": lambda lib: lib.ones(4, dtype=lib.float64),
}


def _backward_with_hook(lib, where, result, node="builtin"):
    a = lib.ones(4, requires_grad=True)
    b = a * 2 if node == "builtin" else square_function(lib).apply(a)
    hooks = {"tensor": b.register_hook, "node": b.grad_fn.register_hook,
             "prehook": b.grad_fn.register_prehook,
             "post_accumulate": a.register_post_accumulate_grad_hook}

    def wrong_hook(*args):
        return result(lib)

    hooks[where](wrong_hook)
    b.sum().backward()
    return a.grad


@pytest.mark.parametrize("node", ["builtin", "custom"])
@pytest.mark.parametrize("where,result,error,match", [
    ("tensor", "a tuple", TypeError, r"^expected Variable, but hook returned 'tuple'$"),
    ("tensor", "an object", TypeError, r"^expected Variable, but hook returned 'object'$"),
    ("tensor", "a smaller tensor", RuntimeError,
     r"^hook 'wrong_hook' has changed the size of value$"),
    ("tensor", "another dtype", RuntimeError, r"^hook 'wrong_hook' has changed the type of "
     r"value \(was torch.FloatTensor got torch.DoubleTensor\)$"),
    ("node", "a list", TypeError, r"^expected tuple, but hook returned 'list'$"),
    ("node", "an object", TypeError, r"^expected tuple, but hook returned 'object'$"),
    ("prehook", "a list", TypeError, r"^expected tuple, but hook returned 'list'$"),
    ("prehook", "a tuple", RuntimeError, r"^hook 'wrong_hook' has returned an incorrect number "
     r"of values \(got 2, but expected 1\)$"),
    ("post_accumulate", "a gradient", RuntimeError,
     r"^Tensor post accumulate grad hooks should return None.$"),
    ("post_accumulate", "a smaller tensor", RuntimeError,  # (checked as a gradient first)
     r"^hook 'wrong_hook' has changed the size of value$"),
    ("post_accumulate", "a tuple", TypeError, r"^expected Variable, but hook returned 'tuple'$"),
])
def test_a_hook_returning_the_wrong_thing_is_refused(node, where, result, error, match):
    # torch: python_hook.cpp's check_result / check_single_result, reached by
    # test_node_lifecycle.py's hooks had they returned what they close over
    raises_like_torch(lambda lib: _backward_with_hook(lib, where, WRONG_RESULTS[result], node),
                      error, match)


@pytest.mark.parametrize("result,error,match", [
    # a * 2 has a second (number) input: its gradient is None and may not be replaced
    ("a tuple", RuntimeError, "^can't replace a None gradient with a non-None value$"),
    ("a number in a tuple", TypeError, "^expected Variable, but hook returned 'float'$"),
])
def test_a_node_hook_replaces_each_gradient_under_the_same_rules(result, error, match):
    raises_like_torch(lambda lib: _backward_with_hook(lib, "node", WRONG_RESULTS[result]),
                      error, match)


def test_node_hooks_see_a_gradient_for_every_output():
    # torch: test_grad_fn_prehooks_multiple_outputs (its built-in node, one output used)
    def program(lib):
        x = lib.ones(4, requires_grad=True)
        seen = []
        parts = x.unbind()
        parts[1].grad_fn.register_prehook(lambda go: seen.append([g is None for g in go]))
        parts[1].grad_fn.register_hook(lambda gi, go: seen.append([g is None for g in go]))
        parts[1].sum().backward()
        return seen, x.grad

    seen, _ = like_torch(program)
    assert seen == [[True, False, True, True]] * 2


class _CallableHook:
    """A hook object without ``__name__``: torch's messages call it '<unknown>'."""

    def __call__(self, *args):
        return (None, None)


@pytest.mark.parametrize("hook,error,match", [
    (_CallableHook(), RuntimeError, r"^hook '<unknown>' has returned an incorrect number of "
     r"values \(got 2, but expected 3\)$"),
    (lambda module, grad_input, grad_output: list(grad_input), TypeError,
     "^expected tuple, but hook returned 'list'$"),
])
def test_a_module_backward_hook_result_is_checked_as_a_node_hooks(hook, error, match):
    # the legacy Module.register_backward_hook wraps the hook as a node post hook (torch's
    # functools.partial keeps the hook's __name__, or has none)
    def program(lib):
        module = lib.nn.Linear(2, 2)
        module.register_backward_hook(hook)
        module(lib.ones(1, 2, requires_grad=True)).sum().backward()

    raises_like_torch(program, error, match)
