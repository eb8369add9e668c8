"""Custom Function (mark_dirty, backward/vjp, jvp), Variable, Tensor.data/output_nr, allclose:
the same programs under torch and gradkit (torch 2.13 is the oracle)."""
import warnings

import pytest

import gradkit
from torch_oracle import same_as_torch

torch = pytest.importorskip("torch")


def function(lib, forward, backward=None, jvp=None, vjp=None, name="Probe"):
    """A Function subclass of ``lib`` named ``name`` with the given staticmethods."""
    methods = {"forward": staticmethod(forward)}
    for key, rule in (("backward", backward), ("jvp", jvp), ("vjp", vjp)):
        if rule is not None:
            methods[key] = staticmethod(rule)
    return type(name, (lib.autograd.Function,), methods)


def double_in_place(ctx, x):
    x.mul_(2)
    ctx.mark_dirty(x)
    return x


def twice(ctx, g):
    return g * 2


# -- mark_dirty -------------------------------------------------------------------------

def dirty_not_returned(lib):
    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x * 1
    return function(lib, forward, twice).apply(lib.ones(2, requires_grad=True) * 1)


def dirty_not_returned_without_grad(lib):
    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x * 1
    return function(lib, forward, twice).apply(lib.ones(2))


def dirty_leaf(lib):
    return function(lib, double_in_place, twice).apply(lib.ones(2, requires_grad=True))


def dirty_view_of_leaf(lib):
    return function(lib, double_in_place, twice).apply(lib.ones(4, requires_grad=True)[:2])


def dirty_non_leaf(lib):
    a = lib.ones(2, requires_grad=True)
    b = a * 1
    y = function(lib, double_in_place, twice, name="Dirty").apply(b)
    (y * a).sum().backward()
    return y is b, y.grad_fn.name(), b._version, y.tolist(), a.grad.tolist()


def dirty_view_rebases_its_base(lib):
    a = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    b = a * 1
    v = b[:2]
    y = function(lib, double_in_place, twice).apply(v)
    (b * a).sum().backward()  # through the base: the dirty region went through the Function
    return y.tolist(), b.tolist(), a.grad.tolist()


def dirty_input_that_needs_no_grad(lib):
    def forward(ctx, x, y):
        x.add_(y)
        ctx.mark_dirty(x)
        return x

    a = lib.ones(2)
    out = function(lib, forward, lambda ctx, g: (g, g)).apply(a, lib.ones(2, requires_grad=True))
    return out is a, out.grad_fn.name(), a.requires_grad


@pytest.mark.parametrize("program", [
    dirty_not_returned, dirty_not_returned_without_grad, dirty_leaf, dirty_view_of_leaf,
    dirty_non_leaf, dirty_view_rebases_its_base, dirty_input_that_needs_no_grad])
def test_mark_dirty_matches_torch(program):
    same_as_torch(program)


def test_mark_dirty_of_a_tensor_that_is_not_an_input_warns():
    def program(lib):
        def forward(ctx, x):
            y = x * 2
            ctx.mark_dirty(y)
            return y
        with pytest.warns(UserWarning, match="ctx.mark_dirty.. received a tensor that was not "
                                             "an input"):
            y = function(lib, forward, lambda ctx, g: g).apply(lib.ones(2, requires_grad=True))
        return y.tolist()

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the one warning is the one checked
        same_as_torch(program)


# -- backward / vjp ---------------------------------------------------------------------

def both_backward_and_vjp(lib):
    fn = function(lib, lambda ctx, x: x * 2, backward=twice, vjp=twice, name="Both")
    y = fn.apply(lib.ones(2, requires_grad=True))
    seen = [y.grad_fn.name()]  # defining both is refused when backward runs, as in torch
    y.sum().backward()
    return seen


def vjp_only(lib):
    x = lib.ones(2, requires_grad=True)
    y = function(lib, lambda ctx, x: x * 2, vjp=twice, name="OnlyVjp").apply(x)
    y.sum().backward()
    return y.grad_fn.name(), x.grad.tolist()


def neither_backward_nor_vjp(lib):
    y = function(lib, lambda ctx, x: x * 2).apply(lib.ones(2, requires_grad=True))
    y.sum().backward()


@pytest.mark.parametrize("program", [both_backward_and_vjp, vjp_only, neither_backward_nor_vjp])
def test_backward_or_vjp_matches_torch(program):
    same_as_torch(program)


def test_grad_fn_type_is_named_after_the_function():
    def program(lib):
        fn = function(lib, lambda ctx, x: x * 2, twice, name="MyFn")
        y = fn.apply(lib.ones(2, requires_grad=True))
        node_type = type(y.grad_fn)
        z = fn.apply(lib.ones(2, requires_grad=True))
        return (node_type.__name__, node_type.__qualname__, y.grad_fn.name(),
                type(z.grad_fn) is node_type, isinstance(y.grad_fn, lib.autograd.graph.Node),
                repr(y.grad_fn).startswith("<"), "MyFnBackward object" in repr(y.grad_fn))

    same_as_torch(program)


# -- forward mode -----------------------------------------------------------------------

def sin_forward(ctx, x):
    ctx.save_for_forward(x)
    return x.sin()


def sin_jvp(ctx, t):
    x, = ctx.saved_tensors
    return t * x.cos()


def jvp_only_in_forward_mode(lib):
    fw = lib.autograd.forward_ad
    with fw.dual_level():
        dual = fw.make_dual(lib.tensor([0.0, 1.0], dtype=lib.float64),
                            lib.ones(2, dtype=lib.float64))
        y = function(lib, sin_forward, jvp=sin_jvp, name="Sin").apply(dual)
        return fw.unpack_dual(y).tangent.tolist()


def jvp_only_in_backward_mode(lib):
    y = function(lib, sin_forward, jvp=sin_jvp, name="Sin").apply(
        lib.tensor([0.0, 1.0], requires_grad=True))
    seen = [y.grad_fn.name()]
    y.sum().backward()
    return seen


def backward_only_in_forward_mode(lib):
    fw = lib.autograd.forward_ad
    with fw.dual_level():
        dual = fw.make_dual(lib.tensor([0.0, 1.0]), lib.ones(2))
        return function(lib, lambda ctx, x: x * 2, twice).apply(dual)


@pytest.mark.parametrize("program", [
    jvp_only_in_forward_mode, jvp_only_in_backward_mode, backward_only_in_forward_mode])
def test_jvp_and_backward_modes_match_torch(program):
    same_as_torch(program)


@pytest.mark.parametrize("tangent", [
    lambda lib, t: lib.ones(3), lambda lib, t: lib.ones(1), lambda lib, t: lib.ones(()),
    lambda lib, t: (t, t), lambda lib, t: 3.0, lambda lib, t: t * 2],
    ids=["wrong size", "broadcastable size", "0-d", "two for one output", "a number", "valid"])
def test_jvp_output_is_checked_like_torch(tangent):
    def program(lib):
        fw = lib.autograd.forward_ad
        fn = function(lib, lambda ctx, x: x * 2, twice, jvp=lambda ctx, t: tangent(lib, t))
        with fw.dual_level():
            dual = fw.make_dual(lib.tensor([0.0, 1.0]), lib.ones(2))
            return fw.unpack_dual(fn.apply(dual)).tangent.tolist()

    same_as_torch(program)


def test_jvp_must_give_one_tangent_per_output():
    def program(lib):
        fw = lib.autograd.forward_ad
        fn = function(lib, lambda ctx, x: (x * 2, x * 3), lambda ctx, g1, g2: g1,
                      jvp=lambda ctx, t: (t * 2,))
        with fw.dual_level():
            return fn.apply(fw.make_dual(lib.tensor([0.0, 1.0]), lib.ones(2)))

    same_as_torch(program)


def test_jvp_integer_tangent_is_refused():
    # torch fails an internal assert here; gradkit says the same in its own words
    fw = gradkit.autograd.forward_ad
    fn = function(gradkit, lambda ctx, x: x * 2, twice, jvp=lambda ctx, t: t.long())
    with fw.dual_level():
        dual = fw.make_dual(gradkit.tensor([0.0, 1.0]), gradkit.ones(2))
        with pytest.raises(RuntimeError, match="forward grad to be floating point or complex"):
            fn.apply(dual)


# -- Variable, Tensor.data, output_nr ---------------------------------------------------

@pytest.mark.parametrize("program", [
    lambda lib: [type(v).__name__ == "Tensor" and v.requires_grad and v.is_leaf
                 for v in [lib.autograd.Variable(lib.ones(2), requires_grad=True)]],
    lambda lib: lib.autograd.Variable(lib.ones(2)).requires_grad,
    lambda lib: lib.autograd.Variable().tolist(),
    lambda lib: lib.autograd.Variable([1.0, 2.0]),
    lambda lib: lib.autograd.Variable(lib.ones(2, dtype=lib.int64), requires_grad=True),
    lambda lib: isinstance(lib.ones(1), lib.autograd.Variable),
    lambda lib: isinstance(3, lib.autograd.Variable),
], ids=["requires_grad", "default", "empty", "list", "integer",
        "isinstance", "not a tensor"])
def test_variable_matches_torch(program):
    same_as_torch(program)


def test_variable_is_a_detached_leaf_sharing_memory_and_version():
    def program(lib):
        base = lib.ones(2, requires_grad=True)
        nonleaf = base * 2
        v = lib.autograd.Variable(nonleaf, requires_grad=True)
        with lib.no_grad():
            v.add_(1)
        return (v is nonleaf, v.grad_fn, v.is_leaf, nonleaf.tolist(), nonleaf._version,
                v._version)

    same_as_torch(program)


@pytest.mark.parametrize("requires_grad", [False, True])
def test_variable_volatile_warns(requires_grad):
    def program(lib):
        with pytest.warns(UserWarning, match="volatile was removed and now has no effect"):
            return lib.autograd.Variable(lib.ones(2), requires_grad, True).tolist()

    same_as_torch(program)


def data_getter(lib):
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    d = x.data
    seen = [d.requires_grad, d.is_leaf, d.grad_fn, d._is_view()]
    d.add_(1)  # writes x's memory, bumps only d's version
    seen += [x.tolist(), x._version, d._version]
    y = x * 2
    seen += [y.data.tolist(), y.data.requires_grad]
    z = x.exp()
    z.data.mul_(0)  # not seen by autograd: backward uses the zeroed result
    z.sum().backward()
    return seen + [x.grad.tolist()]


def data_setter(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    x.data = lib.full((2,), 3.0)  # the saved x is the same tensor: it sees the new values
    y.sum().backward()
    seen = [x.grad.tolist(), x._version, x.requires_grad]
    x.data = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)  # any shape and dtype
    return seen + [x.tolist(), str(x.dtype).split(".")[-1], x.is_leaf]


def data_setter_keeps_history(lib):
    w = lib.ones(2, requires_grad=True)
    q = w * 3
    q.data = lib.zeros(2)
    q.sum().backward()
    return q.tolist(), q.grad_fn.name(), w.grad.tolist()


@pytest.mark.parametrize("program", [
    data_getter, data_setter, data_setter_keeps_history,
    lambda lib: setattr(lib.ones(2, requires_grad=True), "data", lib.tensor([1, 2])),
    lambda lib: setattr(lib.ones(2), "data", [1.0, 2.0]),
    lambda lib: lib.inference_mode()(lambda: lib.ones(2))().data.is_inference(),
], ids=["getter", "setter", "setter keeps history", "integer data on requires_grad",
        "not a tensor", "inference"])
def test_tensor_data_matches_torch(program):
    same_as_torch(program)


def test_output_nr_matches_torch():
    def program(lib):
        m = lib.ones(3, 4, requires_grad=True)
        values, indices = m.max(dim=0)
        return ([p.output_nr for p in m.split(2, dim=1)], m.output_nr, (m * 2).output_nr,
                values.output_nr, indices.output_nr)

    same_as_torch(program)


# -- allclose ---------------------------------------------------------------------------

NAN, INF = float("nan"), float("inf")


@pytest.mark.parametrize("a,b,kwargs", [
    ([1.0, NAN], [1.0, NAN], {}),
    ([1.0, NAN], [1.0, NAN], {"equal_nan": True}),
    ([1.0, 2.0], [1.0, 2.0 + 1e-6], {}),
    ([1e-9], [2e-9], {}),
    ([1.0], [1.1], {"rtol": 0.2}),
    ([1.0], [1.1], {"rtol": 0.01, "atol": 0.2}),
    ([1.0], [1.1], {"rtol": 0.0, "atol": 0.0}),
    ([INF], [INF], {}),
    ([INF], [-INF], {}),
    ([1e10], [1.00001e10], {}),
    ([[1.0, 2.0]], [1.0, 2.0], {}),
    ([[1.0, 2.0, 3.0]], [1.0, 2.0], {}),
    ([], [], {}),
    ([1.0], [1.0], {"rtol": -1}),
    ([1.0], [1.0], {"atol": -0.5}),
])
def test_allclose_matches_torch(a, b, kwargs):
    def program(lib):
        x, y = lib.tensor(a, dtype=lib.float64), lib.tensor(b, dtype=lib.float64)
        return lib.allclose(x, y, **kwargs), x.allclose(y, **kwargs)

    same_as_torch(program)


@pytest.mark.parametrize("program", [
    lambda lib: lib.allclose(lib.ones(2), lib.ones(2, dtype=lib.float64)),
    lambda lib: lib.allclose(lib.ones(2, dtype=lib.int64), lib.ones(2)),
    lambda lib: lib.allclose(lib.tensor([1, 2]), lib.tensor([1, 3]), rtol=0.5),
    lambda lib: lib.allclose(lib.tensor([True]), lib.tensor([True])),
    lambda lib: lib.allclose(lib.tensor([1 + 1j]), lib.tensor([1 + 1.0000001j])),
    lambda lib: lib.allclose(lib.ones(2, requires_grad=True), lib.ones(2)),
    lambda lib: lib.allclose(lib.ones(2), 1.0),
    lambda lib: lib.isclose(lib.ones(2), lib.ones(2, dtype=lib.float64)),
], ids=["float vs double", "long vs float", "integers", "bool", "complex", "requires_grad",
        "a number", "isclose dtypes"])
def test_allclose_dtypes_and_arguments_match_torch(program):
    same_as_torch(program)


# -- an input returned as-is ----------------------------------------------------------------

def returned_input_then_base_written(lib):
    a = lib.tensor([1., 2.], requires_grad=True)
    x = a * 1
    y = function(lib, lambda ctx, t: t, lambda ctx, g: g * 3, name="Id").apply(x)
    x.mul_(2)  # y is a view of x made by a Function: using it now must fail, not give [3, 3]
    (y * 1).sum().backward()
    return a.grad.tolist()


def returned_input_written(lib, index=False):
    x = lib.tensor([1., 2.], requires_grad=True) * 1
    y = function(lib, lambda ctx, t: t, lambda ctx, g: g * 3, name="Id").apply(
        x[0] if index else x)
    y.add_(1)
    return y.tolist()


def returned_input_used(lib):
    a = lib.tensor([1., 2.], requires_grad=True)
    x = a * 1
    y = function(lib, lambda ctx, t: t, lambda ctx, g: g * 3, name="Id").apply(x)
    (y * y).sum().backward()
    return a.grad.tolist(), y._base is x, y._is_view()


@pytest.mark.parametrize("program", [
    returned_input_then_base_written, returned_input_written,
    lambda lib: returned_input_written(lib, index=True), returned_input_used])
def test_an_input_returned_as_is_is_a_view_that_refuses_in_place_as_torch(program):
    observed = same_as_torch(program)
    assert observed[0] == "returned" or "created inside a custom Function" in observed[2] \
        or "its base or another view of its base has been modified" in observed[2]
