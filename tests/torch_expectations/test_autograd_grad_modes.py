"""torch's expectations of grad-mode objects as decorators: plain, nested, generators."""
import pytest

from .twin import like_torch

def test_enable_grad_and_no_grad_decorate_without_parentheses():
    # torch: test_enable_grad_decorator_no_paren, test_no_grad (torch.no_grad(adder))
    def program(lib):
        x = lib.ones(1, dtype=lib.float64, requires_grad=True)

        @lib.enable_grad
        def doubler(t):
            return t * 2

        with lib.no_grad():
            z = doubler(x)
        added = lib.no_grad(lambda a, b: a + b)(x, x)
        return z.requires_grad, added.requires_grad

    assert like_torch(program) == (True, False)


def test_grad_mode_decorators_nest_recursively():
    # torch: test_set_grad_generator_functions_recursive
    def program(lib):
        seen = []

        @lib.enable_grad()
        def on(depth):
            seen.append(lib.is_grad_enabled())
            if depth:
                off(depth - 1)
                seen.append(lib.is_grad_enabled())

        @lib.no_grad()
        def off(depth):
            seen.append(lib.is_grad_enabled())
            if depth:
                on(depth - 1)
                seen.append(lib.is_grad_enabled())

        with lib.no_grad():
            on(4)
            seen.append(lib.is_grad_enabled())
        return seen

    seen = like_torch(program)
    assert seen[-1] is False and seen[0] is True


def test_grad_mode_decorated_coroutine_with_send():
    # torch: test_set_grad_coroutines
    def program(lib):
        seen = []

        @lib.no_grad()
        def coro(n=3):
            for i in range(n):
                seen.append(("inside", lib.is_grad_enabled()))
                r = yield i
                seen.append(("resumed", lib.is_grad_enabled(), r == i))

        with lib.enable_grad():
            c, r = coro(), None
            try:
                while True:
                    r = c.send(r)
                    seen.append(("caller", lib.is_grad_enabled()))
            except StopIteration:
                pass
        return seen

    seen = like_torch(program)
    assert ("caller", True) in seen and ("inside", False) in seen


def test_grad_mode_decorated_generator_close_and_throw():
    # torch: test_set_grad_coroutines_exit, ..._benign_exceptions, ..._critical_exceptions
    def program(lib):
        seen = []

        class RecoverableError(Exception):
            pass

        @lib.no_grad()
        def gen():
            for i in range(5):
                try:
                    yield i
                except RecoverableError:
                    seen.append(("throw", lib.is_grad_enabled()))
                except GeneratorExit:
                    seen.append(("close", lib.is_grad_enabled()))
                    raise

        with lib.enable_grad():
            g = gen()
            next(g)
            g.throw(RecoverableError)
            seen.append(("caller", lib.is_grad_enabled()))
            g.close()
        return seen

    assert like_torch(program) == [("throw", False), ("caller", True), ("close", False)]


def test_grad_mode_decorators_on_generators():
    # torch: test_set_grad_generator_functions
    def program(lib):
        seen = []

        @lib.no_grad()
        def without_grad():
            for i in range(3):
                seen.append(("inside", lib.is_grad_enabled()))
                yield i

        @lib.enable_grad()
        def with_grad():
            for i in range(3):
                seen.append(("inside", lib.is_grad_enabled()))
                yield i

        with lib.enable_grad():
            for _ in without_grad():
                seen.append(("caller", lib.is_grad_enabled()))
        with lib.no_grad():
            for _ in with_grad():
                seen.append(("caller", lib.is_grad_enabled()))
        return seen

    seen = like_torch(program)
    assert seen[:2] == [("inside", False), ("caller", True)]
    assert seen[6:8] == [("inside", True), ("caller", False)]


@pytest.mark.parametrize("mode", ["no_grad", "enable_grad"])
def test_grad_mode_objects_are_context_managers_and_decorators(mode):
    # torch: test_no_grad, test_set_grad_generator_functions (the plain-function form)
    def program(lib):
        manager = getattr(lib, mode)

        @manager()
        def state():
            return lib.is_grad_enabled()

        with lib.set_grad_enabled(mode == "no_grad"):
            decorated = state()
            with manager():
                managed = lib.is_grad_enabled()
            after = lib.is_grad_enabled()
        return decorated, managed, after

    assert like_torch(program) == ((mode != "no_grad"),) * 2 + ((mode == "no_grad"),)


def test_set_grad_enabled_as_context_and_as_function():
    # torch: test_set_grad_enabled
    def program(lib):
        x = lib.tensor([1.], dtype=lib.float64, requires_grad=True)
        flags = []
        with lib.set_grad_enabled(False):
            flags.append((x * 2).requires_grad)
        with lib.set_grad_enabled(True):
            flags.append((x * 2).requires_grad)
        with lib.set_grad_enabled(False):
            lib.set_grad_enabled(True)
            flags.append((x * 2).requires_grad)
        return flags

    assert like_torch(program) == [False, True, True]
