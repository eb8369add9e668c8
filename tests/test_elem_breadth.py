"""torch API breadth, run as the same program in torch and gradkit: the inverse hyperbolic
functions, in-place variants (comparisons, logical, triangular, in-place view ops) and small
Tensor/torch helpers. Values, dtypes, gradients and error messages must agree."""
import re
import warnings

import numpy as np
import pytest

import gradkit
from test_torch_numerics import assert_same_as_torch

torch = pytest.importorskip("torch")

NAN, INF = float("nan"), float("inf")


def _grads(fn, values, dtype="float64"):
    """A program: fn of one leaf made from ``values``, returning (fn(x), d sum(fn(x)) / dx)."""
    def program(m):
        x = m.tensor(values, dtype=getattr(m, dtype), requires_grad=True)
        out = fn(m, x)
        grad, = m.autograd.grad(out.real.sum() if out.is_complex() else out.sum(), x)
        return out, grad
    return program


# -- acosh, asinh, atanh ---------------------------------------------------------------------
INVERSE_HYPERBOLIC = ("acosh", "asinh", "atanh", "arccosh", "arcsinh", "arctanh")


@pytest.mark.parametrize("name", INVERSE_HYPERBOLIC)
def test_inverse_hyperbolic_values_and_gradients_at_the_domain_edges(name):
    # ±1 and 0 are where 1/sqrt(x² - 1) and 1/(1 - x²) blow up; 2 and -2 lie outside atanh's
    # domain and on both sides of acosh's
    edges = [1.0, -1.0, 0.0, 0.5, -0.5, 2.0, -2.0, 1e-8, INF, -INF, NAN]
    assert_same_as_torch(_grads(lambda m, x: getattr(m, name)(x), edges))
    assert_same_as_torch(_grads(lambda m, x: getattr(x, name)(), edges))


@pytest.mark.parametrize("name", INVERSE_HYPERBOLIC)
@pytest.mark.parametrize("dtype", ("int64", "bool", "float16", "float32", "complex64"))
def test_inverse_hyperbolic_dtypes(name, dtype):
    values = [0, 1, 1, 0] if dtype == "bool" else [0, 1, 2, -1]
    assert_same_as_torch(lambda m: getattr(m, name)(m.tensor(values, dtype=getattr(m, dtype))),
                         rtol=1e-3)


@pytest.mark.parametrize("name", ("acosh", "asinh", "atanh"))
def test_complex_gradients_follow_torchs_formula_in_every_quadrant(name):
    # acosh: rsqrt(z + 1) rsqrt(z - 1) for complex z, not the real formula's rsqrt(z² - 1),
    # which flips the sign where Re z < 0
    values = [-0.5 + 0.3j, 0.2 - 1j, -2 + 0.1j, -2 - 0.1j, 0.5 + 0j, 3 + 2j]
    assert_same_as_torch(_grads(lambda m, x: getattr(m, name)(x), values, "complex128"))


@pytest.mark.parametrize("name", INVERSE_HYPERBOLIC)
def test_inverse_hyperbolic_in_place_forms(name):
    def program(m):
        x = m.tensor([0.25, -0.5, 0.75], dtype=m.float64)
        out = getattr(x, name + "_")()
        z = m.tensor([0.125, 0.5])
        top = getattr(m, name + "_")(z)
        return x, z, top, m.tensor([out is x, top is z, x._version == 1])
    assert_same_as_torch(program)


@pytest.mark.parametrize("name", INVERSE_HYPERBOLIC)
def test_inverse_hyperbolic_in_place_records_a_node_whose_backward_raises(name):
    # torch has no derivative for acosh_, asinh_, atanh_ (AcoshBackward1 & co.)
    def backward(m):
        x = m.tensor([1.25, 1.5], dtype=m.float64, requires_grad=True)
        y = x * 1
        getattr(y, name + "_")()
        assert y.grad_fn.name() == name.replace("arc", "a").capitalize() + "Backward1"
        return m.autograd.grad(y.sum(), x)

    def forward_mode(m):
        with m.autograd.forward_ad.dual_level():
            x = m.autograd.forward_ad.make_dual(m.tensor([1.25, 1.5], dtype=m.float64),
                                                m.ones(2, dtype=m.float64))
            return getattr(x * 1, name + "_")()
    assert_same_as_torch(backward)
    assert_same_as_torch(forward_mode)


@pytest.mark.parametrize("name", INVERSE_HYPERBOLIC)
def test_inverse_hyperbolic_in_place_refusals(name):
    def on_leaf(m):
        return getattr(m.tensor([0.5], requires_grad=True), name + "_")()

    def on_integers(m):
        return getattr(m.tensor([1, 2]), name + "_")()
    assert_same_as_torch(on_leaf)
    assert_same_as_torch(on_integers)


def test_inverse_hyperbolic_double_backward_matches_torch():
    def program(m):
        x = m.tensor([0.3, -0.6, 1.5, 2.5], dtype=m.float64, requires_grad=True)
        outs = []
        for name, scale in (("asinh", 1.0), ("atanh", 0.5), ("acosh", 2.0)):
            y = getattr(m, name)(x * scale if name != "acosh" else x.abs() + 1.25)
            g, = m.autograd.grad(y.sum(), x, create_graph=True)
            gg, = m.autograd.grad(g.sum(), x)
            outs += [g, gg]
        return tuple(outs)
    assert_same_as_torch(program)


# -- in-place comparisons and logical ops -----------------------------------------------------
COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less",
               "less_equal", "not_equal")


@pytest.mark.parametrize("name", COMPARISONS)
@pytest.mark.parametrize("dtype", ("float32", "int64", "uint8", "bool", "complex64"))
def test_in_place_comparison_keeps_self_dtype(name, dtype):
    def program(m):
        values = [0, 1, 1] if dtype == "bool" else [1, 2, 3]
        x = m.tensor(values, dtype=getattr(m, dtype))
        by_number = x.clone()
        out = getattr(by_number, name + "_")(2)
        by_tensor = x.clone()
        getattr(by_tensor, name + "_")(m.tensor([2.5]))
        return by_number, by_tensor, m.tensor([out is by_number, by_number._version == 1])
    assert_same_as_torch(program)


@pytest.mark.parametrize("name", COMPARISONS)
def test_in_place_comparison_records_a_zero_gradient_node(name):
    def program(m):
        a = m.tensor([1.0, 2.0, 3.0], dtype=m.float64, requires_grad=True)
        b = m.tensor([2.0, 2.0, 2.0], dtype=m.float64, requires_grad=True)
        by_number, by_tensor = a * 1, a * 1
        getattr(by_number, name + "_")(2.0)
        getattr(by_tensor, name + "_")(b)
        names = (by_number.grad_fn.name(), by_tensor.grad_fn.name())
        assert names == (type(by_number.grad_fn).__name__, type(by_tensor.grad_fn).__name__)
        grads = m.autograd.grad((by_number + by_tensor).sum(), (a, b))
        return (by_number, by_tensor) + grads, names
    ours, theirs = (program(m) for m in (gradkit, torch))
    assert ours[1] == theirs[1]
    assert_same_as_torch(lambda m: program(m)[0])


@pytest.mark.parametrize("call", [
    lambda m: m.tensor([1.0, 2.0], requires_grad=True).lt_(2),
    lambda m: m.tensor([1j]).lt_(1),
    lambda m: m.tensor([1.0, 2.0]).eq_(m.tensor([[1.0], [2.0]])),
    lambda m: m.tensor([1, 2]).ge_(m.tensor([1.5 + 1j])),
], ids=["leaf", "complex_order", "broadcast_shape", "complex_into_int"])
def test_in_place_comparison_errors(call):
    assert_same_as_torch(call)


@pytest.mark.parametrize("name,args", [
    ("logical_and_", ([1.0, 0.0],)), ("logical_or_", ([0.0, 0.0],)),
    ("logical_xor_", ([1.0, 1.0],)), ("logical_not_", ())])
def test_in_place_logical_ops_write_without_recording(name, args):
    # torch records nothing: x keeps its MulBackward0 and the gradient passes through it
    def program(m):
        a = m.tensor([0.5, 0.0], dtype=m.float64, requires_grad=True)
        y = a * 1
        getattr(y, name)(*(m.tensor(v) for v in args))
        assert type(y.grad_fn).__name__ == "MulBackward0" and y._version == 1
        leaf = m.tensor([2.0, 0.0], requires_grad=True)
        getattr(leaf, name)(*(m.tensor(v) for v in args))  # allowed on a leaf, as torch
        ints = m.tensor([3, 0])
        getattr(ints, name)(*(m.tensor(v) for v in args))
        return (y, leaf, ints) + m.autograd.grad(y.sum(), a)
    assert_same_as_torch(program)


@pytest.mark.parametrize("name,args", [
    ("eq_", (2.0,)), ("lt_", ([[2.0, 2.0], [2.0, 2.0]],)), ("logical_not_", ()),
    ("logical_or_", ([[0.0, 1.0], [0.0, 1.0]],)), ("cumsum_", (0,)), ("tril_", ()),
    ("triu_", (1,)), ("fill_diagonal_", (0.5,)), ("fix_", ()), ("conj_physical_", ()),
    ("squeeze_", ()), ("transpose_", (0, 1)), ("unsqueeze_", (0,)), ("t_", ())])
def test_in_place_forms_under_forward_ad(name, args):
    def program(m):
        fw = m.autograd.forward_ad
        with fw.dual_level():
            values = m.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=m.float64)
            x = fw.make_dual(values, values * 10)
            y = x * 1
            getattr(y, name)(*(m.tensor(a, dtype=m.float64) if isinstance(a, list) else a
                               for a in args))
            return y, fw.unpack_dual(y).tangent
    assert_same_as_torch(program)


LOGICAL_DTYPES = ("uint8", "int64", "bool", "float16", "float64", "complex64")


@pytest.mark.parametrize("name", ("logical_and_", "logical_or_", "logical_xor_"))
@pytest.mark.parametrize("dtype", LOGICAL_DTYPES)
@pytest.mark.parametrize("other", LOGICAL_DTYPES + (1, 0.0))
def test_in_place_logical_ops_keep_self_dtype(name, dtype, other):
    def program(m):
        x = m.tensor([0, 1, 2]).to(getattr(m, dtype))
        y = other if not isinstance(other, str) else m.tensor([0, 2, 0]).to(getattr(m, other))
        return getattr(x, name)(y)
    assert_same_as_torch(program)


def test_bitwise_not_in_place():
    def program(m):
        ints, bools = m.tensor([0, 5, -3]), m.tensor([True, False])
        return ints.bitwise_not_(), bools.bitwise_not_(), ints
    assert_same_as_torch(program)
    assert_same_as_torch(lambda m: m.tensor([1.5]).bitwise_not_())


# -- cumsum_, fix_, tril_, triu_ ----------------------------------------------------------------
@pytest.mark.parametrize("name,args", [
    ("cumsum_", (0,)), ("cumsum_", (1,)), ("fix_", ()), ("tril_", ()), ("tril_", (-1,)),
    ("triu_", ()), ("triu_", (1,))])
def test_in_place_value_ops_and_their_gradients(name, args):
    def program(m):
        a = m.tensor([[1.5, -2.25, 3.0], [-4.5, 5.75, -6.0]], dtype=m.float64,
                     requires_grad=True)
        y = a * 1
        out = getattr(y, name)(*args)
        assert out is y and y._version == 1
        g, = m.autograd.grad(y, a, m.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]],
                                            dtype=m.float64), create_graph=True)
        leaf_refused = None
        try:
            getattr(a, name)(*args)
        except RuntimeError as e:
            leaf_refused = str(e)
        assert leaf_refused == "a leaf Variable that requires grad is being used in an " \
                               "in-place operation."
        ints = m.tensor([[1, 2, 3], [4, 5, 6]])
        return y, g, getattr(ints, name)(*args)
    assert_same_as_torch(program)


def test_cumsum_in_place_dtype_rules():
    assert_same_as_torch(lambda m: m.tensor([1, 2, 3], dtype=m.int32).cumsum_(0))
    assert_same_as_torch(lambda m: m.tensor([1.0, 2.0]).cumsum_(0, dtype=m.float64))
    assert_same_as_torch(lambda m: m.tensor([1.0, 2.0]).cumsum_(0, dtype=m.int64))


# -- fill_diagonal_ -------------------------------------------------------------------------------
@pytest.mark.parametrize("shape,wrap", [
    ((3, 3), False), ((2, 4), False), ((5, 2), False), ((7, 3), True), ((12, 3), True),
    ((4, 3), True), ((3, 3, 3), False), ((2, 2, 2, 2), True)])
def test_fill_diagonal_values_and_gradient(shape, wrap):
    def program(m):
        a = m.tensor(np.arange(np.prod(shape), dtype=np.float64).reshape(shape) + 1,
                     requires_grad=True)
        y = a * 1
        out = y.fill_diagonal_(-2.5, wrap=wrap)
        assert out is y and type(y.grad_fn).__name__ == "CopySlices"
        g, = m.autograd.grad((y * y).sum(), a)
        ints = m.zeros(shape, dtype=m.int64).fill_diagonal_(7, wrap)
        return y, g, ints
    assert_same_as_torch(program)


def test_fill_diagonal_of_a_transposed_tall_matrix_wraps_like_a_contiguous_one():
    assert_same_as_torch(lambda m: m.zeros(3, 7).t().fill_diagonal_(1.0, wrap=True))


@pytest.mark.parametrize("call", [
    lambda m: m.zeros(3).fill_diagonal_(1.0),
    lambda m: m.zeros(2, 3, 2).fill_diagonal_(1.0),
    lambda m: m.zeros(2, 2, requires_grad=True).fill_diagonal_(1.0),
    lambda m: m.zeros(2, 2, dtype=m.int64).fill_diagonal_(1.5),
], ids=["1d", "unequal", "leaf", "float_into_int"])
def test_fill_diagonal_errors(call):
    assert_same_as_torch(call)


# -- in-place view ops ---------------------------------------------------------------------------
VIEW_OPS = [("t_", (), (2, 3)), ("t_", (), (3,)), ("unsqueeze_", (1,), (2, 3)),
            ("unsqueeze_", (-1,), (2, 3)), ("squeeze_", (), (2, 1, 3)),
            ("squeeze_", (1,), (2, 1, 3)), ("squeeze_", ((0, 1),), (2, 1, 3)),
            ("transpose_", (0, 2), (2, 1, 3)), ("swapaxes_", (0, 1), (2, 3)),
            ("swapdims_", (-1, 0), (2, 1, 3))]


def _weights(m, shape):
    return m.tensor(np.arange(np.prod(shape), dtype=np.float64).reshape(shape) + 1)


@pytest.mark.parametrize("name,args,shape", VIEW_OPS)
def test_in_place_view_ops_record_torchs_node_and_gradients(name, args, shape):
    def program(m):
        a = m.tensor(np.linspace(-1, 1, int(np.prod(shape))).reshape(shape), requires_grad=True)
        y = a * 1
        out = getattr(y, name)(*args)
        assert out is y and y._version == 1 and y._base is None
        node = y.grad_fn.name()
        g, = m.autograd.grad((y * y * _weights(m, y.shape)).sum(), a, create_graph=True)
        gg, = m.autograd.grad((g * g).sum(), a)
        return (y, g, gg, m.tensor(y.is_contiguous())), node
    ours, theirs = (program(m) for m in (gradkit, torch))
    assert ours[1] == theirs[1]
    assert_same_as_torch(lambda m: program(m)[0])


@pytest.mark.parametrize("name,args,shape", VIEW_OPS)
def test_in_place_view_op_on_a_view_stays_a_view_of_its_base(name, args, shape):
    def program(m):
        a = m.tensor(np.linspace(-1, 1, 2 * int(np.prod(shape))).reshape((2,) + shape),
                     requires_grad=True)
        y = a * 1
        v = y[1]
        getattr(v, name)(*args)
        assert v._base is y
        v.mul_(3)  # written through the new shape into the base
        g, = m.autograd.grad((y * _weights(m, y.shape)).sum(), a)
        return y, v, g
    assert_same_as_torch(program)


@pytest.mark.parametrize("name,args,shape", VIEW_OPS)
def test_in_place_view_ops_without_grad(name, args, shape):
    def program(m):
        x = m.tensor(np.arange(np.prod(shape)).reshape(shape))
        getattr(x, name)(*args)
        leaf = m.ones(shape, requires_grad=True)
        with m.no_grad():
            getattr(leaf, name)(*args)
        assert leaf.requires_grad and leaf.grad_fn is None
        return x, m.tensor(x.is_contiguous()), m.tensor(x._version), leaf
    assert_same_as_torch(program)


@pytest.mark.parametrize("call", [
    lambda m: m.ones(2, 3, requires_grad=True).t_(),
    lambda m: m.ones(2, 3, requires_grad=True)[0].unsqueeze_(0),
    lambda m: m.ones(2, 3, requires_grad=True).squeeze_(),
    lambda m: m.ones(2, 1, 3).transpose_(0, 5),
    lambda m: m.ones(2, 2, 2).t_(),
    lambda m: m.ones(2, 1, 3).unsqueeze_(5),
    lambda m: m.ones(2, 1, 3).squeeze_(-4),
    lambda m: (m.ones(4, requires_grad=True) * 1).split(2)[0].unsqueeze_(0),
], ids=["leaf", "view_of_leaf", "leaf_squeeze", "dim_range", "t_3d", "unsqueeze_range",
        "squeeze_range", "multi_output_view"])
def test_in_place_view_op_errors(call):
    assert_same_as_torch(call)


def test_in_place_view_op_under_forward_ad():
    def program(m):
        fw = m.autograd.forward_ad
        with fw.dual_level():
            x = fw.make_dual(m.ones(2, 3, dtype=m.float64),
                             m.arange(6.0, dtype=m.float64).reshape(2, 3))
            y = x * 1
            y.t_().unsqueeze_(0)
            return fw.unpack_dual(y).tangent
    assert_same_as_torch(program)


@pytest.mark.parametrize("call", [
    lambda m: m.ones(2).cumsum_(0, m.float32), lambda m: m.ones(2).cumsum_(),
    lambda m: m.ones(2).cumsum_(dim=0), lambda m: m.ones(2).cumsum_(dim=0, dtype=m.float32),
    lambda m: m.ones(2).cumsum_(0, axes=1)], ids=["two", "none", "dim", "dtype", "unknown"])
def test_cumsum_in_place_arguments(call):
    assert_same_as_torch(call)


@pytest.mark.parametrize("dtype", ("float16", "float64", "int16", "int8", "uint8", "complex64"))
def test_cumsum_in_place_refuses_another_dtype(dtype):
    assert_same_as_torch(lambda m: m.zeros(2, dtype=getattr(m, dtype)).cumsum_(0, dtype=m.float32))
    assert_same_as_torch(lambda m: m.tensor([True, False]).cumsum_(0))


@pytest.mark.parametrize("name,args,shape", VIEW_OPS)
def test_views_made_before_an_in_place_view_op_keep_their_elements(name, args, shape):
    # a view of the old shape, then writes through it and through the base: the values and
    # gradients reach the same elements as torch's (which regenerates the view)
    def program(m):
        a = m.tensor(np.linspace(-1, 1, int(np.prod(shape))).reshape(shape), requires_grad=True)
        y = a * 1
        z = y[0]
        getattr(y, name)(*args)
        z.mul_(10)
        y.mul_(2)
        g, = m.autograd.grad((z * _weights(m, z.shape)).sum() + (y * y).sum(), a)
        return y, z, g
    assert_same_as_torch(program)


# -- small Tensor methods and torch functions ----------------------------------------------------
def _outcome(call):
    """(value, None) or (None, (error type, message)) of ``call()``."""
    try:
        return call(), None
    except Exception as e:  # noqa: BLE001 - the error is the outcome compared
        return None, (type(e).__name__, str(e))


def same_result(program):
    """``program(m)`` returns plain Python values (no tensors): equal in both, or the same
    error."""
    theirs, ours = _outcome(lambda: program(torch)), _outcome(lambda: program(gradkit))
    assert ours == theirs


DTYPES = ("uint8", "int8", "int16", "int32", "int64", "bool", "float16", "float32", "float64",
          "complex64", "complex128")


@pytest.mark.parametrize("dtype", DTYPES)
def test_dtype_queries(dtype):
    def program(m):
        x = m.zeros(2, dtype=getattr(m, dtype))
        return (x.is_signed(), m.is_signed(x), x.is_cpu, x.get_device(), m.get_device(x),
                x.is_neg(), m.is_neg(x), x.resolve_neg() is x, m.resolve_neg(x) is x,
                m.typename(x).split(".")[1], x.is_same_size(m.ones(2)),
                m.is_same_size(x, m.ones(1, 2)))
    same_result(program)


@pytest.mark.parametrize("values", [[0.0], [[2]], [float("nan")], [1j], [False], [], [1, 2]])
def test_is_nonzero(values):
    same_result(lambda m: m.tensor(values).is_nonzero())
    same_result(lambda m: m.is_nonzero(m.tensor(values)))


@pytest.mark.parametrize("call", [
    lambda m: m.is_signed(3), lambda m: m.is_nonzero(2.0), lambda m: m.is_same_size(m.ones(1), 3),
    lambda m: m.ones(1).is_same_size([1]), lambda m: m.get_device(3), lambda m: m.resolve_neg(1),
    lambda m: m.is_neg(None), lambda m: m.detach(3), lambda m: m.ones(1).type_as(3)])
def test_query_functions_refuse_what_is_not_a_tensor(call):
    same_result(call)


def test_typename_of_other_objects():
    for obj in (3, None, np.ones(1), "text", int):
        same_result(lambda m, obj=obj: m.typename(obj))


def test_type_as_and_the_casts_by_name():
    def program(m):
        x = m.tensor([1.5, -2.0], requires_grad=True)
        y = x.type_as(m.ones(1, dtype=m.float64))
        g, = m.autograd.grad(y.sum(), x)
        assert x.type_as(x) is x and type(y.grad_fn).__name__ == "ToCopyBackward0"
        ints = m.tensor([300, -3])
        return (y, g, ints.byte(), ints.char(), ints.short(), x.type_as(ints),
                m.zeros(1, dtype=m.short))
    assert_same_as_torch(program)


def test_detach_functions():
    def program(m):
        x = m.ones(2, requires_grad=True)
        y = x * 2
        d = m.detach(y)
        m.detach_(y)
        return d, y, m.tensor([d.requires_grad, y.requires_grad, y.grad_fn is None])
    assert_same_as_torch(program)


SUM_TO = [(2, 3), (1, 3), ((2, 1),), (3,), (1,), ([1, 1],), (1, 1), ()]


@pytest.mark.parametrize("size", SUM_TO)
def test_sum_to_size(size):
    def program(m):
        a = m.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
        y = a.sum_to_size(*size)
        node = None if y.grad_fn is None else type(y.grad_fn).__name__
        g, = m.autograd.grad((y * y).sum(), a, create_graph=True)
        gg, = m.autograd.grad(g.sum(), a)
        return (y, g, gg, m.tensor(y is a)), node
    ours, theirs = _outcome(lambda: program(gradkit)), _outcome(lambda: program(torch))
    assert (ours[0][1] if ours[0] else ours[1]) == (theirs[0][1] if theirs[0] else theirs[1])
    assert_same_as_torch(lambda m: program(m)[0])


@pytest.mark.parametrize("size", [(4,), (1, 2, 3), (3, 2, 3), (1.5,), (-1,)])
def test_sum_to_size_errors(size):
    same_result(lambda m: m.ones(2, 3).sum_to_size(*size))
    same_result(lambda m: m.ones(2, 3).sum_to_size(*size) if size else None)


def test_sum_to_size_gradcheck():
    x = gradkit.tensor(np.random.default_rng(3).standard_normal((2, 3, 4)), requires_grad=True)
    for size in ((3, 1), (2, 1, 4), (4,)):
        assert gradkit.autograd.gradcheck(lambda t, s=size: t.sum_to_size(s), (x,))
        assert gradkit.autograd.gradgradcheck(lambda t, s=size: t.sum_to_size(s), (x,))


def test_conj_physical():
    def program(m):
        z = m.tensor([1 + 2j, -3 - 0.5j], requires_grad=True)
        c = m.conj_physical(z)
        w = z * 1
        w.conj_physical_()
        x = m.tensor([1.0, -2.0])
        top = m.tensor([2 - 1j])
        m.conj_physical_(top)
        view = m.tensor([1 + 1j]).conj()
        resolved = m.conj_physical(view)
        g, = m.autograd.grad((c * c).real.sum() + (w * w).imag.sum(), z)
        names = [type(c.grad_fn).__name__, type(w.grad_fn).__name__]
        assert names == ["ConjPhysicalBackward0", "ConjPhysicalBackward1"]
        assert m.conj_physical(x) is x and x.conj_physical_() is x and x._version == 1
        assert not resolved.is_conj()
        return c, w, g, top, resolved
    assert_same_as_torch(program)
    for dtype in ("bool", "uint8", "int64", "float16", "complex64"):
        assert_same_as_torch(lambda m, d=dtype: m.tensor([0, 1]).to(getattr(m, d))
                             .conj_physical_())
    same_result(lambda m: m.conj_physical(3.0))
    same_result(lambda m: m.ones(2, requires_grad=True).conj_physical_())


# -- igamma, igammac ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", ("igamma", "igammac"))
def test_igamma_names(name):
    def program(m):
        a = m.tensor([2.0, 3.0, 0.5], dtype=m.float64)
        x = m.tensor([1.0, 2.0, 4.0], dtype=m.float64, requires_grad=True)
        out = getattr(m, name)(a, x)
        method = getattr(a, name)(x)
        b = a.clone()
        getattr(b, name + "_")(m.tensor([1.0, 1.0, 1.0], dtype=m.float64))
        g, = m.autograd.grad(out.sum(), x)
        return out, method, b, g
    assert_same_as_torch(program)
    for call in (lambda m: getattr(m, name)(m.ones(1), 2.0),
                 lambda m: getattr(m, name)(2.0, m.ones(1)),
                 lambda m: getattr(m.ones(1), name)(2.0),
                 lambda m: getattr(m.ones(1, dtype=m.int64), name + "_")(m.ones(1)),
                 lambda m: getattr(m, name)(m.ones(1, dtype=m.int64), m.ones(1, dtype=m.int64)),
                 lambda m: getattr(m, name)(m.ones(1, requires_grad=True), m.ones(1)).sum()
                 .backward()):
        same_result(call)


# -- torch functions: aliases, scalar_tensor, asarray, range, shapes -----------------------------
@pytest.mark.parametrize("name", ("greater", "greater_equal", "less", "less_equal",
                                  "not_equal"))
def test_comparison_function_names(name):
    assert_same_as_torch(lambda m: getattr(m, name)(m.tensor([1.0, 2.0, 3.0]), 2))
    assert_same_as_torch(lambda m: getattr(m, name)(m.tensor([1, 2]), m.tensor([[2], [1]])))


@pytest.mark.parametrize("call", [
    lambda m: m.concatenate((m.ones(1, 1), m.zeros(1, 2)), axis=1),
    lambda m: m.concatenate([m.ones(1, 1), m.zeros(1, 1)], 1),
    lambda m: m.concatenate([m.ones(1), m.zeros(2)]),
    lambda m: m.concatenate([m.ones(1, 1), m.zeros(1, 1)], dim=1),
    lambda m: m.concatenate(m.ones(2)),
    lambda m: m.concatenate([m.ones(1, 1)], dim=1, axis=1)])
def test_concatenate(call):
    assert_same_as_torch(call)


@pytest.mark.parametrize("call", [
    lambda m: m.scalar_tensor(3), lambda m: m.scalar_tensor(True),
    lambda m: m.scalar_tensor(2.5, dtype=m.int64),
    lambda m: m.scalar_tensor(1 + 1j, dtype=m.complex64),
    lambda m: m.scalar_tensor(2.0, requires_grad=True),
    lambda m: m.scalar_tensor(2.0, dtype=m.float64),
    lambda m: m.scalar_tensor(1 + 1j), lambda m: m.scalar_tensor(m.tensor([2, 3])),
    lambda m: m.scalar_tensor([1]), lambda m: m.scalar_tensor(-1, dtype=m.uint8),
    lambda m: m.scalar_tensor(-300, dtype=m.uint8), lambda m: m.scalar_tensor(-129, dtype=m.int8),
    lambda m: m.scalar_tensor(float("nan"), dtype=m.int64), lambda m: m.scalar_tensor(1e40),
    lambda m: m.scalar_tensor(np.float64(2.5)), lambda m: m.scalar_tensor(2, dtype=m.bool)])
def test_scalar_tensor(call):
    assert_same_as_torch(call)


def _asarray_cases():
    for source in ("leaf", "nonleaf", "plain"):
        for copy in (None, True, False):
            for dtype in (None, "float64"):
                for requires_grad in ("unset", True, False):
                    yield source, copy, dtype, requires_grad


@pytest.mark.parametrize("source,copy,dtype,requires_grad", list(_asarray_cases()))
def test_asarray_of_a_tensor(source, copy, dtype, requires_grad):
    def program(m):
        base = m.tensor([1.0, 2.0], requires_grad=source != "plain")
        obj = base * 2 if source == "nonleaf" else base
        kwargs = {} if copy is None else {"copy": copy}
        if dtype:
            kwargs["dtype"] = getattr(m, dtype)
        if requires_grad != "unset":
            kwargs["requires_grad"] = requires_grad
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch warns once a process: compared below
            out = m.asarray(obj, **kwargs)
        shares = out._data is obj._data if m is gradkit else out.data_ptr() == obj.data_ptr()
        node = None if out.grad_fn is None else type(out.grad_fn).__name__
        return (out is obj, out.requires_grad, obj.requires_grad, node, shares, out.tolist(),
                str(out.dtype)[-7:])
    same_result(program)


def test_asarray_warns_when_requires_grad_follows_the_tensor():
    # torch's text (a TORCH_WARN_ONCE: torch itself says it once a process)
    with pytest.warns(UserWarning, match=r"^torch.asarray: unspecified requires_grad now "
                      r"defaults to obj.requires_grad instead of False. Pass requires_grad="
                      r"False explicitly to get the old behavior and silence this warning.$"):
        gradkit.asarray(gradkit.ones(2, requires_grad=True))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gradkit.asarray(gradkit.ones(2))
        gradkit.asarray(gradkit.ones(2, requires_grad=True), requires_grad=True)


@pytest.mark.parametrize("call", [
    lambda m: m.asarray(np.array([1.0, 2.0]), dtype=m.float32, copy=False),
    lambda m: m.asarray(np.array([1, 2]), copy=False),
    lambda m: m.asarray([1, 2], copy=False),
    lambda m: m.asarray(np.float32(2.0)), lambda m: m.asarray(3), lambda m: m.asarray([1, 2.5]),
    lambda m: m.asarray([True]), lambda m: m.asarray(2.5), lambda m: m.asarray([[1, 2]]),
    lambda m: m.asarray(np.array([1, 2], dtype=np.int32)),
    lambda m: m.asarray([1.0, 2.0], requires_grad=True),
    lambda m: m.asarray([1, 2], requires_grad=True),
    lambda m: m.asarray(np.array([1.0, 2.0]), dtype=m.float32)])
def test_asarray_of_other_data(call):
    assert_same_as_torch(call)


def test_asarray_shares_a_numpy_array_unless_copied():
    def program(m):
        array = np.array([1.0, 2.0])
        shared, copied = m.asarray(array), m.asarray(array, copy=True)
        grad = m.asarray(array, requires_grad=True)
        array[0] = 9.0
        return shared.tolist(), copied.tolist(), grad.tolist(), grad.is_leaf
    same_result(program)


@pytest.mark.parametrize("args,kwargs", [
    ((1, 4), {}), ((0, 1, 0.25), {}), ((1, 4), {"dtype": "int64"}), ((3, 0, -1), {}),
    ((0, 1, 0.3), {}), ((0, 1, 0), {}), ((1, 0), {}), ((1, 4), {"requires_grad": True}),
    ((0.5, 2.5), {"dtype": "float64"}), ((4,), {}), ((0, 3), {"dtype": "int32"}),
    ((0, 3), {"dtype": "complex64"}), ((0, 3), {"dtype": "bool"}), ((0.0, 1.0, 0.1), {}),
    ((2**60, 2**60 + 4), {"dtype": "int64"})])
def test_range_is_end_inclusive_and_deprecated(args, kwargs):
    def program(m):
        options = {k: getattr(m, v) if k == "dtype" else v for k, v in kwargs.items()}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = m.range(*args, **options)
        assert [str(w.message)[:56] for w in caught] == [
            "torch.range is deprecated and will be removed in a futur"]
        return out
    assert_same_as_torch(program)


@pytest.mark.parametrize("shapes", [
    ((2, 1), (3,)), (2, (1, 1)), (), ((0,), (1,)), ((2,), (3,)),
    ((2, 1), (3,), (4, 1, 1), (5,)), ((-1,),), ((2,), [2]), ((2, 3), (2,)), ((1,), None),
    ("ab",), ((2.0,),)])
def test_broadcast_shapes(shapes):
    same_result(lambda m: tuple(m.broadcast_shapes(*shapes)))


@pytest.mark.parametrize("indices,shape", [
    ([4, 1], (2, 3)), (5, (2, 3)), ([[5]], [2, 3]), ([6], (2, 3)), ([-1], (2, 3)), (1, ()),
    (0, ()), (1, 4), ([7, 0], (2, 2, 2))])
def test_unravel_index(indices, shape):
    assert_same_as_torch(lambda m: m.unravel_index(m.tensor(indices), shape))
    assert_same_as_torch(lambda m: m.unravel_index(m.tensor(indices, dtype=m.int32), shape))


@pytest.mark.parametrize("call", [
    lambda m: m.unravel_index(m.tensor([1.0]), (2, 3)),
    lambda m: m.unravel_index(m.tensor([True]), (2, 3)),
    lambda m: m.unravel_index(m.tensor(1), (-2, 3)),
    lambda m: m.unravel_index(m.tensor(1), (2.0, 3)),
    lambda m: m.unravel_index(m.tensor(1), 2.0),
    lambda m: m.unravel_index(m.tensor([3]), (2, 0))])
def test_unravel_index_errors(call):
    theirs, ours = (_outcome(lambda m=m: call(m))[1] for m in (torch, gradkit))
    assert ours[0] == theirs[0]
    assert ours[1].replace("gradkit", "torch") == theirs[1]


# -- finfo, iinfo -------------------------------------------------------------------------------
def test_finfo_and_iinfo_of_python_types_and_other_objects():
    for kind in ("finfo", "iinfo"):
        for argument in (float, int, complex, bool, "float32", 3):
            same_result(lambda m, k=kind, a=argument: repr(getattr(m, k)(a)).replace(
                "gradkit", "torch"))


@pytest.mark.parametrize("dtype", DTYPES + (None,))
def test_finfo_and_iinfo(dtype):
    fields = {"finfo": ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution",
                        "dtype"), "iinfo": ("bits", "max", "min", "dtype")}
    for kind, names in fields.items():
        if dtype is None and kind == "iinfo":
            continue

        def program(m, kind=kind, names=names):
            info = getattr(m, kind)(*(() if dtype is None else (getattr(m, dtype),)))
            return repr(info), [getattr(info, name) for name in names]
        same_result(program)


# -- thread count ---------------------------------------------------------------------------------
def test_num_threads_is_recorded():
    before = gradkit.get_num_threads()
    try:
        gradkit.set_num_threads(3)
        assert gradkit.get_num_threads() == 3
    finally:
        gradkit.set_num_threads(before)
    assert isinstance(before, int) and before >= 1
    for bad in (0, -2, 1.5, True):
        same_result(lambda m, n=bad: m.set_num_threads(n) if n is not True else
                    m.set_num_threads(1.5))


# -- set_printoptions --------------------------------------------------------------------------
@pytest.fixture
def default_print_options():
    yield
    for m in (gradkit, torch):
        m.set_printoptions(profile="default")


def _printed(m, values, dtype):
    """The text without its dtype suffix: "gradkit.float64" is longer than "torch.float64",
    so the two may wrap it differently at the line width."""
    text = repr(m.tensor(values, dtype=getattr(m, dtype)))
    return re.sub(r",\s*dtype=\w+\.\w+\)$", ")", text)


PRINTED = [
    (np.arange(2000.0) / 7, "float32"), (np.arange(30).reshape(5, 6), "int64"),
    (np.linspace(-3, 3, 17), "float64"), ([1.123456789, 2e-5], "float32"),
    ([[1e9, 1.0], [2.0, 3.0]], "float64"), ([1.5, float("nan"), -float("inf")], "float32"),
    (np.arange(24.0).reshape(2, 3, 4) * 1.25, "float32"), ([1 + 2j, -0.25j], "complex64"),
    ([3.0, 4.0], "float16"), (np.arange(1200).reshape(40, 30) % 7 == 0, "bool"),
    ([0.1, 0.2, 100.0], "float64")]
OPTIONS = [
    {"precision": 2}, {"precision": 8}, {"threshold": 5}, {"threshold": 5, "edgeitems": 1},
    {"edgeitems": 2, "threshold": 10}, {"linewidth": 40}, {"linewidth": 200},
    {"sci_mode": True}, {"sci_mode": False}, {"profile": "short"}, {"profile": "full"},
    {"profile": "short", "precision": 6}, {"profile": "unknown"},
    {"sci_mode": True, "precision": 0}]


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(f"{k}={v}" for k, v in
                                                                 o.items()))
def test_printing_follows_the_print_options(options, default_print_options):
    for m in (gradkit, torch):
        m.set_printoptions(**options)
    for values, dtype in PRINTED:
        assert _printed(gradkit, values, dtype) == _printed(torch, values, dtype)
    x = gradkit.ones(30, requires_grad=True) * 3
    assert repr(x) == repr(torch.ones(30, requires_grad=True) * 3)


def test_print_options_persist_until_reset(default_print_options):
    for m in (gradkit, torch):
        m.set_printoptions(precision=1)
        m.set_printoptions(threshold=4)  # sci_mode back to automatic, precision kept
    assert _printed(gradkit, [1.25, 2e-6], "float64") == _printed(torch, [1.25, 2e-6], "float64")
    for m in (gradkit, torch):
        m.set_printoptions(profile="default")
    assert repr(gradkit.tensor([1.123456])) == "tensor([1.1235])"


@pytest.mark.parametrize("view_under_no_grad", (False, True))
@pytest.mark.parametrize("op_under_no_grad", (False, True))
def test_in_place_view_op_keeps_how_the_view_was_made(view_under_no_grad, op_under_no_grad):
    def program(m):
        a = m.ones(2, 3, requires_grad=True)
        y = a * 1
        with m.no_grad() if view_under_no_grad else m.enable_grad():
            z = y[0]
        with m.no_grad() if op_under_no_grad else m.enable_grad():
            z.unsqueeze_(0)
        z.mul_(2)
        return (y, z) + m.autograd.grad(y.sum(), a)
    assert_same_as_torch(program)


@pytest.mark.parametrize("name,args", [("t_", ()), ("transpose_", (0, 1)), ("unsqueeze_", (0,)),
                                       ("squeeze_", (0,))])
def test_in_place_view_ops_and_inference_mode(name, args):
    def outside(m):  # an inference tensor refuses in-place changes outside the mode
        with m.inference_mode():
            a = m.ones(1, 3)
        return getattr(a, name)(*args)

    def inside(m):
        with m.inference_mode():
            b = m.ones(1, 3)
            getattr(b, name)(*args)
        return b, m.tensor(b.is_inference())
    assert_same_as_torch(outside)
    assert_same_as_torch(inside)


def test_top_level_in_place_functions_added_here():
    def program(m):
        x, y = m.tensor([1.5, -2.5]), m.tensor([1.75, -0.5])
        z = m.ones(2, requires_grad=True) * 3
        same = (m.zero_(x) is x, m.fix_(y) is y, m.detach_(z) is z)
        assert same == (True, True, True) and not z.requires_grad and z.grad_fn is None
        return x, y, z, m.tensor([x._version, y._version])
    assert_same_as_torch(program)
    same_result(lambda m: m.zero_(1.5))
