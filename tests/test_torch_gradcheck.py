"""gradcheck compared with torch on the same programs: forward-mode checks of custom jvps,
fast mode with outputs that alias inputs, and backward with undefined output gradients."""
import warnings

import pytest

import gradkit
from gradkit.autograd.gradcheck import GradcheckError
from torch_expectations.functions import function_of

torch = pytest.importorskip("torch")


def _verdict(lib, func_of, **options):
    """gradcheck's answer: True, or the error's type and the first line of its message."""
    x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return lib.autograd.gradcheck(func_of(lib), (x,), **options)
        except Exception as exc:  # noqa: BLE001 - the error is the answer compared with torch
            return type(exc).__name__, str(exc).splitlines()[0]


def _doubling(jvp_factor, materialize=True, undefined_gives_ones=False):
    """A custom Function x -> 2x whose jvp multiplies by ``jvp_factor``."""
    def make(lib):
        class Double(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.set_materialize_grads(materialize)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                if g is None:
                    return lib.ones(2, dtype=lib.float64) if undefined_gives_ones else None
                return g * 2

            @staticmethod
            def jvp(ctx, t):
                return t * jvp_factor
        return Double.apply
    return make


def _sin_cos(needs_both: bool):
    """sin and cos of x in one Function, whose backward copes with a missing gradient (None)
    or, with ``needs_both``, raises a RuntimeError."""
    def make(lib):
        class SinCos(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.set_materialize_grads(False)
                ctx.save_for_backward(x)
                return x.sin(), x.cos()

            @staticmethod
            def backward(ctx, g_sin, g_cos):
                x, = ctx.saved_tensors
                if needs_both and (g_sin is None or g_cos is None):
                    raise RuntimeError("both gradients are needed")
                grad = lib.zeros_like(x)
                if g_sin is not None:
                    grad = grad + g_sin * x.cos()
                if g_cos is not None:
                    grad = grad - g_cos * x.sin()
                return grad
        return SinCos.apply
    return make


PROGRAMS = {
    "wrong_jvp": (_doubling(3), {"check_forward_ad": True}),
    "wrong_jvp_fast": (_doubling(3), {"check_forward_ad": True, "fast_mode": True}),
    "wrong_jvp_forward_only": (_doubling(3), {"check_forward_ad": True,
                                              "check_backward_ad": False}),
    "wrong_jvp_unchecked": (_doubling(3), {}),
    "right_jvp": (_doubling(2), {"check_forward_ad": True}),
    "right_jvp_fast": (_doubling(2), {"check_forward_ad": True, "fast_mode": True}),
    "builtin_ops_forward": (lambda lib: lambda t: (t.sin() * t).exp(),
                            {"check_forward_ad": True}),
    "alias_identity_fast": (lambda lib: lambda t: t, {"fast_mode": True}),
    "alias_view_fast": (lambda lib: lambda t: t.view(2), {"fast_mode": True}),
    "alias_slice_fast": (lambda lib: lambda t: t[:1], {"fast_mode": True}),
    "alias_two_outputs_fast": (lambda lib: lambda t: (t, t * 3), {"fast_mode": True}),
    "undefined_grad_gives_ones": (_doubling(2, materialize=False, undefined_gives_ones=True),
                                  {}),
    "undefined_grad_gives_ones_fast": (
        _doubling(2, materialize=False, undefined_gives_ones=True), {"fast_mode": True}),
    "undefined_grad_unchecked": (_doubling(2, materialize=False, undefined_gives_ones=True),
                                 {"check_undefined_grad": False}),
    "undefined_grad_gives_none": (_doubling(2, materialize=False), {}),
    "two_outputs_one_undefined": (_sin_cos(needs_both=False), {}),
    "two_outputs_failing_on_one_undefined": (_sin_cos(needs_both=True), {}),
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_gradcheck_verdict_matches_torch(name):
    func_of, options = PROGRAMS[name]
    assert _verdict(gradkit, func_of, **options) == _verdict(torch, func_of, **options)


def test_wrong_jvp_message_shows_both_jacobians():
    with pytest.raises(GradcheckError, match=(
            r"(?s)Jacobian computed with forward mode mismatch for output 0 with respect to "
            r"input 0,\nnumerical:.*2\..*analytical:.*3\.")):
        x = gradkit.tensor([1.0, 2.0], dtype=gradkit.float64, requires_grad=True)
        gradkit.autograd.gradcheck(_doubling(3)(gradkit), (x,), check_forward_ad=True)


def test_undefined_grad_failure_warns_like_torch():
    x = gradkit.tensor([1.0, 2.0], dtype=gradkit.float64, requires_grad=True)
    func = _doubling(2, materialize=False, undefined_gives_ones=True)(gradkit)
    with pytest.warns(UserWarning, match="New undefined gradient support checking"):
        assert not gradkit.autograd.gradcheck(func, (x,), raise_exception=False)


def _small_error_everywhere(lib):
    """x -> 0 * x whose vjp puts 4e-6 (under atol 1e-5) in every Jacobian entry."""
    return function_of(lib, lambda x: x * 0, lambda g: g.sum() * 4e-6 * lib.ones_like(g))


@pytest.mark.parametrize("fast_mode", [False, True])
def test_fast_mode_tolerance_scales_as_torchs(fast_mode):
    """torch's fast mode draws unit vectors u, v and compares u^T J v with atol * sum(u) *
    sum(v), so an error under atol in every entry passes, as in slow mode; an unscaled atol
    failed it here."""
    def verdict(lib):
        x = lib.arange(100, dtype=lib.float64).requires_grad_()
        return lib.autograd.gradcheck(_small_error_everywhere(lib), (x,), fast_mode=fast_mode,
                                      raise_exception=False)
    assert verdict(gradkit) is verdict(torch) is True


def _failure(lib, func, inputs, **options) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as info:
            lib.autograd.gradcheck(func, inputs, **options)
    return str(info.value).replace("torch.", "LIB.").replace("gradkit.", "LIB.")


def _halved(lib):
    return lambda a: (a * a.detach()).sum()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_slow_mode_failure_prints_torchs_jacobians(dtype):
    """The blocks are tensors in torch's layout: a row per input element, a column per output
    element, in the input's dtype."""
    def text(lib):
        x = lib.tensor([1.0, 2.0], dtype=getattr(lib, dtype), requires_grad=True)
        return _failure(lib, _halved(lib), (x,))
    assert text(gradkit) == text(torch)


@pytest.mark.parametrize("forward", [False, True])
def test_fast_mode_failure_recomputes_the_pair_in_slow_mode_as_torch(forward):
    """After the fast-mode quantities (random vectors: they differ from torch's draws), torch
    prints the failing pair's whole Jacobians and their largest difference; forward mode's
    quantities are J v vectors of the output's size."""
    def parts(lib):
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        y = lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=lib.float64, requires_grad=True)
        text = _failure(lib, lambda a, b: (b * 2, (a * a.detach())[:, None] * b), (x, y),
                        fast_mode=True, check_forward_ad=forward, check_backward_ad=not forward)
        head, _, slow = text.partition("\nThe above quantities")
        # (torch's forward-mode Jacobian is built on its graph: we print no grad_fn)
        slow = slow.replace(", grad_fn=<CopySlices>", "")
        quantities = [line.split(":")[1] for line in head.splitlines()[1:3]]
        return head.splitlines()[0], [q.startswith("tensor([") for q in quantities], slow
    ours, torchs = parts(gradkit), parts(torch)
    assert ours == torchs and ours[1] == [forward, forward]
    assert "Below, we recompute numerical and analytical jacobians in slow mode" in ours[2]


def _cancelling(lib):
    """x0 - x1, whose vjp is 9e-4 off (under rtol 1e-3) in both entries: u^T J v cancels in
    fast mode, where the relative error then shows."""
    return function_of(lib, lambda x: x[0] - x[1],
                       lambda g: g * lib.tensor([1 + 9e-4, -1 + 9e-4], dtype=lib.float64))


def test_fast_mode_failure_says_when_slow_mode_would_pass():
    """A fast-mode failure whose slow-mode Jacobians agree ends with torch's advice."""
    x = gradkit.tensor([1.0, 2.0], dtype=gradkit.float64, requires_grad=True)
    assert gradkit.autograd.gradcheck(_cancelling(gradkit), (x,), atol=0)
    text = _failure(gradkit, _cancelling(gradkit), (x,), atol=0, fast_mode=True)
    assert text.endswith("module_test entry to have `gradcheck_fast_mode=False`")
    assert "Fast gradcheck failed but element-wise differences are small" in text
