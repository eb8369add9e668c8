"""Programs the differential fuzzer (tests/fuzz) found gradkit and torch to disagree on, each
run in both (the seed that found it in the test's comment)."""
import math
import warnings

import numpy as np
import pytest
from cpu_kernels import torch_float32_gelu_is_nan_at_inf
from test_torch_numerics import _outcome, assert_same_as_torch

import gradkit

torch = pytest.importorskip("torch")


def _gather_after_input_written(m):
    x = m.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=m.float64, requires_grad=True)
    y = x * 1
    picked = m.gather(y, 1, m.tensor([[0, 0], [1, 0]]))
    y.mul_(2)
    return m.autograd.grad(picked.sum(), x)


@pytest.mark.parametrize("pick", [
    lambda m, y: m.take(y, m.tensor([0, 3])),
    lambda m, y: m.masked_select(y, m.tensor([[True, False], [False, True]])),
], ids=["take", "masked_select"])
def test_take_and_masked_select_save_their_input(pick):
    for m in (torch, gradkit):
        x = m.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=m.float64, requires_grad=True)
        y = x * 1
        picked = pick(m, y)
        y.mul_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            picked.sum().backward()


def test_gather_saves_its_input_so_writing_it_fails_backward():
    """torch's GatherBackward0 saves ``self``: writing it in place fails backward."""
    for m in (torch, gradkit):
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            _gather_after_input_written(m)
    node = gradkit.gather(gradkit.ones(2, 2, requires_grad=True), 0,
                          gradkit.tensor([[0, 1]])).grad_fn
    assert tuple(node._saved_self.shape) == (2, 2)


def test_gather_gradient_unchanged():
    def program(m):
        x = m.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=m.float64, requires_grad=True)
        picked = m.gather(x, 1, m.tensor([[0, 0], [2, 1]]))
        return (picked,) + m.autograd.grad((picked * picked).sum(), x)
    assert_same_as_torch(program)


_EMPTY_COMPLEX = [("softmax", (-1,)), ("log_softmax", (-1,)), ("softmax", (0,)),
                  ("amax", (1,)), ("amin", (0,)), ("amax", (-1, True))]


@pytest.mark.parametrize("shape", [(0,), (2, 0), (0, 3)])
@pytest.mark.parametrize("name,args", _EMPTY_COMPLEX)
def test_empty_complex_reduces_without_grad(name, args, shape):
    """No kernel runs on an empty tensor: torch computes softmax/amax of an empty complex one
    (fuzz edge 71820) or raises its empty-dim error, as gradkit."""
    def program(m):
        return getattr(m, name)(m.zeros(shape, dtype=m.complex64), *args)
    assert_same_as_torch(program)


@pytest.mark.parametrize("shape", [(0,), (2, 0), (0, 3)])
@pytest.mark.parametrize("name,args", _EMPTY_COMPLEX)
def test_empty_complex_that_requires_grad_is_refused_by_autograd(name, args, shape):
    """torch's autograd has no complex formula for them: '<op> does not support automatic
    differentiation for outputs with complex dtype.' (or the empty-dim error first)."""
    def program(m):
        return getattr(m, name)(m.zeros(shape, dtype=m.complex64, requires_grad=True), *args)
    assert_same_as_torch(program)


@pytest.mark.parametrize("name,args", _EMPTY_COMPLEX)
def test_nonempty_complex_is_refused_by_the_kernel(name, args):
    def program(m):
        x = m.zeros((2, 3), dtype=m.complex64, requires_grad=True)
        with m.no_grad():
            return getattr(m, name)(x, *args)
    assert_same_as_torch(program)


def test_empty_complex_under_no_grad_computes():
    def program(m):
        x = m.zeros((0, 3), dtype=m.complex128, requires_grad=True)
        with m.no_grad():
            return m.softmax(x, -1), m.amax(x, 1)
    assert_same_as_torch(program)


def _write(key, value_of):
    """``x[key] = value_of(x)`` on a clone of a leaf that requires grad, then x's gradient."""
    def program(m):
        leaf = m.arange(1.0, 5.0, dtype=m.float64).reshape(2, 2).requires_grad_()
        x = leaf * 1
        x[key] = value_of(x)
        return (x,) + m.autograd.grad((x * x).sum(), leaf)
    return program


_SETITEM_FROM_ITSELF = [
    # torch's setitem strips v's leading 1-dims and expands it to the region: one element of
    # x, expanded with strides 0, overlaps the region partially (fuzz views 60409 70337 93369)
    ("one_element_with_more_dims", (0, slice(0, 1)), lambda x: x[0, 0].view(1, 1)),
    ("one_element_unbound", (slice(0, 1), 0), lambda x: x.unbind(1)[0][0:1].view(1, 1)),
    ("one_element_same_shape", (0, slice(0, 1)), lambda x: x[0, 0:1]),
    ("one_element_other_element", (0, slice(0, 1)), lambda x: x[1, 1].view(1, 1)),
    ("row_broadcast_to_rows", slice(0, 2), lambda x: x[0]),
    ("row_with_more_dims", slice(0, 1), lambda x: x[0].view(1, 1, 2)),
    ("zero_dim_is_filled_in", (0, slice(0, 1)), lambda x: x[0, 0]),
    ("region_zero_dim", (0, 0), lambda x: x[0, 0].view(1, 1)),
]


@pytest.mark.parametrize("key,value_of", [c[1:] for c in _SETITEM_FROM_ITSELF],
                         ids=[c[0] for c in _SETITEM_FROM_ITSELF])
def test_setitem_from_a_view_of_itself(key, value_of):
    assert_same_as_torch(_write(key, value_of))


def test_fill_from_a_view_of_itself_reads_the_value_first():
    def program(m):
        w = m.tensor(2.0, dtype=m.float64, requires_grad=True) * 1
        w.view(1).fill_(w)
        return w
    assert_same_as_torch(program)


def test_fill_of_an_expanded_tensor_takes_a_number_not_a_tensor():
    def program(m, value):
        x = m.zeros(1).expand(3)
        x.fill_(value(m))
        return x
    assert_same_as_torch(lambda m: program(m, lambda m: 1.0))
    assert_same_as_torch(lambda m: program(m, lambda m: m.tensor(1.0)))


def _dot_last(m, x_shape, y_shape, x_grad, y_grad, then):
    """The fuzzer's ``dot_last`` (einsum "...i,...i->...") of two non-leaf operands, ``then``
    applied to (result, x, y), and the gradients of the leaves that require grad."""
    x = m.arange(1.0, 1 + math.prod(x_shape), dtype=m.float64).reshape(x_shape)
    y = m.arange(2.0, 2 + math.prod(y_shape), dtype=m.float64).reshape(y_shape) / 4
    leaves = [t.requires_grad_() for t, wanted in ((x, x_grad), (y, y_grad)) if wanted]
    x, y = x * 1, y * 1
    result = m.einsum("...i,...i->...", x, y)
    then(result, x, y)
    return (result,) + m.autograd.grad(result.sum(), leaves)


_AFTER_DOT_LAST = {
    "nothing": lambda r, x, y: None,
    "write_result": lambda r, x, y: r.mul_(3),
    "write_x": lambda r, x, y: x.mul_(2),  # fails backward where torch's bmm saved x's view
    "write_y": lambda r, x, y: y.mul_(2),
}


@pytest.mark.parametrize("then", list(_AFTER_DOT_LAST))
@pytest.mark.parametrize("grads", [(True, True), (True, False), (False, True)])
@pytest.mark.parametrize("shapes", [((3, 2), (3, 2)), ((3, 2), (2,)), ((3, 1), (3, 2)),
                                    ((2, 1, 2), (1, 3, 2)), ((2,), (2,))])
def test_einsum_result_is_torchs_view_and_saves_what_torchs_saves(shapes, grads, then):
    """torch's einsum is a bmm (or a mul, after summing a letter only one operand has) then a
    view: the result is a view, and which operand a write breaks backward for follows the
    bmm's saved tensors (fuzz core/views/mixed/edge dot_last)."""
    program = lambda m: _dot_last(m, *shapes, *grads, _AFTER_DOT_LAST[then])  # noqa: E731
    if _outcome(program, torch)[0] == "ok":
        assert_same_as_torch(program)
        return
    # torch names the saved view by the node it rebuilds for it (AsStrided), gradkit by its own
    expected, got = _outcome(program, torch), _outcome(program, gradkit)
    assert got[1] == expected[1]
    assert got[2].split(" [")[0] == expected[2].split(" [")[0]


@pytest.mark.parametrize("shapes", [((3, 2), (3, 2)), ((3, 1), (3, 2)), ((2,), (2,))])
def test_einsum_result_is_a_view_detach_in_place_refuses(shapes):
    """torch's message goes on about DistributedDataParallel, which gradkit does not have."""
    for m in (torch, gradkit):
        with pytest.raises(RuntimeError, match="^Can't detach views in-place. Use detach"):
            _dot_last(m, *shapes, True, True, lambda r, x, y: r.detach_())


@pytest.mark.parametrize("x_dtype,y_dtype", [("float64", "complex128"), ("complex128", "float64"),
                                             ("int64", "float64"), ("bool", "bool"),
                                             ("float32", "float64")])
@pytest.mark.parametrize("x_shape,y_shape", [((0, 2), (0, 2)), ((2, 0), (2, 0)),
                                             ((0, 2), (0, 1)), ((2, 3), (2, 3))])
def test_einsum_of_mixed_dtypes_with_an_empty_operand(x_dtype, y_dtype, x_shape, y_shape):
    """torch's bmm answers an empty product in the second operand's dtype before checking
    dtypes (fuzz mixed 92255); non-empty ones are refused."""
    def program(m):
        x = m.zeros(x_shape, dtype=getattr(m, x_dtype))
        y = m.ones(y_shape, dtype=getattr(m, y_dtype))
        return m.einsum("...i,...i->...", x, y)
    assert_same_as_torch(program)


@pytest.mark.parametrize("equation,shapes", [
    ("ij->ji", [(2, 3)]), ("ii->i", [(3, 3)]), ("ij->", [(2, 3)]),
    ("iij,jk->ki", [(2, 2, 3), (3, 2)]), ("abc,cd,de->be", [(2, 3, 4), (4, 5), (5, 2)]),
    ("a...,...b->ab", [(2, 3, 4), (3, 4, 2)]), ("ijk,ikl->ijl", [(2, 1, 3), (1, 3, 4)]),
    ("i,j->ij", [(2,), (3,)]), ("ij,kl->", [(2, 2), (1, 2)])])
def test_einsum_graph_matches_torchs(equation, shapes):
    """Values, gradients, the result's node and whether it is a view, as torch's."""
    def run(m):
        operands = [m.arange(1.0, 1 + math.prod(s), dtype=m.float64).reshape(s).requires_grad_()
                    for s in shapes]
        out = m.einsum(equation, *operands)
        return out, out.grad_fn.name(), out._is_view(), m.autograd.grad(out.sum(), operands)
    (out, name, is_view, grads), (t_out, t_name, t_is_view, t_grads) = run(gradkit), run(torch)
    assert (name, is_view) == (t_name, t_is_view)
    for mine, theirs in zip((out,) + grads, (t_out,) + t_grads, strict=True):
        np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), rtol=1e-12)


@pytest.mark.parametrize("x_dtype,y_dtype", [("float64", "complex128"), ("bool", "float32"),
                                             ("float32", "bool")])
@pytest.mark.parametrize("k", [0, 2])
def test_bmm_of_mixed_dtypes(x_dtype, y_dtype, k):
    def program(m):
        return m.bmm(m.ones((1, 1, k), dtype=getattr(m, x_dtype)),
                     m.ones((1, k, 1), dtype=getattr(m, y_dtype)))
    assert_same_as_torch(program)


def test_version_error_of_a_saved_tensor_no_node_made():
    """A saved tensor that no node made (y below): "[<tensor>] is at version", no comma."""
    messages = []
    for m in (torch, gradkit):
        x = m.ones(2, dtype=m.float64, requires_grad=True)
        y = m.ones(2, dtype=m.float64)
        z = x * y
        y.mul_(2)
        with pytest.raises(RuntimeError) as caught:
            z.sum().backward()
        messages.append(str(caught.value).split(" Hint:")[0])
    assert messages[1] == messages[0].replace("torch.", "gradkit.")


@pytest.mark.parametrize("dtype,n", [("float64", 3), ("float32", 1)])
def test_gelu_at_infinities_matches_torchs_own_kernel(dtype, n):
    """special seeds 71285, 72445: gelu(inf) = inf, gelu(-inf) = NaN (-inf times 0), as
    torch's own kernel, with gradients."""
    def program(m):
        x = m.tensor([math.inf, -math.inf, 1.0][:n], dtype=getattr(m, dtype),
                     requires_grad=True)
        y = m.nn.functional.gelu(x)
        return (y,) + m.autograd.grad(y.sum(), x)
    assert_same_as_torch(program)


def test_gelu_of_inf_in_float32_differs_from_torchs_onednn_kernel():
    """The documented difference (docs/numerics.md): torch's oneDNN kernel, which takes
    float32 tensors of more than one element, gives NaN at +inf on AVX-512 CPUs (inf on AVX2
    ones, as its own kernel); gradkit keeps inf."""
    x = [math.inf, 1.0]
    theirs = torch.nn.functional.gelu(torch.tensor(x))
    mine = gradkit.nn.functional.gelu(gradkit.tensor(x))
    assert mine[0].item() == math.inf
    assert math.isnan(theirs[0].item()) if torch_float32_gelu_is_nan_at_inf() else \
        theirs[0].item() == math.inf
    assert mine[1].item() == pytest.approx(theirs[1].item(), rel=1e-6)


def _svdvals_of(m, batch, fill):
    a = m.ones(*batch, 2, 2)
    for index, value in fill:
        a[index] = value
    return m.linalg.svdvals(a)


@pytest.mark.parametrize("batch,fill", [
    ((), [((0, 0), math.nan)]),
    ((3,), [((1, 0, 0), math.nan), ((2, 1, 1), math.nan)]),
])
def test_svd_refuses_nan_input_as_torch(batch, fill):
    """breadth seed 1552: NumPy's float32 gesdd never returned on a NaN input; torch checks for
    NaN first and names the batch element."""
    _same_linalg_error(lambda m: _svdvals_of(m, batch, fill))


def _same_linalg_error(program):
    with pytest.raises(torch.linalg.LinAlgError) as expected:
        program(torch)
    with pytest.raises(gradkit.linalg.LinAlgError) as got:
        program(gradkit)
    assert str(got.value) == str(expected.value)


@pytest.mark.parametrize("matrix", [
    [[math.nan]], [[1.0, 0.0], [math.nan, 2.0]], [[1, 0, 0], [0, 1, 0], [0, math.nan, 1.0]]])
def test_cholesky_refuses_a_nan_pivot_as_torch(matrix):
    """breadth seeds 1097, 2449, 2551: LAPACK's potrf stops at a NaN pivot; NumPy's factor
    carried the NaN on."""
    _same_linalg_error(lambda m: m.linalg.cholesky(m.tensor(matrix)))


def test_svd_of_inf_input_computes_as_torch():
    """inf is not refused: LAPACK gives NaN singular values for that matrix."""
    assert_same_as_torch(lambda m: _svdvals_of(m, (3,), [((1, 0, 0), math.inf)]), atol=1e-6)


@pytest.mark.parametrize("equation,a,b", [
    ("...i,...i->...", ((1, 2, 0), "complex128"), ((0,), "float64")),  # mixed seed 29535
    ("...i,...i->...", ((1, 2, 0), "float64"), ((0,), "complex128")),
    ("ij,jk->ki", ((2, 0), "float32"), ((0, 4), "float64")),
    ("ij,jk->ki", ((2, 3), "float32"), ((3, 4), "float64")),  # the error names them swapped
    ("aij,j->ai", ((1, 2, 3), "int64"), ((3,), "float64")),
    ("ij,jk->ki", ((2, 3), "float64"), ((3, 4), "float64")),
    ("bij,bjk->bik", ((1, 2, 3), "float32"), ((1, 3, 4), "float64")),  # not swapped
])
def test_einsum_multiplies_in_torchs_operand_order(equation, a, b):
    """torch's pairwise product is right @ left when all of right's own dims come before
    left's: that decides an empty product's dtype and the dtype error's text."""
    def program(m):
        (shape_a, dtype_a), (shape_b, dtype_b) = a, b
        x = m.ones(shape_a, dtype=getattr(m, dtype_a))
        y = m.arange(math.prod(shape_b)).reshape(shape_b).to(getattr(m, dtype_b))
        if x.dtype == y.dtype:
            x.requires_grad_()
            out = m.einsum(equation, x, y)
            return (out,) + m.autograd.grad(out.sum(), x)
        return m.einsum(equation, x, y)
    assert_same_as_torch(program)


@pytest.mark.parametrize("shape,dim", [
    ((2, 0, 2), (0,)), ((2, 0, 2), (1,)), ((2, 0, 2), None), ((2, 0, 2), (0, 2)),
    ((2, 0, 2), -2), ((0,), (1, 0)), ((0,), ()), ((), None)])
@pytest.mark.parametrize("ord_", [math.inf, -math.inf])
def test_max_norm_over_an_empty_dim_only_is_refused(shape, dim, ord_):
    """breadth seeds 1757, 2700: the inf norm has no identity, so torch refuses an empty
    reduced dim (naming it) but computes when only a kept dim is empty."""
    assert_same_as_torch(lambda m: m.linalg.vector_norm(
        m.zeros(shape, dtype=m.complex64, requires_grad=True), ord=ord_, dim=dim))


@pytest.mark.parametrize("shape", [(0,), (2, 0), (1,), (3, 1, 2), ()])
@pytest.mark.parametrize("keepdim", [False, True])
def test_logsumexp_over_no_dims_as_torch(shape, keepdim):
    """breadth seeds 84, 1292, 1369: torch's logsumexp(dim=()) fails adding its max back
    unless keepdim (or x is 0-d or empty)."""
    assert_same_as_torch(lambda m: m.logsumexp(
        m.arange(math.prod(shape), dtype=m.float64).reshape(shape), dim=(), keepdim=keepdim))


@pytest.mark.parametrize("reduce", ["amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("first,then", [(-0.0, 0.0), (0.0, -0.0)])
def test_scatter_reduce_extremes_keep_the_first_of_tied_zeros(reduce, include_self, first, then):
    """breadth seed 2750: torch's kernel keeps self (then the earlier src) on a tie."""
    assert_same_as_torch(lambda m: m.tensor([first, 1.0]).scatter_reduce(
        0, m.tensor([0, 0, 1]), m.tensor([then, first, -1.0]), reduce, include_self=include_self))


@pytest.mark.parametrize("shape,dim,index", [
    ((2, 3), 0, [-1]), ((2, 3), 0, [5]), ((2, 3), 1, [0, 7, -2]), ((2, 3, 4), 1, [-1]),
    ((3,), 0, [-1]), ((), 0, [1]), ((), 0, [0, 0]), ((), 0, [0]), ((2, 3), -1, [2, 0]),
    ((0, 2, 0), 0, [-1, 0]), ((2, 0), 1, [0]), ((0,), 0, [0]), ((0, 3), 1, [-1]),  # edge 56564
    ((3, 2, 1), 2, [-1]), ((2, 3, 4, 5), 2, [-1])])  # breadth 2241: only dim 1 says "INDICES"
def test_index_select_refuses_indices_numpy_would_wrap(shape, dim, index):
    """breadth seeds 2710, 2913, 2960: a negative index read from the end in gradkit (NumPy's
    take); torch refuses it, in two kernels' words. A 0-d x takes one index."""
    def program(m):
        x = m.arange(math.prod(shape), dtype=m.float64).reshape(shape).requires_grad_()
        out = x.index_select(dim, m.tensor(index))
        return (out,) + m.autograd.grad((out * out).sum(), x)
    assert_same_as_torch(program)


@pytest.mark.parametrize("name", ["scatter", "scatter_add", "gather"])
@pytest.mark.parametrize("index", [[[-1]], [[3]], [[0], [2]]])
def test_scatter_and_gather_refuse_indices_numpy_would_wrap(name, index):
    """A negative index was read from the end (NumPy): a silent wrong value; torch refuses."""
    def program(m):
        x = m.zeros(3, 2, dtype=m.float64, requires_grad=True)
        i = m.tensor(index)
        out = x.gather(0, i) if name == "gather" else getattr(x, name)(0, i, m.ones(
            2, 1, dtype=m.float64))
        return (out,) + m.autograd.grad((out * out).sum(), x)
    assert_same_as_torch(program)


@pytest.mark.parametrize("name", ["scatter", "scatter_add"])
@pytest.mark.parametrize("index,src", [
    ([[0.0]], (1, 1)), ([[0, 0, 0]], (1, 3)), ([0], (1,)), ([[0]], (1,)), ([[0]], "float32")],
    ids=["float_index", "index_wider_than_self", "index_of_other_ndim", "src_of_fewer_dims",
         "src_of_other_dtype"])
def test_scatter_checks_its_arguments_as_torch(name, index, src):
    """gradkit wrote through NumPy's indexing rules (or cast src); torch refuses, in order."""
    def program(m):
        source = m.ones(1, 1) if src == "float32" else m.ones(src, dtype=m.float64)
        return getattr(m.zeros(3, 2, dtype=m.float64), name)(0, m.tensor(index), source)
    assert_same_as_torch(program)


@pytest.mark.parametrize("index", [[-1], [3], [0, 2]])
def test_embedding_refuses_negative_indices_as_torch(index):
    """gradkit read row -1 from the end (a silent wrong value); torch refuses it."""
    assert_same_as_torch(lambda m: m.nn.functional.embedding(
        m.tensor(index), m.arange(6, dtype=m.float64).reshape(3, 2)))


@pytest.mark.parametrize("dim", [0, 1])
def test_index_fill_value_gradient_at_a_negative_index_fails_as_torch(dim):
    """breadth seeds 3664, 7864: torch reads the filled places with index_select."""
    def program(m):
        x = m.ones(2, 3, dtype=m.float64, requires_grad=True)
        value = m.tensor(2.0, dtype=m.float64, requires_grad=True)
        return m.autograd.grad(x.index_fill(dim, m.tensor([-1]), value).sum(), (x, value))
    assert_same_as_torch(program)


@pytest.mark.parametrize("input_grad,target_grad", [(True, True), (False, True), (True, False),
                                                    (False, False)])
def test_bce_with_logits_of_a_complex_target_refuses_autograd(input_grad, target_grad):
    """breadth seed 3584: torch computes a complex loss, and refuses to record it."""
    assert_same_as_torch(lambda m: m.nn.functional.binary_cross_entropy_with_logits(
        m.tensor(0.5, requires_grad=input_grad),
        m.tensor(1 + 0j, dtype=m.complex128, requires_grad=target_grad)))


@pytest.mark.parametrize("shape", [(), (2,), (0,)])
def test_erf_of_complex_is_refused_as_torch(shape):
    """breadth seed 5665: torch has no complex erf kernel (NumPy's math.erf path has none)."""
    assert_same_as_torch(lambda m: m.erf(m.zeros(shape, dtype=m.complex64)))


_GAUGE_RNG = np.random.default_rng(0)
_GAUGE_A = _GAUGE_RNG.standard_normal((3, 3)) + 1j * _GAUGE_RNG.standard_normal((3, 3))
_GAUGE_W = _GAUGE_RNG.standard_normal((3, 3)) + 1j * _GAUGE_RNG.standard_normal((3, 3))
_VECTORS = {"eigh": lambda m, x: m.linalg.eigh(x)[1], "svd_U": lambda m, x: m.linalg.svd(x)[0],
            "svd_Vh": lambda m, x: m.linalg.svd(x)[2],
            "svd_both": lambda m, x: m.linalg.svd(x)[0] + m.linalg.svd(x)[2].mH}


@pytest.mark.parametrize("vectors", list(_VECTORS.values()), ids=list(_VECTORS))
@pytest.mark.parametrize("scale", [1e-4, 3e-3, 6e-3, 1e-2, 1e-1, math.nan])
def test_phase_dependent_losses_are_refused_at_torchs_tolerance(vectors, scale):
    """breadth seeds 133, 3840, 4042, ...: torch's check is allclose(.., rtol=1e-2, atol=1e-2)
    of the skew parts' imaginary diagonals, and a NaN fails it; gradkit's was 1e-6, NaN passed."""
    def program(m):
        x = m.tensor(_GAUGE_A @ _GAUGE_A.conj().T + np.eye(3)).requires_grad_()
        loss = (m.tensor(_GAUGE_W * scale).conj() * vectors(m, x)).real.sum()
        m.autograd.grad(loss, x)  # values depend on LAPACK's phases: only the outcome compared
        return m.tensor(True)
    assert_same_as_torch(program)


@pytest.mark.parametrize("name", ["eigh", "eigvalsh", "matrix_norm", "svdvals", "inv", "det"])
@pytest.mark.parametrize("dtype", ["bool", "int64"])
@pytest.mark.parametrize("n", [0, 2])
def test_linalg_of_integer_matrices_fails_as_torch(name, dtype, n):
    """breadth seed 5908: torch's eigh has no dtype check (an empty x computes; its kernel
    refuses a non-empty one); matrix_norm names itself."""
    def program(m):
        out = getattr(m.linalg, name)(m.ones((n, n), dtype=getattr(m, dtype)))
        return out if isinstance(out, tuple) else (out,)
    assert_same_as_torch(program)


def test_phase_check_skips_vectors_no_gradient_reached():
    """breadth seeds 5662, 6696: with only the singular values used, torch's gU is undefined
    and its phase check skips it, even when inf entries made U NaN."""
    def program(m):
        x = m.tensor([[math.inf, 1j], [1.0, 2.0]], dtype=m.complex128, requires_grad=True)
        m.autograd.grad(m.linalg.svdvals(x).sum(), x)  # NaNs laid out as each LAPACK gives
        return m.tensor(True)
    assert_same_as_torch(program)


@pytest.mark.parametrize("name", ["logaddexp", "logaddexp2"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_logaddexp_at_infinities_as_torch(name, dtype):
    """breadth seed 6499: float64 logaddexp2(x, inf) was NaN (the fused multiply-add's error
    terms of an infinite sum are inf - inf)."""
    pairs = [(0.3, math.inf), (math.inf, 0.3), (math.inf, math.inf), (-math.inf, -math.inf),
             (-math.inf, 0.3), (math.inf, -math.inf), (math.nan, math.inf), (1e308, 1e308)]
    assert_same_as_torch(lambda m: getattr(m, name)(
        m.tensor([a for a, _ in pairs], dtype=getattr(m, dtype)),
        m.tensor([b for _, b in pairs], dtype=getattr(m, dtype))))


@pytest.mark.parametrize("bool_first", [True, False])
@pytest.mark.parametrize("reduction", ["none", "mean"])
def test_mse_with_a_bool_operand_differentiates_twice_as_torch(bool_first, reduction):
    """breadth seed 7750: the create_graph gradient subtracted a bool tensor (refused)."""
    def program(m):
        x = m.tensor([0.7, 0.2], dtype=m.float64, requires_grad=True)
        flags = m.tensor([True, False])
        a, b = (flags, x) if bool_first else (x, flags)
        g, = m.autograd.grad(m.nn.functional.mse_loss(a, b, reduction=reduction).sum(), x,
                             create_graph=True)
        return (g,) + m.autograd.grad(g.sum(), x)
    assert_same_as_torch(program)


@pytest.mark.parametrize("value", [math.inf, -math.inf, -2.0, 0.5])
def test_qr_gradient_at_infinite_or_singular_r_as_torch(value):
    """breadth seeds 469, 774, 1119, 5135: torch solves with R by substitution (no singularity
    check: R = 0 gives NaN, R = inf gives 0) and adds no R gR^H when only Q is used."""
    def program(m):
        x = m.tensor(value, dtype=m.float64, requires_grad=True)
        q, _ = m.linalg.qr(x.reshape(1, 1) + 2 * m.eye(1, dtype=x.dtype))
        return m.autograd.grad((q.abs() * 0.37).sum(), x)
    assert_same_as_torch(program)


def test_solve_triangular_gradients():
    """The substitution op behind qr's gradient, to second order, both triangles, complex."""
    from gradkit.ops.linalg_triangular_solve import solve_triangular
    rng = np.random.default_rng(0)
    for upper in (True, False):
        a = rng.standard_normal((2, 3, 3)) + 1j * rng.standard_normal((2, 3, 3)) + 3 * np.eye(3)
        a = gradkit.tensor(np.triu(a) if upper else np.tril(a), requires_grad=True)
        b = gradkit.tensor(rng.standard_normal((2, 3, 2)) + 0j, requires_grad=True)
        np.testing.assert_allclose(solve_triangular(a, b, upper=upper).detach().numpy(),
                                   np.linalg.solve(a.detach().numpy(), b.detach().numpy()))

        def solve(a, b, upper=upper):
            return solve_triangular(gradkit.triu(a) if upper else gradkit.tril(a), b, upper=upper)
        assert gradkit.autograd.gradcheck(solve, (a, b), check_forward_ad=True)
        assert gradkit.autograd.gradgradcheck(solve, (a, b))


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("values", [[-0.0], [0.0, -0.0], [-0.0, -0.0, 1.5]])
def test_layer_norm_signed_zeros_as_torch(values, weighted):
    """breadth seeds 4179, 8987: torch's kernel adds a bias of 0 when none is given, so a
    normalized -0.0 comes out 0.0."""
    def program(m):
        x = m.tensor([values], dtype=m.float32)
        weight = m.ones(len(values)) if weighted else None
        return m.nn.functional.layer_norm(x, (len(values),), weight)
    assert_same_as_torch(program)


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_linear_refuses_a_weight_of_more_than_two_dims_as_torch(dtype):
    """breadth seed 9004: gradkit computed it, then failed in backward."""
    def program(m):
        x = m.ones(1, 1, 1, dtype=getattr(m, dtype))
        return m.nn.functional.linear(x, x)
    assert_same_as_torch(program)


@pytest.mark.parametrize("dtype", ["float32", "complex64"])
@pytest.mark.parametrize("value", [math.inf, -math.inf, 0.5])
def test_qr_gradients_at_an_infinite_r_to_second_order_as_torch(value, dtype):
    """breadth seeds 2341, 2425, 9414. A gradient computed as zeros is defined: the double
    backward's R gR^H is then inf * 0 = NaN in torch; only a gradient that never reached an
    output is skipped (its zeros carry gradkit's Undefined mark). trsm divides a complex
    value by an infinite pivot through its reciprocal, NaN."""
    def program(m):
        x = m.tensor([value], dtype=getattr(m, dtype), requires_grad=True)
        q, _ = m.linalg.qr(x.reshape(1, 1) + 2 * m.eye(1, dtype=x.dtype))
        g, = m.autograd.grad((q.abs() * 0.3).sum(), x, create_graph=True)
        return (g,) + m.autograd.grad((g.abs() * 0.7).sum(), x, allow_unused=True)
    assert_same_as_torch(program)


@pytest.mark.parametrize("write", ["zero_", "mul_"])
def test_a_write_through_a_view_of_a_hooked_view_bypasses_its_hook(write):
    """hooks seed 185750: torch's CopySlices sends the written view's old-value gradient
    straight to the base, past the hook of the view it was made from."""
    def program(m):
        x = m.tensor([0.5, 1.5], dtype=m.float64, requires_grad=True)
        flat = x.clone().view(-1)
        flat.register_hook(lambda g: g + 1)
        getattr(flat.select(0, 0), write)(*(() if write == "zero_" else (2,)))
        return m.autograd.grad((flat * 3).sum(), x)
    assert_same_as_torch(program)


def _write_number(m, dtype, how, value):
    x = m.zeros(2, 3, dtype=getattr(m, dtype))
    mask = m.tensor([True, False])
    if how == "mask_setitem":
        x[mask] = value
    elif how == "mask_int_setitem":
        x[mask, 1] = value
    elif how == "int_setitem":
        x[0] = value
    elif how == "list_setitem":
        x[[0, 1]] = value
    elif how == "masked_fill":
        x = x.masked_fill(mask.reshape(2, 1), value)
    elif how == "index_fill":
        x = x.index_fill(0, m.tensor([0]), value)
    else:
        x.fill_(value)
    return x


@pytest.mark.parametrize("how", ["mask_setitem", "mask_int_setitem", "int_setitem", "list_setitem",
                                 "masked_fill", "index_fill", "fill_"])
@pytest.mark.parametrize(("dtype", "value"), [
    ("int64", 1e30), ("int64", 1 + 2j), ("int64", 1 + 0j), ("uint8", 300), ("uint8", -1),
    ("uint8", -1.0), ("int8", 127.9), ("float32", 1e300), ("float32", 2 + 1j),
    ("float32", math.inf), ("bool", 2 + 1j), ("float16", 1e10), ("int32", math.nan)])
@pytest.mark.parametrize("as_tensor", [False, True], ids=["number", "tensor"])
def test_values_written_are_converted_or_refused_as_torch(how, dtype, value, as_tensor):
    """indexing seeds 139090, 191498: x[mask] = v with one element goes through torch's
    masked_fill_, which reads v.item() with a checked conversion (so do Python numbers written
    anywhere); gradkit wrote a wrapped or truncated value."""
    def program(m):
        if not as_tensor:
            return _write_number(m, dtype, how, value)
        wide = m.complex128 if isinstance(value, complex) else m.float64
        return _write_number(m, dtype, how, m.tensor(value, dtype=wide))
    assert_same_as_torch(program)


@pytest.mark.parametrize("dim", [None, 0, 1])
def test_prod_second_derivative_at_zeros_and_nan_as_torch(dim):
    """special seed 144589: with zeros, torch's prod gradient is made of exclusive cumprods
    (prod_safe_zeros_backward), whose second derivative is cumprod's; gradkit formed the
    products of the others in an n x n matrix, NaN where torch has 0."""
    def program(m):
        x = m.tensor([[math.nan, -0.0, -0.9], [-0.97, -math.inf, -0.94]], dtype=m.float64,
                     requires_grad=True)
        scale = m.tensor([0.0, math.nan, -0.0], dtype=m.float64)
        y = (scale * x).prod() if dim is None else (scale * x).prod(dim)
        g, = m.autograd.grad(y.sum(), x, create_graph=True)
        return (g,) + m.autograd.grad((g * m.tensor([0.3, -0.7, 1.1])).sum(), x)
    assert_same_as_torch(program)


def test_prod_gradients_with_zeros_are_products_of_the_others():
    """closed form: d/dx_i prod(x) = prod of the x_j, j != i (zeros included)."""
    values = np.array([2.0, 0.0, 3.0, 0.5])
    x = gradkit.tensor(values, requires_grad=True)
    g, = gradkit.autograd.grad(x.prod(), x, create_graph=True)
    expected = [np.prod(np.delete(values, i)) for i in range(4)]
    np.testing.assert_allclose(g.detach().numpy(), expected)
    assert gradkit.autograd.gradgradcheck(lambda t: t.prod(), (x,))


def test_one_to_a_complex_power_is_one_as_torch():
    """mixed seed 232351: torch fills 1 ** t with ones (even at NaN or inf); NumPy's complex
    power gives NaN there."""
    def program(m):
        z = m.tensor([complex(math.nan, 1), complex(1, math.inf), complex(math.inf, 0), 0j],
                     dtype=m.complex64, requires_grad=True)
        x = m.tensor([math.nan, 2.0], dtype=m.float64, requires_grad=True)
        y, w = 1 ** z, 1.0 ** x
        return (y, w) + m.autograd.grad((y.abs() * 0.3).sum() + w.sum(), (z, x))
    assert_same_as_torch(program)


@pytest.mark.parametrize("dim", [0, 1])
def test_complex_logsumexp_shifts_by_the_largest_real_part_as_torch(dim):
    """core seed 209808: gradkit shifted by the lexicographic complex max, which kept an
    imaginary part outside (-pi, pi]; torch's result is the principal value."""
    def program(m):
        z = m.tensor([[complex(2, -3.3), complex(0.5, 9.0)], [complex(1e3, -7), complex(-1, 40)]],
                     dtype=m.complex128, requires_grad=True)
        out = m.logsumexp(z, dim)
        return (out,) + m.autograd.grad(out.abs().sum(), z)
    assert_same_as_torch(program)


@pytest.mark.parametrize("reduce", ["amin0", "amin", "amax0"])
def test_amin_passes_torch_zero_tensor_on_at_nan(reduce):
    """special seed 209677: AminBackward0 keeps torch's efficient zero tensor (from abs's
    sgn) zero, as AmaxBackward0 does; gradkit computed NaN from a NaN minimum."""
    def program(m):
        x = m.tensor([[math.inf, 2.0], [-0.5, math.nan], [3.0, -1.0]], dtype=m.float64,
                     requires_grad=True)
        y = getattr(x, reduce[:4])(0) if reduce.endswith("0") else x.amin()
        g, = m.autograd.grad(y.abs().sum(), x, create_graph=True)
        return m.autograd.grad((g * m.tensor([[0.3, 0.2], [0.5, 0.1], [0.9, 0.4]],
                                              dtype=m.float64)).sum(), x)
    assert_same_as_torch(program)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_second_derivative_with_an_infinite_gradient_as_torch(approximate):
    """mixed seed 200031: gelu's second derivative is one expression (torch's gelu_backward
    node), so an infinite upstream gradient gives inf, not inf - inf = NaN."""
    def program(m):
        x = m.tensor([-0.3681, 2.5, -4.0], dtype=m.float64, requires_grad=True)
        g, = m.autograd.grad(m.nn.functional.gelu(x, approximate=approximate), x,
                             m.tensor([-math.inf, 0.3, 0.7], dtype=m.float64), create_graph=True)
        return (g,) + m.autograd.grad(g.sum(), x)
    assert_same_as_torch(program, rtol=1e-9)
    x = gradkit.tensor([-0.3681, 2.5, -4.0, 0.0], dtype=gradkit.float64, requires_grad=True)
    assert gradkit.autograd.gradgradcheck(
        lambda t: gradkit.nn.functional.gelu(t, approximate=approximate), (x,))


def test_in_place_between_one_element_views_of_an_expanded_scalar_as_torch():
    """edge seed 223244: NumPy's stride of a one-element dim is free (8 here, 16 there), so the
    same element looked partially overlapping; torch compares the dims that matter."""
    def program(m):
        base = m.tensor(0.5, dtype=m.float64)
        wide = base.expand(1)
        part = wide[0:1:2]
        part.mul_(wide)
        return part, base
    assert_same_as_torch(program)


def test_in_place_on_an_expanded_view_of_a_view_given_requires_grad_as_torch():
    """views seed 226865: torch refuses an in-place op on a view that requires grad whose base
    is a leaf, even when the base itself does not require grad."""
    def program(m):
        flat = m.ones(3, 3, dtype=m.float64).permute(0, 1).requires_grad_()
        return flat.expand(1, 3, 3).sigmoid_()
    assert_same_as_torch(program)


def test_requires_grad_on_a_stale_multi_output_view_is_a_no_op_as_torch():
    """views seed 272081: requires_grad_() of a tensor that requires grad reads nothing; torch
    raises only when the stale unbind output's history is used."""
    def program(m, use):
        x = m.ones(1, dtype=m.complex128, requires_grad=True)
        y = x.clone()
        first = y.unbind(0)[0]
        y.fill_(True)
        first.requires_grad_()
        if use:
            first.abs().backward()
        return m.tensor(first.requires_grad)
    assert_same_as_torch(lambda m: program(m, False))
    assert_same_as_torch(lambda m: program(m, True))


@pytest.mark.parametrize("shapes", [((2,), (2,)), ((1, 2), (3, 2)), ((2,), (3, 2)),
                                    ((2, 1, 2), (3, 2)), ((1, 0), (1, 0)), ((0, 2), (3, 2)),
                                    ((0,), (0,)), ((1, 0), (0,))])
@pytest.mark.parametrize("with_bias", [False, True])
def test_linear_of_bool_tensors_is_refused_as_torch(shapes, with_bias):
    """breadth seeds 1530, 2316 (linalg2 lane), 14143: torch's matmul kernels have no bool,
    but an empty product (no element, or nothing to sum) runs none (a 1-d dot still does)."""
    def program(m):
        x, w = (m.ones(*shape, dtype=m.bool) for shape in shapes)
        bias = m.ones(w.shape[0], dtype=m.bool) if with_bias and w.ndim == 2 else None
        return m.nn.functional.linear(x, w, bias)
    assert_same_as_torch(program)


@pytest.mark.parametrize(("values", "dtype"), [
    ([300], "uint8"), ([-5], "uint8"), ([200], "int8"), ([2 ** 63], "int64"), ([1e30], "int64"),
    ([300.7], "uint8"), ([1.5, -2.7], "int32"), ([math.nan], "int64"), ([[1, 2], [3, -4]], "int16"),
    ([True, False], "int64")])
def test_tensor_of_an_integer_dtype_checks_its_values_as_torch(values, dtype):
    """tensor(data, dtype=int): torch refuses a value out of range (a float too), wraps a
    negative integer into an unsigned type; NumPy raised or cast a float to garbage."""
    assert_same_as_torch(lambda m: m.tensor(values, dtype=getattr(m, dtype)))


@pytest.mark.parametrize("case", ["interpolate_int", "interpolate_int_1d", "soft_margin_shape",
                                  "unfold_bool", "fold_bool", "hinge_int", "hinge_uint8"])
def test_nn_functional_dtype_and_shape_corners_as_torch(case):
    """breadth seeds 108, 944, 2363, 2632 of the merged tree (the nnact and nnpool lanes)."""
    def program(m):
        f = m.nn.functional
        if case == "interpolate_int":
            return f.interpolate(m.ones(1, 1, 2, 2, dtype=m.int64), size=(3, 3))
        if case == "interpolate_int_1d":
            return f.interpolate(m.ones(1, 1, 2, dtype=m.int32), size=3)
        if case == "soft_margin_shape":
            return f.soft_margin_loss(m.ones(1, dtype=m.float64), m.ones(2, dtype=m.float64))
        if case == "unfold_bool":
            return f.unfold(m.tensor([[[[True, False, True], [False, True, True]]]]), 2,
                            padding=1)
        if case == "fold_bool":
            return f.fold(m.ones(1, 4, 4, dtype=m.bool), (3, 3), 2)
        if case == "hinge_int":
            return f.hinge_embedding_loss(m.tensor([0, 1, 0, 3, -5]), m.tensor([1, -1, -1, -1, -1]),
                                          margin=-2.5, reduction="none")
        return f.hinge_embedding_loss(m.tensor([251, 252], dtype=m.uint8), m.tensor([-1, -1]),
                                      margin=2.5, reduction="sum")
    assert_same_as_torch(program)


def test_hook_on_a_tensor_cat_skips_gets_a_plain_empty_gradient():
    """edge seed 299884: cat's backward gave the skipped 1-d empty input a Tensor in a plain
    backward, which a hook then wrapped in a second Tensor (an AttributeError)."""
    def program(m):
        x = m.zeros(0, 0, dtype=m.complex64, requires_grad=True)
        empty = m.einsum("...i,...i->...", x, x)
        empty.register_hook(lambda g: g + 1)
        return m.autograd.grad(m.cat([x, empty], -2).sum().abs(), x)
    assert_same_as_torch(program)


@pytest.mark.parametrize("case", range(9))
def test_advanced_indices_out_of_range_as_torch(case):
    """mixed seed 290015, edge seed 293020: torch checks no bound when the indexed region is
    empty (reading, writing and the gradient), and names an index tensor by its position
    among the index tensors, not by the dim it indexes."""
    def program(m):
        z = m.zeros(2, 3, 4, dtype=m.float64, requires_grad=True)
        x = m.ones(1, 1, dtype=m.float64, requires_grad=True)
        if case == 0:
            out = x[True, m.tensor([[1, 1, 1], [1, 1, 1]]), 1:]
            return (out,) + m.autograd.grad(out.sum(), x)
        if case == 1:
            y = m.zeros(1, 1, 0)
            y[m.tensor([1])] = y.clone()
            return y
        if case == 2:
            return z[:, m.tensor([0]), m.tensor([9])]
        if case == 3:
            return z[None, :, m.tensor([9])]
        if case == 4:
            return z[:, [9]]
        if case == 5:
            return m.zeros(0, 3)[m.tensor([1])]
        if case == 6:
            return m.zeros(2, 0)[m.tensor([5])]
        if case == 7:
            y = m.zeros(2, 3)
            y[:, m.tensor([7])] = m.ones(2, 1)
            return y
        return z[m.tensor([[True, False, True], [True, True, True]]), m.tensor([7])]
    assert_same_as_torch(program)


def test_power_false_differentiates_as_power_zero_unlike_torch():
    """dtypes seed 295723, a documented difference (docs/numerics.md): d(x ** False)/dx is 0;
    torch computes 0 * x ** -1, NaN at x = 0."""
    x = gradkit.tensor([0.0, 2.0], requires_grad=True)
    (x ** False).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0])
    t = torch.tensor([0.0, 2.0], requires_grad=True)
    (t ** False).sum().backward()
    assert math.isnan(t.grad[0])  # the difference documented


@pytest.mark.parametrize(("shape", "dim", "index"), [
    ((0, 0, 2), -1, [-2, -2, 1]), ((0, 3), 1, [5]), ((0, 3), 0, [0]), ((2, 3), 1, [0, 2, 2]),
    ((2, 0, 3), 0, [9])])
def test_index_add_and_index_select_of_empty_tensors_as_torch(shape, dim, index):
    """breadth seed 7849: torch's index_add checks no index for an empty self, and its
    backward reads the source's gradient with index_select, whose kernel for an empty tensor
    is the "INDICES element" one."""
    def program(m):
        x = m.zeros(*shape, dtype=m.float64, requires_grad=True)
        source_shape = list(shape)
        source_shape[dim] = len(index)
        source = m.ones(*source_shape, dtype=m.float64, requires_grad=True)
        out = x.index_add(dim, m.tensor(index), source, alpha=2)
        return (out,) + m.autograd.grad(out.sum(), (x, source))
    assert_same_as_torch(program)
    assert_same_as_torch(lambda m: m.zeros(*shape).index_select(dim, m.tensor([9])))


@pytest.mark.parametrize("dtype", ["int64", "uint8", "bool"])
def test_max_pool1d_with_indices_takes_integers_as_torch(dtype):
    """breadth seed 6599: with indices, torch's max_pool1d runs max_pool2d's kernel, which
    takes integers (not bool)."""
    def program(m):
        x = m.tensor([[[3, 1, 2, 5]]]).to(getattr(m, dtype))
        return m.nn.functional.max_pool1d(x, 2, return_indices=True)
    assert_same_as_torch(program)


def test_copy_from_a_view_differing_in_a_one_element_dim_stride_unlike_torch():
    """hooks seed 109190, a documented difference (docs/numerics.md): x[:, 0:1:2] of a (2, 1)
    x holds x's elements; torch refuses copying it into x (the one-element dim's stride
    differs), gradkit compares the strides of the other dims only (NumPy does not keep
    torch's one-element strides) and copies."""
    x = gradkit.ones(2, 1, dtype=gradkit.complex128, requires_grad=True).clone()
    x.copy_(x[:, 0:1:2])
    np.testing.assert_array_equal(x.detach().numpy(), np.ones((2, 1)))
    t = torch.ones(2, 1, dtype=torch.complex128, requires_grad=True).clone()
    with pytest.raises(RuntimeError, match="refer to a single memory location"):
        t.copy_(t[:, 0:1:2])


def test_in_place_between_views_differing_in_one_element_dims_as_torch():
    """views seeds 84993, 47089: NumPy gives x[0, None] a 0 stride where torch gives 2, and a
    one-element slice of an expanded tensor its own stride; torch finds the same elements."""
    def add_into_unsqueezed(m):
        x = m.ones(1, 2, requires_grad=True).clone()
        view = x[0, None]
        view += x
        return view
    def write_expanded_into_itself(m):
        x = m.ones(1, 1, requires_grad=True).clone()
        wide = x.expand(1, 3)
        flat = wide.view(-1)
        flat[1:2] = wide[..., :1]
        return flat
    assert_same_as_torch(add_into_unsqueezed)
    assert_same_as_torch(write_expanded_into_itself)


def test_view_as_real_gradient_through_a_transposed_write_as_torch():
    """views seed 135937: the gradient of a (1, 2) view NumPy flags contiguous with a stride
    that is not torch's: view_as_complex needs torch's contiguous() strides."""
    def program(m):
        x = m.tensor([1 + 2j], dtype=m.complex64, requires_grad=True)
        y = x.clone()
        pairs = m.view_as_real(y)
        pairs.t().fill_(2)
        return m.autograd.grad(y.abs().sum() + (pairs * 0.5).sum(), x)
    assert_same_as_torch(program)


@pytest.mark.parametrize("value", [math.inf, 0.3, -2.0, 25.0])
def test_softplus_second_derivative_with_an_infinite_factor_as_torch(value):
    """mixed seed 193599: torch's softplus_double_backward is s (1 - s) beta below the
    threshold, in one expression: an infinite upstream gradient at s = 1 gives NaN."""
    def program(m):
        x = m.tensor([value], dtype=m.float64, requires_grad=True)
        y = x * m.nn.functional.softplus(x, beta=1.5)
        g, = m.autograd.grad(y.sum(), x, create_graph=True)
        return (g,) + m.autograd.grad(g.sum() * 0.3, x)
    assert_same_as_torch(program, rtol=1e-9)


def test_true_to_a_power_is_not_filled_with_ones_as_torch():
    """mixed seed 134727: torch fills 1 ** t with ones, but not True ** t (a bool Scalar is
    not equal to 1.0 there), so True ** nan is NaN for complex t."""
    def program(m):
        z = m.tensor([complex(math.nan, 1), 2 + 1j], dtype=m.complex128, requires_grad=True)
        y = True ** z
        return (y,) + m.autograd.grad(y.abs().sum(), z)
    assert_same_as_torch(program)


def test_multi_margin_loss_of_an_empty_batch_takes_any_target_dtype_as_torch():
    """breadth seeds 3551, 6273: torch's kernel reads no dtype of an empty target. (Its "sum"
    and "mean" of an empty batch are uninitialized memory: only their dtype is compared.)"""
    assert_same_as_torch(lambda m: m.nn.functional.multi_margin_loss(
        m.ones(0, 2, dtype=m.float64), m.tensor([]), reduction="none"))
    for reduction in ("sum", "mean"):
        losses = [m.nn.functional.multi_margin_loss(m.ones(0, 2, dtype=m.float64), m.tensor([]),
                                                    reduction=reduction) for m in (torch, gradkit)]
        assert [str(t.dtype).split(".")[-1] for t in losses] == ["float64", "float64"]


def test_pixel_unshuffle_of_an_empty_tensor_has_the_op_shape_unlike_torch():
    """breadth seeds 2532, 6142, a documented difference (docs/numerics.md): torch 2.13
    returns an empty input unchanged; gradkit gives the shape the op defines."""
    x = gradkit.ones(0, 1, 2, 2, requires_grad=True)
    out = gradkit.nn.functional.pixel_unshuffle(x, 2)
    assert tuple(out.shape) == (0, 4, 1, 1)
    assert tuple(gradkit.autograd.grad(out.sum(), x)[0].shape) == (0, 1, 2, 2)
    assert tuple(torch.nn.functional.pixel_unshuffle(torch.ones(0, 1, 2, 2), 2).shape) == \
        (0, 1, 2, 2)  # the difference documented


def test_sigmoid_second_derivative_through_a_product_as_torch():
    """mixed seed 334135: sigmoid's derivative is an op whose derivative is torch's
    SigmoidBackwardBackward (1 - 2 out in one expression)."""
    def program(m):
        x = m.tensor([[-40.0, -math.inf, 0.3, math.inf]], dtype=m.float64, requires_grad=True)
        y = x * m.sigmoid(x.t()).t()
        g, = m.autograd.grad(y.sum(), x, create_graph=True)
        return (g,) + m.autograd.grad((g * 0.7).sum(), x)
    assert_same_as_torch(program, rtol=1e-9)
    x = gradkit.tensor([0.3, -2.0, 4.0], dtype=gradkit.float64, requires_grad=True)
    assert gradkit.autograd.gradgradcheck(gradkit.sigmoid, (x,))


_FMA_CASES = {  # torch's kernels round a * b + c once (a fused multiply-add)
    "add_alpha": lambda m, a, b, c: m.add(a, b, alpha=0.3),
    "sub_alpha": lambda m, a, b, c: m.sub(a, b, alpha=-1.7),
    "sub_scalar_alpha": lambda m, a, b, c: m.sub(a, 2.5, alpha=0.1),
    "add_inplace_step": lambda m, a, b, c: a.clone().add_(b, alpha=-0.01),
    "addcmul": lambda m, a, b, c: m.addcmul(a, b, c, value=0.3),
    "addcmul_one": lambda m, a, b, c: m.addcmul(a, b, c),
    "lerp_scalar": lambda m, a, b, c: m.lerp(a, b, 0.3),
    "lerp_high_weight": lambda m, a, b, c: m.lerp(a, b, 0.8),
    "lerp_tensor": lambda m, a, b, c: m.lerp(a, b, c.abs() % 1),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", sorted(_FMA_CASES))
def test_multiply_add_kernels_give_torchs_bits(case, dtype):
    """add/sub with alpha, addcmul and lerp: every bit as torch's (found by comparing 1000
    random elements; plain a * b + c differed in about a quarter of them)."""
    values = np.random.default_rng(7).standard_normal((3, 257)).astype(dtype)
    got, expected = (
        _FMA_CASES[case](m, *(m.tensor(v) for v in values)).numpy() for m in (gradkit, torch))
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("alpha", [0, 0.0, -0.0, 2, -1.5])
def test_sub_and_rsub_are_add_with_minus_alpha_at_signed_zeros(alpha):
    """torch's sub is add(x, y, -alpha): -0.0 - 0 * -0.0 is -0.0 (breadth seeds 1087, 2885)."""
    def program(m):
        z = m.tensor([-0.0, 0.0, -0.0], dtype=m.float32)
        w = m.tensor([-0.0, -0.0, 0.0], dtype=m.float32)
        return m.sub(z, w, alpha=alpha), m.rsub(z, w, alpha=alpha), m.sub(w, z, alpha=alpha)
    assert_same_as_torch(program)


def test_zero_sum_of_products_sign_follows_the_blas_accumulator():
    """Documented difference (breadth seed 830, conv1d by -0.0 weights): torch's own kernels
    give a zero sum of products either sign, by shape, so no rule can follow them; values
    agree as numbers."""
    def products(m):
        row, column = m.full((1, 1), -0.0), m.full((1, 2), 0.5)
        tall, wide = m.full((2, 1), -0.0), m.full((1, 3), 0.5)
        conv = m.nn.functional.conv1d(m.full((1, 1, 3), 0.3), m.full((2, 1, 1), -0.0))
        return (row @ column).numpy(), (tall @ wide).numpy(), conv.numpy()
    theirs, ours = products(torch), products(gradkit)
    assert [bool(np.signbit(t).all()) for t in theirs] == [False, True, True]  # torch: by shape
    assert not np.signbit(ours[2]).any()  # gradkit's convolution: NumPy's einsum
    for o, t in zip(ours, theirs):
        np.testing.assert_array_equal(o, t)  # equal as numbers: -0.0 == 0.0


@pytest.mark.parametrize("scalars", [{"beta": 0.5, "alpha": 0}, {"beta": 1, "alpha": 0.5},
                                     {"alpha": 1j}, {"beta": True, "alpha": True}, {"beta": 2}])
def test_addr_of_bool_refuses_floating_scalars(scalars):
    """bool counts as integral for addr's beta and alpha (breadth seed 14081)."""
    def program(m):
        v = m.tensor([True, False])
        return m.addr(m.ones(2, 2, dtype=m.bool), v, v, **scalars)
    assert_same_as_torch(program)


@pytest.mark.parametrize("dtype", ["int64", "bool", "uint8", "complex64", "float64"])
@pytest.mark.parametrize("shape", [(3, 0), (0, 0), (2, 0, 0)])
@pytest.mark.parametrize("p", [-2, None, 1, "fro", "nuc"])
def test_cond_of_empty_matrices_is_zeros_of_the_real_dtype(dtype, shape, p):
    """torch returns zeros of x's real dtype for an empty x, before checking that it is
    square (but after that check for "fro" and "nuc"); breadth seed 50."""
    assert_same_as_torch(lambda m: m.linalg.cond(m.zeros(shape, dtype=getattr(m, dtype)), p))


def test_corrcoef_of_equal_values_is_one_or_nan_as_they_round():
    """Documented: corrcoef of a variable equal but for rounding is c / c for a variance of
    noise, so values a few ulp apart (lgamma's, breadth seed 2529) flip it between NaN and 1;
    for the same input gradkit gives torch's."""
    def corrcoefs(m):
        return [m.corrcoef(m.full((3,), v, dtype=m.float64)).item()
                for v in (1.7195033350083442, 1.7195033350083455)]
    theirs, ours = corrcoefs(torch), corrcoefs(gradkit)
    assert math.isnan(theirs[0]) and theirs[1] == 1.0  # a 6-ulp change of the input flips it
    assert math.isnan(ours[0]) and ours[1] == 1.0


@pytest.mark.parametrize("dtypes", [("complex128", "complex128", "float64"),
                                    ("float64", "complex128", "complex128"),
                                    ("complex128", "float64", "float64"),
                                    ("float32", "float32", "float32")])
@pytest.mark.parametrize("batches", [0, 2])
def test_addbmm_of_no_batch_compares_no_dtypes(dtypes, batches):
    """torch's addbmm over an empty batch sums nothing in self's dtype and checks no dtypes
    (breadth seed 1046); with batches it refuses mixed dtypes."""
    def program(m):
        x, a, b = (m.ones(shape, dtype=getattr(m, d), requires_grad=True) for shape, d in
                   zip(((2, 3), (batches, 2, 4), (batches, 4, 3)), dtypes))
        out = m.addbmm(x, a, b, beta=0.5, alpha=2)
        if dtypes[0] != dtypes[2] and dtypes[0] == "complex128":  # torch's backward trips its
            return out                                            # own internal assert here
        return (out,) + m.autograd.grad(out.abs().sum(), (x, a, b))
    assert_same_as_torch(program)


_SPECIAL_COMPLEX = [complex(a, b) for a in (0.0, -0.0, 1.5, math.inf, -math.inf, math.nan)
                    for b in (0.0, -0.0, 0.7, math.inf, math.nan)]


@pytest.mark.parametrize("dtype", ["complex128", "complex64"])
@pytest.mark.parametrize("exponent", [-3, -4, 4, 5, -1.5, 2.5, 1j, math.inf, -math.inf])
def test_complex_power_by_a_number_at_zero_and_infinity_is_cpow(exponent, dtype):
    """torch's complex x ** number is C's cpow, exp(y log x), except the powers it multiplies
    out (2, 3, -2) or maps to sqrt/reciprocal: inf ** -3 is 0 where NumPy's repeated product
    gives NaN (seed 411077: the second derivative of x ** -1 at -inf); complex64 stays
    complex64 (seed 537739)."""
    def program(m):
        x = m.tensor(_SPECIAL_COMPLEX, dtype=getattr(m, dtype))
        keep = ~m.isfinite(x) | (x == 0)
        return (x ** exponent)[keep]
    assert_same_as_torch(program)


def test_second_derivative_of_complex_reciprocal_at_infinity():
    def program(m):
        x = m.tensor([-math.inf + 0j, math.inf + 0j, 0.5 - 0.2j], dtype=m.complex128,
                     requires_grad=True)
        g, = m.autograd.grad((x ** -1).abs().sum(), x, create_graph=True)
        return m.autograd.grad(g.abs().sum(), x)
    assert_same_as_torch(program)


def test_cast_to_uint8_keeps_the_low_bits_of_a_one_ulp_exp():
    """Documented (main seed 419371): float32 exp(20) is one ulp apart in NumPy and torch's
    SLEEF kernel, and a cast to uint8 keeps the low bits of either, as C's cast does."""
    results = []
    for m in (torch, gradkit):
        big = m.exp(m.tensor([20.0]))
        results.append((int(big.item()), int(big.to(m.uint8).item())))
    for value, low_bits in results:
        assert low_bits == value % 256
    assert abs(results[0][0] - results[1][0]) <= 32  # one float32 ulp at 4.9e8


def test_split_output_made_a_leaf_survives_a_write_into_its_base():
    """A split output of a base that does not require grad, made to require grad itself,
    keeps grad_fn None after a write into the base: torch regenerates (and refuses) only a
    view with history or a base that requires grad (views seed 430529)."""
    def program(m):
        base = m.ones((1, 3), dtype=m.float64)
        view = m.split(base, 1, dim=-2)[0]
        view.requires_grad_()
        base.tanh_()
        (view.sum() * 2).backward()
        return view.grad, base
    assert_same_as_torch(program)


def test_view_as_complex_ignores_a_one_element_dims_stride():
    """A transposed (2, 1) tensor is (1, 2) with an odd stride in its one-element dim: torch
    takes it (views seed 471889)."""
    def program(m):
        x = m.tensor([[1.0], [2.0]], requires_grad=True)
        z = m.view_as_complex(x.transpose(1, 0))
        return (m.view_as_real(z),) + m.autograd.grad(z.abs().sum(), x)
    assert_same_as_torch(program)


@pytest.mark.parametrize("dtype", ["int64", "bool", "float32"])
@pytest.mark.parametrize("case", [
    lambda m, x: m.nn.functional.adaptive_avg_pool2d(x.reshape(0, 1, 2, 2), (4, 1)),
    lambda m, x: m.nn.functional.adaptive_avg_pool1d(x.reshape(0, 2, 2), 3),
    lambda m, x: m.nn.functional.adaptive_avg_pool3d(x.reshape(0, 1, 2, 1, 2), 2),
    lambda m, x: m.chain_matmul(x.reshape(1, 0), x.reshape(0, 1), m.zeros(1, 1, dtype=x.dtype)),
], ids=["adaptive2d", "adaptive1d", "adaptive3d", "chain_matmul"])
def test_empty_integer_inputs_where_torch_skips_its_dtype_check(case, dtype):
    """torch's adaptive_avg_pool1d/2d of an empty input, and chain_matmul (multi_dot: an empty
    factor gives zeros), check no dtype (breadth seeds 4207, 10604)."""
    def program(m):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # chain_matmul is deprecated in both
            return case(m, m.zeros(0, dtype=getattr(m, dtype)))
    assert_same_as_torch(program)


def test_multi_margin_loss_of_an_empty_batch():
    """Documented (breadth seed 4536): gradkit gives 0 summed and NaN averaged; torch's
    kernel returns its uninitialized output, so only its shape and dtype are compared."""
    for reduction, expected in (("sum", 0.0), ("mean", math.nan)):
        results = [m.nn.functional.multi_margin_loss(m.zeros(0, 3), m.zeros(0, dtype=m.int64),
                                                     reduction=reduction) for m in (gradkit, torch)]
        ours, theirs = results
        assert ours.shape == theirs.shape == () and str(ours.dtype)[-7:] == str(theirs.dtype)[-7:]
        assert ours.item() == expected or math.isnan(ours.item()) and math.isnan(expected)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64"])
@pytest.mark.parametrize("beta,alpha", [(1, 1), (0, 1), (-2, 2.5), (0.5, 0)])
def test_addr_multiplies_alpha_vec1_vec2_in_torchs_order(dtype, beta, alpha):
    """torch's addr kernel is beta * input + alpha * vec1 * vec2, left to right, even for a
    factor 1: at infinities (breadth seed 8254: -inf - inf j, not NaN) and in the last bit."""
    values = [0.0, -0.0, 1.5, -2.0, math.inf, -math.inf, math.nan, 0.3]
    def program(m):
        x = m.tensor([values[:4], values[4:]] * 2, dtype=getattr(m, dtype))
        vec1 = m.tensor(values[::-1][:4], dtype=getattr(m, dtype))
        vec1 = vec1 * (1 - 0.5j) if "complex" in dtype else vec1
        vec2 = m.tensor(values, dtype=getattr(m, dtype))[[0, 4, 7, 2]]
        return m.addr(x, vec1, vec2, beta=beta, alpha=alpha)
    assert_same_as_torch(program, rtol=0)


@pytest.mark.parametrize("values", [[1.0, -2.0, 0.0, math.nan], [1 + 1j, 0j, -2j, math.inf]])
def test_angle_backward_is_zero_for_reals_and_at_zero_whatever_the_gradient(values):
    """torch's angle_backward: zeros_like(x) for a real x, and where(x == 0, 0, ...) for a
    complex one, so a NaN gradient stops there (breadth seed 9286, via cov's NaN)."""
    def program(m):
        x = m.tensor(values, requires_grad=True)
        a = x.angle()
        return m.autograd.grad(a, x, m.full(a.shape, math.nan, dtype=a.dtype))
    assert_same_as_torch(program)


@pytest.mark.parametrize("activation", ["elu", "selu", "celu"])
def test_elu_second_derivative_masks_by_multiplying(activation):
    """torch's elu_double_backward multiplies by (x < 0): a NaN upstream stays NaN at a NaN
    input (breadth seed 5838: an inf-norm's NaN element, then elu, twice differentiated)."""
    def program(m):
        x = m.tensor([-1.0, 0.0, 2.0, math.nan, -math.inf, math.inf], dtype=m.float64,
                     requires_grad=True)
        g, = m.autograd.grad(getattr(m.nn.functional, activation)(x).sum(), x,
                             create_graph=True)
        weights = m.tensor([1.0, 2.0, math.nan, math.nan, 5.0, 6.0], dtype=m.float64)
        return (g,) + m.autograd.grad((g * weights).sum(), x)
    assert_same_as_torch(program)


def test_inf_norm_then_elu_twice_differentiated_spreads_nan_as_torch():
    def program(m):
        x = m.tensor([[0.3 + 0.1j, -0.5j], [complex(math.nan, 0), 0.2j]], requires_grad=True)
        g, = m.autograd.grad(m.nn.functional.elu(m.linalg.vector_norm(x, ord=math.inf)), x,
                             create_graph=True)
        return m.autograd.grad(g.abs().sum(), x)
    assert_same_as_torch(program)


def test_complex_inf_renorm_gradients_are_finite_where_torchs_are_nan():
    """Documented (breadth seed 11017): torch's renorm backward for a complex64 input and
    p=inf compares float |x| with a double-accumulated norm and divides by a zero count."""
    def grads(m):
        x = m.tensor([[0.3 + 0.7j, -1.7 + 0.1j], [2.2 - 0.9j, 0.4j]], dtype=m.complex64,
                     requires_grad=True)
        return m.autograd.grad(m.renorm(x, math.inf, 0, 0.5).abs().sum(), x)[0].numpy()
    ours, theirs = grads(gradkit), grads(torch)
    assert np.isnan(theirs).all() and np.isfinite(ours).all()
    x = np.array([[0.3 + 0.7j, -1.7 + 0.1j], [2.2 - 0.9j, 0.4j]])  # ours: float64's, rounded
    expected = _renorm_inf_grads_float64(x)  # torch in complex128: its mask finds the max
    np.testing.assert_allclose(ours, expected, rtol=1e-5, atol=1e-6)


def _renorm_inf_grads_float64(x):
    t = torch.tensor(x, requires_grad=True)
    return torch.autograd.grad(torch.renorm(t, math.inf, 0, 0.5).abs().sum(), t)[0].numpy()


def test_cross_of_itself_is_rounding_noise_in_both():
    """Documented (breadth seed 6309): cross(v, v) of an FFT's output is rounding noise in
    torch and here, from inputs one rounding apart, so gradients through it are noise too."""
    values = np.random.default_rng(3).standard_normal((3, 1, 3))
    crosses = []
    for m in (gradkit, torch):
        v = m.fft.hfft2(m.tensor(values), s=(1, 4), dim=(0, 1))
        crosses.append(m.linalg.cross(v, v, dim=-1).numpy())
    for c in crosses:
        assert np.abs(c).max() < 1e-14 * (1 + np.abs(values).max()) ** 2


@pytest.mark.parametrize("loss", ["mean", "mse_loss", "l1_loss", "binary_cross_entropy"])
def test_mean_over_nothing_is_a_silent_nan(loss):
    """torch's mean of an empty tensor (and the mean-reduced losses) is NaN without a
    warning; NumPy's warns twice (multi_margin_loss: see its documented test above)."""
    def program(m):
        x = m.zeros(0)
        return x.mean() if loss == "mean" else getattr(m.nn.functional, loss)(x, m.zeros(0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_same_as_torch(program)


def test_a_second_write_into_the_base_of_a_split_output_raises_only_at_backward():
    """An unbind/split output made unusable by a write into its base stays so through a
    second write; torch raises only when the stale view's history is needed (seed 525961)."""
    def program(m):
        base = m.tensor([0.5], dtype=m.float64, requires_grad=True).clone()
        parts = m.unbind(base)
        base.zero_()
        base.exp_()  # gradkit raised here
        return base.detach(), parts[0].detach()
    assert_same_as_torch(program)

    def backward(m):
        base = m.tensor([0.5], dtype=m.float64, requires_grad=True).clone()
        parts = m.unbind(base)
        base.zero_()
        base.exp_()
        return m.autograd.grad(base.sum() + parts[0], base)
    assert_same_as_torch(backward)  # both raise here


def test_retain_grad_of_a_view_made_stale_by_a_write_into_its_base():
    """Documented (indexing seed 530490): torch ignores retain_grad() of such a view until
    its grad_fn was read; gradkit retains it, as torch does once grad_fn was read."""
    def retained(m, touch):
        base, value = m.tensor([1.0, 2.0, 3.0]), m.tensor(5.0, requires_grad=True)
        view = base[-1]
        base[1] = value * 1
        if touch:
            view.grad_fn  # noqa: B018 - reading it regenerates the view's history in torch
        view.retain_grad()
        m.autograd.grad((base * 3).sum() + view * 2, value)
        return view.grad
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns reading .grad of a "non-leaf"
        assert retained(torch, False) is None and retained(torch, True).item() == 2.0
    assert retained(gradkit, False).item() == retained(gradkit, True).item() == 2.0


@pytest.mark.parametrize("write", ["div_", "mul_", "pow_"])
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_saved_input_of_a_write_into_a_hooked_view_keeps_the_hook(write, dtype):
    """A write into a view with a tensor hook bypasses the hook in backward (CopySlices), but
    what the op saved of the view's old value differentiates through the hooked node in
    double backward, as torch's original_self clone (hooks seed 520358)."""
    def program(m):
        x = m.tensor(0.3 + 0.2j if "complex" in dtype else 0.3, dtype=getattr(m, dtype),
                     requires_grad=True)
        y = m.tensor(0.7 - 0.4j if "complex" in dtype else 0.7, dtype=getattr(m, dtype),
                     requires_grad=True)
        base = x.clone()
        view = base.t()
        view.register_hook(lambda g: g * 2)
        getattr(view, write)(y)
        loss = (base * 0.5 + view * 1.5).abs()
        gx, gy = m.autograd.grad(loss, (x, y), create_graph=True)
        return (gx, gy) + m.autograd.grad((gx * 0.3 + gy * 0.9).abs(), (x, y))
    assert_same_as_torch(program)


@pytest.mark.parametrize("dtype", ["int16", "int64", "bool"])
def test_a_tracked_value_written_into_an_integer_split_output_records_nothing(dtype):
    """An integer multi-output view written with a value that requires grad: torch records
    nothing, so it refuses nothing (mixed seed 551591)."""
    def program(m):
        value = m.tensor(1.5, dtype=m.float64, requires_grad=True)
        ints = m.tensor([3, 4], dtype=getattr(m, dtype))
        part = ints.unbind(0)[0]
        part.copy_(value)
        return part, ints
    assert_same_as_torch(program)

# -- lane fuzznn: the nn.functional ops merged without fuzz draws ("nn_new seed N" replays with
# run_fuzz.py --classes nn_new --programs 1 --start N; the breadth class draws them too) --

def _fuzznn_ctc(m, targets, target_lengths, reduction):
    log_probs = m.tensor([[[0.1, 0.7, 0.2], [0.5, 0.3, 0.2]], [[0.2, 0.2, 0.6], [0.3, 0.3, 0.4]]],
                         dtype=m.float64).log().requires_grad_()
    loss = m.nn.functional.ctc_loss(log_probs, m.tensor(targets), m.tensor([2, 2]),
                                    m.tensor(target_lengths), reduction=reduction)
    return (loss,) + m.autograd.grad(loss.sum(), log_probs)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_fuzznn_ctc_loss_of_an_empty_target_counts_its_one_state_once(reduction):
    """An empty target has one state (the blank): its loss is -log p(all blank), not that
    minus log 2, and its backward ran over a state of two (nn_new seeds 16, 132, 211)."""
    assert_same_as_torch(lambda m: _fuzznn_ctc(m, [[2], [1]], [1, 0], reduction))
    assert_same_as_torch(lambda m: _fuzznn_ctc(m, [[1], [2]], [0, 0], reduction))


def test_fuzznn_ctc_loss_of_an_unbatched_empty_target():
    def program(m):
        log_probs = m.full((2, 4), 0.25, dtype=m.float64).log()
        return m.nn.functional.ctc_loss(log_probs, m.tensor([], dtype=m.int64), m.tensor(2),
                                        m.tensor(0), blank=3)
    assert_same_as_torch(program)


def _fuzznn_grid(m, grid, mode, padding_mode, image=(1.0, 2.0, 3.0, 4.0, 5.0, 6.0),
                 align_corners=False):
    img = m.tensor(image, dtype=m.float64).reshape(1, 1, 2, 3).requires_grad_()
    points = m.tensor(grid, dtype=m.float64).reshape(1, 1, -1, 2).requires_grad_()
    out = m.nn.functional.grid_sample(img, points, mode=mode, padding_mode=padding_mode,
                                      align_corners=align_corners)
    return (out,) + m.autograd.grad((out * 1).nan_to_num().sum(), (img, points),
                                    allow_unused=True)


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
def test_fuzznn_grid_sample_at_non_finite_points(mode):
    """A NaN or infinite point of grid_sample (zeros padding): torch's bilinear kernel weights
    the masked read, so the point is NaN and passes no gradient to the image; gradkit indexed
    the input with the NaN cast to an integer (nn_new seeds 8, 11)."""
    grid = [math.nan, 0.3, 0.3, math.inf, -math.inf, -0.9, 0.3, -0.5, 2.5, 0.0]
    assert_same_as_torch(lambda m: _fuzznn_grid(m, grid, mode, "zeros"))


def test_fuzznn_grid_sample_border_reads_an_infinite_pixel():
    """An outside corner reads 0 before it is weighted (the NaN-safe order above must not
    make 0 * inf of an infinite pixel at the border)."""
    assert_same_as_torch(lambda m: _fuzznn_grid(
        m, [1.0, 1.0, -0.2, 0.4], "bilinear", "border", image=(math.inf,) * 6,
        align_corners=True))


def test_fuzznn_grid_sample_nearest_keeps_a_negative_zero():
    """nearest grid_sample of a -0.0 pixel is -0.0 (nn_new seed 463)."""
    assert_same_as_torch(lambda m: _fuzznn_grid(m, [0.1, 0.1, -0.7, -0.6], "nearest", "zeros",
                                                image=(-0.0,) * 6))


def _fuzznn_bag(m, weight_value, **kwargs):
    weight = m.full((2, 2), weight_value, requires_grad=True)
    psw = m.tensor([0.7, 0.2], requires_grad=True)
    out = m.nn.functional.embedding_bag(m.tensor([0, 1]), weight, m.tensor([0, 1]), mode="sum",
                                        per_sample_weights=psw, **kwargs)
    return (out,) + m.autograd.grad((out * m.tensor([0.3, 0.5])).sum(), (weight, psw))


@pytest.mark.parametrize("value", [math.inf, 0.5])
def test_fuzznn_embedding_bag_padding_entry_per_sample_weight_gradient(value):
    """A padding entry's per-sample weight gets gradient 0, not 0 * its infinite embedding
    (nn_new seed 761)."""
    assert_same_as_torch(lambda m: _fuzznn_bag(m, value, padding_idx=0))


@pytest.mark.parametrize("indices, offsets", [([0], [0, 0]), ([], [0, 0]), ([1, 1], [0])])
def test_fuzznn_embedding_bag_of_padding_or_empty_bags_requires_grad(indices, offsets):
    """A bag of padding entries only, or an empty bag, is zeros that require grad as torch's
    (nn_new seeds 7, 135)."""
    def program(m):
        weight = m.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=m.float64, requires_grad=True)
        out = m.nn.functional.embedding_bag(m.tensor(indices, dtype=m.int64), weight,
                                            m.tensor(offsets), mode="mean", padding_idx=1)
        assert out.requires_grad
        return (out,) + m.autograd.grad(out.sum(), weight, allow_unused=True,
                                        materialize_grads=True)
    assert_same_as_torch(program)


@pytest.mark.parametrize("weight_dtype, psw_dtype", [
    ("int64", None), ("int32", None), ("complex64", None), ("float32", "float64")])
def test_fuzznn_embedding_bag_refuses_torchs_dtypes(weight_dtype, psw_dtype):
    """torch's checks of the weight's and per_sample_weights' dtypes (nn_new seed 108)."""
    def program(m):
        psw = None if psw_dtype is None else m.ones(1, dtype=getattr(m, psw_dtype))
        return m.nn.functional.embedding_bag(
            m.tensor([0]), m.ones(2, 2, dtype=getattr(m, weight_dtype)), m.tensor([0]),
            mode="sum", per_sample_weights=psw)
    assert_same_as_torch(program)


@pytest.mark.parametrize("dtypes, requires_grad", [
    (("float32", "float32", "float32", "float64"), False),
    (("float32", "float64", "float32", None), False),
    (("complex64",) * 3 + ("float64",), False),
    (("complex64",) * 3 + (None,), True),
    (("complex128",) * 4, False),
    (("complex128",) * 4, True),
])
def test_fuzznn_bilinear_dtype_checks(dtypes, requires_grad):
    """bilinear wants one dtype for all its tensors, and torch's _trilinear refuses to
    differentiate a complex result (nn_new seeds 9, 151, 195)."""
    def program(m):
        shapes = ((2, 3), (2, 2), (1, 3, 2), (1,))
        made = [None if d is None else m.ones(s, dtype=getattr(m, d))
                for s, d in zip(shapes, dtypes)]
        made[0].requires_grad_(requires_grad)
        return m.nn.functional.bilinear(*made)
    assert_same_as_torch(program)


@pytest.mark.parametrize("dtype", ["int64", "int32", "bool"])
@pytest.mark.parametrize("d", [1, 2])
def test_fuzznn_max_unpool_refuses_integer_input(dtype, d):
    """max_unpool has no integer or bool kernel in torch; an empty input is not checked
    (nn_new seeds 149, 157)."""
    def program(m, shape):
        x = m.zeros(shape, dtype=getattr(m, dtype))
        unpool = getattr(m.nn.functional, f"max_unpool{d}d")
        return unpool(x, m.zeros(shape, dtype=m.int64), 2)
    assert_same_as_torch(lambda m: program(m, (1, 1) + (1,) * d))
    assert_same_as_torch(lambda m: program(m, (0, 1) + (1,) * d))


def test_fuzznn_max_unpool_backward_of_an_empty_batch():
    """The backward of max_unpool2d over an empty batch (nn_new seed 357)."""
    def program(m):
        x = m.zeros((0, 1, 2, 2), requires_grad=True)
        pooled, indices = m.nn.functional.max_pool2d(x, 2, padding=1, return_indices=True)
        out = m.nn.functional.max_unpool2d(pooled, indices, 2, padding=1)
        return (out,) + m.autograd.grad(out.sum(), x)
    assert_same_as_torch(program)


@pytest.mark.parametrize("name", ["dropout2d", "dropout3d", "feature_alpha_dropout",
                                  "alpha_dropout", "dropout1d"])
@pytest.mark.parametrize("shape", [(), (3,), (2, 3)])
def test_fuzznn_feature_dropout_p1_zeroes_any_rank(name, shape):
    """dropout with p = 1 multiplies by zero before the feature-dropout rank check (fuzznn
    seeds 176, 244)."""
    def program(m):
        x = m.full(shape, -2.0, requires_grad=True)
        out = getattr(m.nn.functional, name)(x, 1.0, True)
        return (out,) + m.autograd.grad(out.sum(), x)
    assert_same_as_torch(program)


def _fuzznn_bag_mean(m, weight):
    return m.nn.functional.embedding_bag(m.tensor([0, 1, 1]), weight, m.tensor([0, 2]),
                                         mode="mean")


def _fuzznn_attention(m, q):
    e = q.shape[-1]
    w = m.linspace(-1, 1, 3 * e * e, dtype=q.dtype).reshape(3 * e, e)
    out, _ = m.nn.functional.multi_head_attention_forward(
        q, q * 0.5, q.sin(), e, 2, w, None, None, None, False, 0.0, w[:e], None,
        need_weights=False)
    return out


@pytest.mark.parametrize("fn, shape, kernel", [
    (_fuzznn_bag_mean, (2, 3), "_embedding_bag_backward"),
    (_fuzznn_attention, (3, 1, 4), "_scaled_dot_product_flash_attention_for_cpu_backward"),
], ids=["embedding_bag", "multi_head_attention"])
def test_fuzznn_second_derivative_where_torchs_kernel_has_none(fn, shape, kernel):
    """Documented (docs/numerics.md; nn_new seeds 161, 184, 308): torch's fused kernels have
    no second derivative; gradkit's composed ops do (gradgradcheck), and first derivatives
    agree."""
    values = np.linspace(-1.0, 1.0, int(np.prod(shape))).reshape(shape)
    firsts = []
    for m in (torch, gradkit):
        x = m.tensor(values, dtype=m.float64, requires_grad=True)
        g, = m.autograd.grad((fn(m, x) ** 2).sum(), x, create_graph=True)
        firsts.append(g.detach().numpy())
        if m is torch:
            with pytest.raises((RuntimeError, NotImplementedError), match=kernel):
                torch.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(firsts[1], firsts[0], rtol=1e-6, atol=1e-12)
    x = gradkit.tensor(values, dtype=gradkit.float64, requires_grad=True)
    assert gradkit.autograd.gradgradcheck(lambda t: fn(gradkit, t), (x,))


@pytest.mark.parametrize("values", [(-0.0, 0.0, 0.0, 0.0), (0.0, -0.0, -0.0, 1.0),
                                    (-0.0, -0.0, 0.0, -1.0)])
def test_fuzznn_max_pool_tie_of_signed_zeros_gives_the_indexed_value(values):
    """max_pool of a window tying -0.0 and 0.0 gives the value at the index it returns (the
    first), as torch, and max_unpool puts it back (nn_new seed 1415)."""
    def program(m):
        x = m.tensor([[list(values)]])
        pooled, indices = m.nn.functional.max_pool1d(x, 3, 1, return_indices=True)
        return (pooled, indices, m.nn.functional.max_pool1d(x, 3, 1),
                m.nn.functional.max_unpool1d(pooled, indices, 3, 1))
    assert_same_as_torch(program)


@pytest.mark.parametrize("dtype", ["uint8", "int32", "int64"])
def test_fuzznn_bilinear_keeps_an_integer_dtype(dtype):
    """bilinear of integer tensors keeps their dtype (wrapping as torch's kernel; nn_new seed
    1710)."""
    def program(m):
        x1 = m.tensor([[3, 200, 7]], dtype=getattr(m, dtype))
        x2 = m.tensor([[5, 90]], dtype=getattr(m, dtype))
        weight = m.arange(12, dtype=getattr(m, dtype)).reshape(2, 3, 2) * 9
        return m.nn.functional.bilinear(x1, x2, weight, m.ones(2, dtype=getattr(m, dtype)))
    assert_same_as_torch(program)


def test_fuzznn_attention_zero_sum_of_products_sign():
    """Documented (nn_new seed 3278): multi-head attention of -0.0 projections ends in a
    linear whose zero sum of products torch's kernel makes -0.0 and gradkit's 0.0; equal as
    numbers."""
    def attention(m):
        q = m.full((2, 1), -0.0)
        zeros = m.full((3, 1), -0.0)
        out, weights = m.nn.functional.multi_head_attention_forward(
            q, q[:1], q[:1], 1, 1, zeros, None, None, None, False, 0.0, zeros[:1],
            zeros[0], attn_mask=m.zeros(2, 1), average_attn_weights=False)
        return out.numpy(), weights.numpy()
    theirs, ours = attention(torch), attention(gradkit)
    assert np.signbit(theirs[0]).all() and not np.signbit(ours[0]).any()
    for o, t in zip(ours, theirs):
        np.testing.assert_array_equal(o, t)


@pytest.mark.parametrize("padding_mode", ["zeros", "reflection"])
def test_fuzznn_grid_sample_bilinear_of_negative_zeros(padding_mode):
    """Bilinear grid_sample of a -0.0 image inside it is -0.0: the sum of the corner terms
    starts from the first, not from 0 (nn_new seed 4016)."""
    assert_same_as_torch(lambda m: _fuzznn_grid(m, [0.1, 0.2, -0.3, -0.1, 0.9, 0.9],
                                                "bilinear", padding_mode, image=(-0.0,) * 6))


@pytest.mark.parametrize("padding_mode", ["border", "reflection"])
def test_nn_new_grid_sample_clipped_point_multiplies_its_gradient_by_zero(padding_mode):
    """torch clips a point to the border with a gradient multiplier of 0 on and beyond it,
    multiplied in: a NaN gradient (a NaN pixel) stays NaN there, and a point exactly on the
    border passes no gradient (nn_new seed 5013)."""
    nan_image = (math.nan, 1.0, 2.0, 3.0, 4.0, 5.0)
    for points, image, align in (([2.5, 0.3, -0.2, 0.4, 0.1, -3.0], nan_image, False),
                                 ([1.0, 1.0, -1.0, 0.2], (1.0, 2.0, 3.0, 4.0, 5.0, 6.0), True)):
        theirs, ours = (_fuzznn_grid(m, points, "bilinear", padding_mode, image=image,
                                     align_corners=align) for m in (torch, gradkit))
        for t, o in zip(theirs, ours, strict=True):  # as numbers: a zero's sign may differ
            np.testing.assert_allclose(o.detach().numpy(), t.detach().numpy(), rtol=1e-12)


@pytest.mark.parametrize("again", [True, False])
def test_view_of_a_detached_written_base_reaches_it_once_it_requires_grad_again(again):
    """A view of a leaf that was detach_()ed and then written: torch regenerates the view's
    history lazily, so after requires_grad_() on the base the view's gradient reaches it
    (views seed 599665)."""
    def program(m):
        base = m.tensor(0.3 + 0.2j, dtype=m.complex128, requires_grad=True)
        view = base.squeeze()
        base.detach_()
        base.masked_fill_(m.tensor(True), 0.7)
        if again:
            base.requires_grad_()
        loss = ((base * (1 + 2j)).real if again else 0) + (view * (3 - 1j)).real
        loss.backward()
        return base.grad if again else view.detach()
    assert_same_as_torch(program)


def test_sign_of_a_singular_determinant_is_torchs():
    """breadth seed 3427: torch's det of a singular matrix is the product of its LU diagonal
    times the permutation's sign (-0.0 after a row swap); gradkit's came from NumPy's routine
    (0.0) and now, for a near-singular matrix, from torch's LU (MKL's rounding replayed)."""
    for matrix in ([[1.0, 2.0], [2.0, 4.0]], [[2.0, 4.0], [1.0, 2.0]]):
        theirs = torch.linalg.det(torch.tensor(matrix)).item()
        ours = gradkit.linalg.det(gradkit.tensor(matrix)).item()
        assert theirs == ours == 0.0
        assert math.copysign(1, theirs) == math.copysign(1, ours)


@pytest.mark.parametrize("case", ["unique", "power_inf"])
def test_a_last_bit_difference_becomes_another_number(case):
    """Documented (breadth seeds 8287, 10498): the same step in both libraries turns inputs
    one ulp apart into different numbers, so a one-ulp difference upstream shows here."""
    one, next_up = 1.0, math.nextafter(1.0, 2.0)
    for m in (gradkit, torch):
        if case == "unique":
            apart = m.unique(m.tensor([one, next_up], dtype=m.float64)).numel()
            together = m.unique(m.tensor([one, one], dtype=m.float64)).numel()
            assert (apart, together) == (2, 1)
        else:
            powers = m.float_power(m.tensor([one, next_up], dtype=m.float64), math.inf)
            assert powers.tolist() == [1.0, math.inf]


def test_repeated_eigenvalues_differ_by_rounding_noise_in_both():
    """Documented (breadth seed 11754): eig's gradients divide by eigenvalue differences,
    which for a repeated eigenvalue are rounding noise, other noise in MKL than in OpenBLAS."""
    for m in (gradkit, torch):
        matrix = (0.3 + 0.2j) * m.ones(4, 4, dtype=m.complex128) + 2 * m.eye(4)
        values = m.linalg.eigvals(matrix).numpy()
        gaps = np.abs(values[:, None] - values[None, :])[~np.eye(4, dtype=bool)]
        assert (gaps < 1e-12).sum() >= 2  # the triple eigenvalue 2 splits by noise only


def test_sinc_second_derivative_at_zero_is_nan_as_torchs():
    """torch's sinc_backward divides by pi x² before where() masks x = 0, so its own
    derivative there is 0 / 0 (breadth seed 8361: solve(A, A) is the identity's zeros)."""
    def program(m):
        x = m.tensor([0.0, -0.0, 1.0, 0.5], dtype=m.float64, requires_grad=True)
        g, = m.autograd.grad(m.sinc(x).sum(), x, create_graph=True)
        return (g,) + m.autograd.grad(g.sum(), x)
    assert_same_as_torch(program)


def test_matmul_of_two_dtypes_with_an_empty_batch():
    """Documented (mixed seed 637911): torch computes one broadcast order of a float32 by an
    empty float64 batch and refuses the other; gradkit refuses both."""
    forward = torch.matmul(torch.ones(1, 1), torch.ones(0, 1, 1, dtype=torch.float64))
    assert forward.shape == (0, 1, 1)
    with pytest.raises(RuntimeError, match="same dtype"):
        torch.matmul(torch.ones(0, 1, 1), torch.ones(1, 1, dtype=torch.float64))
    # each refusal in the words of the kernel torch's matmul reaches: bmm, mm (folded batch)
    for a, b, words in (((1, 1), (0, 1, 1), "expected scalar type Float but found Double"),
                        ((0, 1, 1), (1, 1), "expected m1 and m2 to have the same dtype")):
        with pytest.raises(RuntimeError, match=words):
            gradkit.matmul(gradkit.ones(*a), gradkit.ones(*b, dtype=gradkit.float64))
