"""The checks gradcheck makes besides the backward Jacobian, as torch makes them: the
forward-mode Jacobian (``check_forward_ad``), backward with undefined output gradients
(``check_undefined_grad``), backward multiplied by grad_output, and a function without
differentiable outputs."""
from __future__ import annotations

import warnings

import numpy as np

from gradkit._tensor import Tensor
from gradkit.autograd import forward_ad
from gradkit.autograd.api import grad as autograd_grad
from gradkit.autograd.function import Function
from gradkit.autograd.grad_mode import enable_grad
from gradkit.backend import get_array_module
from gradkit.creation import zeros_like

UNDEFINED_NOTE = 'Please look at "Notes about undefined output gradients" in ' \
    '"tools/autograd/derivatives.yaml"'


# helpers gradcheck.py shares
def _as_tuple(x):
    return x if isinstance(x, tuple) else (tuple(x) if isinstance(x, list) else (x,))


def _outputs(func, inputs):
    with enable_grad():
        out = _as_tuple(func(*inputs))
    return [o for o in out if isinstance(o, Tensor)]


def _real_components(array):
    """The real numbers a tensor's value is made of: [re] or [re, im] per element."""
    flat = np.asarray(array).reshape(-1)
    if flat.dtype.kind == "c":
        return np.concatenate([flat.real, flat.imag])
    return flat.astype(np.float64)


def _host(a):
    return a if isinstance(a, (np.ndarray, np.generic)) else a.get()


def _device_like(like, host):
    return get_array_module(like).asarray(host)


def check_same_outputs(first, second, eps: float, on_index: str) -> None:
    """torch's check that moving an input by ``eps`` changes no output's shape or dtype."""
    for a, b in zip(first, second):
        for what, x, y in (("shape", a.shape, b.shape), ("dtype", a.dtype, b.dtype)):
            if x != y:
                raise AssertionError(f"Expected `func` to return outputs with the same {what} "
                                     f"when inputs are perturbed {on_index}by {eps}, but got: "
                                     f"{what}s {x} and {y}.")


def reproduced(grads, again, nondet_tol: float) -> bool:
    """Whether a second backward gave the same gradients, within ``nondet_tol``."""
    return all(g1 is None or g2 is None or np.max(
        np.abs(_host(g1._data) - _host(g2._data)), initial=0) <= nondet_tol
        for g1, g2 in zip(grads, again))


def not_reentrant_message(nondet_tol: float) -> str:
    return ("Backward is not reentrant, i.e., running backward with same input and grad_output "
            "multiple times gives different values, although analytical gradient matches "
            f"numerical gradient.The tolerance for nondeterminism was {nondet_tol}.")


def _differentiable(t) -> bool:
    return isinstance(t, Tensor) and t.requires_grad


def jvp_outputs(func, inputs, tangents: dict) -> list:
    """The output tangents of ``func`` at ``inputs`` for ``tangents`` {input index: array};
    outputs without a tangent get zeros. As torch, every input that requires grad goes in
    detached, as a dual (a zero tangent when ``tangents`` has none for it)."""
    with forward_ad.dual_level():
        duals = [forward_ad.make_dual(t.detach(), Tensor._make(tangents[i]) if i in tangents
                                      else zeros_like(t.detach()))
                 if i in tangents or _differentiable(t) else t for i, t in enumerate(inputs)]
        out = func(*duals)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        result = []
        for o in outs:
            if not isinstance(o, Tensor):
                continue
            tangent = forward_ad.unpack_dual(o).tangent
            data = _host(o._data)
            result.append(np.zeros_like(data) if tangent is None else _host(tangent._data))
        return result


def forward_jacobian(func, inputs, index: int) -> np.ndarray:
    """J[r, c]: d(real output component r) / d(real component c of input ``index``), one jvp
    per column (a unit tangent; 1j for the imaginary part of a complex input)."""
    host = _host(inputs[index]._data)
    parts = (1, 1j) if host.dtype.kind == "c" else (1,)
    columns = []
    for part in parts:
        for k in range(host.size):
            tangent = np.zeros(host.size, dtype=host.dtype)
            tangent[k] = part
            tangent = tangent.reshape(host.shape)
            if not isinstance(inputs[index]._data, np.ndarray):
                tangent = _device_like(inputs[index]._data, tangent)
            outs = jvp_outputs(func, inputs, {index: tangent})
            columns.append(np.concatenate([_real_components(o) for o in outs] or [np.zeros(0)]))
    return np.stack(columns, axis=1) if columns else np.zeros((0, 0))


def check_undefined_tangents(func, inputs, indices, error) -> None:
    """torch's _test_undefined_forward_mode: with every differentiable input dual, giving one
    of them a zero tangent or no tangent at all (a plain tensor) gives the same tangents."""
    rng = np.random.default_rng(0)
    with forward_ad.dual_level():
        duals = list(inputs)
        for i in indices:
            duals[i] = forward_ad.make_dual(inputs[i].detach(), Tensor._make(
                _device_like(inputs[i]._data, rng.standard_normal(inputs[i].shape)
                             .astype(_host(inputs[i]._data).dtype))))
        for i in indices:
            kept = duals[i]
            duals[i] = forward_ad.make_dual(inputs[i].detach(), zeros_like(inputs[i].detach()))
            with_zeros = _outputs(func, duals)
            duals[i] = inputs[i].detach()
            without = _outputs(func, duals)
            duals[i] = kept
            for k, (a, b) in enumerate(zip(with_zeros, without)):
                ta, tb = forward_ad.unpack_dual(a).tangent, forward_ad.unpack_dual(b).tangent
                if ta is not None and tb is not None and not np.allclose(
                        _host(ta._data), _host(tb._data), rtol=1e-05, atol=1e-08):
                    raise error(f"Mismatch in tangent values for output with index: {k} when "
                                f"input: {inputs[i]} has an undefined tangent value. "
                                f" Got: {ta} but expected: {tb}")


class _UndefinedGrad(Function):
    """Identity whose backward gives no gradient (torch's ``UndefinedGrad``)."""

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        return None


def check_undefined_grad(func, inputs, indices, error) -> None:
    """Backward must cope with undefined (None) output gradients, for all outputs at once and,
    with several outputs, one at a time; input gradients must then be None or zero."""
    diff_inputs = [inputs[i] for i in indices]

    def differentiable():
        return [o for o in _outputs(func, inputs) if o.requires_grad]

    checks = [[_UndefinedGrad.apply(o) for o in differentiable()]]
    if len(checks[0]) > 1:
        for undefined in range(len(checks[0])):
            checks.append([_UndefinedGrad.apply(o) if k == undefined else o
                           for k, o in enumerate(differentiable())])
    for outputs in checks:
        try:
            grads = autograd_grad(outputs, diff_inputs, [zeros_like(o) for o in outputs],
                                  allow_unused=True)
        except RuntimeError as exc:
            _warn_new_check()
            raise error("Expected backward function to handle undefined output grads. "
                        + UNDEFINED_NOTE) from exc
        if any(g is not None and np.any(_host(g._data) != 0) for g in grads):
            _warn_new_check()
            raise error("Expected all input grads to be undefined or zero when all output grads "
                        "are undefined or zero. " + UNDEFINED_NOTE)


def _warn_new_check() -> None:
    warnings.warn("Backwards compatibility: New undefined gradient support checking feature is "
                  "enabled by default, but it may break existing callers of this function. If "
                  "this is true for you, you can call this function with "
                  '"check_undefined_grad=False" to disable the feature', stacklevel=3)


def check_backward_mul_by_grad_output(outputs, inputs, indices, error) -> None:
    """Zero output gradients must give zero input gradients (a backward that adds a constant
    passes a loose Jacobian check but not this one)."""
    diff = [o for o in outputs if o.requires_grad]
    if not diff:
        return
    grads = autograd_grad(diff, [inputs[i] for i in indices], [zeros_like(o) for o in diff],
                          retain_graph=True, allow_unused=True)
    for g in grads:
        if g is not None and np.any(_host(g._data) != 0):
            raise error("backward not multiplied by grad_output")
