"""More programs the differential fuzzer (tests/fuzz) found gradkit and torch to disagree on,
each run in both (the seed that found it in the test's comment); the first ones are in
test_torch_fuzz_found.py."""
import warnings

import pytest
from test_torch_numerics import assert_same_as_torch

import gradkit

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("unset", ["detach_", "requires_grad_false"])
def test_saved_leaf_detached_in_place_still_reaches_its_accumulator(unset):
    """A leaf saved for backward, then ``detach_()``-ed (or ``requires_grad_(False)``):
    torch's SavedVariable gives its data on the leaf's accumulator, so the create_graph
    gradient requires grad and double backward runs (seed 673161)."""
    def program(m):
        a = m.tensor([1.0, -2.0, 3.0], dtype=m.float64, requires_grad=True)
        w = m.tensor([[1.0, 2.0, 0.5], [0.0, -1.0, 4.0], [2.0, 1.0, 1.0]], dtype=m.float64,
                     requires_grad=True)
        out = m.matmul(a, w)
        a.detach_() if unset == "detach_" else a.requires_grad_(False)
        (gw,) = m.autograd.grad(out.sum(), [w], create_graph=True)
        assert gw.requires_grad
        (ggw,) = m.autograd.grad((gw * gw).sum(), [w], allow_unused=True,
                                 materialize_grads=True)
        return gw, ggw, m.tensor(a.grad is None)
    assert_same_as_torch(program)


def test_saved_leaf_whose_accumulator_died_raises_as_torch():
    """The saved leaf's accumulator is gone once nothing in the graph reaches it."""
    a = gradkit.tensor([1.0, 2.0], requires_grad=True)
    node = (a * a).grad_fn
    a.detach_()
    saved = node.saved[0]
    del node
    with pytest.raises(RuntimeError, match="No grad accumulator for a saved leaf"):
        saved.unpack(None, True)


@pytest.mark.parametrize("cast", [
    lambda m, x, z: x.__setitem__(slice(None, None, 2), z),
    lambda m, x, z: x[:2].copy_(z),
    lambda m, x, z: z.to(m.float32),
    lambda m, x, z: z.float(),
], ids=["setitem", "copy_", "to", "float"])
def test_complex_to_real_casts_warn_once_as_torch(cast, monkeypatch):
    """torch warns (once per process) that a complex to real cast drops the imaginary part;
    gradkit says so too, at the user's line (found beside seed 667186)."""
    from gradkit import _user_frames
    monkeypatch.setattr(_user_frames, "_warned_once", set())
    x, z = gradkit.zeros(4), gradkit.tensor([1 + 2j, 3j])
    with pytest.warns(UserWarning, match="^Casting complex values to real discards the "
                      "imaginary part$") as caught:
        cast(gradkit, x, z)
    assert caught[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cast(gradkit, x, z)  # once per process, as torch's TORCH_WARN_ONCE


def test_complex_to_real_setitem_with_an_advanced_key_raises_without_warning(monkeypatch):
    from gradkit import _user_frames
    monkeypatch.setattr(_user_frames, "_warned_once", set())
    for m in (torch, gradkit):
        x = m.zeros(2)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with pytest.raises(RuntimeError, match="Index put requires the source and "
                               "destination dtypes match"):
                x[m.tensor([0])] = m.tensor([1 + 1j])


def test_complex_to_bool_is_non_zero_without_warning():
    def program(m):
        z = m.tensor([1j, 0j, 2.5 + 0j, complex("nan")])
        into = m.zeros(4, dtype=m.bool)
        into.copy_(z)
        return z.bool(), into
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_same_as_torch(program)


def test_complex_self_division_is_exactly_one_where_torch_leaves_a_tiny_imaginary_part():
    """Documented (docs/numerics.md): torch's vectorized complex division gives x / x a tiny
    imaginary part; gradkit's is exactly 1, so log then pow give 0 where torch's is finite
    (seeds 629909 and the infinite-factor ones)."""
    def chain(m):
        x = m.tensor(2.5 + 0.1j, dtype=m.complex128)
        one = m.div(x, x)
        return one, m.pow(m.log(one), m.tensor(0.1, dtype=m.complex128))
    theirs, mine = chain(torch), chain(gradkit)
    assert mine[0].real.item() == theirs[0].real.item() and mine[0].imag.item() == 0
    assert 0 < abs(theirs[0].imag.item()) < 1e-12
    assert mine[1].item() == 0 and abs(theirs[1].item()) > 1e-3


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("loss", [
    lambda m, x: m.linalg.svdvals(x).sum(),
    lambda m, x: m.linalg.matrix_norm(x, "nuc"),
    lambda m, x: m.linalg.cond(x, "nuc"),
], ids=["svdvals", "nuc", "cond_nuc"])
def test_singular_values_gradient_is_finite_at_repeated_values(loss, dtype):
    """Only the singular values reach the loss: torch's svd_backward takes U diag(gS) Vh,
    with no division by s_j² - s_i² (NaN at repeated values before; breadth seed 814)."""
    def program(m):
        x = m.tensor([[2.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 1.0]],
                     dtype=getattr(m, dtype), requires_grad=True)
        (g,) = m.autograd.grad(loss(m, x), x, create_graph=True)
        return (g,)
    assert_same_as_torch(program, atol=1e-12)


def test_writing_a_slice_into_the_transpose_reads_the_old_values():
    """Documented (docs/numerics.md): torch copies ``x[:, :1]`` (broadcast) into ``x.t()``
    element by element, reading elements it already wrote; gradkit copies the old values,
    as a clone of the slice would in both (seed 751622)."""
    def write(m, value_of):
        x = m.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]])
        x.t()[:] = value_of(x[:, :1])
        return x.tolist()
    expected = write(torch, lambda x: x.clone())
    assert write(gradkit, lambda x: x) == expected == write(gradkit, lambda x: x.clone())
    assert write(torch, lambda x: x) != expected


_EDGES = [float("-inf"), -0.0, 0.0, 3.0, -2.0, float("inf"), float("nan")]


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("power", [
    lambda m, x, d: x ** m.tensor(0.5, dtype=d),
    lambda m, x, d: x ** m.tensor([0.5], dtype=d),
    lambda m, x, d: x.reshape(-1, 1) ** m.tensor([0.5, 2.0], dtype=d),
    lambda m, x, d: m.pow(float("-inf"), x * 0 + 0.5),
    lambda m, x, d: x ** 0.5,
    lambda m, x, d: x ** -0.5,
], ids=["0d_exponent", "broadcast_exponent", "row_exponent", "number_base", "number_half",
        "number_minus_half"])
def test_powers_of_one_half_at_minus_inf_and_minus_zero(power, dtype):
    """A tensor exponent of 0.5 is C's pow in torch (inf at -inf, +0 at -0.0), where NumPy took
    sqrt for a broadcast exponent (seed 784459); float16's number powers are pow too."""
    def program(m):
        d = getattr(m, dtype)
        return (power(m, m.tensor(_EDGES, dtype=d), d),)
    assert_same_as_torch(program)


@pytest.mark.parametrize("read_grad_fn_first", [False, True])
def test_write_into_a_view_made_stale_by_a_write_into_its_base(read_grad_fn_first):
    """Documented (docs/autograd.md): torch's in-place check reads a stale view's grad_fn
    field and refuses the write as for a leaf, unless grad_fn was read first; gradkit writes
    (seeds 819026, 852562)."""
    def write(m):
        a = m.tensor(0.5, requires_grad=True)
        base = m.zeros(3)
        view = base[1:]
        base[0] = a * 2  # the base gains a history through another write
        if read_grad_fn_first:
            assert view.grad_fn is not None
        view.mul_(3)
        (g,) = m.autograd.grad(base.sum(), a)
        return g.item()
    assert write(gradkit) == 2.0
    if read_grad_fn_first:
        assert write(torch) == 2.0
    else:
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            write(torch)


_NO_DEGREES_OF_FREEDOM = [
    ("var", lambda m: m.tensor([1.0]).var()),
    ("std", lambda m: m.tensor([1.0]).std()),
    ("var_mean", lambda m: m.var_mean(m.tensor([1.0]))),
    ("std_mean", lambda m: m.std_mean(m.tensor([[1.0, 2.0]]), 0)),
    ("var", lambda m: m.tensor([1.0, 2.0]).var(correction=2)),
    ("var", lambda m: m.zeros(0, 2).var(1)),
    (None, lambda m: m.tensor([1.0, 2.0]).var()),
    (None, lambda m: m.tensor([1.0]).var(correction=0)),
]


@pytest.mark.parametrize("name,call", _NO_DEGREES_OF_FREEDOM)
def test_variance_without_degrees_of_freedom_warns_torchs_text(name, call):
    """torch's UserWarning (not NumPy's RuntimeWarnings) when n <= correction, at the
    user's line; the values are torch's NaN or inf."""
    texts = {}
    for m in (torch, gradkit):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            call(m)
        texts[m] = [str(w.message).split(" (Triggered internally")[0] for w in caught]
        if m is gradkit:
            assert all(w.category is UserWarning and w.filename == __file__ for w in caught)
    assert texts[gradkit] == texts[torch]
    assert bool(texts[torch]) == (name is not None)
    if name:
        assert texts[gradkit][0].startswith(f"{name}(): degrees of freedom is <= 0.")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same_as_torch(lambda m: tuple(m.atleast_1d(t) for t in (
            call(m) if isinstance(call(m), tuple) else (call(m),))))


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_sgn_second_derivative_at_zero_is_nan_as_torch(dtype):
    """torch's sgn_backward divides by |z| before masking the zero: its second derivative at
    z = 0 is NaN (breadth seed 14453); the first derivative there is 0 in both."""
    def program(m):
        z = m.tensor([0j, 1 + 2j, -3j], dtype=getattr(m, dtype), requires_grad=True)
        (g,) = m.autograd.grad((m.sgn(z) * (1 + 2j)).real.sum(), z, create_graph=True)
        (gg,) = m.autograd.grad((g * g.conj()).real.sum() + g.real.sum(), z)
        return g, gg
    assert_same_as_torch(program, rtol=1e-5)


@pytest.mark.parametrize("dtype", ["float64"])
def test_svd_of_infinite_entries_is_nan_as_torch(dtype):
    """NumPy's gesdd may not converge on an infinite entry (LinAlgError); torch's MKL gives NaN
    singular values (breadth seed 14785; on some matrices, float32 and complex ones here, MKL
    gives up too, with its error code: docs/numerics.md's LAPACK-at-non-finite difference)."""
    def program(m):
        x = m.diagflat(m.tensor([0.7, -float("inf"), -float("inf")], dtype=getattr(m, dtype)), 2)
        return (m.linalg.svdvals(x),)  # (torch's svd with vectors raises "error code: 2" here)
    assert_same_as_torch(program)


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("loss", [
    lambda m, x: (m.linalg.eigvalsh(x) * m.tensor([1.0, 2.0, 3.0], dtype=m.float64)).sum(),
    lambda m, x: m.linalg.eigvalsh(x, UPLO="U").pow(2).sum(),
], ids=["weighted", "squares_upper"])
def test_eigenvalues_gradient_is_finite_at_repeated_values(loss, dtype):
    """Only the eigenvalues reach the loss: torch's eigh backward takes V diag(gL) V^H, with no
    division by L_j - L_i (NaN at repeated eigenvalues before; breadth seeds 15726, 17842)."""
    def program(m):
        x = m.tensor([[2.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 1.0]],
                     dtype=getattr(m, dtype), requires_grad=True)
        (g,) = m.autograd.grad(loss(m, x), x, create_graph=True)
        return (g,)
    assert_same_as_torch(program, atol=1e-12)
