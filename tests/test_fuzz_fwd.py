"""The fuzzer's ``fwd`` class (tests/fuzz/transforms.py: op chains under forward-mode AD and
torch.func transforms) and what it found, each program run in gradkit and torch (its seed in
the test's docstring)."""
import math
import warnings

import numpy as np
import pytest
from fuzz.known import check, diff_program
from fuzz.programs import RandomDrawer, generate
from test_torch_numerics import assert_same_as_torch

import gradkit


torch = pytest.importorskip("torch")


def _tangents_after(m, make_output, write):
    """The tangents of a dual ``x`` and of ``make_output(x)`` after ``write`` into the
    output in place."""
    fw = m.autograd.forward_ad
    with fw.dual_level():
        x = fw.make_dual(m.tensor([3.0, -0.5], dtype=m.float64),
                         m.tensor([1.0, 2.0], dtype=m.float64))
        y = make_output(x)
        write(y)
        return fw.unpack_dual(x).tangent, fw.unpack_dual(y).tangent, fw.unpack_dual(y).primal


@pytest.mark.parametrize("make_output", [lambda x: x.clone(), lambda x: x + 1,
                                         lambda x: x.sub(x.detach()), lambda x: x * 1])
@pytest.mark.parametrize("write", [lambda y: y.sigmoid_(), lambda y: y.mul_(2)])
def test_in_place_write_into_an_output_leaves_the_inputs_tangent_alone(make_output, write):
    """An op whose jvp passes its input's tangent through (clone, x + 1) gave the output that
    very tangent, so an in-place write into the output updated the input's tangent too
    (seed 212: clone then sigmoid_ of a complex dual)."""
    assert_same_as_torch(lambda m: _tangents_after(m, make_output, write))
    program = generate(RandomDrawer(212), "fwd")
    assert program.transform == "dual" and check(program) == []


def test_jacfwd_blocks_have_the_outputs_dtype():
    """jacfwd's blocks are tangents of the outputs: a float32 output's block for a float64
    input is float32, a float64 output's for a float32 input float64 (seed 244)."""
    def program(m):
        def f(a, b):
            return a * 2, b.sin(), (a + b.double()).sum()
        a = m.tensor([[0.5]], dtype=m.float64)
        b = m.tensor([0.25], dtype=m.float32)
        forward = m.func.jacfwd(f, argnums=(0, 1))(a, b)
        reverse = m.func.jacrev(f, argnums=(0, 1))(a, b)
        return tuple(block for per_output in (*forward, *reverse) for block in per_output)
    assert_same_as_torch(program)
    assert check(generate(RandomDrawer(244), "fwd")) == []


def _write_into_inner_input(m, transform, write, through_view):
    def f(x):
        return write(x[0:1] if through_view else x).sum()
    x = m.tensor([0.5, 1.5], dtype=m.float64)
    if transform == "hessian":
        return m.func.hessian(f)(x)
    if transform == "jvp_of_grad":
        return m.func.jvp(m.func.grad(f), (x,), (m.ones(2, dtype=m.float64),))
    return m.func.grad(f)(x.requires_grad_())


@pytest.mark.parametrize("transform", ["hessian", "jvp_of_grad", "grad_of_a_graph_input"])
@pytest.mark.parametrize("through_view", [False, True])
@pytest.mark.parametrize("write", [lambda x: x.sigmoid_(), lambda x: x.mul_(2),
                                   lambda x: x.zero_()])
def test_reverse_transform_input_is_a_leaf_to_in_place_writes(transform, write, through_view):
    """grad's (and jacrev's) input is a leaf at its level: an in-place write into it, or into
    a view of it, is torch's leaf error also when the input has a graph (inside jvp, jacfwd
    or reverse mode), where gradkit's input is a view of the caller's tensor (seed 34)."""
    assert_same_as_torch(lambda m: _write_into_inner_input(m, transform, write, through_view))
    with pytest.raises(RuntimeError, match="^a view of a leaf Variable" if through_view
                       else "^a leaf Variable that requires grad"):
        _write_into_inner_input(gradkit, transform, write, through_view)
    assert check(generate(RandomDrawer(34), "fwd")) == []


def _known_as(seed: int) -> str | None:
    problems, known = diff_program(generate(RandomDrawer(seed), "fwd"))
    assert problems
    return known


def test_captured_write_is_seen_when_the_function_returns():
    """Known difference (docs/func.md, "so unlike torch the write has happened"; seed 63):
    torch refuses a write into a captured tensor at the write, gradkit after the call."""
    assert _known_as(63).startswith("a write into a captured tensor under a transform")
    for m in (torch, gradkit):
        w = m.zeros(2, dtype=m.float64)
        with pytest.raises(RuntimeError, match="would mutate a captured Tensor"):
            m.func.jvp(lambda x, w=w: w.add_(1.0) * x, (m.ones(2, dtype=m.float64),),
                       (m.ones(2, dtype=m.float64),))
        assert w.tolist() == ([0.0, 0.0] if m is torch else [1.0, 1.0])


def test_vmap_refuses_a_write_into_an_unmapped_tensor_torch_allows():
    """Known difference (docs/func.md, "and allows them otherwise"; seed 117): torch's vmap
    lets a write whose value does not depend on the mapped inputs run once."""
    assert _known_as(117) == "vmap refuses every write into an unmapped or captured tensor"

    def program(m):
        w = m.zeros(2, dtype=m.float64)
        return m.func.vmap(lambda x, w: w.add_(1.0) + x, in_dims=(0, None))(
            m.ones(3, 2, dtype=m.float64), w)
    assert program(torch).tolist() == [[2.0, 2.0]] * 3
    with pytest.raises(RuntimeError, match="wrote in place into a tensor it captured"):
        program(gradkit)


def test_jvp_of_a_saved_value_written_in_place_is_forward_mode():
    """gradkit's jvp runs forward mode, as torch's (seed 106 was the Known "jvp ... reverse
    mode" while it was a double backward pass): exp's output written in place has its tangent
    where a backward pass refuses the saved value written in place."""
    def program(m):
        def f(x):
            y = x.exp()
            y.mul_(2)
            return y
        return m.func.jvp(f, (m.tensor([0.5], dtype=m.float64),),
                          (m.ones(1, dtype=m.float64),))
    assert_same_as_torch(program)
    assert program(gradkit)[1].tolist() == [2 * math.exp(0.5)]


def _no_grad_square(m):
    def f(x):
        with m.no_grad():
            return x * x
    x = m.tensor([-0.5], dtype=m.float64)
    return m.func.jacfwd(f)(x), m.func.jacrev(f)(x)


def test_no_grad_inside_jacfwd_does_not_stop_the_tangent():
    """jacfwd runs forward mode, as torch's: no_grad() inside stops jacrev's derivative, not
    jacfwd's, and floor_divide's missing forward formula raises (seeds 867, 449: a Known
    while gradkit's jacfwd was reverse mode)."""
    assert_same_as_torch(_no_grad_square)
    assert [j.tolist() for j in _no_grad_square(gradkit)] == [[[-1.0]], [[0.0]]]
    for m in (torch, gradkit):
        with pytest.raises(NotImplementedError, match="forward AD with aten::floor_divide"):
            m.func.jacfwd(lambda x, m=m: x // x)(m.tensor([1.5], dtype=m.float64))
    for seed in (867, 449):
        assert check(generate(RandomDrawer(seed), "fwd")) == []


def test_torch_gives_a_single_precision_output_a_double_tangent():
    """Known difference (docs/func.md, "a double-precision tangent for a single-precision
    output"; seed 378): under torch.func.jvp a 0-d float32 tensor times a Python number has a
    float64 tangent (under forward_ad.dual_level it is float32); gradkit's is float32."""
    assert _known_as(378) == "torch's forward transforms give some single-precision tangents " \
        "a double dtype"
    for m, dtype in ((torch, torch.float64), (gradkit, gradkit.float32)):
        x, t = m.tensor(0.5), m.tensor(1.0)
        _, tangent = m.func.jvp(lambda x: x * 2.0, (x,), (t,))
        assert tangent.dtype == dtype and tangent.item() == 2.0


def _jvp_of_grad_of_an_indexed_quotient(m):
    """jvp of grad through (c / (x + 0.5))[[0, 0]] ** 2 at a 0-d float32 x (torch: a float64
    tangent of x + 0.5, so a complex128 one of the quotient)."""
    weights = m.tensor([1 + 1j, 1j], dtype=m.complex64)

    def loss(x, c):
        v = (c / (x + 0.5)).flatten()[m.tensor([0, 0])]
        return (v * v * weights).sum().real
    x, c = m.tensor(0.25), m.tensor(0.2j, dtype=m.complex64)
    return m.func.jvp(m.func.grad(loss, argnums=(0, 1)), (x, c), (m.tensor(0.5), c))[1]


def test_torch_index_put_refuses_its_double_tangent_under_jvp_of_grad():
    """Known difference (docs/func.md, "scatter such a tangent into single-precision zeros";
    fwd seed 312638): torch's complex128 tangent of a complex64 quotient reaches index's
    backward, whose index_put refuses it; gradkit's tangents keep their outputs' dtypes."""
    known = "torch's double tangent of a single-precision output reaches an index_put, " \
        "index_add or scatter, which refuses it"
    assert _known_as(312638) == _known_as(335948) == known  # (335948: max's scatter)
    with pytest.raises(RuntimeError, match="got ComplexFloat for the destination and "
                                           "ComplexDouble for the source"):
        _jvp_of_grad_of_an_indexed_quotient(torch)
    tangents = _jvp_of_grad_of_an_indexed_quotient(gradkit)
    assert [t.dtype for t in tangents] == [gradkit.float32, gradkit.complex64]
    assert np.isfinite([complex(t) for t in tangents]).all()


def _gelu_of_a_scaled_square(m, one):
    def f(x):
        v = (x * one).expand(2)
        return m.nn.functional.gelu(v * v)
    return f


def _dot_of_a_log_beside_its_input(m, half):
    def f(z):
        v = m.stack([m.log(z.abs() + half), z])
        return m.einsum("i,i->", v, v)
    return f


@pytest.mark.parametrize("make, primal, tangent, message", [
    (_gelu_of_a_scaled_square, 0.877, 0.5, "itensor_view_from_dense expects"),
    (_dot_of_a_log_beside_its_input, 0.3 - 0.4j, 0.5 + 0.25j,
     "expected scalar type ComplexFloat but found ComplexDouble")])
def test_torch_kernel_refuses_its_double_tangent_of_a_0d_single_result(make, primal, tangent,
                                                                         message):
    """Known difference (docs/func.md, "oneDNN `gelu` kernel and `einsum`'s dot"; fwd seeds
    464720, 487394): under torch's jvp a 0-d single-precision tensor times (plus) a Python
    number has a double tangent, which gelu's oneDNN kernel and einsum's dot refuse beside
    single-precision values; gradkit's tangent keeps the dtype and is torch's own when the
    number is a 0-d tensor instead."""
    dtype = "complex64" if isinstance(primal, complex) else "float32"
    number = 0.5 if make is _dot_of_a_log_beside_its_input else 1.0

    def jvp(m, scale):
        return m.func.jvp(make(m, scale), (m.tensor(primal, dtype=getattr(m, dtype)),),
                          (m.tensor(tangent, dtype=getattr(m, dtype)),))[1]
    with pytest.raises(RuntimeError, match=message):
        jvp(torch, number)
    ours, theirs = jvp(gradkit, number), jvp(torch, torch.tensor(number))
    assert str(ours.dtype).split(".")[-1] == dtype
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)  # (gelu's ulp)
    assert _known_as(464720) == _known_as(487394) == "torch's double tangent of a " \
        "single-precision 0-d result reaches a kernel that refuses it (gelu's oneDNN one, " \
        "einsum's dot)"


def test_torch_vmap_refuses_an_index_put_with_separated_advanced_indices():
    """Known difference (docs/func.md, "a tensor computed from the mapped inputs (torch:"; fwd
    seed 485769): a write through x[index, 1::2, []] (advanced indices around a slice, so the
    indexed dims move to the front) runs on one sample, but torch's batched index_put
    misplaces the batch dim and refuses the value's shape; gradkit's per-sample vmap runs it
    (and the program's later view_as_real of a real tensor then fails in both)."""
    def f(m):
        def write(x):
            x = x.clone()
            x[m.tensor([], dtype=m.int64), 1::2, []] = m.zeros(0, 1, dtype=x.dtype)
            return x
        return write
    x = np.zeros((2, 3, 2, 0))
    assert tuple(f(torch)(torch.tensor(x[0])).shape) == (3, 2, 0)
    with pytest.raises(RuntimeError, match="cannot be broadcast to indexing result"):
        torch.vmap(f(torch))(torch.tensor(x))
    assert tuple(gradkit.vmap(f(gradkit))(gradkit.tensor(x)).shape) == (2, 3, 2, 0)
    assert _known_as(485769) == "torch's vmap refuses what its batched tensors cannot do " \
        "(.item(), detach_())"


def test_one_element_dim_stride_write_under_vmap_is_known():
    """Known difference (docs/numerics.md, "decided on the strides of the dims with more";
    fwd seed 312729): under vmap torch refuses v %= v[0:1:2] of a one-element dim as a partial
    overlap; gradkit runs it, then refuses the program's write into an unmapped tensor."""
    assert _known_as(312729) == "an in-place op between views differing in a one-element " \
        "dim's stride runs"


def _pow_tangent(m):
    fw = m.autograd.forward_ad
    with fw.dual_level():
        base = fw.make_dual(m.tensor([1.3, 0.7], dtype=m.float64),
                            m.tensor([0.5, -1.0], dtype=m.float64))
        exponent = m.tensor([0.3 + 0.4j, -0.2 + 0.9j], dtype=m.complex128)
        return fw.unpack_dual(base ** exponent).tangent.numpy()


def test_torch_drops_the_imaginary_part_of_a_real_bases_pow_tangent():
    """Known difference (docs/autograd.md, "keeps only the real part of that operand's term";
    seed 406): d/dt (b + t v) ** z = z b ** (z - 1) v is complex; torch's is its real part."""
    for seed in (406, 12128):  # (12128: under jvp of grad, with torch's complex128 tangent)
        assert _known_as(seed).startswith("torch's jvp of a power with a real operand")
    b, v = np.array([1.3, 0.7]), np.array([0.5, -1.0])
    z = np.array([0.3 + 0.4j, -0.2 + 0.9j])
    exact = z * b ** (z - 1) * v
    np.testing.assert_allclose(_pow_tangent(gradkit), exact, rtol=1e-12)
    np.testing.assert_allclose(_pow_tangent(torch), exact.real, rtol=1e-12)


def test_torch_tangent_of_a_self_multiply_reads_the_updated_tangent():
    """Known difference (docs/autograd.md, "tangent it has already updated in place"; seed
    127): x.mul_(x) at x = 3 with tangent 1 has tangent 2 x = 6; torch's is x + x * x = 12."""
    assert _known_as(127) == "torch's tangent of x.mul_(x) reads the tangent it has already " \
        "updated"
    for m, expected in ((gradkit, 6.0), (torch, 12.0)):
        fw = m.autograd.forward_ad
        with fw.dual_level():
            x = fw.make_dual(m.tensor(3.0), m.tensor(1.0))
            x.mul_(x)
            assert fw.unpack_dual(x).tangent.item() == expected


def test_torch_tangent_of_a_multiply_by_a_view_of_its_target_is_known():
    """Known difference (docs/autograd.md, as above; fwd seed 508116): x.mul_(x.flatten()[0])
    of a 0-d dual: torch's tangent reads the operand (a view of x) after the write, t x + t x²
    (0.357 at x = 0.7, t = 0.3) for the derivative 2 x t (0.42)."""
    assert _known_as(508116) == "torch's tangent of x.mul_(x) reads the tangent it has " \
        "already updated"
    for m, expected in ((gradkit, 0.42), (torch, 0.357)):
        fw = m.autograd.forward_ad
        with fw.dual_level():
            x = fw.make_dual(m.tensor(0.7, dtype=m.float64), m.tensor(0.3, dtype=m.float64))
            x = x * 1
            x.mul_(x.flatten()[0])
            assert fw.unpack_dual(x).tangent.item() == pytest.approx(expected, rel=1e-12)


def test_torch_tangent_of_a_multiply_into_a_view_of_its_operand_is_known():
    """Known difference (docs/autograd.md, as above; fwd seed 322131): y.squeeze().mul_(y)
    writes into a view of its own operand; torch's tangent reads the updated one there too."""
    assert _known_as(322131) == "torch's tangent of x.mul_(x) reads the tangent it has " \
        "already updated"
    for m, expected in ((gradkit, [6.0, 4.0]), (torch, [12.0, 6.0])):
        fw = m.autograd.forward_ad
        with fw.dual_level():
            y = fw.make_dual(m.tensor([3.0, 2.0]), m.tensor([1.0, 1.0])) * 1
            y.squeeze().mul_(y)
            assert fw.unpack_dual(y).tangent.tolist() == expected


@pytest.mark.parametrize("name", ["minimum", "maximum"])
def test_pairwise_extreme_tangent_is_torchs_at_ties_nan_and_inf(name):
    """torch's forward rule for maximum/minimum is t_y + w (t_x - t_y) (w 1/2 at ties, 1
    where x wins): at a NaN only y's tangent, where gradkit summed both (minimum(x, x) of a
    NaN had tangent 2 t: seed 5534; inf ties: seed 1119)."""
    def program(m):
        fw, nan, inf = m.autograd.forward_ad, float("nan"), float("inf")
        with fw.dual_level():
            x = fw.make_dual(m.tensor([1.0, 2.0, nan, inf, 3.0], dtype=m.float64),
                             m.tensor([1.0, 1.0, 1.0, 1.0, 2.0], dtype=m.float64))
            y = fw.make_dual(m.tensor([1.0, 3.0, 1.0, inf, nan], dtype=m.float64),
                             m.tensor([5.0, 7.0, 5.0, inf, 5.0], dtype=m.float64))
            plain = m.tensor([1.0, 1.5, nan, 0.0, 3.0], dtype=m.float64)
            return tuple(fw.unpack_dual(getattr(m, name)(a, b)).tangent
                         for a, b in ((x, x), (x, y), (y, x), (x, plain), (plain, x)))
    assert_same_as_torch(program)
    for seed in (5534, 1119):
        assert check(generate(RandomDrawer(seed), "fwd")) == []


def _detach_inside(m, transform):
    def f(x):
        x.detach_()
        return (x * x).sum()
    x = m.tensor([0.5, 1.5], dtype=m.float64)
    if transform == "jvp":
        return m.func.jvp(f, (x,), (m.ones(2, dtype=m.float64),))
    if transform == "hessian":
        return m.func.hessian(f)(x)
    return m.func.jvp(m.func.grad(f), (x,), (m.ones(2, dtype=m.float64),))


@pytest.mark.parametrize("transform", ["jvp", "hessian", "jvp_of_grad"])
def test_detach_in_place_of_a_transforms_input(transform):
    """jvp's input is a dual tensor, a view to torch: detach_() is "Can't detach views
    in-place" (seed 1134); grad's (jacrev's) is a leaf at its level, which detach_() may
    detach (its derivatives are then zeros), also inside jvp or jacfwd, where gradkit's input
    is a view of the caller's tensor (seed 296)."""
    if transform == "jvp":
        for m in (torch, gradkit):  # (torch's text goes on about DistributedDataParallel)
            with pytest.raises(RuntimeError,
                               match=r"^Can't detach views in-place\. Use detach\(\) instead\."):
                _detach_inside(m, transform)
    else:
        assert_same_as_torch(lambda m: _detach_inside(m, transform))
        assert not any(t.any() for t in _detach_inside(gradkit, transform))
    assert check(generate(RandomDrawer(1134 if transform == "jvp" else 296), "fwd")) == []


def test_torch_vmap_refuses_detach_of_a_batched_tensor():
    """Known difference (docs/func.md, "a tensor computed from the mapped inputs (torch:";
    seed 626): torch's vmap runs detach_() on a per-sample view and refuses."""
    assert _known_as(626) == "torch's vmap refuses what its batched tensors cannot do " \
        "(.item(), detach_())"
    with pytest.raises(RuntimeError, match="Can't detach views in-place"):
        torch.func.vmap(lambda x: (x * 2).detach_())(torch.ones(3, 2))
    assert gradkit.func.vmap(lambda x: (x * 2).detach_())(gradkit.ones(3, 2)).tolist() == \
        [[2.0, 2.0]] * 3


def test_torch_vmap_refuses_a_batched_write_into_an_unbatched_tensor_made_inside():
    """Known difference (docs/func.md, "a tensor computed from the mapped inputs (torch:";
    fwd seed 327785): w.reciprocal().add_(x) of an unmapped w and a mapped x: torch's vmap
    refuses the batched value as a broadcast error, gradkit's per-sample vmap adds."""
    assert _known_as(327785) == "torch's vmap refuses what its batched tensors cannot do " \
        "(.item(), detach_())"
    with pytest.raises(RuntimeError, match=r"output with shape \[2\] doesn't match the "
                                           r"broadcast shape \[3, 2\]"):
        torch.func.vmap(lambda x: torch.ones(2).reciprocal().add_(x))(torch.ones(3, 2))
    assert gradkit.func.vmap(lambda x: gradkit.ones(2).reciprocal().add_(x))(
        gradkit.ones(3, 2)).tolist() == [[2.0, 2.0]] * 3


def test_jacobians_of_an_empty_tensor_are_empty_blocks():
    """Known difference (docs/func.md, "The Jacobians of an empty input or output are empty
    blocks"; seed 3036): torch's jacfwd with has_aux of an empty input raises an IndexError."""
    assert _known_as(3036) == "torch's Jacobians of an empty tensor raise under its vmap or " \
        "backward"
    with pytest.raises(IndexError):
        torch.func.jacfwd(lambda x: (x * 2, x), has_aux=True)(torch.ones(2, 0))
    jacobian, aux = gradkit.func.jacfwd(lambda x: (x * 2, x), has_aux=True)(gradkit.ones(2, 0))
    assert jacobian.shape == (2, 0, 2, 0) and aux.shape == (2, 0)


def test_jacrev_of_several_outputs_is_one_backward_pass_as_torch():
    """torch's jacrev of several outputs is one (vmapped) backward pass: x ** x (NaN at x < 0)
    gives the block of x for x NaN in that column (seed 413, once a documented difference),
    and of two errors in the backward the latest node's is raised (fwd seed 8625: floor_divide
    has no derivative, an earlier exp's saved result was written in place)."""
    assert_same_as_torch(lambda m: m.func.jacrev(lambda x: (x, x ** x))(
        m.tensor([-0.5, 0.7], dtype=m.float64)))
    assert diff_program(generate(RandomDrawer(413), "fwd"))[0] == []

    def program(m):
        def f(x):
            exp = x.exp()
            exp.copy_(exp)
            return x, exp, x // x
        return m.func.jacrev(f)(m.tensor(2.5, dtype=m.float64))
    assert_same_as_torch(program)
    assert check(generate(RandomDrawer(8625), "fwd")) == []


def test_tangent_of_an_empty_mean_is_torchs_nan():
    """seed 4282 (a Known until the scanfwd lane): logsumexp's tangent over no elements is
    torch's 0/0 NaN, as gradkit takes torch's logsumexp_jvp. A mean's under jacfwd (seed
    3475) is torch's NaN since gradkit's jacfwd runs mean's forward formula."""
    assert check(generate(RandomDrawer(4282), "fwd")) == []
    for m in (gradkit, torch):
        fw = m.autograd.forward_ad
        with fw.dual_level():
            x = fw.make_dual(m.ones(0), m.ones(0))
            assert math.isnan(fw.unpack_dual(x.logsumexp(0)).tangent.item())
    # d mean(x) / d y of an empty x
    assert_same_as_torch(lambda m: m.func.jacfwd(lambda x, y: (x.mean(), y), argnums=(0, 1))(
        m.ones(0), m.ones(1))[0][1])
    assert check(generate(RandomDrawer(3475), "fwd")) == []


def test_no_grad_inside_jvp_does_not_stop_the_tangent():
    """Forward mode ignores grad mode: torch's jvp, and gradkit's since it runs on dual
    tensors, push the tangent through no_grad() (fwd seed 2759, a Known while gradkit's jvp
    was a backward pass)."""
    def program(m):
        def f(x):
            with m.no_grad():
                return x * 3.0
        return m.func.jvp(f, (m.tensor([1.0]),), (m.tensor([1.0]),))
    assert_same_as_torch(program)
    assert program(gradkit)[1].tolist() == [3.0]
    assert check(generate(RandomDrawer(2759), "fwd")) == []


def test_no_grad_inside_jvp_then_an_op_without_forward_formula_raises():
    """The tangent goes through no_grad() on into floor_divide, which has no forward formula:
    torch's NotImplementedError, in gradkit too (fwd seed 309610)."""
    def f(m):
        def inner(x):
            with m.no_grad():
                y = x * 3.0
            return 0.5 // y
        return inner
    for m in (torch, gradkit):
        with pytest.raises(NotImplementedError, match="Trying to use forward AD with"):
            m.func.jvp(f(m), (m.tensor(1.0),), (m.tensor(1.0),))
    assert check(generate(RandomDrawer(309610), "fwd")) == []


def _detach_captured(m, transform):
    w = m.ones(2, dtype=m.float64)
    x = m.tensor([0.5, 1.5], dtype=m.float64)
    f = lambda x, w=w: (w.detach_() * x).sum()  # noqa: E731
    if transform == "jvp":
        return m.func.jvp(f, (x,), (x,))
    if transform == "vmap":
        return m.func.vmap(f)(x)
    return getattr(m.func, transform)(f)(x)


@pytest.mark.parametrize("transform", ["grad", "jacrev", "jacfwd", "hessian", "jvp", "vmap"])
def test_detach_in_place_of_a_captured_tensor(transform):
    """detach_() of a tensor the function captured is torch's captured-mutation error under
    the grad transforms (it changes no version, so gradkit's check after the call missed it:
    seed 6); vmap runs it."""
    assert_same_as_torch(lambda m: _detach_captured(m, transform))
    if transform != "vmap":
        with pytest.raises(RuntimeError, match=r"\(aten::detach_\) that would mutate a capt"):
            _detach_captured(gradkit, transform)
    assert check(generate(RandomDrawer(6), "fwd")) == []


def test_remainder_of_a_number_by_a_dual_has_no_forward_formula():
    """torch has no forward-mode formula for remainder(Scalar, Tensor): ``3.0 % dual`` is its
    NotImplementedError; tensor % tensor and tensor % number keep their tangents (seed
    8457)."""
    def program(m, left):
        fw = m.autograd.forward_ad
        with fw.dual_level():
            x = fw.make_dual(m.tensor([1.5, 2.5]), m.tensor([1.0, 1.0]))
            y = left % x if left is not None else x % 2.0
            return fw.unpack_dual(y).tangent
    for left in (3.0, None, "tensor"):
        assert_same_as_torch(lambda m, left=left: program(
            m, m.tensor([3.0, 4.0]) if left == "tensor" else left))
    with pytest.raises(NotImplementedError, match="forward AD with aten::remainder"):
        program(gradkit, 3.0)
    assert check(generate(RandomDrawer(8457), "fwd")) == []


def test_write_through_a_view_of_a_detached_transform_input():
    """A grad input detach_()ed inside jvp is no view any more, so a later write into a view
    of it leaves it out of the views to update (seed 5535: an AttributeError)."""
    def program(m):
        def f(x):
            x.detach_()
            x.t().pow_(2)
            return (x * 3).sum()
        x = m.tensor(0.5, dtype=m.float64)
        return m.func.jvp(m.func.grad(f), (x,), (m.tensor(1.0, dtype=m.float64),))
    assert_same_as_torch(program)
    assert check(generate(RandomDrawer(5535), "fwd")) == []


def test_pow_saves_its_result_under_reverse_transforms_as_torch():
    """fwd seed 4121 (a Known difference until h-open5 made pow(tensor, tensor) save its
    result as torch's Pow1): jacrev refuses a pow result written in place, in both."""
    assert diff_program(generate(RandomDrawer(4121), "fwd"))[0] == []

    def f(m, x):
        y = x ** m.tensor(0.5, dtype=m.float64)
        y.mul_(2)
        return y
    for lib in (torch, gradkit):
        with pytest.raises(RuntimeError, match="which is output 0 of Pow1, is at version"):
            lib.func.jacrev(lambda x, lib=lib: f(lib, x))(lib.tensor([0.5], dtype=lib.float64))


def test_a_nan_derivative_lands_in_rows_or_columns_by_mode():
    """A NaN derivative lands in the Jacobian's rows under forward mode (jacfwd) and in its
    columns under reverse mode (jacrev), in gradkit as in torch (seeds 4680, 1854: a Known
    while gradkit's jacfwd was reverse mode and its jvp the double-vjp trick)."""
    def program(m):
        x = m.tensor([0.5, float("nan")], dtype=m.float64)
        return m.func.jacfwd(lambda x: x ** 2)(x), m.func.jacrev(lambda x: x ** 2)(x)
    assert_same_as_torch(program)
    forward, reverse = (j.numpy() for j in program(gradkit))
    assert np.isnan(forward[1]).all() and not np.isnan(forward[0]).any()
    assert np.isnan(reverse[:, 1]).all() and not np.isnan(reverse[:, 0]).any()
    for seed in (4680, 1854):
        assert check(generate(RandomDrawer(seed), "fwd")) == []


def test_detach_inside_grad_under_jvp():
    """Known difference (docs/func.md, "a `detach_()` inside a `grad` nested in `jvp`"; seed
    2582): torch's jvp still pushes x's tangent through grad's detach_()."""
    assert _known_as(2582) == "detach_() inside grad nested in jvp: torch's jvp still pushes " \
        "the tangent"
    for m, expected in ((torch, 2.0), (gradkit, 0.0)):
        def f(x, y):
            copy = x.clone()
            copy.detach_()
            return (y * copy).sum()
        args = m.tensor(3.0), m.tensor(2.0)
        gradient = m.func.grad(f, argnums=(0, 1))
        assert m.func.jvp(gradient, args, (m.tensor(2.0), m.tensor(0.0)))[1][1].item() == \
            expected


def test_detach_inside_grad_under_jvp_then_an_op_without_forward_formula():
    """Known difference (docs/func.md, as above; fwd seed 337639): the tangent torch's jvp
    still pushes through grad's detach_() reaches floor_divide_, which has no forward formula:
    torch raises, gradkit (no tangent there) computes."""
    assert _known_as(337639) == "detach_() inside grad nested in jvp: torch's jvp still " \
        "pushes the tangent"

    def program(m):
        def f(x):
            y = x.clone()
            y.detach_()
            y //= y
            return (x * y).sum()
        return m.func.jvp(m.func.grad(f), (m.tensor([1.5, 2.0]),), (m.ones(2),))[1].tolist()
    with pytest.raises(NotImplementedError, match="forward AD with aten::floor_divide_"):
        program(torch)
    assert program(gradkit) == [0.0, 0.0]


def test_function_capturing_its_own_input():
    """Known difference (docs/func.md, "captures the very tensor it is given"; seed 1227)."""
    assert _known_as(1227).startswith("a function capturing the tensor it is given")
    for m in (torch, gradkit):
        x = m.tensor(2.0, dtype=m.float64)

        def f(y, x=x):
            y.detach_()
            return y.mul_(3) + x
        if m is torch:
            assert m.func.grad(f)(x).item() == 0.0
        else:
            with pytest.raises(RuntimeError, match="would mutate a captured Tensor"):
                m.func.grad(f)(x)


_REFUSED_OUTSIDE_VMAP = ("torch's vmap runs an in-place op the op refuses outside vmap (a "
                         "broadcast sample, an overlapping operand)")


def test_torch_vmap_broadcasts_an_in_place_sample():
    """Known difference (docs/func.md, "which the op refuses outside vmap, and gradkit's vmap
    refuses"; seed 7815)."""
    assert _known_as(7815) == _REFUSED_OUTSIDE_VMAP
    program = lambda m: m.func.vmap(lambda x, w: x.div_(w), in_dims=(0, None))(  # noqa: E731
        m.ones(3), m.ones(1))
    assert program(torch).shape == (3,)
    for m in (torch, gradkit):
        with pytest.raises(RuntimeError, match=r"output with shape \[\] doesn't match the "):
            m.ones(()).div_(m.ones(1))
    with pytest.raises(RuntimeError, match=r"output with shape \[\] doesn't match the "):
        program(gradkit)


def test_write_into_an_alias_of_a_captured_tensor():
    """Known difference (docs/func.md, "view of a captured tensor made inside the function";
    seeds 5157, 4084, 1099, 312489; 339583: a view of ``w.view_as(x)``, whose memory is w's
    alone): torch's grad runs ``w[()].mul_(2)`` of a captured w, and ``w[...].add_(x)`` of an
    input x too; gradkit sees w's version change."""
    assert _known_as(5157) == _known_as(4084) == _known_as(312489) == _known_as(339583) == \
        "a write into a view of a captured tensor made inside the function: torch runs it"
    for m in (torch, gradkit):
        w = m.tensor(2.0)
        f = lambda x, w=w: (w[()].mul_(3) * x).sum()  # noqa: E731
        if m is torch:
            assert m.func.grad(f)(m.ones(1)).tolist() == [6.0]
        else:
            with pytest.raises(RuntimeError, match="would mutate a captured Tensor"):
                m.func.grad(f)(m.ones(1))
        w = m.zeros(2, dtype=m.float64)
        g = lambda x, w=w: (w[...].add_(x) * x).sum()  # noqa: E731
        if m is torch:
            assert m.func.grad(g)(m.ones(2, dtype=m.float64)).tolist() == [2.0, 2.0]
        else:
            with pytest.raises(RuntimeError, match="would mutate a captured Tensor"):
                m.func.grad(g)(m.ones(2, dtype=m.float64))


@pytest.mark.parametrize("transform", ["jacrev", "jacfwd", "hessian"])
def test_jacobian_of_a_power_zero(transform):
    """x ** 0's gradient is zeros of the incoming gradient's shape, which in jacrev's batched
    backward has the batch dim (zeros of x's shape raised "vectorized is_grads_batched gave a
    gradient of shape [2]": seed 11877)."""
    def program(m):
        def f(x):
            y = x.clone()
            y **= 0.0
            return y.sum() if transform == "hessian" else y
        return getattr(m.func, transform)(f)(m.tensor([0.5, 2.0], dtype=m.float64))
    assert_same_as_torch(program)
    assert check(generate(RandomDrawer(11877), "fwd")) == []


def test_torch_complex_silu_tangent_is_not_the_derivative():
    """Known difference (docs/autograd.md, "dual is not its derivative (torch's backward
    refuses complex"; seed 10742); and x %= x of a dual (seed 11287), torch's formula reading
    what it has already updated, as x.mul_(x)."""
    assert _known_as(10742) == "torch's forward formula of a complex silu is not its derivative"
    assert _known_as(11287) == "torch's tangent of x.mul_(x) reads the tangent it has already " \
        "updated"
    z, t = 0.3 - 0.5j, 0.7 + 0.2j
    sigmoid = 1 / (1 + np.exp(-z))
    exact = t * sigmoid * (1 + z * (1 - sigmoid))
    tangents = {}
    for m in (torch, gradkit):
        fw = m.autograd.forward_ad
        with fw.dual_level():
            x = fw.make_dual(m.tensor(z, dtype=m.complex128), m.tensor(t, dtype=m.complex128))
            tangents[m] = fw.unpack_dual(m.nn.functional.silu(x)).tangent.item()
    assert tangents[gradkit] == pytest.approx(exact, rel=1e-12)
    assert abs(tangents[torch] - exact) > 0.1


def test_view_as_real_of_a_dual_whose_tangent_a_rule_conjugated():
    """pow's jvp rule conjugates lazily: the output's tangent was an unresolved conjugated
    view, which view_as_real of the dual refused ("view_as_real doesn't work on unresolved
    conjugated tensors": seed 12138)."""
    def program(m):
        fw = m.autograd.forward_ad
        with fw.dual_level():
            x = fw.make_dual(m.tensor([0.5 + 0.1j, 2.0 - 1j], dtype=m.complex128),
                             m.tensor([1.0 + 1j, -1.0], dtype=m.complex128))
            y = x ** m.tensor([0.3 + 0.4j, 1.0 - 2j], dtype=m.complex128)
            return fw.unpack_dual(m.view_as_real(y)).tangent
    assert_same_as_torch(program, rtol=1e-12)
    problems, known = diff_program(generate(RandomDrawer(12138), "fwd"))
    assert not problems or known.startswith("torch's jvp of a power with a real operand")


def test_copy_of_a_complex_dual_into_a_real_tensor_and_batched_writes_under_vmap():
    """Known differences (docs/func.md): torch keeps a complex tangent for a real tensor that
    copy_ wrote a complex dual into (seed 13553; gradkit's is real); torch's vmap refuses a
    batched value written into an unmapped tensor with a broadcast error at the write, gradkit
    after the call (seed 14986)."""
    assert _known_as(13553) == "torch's forward transforms give some single-precision " \
        "tangents a double dtype"
    assert _known_as(14986) == "vmap refuses every write into an unmapped or captured tensor"
    for m, kind in ((torch, "c"), (gradkit, "f")):
        fw = m.autograd.forward_ad
        with fw.dual_level():
            target = m.zeros((), dtype=m.float64)
            target.copy_(fw.make_dual(m.tensor(0.5 + 1j), m.tensor(2.0 - 1j)))
            tangent = fw.unpack_dual(target).tangent.numpy()
        assert tangent.dtype.kind == kind and tangent.real == 2.0


def test_hessian_through_a_known_zero_gradient_keeps_the_batch_dim():
    """fwd seed 15366: sgn's gradient of a real input is a known zero; in the batched backward
    of jacrev/hessian its zeros lacked the batch dim ("vectorized is_grads_batched gave a
    gradient of shape [2], expected [2, 2]")."""
    assert diff_program(generate(RandomDrawer(15366), "fwd"))[0] == []
    results = []
    for lib in (torch, gradkit):
        x = lib.tensor([1.5, -2.0, 0.5], dtype=lib.float64)
        results.append((lib.func.hessian(lambda x: x.abs().sum())(x).tolist(),
                        lib.func.jacrev(lib.func.grad(lambda x: (x.abs() * x).sum()))(x).tolist()))
    assert results[1] == results[0]


def test_tangent_of_a_real_result_of_a_complex_dual_is_laid_out_as_its_primal():
    """abs of a complex dual: its jvp rule's real part is a strided view (every other float of
    the complex result), which view_as_complex of the output refused ("Tensor must have a last
    dimension with stride 1"); torch's set_fw_grad copies such a tangent into the primal's
    layout (fwd seed 13884)."""
    def program(m):
        fw = m.autograd.forward_ad
        with fw.dual_level():
            x = fw.make_dual(m.tensor([1 + 2j, 3 - 1j], dtype=m.complex128),
                             m.tensor([0.5 + 1j, -1 + 0.25j], dtype=m.complex128))
            y = x.abs()
            tangent = fw.unpack_dual(y).tangent
            assert tangent.stride() == (1,)
            return tangent, fw.unpack_dual(m.view_as_complex(y)).tangent
    assert_same_as_torch(program, rtol=1e-12)
    assert diff_program(generate(RandomDrawer(13884), "fwd"))[0] == []


def test_saved_tensor_detached_in_place_then_written_reports_the_detach_first():
    """A saved tensor detached in place (``detach_``) and then written in place: torch's
    SavedVariable refuses the detach before it compares versions; gradkit's reverse mode (so
    its jvp then) said the version first (fwd seed 13148: jvp of clone, mul, detach_, copy_,
    which gradkit's forward-mode jvp now computes as torch's)."""
    def program(m):
        x = m.tensor(1.5 + 0.5j, dtype=m.complex64, requires_grad=True)
        clone = x.clone()
        product = clone * clone
        clone.detach_()
        clone.copy_(clone)
        product.abs().backward()
    assert_same_as_torch(program)
    assert check(generate(RandomDrawer(13148), "fwd")) == []


def test_known_checks_of_in_place_writes_skip_a_transform_run():
    """A transform's run keeps no aliasing (``Result.slots`` empty): the known checks that
    look for the in-place write into the first differing value raised IndexError on a vmap
    program whose values differ (fwd seed 13769: a complex matvec of infinite entries). Since
    gradkit's complex products follow torch's kernels at inf (h-cinf) the program agrees."""
    problems, _ = diff_program(generate(RandomDrawer(13769), "fwd"))
    assert not problems


def test_copy_of_a_real_dual_into_a_complex_tensor_keeps_torchs_real_tangent():
    """Known difference (docs/func.md, "real double tangent of a real dual"; fwd seed 19407):
    torch's tangent of a complex64 tensor that copy_ wrote a float64 dual into is that
    float64 tangent; gradkit's has the tensor's dtype."""
    assert _known_as(19407) == "torch's forward transforms give some single-precision " \
        "tangents a double dtype"
    for m, dtype in ((torch, "float64"), (gradkit, "complex64")):
        fw = m.autograd.forward_ad
        with fw.dual_level():
            target = m.zeros((), dtype=m.complex64)
            target.copy_(fw.make_dual(m.tensor(0.5, dtype=m.float64),
                                      m.tensor(2.0, dtype=m.float64)))
            tangent = fw.unpack_dual(target).tangent.numpy()
        assert str(tangent.dtype) == dtype and tangent.real == 2.0


def test_torch_vmap_writes_a_sample_through_an_overlapping_view():
    """Known difference (docs/func.md, "which the op refuses outside vmap, and gradkit's vmap
    refuses"; fwd seed 18504): x.squeeze(0).add_(x) of a sample x of shape (1, 3) overlaps
    the written view with its operand; the op refuses it, torch's vmap runs it."""
    assert _known_as(18504) == _REFUSED_OUTSIDE_VMAP

    def f(x):
        x = x.clone()
        x.squeeze(0).add_(x)
        return x
    batch = [[[1.0, 2.0, 3.0]], [[4.0, 5.0, 6.0]]]
    assert torch.func.vmap(f)(torch.tensor(batch)).tolist() == [[[2.0, 4.0, 6.0]],
                                                                [[8.0, 10.0, 12.0]]]
    for m in (torch, gradkit):
        with pytest.raises(RuntimeError, match="refer to a single memory location"):
            f(m.tensor(batch[0]))
        if m is gradkit:
            with pytest.raises(RuntimeError, match="refer to a single memory location"):
                m.func.vmap(f)(m.tensor(batch))


@pytest.mark.parametrize("batch", [2, 4])
def test_second_backward_through_a_batched_bmm_rule_sums_the_batch(batch):
    """A batched backward (is_grads_batched) with create_graph multiplies the batched gradient
    by the unbatched operand in bmm's rule; a second backward through that product gave the
    operand a gradient with the batch dim ("BmmBackward0 returned an invalid gradient ... got
    [4, 3, 3, 1]"): nested jacrev of several outputs (fwd seed 19671, hessian of einsum)."""
    def program(m):
        x = m.tensor(np.arange(9.0).reshape(3, 3) / 7 - 0.5, dtype=m.float64,
                     requires_grad=True)
        seeds = m.tensor(np.arange(batch * 3.0).reshape(batch, 3) / 5 - 1, dtype=m.float64)
        (g,) = m.autograd.grad(m.einsum("...i,...i->...", x, x), x, seeds, create_graph=True,
                               is_grads_batched=True)
        return g, m.autograd.grad((g * g).sum(), x)[0]
    assert_same_as_torch(program, rtol=1e-12)
    assert diff_program(generate(RandomDrawer(19671), "fwd"))[0] == []


def test_jacfwd_stops_at_floor_divide_before_a_complex_output_as_torch():
    """jacfwd runs forward mode: floor_divide's missing forward formula raises before the
    complex output is refused, as in torch (seed 300909: a Known while gradkit's jacfwd was
    reverse mode and refused the complex output with torch's jacrev's message)."""
    def f(m):
        return lambda a: m.where(a // 0.5 > 3, a, 1 + 2j)
    for m in (torch, gradkit):
        with pytest.raises(NotImplementedError, match="floor_divide"):
            m.func.jacfwd(f(m))(m.tensor((1.5, 2.5), dtype=m.float64))
    assert check(generate(RandomDrawer(300909), "fwd")) == []


def test_captured_write_that_fails_raises_its_own_error_first():
    """Known difference (docs/func.md, "a write that fails raises its own error there"; seeds
    310182, 310756): an index_put_ into a captured tensor whose indices do not broadcast:
    torch refuses the captured write before the op runs, gradkit's op raises first."""
    assert _known_as(310182).startswith("a write into a captured tensor under a transform")
    for m, error, text in ((torch, RuntimeError, "would mutate a captured Tensor"),
                           (gradkit, IndexError, "could not be broadcast together")):
        w = m.zeros(3, 1, dtype=m.float64)

        def write(x, w=w, m=m):
            w[m.tensor([0, 1, 2]), None, m.tensor([], dtype=m.int64)] = 1.5
            return x * 2
        with pytest.raises(error, match=text):
            m.func.jvp(write, (m.ones(2, dtype=m.float64),), (m.ones(2, dtype=m.float64),))


def _stack_of_a_real_copy(m):
    """jvp of stack([r, z]) where r is a float32 zero copy_ wrote the complex z into."""
    def f(z):
        r = m.zeros((), dtype=m.float32)
        r.copy_(z)
        return m.stack([r, z])
    z, t = (m.tensor(v, dtype=m.complex64) for v in (0.5 + 0.25j, 0.75 - 0.5j))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (casting complex values to real discards ...)
        return m.func.jvp(f, (z,), (t,))[1].tolist()


def test_torch_complex_tangent_of_a_real_copy_reaches_what_is_computed_from_it():
    """Known difference (docs/func.md, "carries its imaginary part into what is computed from
    it"; fwd seed 319174): the real tensor copy_ wrote a complex dual into has torch's
    complex tangent, which a stack keeps; gradkit's is its real part."""
    for seed in (319174, 415201, 419291):  # (415201, 419291: masked_fill, gelu refuse it)
        assert _known_as(seed) == "torch's tangent of a tensor copy_ wrote a dual of the " \
            "other kind (complex, real) into keeps the dual's kind, in what is computed from " \
            "it too"
    assert _stack_of_a_real_copy(torch) == [(0.75 - 0.5j), (0.75 - 0.5j)]
    assert _stack_of_a_real_copy(gradkit) == [(0.75 + 0j), (0.75 - 0.5j)]


def test_torch_prod_gradient_under_func_is_the_zero_safe_product():
    """Known difference (docs/func.md, "always takes its backward's zero-safe path"; fwd seed
    333286): the gradient of prod([a, -inf]) in -inf is a (the other element): torch.func's
    is 0.5, gradkit's func.grad (and torch's autograd.grad) out / x = -inf / -inf, NaN."""
    assert _known_as(333286) == "prod's gradient under torch.func is torch's safe-zeros " \
        "product of the others (finite beside an inf), gradkit's out / x"

    def gradients(m):
        x = m.tensor([0.5, -math.inf], requires_grad=True)
        plain = m.autograd.grad(x.prod(-1), x)[0].tolist()
        return plain, m.func.grad(lambda x: x.prod(-1))(x.detach()).tolist()
    out_over_x = [-math.inf, math.nan]
    assert str(gradients(torch)) == str((out_over_x, [-math.inf, 0.5]))
    assert str(gradients(gradkit)) == str((out_over_x, out_over_x))


def test_self_write_through_a_same_dtype_cast_or_a_complex_view_is_known():
    """Known difference (docs/autograd.md, "tangent it has already updated in place"): the
    operand of mul_ is the written tensor itself through x.double() of a float64 x (fwd seed
    357135: the cast returns x, in both libraries) or a view_as_complex of its view_as_real
    (fwd seed 372593); of %= a y[()] (407977: torch's tangent -inf where y % y's is 0)."""
    for seed in (357135, 372593, 407977):  # (407977: y %= y[()], a basic getitem)
        assert _known_as(seed) == "torch's tangent of x.mul_(x) reads the tangent it has " \
            "already updated"
    for m in (torch, gradkit):
        x = m.ones(2, dtype=m.float64)
        assert x.double() is x
    for m, expected in ((torch, -math.inf), (gradkit, 0.0)):
        fw = m.autograd.forward_ad
        with fw.dual_level():
            y = fw.make_dual(m.tensor(0.25), m.tensor(0.75)).sqrt()
            y %= y[()]
            assert fw.unpack_dual(y).tangent.item() == expected


def test_torch_vmap_refuses_an_index_put_its_one_sample_run_does():
    """Known difference (docs/func.md, "a step torch runs on one sample"; fwd seed 435274):
    an index_put of a sample by empty boolean keys: torch's vmap refuses the batched value's
    shape, its plain run (and gradkit's per-sample vmap) writes nothing."""
    assert _known_as(435274) == "torch's vmap refuses what its batched tensors cannot do " \
        "(.item(), detach_())"


def _write_between_split_keys(m, mapped: bool):
    def f(x):
        x = x.clone()
        x[m.tensor([True]), None, m.tensor([0])] = x.sum()
        return x
    x = m.tensor([[[1.0]], [[2.0]], [[3.0]]], dtype=m.float64)
    return m.vmap(f)(x) if mapped else m.stack([f(sample) for sample in x])


def test_torch_vmap_refuses_a_write_through_advanced_indices_split_by_none():
    """Known difference (docs/func.md, "advanced indices split by `None`"; fwd seed 456030):
    torch's batched index_put_ of a key whose advanced indices a None splits (the indexed
    dims go first) puts the batch behind them and refuses the value ("cannot be broadcast to
    indexing result of shape [1, 3, 1]"); one sample at a time (torch's too) writes it. The
    one-sample reference of the Known runs leaves that require no grad, as the transform's
    (a leaf requiring grad refused the write itself)."""
    assert _known_as(456030) == "torch's vmap refuses what its batched tensors cannot do " \
        "(.item(), detach_())"
    with pytest.raises(RuntimeError, match="cannot be broadcast to indexing result"):
        _write_between_split_keys(torch, True)
    np.testing.assert_array_equal(_write_between_split_keys(gradkit, True).numpy(),
                                  _write_between_split_keys(torch, False).numpy())


def test_forward_mode_jacfwd_stops_at_floor_divide_before_a_captured_write():
    """fwd seed 376272 (a Known while gradkit's jacfwd was reverse mode and went on to a
    captured write): floor_divide's missing forward formula raises first, in both."""
    assert check(generate(RandomDrawer(376272), "fwd")) == []


def test_torch_index_add_refuses_its_double_tangent_under_jvp_of_grad():
    """Known difference (docs/func.md, "scatter such a tangent into single-precision zeros";
    fwd seed 386433): index_select's backward (index_add_) under torch's jvp of grad refuses
    the float64 tangent of a float32 mean + 0.5."""
    assert _known_as(386433) == "torch's double tangent of a single-precision output " \
        "reaches an index_put, index_add or scatter, which refuses it"


def test_vmap_of_an_empty_sample_amax_raises_torchs_per_sample_error():
    """Known difference (docs/func.md, "an empty sample's `amax()` with no dim"; fwd seed
    382254): both refuse; gradkit's per-sample vmap with torch's error for one sample."""
    for seed in (382254, 432958):  # (432958: cat of an empty tensor and a 0-d sample)
        assert _known_as(seed) == "both refuse a step under vmap: gradkit with torch's error " \
            "for one sample, torch with its batched kernel's"
    with pytest.raises(IndexError, match="Expected reduction dim 1 to have non-zero size"):
        torch.func.vmap(lambda x: x.amax())(torch.zeros(2, 0, dtype=torch.float64))
    with pytest.raises(RuntimeError) as one_sample:
        torch.zeros(0, dtype=torch.float64).amax()
    with pytest.raises(RuntimeError) as ours:
        gradkit.func.vmap(lambda x: x.amax())(gradkit.zeros(2, 0, dtype=gradkit.float64))
    assert str(ours.value) == str(one_sample.value)


@pytest.mark.parametrize("seed", [442473, 450274, 458793])
def test_jvp_of_maximum_at_a_tie_or_nan_is_torchs_forward_formula(seed):
    """gradkit's jvp runs the ops' forward formulas, as torch's: maximum/minimum at a tie or a
    NaN give torch's tangent (``other_t + where(x == y, 1/2, x > y) (x_t - y_t)``), not the
    backward's transpose (these seeds were a Known while jvp was the double-vjp trick)."""
    assert check(generate(RandomDrawer(seed), "fwd")) == []

    def program(m, name):
        x = m.tensor([math.nan, 1.0, 2.0])
        t = m.tensor([0.7, 0.3, 0.2])
        return (m.func.jvp(lambda d: getattr(m, name)(d, d), (x,), (t,))[1],
                m.func.jvp(lambda d: getattr(m, name)(d, m.ones(3)), (x,), (t,))[1])
    for name in ("maximum", "minimum"):
        assert_same_as_torch(lambda m, name=name: program(m, name))


def test_vmap_of_a_scalar_sample_promotes_as_a_known_difference():
    """Known (docs/func.md, "promotes as a dimensioned tensor"; fwd seed 450971): torch's
    batched 0-d sample promotes as a dimensioned tensor, gradkit's per-sample 0-d tensor as a
    scalar; the same program without vmap agrees."""
    problems, known = diff_program(generate(RandomDrawer(450971), "fwd"))
    assert not problems or known.startswith("vmap over a 0-d input")

    def program(m, mapped: bool):
        s = m.tensor([1.0, -2.0, 3.0], dtype=m.float64)
        t = m.tensor([0.5, 0.25], dtype=m.float32)
        call = (lambda a, b: m.where(a > 0, a, b))
        out = m.vmap(call, in_dims=(0, None))(s, t) if mapped else call(s[0], t)
        return str(out.dtype).split(".")[-1]
    assert (program(gradkit, True), program(torch, True)) == ("float32", "float64")
    assert program(gradkit, False) == program(torch, False) == "float32"


def test_vmap_of_a_gram_matrix_is_the_known_zero_sign_of_one_product():
    """fwd seed 535880: vmap of x @ x.mT for (2, 1) samples: torch's batched product sums
    each entry into +0.0, gradkit's per-sample product of one term keeps -0.0 (torch's own
    outside vmap does too): the Known of fwd 499775."""
    problems, known = diff_program(generate(RandomDrawer(535880), "fwd"))
    assert problems and known.startswith("the sign of a zero product under vmap")

    def signs(m, mapped: bool):
        x = m.tensor([[[-0.0], [0.5]], [[1.0], [2.0]]])
        def gram(sample):
            return sample @ sample.mT
        out = m.vmap(gram)(x) if mapped else m.stack([gram(s) for s in x])
        return np.signbit(out.numpy()).tolist()
    assert signs(gradkit, True) == signs(gradkit, False) == signs(torch, False)


def test_vmap_of_a_matrix_times_vectors_is_a_known_zero_sign():
    """Known (docs/func.md, "runs a matrix times a batch of vectors as one"; fwd seed
    499775): torch's vmap of A @ v is one gemm, whose single product keeps -0.0; gradkit's
    per-sample gemv, as torch's own A @ v, adds it to +0.0."""
    problems, known = diff_program(generate(RandomDrawer(499775), "fwd"))
    assert not problems or known.startswith("the sign of a zero product under vmap")

    def program(m, mapped: bool):
        a = m.tensor([[-0.5], [2.0]])
        v = m.tensor([[0.0], [1.0]])
        out = m.vmap(lambda x: a @ x)(v) if mapped else m.stack([a @ x for x in v])
        return np.signbit(out.numpy()).tolist()
    assert program(gradkit, True) == program(gradkit, False) == program(torch, False)
    assert program(torch, True) != program(torch, False)

def _remainder_of_a_number(m):
    x = m.tensor([0.7, -2.0], dtype=m.float64, requires_grad=True)
    v = x * 1
    y = -1.5 % v
    v.sigmoid_()
    y.sum().backward()


def _hardsigmoid_double_backward(m):
    x = m.tensor([0.7, 0.2], dtype=m.float64, requires_grad=True)
    v = x * 1
    g, = m.autograd.grad(m.nn.functional.hardsigmoid(v).sum(), v, create_graph=True)
    v.mul_(2)
    g.sum().backward()


def _zeta_of_a_written_q(m):
    x = m.tensor([2.5, 3.0], dtype=m.float64, requires_grad=True)
    q = m.tensor([1.5, 2.0], dtype=m.float64)
    y = m.special.zeta(x, q)
    q.mul_(2)
    y.sum().backward()


@pytest.mark.parametrize("program", [_remainder_of_a_number, _hardsigmoid_double_backward,
                                     _zeta_of_a_written_q])
def test_a_node_without_derivative_saves_no_tensor_as_torchs(program):
    """torch's NotImplemented node (``-1.5 % x``, a backward without derivative) saves nothing,
    nor does a node for a formula that only refuses (zeta's self): an in-place write into the
    operand afterwards gives torch's "not implemented" error, not a version error (fwd seed
    445254, which now agrees: jvp is forward mode)."""
    assert_same_as_torch(program)
    assert check(generate(RandomDrawer(445254), "fwd")) == []


def test_matrix_product_tangent_counts_a_missing_tangent_as_zeros():
    """torch's forward formula of mm / mv / bmm (and matmul through them), x_t @ y + x @ y_t,
    takes a missing tangent as zeros, so a plain operand times an infinite dual has a NaN
    tangent (0 @ inf); dot's skips it (fwd seed 307037: jvp of grad of a 1 x 1 product at
    inf, through matmul's backward)."""
    def program(m):
        fw = m.autograd.forward_ad
        inf = float("inf")
        tangents = []
        with fw.dual_level():
            for a, b in (((1, 1), (1, 1)), ((2,), (2,)), ((2, 2), (2,)), ((2,), (2, 2)),
                         ((3, 2, 2), (2, 2))):
                right = fw.make_dual(m.full(b, inf), m.ones(b))
                left = fw.make_dual(m.full(a, inf), m.ones(a))
                tangents += [fw.unpack_dual(m.ones(a) @ right).tangent,
                             fw.unpack_dual(left @ m.ones(b)).tangent]
            dual = fw.make_dual(m.full((1, 2, 2), inf), m.ones(1, 2, 2))
            tangents.append(fw.unpack_dual(m.bmm(m.ones(1, 2, 2), dual)).tangent)
        x = m.tensor([inf])
        return tuple(tangents) + m.func.jvp(m.func.grad(
            lambda a: (a.view(1, -1) @ a.view(1, -1)).sum()), (x,), (m.ones(1),))
    assert_same_as_torch(program)
    assert check(generate(RandomDrawer(307037), "fwd")) == []


def test_torch_remainder_by_a_number_shares_its_tangent():
    """Known difference (docs/autograd.md, "is x's own tangent tensor"; fwd seed 303192):
    torch's tangent of x % number is x's tangent tensor itself, which an in-place write into
    the result then updates; gradkit's result has a tangent of its own."""
    assert _known_as(303192) == "torch's tangent of x % number is x's own tangent: a write " \
        "into the result changes x's"

    def program(m, op):
        fw = m.autograd.forward_ad
        with fw.dual_level():
            x = fw.make_dual(m.tensor([0.3, 0.7], dtype=m.float64),
                             m.ones(2, dtype=m.float64))
            op(x).mul_(3)
            return fw.unpack_dual(x).tangent.tolist()
    for op in (lambda x: x % 2.0, lambda x: x.fmod(2.0)):
        assert (program(torch, op), program(gradkit, op)) == ([3.0, 3.0], [1.0, 1.0])


def test_write_through_a_complex_view_of_a_dual_that_requires_grad():
    """A write into view_as_complex of a dual clone whose primal requires grad: the base's
    rebase onto CopySlices pushed a tangent of its own, zeros in the values' complex dtype
    replayed through view_as_complex, which refused it (fwd seed 440363: hessian, forward
    over reverse); forward AD gives the base its tangent after the write anyway."""
    def program(m):
        fw = m.autograd.forward_ad
        with fw.dual_level():
            x = fw.make_dual(m.tensor([0.5, 1.5], requires_grad=True), m.tensor([1.0, 2.0]))
            base = x.clone()
            m.view_as_complex(base).add_(0.001)
            tangent = fw.unpack_dual(base).tangent
        return tangent, m.func.hessian(
            lambda a: (m.view_as_complex(a.clone()).add_(0.001).real * a).sum())(
            m.tensor([0.5, 1.5]))
    assert_same_as_torch(program)
    assert check(generate(RandomDrawer(440363), "fwd")) == []


def _write_through_split_keys(m, x):
    x = x.clone()
    x[m.tensor([True]), None, m.tensor([0])] = x.sum()
    return x


def test_torch_jacfwd_refusing_a_split_key_write_before_gradkits_later_refusal_is_known():
    """fwd seed 533225: torch's jacfwd refuses the write through a None-split key at step 1;
    gradkit's writes it and refuses a later detach_() of the dual: the same Known as 494042,
    which now allows gradkit a later error."""
    assert _known_as(533225) == "torch's vmap refuses what its batched tensors cannot do " \
        "(.item(), detach_())"


def test_torch_jacfwd_refuses_a_write_through_advanced_indices_split_by_none():
    """Known difference (docs/func.md, "advanced indices split by `None`"; fwd seed 494042):
    torch's jacfwd vmaps the tangents, so its index_put through a key whose advanced indices a
    None splits refuses the batched tangent, as its vmap does (456030); gradkit's jacfwd gives
    the Jacobian torch's jacrev gives."""
    assert _known_as(494042) == "torch's vmap refuses what its batched tensors cannot do " \
        "(.item(), detach_())"

    def jacobian(m, transform):
        return getattr(m.func, transform)(lambda x: _write_through_split_keys(m, x))(
            m.tensor([[1.0, 2.0]], dtype=m.float64))
    with pytest.raises(RuntimeError, match="cannot be broadcast to indexing result"):
        jacobian(torch, "jacfwd")
    np.testing.assert_array_equal(jacobian(gradkit, "jacfwd").numpy(),
                                  jacobian(torch, "jacrev").numpy())


def test_torch_backward_kernels_refuse_its_double_tangent_under_jvp_of_grad():
    """Known difference (docs/func.md, "oneDNN `gelu` kernel and `einsum`'s dot"; fwd seeds
    500873, 508624): under jvp of grad, torch's double tangent of a single-precision 0-d
    result reaches its backward's kernels (max(dim)'s scatter, dot's), which refuse it."""
    for seed in (500873, 508624):
        assert _known_as(seed) == "torch's double tangent of a single-precision 0-d result " \
            "reaches a kernel that refuses it (gelu's oneDNN one, einsum's dot)"
