"""Shape, combination and distance functions against torch: values, dtypes, gradients, node
names, view-ness and error messages (the gradients of the differentiable ones are also checked
by the op table, tests/op_db.py, lane shape2)."""

import math

import numpy as np
import pytest

import gradkit

torch = pytest.importorskip("torch")


def _describe(value):
    """A tensor as (dtype, values, node name, is a view); containers walked."""
    if isinstance(value, (gradkit.Tensor, torch.Tensor)):
        node = value.grad_fn.name().split("::")[-1] if value.grad_fn is not None else None
        return ("tensor", str(value.dtype).split(".")[-1], value.detach().resolve_conj().numpy(),
                node,
                value._is_view())
    if isinstance(value, (tuple, list)):
        return [_describe(v) for v in value]
    return value


def _compare(got, expected, where="result"):
    if isinstance(expected, tuple) and expected[:1] == ("tensor",):
        assert isinstance(got, tuple) and got[0] == "tensor", f"{where}: {got!r}"
        assert got[1] == expected[1], f"{where}: dtype {got[1]} != {expected[1]}"
        assert got[2].shape == expected[2].shape, f"{where}: {got[2].shape} != {expected[2].shape}"
        np.testing.assert_allclose(got[2], expected[2], rtol=1e-7, atol=1e-10, err_msg=where)
        assert got[3:] == expected[3:], f"{where}: (node, view) {got[3:]} != {expected[3:]}"
    elif isinstance(expected, list):
        assert isinstance(got, list) and len(got) == len(expected), f"{where}: {got!r}"
        for i, (g, e) in enumerate(zip(got, expected)):
            _compare(g, e, f"{where}[{i}]")
    else:
        assert got == expected, f"{where}: {got!r} != {expected!r}"


def same(program):
    """program(lib) gives the same tensors (dtype, values, node, view-ness) in both."""
    _compare(_describe(program(gradkit)), _describe(program(torch)))


def same_error(program):
    """program(lib) raises the same error type with the same message in both."""
    outcomes = []
    for lib in (torch, gradkit):
        with pytest.raises(Exception) as info:  # noqa: PT011 - the type is compared below
            program(lib)
        outcomes.append((type(info.value).__name__, str(info.value).split("\n")[0]))
    assert outcomes[1] == outcomes[0]


def leaf(lib, *shape, seed=0, dtype="float64"):
    values = np.random.default_rng(seed).standard_normal(shape)
    return lib.tensor(values, dtype=getattr(lib, dtype), requires_grad=True)


def ints(lib, values, dtype="int64"):
    return lib.tensor(values, dtype=getattr(lib, dtype))


def with_grads(fn, *shapes):
    """A program: fn of float64 leaves of ``shapes``, then their gradients for a fixed seed."""
    def program(lib):
        leaves = [leaf(lib, *s, seed=i) for i, s in enumerate(shapes)]
        out = fn(lib, *leaves)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        outs = [o for o in outs if o.requires_grad]
        seeds = [lib.tensor(np.random.default_rng(9).standard_normal(tuple(o.shape)),
                            dtype=o.dtype) for o in outs]
        grads = lib.autograd.grad(outs, leaves, seeds, allow_unused=True) if outs else []
        return [out, [lib.zeros_like(x) if g is None else g.clone() for x, g in zip(leaves, grads)]]
    return program


def _cases(table):
    return pytest.mark.parametrize("program", [p for _, p in table], ids=[n for n, _ in table])


# -- values, gradients, nodes and views ------------------------------------------------------

SAME = [
    ("atleast_1d_0d", with_grads(lambda m, x: m.atleast_1d(x), ())),
    ("atleast_1d_is_x", lambda m: (lambda x: m.atleast_1d(x) is x)(leaf(m, 3))),
    ("atleast_2d_1d", with_grads(lambda m, x: m.atleast_2d(x), (3,))),
    ("atleast_2d_0d", with_grads(lambda m, x: m.atleast_2d(x), ())),
    ("atleast_3d_0d_1d_2d", with_grads(lambda m, x, y, z: m.atleast_3d(x, y, z), (), (3,),
                                       (2, 3))),
    ("atleast_3d_list", with_grads(lambda m, x, y: m.atleast_3d([x, y]), (2, 3, 1, 2), (2,))),
    ("atleast_1d_none", lambda m: m.atleast_1d()),
    ("hstack_1d", with_grads(lambda m, x, y: m.hstack([x, y]), (2,), ())),
    ("hstack_2d", with_grads(lambda m, x, y: m.hstack((x, y)), (2, 3), (2, 1))),
    ("vstack", with_grads(lambda m, x, y, z: m.vstack([x, y, z]), (3,), (2, 3), (3,))),
    ("row_stack", with_grads(lambda m, x, y: m.row_stack([x, y]), (1, 3), (3,))),
    ("dstack", with_grads(lambda m, x, y, z: m.dstack([x, y, z]), (2,), (1, 2), (1, 2, 3))),
    ("column_stack", with_grads(lambda m, x, y, z: m.column_stack([x, y, z]), (2,), (2, 3),
                                (2,))),
    ("column_stack_0d", with_grads(lambda m, x, y: m.column_stack([x, y]), (), (1, 2))),
    ("stack_dtypes", lambda m: m.hstack([ints(m, [1, 2]), m.tensor([0.5], dtype=m.float32)])),
    ("tensor_split_sections", with_grads(lambda m, x: m.tensor_split(x, 3, dim=1), (2, 7))),
    ("tensor_split_more_sections_than_size", with_grads(lambda m, x: m.tensor_split(x, 5),
                                                        (3, 2))),
    ("tensor_split_indices", with_grads(lambda m, x: x.tensor_split([-1, 1, 10], 1), (2, 4))),
    ("tensor_split_tensor_indices",
     with_grads(lambda m, x: m.tensor_split(x, m.tensor([1, 3]), -1), (2, 4))),
    ("tensor_split_keywords", with_grads(lambda m, x: [
        *m.tensor_split(x, sections=2), *x.tensor_split(indices=[1]),
        *m.tensor_split(x, tensor_indices_or_sections=m.tensor([2]), dim=0)], (3, 2))),
    ("tensor_split_0d_tensor", with_grads(lambda m, x: m.tensor_split(x, m.tensor(3)), (7,))),
    ("tensor_split_empty", with_grads(lambda m, x: m.tensor_split(x, 2, 1), (2, 0))),
    ("hsplit", with_grads(lambda m, x: m.hsplit(x, 2), (3, 4))),
    ("hsplit_1d_list", with_grads(lambda m, x: x.hsplit([1, 3]), (4,))),
    ("vsplit", with_grads(lambda m, x: m.vsplit(x, [1]), (3, 2))),
    ("dsplit", with_grads(lambda m, x: m.dsplit(x, 2), (1, 2, 4))),
    ("flipud", with_grads(lambda m, x: m.flipud(x), (3, 2))),
    ("fliplr", with_grads(lambda m, x: x.fliplr(), (2, 3, 2))),
    ("cartesian_prod", with_grads(lambda m, x, y, z: m.cartesian_prod(x, y, z), (2,), (3,),
                                  (1,))),
    ("cartesian_prod_one", lambda m: (lambda x: m.cartesian_prod(x) is x)(leaf(m, 3))),
    ("combinations", with_grads(lambda m, x: m.combinations(x), (4,))),
    ("combinations_r3", with_grads(lambda m, x: m.combinations(x, 3), (5,))),
    ("combinations_replacement", with_grads(lambda m, x: m.combinations(x, 2, True), (3,))),
    ("combinations_r1", with_grads(lambda m, x: m.combinations(x, r=1), (3,))),
    ("combinations_r0", with_grads(lambda m, x: m.combinations(x, 0), (3,))),
    ("combinations_r_past_size", with_grads(lambda m, x: m.combinations(x, 4), (3,))),
    ("combinations_int", lambda m: m.combinations(ints(m, [3, 1, 2]), with_replacement=True)),
    ("block_diag", with_grads(lambda m, x, y, z: m.block_diag(x, y, z), (2, 3), (), (2,))),
    ("block_diag_empty_blocks", with_grads(lambda m, x, y: m.block_diag(x, y), (0, 3), (2, 0))),
    ("block_diag_dtypes", lambda m: m.block_diag(ints(m, [1]), m.tensor([[1.5]]))),
    ("block_diag_complex", lambda m: m.block_diag(m.tensor([1 + 2j]), ints(m, [[3]]))),
    ("block_diag_none", lambda m: m.block_diag()),
    ("diagflat", with_grads(lambda m, x: m.diagflat(x), (2, 2))),
    ("diagflat_offset", with_grads(lambda m, x: x.diagflat(-1), (3,))),
    ("diagflat_0d", with_grads(lambda m, x: m.diagflat(x, 2), ())),
    ("select_scatter", with_grads(lambda m, x, s: m.select_scatter(x, s, 1, -1), (2, 3), (2,))),
    ("select_scatter_complex_no_grad", lambda m: m.select_scatter(
        m.ones(2, 2, dtype=m.complex128), m.tensor([1j, 2]), 1, 0)),
    ("select_scatter_int_src", lambda m: m.select_scatter(leaf(m, 2, 2), ints(m, [7, 8]), 0, 0)),
    ("slice_scatter", with_grads(lambda m, x, s: m.slice_scatter(x, s, 1, 0, None, 2), (2, 5),
                                 (2, 3))),
    ("slice_scatter_clamped", with_grads(lambda m, x, s: x.slice_scatter(s, 0, -2, 100),
                                         (3, 2), (2, 2))),
    ("diagonal_scatter", with_grads(lambda m, x, s: m.diagonal_scatter(x, s), (3, 4), (3,))),
    ("diagonal_scatter_offset_dims",
     with_grads(lambda m, x, s: m.diagonal_scatter(x, s, -1, 2, 0), (3, 2, 4), (2, 3))),
    ("narrow_copy", with_grads(lambda m, x: m.narrow_copy(x, 1, -3, 2), (2, 4))),
    ("narrow_copy_method", with_grads(lambda m, x: x.narrow_copy(0, 1, 0), (2, 4))),
    ("expand_copy", with_grads(lambda m, x: m.expand_copy(x, (2, -1, 3)), (1, 3))),
    ("permute_copy", with_grads(lambda m, x: m.permute_copy(x, (2, 0, 1)), (2, 1, 3))),
    ("repeat_interleave_int", with_grads(lambda m, x: m.repeat_interleave(x, 2, dim=0), (2, 3))),
    ("repeat_interleave_flat", with_grads(lambda m, x: x.repeat_interleave(3), (2, 2))),
    ("repeat_interleave_zero", with_grads(lambda m, x: m.repeat_interleave(x, 0, 1), (2, 2))),
    ("repeat_interleave_0d", with_grads(lambda m, x: m.repeat_interleave(x, 2), ())),
    ("repeat_interleave_tensor",
     with_grads(lambda m, x: m.repeat_interleave(x, m.tensor([1, 0, 3]), -1, output_size=4),
                (2, 3))),
    ("repeat_interleave_one_count",
     with_grads(lambda m, x: m.repeat_interleave(x, m.tensor([2]), 0), (3, 2))),
    ("repeat_interleave_counts", lambda m: m.repeat_interleave(ints(m, [2, 0, 1]))),
    ("repeat_interleave_counts_int32", lambda m: m.repeat_interleave(ints(m, [1, 2], "int32"))),
    ("tril_indices", lambda m: [m.tril_indices(3, 4), m.tril_indices(4, 3, -1),
                                m.tril_indices(3, 3, 5), m.tril_indices(0, 3)]),
    ("triu_indices", lambda m: [m.triu_indices(3, 4), m.triu_indices(4, 3, 1),
                                m.triu_indices(3, 3, dtype=m.int32), m.triu_indices(2, 2, -4)]),
    # torch's own vander backward fails (it writes over cumprod's saved input): forward only
    ("vander", lambda m: m.vander(leaf(m, 3))),
    ("vander_N", lambda m: m.vander(leaf(m, 3), N=5)),
    ("vander_N_1", with_grads(lambda m, x: m.vander(x, 1), (3,))),
    ("vander_N_0", with_grads(lambda m, x: m.vander(x, 0, True), (3,))),
    ("vander_ints", lambda m: [m.vander(ints(m, [2, 3], "int32")), m.vander(m.tensor([True]))]),
]


@_cases(SAME)
def test_same_as_torch(program):
    same(program)


def _twins(lib, p, mode="use_mm_for_euclid_dist_if_necessary", rows=3):
    """cdist of rows that repeat across x1 and x2 (zero distances, zero differences)."""
    values = np.random.default_rng(3).standard_normal((rows, 2))
    values[0, 1] = values[1, 1]
    x1 = lib.tensor(values, requires_grad=True)
    x2 = lib.tensor(values[::-1].copy(), requires_grad=True)
    out = lib.cdist(x1, x2, p=p, compute_mode=mode)
    seed = lib.tensor(np.random.default_rng(4).standard_normal(tuple(out.shape)))
    return [out, list(lib.autograd.grad(out, (x1, x2), seed))]


DISTANCES = [
    *[(f"cdist_p={p}", with_grads(lambda m, x, y, p=p: m.cdist(x, y, p), (3, 2), (4, 2)))
      for p in (0, 0.5, 1, 1.5, 2, 3, math.inf)],
    *[(f"cdist_zero_distance_p={p}", lambda m, p=p: _twins(m, p))
      for p in (0, 0.5, 1, 1.5, 2, 3, math.inf)],
    # the matmul form's gradient at a zero distance is rounding noise (g / 1e-15 times the
    # difference of two equal products), in torch as here: compared away from zero only
    ("cdist_mm", with_grads(lambda m, x, y: m.cdist(x, y, compute_mode="use_mm_for_euclid_dist"),
                            (3, 2), (4, 2))),
    ("cdist_many_rows", with_grads(lambda m, x, y: m.cdist(x, y), (30, 2), (2, 2))),
    ("cdist_many_rows_no_mm", lambda m: _twins(m, 2, "donot_use_mm_for_euclid_dist", rows=30)),
    *[(f"cdist_nan_p={p}", lambda m, p=p: (lambda x, y: [m.cdist(x, y, p), m.autograd.grad(
        m.cdist(x, y, p).sum(), (x, y))])(
        m.tensor([[math.nan, 0.0, 0.25]], requires_grad=True),
        m.tensor([[3.0, 0.0, 0.0], [0.0, 0.0, -0.5]], requires_grad=True)))
      for p in (0, 1, 2, 3, math.inf)],
    *[(f"cdist_infinite_seed_at_zero_distance_p={p}", lambda m, p=p: (lambda x: m.autograd.grad(
        m.cdist(x, x, p), x, m.tensor([[math.inf]], dtype=m.float64)))(
        m.tensor([[-0.5, 1.0]], dtype=m.float64, requires_grad=True)))
      for p in (0.5, 1, 1.5, 2, 3, math.inf)],
    ("cdist_batch_broadcast", with_grads(lambda m, x, y: m.cdist(x, y), (2, 1, 3, 2), (4, 2, 2))),
    ("cdist_batch_mm", with_grads(lambda m, x, y: m.cdist(
        x, y, compute_mode="use_mm_for_euclid_dist"), (2, 1, 3, 2), (4, 2, 2))),
    ("cdist_empty_rows", with_grads(lambda m, x, y: m.cdist(x, y), (0, 2), (3, 2))),
    ("cdist_no_columns", with_grads(lambda m, x, y: m.cdist(x, y, 1), (2, 0), (3, 0))),
    ("cdist_float32", lambda m: m.cdist(leaf(m, 2, 3, dtype="float32"),
                                        leaf(m, 4, 3, seed=1, dtype="float32"))),
    *[(f"dist_p={p}", with_grads(lambda m, x, y, p=p: m.dist(x, y, p), (2, 3), (3,)))
      for p in (0.5, 1, 2, 3, math.inf, -math.inf)],
    # torch's backward of the 0-"norm" fails for ``other`` (it negates an undefined gradient)
    ("dist_p=0", lambda m: (lambda x, y: [m.dist(x, y, 0), m.autograd.grad(
        m.dist(x, y.detach(), 0), x, allow_unused=True)[0] is None])(leaf(m, 3), leaf(m, 3))),
    ("dist_method_zero", lambda m: (lambda x: [x.dist(x.detach()),
                                               m.autograd.grad(x.dist(x.detach()), x)])(
        leaf(m, 3))),
    ("dist_complex", lambda m: m.dist(m.tensor([1 + 1j, 2]), m.tensor([0.5j, 1 - 1j]))),
    ("dist_dtypes", lambda m: m.dist(leaf(m, 3), leaf(m, 3, seed=1, dtype="float32"))),
    *[(f"renorm_p={p}", with_grads(lambda m, x, p=p: m.renorm(x, p, 0, 1.5), (3, 4)))
      for p in (1, 2, 3.5, math.inf)],
    ("renorm_dim", with_grads(lambda m, x: x.renorm(2, -1, 1.0), (2, 3, 2))),
    ("renorm_below_max", with_grads(lambda m, x: m.renorm(x, 2, 1, 100.0), (2, 2))),
    ("renorm_complex", lambda m: m.renorm(m.tensor([[3 + 4j, 1j], [0.1, 0.2j]]), 2, 0, 1)),
    *[(f"renorm_complex_grad_p={p}", lambda m, p=p: (lambda z: [m.renorm(z, p, 0, 0.5),
                                                                m.autograd.grad(m.renorm(
                                                                    z, p, 0, 0.5), z,
                                                                    m.ones(2, 2) * (1 - 2j))])(
        m.tensor([[3 + 4j, 1j], [0.1, 0.2j]], requires_grad=True))) for p in (1, 2, 3)],
    ("renorm_inplace", lambda m: (lambda x: [x.renorm_(2, 0, 1.0), x])(
        m.tensor([[3.0, 4.0], [0.1, 0.2]]))),
]


@_cases(DISTANCES)
def test_distances_as_torch(program):
    same(program)


def _values_and_grads(program):
    """A with_grads program whose output nodes are left out: torch's C++ compositions record
    the Scalar overloads (MulBackward1, DivBackward1) that a Python number never selects."""
    def run(lib):
        out, grads = program(lib)
        outs = out if isinstance(out, (tuple, list)) else [out]
        return [[o.detach() for o in outs], grads]
    return run


MORE = [
    ("addr", with_grads(lambda m, x, a, b: m.addr(x, a, b), (2, 3), (2,), (3,))),
    ("addr_scaled_broadcast", with_grads(lambda m, x, a, b: x.addr(a, b, beta=0.5, alpha=-2),
                                         (3,), (2,), (3,))),
    ("addr_beta_0_nan", lambda m: m.addr(m.full((2, 2), math.nan), m.tensor([1.0, 2]),
                                         m.tensor([3.0, 4]), beta=0)),
    ("addr_ints", lambda m: m.addr(ints(m, [[1, 2], [3, 4]]), ints(m, [1, 2]), ints(m, [3, 4]),
                                   beta=2, alpha=3)),
    ("addr_bool", lambda m: [m.addr(ints(m, [[1, 0], [0, 0]]) > 0, ints(m, [1, 0]) > 0,
                                    ints(m, [1, 1]) > 0, beta=b) for b in (True, False)]),
    ("addr_dtypes", lambda m: m.addr(m.zeros(2, 2, dtype=m.int64), m.tensor([1.5, 2]),
                                     m.tensor([1.0, 2], dtype=m.float32))),
    ("addr_complex", lambda m: m.addr(m.tensor([[1j, 0]]), m.tensor([2 + 1j]),
                                      m.tensor([1.0, -1j]), alpha=1j)),
    ("addr_inplace", lambda m: (lambda x: [x.addr_(m.tensor([1.0, 2]), m.tensor([3.0, 4])), x])(
        m.ones(2, 2))),
    ("chain_matmul_one", with_grads(lambda m, x: m.chain_matmul(x), (2, 3))),
    ("chain_matmul", with_grads(lambda m, x, y, z: m.chain_matmul(x, y, z), (2, 3), (3, 4),
                                (4, 2))),
    ("chain_matmul_two", with_grads(lambda m, x, y: m.chain_matmul(x, y), (2, 3), (3, 1))),
    ("trapezoid", _values_and_grads(with_grads(lambda m, y: m.trapezoid(y), (2, 4)))),
    ("trapezoid_dx", _values_and_grads(with_grads(lambda m, y: m.trapezoid(y, dx=0.5, dim=0),
                                                  (3, 2)))),
    ("trapezoid_x", _values_and_grads(with_grads(lambda m, y, x: m.trapezoid(y, x), (2, 4),
                                                 (4,)))),
    ("trapezoid_x_dim", _values_and_grads(with_grads(lambda m, y, x: m.trapezoid(y, x, dim=0),
                                                     (3, 2), (3,)))),
    ("trapezoid_x_2d", _values_and_grads(with_grads(lambda m, y, x: m.trapezoid(y, x),
                                                    (2, 3, 4), (3, 4)))),
    ("trapezoid_ints", lambda m: [m.trapezoid(ints(m, [1, 2, 4])),
                                  m.trapezoid(ints(m, [1, 2, 4]), ints(m, [0, 1, 3]))]),
    ("trapezoid_empty", lambda m: [m.trapezoid(m.zeros(2, 0)),
                                   m.trapezoid(m.zeros(2, 0, dtype=m.int64), dx=2)]),
    ("trapezoid_one_sample", _values_and_grads(with_grads(lambda m, y: m.trapezoid(y), (2, 1)))),
    ("trapz", _values_and_grads(with_grads(lambda m, y, x: [m.trapz(y, x), m.trapz(y, dx=2.0),
                                                            m.trapz(y)], (2, 3), (3,)))),
    ("cumulative_trapezoid", with_grads(lambda m, y: m.cumulative_trapezoid(y), (2, 4))),
    ("cumulative_trapezoid_dx", with_grads(lambda m, y: m.cumulative_trapezoid(y, dx=3, dim=0),
                                           (3, 2))),
    ("cumulative_trapezoid_x", _values_and_grads(with_grads(
        lambda m, y, x: m.cumulative_trapezoid(y, x), (2, 4), (4,)))),
    ("cumulative_trapezoid_empty", lambda m: m.cumulative_trapezoid(m.zeros(2, 0))),
    ("cumulative_trapezoid_ints", lambda m: m.cumulative_trapezoid(ints(m, [1, 2, 4]))),
    ("bincount", lambda m: [m.bincount(ints(m, [1, 3, 1])), ints(m, [0, 2]).bincount(minlength=4),
                            m.bincount(ints(m, [2], "int32")),
                            m.bincount(ints(m, [], "int64"), minlength=2)]),
    ("bincount_weights", lambda m: [
        m.bincount(ints(m, [1, 3, 1]), m.tensor([0.5, 1.0, 2.0], dtype=m.float32)),
        m.bincount(ints(m, [1, 1]), ints(m, [2, 3])),
        m.bincount(ints(m, [1, 1]), m.tensor([2.0, 3.0], dtype=m.float16)),
        m.bincount(ints(m, [], "int64"), m.tensor([]), minlength=2)]),
    ("bincount_weights_require_grad", lambda m: m.bincount(ints(m, [0, 2]), leaf(m, 2))),
    ("adjoint", with_grads(lambda m, x: m.adjoint(x), (2, 3, 2))),
    ("adjoint_complex", lambda m: (lambda z: [z.adjoint(), z.adjoint().is_conj()])(
        m.tensor([[1 + 1j, 2], [3j, 4]]))),
    ("swapdims", with_grads(lambda m, x: [m.swapdims(x, 0, -1), x.swapdims(1, 0)], (2, 3))),
    ("method_aliases", lambda m: (lambda x: [
        x.absolute(), x.arccos(), x.arcsin(), x.arctan(), x.divide(2), x.true_divide(x),
        x.multiply(3), x.subtract(1), x.negative(), x.clip(-0.2, 0.2), x.fix(), x.greater(0),
        x.greater_equal(0), x.less(0), x.less_equal(0), x.not_equal(0), x.logical_xor(x > 0),
        x.vdot(x), x.ger(x), list(x.split_with_sizes([1, 2]))])(
        m.tensor([-0.5, 0.25, 0.75], dtype=m.float64))),
    ("method_aliases_ints", lambda m: ints(m, [1, -2]).bitwise_not()),
    ("inplace_aliases", lambda m: (lambda x: [x.absolute_(), x.negative_(), x.divide_(2),
                                              x.true_divide_(2), x.multiply_(3),
                                              x.subtract_(1), x.clip_(-1, 0)])(
        m.tensor([-0.5, 0.25, 0.75]))),
]


@_cases(MORE)
def test_products_integrals_aliases_as_torch(program):
    same(program)


def test_dtype_rules_as_torch():
    def rules(m):
        dtypes = [m.bool, m.uint8, m.int8, m.int16, m.int32, m.int64, m.float16, m.float32,
                  m.float64, m.complex64, m.complex128]
        names = [str(d).split(".")[-1] for d in dtypes]
        promoted = [str(m.promote_types(a, b)).split(".")[-1] for a in dtypes for b in dtypes]
        casts = [m.can_cast(a, b) for a in dtypes for b in dtypes]
        # (float16 with a complex number is torch's complex32, a dtype gradkit lacks)
        operands = [m.tensor([1], dtype=m.int32), m.tensor(1.0, dtype=m.float64),
                    m.tensor([1.0], dtype=m.float32), m.tensor(True), 2, 2.5, True, 1j]
        results = [str(m.result_type(a, b)).split(".")[-1] for a in operands for b in operands]
        return names, promoted, casts, results
    assert rules(gradkit) == rules(torch)


# -- errors: type and message as torch's --------------------------------------------------------

def _x(m):
    return m.zeros(3, 4, dtype=m.float64)


ERRORS = [
    ("hstack_empty", lambda m: m.hstack([])),
    ("vstack_empty", lambda m: m.vstack([])),
    ("dstack_empty", lambda m: m.dstack(())),
    ("column_stack_empty", lambda m: m.column_stack([])),
    ("hstack_tensor", lambda m: m.hstack(_x(m))),
    ("cat_empty", lambda m: m.cat([])),
    ("cat_tensor", lambda m: m.cat(_x(m))),
    ("stack_empty", lambda m: m.stack(())),
    ("stack_tensor", lambda m: m.stack(_x(m))),
    ("vstack_mismatch", lambda m: m.vstack([_x(m), m.zeros(3)])),
    ("hsplit_0d", lambda m: m.hsplit(m.tensor(1.0), 1)),
    ("hsplit_not_divisible", lambda m: m.hsplit(_x(m), 3)),
    ("hsplit_zero", lambda m: m.hsplit(_x(m), 0)),
    ("vsplit_1d", lambda m: m.vsplit(m.zeros(4), 2)),
    ("vsplit_not_divisible", lambda m: m.vsplit(_x(m), 2)),
    ("dsplit_2d", lambda m: m.dsplit(_x(m), 2)),
    ("dsplit_not_divisible", lambda m: m.dsplit(m.zeros(2, 2, 3), 2)),
    ("tensor_split_zero_sections", lambda m: m.tensor_split(_x(m), 0)),
    ("tensor_split_0d", lambda m: m.tensor_split(m.tensor(1.0), 1)),
    ("tensor_split_float_indices", lambda m: m.tensor_split(_x(m), m.tensor([1.0]), 1)),
    ("tensor_split_2d_indices", lambda m: m.tensor_split(_x(m), m.tensor([[1]]), 1)),
    ("tensor_split_dim", lambda m: m.tensor_split(_x(m), 2, 5)),
    ("flipud_0d", lambda m: m.flipud(m.tensor(1.0))),
    ("fliplr_1d", lambda m: m.fliplr(m.zeros(2))),
    ("cartesian_prod_2d", lambda m: m.cartesian_prod(_x(m), m.zeros(2))),
    ("cartesian_prod_none", lambda m: m.cartesian_prod()),
    ("combinations_2d", lambda m: m.combinations(_x(m))),
    ("combinations_negative", lambda m: m.combinations(m.zeros(3), -1)),
    ("block_diag_3d", lambda m: m.block_diag(_x(m), m.zeros(1, 1, 1))),
    ("diagonal_scatter_shape", lambda m: m.diagonal_scatter(_x(m), m.zeros(4))),
    ("diagonal_scatter_dims", lambda m: m.diagonal_scatter(_x(m), m.zeros(3), 0, 1, 1)),
    ("select_scatter_shape", lambda m: m.select_scatter(_x(m), m.zeros(3), 0, 1)),
    ("select_scatter_index", lambda m: m.select_scatter(_x(m), m.zeros(4), 0, 5)),
    ("slice_scatter_shape", lambda m: m.slice_scatter(_x(m), _x(m), 0, 0, 1)),
    ("slice_scatter_step", lambda m: m.slice_scatter(_x(m), _x(m), 0, step=0)),
    ("narrow_copy_past_end", lambda m: m.narrow_copy(_x(m), 0, 2, 5)),
    ("narrow_copy_0d", lambda m: m.narrow_copy(m.tensor(1.0), 0, 0, 1)),
    ("repeat_interleave_negative", lambda m: m.repeat_interleave(_x(m), -1)),
    ("repeat_interleave_2d_repeats", lambda m: m.repeat_interleave(_x(m), m.tensor([[1]]), 0)),
    ("repeat_interleave_repeats_length",
     lambda m: m.repeat_interleave(_x(m), m.tensor([1, 2]), 0)),
    ("repeat_interleave_float_repeats",
     lambda m: m.repeat_interleave(_x(m), m.tensor([1.0, 2, 1]), 0)),
    ("repeat_interleave_negative_repeats",
     lambda m: m.repeat_interleave(_x(m), m.tensor([1, -2, 1]), 0)),
    ("repeat_interleave_output_size",
     lambda m: m.repeat_interleave(_x(m), m.tensor([1, 2, 1]), 0, output_size=3)),
    ("repeat_interleave_output_size_int",
     lambda m: m.repeat_interleave(_x(m), 2, 0, output_size=3)),
    ("repeat_interleave_counts_2d", lambda m: m.repeat_interleave(m.tensor([[1, 2]]))),
    ("repeat_interleave_counts_float", lambda m: m.repeat_interleave(m.tensor([1.0, 2]))),
    ("repeat_interleave_0d_dim", lambda m: m.repeat_interleave(m.tensor(1.0), 2, 0)),
    ("tril_indices_row", lambda m: m.tril_indices(-1, 3)),
    ("triu_indices_col", lambda m: m.triu_indices(3, -3)),
    ("tril_indices_float", lambda m: m.tril_indices(3, 3, dtype=m.float32)),
    ("vander_2d", lambda m: m.vander(_x(m))),
    ("vander_negative", lambda m: m.vander(m.zeros(3), -1)),
    ("trapezoid_bool", lambda m: m.trapezoid(m.tensor([True, False]))),
    ("trapezoid_bool_x", lambda m: m.trapezoid(m.zeros(3), m.tensor([True, False, True]))),
    ("trapezoid_x_length", lambda m: m.trapezoid(_x(m), m.zeros(2))),
    ("trapezoid_x_shape", lambda m: m.trapezoid(_x(m), m.zeros(2, 4))),
    ("trapezoid_complex_dx", lambda m: m.trapezoid(_x(m), dx=1j)),
    ("trapezoid_bool_dx", lambda m: m.trapezoid(_x(m), dx=True)),
    ("trapezoid_0d", lambda m: m.trapezoid(m.tensor(1.0))),
    ("cumulative_trapezoid_bool", lambda m: m.cumulative_trapezoid(m.tensor([True]))),
    ("cumulative_trapezoid_x_length", lambda m: m.cumulative_trapezoid(_x(m), m.zeros(2))),
    ("cumulative_trapezoid_complex_dx", lambda m: m.cumulative_trapezoid(_x(m), dx=1j)),
    ("cumulative_trapezoid_0d", lambda m: m.cumulative_trapezoid(m.tensor(1.0))),
    ("bincount_negative", lambda m: m.bincount(m.tensor([-1, 2]))),
    ("bincount_float", lambda m: m.bincount(m.tensor([1.0, 2]))),
    ("bincount_bool", lambda m: m.bincount(m.tensor([True]))),
    ("bincount_2d", lambda m: m.bincount(m.tensor([[1, 2]]))),
    ("bincount_weights_length", lambda m: m.bincount(m.tensor([1, 2]), m.tensor([1.0]))),
    ("bincount_minlength", lambda m: m.bincount(m.tensor([1, 2]), minlength=-1)),
    ("bincount_backward", lambda m: m.bincount(m.tensor([1, 1]), m.tensor(
        [1.0, 2.0], requires_grad=True)).sum().backward()),
    ("cdist_1d", lambda m: m.cdist(m.zeros(4), _x(m))),
    ("cdist_columns", lambda m: m.cdist(_x(m), m.zeros(3, 2, dtype=m.float64))),
    ("cdist_ints", lambda m: m.cdist(m.ones(2, 2, dtype=m.int64), m.ones(2, 2, dtype=m.int64))),
    ("cdist_complex", lambda m: m.cdist(m.ones(2, 2, dtype=m.complex128),
                                        m.ones(2, 2, dtype=m.complex128))),
    ("cdist_dtypes", lambda m: m.cdist(_x(m), m.zeros(3, 4))),
    ("cdist_negative_p", lambda m: m.cdist(_x(m), _x(m), p=-1)),
    ("cdist_mode", lambda m: m.cdist(_x(m), _x(m), compute_mode="foo")),
    ("cdist_batches", lambda m: m.cdist(m.zeros(2, 3, 4), m.zeros(3, 3, 4))),
    ("dist_ints", lambda m: m.dist(m.tensor([1, 2]), m.tensor([1, 3]))),
    ("dist_shapes", lambda m: m.dist(_x(m), m.zeros(2, 4))),
    ("renorm_p_0", lambda m: m.renorm(_x(m), 0, 0, 1)),
    ("renorm_negative_p", lambda m: m.renorm(_x(m), -1, 0, 1)),
    ("renorm_negative_maxnorm", lambda m: m.renorm(_x(m), 2, 0, -1)),
    ("renorm_dim", lambda m: m.renorm(_x(m), 2, 3, 1)),
    ("renorm_1d", lambda m: m.renorm(m.zeros(3), 2, 0, 1)),
    ("renorm_ints", lambda m: m.renorm(m.tensor([[1, 2]]), 2, 0, 1)),
    ("addr_2d_vec1", lambda m: m.addr(_x(m), _x(m), m.zeros(4))),
    ("addr_2d_vec2", lambda m: m.addr(_x(m), m.zeros(3), _x(m))),
    ("addr_shape", lambda m: m.addr(_x(m), m.zeros(4), m.zeros(4))),
    ("addr_int_alpha", lambda m: m.addr(m.zeros(2, 2, dtype=m.int64), m.tensor([1, 2]),
                                        m.tensor([1, 2]), alpha=0.5)),
    ("addr_bool_beta", lambda m: m.addr(m.zeros(2, 2), m.zeros(2), m.zeros(2), beta=True)),
    ("addr_complex_alpha", lambda m: m.addr(m.zeros(2, 2), m.zeros(2), m.zeros(2), alpha=1j)),
    ("chain_matmul_none", lambda m: m.chain_matmul()),
    ("chain_matmul_1d", lambda m: m.chain_matmul(_x(m), m.zeros(4))),
    ("chain_matmul_shapes", lambda m: m.chain_matmul(_x(m), _x(m))),
    ("chain_matmul_dtypes", lambda m: m.chain_matmul(m.ones(2, 2, dtype=m.int64),
                                                     m.ones(2, 2))),
    ("adjoint_1d", lambda m: m.zeros(3).adjoint()),
    ("trapezoid_x_0d_dim", lambda m: m.trapezoid(m.tensor(1.0), m.tensor(1.0), dim=-2)),
    ("trapezoid_dx_0d_dim", lambda m: m.trapezoid(m.tensor(1.0), dx=1, dim=-2)),
    ("cumulative_trapezoid_x_0d", lambda m: m.cumulative_trapezoid(m.tensor(1.0), m.tensor(1.0))),
    ("dist_bool_and_int", lambda m: m.dist(m.tensor([True]), m.tensor([1]))),
    ("dist_ints_promoted", lambda m: m.dist(m.tensor([1], dtype=m.int32), m.tensor([1]))),
    ("permute_copy_dims", lambda m: m.permute_copy(_x(m), (0,))),
    ("select_scatter_complex_grad", lambda m: m.select_scatter(
        m.zeros(2, 2, dtype=m.complex128, requires_grad=True), m.zeros(2, dtype=m.complex128),
        0, 0)),
    ("slice_scatter_complex_grad", lambda m: m.slice_scatter(
        m.zeros(2, 2, dtype=m.complex128), m.zeros(1, 2, dtype=m.complex128,
                                                    requires_grad=True), 0, 0, 1)),
    ("promote_types_not_dtype", lambda m: m.promote_types(m.int32, 3)),
    ("can_cast_not_dtype", lambda m: m.can_cast("float", m.int32)),
]


@pytest.mark.filterwarnings("ignore:torch.chain_matmul is deprecated")
@_cases(ERRORS)
def test_errors_as_torch(program):
    same_error(program)


# -- where torch 2.13's own backward is wrong or raises (docs/numerics.md) ----------------------

def test_vander_gradient_is_that_of_the_powers():
    x = gradkit.tensor([0.5, -2.0, 3.0], dtype=gradkit.float64, requires_grad=True)
    seed = np.arange(12.0).reshape(3, 4)
    (grad,) = gradkit.autograd.grad(gradkit.vander(x, 4), x, gradkit.tensor(seed))
    powers = 3 - np.arange(4)  # columns x^3, x^2, x, 1
    values = x.detach().numpy()[:, None]
    expected = (seed * powers * values ** np.maximum(powers - 1, 0)).sum(1)
    np.testing.assert_allclose(grad.numpy(), expected)


def test_narrow_copy_at_a_negative_start_has_narrows_gradient():
    x = gradkit.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (grad,) = gradkit.autograd.grad(gradkit.narrow_copy(x, 0, -2, 2), x,
                                    gradkit.tensor([5.0, 7.0]))
    assert grad.tolist() == [0.0, 5.0, 7.0]
    t = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    assert torch.autograd.grad(t.narrow(0, -2, 2), t, torch.tensor([5.0, 7.0]))[0].tolist() == \
        grad.tolist()


def test_block_diag_after_an_empty_row_block():
    x = gradkit.tensor(1.5, requires_grad=True)
    out = gradkit.block_diag(x.reshape(1, 1), gradkit.zeros(0), x)
    assert out.shape == (3, 2) and out[2, 1].item() == 1.5
    (grad,) = gradkit.autograd.grad(out, x, gradkit.arange(1.0, 7.0).reshape(3, 2))
    assert grad.item() == 1.0 + 6.0  # x sits at [0, 0] and [2, 1]


def test_dist_p0_passes_no_gradient():
    x = gradkit.tensor([1.0, 2.0], requires_grad=True)
    y = gradkit.tensor([1.0, 3.0], requires_grad=True)
    d = gradkit.dist(x, y, 0)
    assert d.item() == 1.0
    assert gradkit.autograd.grad(d, (x, y), allow_unused=True) == (None, None)


def test_cdist_second_derivative_matches_finite_differences():
    x = gradkit.tensor(np.random.default_rng(5).standard_normal((3, 2)), requires_grad=True)
    y = gradkit.tensor(np.random.default_rng(6).standard_normal((2, 2)), requires_grad=True)
    for p in (1.5, 2.0, 3.0):
        assert gradkit.autograd.gradgradcheck(lambda a, b, p=p: gradkit.cdist(a, b, p), (x, y))


@pytest.mark.parametrize("p", [1.5, 2.0, 3.0])
def test_pdist_second_derivative_exists_where_torch_raises(p):
    """A Known difference (docs/numerics.md): torch has no derivative of _pdist_backward."""
    rows = np.random.default_rng(7).standard_normal((4, 3))
    x = gradkit.tensor(rows, requires_grad=True)
    assert gradkit.autograd.gradgradcheck(lambda a: gradkit.nn.functional.pdist(a, p), (x,))
    t = torch.tensor(rows, requires_grad=True)
    (g,) = torch.autograd.grad(torch.nn.functional.pdist(t, p).sum(), t, create_graph=True)
    with pytest.raises(NotImplementedError, match="'_pdist_backward' is not implemented"):
        torch.autograd.grad(g.sum(), t)


# -- dtypes, 0-d and 0-size inputs: the same values or the same error ----------------------------

def _input(lib, kind):
    values = {"bool": [[True, False, True], [False, False, True]],
              "int64": [[1, -2, 3], [0, 4, 2]], "int_vector": [3, 0, 2],
              "complex128": [[1 + 2j, -1j, 0.5], [2, 1 - 1j, 3j]],
              "vector": [0.5, -1.5, 2.0], "0d": 1.5}
    if kind == "0-size":
        return lib.zeros(0, 3)
    return lib.tensor(values[kind], dtype=lib.float64) if kind in ("vector", "0d") else \
        lib.tensor(values[kind])


SWEEP = {
    "atleast_3d": lambda m, x: m.atleast_3d(x),
    "hstack": lambda m, x: m.hstack([x, x]),
    "vstack": lambda m, x: m.vstack([x, x]),
    "dstack": lambda m, x: m.dstack([x, x]),
    "column_stack": lambda m, x: m.column_stack([x, x]),
    "tensor_split": lambda m, x: m.tensor_split(x, 2, -1),
    "hsplit": lambda m, x: m.hsplit(x, 3),
    "vsplit": lambda m, x: m.vsplit(x, 1),
    "flipud": lambda m, x: m.flipud(x),
    "fliplr": lambda m, x: m.fliplr(x),
    "cartesian_prod": lambda m, x: m.cartesian_prod(x.reshape(-1), x.reshape(-1)),
    "combinations": lambda m, x: m.combinations(x.reshape(-1), 2),
    "block_diag": lambda m, x: m.block_diag(x, x),
    "diagflat": lambda m, x: m.diagflat(x, 1),
    "select_scatter": lambda m, x: m.select_scatter(x, m.select(x, 0, 0), 0, 0),
    "slice_scatter": lambda m, x: m.slice_scatter(x, x.narrow(0, 0, 1) if x.ndim else x, 0, 0,
                                                  1),
    "diagonal_scatter": lambda m, x: m.diagonal_scatter(x, x.diagonal()),
    "narrow_copy": lambda m, x: m.narrow_copy(x, 0, 0, 1),
    "repeat_interleave": lambda m, x: m.repeat_interleave(x, 2),
    "vander": lambda m, x: m.vander(x),
    "trapezoid": lambda m, x: m.trapezoid(x),
    "trapezoid_x": lambda m, x: m.trapezoid(x, x),
    "cumulative_trapezoid": lambda m, x: m.cumulative_trapezoid(x),
    "cdist": lambda m, x: m.cdist(x, x),
    "dist": lambda m, x: m.dist(x, x, 3),
    "renorm": lambda m, x: m.renorm(x, 2, 0, 1.0),
    "addr": lambda m, x: m.addr(x, x[:, 0], x[0]),
    "chain_matmul": lambda m, x: m.chain_matmul(x, x.mT),
    "adjoint": lambda m, x: m.adjoint(x),
    "swapdims": lambda m, x: m.swapdims(x, 0, -1),
    "expand_copy": lambda m, x: m.expand_copy(x, (2, *x.shape)),
    "permute_copy": lambda m, x: m.permute_copy(x, tuple(range(x.ndim))[::-1]),
    "bincount": lambda m, x: m.bincount(x),
}
KINDS = ("bool", "int64", "int_vector", "complex128", "vector", "0d", "0-size")


def _outcome(lib, program):
    try:
        return _describe(program(lib))
    except Exception as e:  # noqa: BLE001 - the error is the outcome compared
        return ("raises", type(e).__name__, str(e).split("\n")[0])


@pytest.mark.filterwarnings("ignore:torch.chain_matmul is deprecated",
                            "ignore:adjoint\\(\\) is deprecated")
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", sorted(SWEEP))
def test_dtypes_and_edge_shapes_as_torch(name, kind):
    def program(lib):
        return SWEEP[name](lib, _input(lib, kind))
    got, expected = _outcome(gradkit, program), _outcome(torch, program)
    if expected[:1] == ("raises",) or got[:1] == ("raises",):
        assert got == expected
    else:
        _compare(got, expected)


def test_tensor_split_needs_exactly_one_split_argument():
    x = gradkit.zeros(4)
    for kwargs in ({}, {"indices_or_sections": 2, "sections": 2}):
        with pytest.raises(TypeError, match=r"tensor_split\(\) missing required argument "
                                            "'indices_or_sections'"):
            gradkit.tensor_split(x, **kwargs)
    with pytest.raises(TypeError):  # torch: a TypeError of its argument parser
        torch.tensor_split(torch.zeros(4))


def test_deprecation_warnings_as_torch():
    """torch's texts (it warns once per process, gradkit at every call)."""
    with pytest.warns(UserWarning, match="torch.chain_matmul is deprecated"):
        gradkit.chain_matmul(gradkit.ones(2, 2))
    with pytest.warns(UserWarning, match=r"adjoint\(\) is deprecated on 0-D tensors"):
        gradkit.tensor(1.0).adjoint()
