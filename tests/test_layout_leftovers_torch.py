"""Layout and graph leftovers compared with torch 2.13 (lane h-strides): writes into expanded
tensors through index_put_, the strides of views and copies of strided inputs, node names of
second-order graphs and version checks of indexing nodes."""
import warnings

import pytest

import gradkit

torch = pytest.importorskip("torch")
from test_setitem_copy_slices import _graph  # noqa: E402
from torch_expectations.twin import assert_same  # noqa: E402


def _index_put_expanded(m, write: str, recorded: bool):
    """``write`` into x = base.expand(3, 4): the base's values, the warnings (their text before
    torch's "Triggered internally"), x's version and, recorded, the nodes and backward's error."""
    leaf = m.arange(4.0, requires_grad=recorded)
    base = leaf.clone()
    x = base.expand(3, 4)
    v = m.tensor(5.0, requires_grad=recorded)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec(write, {"x": x, "v": v, "m": m})  # noqa: S102 - the writes below
    out = [base.tolist(), [str(w.message).split(" (Triggered")[0] for w in caught], x._version]
    if recorded:
        out.append(base.grad_fn.name())
        with pytest.raises(RuntimeError, match="more than one element of the written-to"):
            base.sum().backward()
    return out


@pytest.mark.parametrize("recorded", [False, True])
@pytest.mark.parametrize("write", [
    "x.index_put_((m.tensor([0, 1]),), v)",
    "x.index_put_((m.tensor([0, 1]),), v, accumulate=True)",  # adds once per row: 2 * 5
    "x.index_put_((m.tensor([0, 0, 2]), m.tensor([1, 1, 3])), v * 1, accumulate=True)",
    "x.index_put_((m.tensor([0, 1]), m.tensor([1, 2])), m.stack([v, v * 2]), accumulate=True)",
    "x.index_put_((m.tensor([True, False, True]),), v)",  # then masked_fill_: warns twice
    "x.index_put_((m.tensor([True, False, True]),), v, accumulate=True)",
    "x[m.tensor([True, False, True])] = 3.0",
    "x[m.tensor([0, 2])] = v",
])
def test_index_put_into_an_expanded_tensor_warns_and_writes_as_torch(write, recorded):
    """torch writes (warning that this is deprecated); adding, each element sharing a location
    adds into it; a backward through the write is refused (gradkit refused the write)."""
    got = _index_put_expanded(gradkit, write, recorded)
    assert_same(got, _index_put_expanded(torch, write, recorded))
    assert got[1][0].startswith("Use of index_put_ on expanded tensors is deprecated")


@pytest.mark.parametrize("recorded", [False, True])
def test_index_put_accumulate_into_overlapping_windows_as_torch(recorded):
    """Windows of as_strided that share memory (no warning: torch cannot tell): torch's kernel
    adds each value into the location, 1 + 2 where two indexed elements share one."""
    def program(m):
        leaf = m.zeros(5, requires_grad=recorded)
        base = leaf.clone()
        x = base.as_strided((3, 3), (1, 1))
        x.index_put_((m.tensor([0, 1, 2]), m.tensor([1, 0, 2])), m.tensor([1.0, 2.0, 4.0]),
                     accumulate=True)
        return base.tolist(), x.tolist()
    assert program(gradkit) == program(torch)


def test_index_put_accumulate_out_of_place_of_an_expanded_input_as_torch():
    """Out of place, torch clones the expanded input first: each row adds once."""
    def program(m):
        x = m.arange(4.0).expand(3, 4)
        r = m.index_put(x, (m.tensor([0, 0]),), m.tensor(5.0), accumulate=True)
        return r.tolist(), r.stride(), x.tolist()
    assert program(gradkit) == program(torch)


def test_index_put_accumulate_records_torch_node():
    """accumulate=True records IndexPutBackward0 (was AddBackward0), saving torch's attributes;
    its first and second derivatives."""
    def program(m):
        a = m.arange(12.0, dtype=m.float64).reshape(3, 4).requires_grad_(True)
        v = m.arange(4.0, dtype=m.float64, requires_grad=True)
        r = m.index_put(a, (m.tensor([1, 1, 2]),), v * v, accumulate=True)
        node = (r.grad_fn.name(), r.grad_fn._saved_accumulate, r.grad_fn._saved_indices[0])
        (ga, gv) = m.autograd.grad((r * r).sum(), (a, v), create_graph=True)
        second = m.autograd.grad(gv.sum(), v)
        return node, r, ga, gv, second
    assert_same(program(gradkit), program(torch))


_STRIDED = {  # inputs laid out unlike C order
    "transposed": lambda m: m.arange(24.0, requires_grad=True).view(4, 6).t(),
    "stepped": lambda m: m.arange(24.0, requires_grad=True).view(4, 6)[:, ::2],
    "permuted": lambda m: m.arange(24.0, requires_grad=True).view(2, 3, 4).permute(2, 0, 1),
    "expanded": lambda m: m.arange(6.0).view(6, 1).expand(6, 4),
}
_COPIES = [
    "m.detach_copy(x)", "m.alias_copy(x)", "m.view_copy(x, (-1,))", "m.view_copy(x, (2, -1))",
    "m.view_copy(x, m.int32)", "m.view_copy(x, dtype=m.float32)", "m.t_copy(x[0])",
    "m.transpose_copy(x, 0, 1)", "m.permute_copy(x, (1, 0) + tuple(range(2, x.ndim)))",
    "m.narrow_copy(x, 1, 1, 2)", "m.select_copy(x, 1, 1)", "m.slice_copy(x, 1, 0, 3, 2)",
    "m.diagonal_copy(x)", "m.unsqueeze_copy(x, 1)", "m.squeeze_copy(x.unsqueeze(1))",
    "m.expand_copy(x, (2,) + tuple(x.shape))", "m.unfold_copy(x, 1, 2, 1)",
    "m.split_copy(x, 2, 1)", "m.unbind_copy(x, 1)", "m.as_strided_copy(x, (2, 2), (1, 2))",
]


def _copy_layout(m, layout: str, call: str):
    """A ``*_copy`` of a strided input: values, strides, offset, node name (or the error)."""
    x = _STRIDED[layout](m)
    try:
        out = eval(call, {"m": m, "x": x})  # noqa: S307 - the calls above
    except (RuntimeError, TypeError) as error:
        return str(error)
    pieces = out if isinstance(out, (tuple, list)) else (out,)
    return [(p, p.stride(), p.storage_offset(), p.requires_grad,
             p.grad_fn and p.grad_fn.name()) for p in pieces]


@pytest.mark.parametrize("call", _COPIES)
@pytest.mark.parametrize("layout", list(_STRIDED))
def test_view_copies_of_strided_inputs_as_torch(layout, call):
    """torch's ``*_copy`` results are contiguous whatever the input's layout: detach_copy kept
    the input's strides; view_copy refused an input it cannot view (torch reshapes it) and
    had no dtype overload (torch's copies ``x.view(dtype)``, recording no gradient)."""
    assert_same(_copy_layout(gradkit, layout, call), _copy_layout(torch, layout, call))


def test_view_copy_argument_errors_as_torch():
    x = gradkit.zeros(4, 6)
    with pytest.raises(TypeError, match=r"got \(Tensor, int, int\), but expected one of:\n "
                                        r"\* \(Tensor input, torch.dtype dtype"):
        gradkit.view_copy(x, 4, 6)
    with pytest.raises(RuntimeError, match=r"self.stride\(-1\) must be 1 to view Float as Half"):
        gradkit.view_copy(x.t(), gradkit.float16)


_COMPLEX = {  # complex inputs: conj views, transposed, stepped, expanded, empty
    "conj": lambda z: z.conj(), "conj_t": lambda z: z.conj().t(), "t_conj": lambda z: z.t().conj(),
    "step_conj": lambda z: z[:, 1::2].conj(), "conj_physical": lambda z: z.conj_physical(),
    "0d_conj": lambda z: z[1, 2].conj(), "expanded_conj": lambda z: z[0].expand(3, 6).conj(),
    "empty_conj": lambda z: z[:0].conj(), "empty_t": lambda z: z[:, :0].t(),
}


def _parts(m, layout: str, part: str):
    z = m.complex(m.arange(24.0).view(4, 6), m.arange(24.0).view(4, 6) + 100)
    out = getattr(_COMPLEX[layout](z), part)
    return out.resolve_neg(), out.stride(), out.storage_offset(), out.is_neg(), out.clone().stride()


@pytest.mark.parametrize("part", ["real", "imag"])
@pytest.mark.parametrize("layout", list(_COMPLEX))
def test_real_and_imag_of_conj_and_strided_views_as_torch(layout, part):
    """Values, strides (twice the complex ones), storage offset and neg bit of ``.real`` and
    ``.imag``; of an empty complex tensor they were its own C strides."""
    assert_same(_parts(gradkit, layout, part), _parts(torch, layout, part))


_EMPTY = {  # empty inputs whose strides gradkit and torch agree on
    "rows": lambda m: m.zeros(4, 6)[:0], "cols": lambda m: m.zeros(4, 6)[:, :0],
    "t_rows": lambda m: m.zeros(4, 6)[:0].t(), "3d": lambda m: m.zeros(2, 3, 4)[:, :0],
    "3d_permuted": lambda m: m.zeros(2, 3, 4).permute(2, 0, 1)[:, :, :0],
    "fresh": lambda m: m.zeros(3, 0, 2),
}
_EMPTY_RESULTS = [
    "x.clone()", "x.double()", "x.to(m.complex64)", "m.empty_like(x)", "m.zeros_like(x)",
    "x.sort(-1)[0]", "x.sort(0)[1]", "x.argsort(0)", "x.flip(0)", "x.roll(1, 0)",
    "x.nonzero()", "m.argwhere(x)", "m.complex(x, x).real", "m.complex(x, x).conj().imag",
    "x.sum(0)", "x.mean(-1)", "m.cat([x, x], 0)", "m.stack([x, x], 1)", "x.cumsum(0)",
    "x @ m.ones(x.shape[-1], 3)", "-x", "x.exp()", "x + x", "x.clamp(0, 1)",
]


def _empty_layout(m, layout: str, call: str):
    out = eval(call, {"m": m, "x": _STRIDED_EMPTY(m, layout)})  # noqa: S307 - the calls above
    return tuple(out.shape), out.stride(), out.storage_offset(), out.is_contiguous()


def _STRIDED_EMPTY(m, layout):  # noqa: N802 - reads as the table it looks up
    return _EMPTY[layout](m)


@pytest.mark.parametrize("call", _EMPTY_RESULTS)
@pytest.mark.parametrize("layout", list(_EMPTY))
def test_strides_of_empty_results_as_torch(layout, call):
    """torch counts an empty tensor contiguous, so copies laid out as their input (clone, to,
    *_like, sort, flip, roll) keep its strides (gradkit's were C strides); nonzero's are
    (1, 0), of the transposed (ndim, 0) tensor it fills."""
    assert _empty_layout(gradkit, layout, call) == _empty_layout(torch, layout, call)


_REAL_OF_COMPLEX = {
    "transposed": lambda m: m.complex(m.arange(24.0).view(4, 6), m.ones(4, 6)).t(),
    "permuted": lambda m: m.complex(m.arange(24.0).view(2, 3, 4), m.ones(2, 3, 4)).permute(
        2, 0, 1),
    "conj_transposed": lambda m: m.complex(m.arange(24.0).view(4, 6), m.ones(4, 6)).conj().t(),
    "stepped": lambda m: m.complex(m.arange(24.0).view(4, 6), m.ones(4, 6))[:, ::2],
    "real_transposed": lambda m: m.arange(24.0).view(4, 6).t(),
    "real_expanded": lambda m: m.zeros(3, 1, 4).expand(3, 2, 4),
}


@pytest.mark.parametrize("call", ["m.angle(x)", "m.abs(x)", "m.isreal(x)", "m.isnan(x)",
                                  "m.sgn(x)", "x == 0"])
@pytest.mark.parametrize("layout", list(_REAL_OF_COMPLEX))
def test_complex_to_real_elementwise_strides_as_torch(layout, call):
    """angle of a complex tensor is copied into a fresh C-ordered result in torch (it was laid
    out as its input); isreal of a real one is ones_like(x), laid out as x (it was C)."""
    def program(m):
        out = eval(call, {"m": m, "x": _REAL_OF_COMPLEX[layout](m)})  # noqa: S307 - above
        return out, out.stride()
    assert_same(program(gradkit), program(torch), rtol=1e-6)  # (float32 rounding: an ulp)


_DETERMINANTS = {
    "det": lambda m, a: m.det(a), "linalg.det": lambda m, a: m.linalg.det(a),
    "logdet": lambda m, a: m.logdet(a), "slogdet": lambda m, a: m.slogdet(a)[1],
    "linalg.slogdet": lambda m, a: m.linalg.slogdet(a).logabsdet,
    "det_of_t": lambda m, a: m.det(a.t()),
    "logdet_times_sum": lambda m, a: m.logdet(a) * a.sum() + a.mean(0).sum(),
}


def _determinant_graphs(m, name: str):
    """The first and second backward graphs (create_graph) of a determinant, and their values."""
    a = m.tensor([[2.0, 1.0, 0.3], [0.5, 3.0, 1.0], [0.2, 0.4, 1.5]], dtype=m.float64,
                 requires_grad=True)  # (one matrix: a batch's matmul differs, Bmm in torch)
    y = _DETERMINANTS[name](m, a).sum()
    (g,) = m.autograd.grad(y, a, create_graph=True)
    (g2,) = m.autograd.grad((g * g).sum(), a, create_graph=True)
    return _graph(g.grad_fn, 7), _graph(g2.grad_fn, 4), g, g2


@pytest.mark.parametrize("name", list(_DETERMINANTS))
def test_determinant_double_backward_graphs_as_torch(name):
    """Under create_graph torch's det and slogdet derivatives solve A^H X = diag(g) with
    linalg_solve (gradkit multiplied by A^{-H}: MulBackward0 over LinalgInvExBackward0);
    t's backward is TBackward0, sum's Unsqueeze and Expand (gradkit viewed the gradient)."""
    got, expected = _determinant_graphs(gradkit, name), _determinant_graphs(torch, name)
    assert got[:2] == expected[:2]
    assert_same(got[2:], expected[2:], rtol=1e-10)


@pytest.mark.parametrize("call", ["m.linalg.det(z).abs()", "m.slogdet(z)[1]",
                                  "m.slogdet(z)[0].real + m.slogdet(z)[0].imag"])
def test_complex_determinant_double_backward_as_torch(call):
    """Complex A: the values (torch's graph differs where gradkit's real() is one node)."""
    def program(m):
        a = m.tensor([[2.0, 1.0], [0.5, 3.0]], dtype=m.float64, requires_grad=True)
        z = a.to(m.complex128) * (1 + 0.5j)
        (g,) = m.autograd.grad(eval(call, {"m": m, "z": z}), a, create_graph=True)  # noqa: S307
        return g, m.autograd.grad((g * g).sum(), a, allow_unused=True)
    assert_same(program(gradkit), program(torch), rtol=1e-10)


def test_slogdet_double_backward_of_a_singular_matrix_refused_as_torch():
    def program(m):
        a = m.tensor([[1.0, 2.0], [2.0, 4.0]], dtype=m.float64, requires_grad=True)
        return m.autograd.grad(m.slogdet(a)[1], a, create_graph=True)
    with pytest.raises(RuntimeError, match="torch.linalg.solve: The solver failed because the "
                                           "input matrix is singular."):
        program(torch)
    with pytest.raises(RuntimeError, match="torch.linalg.solve: The solver failed because the "
                                           "input matrix is singular."):
        program(gradkit)


def _version_message(error: RuntimeError) -> str:
    """The version error's text up to its hint, the library's name left out."""
    return str(error).split(" Hint:")[0].replace("torch.", "").replace("gradkit.", "")


_INDEXED = {  # an index tensor that the indexing node saves, and the program that writes it
    "int": ("x[k]", "m.tensor([1, 0])", "k.zero_()"),
    "two": ("x[k, k]", "m.tensor([1])", "k.zero_()"),
    "after_basic": ("x[1:, k]", "m.tensor([2, 0])", "k.zero_()"),
    "bool": ("x[k]", "m.tensor([[True, False, True]] * 2)", "k.logical_not_()"),
    "uint8": ("x[k]", "m.tensor([1, 0], dtype=m.uint8)", "k.zero_()"),
    "complex_saved": ("(x.to(m.complex64) * k).sum().abs()", "m.ones(2, 3, dtype=m.complex64)",
                      "k.add_(1)"),
}


@pytest.mark.parametrize("case", list(_INDEXED))
def test_a_written_index_tensor_fails_the_second_backward_as_torch(case):
    """torch's IndexBackward0 saves the key's index tensors (masks too): one written in place
    before a backward is refused with the version error (gradkit read its new values); a
    bool or complex tensor is named by ATen's type (CPUBoolType), as torch's message does."""
    def program(m):
        expression, index, write = _INDEXED[case]
        a = m.arange(6.0, requires_grad=True)
        x = (a * 1).view(2, 3)
        k = eval(index, {"m": m})  # noqa: S307 - the cases above
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (indexing with uint8 is deprecated)
            y = eval(expression, {"m": m, "x": x, "k": k})  # noqa: S307
        y.sum().backward(retain_graph=True)
        exec(write, {"k": k})  # noqa: S102
        with pytest.raises(RuntimeError, match="modified by an inplace operation") as raised:
            y.sum().backward()
        return _version_message(raised.value), a.grad
    assert_same(program(gradkit), program(torch))


def test_saved_index_tensors_as_torch():
    """The saved indices (torch's _saved_indices) and the gradient of an unwritten index."""
    def program(m):
        a = m.arange(12.0, requires_grad=True).view(3, 4)
        i, j = m.tensor([0, 2]), m.tensor([1, 3])
        y = a[i, j]
        saved = y.grad_fn._saved_indices
        y.sum().backward()
        return saved, i._version
    assert_same(program(gradkit), program(torch))


@pytest.mark.parametrize("call", [
    "m.nan_to_num(x)", "m.nn.functional.hardtanh(x)", "m.nn.functional.relu6(x)",
    "m.nn.functional.prelu(x, m.tensor(0.2, dtype=m.float64))", "m.frexp(x)[0]",
    "m.frexp(x)[1]", "m.fill(x, 1.0)", "x.to(m.complex128).conj()", "m.isreal(x)",
    "x.clone()", "x.neg()", "x.exp()"])
@pytest.mark.parametrize("geometry", [((1, 0, 3), (12, 12, 2)), ((3, 0, 3), (0, 3, 1))])
def test_empty_like_results_keep_an_empty_inputs_strides_as_torch(geometry, call):
    """torch's kernels that allocate empty_like(x) keep an empty x's strides (a step-2 or
    expanded one: the scanner's (1, 0, 3) samples); TensorIterator's (neg, exp) are C."""
    def program(m):
        x = m.zeros(24, dtype=m.float64).as_strided(*geometry)
        out = eval(call, {"m": m, "x": x})  # noqa: S307 - the calls above
        return out.stride(), out.dtype == x.dtype
    assert program(gradkit) == program(torch)


@pytest.mark.parametrize("dims", [(0,), (-1,), (0, 1)])
@pytest.mark.parametrize("layout", list(_STRIDED))
def test_flip_is_laid_out_as_its_input_as_torch(layout, dims):
    """torch's flip allocates empty_like(x): a transposed x gives a transposed result (it was
    C-ordered: the scanner's --all-strides row)."""
    def program(m):
        out = m.flip(_STRIDED[layout](m), dims)
        return out, out.stride()
    assert_same(program(gradkit), program(torch))


@pytest.mark.parametrize("call", [
    "x.t()", "x.expand(2, 0, 3)",
    pytest.param("x + 1", marks=pytest.mark.xfail(strict=True, reason="left: NumPy's strides of "
                                                  "empty results (docs/numerics.md)")),
    pytest.param("x == 0", marks=pytest.mark.xfail(strict=True, reason="left: NumPy's strides "
                                                   "of empty results (docs/numerics.md)"))])
def test_empty_views_and_scalar_ops_strides(call):
    """torch keeps its arithmetic of strides for views of an empty tensor (a factory's empty
    tensor now carries torch's strides, so its views' are torch's) and sorts an empty input's
    dims for an op with a scalar operand (gradkit's results of empty inputs: NumPy's)."""
    def program(m):
        x = m.zeros(0, 3) if call.startswith("x.") else m.zeros(4, 6)[:0].t()
        return eval(call, {"x": x}).stride()  # noqa: S307 - the calls above
    assert program(gradkit) == program(torch)


@pytest.mark.parametrize("bins", ["m.arange(8.0)[::2]", "m.arange(4.0)", "3"])
def test_histogram_copies_the_edges_given_as_torch(bins):
    """torch's histogram returns a contiguous copy of the edges given (it returned them, a
    stepped view of the caller's memory: the scanner's --all-strides row); histogramdd keeps
    them."""
    def program(m):
        edges = eval(bins, {"m": m})  # noqa: S307 - the bins above
        out = m.histogram(m.tensor([1.0, 2.0, 5.0]), edges)
        shares = isinstance(edges, int) or \
            out.bin_edges.untyped_storage().data_ptr() == edges.untyped_storage().data_ptr()
        kept = m.histogramdd(m.tensor([[1.0, 2.0]]), [m.arange(8.0)[::2], m.arange(4.0)])
        return out, out.bin_edges.stride(), shares, [e.stride() for e in kept.bin_edges]
    assert_same(program(gradkit), program(torch))


@pytest.mark.parametrize("call", ["x.sort(0)", "x.sort(-1, descending=True)",
                                  "x.sort(dim=0, stable=True)", "x.argsort(1)", "m.msort(x)"])
@pytest.mark.parametrize("layout", list(_STRIDED))
def test_sort_results_are_laid_out_as_the_input_as_torch(layout, call):
    """torch's sort allocates its values and indices as empty_like(x) (a transposed x: a
    transposed result; gradkit's were C-ordered: the scanner's --all-strides rows)."""
    def program(m):
        out = eval(call, {"m": m, "x": _STRIDED[layout](m)})  # noqa: S307 - the calls above
        pieces = tuple(out) if isinstance(out, tuple) else (out,)
        return [(p, p.stride()) for p in pieces]
    assert_same(program(gradkit), program(torch))


@pytest.mark.parametrize("case", [
    "m.tensor([0.0, 1, 1, 0, 0, 0, 3, 0])[::2]", "m.tensor([0.0, 5.0, 0.0, 7.0])",
    "m.arange(24.0).view(4, 6)[:, ::2] % 4", "m.eye(3)", "m.tensor(3.0)", "m.tensor(0.0)",
    "m.zeros(3, 0, 2)", "m.zeros(2, 3)", "(m.arange(24.0).view(2, 3, 4) % 3).permute(2, 0, 1)"])
def test_nonzero_strides_as_torch(case):
    """torch's nonzero fills an (ndim, n) tensor and returns its transpose: strides (1, n),
    also for one dim or one element found (gradkit's came from NumPy's argwhere)."""
    def program(m):
        x = eval(case, {"m": m})  # noqa: S307 - the cases above
        out = m.nonzero(x)
        return out, out.stride(), m.argwhere(x).stride(), [
            t.stride() for t in m.nonzero(x, as_tuple=True)]
    assert_same(program(gradkit), program(torch))


@pytest.mark.parametrize("k", [-1, 0, 1, 2, 3])
@pytest.mark.parametrize("layout", list(_STRIDED))
def test_rot90_is_laid_out_as_torch(layout, k):
    """torch's rot90 is flip (laid out as x) then a transposed view; k = 0 a C copy (gradkit's
    were C-ordered: the scanner's --all-strides rows). Values and gradients too."""
    def program(m):
        x = _STRIDED[layout](m)
        out = m.rot90(x, k, (0, 1))
        grads = m.autograd.grad((out * out).sum(), x) if x.requires_grad else None
        return out, out.stride(), grads
    assert_same(program(gradkit), program(torch))
