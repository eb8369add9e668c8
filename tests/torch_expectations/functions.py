"""Small custom Functions several torch expectations share, built for either library."""


def identity_function(lib, extra_grads: tuple = (), scale: float = 1):
    """Identity whose backward passes ``scale`` * the gradient on (then ``extra_grads``)."""

    class Identity(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            g = g * scale if scale != 1 else g
            return (g, *extra_grads) if extra_grads else g

    return Identity


def square_function(lib):
    """x * x saving x; its backward reads an optional ``ctx.scale`` (set on the node)."""

    class Square(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g * getattr(ctx, "scale", 1)

    return Square


def failing_function(lib):
    """A clone whose backward raises torch's test message."""

    class SimulateBackwardError(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            raise RuntimeError("Simulate error on backward pass")

    return SimulateBackwardError


def mul2(lib, custom: bool):
    """x * 2 as the built-in op or as a custom Function."""

    class Mul2(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    return Mul2.apply if custom else (lambda t: t * 2)


def add_one_in_place(lib):
    """Adds one to its input in place and marks it dirty."""

    class AddOne(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    return AddOne


def no_grad_function(lib):
    """A Function (x * 2) whose backward gives its input no gradient (None)."""

    class NoGrad(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return None

    return NoGrad


def adder_and_sum(lib, calls: list):
    """Adds b to a in place (dirty) and returns (a, a + b); each backward appends to calls."""

    class AddInPlaceAndSum(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            a.add_(b)
            ctx.mark_dirty(a)
            return a, a + b

        @staticmethod
        def backward(ctx, ga, gab):
            calls.append(1)
            return ga + gab, ga + gab

    return AddInPlaceAndSum


def view_as_function(lib):
    """A Function ``ViewAs`` whose forward returns ``x.view_as(x)`` (a view it made), its
    backward the gradient as is."""

    class ViewAs(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.view_as(x)

        @staticmethod
        def backward(ctx, g):
            return g

    return ViewAs


def setup_context_function(lib, name: str, **methods):
    """A Function class named ``name`` in torch's setup_context style: ``methods`` (forward,
    backward, vmap, ...) become its staticmethods, setup_context does nothing unless given."""
    body = {"setup_context": staticmethod(lambda ctx, inputs, output: None)}
    body.update((key, staticmethod(method)) for key, method in methods.items())
    return type(name, (lib.autograd.Function,), body)


def function_of(lib, forward, backward):
    """A Function's ``apply`` from a plain ``forward(x)`` and ``backward(g)``."""

    class Plain(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return forward(x)

        @staticmethod
        def backward(ctx, g):
            return backward(g)
    return Plain.apply
