"""torch's own unary ufunc tests (pytorch/pytorch test/test_unary_ufuncs.py, TestUnaryUfuncs and
TestUnaryUfuncMathOps) re-run as programs under torch 2.13 and gradkit: the OpInfo-driven
tests over every unary op here (reference numerics at normal, small, large and extremal values,
every dtype, (non)contiguous layouts, 0-size and 0-d tensors, batch vs slices, method and
in-place variants, integer in-place refusals) and the gradients at the same values. The named
tests are in test_unary_ufuncs_torch_expectations_named.py. What is in scope, and what is not,
is in docs/torch_expectations.md ("Unary ufuncs and complex").
"""
import numpy as np
import pytest
from unary_ufunc_cases import (
    DTYPES, KNOWN, OPS, SIMD_DEPENDENT, SMALL, assert_same_outcome, make, outcome, program_for,
    values)

import gradkit

torch = pytest.importorskip("torch")

OP_IDS = [name for name, _ in OPS]
OP_PROGRAMS = [fn for _, fn in OPS]


def _without_known(name, data):
    skipped = KNOWN.get(name, [])
    return [v for v in data if not any(v == s for s in skipped)]


def _same(name, fn, data, dtype, where="", rtol=None, signed_zeros=True, around=None):
    """``fn`` on ``data`` as a ``dtype`` tensor: the same outcome in both libraries;
    ``around(program)`` wraps the op's program (the gradient tests, where torch's SIMD and
    scalar loops agree but for the sign of complex zeros, which they do not compare)."""
    def run(lib):
        program = around(fn) if around else program_for(name, fn, lib)
        return outcome(lib, lambda lib: program(lib, make(lib, data, dtype)))
    got, expected = run(gradkit), run(torch)
    assert_same_outcome(got, expected, where, rtol, signed_zeros)


# -- test_reference_numerics_{normal,small,large,extremal}, test_float_domains -----------------

@pytest.mark.parametrize("fn", OP_PROGRAMS, ids=OP_IDS)
def test_reference_numerics_every_dtype(fn, request):
    """Each op at torch's interesting values (and NaN, ±inf, ±0.0, subnormals, the format's
    edges) in every dtype: the same values, dtype, or the same error."""
    name = request.node.callspec.id
    for dtype in DTYPES:
        data = _without_known(name, values(dtype))
        # float16 is exact (torch computes in float32 and rounds once, so does gradkit) but
        # for polygamma, whose Hurwitz sum torch runs in float32 and gradkit in float64
        rtol = 2e-3 if dtype == "float16" and name.startswith("polygamma") else None
        _same(name, fn, data, dtype, where=dtype, rtol=rtol)


def _run_on(fn, name, build):
    """``fn`` on the tensor ``build(lib)`` in both libraries: the same outcome."""
    got = outcome(gradkit, lambda lib: program_for(name, fn, lib)(lib, build(lib)))
    expected = outcome(torch, lambda lib: program_for(name, fn, lib)(lib, build(lib)))
    assert_same_outcome(got, expected, name)


@pytest.mark.parametrize("fn", OP_PROGRAMS, ids=OP_IDS)
def test_empty_and_zero_dim_tensors(fn, request):
    """generate_elementwise_unary_tensors' 0-size shapes and 0-d tensors, in float32 and int64."""
    name = request.node.callspec.id
    for dtype in ("float32", "int64", "complex64"):
        for shape in ((0,), (0, 3, 3), (1, 0, 5), (6, 0, 0, 0), (3, 0, 1, 0)):
            _run_on(fn, name, lambda lib, s=shape, d=dtype: lib.zeros(s, dtype=getattr(lib, d)))
        for value in (0.25, -0.0, 7.0):
            _run_on(fn, name, lambda lib, v=value, d=dtype: make(lib, v, d))


# -- test_contig_vs_every_other, test_contig_vs_transposed, test_non_contig*, test_contig_size1*,
#    test_batch_vs_slicing: the op on a strided view equals the op on its contiguous copy --------

_LAYOUTS = {
    "every_other": lambda x: x.reshape(-1)[::2],
    "transposed": lambda x: x.reshape(6, 10).T,
    "non_contig_last_dim": lambda x: x.reshape(6, 10)[:, ::2],
    "non_contig_index": lambda x: x.reshape(2, 2, 15)[:, 1, ...],
    "expanded": lambda x: x.reshape(60)[:7].expand(3, -1),
    "size1": lambda x: x.reshape(5, 12)[:1, :6],
    "size1_large_dim": lambda x: x.reshape(1, 2, 3, 1, 2, 5, 1)[:1, :, :, :, :, :, :],
}


@pytest.mark.parametrize("layout", list(_LAYOUTS))
@pytest.mark.parametrize("dtype", ["float64", "complex128", "int32"])
def test_non_contiguous_inputs(layout, dtype):
    """Every op on a strided view gives what torch gives on the same view, and what the op
    gives on the view's contiguous copy; batch_vs_slicing: the op of a batch is the stack of
    the op of its rows."""
    data = np.resize(np.array(values(dtype, SMALL[2:16] + [2.5, -3.5])
                              if dtype != "int32" else values(dtype)), 60)
    view_of = _LAYOUTS[layout]
    for name, fn in OPS:
        _check_layout(name, fn, view_of, data, dtype, layout)


def _check_layout(name, fn, view_of, data, dtype, layout):
    program = program_for(name, fn, gradkit)
    got = outcome(gradkit, lambda lib: program(lib, view_of(make(lib, data, dtype))))
    copied = outcome(gradkit, lambda lib: program(
        lib, view_of(make(lib, data, dtype)).contiguous()))
    assert_same_outcome(got, copied, f"{name} {layout} vs contiguous", rtol=0.0)
    expected = outcome(torch, lambda lib: program_for(name, fn, torch)(
        lib, view_of(make(lib, data, dtype))))
    assert_same_outcome(got, expected, f"{name} {layout}")
    if got[0] == "ok" and layout == "transposed":
        rows = outcome(gradkit, lambda lib: lib.stack(
            [program(lib, row) for row in view_of(make(lib, data, dtype))]))
        assert_same_outcome(rows, got, f"{name} batch vs slicing", rtol=0.0)


# -- test_variant_consistency (older file): function == method == in-place; an in-place op
#    whose result type cannot be cast to an integer input raises torch's error ---------------

_METHODS = sorted(name for name in OP_IDS if "." not in name and hasattr(torch.Tensor, name)
                  and not name.startswith("clamp"))  # clamp's bounds: in the OPS programs


@pytest.mark.parametrize("dtype", ["float64", "float32", "complex128", "int64", "uint8",
                                   "bool"])
def test_function_method_and_inplace_variants(dtype):
    """x.op() and x.clone().op_() against torch.op(x): same values, or torch's error (for
    example ``result type Float can't be cast to the desired output type Long``)."""
    data = values(dtype, [0.0, -0.0, 0.25, -0.5, 0.75, 2.0, -3.0, 1e3, np.inf, np.nan])
    for name in _METHODS:
        for variant in (name, name + "_"):
            if not hasattr(torch.Tensor, variant):
                assert not hasattr(gradkit.Tensor, variant), variant
                continue

            def program(lib, x, variant=variant):
                target = x.clone()
                result = getattr(target, variant)()
                if variant.endswith("_"):
                    assert result is target
                return result

            _same(name, program, data, dtype, where=f"{variant} {dtype}")


@pytest.mark.parametrize("variant", ["sin_", "exp_", "sqrt_", "sigmoid_", "log1p_", "rsqrt_",
                                     "erfinv_", "digamma_", "i0_", "sinc_", "logit_"])
@pytest.mark.parametrize("dtype", ["int64", "int8", "uint8", "bool"])
def test_inplace_float_result_on_integer_tensor_refused(variant, dtype):
    """The cast check of an in-place op that promotes to float: torch's message, word for
    word (``result type Float can't be cast to the desired output type Long``)."""
    def program(lib):
        getattr(make(lib, [1, 0, 1], dtype), variant)()
    got, expected = outcome(gradkit, program), outcome(torch, program)
    assert expected[0] == "raises" and "can't be cast to the desired output type" in expected[2]
    assert got == expected


# -- gradients at the same values (torch's OpInfo gradient tests use random values; these are
#    the reference-numerics ones): first derivatives in float64 and complex128, second ones in
#    float64 --------------------------------------------------------------------------------



def _gradients(fn, order):
    def program(lib, x):
        x = x.detach().requires_grad_(True)
        y = fn(lib, x)
        if not (y.requires_grad and (y.is_floating_point() or y.is_complex())):
            return (y,)
        loss = (y.real.sum() + 0.37 * y.imag.sum()) if y.is_complex() else y.sum()
        g, = lib.autograd.grad(loss, x, create_graph=order == 2)
        if order == 2 and g.requires_grad:
            g, = lib.autograd.grad(g.sum(), x, allow_unused=True, materialize_grads=True)
        return (y.detach(), g.detach())
    return program


def _each_element(name, program):
    """For the SIMD_DEPENDENT ops, ``program`` (which returns a tuple) on each element alone, as
    a leaf of its own: torch's scalar loop, without summing gradients over slices (where
    -0.0 + 0.0 would be +0.0)."""
    if name not in SIMD_DEPENDENT:
        return program

    def run(lib, x):
        if x.numel() == 0:
            return program(lib, x)
        results = [program(lib, x[i:i + 1]) for i in range(x.numel())]
        return tuple(lib.cat(column) for column in zip(*results))
    return run


@pytest.mark.parametrize("fn", OP_PROGRAMS, ids=OP_IDS)
def test_gradients_at_reference_values(fn, request):
    """d op / dx at torch's interesting values: the same gradient (or error) as torch's; the
    sign of a complex gradient's zero parts is not compared (torch's SIMD and scalar loops
    disagree on it)."""
    name = request.node.callspec.id
    for dtype in ("float64", "complex128"):
        data = _without_known(name, values(dtype))
        _same(name, fn, data, dtype, where=f"d/dx {dtype}", signed_zeros=dtype == "float64",
              around=lambda program: _each_element(name, _gradients(program, 1)))


@pytest.mark.parametrize("fn", OP_PROGRAMS, ids=OP_IDS)
def test_second_derivatives(fn, request):
    """d² op / dx² in float64 at values that are neither subnormal nor huge (the sign of a
    zero not compared; rtol 1e-9: sinc's cancels near 0)."""
    name = request.node.callspec.id
    data = [v for v in SMALL if v == 0 or 1e-30 < abs(v)] + [-50.5, 50.5, np.inf, -np.inf, np.nan]
    _same(name, fn, data, "float64", where="d2/dx2", rtol=1e-9, signed_zeros=False,
          around=lambda program: _each_element(name, _gradients(program, 2)))


# float32 and float16 gradients: torch's backward of a float16 tensor computes each op in
# float32 and rounds, as gradkit's; a composite formula with a Python number rounds that number
# to float16 in NumPy (sinc's pi x: a few float16 ulps), and cancellations (1 - tanh², erfcx's
# 2x erfcx(x) - 2/sqrt(pi) at 700, ndtr's 1 + erf) leave ulps of the larger term
_NARROW_TOLERANCES = {"float32": (5e-5, 2e-7), "float16": (1e-2, 2e-3)}  # (rtol, atol)


@pytest.mark.parametrize("dtype", list(_NARROW_TOLERANCES))
def test_gradients_in_float32_and_float16(dtype):
    rtol, atol = _NARROW_TOLERANCES[dtype]
    data = [v for v in SMALL if v == 0 or abs(v) > 1e-4] + [-5.5, 5.5, 50.5, -50.5, 700.0,
                                                            np.inf, -np.inf, np.nan]
    for name, fn in OPS:
        data_here = _without_known(name, data)

        def run(lib, name=name, fn=fn, data_here=data_here):
            program = _each_element(name, _gradients(fn, 1))
            return outcome(lib, lambda lib: program(lib, make(lib, data_here, dtype)))
        assert_same_outcome(run(gradkit), run(torch), f"{name} {dtype}", rtol,
                            signed_zeros=False, atol=atol)
