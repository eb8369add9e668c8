"""Strides and storage (stride, storage_offset, data_ptr, is_contiguous), as_strided and its
family, unfold, the *_copy functions and the unsafe splits: each program is run under torch
and gradkit, which must agree on values, gradients, layouts and errors (type and message)."""
import numpy as np
import pytest

import gradkit
from gradkit.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")


def _run(program, lib):
    try:
        return "returns", program(lib)
    except Exception as error:  # noqa: BLE001 - the error itself is the result compared
        return type(error).__name__, str(error)


def _close(got, expected) -> bool:
    if isinstance(expected, (list, tuple)):
        return len(got) == len(expected) and all(map(_close, got, expected))
    if isinstance(expected, float):
        return bool(np.isclose(got, expected, rtol=1e-6, atol=1e-9))
    return got == expected


def same_as_torch(program):
    """``program(lib)`` returns the same plain Python values, or raises the same error."""
    expected, got = _run(program, torch), _run(program, gradkit)
    assert got[0] == expected[0] and _close(got[1], expected[1]), (got, expected)
    return got


def same_values(program):
    """``program(lib)`` returns the same plain Python values under torch and gradkit."""
    assert same_as_torch(program)[0] == "returns", "torch raises: the case is an error case"


def same_error(program):
    assert same_as_torch(program)[0] != "returns", "the case is no error case"


def _layout(t) -> tuple:
    return tuple(t.shape), t.stride(), t.storage_offset(), t.is_contiguous()


def _base(lib):
    return lib.arange(24.0).reshape(2, 3, 4)


# -- strides, storage offsets and contiguity ----------------------------------------------------

VIEWS = {
    "t": lambda m, x: x[0].t(), "transpose": lambda m, x: x.transpose(0, 2),
    "permute": lambda m, x: x.permute(2, 0, 1), "expand": lambda m, x: x[:, :1].expand(2, 5, 4),
    "select": lambda m, x: x.select(1, 2), "narrow": lambda m, x: x.narrow(2, 1, 2),
    "steps": lambda m, x: x[:, ::2, 1::2], "diagonal": lambda m, x: x.diagonal(1, 1, 2),
    "unsqueeze": lambda m, x: x.unsqueeze(1), "unsqueeze_last": lambda m, x: x.unsqueeze(-1),
    "none_index": lambda m, x: x[0, None],  # select then unsqueeze, as torch's key steps
    "squeeze": lambda m, x: x[:1].squeeze(0), "view": lambda m, x: x.view(6, 4),
    "size_1": lambda m, x: x[:, :1, :], "empty": lambda m, x: x[:, :0],
    "view_as_real": lambda m, x: m.view_as_real(x[0].to(m.complex64).t()),
    "unbind": lambda m, x: x.unbind(1)[1], "split": lambda m, x: x.split(2, 2)[1],
    "chunk": lambda m, x: x.chunk(2, 0)[1], "movedim": lambda m, x: x.movedim(0, 2),
    "mT": lambda m, x: x.mT, "unflatten": lambda m, x: x.unflatten(2, (2, 2)),
    "detach": lambda m, x: x[1].detach(), "unfold": lambda m, x: x.unfold(2, 2, 1),
    "unfold_of_t": lambda m, x: x[0].t().unfold(0, 3, 1),
    "as_strided": lambda m, x: x[1].as_strided((3, 3), (1, 2)),
    "as_strided_offset": lambda m, x: x[1:].as_strided((2, 2), (1, 4), 3),
    # torch's contiguity ignores the strides of size-1 dims and of empty tensors
    "size_1_any_stride": lambda m, x: x.as_strided((2, 1), (1, 7)),
    "leading_size_1": lambda m, x: x.as_strided((1, 3), (9, 1)),
    "empty_any_strides": lambda m, x: x.as_strided((0, 3), (9, 9), 30),
    "0d": lambda m, x: x.as_strided((), (), 5),
    "expanded_size_1": lambda m, x: x[0, :1, :1].expand(1, 1),
}
# results of computing ops that NumPy lays out as torch does
COMPUTED = {
    "elementwise_of_t": lambda m, x: x.transpose(0, 2) + 1,
    "unary_of_permute": lambda m, x: x.permute(2, 0, 1).exp(),
    "matmul": lambda m, x: x[0].t() @ x[0], "sum_dim": lambda m, x: x.sum(1),
    "sum_keepdim": lambda m, x: x.sum(1, keepdim=True), "cat": lambda m, x: m.cat([x, x], 1),
    "contiguous": lambda m, x: x.transpose(0, 2).contiguous(),
    "reshape_copy": lambda m, x: x.transpose(0, 1).reshape(3, 8),
    "where_of_t": lambda m, x: m.where(x.transpose(0, 2) > 3, x.transpose(0, 2), 0.0),
    "of_expanded": lambda m, x: x[:, :1].expand(2, 5, 4) * 2, "flip": lambda m, x: x.flip(1),
    # TensorIterator's order where the inputs' layouts differ: the first input's (NumPy's
    # ufuncs give C order; seed 1603307 read a wrong element through as_strided_ after it)
    **{f"mixed_{name}": (lambda m, x, f=f: f(m, x.transpose(0, 2),
                                             x.transpose(0, 2).contiguous())) for name, f in {
        "add": lambda m, a, b: a + b, "add_reversed": lambda m, a, b: b + a,
        "sub_alpha": lambda m, a, b: m.sub(a, b, alpha=2), "mul_int": lambda m, a, b: a * b.long(),
        "rsub": lambda m, a, b: m.rsub(a, b), "atan2": lambda m, a, b: m.atan2(a, b),
        "maximum": lambda m, a, b: m.maximum(a, b), "fmax": lambda m, a, b: m.fmax(a, b),
        "remainder": lambda m, a, b: a % (b + 1), "floor_divide": lambda m, a, b: a // (b + 1),
        "eq": lambda m, a, b: a == b, "logical_xor": lambda m, a, b: m.logical_xor(a, b),
        "bitwise_and": lambda m, a, b: a.long() & b.long(),
        "shift": lambda m, a, b: a.long() << (b.long() % 3), "gcd": lambda m, a, b: m.gcd(
            a.long(), b.long()), "heaviside": lambda m, a, b: m.heaviside(a - 3, b),
        "where_cond_of_b": lambda m, a, b: m.where(b > 3, a, b),
        "addcmul": lambda m, a, b: m.addcmul(a, b, b), "lerp": lambda m, a, b: m.lerp(a, b, 0.3),
        "clamp": lambda m, a, b: m.clamp(a, min=b), "isclose": lambda m, a, b: m.isclose(a, b),
        "xlogy": lambda m, a, b: m.xlogy(a, b + 1),
        "hypot": lambda m, a, b: m.hypot(a, b)}.items()},
    # fresh empty tensors: NumPy's strides are 0, torch's the contiguous ones (found by h-misc)
    "fresh_empty": lambda m, x: m.zeros(2, 0, 3), "fresh_empty_1d": lambda m, x: m.empty(0),
    "empty_result": lambda m, x: x[:, :0] * 2,
    # torch allocates these C-contiguous whatever the input's order (the op's contiguous=True)
    **{f"{name}_of_permuted": (lambda m, x, f=f: f(m, x.permute(2, 0, 1))) for name, f in {
        "sum": lambda m, x: x.sum(1), "mean": lambda m, x: x.mean(2),
        "amax": lambda m, x: x.amax(1), "max_dim": lambda m, x: x.max(1)[0],
        "prod": lambda m, x: x.prod(1), "var": lambda m, x: x.var(1),
        "logsumexp": lambda m, x: x.logsumexp(2), "softmax": lambda m, x: x.softmax(0),
        "log_softmax": lambda m, x: x.log_softmax(1), "cumsum": lambda m, x: x.cumsum(1),
        "cumprod": lambda m, x: x.cumprod(0), "cummax": lambda m, x: x.cummax(2)[0],
        "cat": lambda m, x: m.cat([x, x], 1), "stack": lambda m, x: m.stack([x, x]),
        "repeat": lambda m, x: x.repeat(1, 1, 1), "roll": lambda m, x: x.roll(1, 0),
        "tril": lambda m, x: x.tril(), "masked_fill": lambda m, x: x.masked_fill(x > 3, 0.0),
        "layer_norm": lambda m, x: m.nn.functional.layer_norm(x, (3,)),
        "index_add": lambda m, x: x.index_add(1, m.tensor([0]), m.ones(4, 1, 3)),
        "cdist": lambda m, x: m.cdist(x, x), "vector_norm": lambda m, x: m.linalg.vector_norm(
            x, dim=1)}.items()},
}


@pytest.mark.parametrize("name", sorted({**VIEWS, **COMPUTED}))
def test_strides_storage_offsets_and_contiguity_match_torch(name):
    make = {**VIEWS, **COMPUTED}[name]
    same_values(lambda m: _layout(make(m, _base(m))))


@pytest.mark.parametrize("name", sorted(n for n in COMPUTED if n.startswith("mixed_")))
def test_elementwise_layouts_are_the_same_on_the_general_path(name):
    """The hot paths lay an elementwise result out after its unwrapped kernel (Op.kernel), the
    general path (here under the profiler) by the wrapped forward: both give torch's."""
    expected = _layout(COMPUTED[name](torch, _base(torch)))
    plain = _layout(COMPUTED[name](gradkit, _base(gradkit)))
    with gradkit.profiler.profile():
        observed = _layout(COMPUTED[name](gradkit, _base(gradkit)))
    assert plain == observed == expected


def test_stride_of_one_dimension_and_its_errors():
    same_values(lambda m: [_base(m).stride(d) for d in (0, -1, 2)] + [_base(m).stride(dim=1)])
    same_values(lambda m: m.tensor(1.0).stride())
    same_error(lambda m: _base(m).stride(3))
    same_error(lambda m: m.tensor(1.0).stride(0))


def test_data_ptr_is_the_first_elements_address():
    def program(m):
        x = _base(m)
        views = (x[1, 2:], x[1].t(), x.unfold(2, 2, 1), x.as_strided((2,), (3,), 5))
        return [v.data_ptr() - x.data_ptr() for v in views] + [
            x[1].const_data_ptr() - x.data_ptr(), m.empty(0).data_ptr(), x[:, 3:3].data_ptr()]
    same_values(program)
    x = gradkit.zeros(3)
    assert x.data_ptr() == x.numpy().ctypes.data != 0


# -- as_strided ---------------------------------------------------------------------------------

def _weighted_backward(lib, out, *leaves):
    """Backward of ``out`` weighted by distinct numbers: each leaf's gradient, as lists."""
    weights = lib.arange(1.0, out.numel() + 1.0, dtype=out.dtype).reshape(out.shape)
    grads = lib.autograd.grad((out * weights).sum(), leaves, create_graph=True)
    return [g.tolist() for g in grads]


AS_STRIDED = {
    "window": lambda x: x.as_strided((3, 3), (1, 2)),
    "overlapping": lambda x: x.as_strided((4, 3), (1, 1), 2),
    "zero_stride": lambda x: x.as_strided((3, 2), (0, 5)),
    "view_of_view": lambda x: x[1:].t().as_strided((2, 3), (3, 1)),
    "of_overlapping": lambda x: x.as_strided((3, 4), (2, 1)).as_strided((2,), (3,), 1),
    "of_expanded": lambda x: x[:1, :1].expand(3, 2).as_strided((2, 2), (0, 0)),
    # positions outside the input's own: torch's gradient leaves them out (not gradcheckable)
    "outside_the_view": lambda x: x[1:, 2:].as_strided((2, 2), (4, 1), 0),
    "outside_the_overlapping": lambda x: x.as_strided((3, 4), (2, 1)).as_strided((2,), (5,), 3),
    "empty": lambda x: x.as_strided((0, 3), (9, 9), 40),
}


@pytest.mark.parametrize("name", sorted(AS_STRIDED))
def test_as_strided_values_layout_and_gradients_match_torch(name):
    def program(m):
        leaf = m.arange(1.0, 13.0, dtype=m.float64).reshape(3, 4).requires_grad_()
        out = AS_STRIDED[name](leaf * 1)
        grads = _weighted_backward(m, out, leaf) if out.numel() else []
        return out.tolist(), _layout(out), out.grad_fn.name(), grads
    same_values(program)


@pytest.mark.parametrize("name", sorted(set(AS_STRIDED) - {"empty", "of_expanded"}))
def test_as_strided_double_backward_matches_torch(name):
    def program(m):
        leaf = m.arange(1.0, 13.0, dtype=m.float64).reshape(3, 4).requires_grad_()
        out = AS_STRIDED[name](leaf * leaf)
        first = m.autograd.grad((out * out).sum(), leaf, create_graph=True)[0]
        return m.autograd.grad((first * first).sum(), leaf)[0].tolist()
    same_values(program)


@pytest.mark.parametrize("name", sorted(n for n in AS_STRIDED if not n.startswith("outside")))
def test_as_strided_gradchecks(name):
    x = gradkit.randn(3, 4, dtype=gradkit.float64, requires_grad=True)
    assert gradcheck(lambda x: AS_STRIDED[name](x * 1), (x,))
    assert gradgradcheck(lambda x: AS_STRIDED[name](x * 1), (x,))


def test_as_strided_gradient_of_an_expanded_input_is_averaged_as_torch():
    def program(m):
        leaf = m.tensor([2.0, 3.0], dtype=m.float64, requires_grad=True)
        out = leaf.expand(3, 2).as_strided((2, 2), (0, 1))
        return _weighted_backward(m, out, leaf)
    same_values(program)


ERRORS = {
    "negative_stride": lambda x: x.as_strided((2,), (-1,)),
    "out_of_bounds": lambda x: x.as_strided((3, 4), (4, 2)),
    "out_of_bounds_offset": lambda x: x.as_strided((3, 4), (4, 1), 1),
    "view_out_of_bounds": lambda x: x[2:4].as_strided((12,), (1,)),
    "negative_offset": lambda x: x.as_strided((3,), (1,), -1),
    "lengths": lambda x: x.as_strided((3, 4), (4,)),
    "negative_size": lambda x: x.as_strided((-3,), (1,)),
    "float_stride": lambda x: x.as_strided((2,), (1.5,)),
    "int_size": lambda x: x.as_strided(2, 1),
    "int64_out_of_bounds": lambda x: x.long()[:3].clone().as_strided((4,), (1,)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_as_strided_errors_match_torch(name):
    same_error(lambda m: ERRORS[name](m.arange(12.0)))


# torch names the function and counts the positions of the form called (a method's skip self):
# gradkit's as_strided counts as the method, whatever the form
ARGUMENT_ERRORS = {
    "function_size": lambda m: m.as_strided(m.zeros(4), 2, (1,)),
    "copy_stride": lambda m: m.as_strided_copy(m.zeros(4), (2,), 1),
    "in_place_stride": lambda m: m.zeros(4).as_strided_((2,), 1),
    "scatter_size": lambda m: m.as_strided_scatter(m.zeros(4), m.zeros(2), 2, (1,)),
    "scatter_float_stride": lambda m: m.as_strided_scatter(m.zeros(4), m.zeros(2), (2,), (1.5,)),
}


@pytest.mark.parametrize("name", sorted(ARGUMENT_ERRORS))
def test_argument_type_errors_name_the_function(name):
    expected, got = _run(ARGUMENT_ERRORS[name], torch), _run(ARGUMENT_ERRORS[name], gradkit)
    assert got[0] == expected[0] == "TypeError"
    if name == "function_size":
        got, expected = got[1].replace("(position 1)", "(position 2)"), expected[1]
    assert got == expected


def test_as_strided_reads_and_writes_the_bases_memory_as_torch():
    def program(m):
        base = m.arange(12.0)
        window = base[1:].as_strided((2, 3), (3, 2), 4)
        window[1].mul_(-1)   # a write through the view reaches the base
        base[4].fill_(100.0)  # and one into the base shows in the view
        return base.tolist(), window.tolist(), window._base is base, window._is_view()
    same_values(program)


def test_a_recorded_write_through_as_strided_reaches_the_leaf_gradient():
    def program(m):
        leaf = m.arange(1.0, 13.0, dtype=m.float64, requires_grad=True)
        y = leaf * 1
        window = y.as_strided((2, 2), (1, 4), 2)
        window.mul_(window.detach() + 1)  # recorded through the view (CopySlices)
        return y.tolist(), y.grad_fn.name().endswith("CopySlices"), _weighted_backward(m, y, leaf)
    same_values(program)


def test_unfold_views_write_through_to_the_base():
    def program(m):
        leaf = m.arange(1.0, 9.0, dtype=m.float64, requires_grad=True)
        y = leaf * 1
        y.unfold(0, 2, 3)[:, 0].mul_(10.0)
        return y.tolist(), _weighted_backward(m, y, leaf)
    same_values(program)


def test_as_strided_in_place_changes_metadata_only():
    def program(m):
        x = m.arange(6.0)
        same = x.as_strided_((2, 2), (1, 2), 1)
        return same is x, x.tolist(), _layout(x), x._is_view()
    same_values(program)
    same_error(lambda m: m.ones(4, requires_grad=True).as_strided_((2,), (2,)))
    same_error(lambda m: m.arange(4.0).as_strided_((3,), (2,)))


def test_as_strided_in_place_with_history_records_torchs_node():
    def program(m):
        leaf = m.arange(1.0, 5.0, dtype=m.float64, requires_grad=True)
        y = leaf * 2
        earlier_view = y[1:]
        same = y.as_strided_((2,), (2,), 1)
        names = (same is y, y.grad_fn.name(), y._version, earlier_view._version, y._is_view())
        unrecorded = leaf * 2
        with m.no_grad():  # no history recorded: the old node stays, as torch's
            unrecorded.as_strided_((2,), (1,))
        return (names, y.tolist(), _weighted_backward(m, y, leaf), unrecorded.grad_fn.name(),
                unrecorded._version)
    same_values(program)

    def uses_a_saved_value_after(m):
        y = m.arange(1.0, 5.0, requires_grad=True) * 2
        squared = y * y  # saves y
        y.as_strided_((2,), (2,))
        squared.sum().backward()
    got, expected = _run(uses_a_saved_value_after, gradkit), _run(uses_a_saved_value_after, torch)
    assert got[0] == expected[0] == "RuntimeError"
    head = "one of the variables needed for gradient computation has been modified by an inplace"
    assert got[1].startswith(head) and expected[1].startswith(head)


def test_as_strided_in_place_on_a_view_with_history_stays_a_view_of_its_base():
    def program(m):
        leaf = m.arange(1.0, 5.0, dtype=m.float64, requires_grad=True)
        base = leaf * 2
        y = base[1:]
        y.as_strided_((2,), (2,))  # the storage offset stays the view's: 1
        name = y.grad_fn.name()
        (y * m.tensor([3.0, 5.0], dtype=m.float64)).sum().backward(retain_graph=True)
        y.mul_(10)  # reaches the base
        return name, y._base is base, base, leaf.grad
    got, expected = program(gradkit), program(torch)
    assert got[:2] == expected[:2] == ("AsStridedBackward1", True)
    for mine, theirs in zip(got[2:], expected[2:]):
        assert mine.tolist() == theirs.tolist()


# -- as_strided_scatter, empty_strided ----------------------------------------------------------

SCATTER = {
    "contiguous": (lambda x: x * 1, (2,), (2,), 1),
    "transposed": (lambda x: x.t(), (2,), (1,), 0),
    "sliced": (lambda x: x[:, 1:], (2,), (1,), None),
    "offset_outside_the_view": (lambda x: x[:, 1:], (2,), (3,), 0),
    "expanded": (lambda x: x[:1, :1].expand(2, 2), (2,), (1,), None),
    "matrix": (lambda x: x * 1, (2, 2), (1, 3), 1),
}


@pytest.mark.parametrize("name", sorted(SCATTER))
def test_as_strided_scatter_values_and_layout_match_torch(name):
    make, size, stride, offset = SCATTER[name]

    def program(m):
        x = make(m.arange(6.0).reshape(2, 3))
        src = m.arange(10.0, 10.0 + int(np.prod(size))).reshape(size)
        out = m.as_strided_scatter(x, src, size, stride, offset)
        return out.tolist(), _layout(out), x.tolist()
    same_values(program)


def test_as_strided_scatter_gradient_of_src_matches_torch():
    def program(m):
        x = m.arange(6.0, dtype=m.float64).reshape(2, 3).requires_grad_()
        src = m.ones(2, 2, dtype=m.float64, requires_grad=True)
        out = m.as_strided_scatter(x * 1, src * 1, (2, 2), (1, 3), 1)
        return out.grad_fn.name(), _weighted_backward(m, out, src)
    same_values(program)


def test_as_strided_scatter_gradient_of_self_is_the_derivative_unlike_torchs():
    def scatter(lib):
        return lambda x, s: lib.as_strided_scatter(x, s, (2,), (2,), 1)

    def inputs(lib):
        return (lib.rand(6, dtype=lib.float64, requires_grad=True),
                lib.rand(2, dtype=lib.float64, requires_grad=True))
    with pytest.raises(Exception, match="Jacobian mismatch"):  # torch's is the written slice
        torch.autograd.gradcheck(scatter(torch), inputs(torch))
    assert gradcheck(scatter(gradkit), inputs(gradkit))
    x, s = inputs(gradkit)
    assert gradgradcheck(lambda x, s: gradkit.as_strided_scatter(x.t(), s, (2,), (1,)),
                         (x.reshape(2, 3).detach().requires_grad_(), s))


SCATTER_ERRORS = {
    "overlap": lambda m: m.as_strided_scatter(m.zeros(6), m.arange(3.0), (3,), (0,)),
    "src_size": lambda m: m.as_strided_scatter(m.zeros(6), m.arange(2.0), (3,), (1,)),
    "out_of_bounds": lambda m: m.as_strided_scatter(m.zeros(6), m.arange(3.0), (3,), (3,)),
    "negative_stride": lambda m: m.as_strided_scatter(m.zeros(6), m.arange(3.0), (3,), (-1,)),
}


@pytest.mark.parametrize("name", sorted(SCATTER_ERRORS))
def test_as_strided_scatter_errors_match_torch(name):
    same_error(SCATTER_ERRORS[name])


def test_empty_strided_and_new_empty_strided():
    def program(m):
        made = [m.empty_strided((2, 3), (1, 2)), m.empty_strided((2, 3), (0, 1)),
                m.empty_strided((0, 3), (5, 1)),
                m.ones(2, dtype=m.float64).new_empty_strided((2, 3), (1, 2)),
                m.empty_strided((2,), (2,), dtype=m.int64, requires_grad=False)]
        grad = m.empty_strided((2, 2), (1, 2), requires_grad=True)
        return [(_layout(t), str(t.dtype).split(".")[-1]) for t in made] + [
            grad.requires_grad, grad.is_leaf]
    same_values(program)
    same_error(lambda m: m.empty_strided((2, 3), (1,)))
    same_error(lambda m: m.empty_strided((2, 3), (-1, 2)))


# -- unfold -------------------------------------------------------------------------------------

UNFOLDS = [(1, 2, 1), (1, 3, 2), (0, 2, 2), (-1, 5, 1), (1, 0, 1), (0, 1, 3)]


@pytest.mark.parametrize("args", UNFOLDS, ids=str)
def test_unfold_matches_torch(args):
    def program(m):
        leaf = m.arange(1.0, 16.0, dtype=m.float64).reshape(3, 5).requires_grad_()
        out = (leaf * 1).unfold(*args)
        grads = _weighted_backward(m, out, leaf) if out.numel() else []
        return out.tolist(), _layout(out), out.grad_fn.name(), out._is_view(), grads
    same_values(program)
    x = gradkit.randn(3, 5, dtype=gradkit.float64, requires_grad=True)
    assert gradcheck(lambda x: x.unfold(*args), (x,))
    assert gradgradcheck(lambda x: x.unfold(*args), (x,))


def test_unfold_of_a_0d_tensor_and_errors():
    same_values(lambda m: m.tensor(3.0).unfold(0, 1, 1).tolist())
    for program in (lambda m: m.arange(12.0).unfold(0, 13, 3),
                    lambda m: m.arange(12.0).unfold(0, 2, 0),
                    lambda m: m.arange(12.0).unfold(0, -1, 1),
                    lambda m: m.arange(12.0).unfold(1, 2, 1),
                    lambda m: m.tensor(3.0).unfold(0, 2, 1)):
        same_error(program)


# -- the *_copy functions and the unsafe splits --------------------------------------------------

COPIES = {
    "view_copy": lambda m, x: m.view_copy(x, (4, 3)), "t_copy": lambda m, x: m.t_copy(x),
    "transpose_copy": lambda m, x: m.transpose_copy(x, 0, 1),
    "squeeze_copy": lambda m, x: m.squeeze_copy(x[None], 0),
    "select_copy": lambda m, x: m.select_copy(x, 1, -1),
    "slice_copy": lambda m, x: m.slice_copy(x, 1, 0, 3, 2),
    "diagonal_copy": lambda m, x: m.diagonal_copy(x, 1),
    "alias_copy": lambda m, x: m.alias_copy(x),
    "unfold_copy": lambda m, x: m.unfold_copy(x, 1, 2, 1),
    "as_strided_copy": lambda m, x: m.as_strided_copy(x, (2, 2), (1, 4), 1),
    "unbind_copy": lambda m, x: m.unbind_copy(x, 1)[1],
    "split_copy": lambda m, x: m.split_copy(x, 3, 1)[1],
}


@pytest.mark.parametrize("name", sorted(COPIES))
def test_copies_are_contiguous_tensors_of_their_own(name):
    def program(m):
        x = m.arange(12.0).reshape(3, 4)
        out = COPIES[name](m, x)
        before = out.tolist()
        x.zero_()  # the copy keeps its values
        return before == out.tolist(), _layout(out), out._is_view(), out._base is None
    same_values(program)


def test_detach_copy_requires_grad_but_has_no_derivative():
    def program(m):
        x = m.ones(3, requires_grad=True)
        out = m.detach_copy(x)
        names = (out.requires_grad, out.grad_fn.name().split("::")[-1], out._is_view())
        out.sum().backward()
        return names
    same_error(program)
    out = gradkit.detach_copy(gradkit.ones(3, requires_grad=True))
    assert (out.requires_grad, out.grad_fn.name()) == (True, "torch::autograd::NotImplemented")
    assert gradkit.detach_copy(gradkit.ones(3)).requires_grad is False


def test_view_as_complex_copy_refuses_autograd_as_torch():
    same_values(lambda m: m.view_as_complex_copy(m.ones(3, 2)).tolist())
    same_error(lambda m: m.view_as_complex_copy(m.ones(3, 2, requires_grad=True)))


def test_unsafe_splits_share_memory_but_not_the_version_counter():
    def program(m):
        x = m.arange(6.0)
        first, second = m.unsafe_split(x, 3)
        first.add_(1.0)
        chunks = x.unsafe_chunk(3)
        return (x.tolist(), x._version, first._version, first._is_view(), len(chunks),
                [t.tolist() for t in m.unsafe_split_with_sizes(x, [1, 5])])
    same_values(program)
    same_error(lambda m: m.unsafe_chunk(m.arange(6.0), 0))
    same_error(lambda m: m.unsafe_split(m.arange(6.0), 0))


def test_a_recorded_write_into_an_unsafe_piece_is_allowed_as_torch():
    def program(m):
        leaf = m.arange(1.0, 7.0, dtype=m.float64, requires_grad=True)
        first, _ = m.unsafe_chunk(leaf * 1, 2)
        first.mul_(3.0)  # not a view: no multiple-views refusal
        return first.grad_fn.name(), _weighted_backward(m, first, leaf)
    same_values(program)


# -- in-place writes into overlapping windows ----------------------------------------------------

def test_writing_into_overlapping_windows_writes_each_location_once_as_torch():
    def program(m):
        base = m.arange(6.0)
        windows = base.unfold(0, 3, 1)
        windows[1] = -1.0  # locations other windows share keep the value written
        windows[3].fill_(9.0)
        strided = m.arange(6.0)
        strided.as_strided((3, 3), (1, 1))[:, 0] = m.tensor([7.0, 8.0, 9.0])
        return base.tolist(), windows.tolist(), strided.tolist()
    same_values(program)


def test_arithmetic_in_place_on_overlapping_windows_differs_from_torch():
    """torch's kernel updates element by element, so a location k windows share is multiplied
    k times; gradkit computes the product once and writes it (docs/numerics.md)."""
    got, expected = gradkit.arange(1.0, 5.0), torch.arange(1.0, 5.0)
    got.unfold(0, 2, 1).mul_(2)
    expected.unfold(0, 2, 1).mul_(2)
    assert got.tolist() == (gradkit.arange(1.0, 5.0) * 2).tolist()
    assert expected.tolist() != got.tolist()
    assert expected[0] == got[0] and expected[3] == got[3]  # the unshared ends agree


def test_a_tensor_on_a_numpy_views_memory_has_the_numpy_base_for_storage():
    """docs/api.md: gradkit's storage is NumPy's base array, torch's starts at the view."""
    array = np.arange(5.0)
    got, expected = gradkit.from_numpy(array[2:]), torch.from_numpy(array[2:])
    assert (got.storage_offset(), expected.storage_offset()) == (2, 0)
    assert got.data_ptr() == expected.data_ptr()
    assert got.as_strided((3,), (1,), 0).tolist() == array[:3].tolist()


# torch's test_autograd.py::test_as_strided cases, restated: gradcheck (with forward AD) and
# gradgradcheck of ``prepare(leaf).as_strided(size, stride, offset)``
TORCH_AS_STRIDED_CASES = {
    "view": ((25,), lambda x: x.view(5, 5), (3, 3), (6, 2), 2),
    "size_1_dims_any_stride": ((12,), None, (1, 2, 1, 5), (0, 5, 100, 1), 2),
    "expand_like": ((5,), None, (3, 3, 3), (0, 1, 0), 2),
    "all_zero_strides": ((5,), None, (3, 3, 3), (0, 0, 0), 4),
    "of_expanded": ((5,), lambda x: x.expand(5, 5), (5, 5), (0, 1), 0),
    "overlapping": ((35,), None, (6, 6), (5, 1), 2),
    "overlapping_steps": ((15,), None, (3, 2), (3, 6), 2),
    "transpose": ((3, 4), None, (4, 3), (1, 4), None),
    "select_of_expanded": ((2, 3), lambda x: x.expand(10, 2, 3), (2, 3), (3, 1), 0),
}


@pytest.mark.parametrize("name", sorted(TORCH_AS_STRIDED_CASES))
def test_torchs_as_strided_cases_gradcheck(name):
    shape, prepare, size, stride, offset = TORCH_AS_STRIDED_CASES[name]
    leaf = gradkit.randn(*shape, dtype=gradkit.float64, requires_grad=True)

    def closure(x):
        return (x if prepare is None else prepare(x)).as_strided(size, stride, offset)
    assert gradcheck(closure, (leaf,), check_forward_ad=True)
    assert gradgradcheck(closure, (leaf,))


def test_as_strided_reading_outside_a_detached_views_elements_has_zero_gradient():
    """torch's "getting things outside the input" case: a leaf that is the second half of a
    storage reads the first half, which it does not hold: values from there, gradient 0."""
    whole = gradkit.randn(6, 2, dtype=gradkit.float64)
    leaf = whole[3:].detach().requires_grad_()
    out = leaf.as_strided((3, 2), (2, 1), 0)
    assert out.tolist() == whole[:3].tolist()
    assert gradcheck(lambda x: x.as_strided((3, 2), (2, 1), 0), (leaf,), check_forward_ad=True)
    out.sum().backward()
    assert leaf.grad.tolist() == [[0.0, 0.0]] * 3


def test_forward_ad_through_as_strided_and_unfold_of_views_matches_torch():
    def program(m):
        forward_ad = m.autograd.forward_ad
        x = m.arange(1.0, 13.0, dtype=m.float64)
        with forward_ad.dual_level():
            dual = forward_ad.make_dual(x, m.arange(12.0, dtype=m.float64) * 0.5)
            outs = ((dual * dual)[2:].as_strided((3, 2), (1, 3)), (dual * 2).unfold(0, 4, 3),
                    dual.view(3, 4).t().as_strided((2, 2), (1, 4), 1))
            return [forward_ad.unpack_dual(o).tangent.tolist() for o in outs]
    same_values(program)


@pytest.mark.parametrize("name", sorted(SCATTER))
def test_as_strided_scatter_gradchecks_forward_and_backward_on_views(name):
    make, size, stride, offset = SCATTER[name]
    x = gradkit.randn(2, 3, dtype=gradkit.float64, requires_grad=True)
    src = gradkit.randn(*size, dtype=gradkit.float64, requires_grad=True)

    def scatter(x, src):
        return gradkit.as_strided_scatter(make(x), src, size, stride, offset)
    assert gradcheck(scatter, (x, src), check_forward_ad=True)
    assert gradgradcheck(scatter, (x, src))


@pytest.mark.parametrize("call", [
    lambda m: m.slice_copy(m.tensor(1.0)),
    lambda m: m.slice_copy(m.ones(3), 0, 0, 2, 0),
    lambda m: m.slice_copy(m.ones(3), 0, 0, 2, -1),
    lambda m: m.slice_copy(m.ones(3), 2),
], ids=["0d", "step_0", "negative_step", "dim"])
def test_slice_copy_errors_are_torchs(call):
    same_error(call)
