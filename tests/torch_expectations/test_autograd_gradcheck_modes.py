"""torch's expectations of gradcheck's modes: forward-mode checks, which checks run for which
flags, how often a Function's jvp is called, outputs that change under perturbation, and
GradcheckError."""
import importlib

import pytest

from .twin import like_torch, raises_like_torch

MODES = pytest.mark.parametrize("fast_mode", [False, True])


def _rand(lib, n, dtype="float64", seed=0, requires_grad=True):
    values = lib.linspace(0.25, 0.75, n, dtype=lib.float64) + 0.1 * seed
    if dtype == "complex128":
        values = values + 1j * values.flip(0)
    return values.detach().requires_grad_(requires_grad)


def _scaled_tangent(lib):
    """The identity (a copy) whose jvp is 10 % off."""

    class ScaledTangent(lib.autograd.Function):
        @staticmethod
        def forward(ctx, y):
            return y.clone()

        @staticmethod
        def backward(ctx, g):
            return g

        @staticmethod
        def jvp(ctx, t):
            return t * 1.1

    return ScaledTangent.apply


@MODES
def test_gradcheck_error_is_a_runtime_error_and_can_be_returned_as_false(fast_mode):
    # torch: test_gradcheck_custom_error
    def shifted(x):
        y = x.clone()
        y.register_hook(lambda g: g + 1e-2)
        return y

    def program(lib):
        error = importlib.import_module(lib.__name__ + ".autograd.gradcheck").GradcheckError
        x = lib.ones(2, 2, dtype=lib.float64, requires_grad=True)
        with pytest.raises(error,
                           match="Jacobian mismatch for output 0 with respect to input 0"):
            lib.autograd.gradcheck(shifted, (x,), fast_mode=fast_mode)
        return (issubclass(error, RuntimeError),
                lib.autograd.gradcheck(shifted, (x,), raise_exception=False,
                                       fast_mode=fast_mode))

    assert like_torch(program) == (True, False)

    def other_error(lib):
        def fails(x):
            raise RuntimeError("Not a GradcheckError!")

        lib.autograd.gradcheck(fails, (lib.ones(2, dtype=lib.float64, requires_grad=True),),
                               fast_mode=fast_mode, raise_exception=False)

    raises_like_torch(other_error, RuntimeError, "Not a GradcheckError!")


@MODES
@pytest.mark.parametrize("x_dtype,y_dtype", [("float64", "float64"), ("complex128", "float64"),
                                             ("complex128", "complex128")])
def test_gradcheck_forward_ad_names_the_input_with_a_wrong_tangent(fast_mode, x_dtype, y_dtype):
    # torch: test_gradcheck_forward_ad (our wrong tangent: a Function's jvp, not fwAD internals)
    def good(x, y):
        return x + y, y

    def program(lib):
        x, y = _rand(lib, 2, x_dtype), _rand(lib, 2, y_dtype, seed=1)
        ok = lib.autograd.gradcheck(good, (x, y), check_forward_ad=True, fast_mode=fast_mode)

        def bad(x, y):
            y = _scaled_tangent(lib)(y)
            return x + y, y

        # as torch, a complex input is checked by its imaginary part first, the message
        # saying so (fixed in gradkit: no prefix)
        prefix = "While considering the imaginary part of complex inputs only, " \
            if y_dtype == "complex128" else ""
        with pytest.raises(RuntimeError, match=f"^{prefix}Jacobian computed with forward mode "
                                               "mismatch for output 0 with respect to input 1"):
            lib.autograd.gradcheck(bad, (x, y), check_forward_ad=True, fast_mode=fast_mode)
        return ok

    assert like_torch(program) is True


def _identity_pair(lib, record):
    class IdentityPair(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            record.append(("forward", x.requires_grad, y.requires_grad))
            return x.clone(), y.clone()

        @staticmethod
        def jvp(ctx, x_t, y_t):
            record.append(("jvp",))
            return x_t, y_t

    return IdentityPair.apply


@pytest.mark.parametrize("check_undefined_grad", [False, True])
@pytest.mark.parametrize("y_requires_grad", [True, False])
def test_forward_only_gradcheck_calls_jvp_with_inputs_that_do_not_require_grad(
        check_undefined_grad, y_requires_grad):
    # torch: test_gradcheck_forward_ad_runs_with_no_requires_grad,
    # test_gradcheck_forward_ad_respects_requires_grad (without check_batched_forward_grad)
    def program(lib):
        record = []
        x = _rand(lib, 1)
        y = _rand(lib, 1, seed=1, requires_grad=y_requires_grad)
        ok = lib.autograd.gradcheck(_identity_pair(lib, record), (x, y), check_forward_ad=True,
                                    check_undefined_grad=check_undefined_grad,
                                    check_backward_ad=False, check_batched_grad=False)
        jvps = sum(entry == ("jvp",) for entry in record)
        # every forward call made in a dual level sees inputs that do not require grad
        flags = {entry[1:] for entry, following in zip(record, record[1:])
                 if entry[0] == "forward" and following == ("jvp",)}
        return ok, jvps, sorted(flags)

    ok, jvps, flags = like_torch(program)
    assert ok and flags == [(False, False)]
    # one jvp per input element, then (undefined-tangent check) two per input, or one when
    # only one input is differentiable: the plain-tensor call has no dual input left
    assert jvps == (1 + y_requires_grad) + (check_undefined_grad * (1 + 3 * y_requires_grad))


@MODES
@pytest.mark.parametrize("check_forward_ad", [False, True])
@pytest.mark.parametrize("check_backward_ad", [False, True])
@pytest.mark.parametrize("forward_bad", [False, True])
@pytest.mark.parametrize("backward_bad", [False, True])
def test_only_the_checks_asked_for_run(fast_mode, check_forward_ad, check_backward_ad,
                                       forward_bad, backward_bad):
    # torch: test_gradcheck_check_forward_or_backward_only
    def program(lib):
        class Double(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, fwd_bad, bwd_bad):
                ctx.fwd_bad, ctx.bwd_bad = fwd_bad, bwd_bad
                return x * 2

            @staticmethod
            def vjp(ctx, g):
                if ctx.bwd_bad:
                    raise RuntimeError("FAIL BWD")
                return 2 * g, None, None

            @staticmethod
            def jvp(ctx, t, _fwd_bad, _bwd_bad):
                if ctx.fwd_bad:
                    raise RuntimeError("FAIL FWD")
                return 2 * t

        return lib.autograd.gradcheck(
            Double.apply, (_rand(lib, 2), forward_bad, backward_bad),
            check_forward_ad=check_forward_ad, check_backward_ad=check_backward_ad,
            check_undefined_grad=check_backward_ad, check_batched_grad=False,
            fast_mode=fast_mode)

    if not (check_forward_ad or check_backward_ad):
        raises_like_torch(program, AssertionError, "Expected at least one of check_forward_ad "
                                                   "or check_backward_ad to be True")
    elif backward_bad and check_backward_ad:  # a backward failure hides a forward one
        raises_like_torch(program, RuntimeError, "FAIL BWD")
    elif forward_bad and check_forward_ad:
        raises_like_torch(program, RuntimeError, "FAIL FWD")
    else:
        assert like_torch(program) is True


def test_batched_grad_check_needs_the_backward_check():
    # torch: gradcheck's argument check (test_gradcheck_check_forward_or_backward_only's kin)
    raises_like_torch(lambda lib: lib.autograd.gradcheck(
        lambda x: x * 2, (_rand(lib, 2),), check_forward_ad=True, check_backward_ad=False,
        check_batched_grad=True), AssertionError,
        "Setting check_batched_grad=True requires check_backward_ad to be True")


@MODES
@pytest.mark.parametrize("what", ["shape", "dtype"])
def test_outputs_that_change_shape_or_dtype_under_perturbation_are_refused(fast_mode, what):
    # torch: test_gradcheck_validates_input ... "when inputs are perturbed" (both modes)
    def program(lib):
        def jumpy(x):
            if bool((x >= 1).all()):
                return lib.cat([x, x]) if what == "shape" else x.to(lib.float32)
            return x

        lib.autograd.gradcheck(jumpy, (lib.ones(1, dtype=lib.float64, requires_grad=True),),
                               fast_mode=fast_mode)

    on_index = "" if fast_mode else r"on index \(0,\) "
    info = raises_like_torch(program, AssertionError,
                             f"return outputs with the same {what} when inputs are perturbed "
                             f"{on_index}by 1e-06, but got: {what}s")
    assert ("[1]) and " if what == "shape" else "float64 and ") in str(info.value)


def test_gradcheck_of_complex_and_real_outputs_together():
    # torch: test_gradcheck_complex_non_complex_outputs (x + 1j * y for torch.complex)
    def program(lib):
        a = lib.ones(2, 2, dtype=lib.float64, requires_grad=True)
        b = lib.ones(2, 2, dtype=lib.float64, requires_grad=True)
        c = lib.ones(2, 2, dtype=lib.complex128, requires_grad=True)
        return (lib.autograd.gradcheck(lambda x, y: (x + 1j * y, x + 1), (a, b)),
                lib.autograd.gradcheck(lambda z: (z, z.real), (c,)))

    assert like_torch(program) == (True, True)


@MODES
def test_an_input_with_a_stride_0_dimension_is_refused(fast_mode):
    # torch: test_gradcheck_validates_inputs (stride 0: raised even with raise_exception=False)
    raises_like_torch(lambda lib: lib.autograd.gradcheck(
        lambda x: x, (lib.ones(1, dtype=lib.float64, requires_grad=True).expand((2, 2)),),
        raise_exception=False, fast_mode=fast_mode), RuntimeError,
        "The 0th input has a dimension with stride 0")


def _off_by_a_hundredth(lib, x):
    """A copy of ``x`` whose backward adds 1e-2 to the gradient (torch's broken backward)."""
    y = x.clone()
    y.register_hook(lambda g: g + 1e-2)
    return y


@MODES
@pytest.mark.parametrize("case, match", [
    ("complex_to_complex", "^While considering the imaginary part of complex outputs only, "
                           "Jacobian mismatch for output 0 with respect to input 0,"),
    ("real_to_complex", "^While considering the imaginary part of complex outputs only, "
                        "Jacobian mismatch for output 0 with respect to input 0,"),
    ("complex_to_real", "^Jacobian mismatch for output 0 with respect to input 0,"),
    ("real_then_bad_complex", "^While considering the imaginary part of complex outputs only, "
                              "Jacobian mismatch for output 1 with respect to input 0,"),
    ("plain_output_first", "^Jacobian mismatch for output 0 with respect to input 0,"),
    ("plain_input_first", "^Jacobian mismatch for output 0 with respect to input 0,")])
def test_gradcheck_names_the_part_and_numbers_among_what_requires_grad(fast_mode, case, match):
    # torch: test_gradcheck_jacobian_mismatch (its complex cases, here in fast mode too: fixed in
    # gradkit, whose fast mode did not split complex outputs), and torch 2.13's numbering of
    # outputs and inputs among those that require grad (fixed in gradkit: inputs were
    # numbered by position)
    def program(lib):
        real = _rand(lib, 4)
        bad = lambda x: _off_by_a_hundredth(lib, x)  # noqa: E731
        fn, inputs = {
            "complex_to_complex": (bad, (_rand(lib, 4, "complex128"),)),
            "real_to_complex": (lambda x: bad(lib.complex(x, x)), (real,)),
            "complex_to_real": (lambda x: bad(lib.real(x)), (_rand(lib, 4, "complex128"),)),
            "real_then_bad_complex": (lambda x: (x * 2, bad(lib.complex(x, x))), (real,)),
            "plain_output_first": (lambda x: (x.detach() * 2, bad(x)), (real,)),
            "plain_input_first": (lambda a, b: bad(b) + a,
                                  (_rand(lib, 4, requires_grad=False), real)),
        }[case]
        lib.autograd.gradcheck(fn, inputs, fast_mode=fast_mode)

    raises_like_torch(program, RuntimeError, match)


@MODES
def test_forward_mode_numbers_the_output_with_a_wrong_tangent(fast_mode):
    # torch: test_gradcheck_forward_ad, with the wrong tangent on a second output (fixed in
    # gradkit: slow mode always named output 0)
    def program(lib):
        class SecondTangentOff(lib.autograd.Function):
            @staticmethod
            def forward(x):
                return x * 1, x * 2

            @staticmethod
            def setup_context(ctx, inputs, output):
                pass

            @staticmethod
            def backward(ctx, g1, g2):
                return g1 + 2 * g2

            @staticmethod
            def jvp(ctx, t):
                return t, t * 2.2

        lib.autograd.gradcheck(SecondTangentOff.apply, (_rand(lib, 3),), check_forward_ad=True,
                               check_backward_ad=False, fast_mode=fast_mode)

    raises_like_torch(program, RuntimeError, "^Jacobian computed with forward mode mismatch for "
                      "output 1 with respect to input 0,")
