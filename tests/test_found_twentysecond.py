"""Differences found in the twenty-second session (fuzzer seeds and the scans they led to), each
program run in gradkit and in torch 2.13 (skipped without torch)."""
import math
import warnings

import numpy as np
import pytest

import gradkit

torch = pytest.importorskip("torch")

_EXTREMES = [0.0, -0.0, 0.3, -0.7, 2.5, -40.0, 1e20, -1e20, 3.4028234663852886e38, -3.4e38,
             1.7e308, math.inf, -math.inf, math.nan, 1e-30, -1e-45]


def _bits(array) -> list:
    """Each value exactly, a NaN as 'nan' and a zero with its sign."""
    return ["nan" if math.isnan(v) else repr(float(v)) for v in np.asarray(array).ravel()]


def _second_derivatives(lib, function, dtype: str, upstream: float) -> tuple:
    x = lib.tensor(_EXTREMES, dtype=getattr(lib, dtype), requires_grad=True)
    y = function(lib, x)
    g, = lib.autograd.grad(y, x, lib.full_like(y, upstream), create_graph=True)
    gg, = lib.autograd.grad(g, x, lib.full_like(g, 0.5))
    return _bits(g.detach().numpy()), _bits(gg.numpy())


# torch writes these derivatives with self.pow(2) (result.pow(2) for tan), whose backward is
# grad * (2 * x): 2x overflows to inf for the largest finite x, and a zero gradient times inf
# is NaN (breadth seed 1960106: asinh of nextafter(inf, y), the largest float32). x * x's
# backward, grad * x twice, gave 0. gelu's second derivative is 2 pdf - x² pdf (+0 far out).
_POW_TWO_FORMULAS = {
    "asinh": lambda lib, x: x.asinh(),
    "atanh": lambda lib, x: x.atanh(),
    "erf": lambda lib, x: x.erf(),
    "erfc": lambda lib, x: x.erfc(),
    "tan": lambda lib, x: x.tan(),
    "ndtr": lambda lib, x: lib.special.ndtr(x),
    "log_ndtr": lambda lib, x: lib.special.log_ndtr(x),
    "ndtri": lambda lib, x: lib.special.ndtri(x),
    "gelu": lambda lib, x: lib.nn.functional.gelu(x),
}


@pytest.mark.parametrize("upstream", [1.0, 0.0])
@pytest.mark.parametrize("name", sorted(_POW_TWO_FORMULAS))
def test_second_derivatives_at_extremes_are_torchs_float64(name, upstream):
    """Exact but for the last bits of exp (torch's vectorized one, docs/numerics.md)."""
    function = _POW_TWO_FORMULAS[name]
    for ours, theirs in zip(_second_derivatives(gradkit, function, "float64", upstream),
                            _second_derivatives(torch, function, "float64", upstream)):
        for a, b in zip(ours, theirs):
            assert a == b or "nan" not in (a, b) and float(a) != 0 and \
                math.isclose(float(a), float(b), rel_tol=1e-14)


@pytest.mark.parametrize("name", ["asinh", "erf", "erfc", "ndtr", "log_ndtr"])
def test_the_largest_float32_gives_torchs_nan_second_derivative(name):
    """float32 transcendentals may differ in the last bit (docs/numerics.md): compared here
    are the NaNs and zero signs, which is where 2x overflowing made the difference."""
    function = _POW_TWO_FORMULAS[name]
    ours, theirs = (_second_derivatives(lib, function, "float32", 0.0)[1]
                    for lib in (gradkit, torch))
    assert [v for v in ours if v in ("nan", "0.0", "-0.0")] == \
        [v for v in theirs if v in ("nan", "0.0", "-0.0")]
    assert ours[_EXTREMES.index(3.4028234663852886e38)] == "nan"


def test_sinc_second_derivative_near_zero_is_torchs():
    """torch's compiled sinc_backward makes sin(pi x) before cos(pi x), so its double backward
    sums pi x's three gradients in the order where they cancel near 0: 0 at x = 1e-30, where
    the other order left -pi²/2. float64 values elsewhere agree too (bar sin/cos's last bit)."""
    rng = np.random.default_rng(0)
    values = np.concatenate([rng.normal(size=100), rng.normal(size=50) * 1e-8, [1e-30, -1e-45]])
    results = []
    for lib in (gradkit, torch):
        x = lib.tensor(values, requires_grad=True)
        g, = lib.autograd.grad(lib.sinc(x), x, lib.ones_like(x), create_graph=True)
        gg, = lib.autograd.grad(g, x, lib.full_like(g, 0.5))
        results.append(gg.numpy())
    ours, theirs = results
    assert ours[-2:].tolist() == theirs[-2:].tolist() == [0.0, 0.0]
    assert (ours == theirs).mean() > 0.97


@pytest.mark.parametrize("shape", [(0, 3, 5), (3, 0, 5), (3, 5, 0), (5, 0), (0, 5)])
@pytest.mark.parametrize("full_matrices", [True, False])
def test_empty_lapack_results_have_torchs_column_major_strides(shape, full_matrices):
    """torch's LAPACK results are column-major, empty ones too (their strides count the
    sizes' zeros as ones); NumPy gives an empty array zero strides, which read as C order."""
    def strides(lib):
        a = lib.zeros(shape, dtype=lib.float64)
        results = [*lib.linalg.svd(a, full_matrices=full_matrices)]
        eye = lib.eye(shape[-2], dtype=lib.float64).expand(*shape[:-2], -1, -1).contiguous()
        results.append(lib.linalg.solve_triangular(eye, a, upper=True))
        return [(tuple(r.shape), r.stride(), r.is_contiguous()) for r in results]
    assert strides(gradkit) == strides(torch)


def test_a_float_too_large_for_the_dtype_is_inf_without_a_warning():
    """torch rounds 1e39 to float32's inf silently; NumPy's cast warned of the overflow."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = [gradkit.tensor([1e39, -1e308], dtype=d).tolist()
                for d in (gradkit.float32, gradkit.float16)]
    assert ours == [torch.tensor([1e39, -1e308], dtype=d).tolist()
                    for d in (torch.float32, torch.float16)]


def test_an_integer_result_one_float32_ulp_apart_is_the_documented_rounding():
    """diagonal_scatter of an int64 tensor with its diagonal's exp: NumPy's float32 exp(25) is
    72004894720, torch's 72004902912, one ulp apart (docs/numerics.md), which the cast into
    int64 keeps (breadth seed 1979487); the fuzzer names it (only from 2^24 up, where a
    float32 has no odd integers: an integer off by one below that is still reported)."""
    from fuzz.known import diff_program
    from fuzz.programs import Leaf, Program, Step
    assert np.float32(np.exp(np.float32(25))) != torch.tensor(25.0).exp().item()
    program = Program("breadth", (Leaf((), "float64", True), Leaf((), "int64", False)), (
        Step("s_cartesian_prod", (1, 1), {}), Step("b_cumprod", (2,), {"dim": 1}),
        Step("s_diagonal_scatter", (3,), {"offset": 1, "dim1": -2, "dim2": 1})),
        True, 1979487, backward=True)
    problems, known = diff_program(program)
    assert problems and known.startswith("an integer result one float32 ulp from torch's")


@pytest.mark.parametrize("shapes", [((1, 3), (0, 3, 1)), ((0, 3), (2, 3, 1)), ((1, 0), (2, 0, 1)),
                                    ((2, 3), (2, 0, 3, 1))])
@pytest.mark.parametrize("dtypes", [("bool", "float32"), ("int64", "float64"), ("uint8", "bool")])
def test_an_integer_matrix_times_an_empty_batch_is_computed_as_torchs(shapes, dtypes):
    """torch's matmul of a matrix and a batch reaches bmm (the matrix requires no grad), which
    answers an empty product in mat2's dtype before checking dtypes (strided_breadth seed
    1981562: a bool matrix times an empty float batch raised here)."""
    def product(lib):
        x = lib.ones(shapes[0], dtype=getattr(lib, dtypes[0]))
        y = lib.ones(shapes[1], dtype=getattr(lib, dtypes[1]), requires_grad=dtypes[1] != "bool")
        out = lib.matmul(x, y)
        grad = lib.autograd.grad(out.sum(), y)[0].tolist() if y.requires_grad else None
        return tuple(out.shape), str(out.dtype).split(".")[-1], out.tolist(), grad
    assert product(gradkit) == product(torch)


@pytest.mark.parametrize("shapes", [((5, 3), (5, 5)), ((2, 5, 3), (5, 5)), ((2, 1, 1), (1, 1))])
def test_triangular_solves_copy_of_a_is_column_major_as_torchs(shapes):
    """torch.triangular_solve returns A's copy as LAPACK holds it, by columns (broadcast too);
    gradkit's clone was C order (torch's op table with --all-strides)."""
    def layout(lib):
        b = lib.ones(shapes[0], dtype=lib.float64)
        a = lib.ones(shapes[1], dtype=lib.float64).triu().requires_grad_()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (its deprecation)
            solution, copy = lib.triangular_solve(b, a)
        grad, = lib.autograd.grad((copy * copy).sum() + solution.sum(), a)
        return copy.stride(), copy.is_contiguous(), copy.tolist(), grad.tolist()
    assert layout(gradkit) == layout(torch)


def test_angle_gradient_where_the_squared_modulus_overflows_is_torchs():
    """torch's angle_backward divides by |z| ** 2; gradkit divided by z conj(z), whose
    imaginary part is inf - inf = NaN once |z|² overflows (|z| > 1.3e154): the gradient of
    angle(1e300 + 1e300j) was NaN here, 0 in torch. Second derivatives too, and elsewhere
    bitwise torch's (one element at a time, torch's scalar kernels)."""
    rng = np.random.default_rng(0)
    parts = [(1e300, 1e300), (-1.7e308, 2.5), (3.0, -1.7e308), (0.0, 0.3), (-0.0, -0.0)] + \
        [tuple(p) for p in rng.normal(size=(40, 2)) * 3]
    def derivatives(lib):
        out = []
        for re, im in parts:
            x = lib.tensor([re], dtype=lib.float64, requires_grad=True)
            y = lib.tensor([im], dtype=lib.float64, requires_grad=True)
            gx, gy = lib.autograd.grad(lib.complex(x, y).angle(), (x, y), lib.ones(1),
                                       create_graph=True)
            out.append(_bits([gx.item(), gy.item(),
                              *(g.item() for g in lib.autograd.grad(gx + gy, (x, y)))]))
        return out
    ours = derivatives(gradkit)
    assert ours == derivatives(torch)
    assert ours[0][:2] == ["0.0", "0.0"]


@pytest.mark.parametrize("dtype", ["bool", "int64", "float64"])
@pytest.mark.parametrize("steps_and_width", [(1, 2), (0, 1)])
def test_conv_tbc_with_no_position_meeting_the_input_is_torchs_empty_result(dtype,
                                                                           steps_and_width):
    """conv_tbc whose kernel meets no input row returns the bias's empty expansion: torch's
    even for bool, which has no subtraction (wide seeds 120281, 128217, 128364, 130893,
    135661 raised here)."""
    steps, width = steps_and_width
    def result(lib):
        kind = getattr(lib, dtype)
        out = lib.conv_tbc(lib.ones(steps, 1, 1, dtype=kind), lib.ones(width, 1, 2, dtype=kind),
                           lib.ones(2, dtype=kind), 0)
        return tuple(out.shape), str(out.dtype).split(".")[-1], out.stride()
    assert result(gradkit) == result(torch)


@pytest.mark.parametrize("values", [[math.inf], [math.inf, 2.0], [2.0, math.inf], [[math.inf]],
                                    [[1.0, math.inf], [3.0, -2.0]]])
def test_sgn_tangent_is_an_efficient_zero_for_one_element_only(values):
    """torch's forward mode makes a real sgn's tangent an efficient zero tensor only for a
    tensor of one element: jvp(grad((|x| + 0.5) ** 1.5)) at x = inf is 0 for one element
    (fwd seed 524665) and NaN beside another (fwd seed 595807: gradkit gave 0)."""
    def tangent(lib):
        x = lib.tensor(values, dtype=lib.float64)
        f = lambda x: ((x.abs() + 0.5) ** 1.5 * 0.7).sum()  # noqa: E731
        return _bits(lib.func.jvp(lib.func.grad(f), (x,), (lib.full_like(x, 0.5),))[1])
    assert tangent(gradkit) == tangent(torch)


def test_sinc_second_derivative_seed_now_agrees():
    """wide seed 12673, sinc's second derivative near 0, was a Known of rounding noise; with
    torch's order of sin and cos it is torch's value (the Known stays for float32, whose sin
    and cos are not torch's to the bit)."""
    from fuzz.known import diff_program
    from fuzz.programs import RandomDrawer, generate
    assert diff_program(generate(RandomDrawer(12673), "wide")) == ([], None)


@pytest.mark.parametrize("transform", ["hessian", "jvp_of_grad"])
def test_a_saved_output_detached_in_place_under_forward_over_reverse_is_torchs(transform):
    """amax saves its result; a view of it, then its ``detach_()``, then forward-over-reverse
    (fwd seed 595048): torch's saved output keeps its node and the tangent it had when saved,
    gradkit's held the output itself and refused it as a detached saved input."""
    def derivative(lib):
        def f(x):
            top = lib.amax(x.exp(), dim=0, keepdim=True)
            view = top.squeeze()
            top.detach_()
            return (x * 0.3).sum() + (view * 0.7).sum()
        x = lib.tensor([1.0, 3.0, 2.0], dtype=lib.float64)
        if transform == "hessian":
            return lib.func.hessian(f)(x).tolist()
        return lib.func.jvp(lib.func.grad(f), (x,), (lib.ones_like(x),))[1].tolist()
    assert derivative(gradkit) == derivative(torch)


_MATRICES = {"C": lambda lib, n, k, c: lib.ones(n, k, dtype=c),
             "F": lambda lib, n, k, c: lib.ones(k, n, dtype=c).t(),
             "rows stepped": lambda lib, n, k, c: lib.ones(n, 2 * k, dtype=c)[:, ::2],
             "columns stepped": lambda lib, n, k, c: lib.ones(2 * k, n, dtype=c)[::2].t()}


@pytest.mark.parametrize("layout", sorted(_MATRICES))
@pytest.mark.parametrize("dtype", ["complex128", "complex64"])
def test_complex_addmv_multiplies_by_beta_one_where_torchs_kernel_does(layout, dtype):
    """torch's complex addmv makes beta * input even at beta = 1 (1 + 0j times -inf + 0j is
    -inf + NaN j) where its kernel does: nothing summed (result.mul_(beta)), or a gemv of a
    matrix read by rows (by columns, or one C-ordered product, it adds); wide seed 149593."""
    def nan_pattern(lib):
        kind = getattr(lib, dtype)
        return [[lib.addmv(lib.full((n,), complex(-math.inf, 0.0), dtype=kind),
                           _MATRICES[layout](lib, n, k, kind), lib.ones(k, dtype=kind))[0]
                 .isnan().item() for k in range(4)] for n in (1, 2, 3)]
    assert nan_pattern(gradkit) == nan_pattern(torch)


def test_an_empty_complex_product_multiplies_the_input_by_beta_one():
    """addmm/baddbmm/addbmm of nothing summed: torch's result.mul_(beta), -inf + NaN j."""
    def results(lib):
        c, x = lib.complex128, lib.full((2, 1), complex(-math.inf, 0.0), dtype=lib.complex128)
        return _bits([r.reshape(-1)[0].imag.item() for r in (
            lib.addmm(x, lib.ones(2, 0, dtype=c), lib.ones(0, 1, dtype=c)),
            lib.baddbmm(x[None], lib.ones(1, 2, 0, dtype=c), lib.ones(1, 0, 1, dtype=c)),
            lib.addbmm(x, lib.ones(0, 2, 3, dtype=c), lib.ones(0, 3, 1, dtype=c)))])
    assert results(gradkit) == results(torch) == ["nan"] * 3


@pytest.mark.parametrize("name, params", [("selu", {}), ("elu", {"alpha": 0.7}),
                                          ("celu", {"alpha": 1.3}), ("elu", {})])
def test_elu_family_gradients_are_torchs_kernel_bitwise(name, params):
    """torch's elu_backward multiplies grad by input_scale, then alpha * scale, then the exp,
    the coefficients in the input's dtype; celu's input_scale is 1 / alpha rounded to single
    precision. gradkit multiplied grad by one product of them: the last bit on two fifths of
    negative inputs, about half of all for celu, and selu of -0.7 with a -1.7e308 gradient
    gave -1.48e308 where torch's overflows to -inf. One element at a time (torch's scalar
    kernel; its vector one rounds otherwise)."""
    rng = np.random.default_rng(1)
    points = [(x, g) for x, g in zip(rng.normal(size=30) * 2, rng.normal(size=30))] + \
        [(-0.7, -1.7e308), (0.0, 1.0), (-0.0, -2.0), (math.nan, 1.0)]
    def gradients(lib):
        out = []
        for x, g in points:
            x = lib.tensor([x], dtype=lib.float64, requires_grad=True)
            first, = lib.autograd.grad(getattr(lib.nn.functional, name)(x, **params), x,
                                       lib.tensor([g], dtype=lib.float64), create_graph=True)
            second, = lib.autograd.grad(first, x, lib.full_like(first, 0.3))
            out.append(_bits([first.item(), second.item()]))
        return out
    ours, theirs = gradients(gradkit), gradients(torch)
    assert ours[30:] == theirs[30:]  # (NaN, inf, zeros: exactly)
    if name == "selu":
        assert ours[30][0] == "-inf"
    pairs = [(float(a), float(b)) for row, other in zip(ours, theirs) for a, b in zip(row, other)]
    assert all(math.isclose(a, b, rel_tol=4e-16) for a, b in pairs[:60])
    assert sum(a == b for a, b in pairs[:60]) >= 57  # (exp itself: NumPy's, not glibc's)


@pytest.mark.parametrize("call", [
    lambda lib, t: lib.linalg.vector_norm(t), lambda lib, t: lib.dist(t, lib.zeros_like(t)),
    lambda lib, t: t.norm(), lambda lib, t: lib.linalg.matrix_norm(t.reshape(1, 1)),
    lambda lib, t: lib.linalg.vector_norm(t.reshape(1, 1).expand(2, 1), dim=1).sum(),
    lambda lib, t: lib.nn.functional.pairwise_distance(t[None], lib.zeros(1, 1, dtype=t.dtype),
                                                       eps=0).sum()])
@pytest.mark.parametrize("value", [1e300, -3e-310, 5e-324, -2.0])
def test_the_two_norm_of_one_element_is_its_modulus(call, value):
    """torch's 2-norm of a single element is |x|: no square, which overflowed to inf here
    for 1e300 (gradient 0 for torch's sign) and underflowed to 0 for subnormals (binary
    derivative scan: dist of two 1-element tensors)."""
    def result(lib):
        t = lib.tensor([value], dtype=lib.float64, requires_grad=True)
        out = call(lib, t)
        return _bits([out.item(), *lib.autograd.grad(out, t)[0].tolist()])
    assert result(gradkit) == result(torch)


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "int8"])
def test_gcd_of_the_dtypes_minimum_is_torchs_euclid(dtype):
    """abs of a dtype's minimum is itself in C, so torch's Euclid on it may end on a negative
    remainder: gcd(6, -2^63) is -2 in torch, NumPy's 2 (wide seed 171234: a complex inf cast
    to int64 is -2^63). lcm, built on it, too."""
    def results(lib):
        kind = getattr(lib, dtype)
        low = -2 ** (8 * {"int64": 8, "int32": 4, "int16": 2, "int8": 1}[dtype] - 1)
        pairs = [(6, low), (low, 6), (low, 0), (0, low), (low, low), (4, low), (low, 3),
                 (12, low), (-6, low), (low + 1, low), (7, -3), (-4, 6)]
        a = lib.tensor([p[0] for p in pairs], dtype=kind)
        b = lib.tensor([p[1] for p in pairs], dtype=kind)
        zero_d = lib.gcd(lib.tensor(low, dtype=kind), lib.tensor(6, dtype=kind))  # (wide 210792)
        return (lib.gcd(a, b).tolist(), lib.lcm(a, b).tolist(), a.clone().gcd_(b).tolist(),
                zero_d.item(), lib.gcd(a[:1], lib.tensor(6, dtype=kind)).tolist())
    assert results(gradkit) == results(torch)


def test_an_integer_tensor_torch_saved_then_wrote_in_place_is_the_known_requires_grad():
    """greater_ of an int64 tensor with a float requiring grad: torch marks the integer
    tensor as requiring grad (docs/numerics.md), cosh saves it, negative_ writes it, and
    torch's backward refuses the modified saved tensor; gradkit's integer tensor requires no
    grad, so nothing was saved (wide seed 168923)."""
    from fuzz.known import diff_program
    from fuzz.programs import RandomDrawer, generate
    for lib in (torch, gradkit):
        flag = lib.tensor(2).greater_(lib.tensor(0.5, requires_grad=True))
        assert flag.requires_grad == (lib is torch)
    problems, known = diff_program(generate(RandomDrawer(168923), "wide"))
    assert problems and known == \
        "an integer tensor written with a value that requires grad does not require grad"


@pytest.mark.parametrize("x", [0.7, -0.3, 0.0])
def test_in_place_celu_double_backward_multiplies_by_its_mask(x):
    """celu_ of xlogy(x, inf): torch's elu_double_backward of a result is grad * grad_output
    * input_scale * (result < 0), a product, so the inf from xlogy's backward gives NaN where
    gradkit's selection of branches gave 0 (wide seed 182680)."""
    def second(lib):
        t = lib.tensor(x, dtype=lib.float64, requires_grad=True)
        out = lib.xlogy(t, math.inf).clone()
        lib.nn.functional.celu_(out, 0.5)
        g, = lib.autograd.grad(out, t, create_graph=True)
        return _bits([g.item(), lib.autograd.grad(g, t)[0].item()])
    assert second(gradkit) == second(torch)


@pytest.mark.parametrize("reduce", ["sum", "mean", "prod", "nansum"])
def test_an_overflowing_reduction_is_inf_without_numpys_warning(reduce):
    """torch's sum/mean/prod of float32 3e38s are inf, silently; NumPy's reductions warned
    "overflow encountered in reduce" from its own module, out of gradkit's warning filter
    (now called as the ufunc's reduce from gradkit's module)."""
    def result(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            gradkit.tensor([0.0]).sum()  # (gradkit's filter, re-added inside this block)
            return [getattr(lib.tensor([[3e38, 3e38]]), reduce)(*dims).tolist()
                    for dims in ((), (1,))]
    assert result(gradkit) == result(torch)


def test_isin_of_transposed_test_elements_computes_where_torchs_view_refuses():
    """torch's isin with few test elements runs a brute-force kernel that views them flat
    (``view(-1)`` after ``.to``, which keeps a dense layout) and refuses transposed ones: the
    take_along_dim wart, which gradkit does not copy; a documented Known (wide seed 222011)."""
    from fuzz.known import diff_program
    from fuzz.programs import RandomDrawer, generate
    tests = torch.arange(4).reshape(2, 2).t()
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        torch.isin(torch.arange(3), tests)
    assert gradkit.isin(gradkit.arange(3), gradkit.arange(4).reshape(2, 2).t()).tolist() == \
        torch.isin(torch.arange(3), tests.contiguous()).tolist()
    problems, known = diff_program(generate(RandomDrawer(222011), "wide"))
    assert problems and known.startswith("take_along_dim without dim (or isin's")


@pytest.mark.parametrize("values", [[3.4e38, 3.4e38], [3e38, 3.4e38], [3e38, -3e38],
                                    [1.0, 2.0, 4.0]])
def test_float32_variance_of_one_result_overflows_where_torchs_two_pass_mean_does(values):
    """torch's var/std with one result is two-pass, the mean summed in float32: past float32's
    range it is inf, and so is the result, where gradkit's double mean stayed finite (var 0
    for two equal 3.4e38s); std_mean and several results are Welford passes in both (float32
    binary derivative scan)."""
    def results(lib):
        t = lib.tensor(values, dtype=lib.float32)
        return _bits([t.var().item(), t.std().item(), t.var(dim=0).item(),
                      lib.std_mean(t)[0].item(), *lib.stack([t, t]).var(dim=1).tolist()])
    assert results(gradkit) == results(torch)


@pytest.mark.parametrize("make", ["m.zeros(4, 0)", "m.empty(0, 5)", "m.ones(2, 0, 3)",
                                  "m.tensor([[], []])", "m.randn(2, 0, 1)",
                                  "m.zeros(3, 0, requires_grad=True)"])
def test_views_of_a_factorys_empty_tensor_have_torchs_strides(make):
    """NumPy gives a fresh empty array strides 0, which gradkit read as C order; a transpose
    or permutation of it then read as C order again. A factory's empty tensor now carries
    torch's contiguous strides (its zeros counted as ones), so its views' strides are
    torch's (the op table's --all-strides scan: ormqr of an empty operand)."""
    def strides(m):
        x = eval(make, {"m": m})  # noqa: S307 - the calls above
        return (x.stride(), x.mT.stride(), x.flip(0).stride(), x.unsqueeze(0).mT.stride(),
                x.permute(*reversed(range(x.ndim))).stride())
    assert strides(gradkit) == strides(torch)


def test_as_strided_scatter_gradient_beside_a_convolutions_zero_signs_is_known():
    """torch's as_strided_scatter gives self the gradient of the written slice (a documented
    torch bug: gradkit's is the derivative, [0, 0, 0, 4, ...] below), here of a convolution
    whose padded zeros are +0.0 in torch and -0.0 here (the documented sign of a zero sum of
    products): two Knowns at once (wide seed 253093)."""
    from fuzz.known import diff_program
    from fuzz.programs import RandomDrawer, generate
    def gradient(lib):
        x = lib.arange(9.0).reshape(1, 1, 3, 3).requires_grad_()
        y = lib.as_strided_scatter(x * 1, lib.zeros(3, 1), (3, 1), (1, 3), 0)
        return lib.autograd.grad((y * lib.arange(1.0, 10.0).reshape(1, 1, 3, 3)).sum(), x)[0]
    assert gradient(gradkit).flatten().tolist() == [0, 0, 0, 4, 5, 6, 7, 8, 9]
    assert gradient(torch).flatten().tolist() == [1, 2, 3, 0, 0, 0, 0, 0, 0]
    problems, known = diff_program(generate(RandomDrawer(253093), "wide"))
    assert problems and known.startswith("as_strided_scatter's gradient of self")
