"""torch's op table with non-contiguous inputs (``tests/fuzz/opinfo_layout.py``): the ops whose
layout differences were fixed, run through the scanner's own comparison, and closed forms.

The scan lays each sample's tensors out transposed, as a step-2 slice, expanded, as a conj
view or at a storage offset, the same in torch and gradkit, and compares values, gradients,
output strides and (in place) the storage under the input."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore")  # the ops warn as torch does

import gradkit  # noqa: E402
from fuzz.opinfo_layout import (  # noqa: E402
    LAYOUTS, compare_laid_out, layout_check, layout_items)
from fuzz.opinfo_samples import op_db, same_layout  # noqa: E402


def _laid_out_differences(name: str, variant: str, layouts: list, dtype) -> list:
    opinfo = next(o for o in op_db if o.name == name)
    grads = variant != "inplace" and opinfo.supports_autograd
    torch.manual_seed(0)
    samples = list(opinfo.sample_inputs("cpu", dtype, requires_grad=grads))
    compare = compare_laid_out(False)
    found = [compare(opinfo, variant, s, grads)
             for s in layout_items(layouts)(opinfo, variant, samples)]
    return [f for f in found if f]


@pytest.mark.parametrize("name, variant, layouts, dtype", [
    ("unsqueeze", "op", ["transposed", "step2"], "float64"),  # the new dim's stride
    ("unsqueeze", "inplace", ["transposed", "step2"], "float64"),
    ("as_strided", "inplace", ["conj"], "complex128"),  # the storage around a conj view
    ("as_strided", "op", ["conj"], "complex128"),
    ("resize_", "inplace", ["conj", "step2", "offset"], "complex128"),
    ("erf", "op", ["expanded", "transposed"], "float64"),  # elementwise: the inputs' order
    ("log1p", "op", ["transposed"], "complex128"),
    ("true_divide", "op", ["transposed"], "complex128"),
    ("polar", "op", ["transposed", "step2"], "float64"),
    ("special.zeta", "op", ["transposed"], "float64"),
    ("complex", "op", ["transposed", "step2"], "float64"),
    ("logaddexp", "op", ["transposed", "expanded"], "float64"),
    ("logaddexp", "op", ["transposed"], "complex128"),
    ("fft.hfft", "op", ["transposed"], "float64"),  # a conj view of a view of a non-C owner
    ("mvlgamma", "op", ["transposed"], "float64"),  # C order: torch sums a stacked dim
    ("special.laguerre_polynomial_l", "op", ["transposed"], "float64"),
    ("sum", "op", ["transposed"], "float64"),  # keep-dim reductions: C order, torch's strides
    ("mean", "op", ["transposed"], "complex128"),
    ("all", "op", ["transposed"], "float64"),
    ("any", "op", ["transposed"], "float64"),
    # expanded square matrices are singular: torch's _LinAlgError is gradkit's LinAlgError,
    # and the _ex forms differentiate the failed matrices (NaN, inf; gradkit gave 0)
    ("linalg.inv", "op", ["expanded"], "complex128"),
    ("linalg.solve", "op", ["expanded"], "float64"),
    ("linalg.inv_ex", "op", ["expanded"], "float64"),
    ("linalg.solve_ex", "op", ["expanded"], "float64"),
    ("linalg.solve_ex", "op", ["expanded"], "complex128"),
])
def test_laid_out_samples_agree_with_torch(name, variant, layouts, dtype):
    differing = _laid_out_differences(name, variant, layouts, getattr(torch, dtype))
    assert not differing, differing


def test_every_layout_keeps_the_values_and_lays_them_out():
    t = torch.arange(24.).reshape(2, 3, 4)
    for name, layout in LAYOUTS.items():
        if name in ("conj", "expanded"):
            continue
        laid = layout(t)
        assert torch.equal(laid, t) and not laid.is_contiguous() or laid.storage_offset() == 3
    conj = LAYOUTS["conj"](t.to(torch.complex128) * 1j)
    assert conj.is_conj() and torch.equal(conj, t.to(torch.complex128) * 1j)
    assert LAYOUTS["expanded"](t).stride()[0] == 0


def test_gradkits_twin_has_torchs_strides_offset_and_conj_bit():
    t = torch.arange(30., dtype=torch.float64).to(torch.complex128)[3:].view(3, 9)[:, ::2].conj()
    g = same_layout(t)
    assert (g.stride(), g.storage_offset(), g.is_conj()) == \
        (t.stride(), t.storage_offset(), t.is_conj())
    np.testing.assert_array_equal(g.resolve_conj().numpy(), t.resolve_conj().numpy())


def test_the_check_sees_strides_and_the_storage_under_an_in_place_input():
    """The oracle can fail: a C-ordered result of a transposed input, a lost write."""
    opinfo = next(o for o in op_db if o.name == "abs")
    x = torch.arange(6.).reshape(2, 3).t()
    found = layout_check(opinfo, "op", False)(
        x, same_layout(x), [x.abs()], [gradkit.tensor(np.ascontiguousarray(x.abs().numpy()))])
    assert found == "strides out[0] (1, 3) vs (2, 1) is_contiguous False vs True"
    gx = same_layout(x)
    x.abs_()
    found = layout_check(opinfo, "inplace", False)(x, gx, [x], [gx])
    assert found is None
    x.neg_()
    assert layout_check(opinfo, "inplace", False)(x, gx, [x], [gx]).startswith(
        "storage under the input")


@pytest.mark.parametrize("shape, strides", [
    ((3, 4, 5), (20, 1, 4)), ((3, 0, 5), (5, 5, 1)), ((), ()), ((2, 3), (0, 1)), ((4,), (2,))])
def test_unsqueeze_gives_the_new_dim_torchs_stride(shape, strides):
    """torch: 1 for a last dim, else the extent of the dim it goes before (NumPy's reshape
    gave the last dim's stride again)."""
    t = torch.as_strided(torch.arange(100.), shape, strides)
    g = gradkit.as_strided(gradkit.arange(100.), shape, strides)
    for dim in range(len(shape) + 1):
        assert g.unsqueeze(dim).stride() == t.unsqueeze(dim).stride()
        assert g.clone().unsqueeze_(dim).stride() == t.clone().unsqueeze_(dim).stride()


def test_a_conj_view_reads_its_whole_storage_as_torch():
    """gradkit computes a conj view's values (NumPy has no lazy conjugate): all of its
    storage, as as_strided may read outside the view (it read uninitialized memory)."""
    values = [1 + 1j, 2 + 2j, 3 + 3j, 4 + 4j, 5 + 5j, 6 + 6j]
    t, g = torch.tensor(values), gradkit.tensor(values)
    for view in (lambda x: x[1:3].conj(), lambda x: x[1:5].conj()[::2].conj(),
                 lambda x: x.view(2, 3)[:, 1].conj()):
        np.testing.assert_array_equal(
            view(g).as_strided((6,), (1,), 0).resolve_conj().numpy(),
            view(t).as_strided((6,), (1,), 0).resolve_conj().numpy())
    tc, gc = t.conj(), g.conj()
    tc.as_strided_((2,), (1,), 0)
    gc.as_strided_((2,), (1,), 0)
    np.testing.assert_array_equal(gc.conj().as_strided((6,), (1,), 0).numpy(),
                                  tc.conj().as_strided((6,), (1,), 0).resolve_conj().numpy())


@pytest.mark.parametrize("op", ["erf", "exp", "log1p", "sigmoid"])
@pytest.mark.parametrize("shape, strides", [
    ((20, 20), (0, 1)), ((3, 4, 5), (0, 5, 1)), ((3, 4, 5), (0, 1, 4)), ((3, 4, 5), (20, 0, 1)),
    ((4, 5), (1, 4)), ((2, 3, 4), (1, 2, 6))])
def test_an_elementwise_result_takes_torchs_layout(op, shape, strides):
    t = torch.as_strided(torch.arange(100, dtype=torch.float64) / 100, shape, strides)
    g = gradkit.as_strided(gradkit.arange(100, dtype=gradkit.float64) / 100, shape, strides)
    for a, b in ((t, g), (t.to(torch.complex128), g.to(gradkit.complex128))):
        if op == "erf" and a.is_complex():
            continue
        expected, got = getattr(torch, op)(a), getattr(gradkit, op)(b)
        assert (got.stride(), got.is_contiguous()) == (expected.stride(), expected.is_contiguous())
        np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-12)


@pytest.mark.parametrize("name", ["true_divide", "pow", "polar", "special.zeta", "complex"])
def test_a_binary_elementwise_result_takes_torchs_layout(name):
    t = torch.arange(1., 51.).reshape(5, 10).t()
    tf, gf = torch, gradkit
    for part in name.split("."):
        tf, gf = getattr(tf, part), getattr(gf, part)
    pairs = [(t, t + 1)] if name in ("polar", "special.zeta", "complex") else [
        (t, t.to(torch.complex128) * (1 + 1j)), (t.to(torch.complex128), t + 1j)]
    for a, b in pairs:
        expected, got = tf(a, b), gf(same_layout(a), same_layout(b))
        assert got.stride() == expected.stride()


def test_median_of_an_expanded_dim_is_the_contiguous_copys():
    """Known, torch wrong: torch 2.13's median (nanmedian) along an expanded dim reads past
    the input (values of other rows, even uninitialized memory); gradkit's is the median of
    the same values laid out contiguously."""
    t = torch.tensor([[1., 5., 3., 2.]]).expand(3, 4)
    g = same_layout(t)
    for f in ("median", "nanmedian"):
        expected = getattr(t.contiguous(), f)(0)
        got = getattr(g, f)(0)
        np.testing.assert_array_equal(got.values.numpy(), expected.values.numpy())
        np.testing.assert_array_equal(got.indices.numpy(), expected.indices.numpy())


@pytest.mark.parametrize("name", ["sum", "mean", "amax", "prod", "all", "any", "nansum",
                                  "count_nonzero"])
def test_a_reductions_result_is_c_ordered_with_torchs_strides(name):
    """torch allocates a reduction's result C-contiguous, its size-1 dims' strides too."""
    t = torch.arange(60.).reshape(3, 5, 4).transpose(-1, -2)
    g = same_layout(t)
    for dim in range(3):
        keep = {} if name == "count_nonzero" else {"keepdim": True}
        expected, got = getattr(torch, name)(t, dim, **keep), getattr(gradkit, name)(g, dim, **keep)
        assert got.stride() == expected.stride()


@pytest.mark.parametrize("shape, strides", [
    ((3, 4, 5), (0, 1, 4)), ((3, 4, 5), (0, 5, 1)), ((20, 20), (0, 1)), ((3, 4), (0, 0)),
    ((2, 3, 4), (1, 2, 6))])
def test_to_another_dtype_keeps_an_expanded_inputs_order_as_torch(shape, strides):
    t = torch.as_strided(torch.arange(100.), shape, strides)
    g = same_layout(t)
    for dtype in ("complex128", "float64", "int64"):
        assert g.to(getattr(gradkit, dtype)).stride() == t.to(getattr(torch, dtype)).stride()


def test_resize_of_a_conj_view_stays_a_view_of_its_base():
    """A resized conj view kept its old shape in ``detach()`` (and its writes missed the
    base): its chain of views did not know the resize."""
    t, g = torch.randn(5, 5, 5, dtype=torch.complex128), gradkit.randn(5, 5, 5,
                                                                      dtype=gradkit.complex128)
    tv, gv = t.conj(), g.conj()
    tv.resize_((25, 5))
    gv.resize_((25, 5))
    assert gv.detach().shape == tv.detach().shape == (25, 5) and gv.is_conj()
    tv[0, 0], gv[0, 0] = 1 + 2j, 1 + 2j
    assert complex(g.view(25, 5)[0, 0]) == complex(t.view(25, 5)[0, 0]) == 1 - 2j


@pytest.mark.parametrize("shape, strides", [
    ((2, 3), (1, 2)), ((2, 3), (3, 1)), ((2, 4, 5, 3), (60, 5, 1, 20)),
    ((2, 3, 4, 5), (60, 1, 15, 3)), ((2, 3, 5, 4), (60, 20, 1, 5)),
    ((2, 3, 4, 5, 6), (360, 1, 90, 18, 3)), ((3, 4), (0, 1))])
@pytest.mark.parametrize("fmt", ["contiguous_format", "channels_last", "channels_last_3d"])
def test_to_a_memory_format_aliases_where_torch_does(shape, strides, fmt):
    """torch's to() returns self when the dtype stays and self suggests the format asked
    for (a transposed matrix is "contiguous_format"'s): the opinfo scan's ``double`` with
    memory_format=torch.contiguous_format; a copy laid out so otherwise."""
    t = torch.as_strided(torch.zeros(1000, dtype=torch.float64), shape, strides)
    g = same_layout(t)
    try:
        expected = t.to(torch.float64, memory_format=getattr(torch, fmt))
    except RuntimeError:
        with pytest.raises(RuntimeError):
            g.to(gradkit.float64, memory_format=getattr(gradkit, fmt))
        return
    got = g.to(gradkit.float64, memory_format=getattr(gradkit, fmt))
    assert (got is g, got.stride()) == (expected is t, expected.stride())


def test_take_along_dim_without_dim_of_a_transposed_input():
    """Known, torch's wart: without ``dim`` torch flattens the input with ``view(-1)``, which
    refuses a non-contiguous one; gradkit flattens as ``reshape`` and gives the result of the
    contiguous copy."""
    x = torch.randn(5, 5, dtype=torch.float64).t()
    index = torch.tensor([[0, 7], [24, 3], [9, 11]])
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        torch.take_along_dim(x, index)
    got = gradkit.take_along_dim(same_layout(x), same_layout(index))
    np.testing.assert_array_equal(got.numpy(), torch.take_along_dim(x.contiguous(), index).numpy())


def test_native_group_norm_of_a_transposed_input():
    """Known, torch's wart: the aten op ``native_group_norm`` requires a contiguous input
    (``F.group_norm`` makes it so); gradkit's computes the contiguous copy's result."""
    x = torch.randn(2, 6, 5, dtype=torch.float64).transpose(-1, -2)
    with pytest.raises(RuntimeError, match="Expected X.is_contiguous"):
        torch.native_group_norm(x, None, None, 2, 5, 6, 5, 1e-5)
    expected = torch.native_group_norm(x.contiguous(), None, None, 2, 5, 6, 5, 1e-5)
    got = gradkit.native_group_norm(same_layout(x), None, None, 2, 5, 6, 5, 1e-5)
    for a, b in zip(got, expected):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-12)


def test_batch_norm_refuses_expanded_running_stats():
    """Known: torch's training batch_norm writes its running statistics into an expanded
    (stride-0) tensor, each element over the one before; gradkit refuses that write as torch
    refuses other in-place writes into overlapping memory."""
    x = torch.randn(4, 3, dtype=torch.float64)
    mean, var = (torch.full((1,), v, dtype=torch.float64).expand(3) for v in (0.0, 1.0))
    torch.nn.functional.batch_norm(x, mean, var, training=True)  # computes
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        gradkit.nn.functional.batch_norm(same_layout(x), same_layout(mean), same_layout(var),
                                         training=True)


def test_stft_gradient_of_an_expanded_input():
    """Known: torch's stft unfolds its input with ``as_strided``, whose backward spreads the
    gradient of overlapping (stride-0) elements evenly over them; gradkit gives each element
    its own gradient, the contiguous copy's (the totals agree)."""
    x = torch.tensor([1.5], dtype=torch.float64).expand(10)
    w = torch.randn(4, 4, dtype=torch.complex128, generator=torch.Generator().manual_seed(0))

    def grad(lib, x, weights):
        x = x.detach().requires_grad_()
        (lib.stft(x, 7, center=False, return_complex=True, window=lib.ones(7, dtype=x.dtype))
         * weights).real.sum().backward()
        return x.grad.numpy()
    expected = grad(torch, x, w)
    got = grad(gradkit, same_layout(x), gradkit.tensor(w.numpy()))
    np.testing.assert_allclose(got, grad(torch, x.contiguous(), w), rtol=1e-12)
    np.testing.assert_allclose(got.sum(), expected.sum(), rtol=1e-12)
    assert np.ptp(expected) == 0 and np.ptp(got) > 0


def _singular_ex(m, fn, a, b, t_a):
    """fn's value, A's gradient, and its tangent along ``t_a``, of a batch whose first matrix is
    singular; the error (its type's name) where create_graph refuses, as torch's."""
    leaf = m.tensor(a, requires_grad=True)
    out = fn(m, leaf, m.tensor(b))
    weight = m.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)))
    grad, = m.autograd.grad((out * weight).sum(), [leaf])
    try:
        m.autograd.grad((out * weight).sum(), [leaf], create_graph=True)
        refused = None
    except RuntimeError as e:
        refused = type(e).__name__.lstrip("_")
    fwd = m.autograd.forward_ad
    with fwd.dual_level():
        tangent = fwd.unpack_dual(fn(m, fwd.make_dual(m.tensor(a), m.tensor(t_a)),
                                     m.tensor(b))).tangent
    return out.detach().numpy(), grad.numpy(), tangent.numpy(), refused


@pytest.mark.parametrize("fn", [lambda m, a, b: m.linalg.inv_ex(a).inverse,
                                lambda m, a, b: m.linalg.solve_ex(a, b).result,
                                lambda m, a, b: m.linalg.solve_ex(a, b[..., 0]).result],
                         ids=["inv_ex", "solve_ex", "solve_ex_vector"])
@pytest.mark.parametrize("singular", [[[0., 0.], [0., 1.]], [[1., 2.], [2., 4.]],
                                      [[0., 0.], [0., 0.]]])
def test_ex_forms_differentiate_their_failed_matrices_as_torch(fn, singular):
    """torch's inv_ex/solve_ex nodes run inv's and solve's formulas over every matrix, the
    failed ones too (through the NaN/inf inverse, or A's LU unchecked); create_graph solves
    anew and raises for solve_ex; gradkit gave the failed matrices 0 (opinfo_layout scan)."""
    a = np.stack([np.array(singular), 2.5 * np.eye(2)])
    b, t_a = np.array([[[1.], [2.]], [[3.], [4.]]]), np.linspace(-1, 1, 8).reshape(2, 2, 2)
    with np.errstate(all="ignore"):
        expected, got = (_singular_ex(m, fn, a, b, t_a) for m in (torch, gradkit))
    for e, g in zip(expected[:3], got[:3]):
        np.testing.assert_allclose(g, e, rtol=1e-12)  # NaN and inf where torch's are
    assert got[3] == expected[3]


def test_inv_ex_of_a_matrix_singular_to_openblas_only_returns_as_torch():
    """1..9 in a 3x3: getrf's rounding (gradkit's, MKL's) leaves no zero pivot, so info is 0 as
    torch's, but OpenBLAS's inverse meets an exact 0; inv_ex raised it. Now it returns getrf's
    substitution: finite rounding noise of 1e15 (torch's is other noise of that size)."""
    a = np.stack([np.arange(1., 10.).reshape(3, 3), np.eye(3)])
    with np.errstate(all="ignore"):
        expected, got = (m.linalg.inv_ex(m.tensor(a)) for m in (torch, gradkit))
    assert got.info.tolist() == expected.info.tolist() == [0, 0]
    assert np.isfinite(got.inverse.numpy()).all() and np.abs(got.inverse.numpy()[0]).min() > 1e14
    np.testing.assert_allclose(got.inverse.numpy()[1], expected.inverse.numpy()[1])
