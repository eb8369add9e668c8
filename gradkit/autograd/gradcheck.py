"""gradcheck / gradgradcheck: analytical gradients against finite differences.

Complex numbers follow PyTorch's convention: a complex value is checked as its
real and imaginary parts, and for a real loss L of z = a + ib the gradient is
dL/da + i dL/db. The analytical Jacobian row for a real output component comes
from one vjp seeded with 1 (real part) or 1j (imaginary part) at that element.
"""
from __future__ import annotations

import warnings

import numpy as np

from gradkit._tensor import Tensor
from gradkit.autograd.api import grad as autograd_grad
from gradkit.autograd import gradcheck_modes
from gradkit.autograd.gradcheck_fast import fast_check, rand_like
from gradkit.autograd.gradcheck_modes import (
    _as_tuple, _device_like, _host, _outputs, _real_components, check_same_outputs,
    forward_jacobian, not_reentrant_message, reproduced)


class GradcheckError(RuntimeError):
    """Raised by gradcheck when analytical and numerical gradients disagree."""


def _diff_inputs(inputs):
    return [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]


def _numerical_jacobian(func, inputs, indices, eps):
    """J[input][r, c]: d(real output component r) / d(real input component c)."""
    jacobians = []
    for i in indices:
        t = inputs[i]
        data = t._data
        # A copy, never a view of t's data: each element is perturbed from the original values
        # (a view would leave every earlier element at its minus-eps value).
        host = np.array(data if isinstance(data, np.ndarray) else data.get())
        flat = host.reshape(-1)
        columns = []
        parts = (1, 1j) if host.dtype.kind == "c" else (1,)
        for part in parts:
            for k in range(flat.size):
                orig = flat[k]
                # In grad mode, as torch: a func whose value is itself a gradient (the vjp
                # gradgradcheck differentiates, an inner functional.hvp) needs its graph.
                outs_plus = _outputs(func, _perturbed(t, host, k, orig + eps * part))
                out_plus = [_real_components(_host(o._data)) for o in outs_plus]
                outs_minus = _outputs(func, _perturbed(t, host, k, orig - eps * part))
                out_minus = [_real_components(_host(o._data)) for o in outs_minus]
                check_same_outputs(outs_minus, outs_plus, eps,
                                   f"on index {tuple(map(int, np.unravel_index(k, host.shape)))} ")
                columns.append(np.concatenate(
                    [(p - m) / (2 * eps) for p, m in zip(out_plus, out_minus)]
                    or [np.zeros(0)]))
        t._data[...] = host if isinstance(t._data, np.ndarray) else _device_like(t._data, host)
        jacobians.append(np.stack(columns, axis=1) if columns else np.zeros((0, 0)))
    return jacobians


def _restoring_numerical_jacobian(func, inputs, indices, eps):
    """``_numerical_jacobian``, the inputs' values put back afterwards."""
    _CURRENT_INPUTS[0] = inputs
    saved = [inputs[i]._data.copy() for i in indices]
    try:
        return _numerical_jacobian(func, inputs, indices, eps)
    finally:
        for i, data in zip(indices, saved, strict=True):
            inputs[i]._data[...] = data
        _CURRENT_INPUTS[0] = None


def _perturbed(t, host, k, value):
    """The inputs with element k of tensor t set to value (t's data swapped in place)."""
    flat = host.reshape(-1).copy()
    flat[k] = value
    new = flat.reshape(host.shape)
    t._data[...] = new if isinstance(t._data, np.ndarray) else _device_like(t._data, new)
    return _CURRENT_INPUTS[0]


_CURRENT_INPUTS = [None]


def _analytical_jacobian(outputs, inputs, indices, nondet_tol):
    """Rows from vjps with unit seeds; also checks they are reproducible (nondet_tol)."""
    diff_inputs = [inputs[i] for i in indices]
    rows = []
    reentrant_ok = True
    for o in outputs:
        if not o.requires_grad:
            n = _real_components(_host(o._data)).size
            rows.extend([None] * n)
            continue
        host = _host(o._data)
        parts = (1, 1j) if host.dtype.kind == "c" else (1,)
        for part in parts:
            for k in range(host.size):
                seed = np.zeros(host.size, dtype=host.dtype)
                seed[k] = part
                seed_t = Tensor._make(_device_like(o._data, seed.reshape(host.shape))
                                      if not isinstance(o._data, np.ndarray)
                                      else seed.reshape(host.shape))
                grads = autograd_grad(o, diff_inputs, seed_t, retain_graph=True,
                                      allow_unused=True)
                again = autograd_grad(o, diff_inputs, seed_t, retain_graph=True,
                                      allow_unused=True)
                reentrant_ok = reentrant_ok and reproduced(grads, again, nondet_tol)
                rows.append(grads)
    jacobians = []
    for j, i in enumerate(indices):
        t = inputs[i]
        n_cols = _real_components(_host(t._data)).size
        matrix = np.zeros((len(rows), n_cols))
        for r, grads in enumerate(rows):
            if grads is None or grads[j] is None:
                continue
            g = _host(grads[j]._data)
            if g.dtype.kind == "c" or _host(t._data).dtype.kind == "c":
                g = g.astype(np.complex128).reshape(-1)
                matrix[r] = np.concatenate([g.real, g.imag])
            else:
                matrix[r] = g.reshape(-1)
        jacobians.append(matrix)
    return jacobians, reentrant_ok


def gradcheck(func, inputs, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True, nondet_tol: float = 0.0,
              check_undefined_grad: bool = True, check_grad_dtypes: bool = False,
              check_batched_grad: bool = False, check_backward_ad: bool = True,
              check_forward_ad: bool = False, fast_mode: bool = False, masked=None) -> bool:
    """Check ``func``'s gradients at ``inputs`` against central finite differences.

    Use float64 inputs with ``requires_grad=True``::

        >>> x = gradkit.randn(3, dtype=gradkit.float64, requires_grad=True)
        >>> gradcheck(gradkit.sin, (x,))
        True
    """
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad "
                             "to be True")
    if check_batched_grad and not check_backward_ad:
        raise AssertionError("Setting check_batched_grad=True requires check_backward_ad to be "
                             "True")
    inputs = _as_tuple(inputs)
    indices = _diff_inputs(inputs)
    if not indices:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but "
                         "none of them have requires_grad=True.")
    for i in indices:
        if inputs[i].dtype.name not in ("float64", "complex128"):
            warnings.warn(f"Input #{i} requires gradient and is not a double precision floating "
                          "point or complex. This check will likely fail if all the inputs are "
                          "not of double precision floating point or complex. ", stacklevel=2)
        data = inputs[i]._data
        if data.size and any(stride == 0 and size > 1  # (NumPy gives empty arrays 0 strides)
                             for stride, size in zip(data.strides, data.shape)):
            raise RuntimeError(  # the perturbation would move every element sharing memory
                f"The {i}th input has a dimension with stride 0. gradcheck only supports inputs "
                "that are non-overlapping to be able to compute the numerical gradients "
                "correctly. You should call .contiguous on the input before passing it to "
                "gradcheck.")
    outputs = _outputs(func, inputs)
    try:
        if not any(o.requires_grad for o in outputs):
            _check_no_differentiable_outputs(func, inputs, indices, eps,
                                                            GradcheckError)
            return True
        if fast_mode:
            fast_check(func, inputs, indices, outputs, eps, atol, rtol, nondet_tol,
                       check_backward_ad, check_forward_ad, GradcheckError,
                       _slow_mode_explanation(func, inputs, outputs, eps, atol, rtol, nondet_tol))
        else:
            _slow_check(func, inputs, indices, outputs, eps, atol, rtol, nondet_tol,
                        check_backward_ad, check_forward_ad)
        if check_forward_ad and check_undefined_grad:
            gradcheck_modes.check_undefined_tangents(func, inputs, indices, GradcheckError)
        if check_backward_ad:
            gradcheck_modes.check_backward_mul_by_grad_output(outputs, inputs, indices,
                                                              GradcheckError)
        if check_backward_ad and check_undefined_grad:
            gradcheck_modes.check_undefined_grad(func, inputs, indices, GradcheckError)
    except GradcheckError:
        if raise_exception:
            raise
        return False
    return True


def _slow_check(func, inputs, indices, outputs, eps, atol, rtol, nondet_tol, check_backward_ad,
                check_forward_ad) -> None:
    """Whole Jacobians: analytical (vjps, jvps) against central differences."""
    analytical, reentrant = _analytical_jacobian(outputs, inputs, indices, nondet_tol) \
        if check_backward_ad else (None, True)  # backward alone may be broken: not called
    numerical = _restoring_numerical_jacobian(func, inputs, indices, eps)
    if check_backward_ad:
        _compare_by_output(analytical, numerical, inputs, outputs, indices, rtol, atol)
    if check_forward_ad:
        _compare_forward(func, inputs, indices, outputs, numerical, rtol, atol)
    if check_backward_ad and not reentrant:
        raise GradcheckError(not_reentrant_message(nondet_tol))


def _compare_by_output(analytical, numerical, inputs, outputs, indices, rtol, atol) -> None:
    """torch's order and words: per differentiable output, then input; with complex outputs,
    the imaginary parts of all outputs first, then the real parts, each named."""
    blocks, start = [], 0  # (pass, output, rows): a complex output's rows are re then im
    for o in outputs:
        n = o.numel()
        if o.is_complex():
            blocks += [("real", o, slice(start, start + n)),
                       ("imaginary", o, slice(start + n, start + 2 * n))]
            start += 2 * n
        else:
            blocks.append((None, o, slice(start, start + n)))
            start += n
    passes = ("imaginary", "real") if any(part for part, _, _ in blocks) else (None,)
    number = {id(o): k for k, o in enumerate(o for o in outputs if o.requires_grad)}
    for current in passes:
        for part, o, rows in blocks:
            if part not in (None, current) or not o.requires_grad:
                continue
            prefix = f"While considering the {part} part of complex outputs only, " if part \
                else ""
            for j in range(len(indices)):  # numbered among the inputs that require grad
                a, n = analytical[j][rows], numerical[j][rows]
                if a.size == 0 and n.size == 0:  # an empty input or output: nothing to compare
                    continue
                if not np.allclose(a, n, rtol=rtol, atol=atol):
                    raise GradcheckError(f"{prefix}Jacobian mismatch for output {number[id(o)]} "
                                         f"with respect to input {j},\n"
                                         + _both_jacobians(n, a, inputs[indices[j]]))


def _as_torch_jacobian(block, input_tensor) -> Tensor:
    """An (output x input) block in torch's layout: a tensor of the input's (real) dtype,
    a row per input component (a complex input's real parts first, then its imaginary ones),
    a column per output component."""
    dtype = np.real(_host(input_tensor._data)[:0]).dtype
    return Tensor._make(np.ascontiguousarray(block.T, dtype=dtype))


def _both_jacobians(numerical, analytical, input_tensor) -> str:
    return (f"numerical:{_as_torch_jacobian(numerical, input_tensor)}\n"
            f"analytical:{_as_torch_jacobian(analytical, input_tensor)}\n")


def _slow_mode_explanation(func, inputs, outputs, eps, atol, rtol, nondet_tol):
    """What torch adds to a fast-mode failure: the failing pair's whole Jacobians, and whether
    slow mode would have passed."""
    starts = np.cumsum([0] + [_real_components(_host(o._data)).size for o in outputs])

    def explain(i: int, k: int, forward: bool) -> str:
        rows = slice(starts[k], starts[k + 1])
        numerical = _restoring_numerical_jacobian(func, inputs, [i], eps)[0][rows]
        analytical = (forward_jacobian(func, inputs, i) if forward else
                      _analytical_jacobian(outputs, inputs, [i], nondet_tol)[0][0])[rows]
        n, a = (_as_torch_jacobian(m, inputs[i]) for m in (numerical, analytical))
        text = ("\nThe above quantities relating the numerical and analytical jacobians are "
                "computed \nin fast mode. See: https://github.com/pytorch/pytorch/issues/53876 "
                "for more background \nabout fast mode. Below, we recompute numerical and "
                "analytical jacobians in slow mode:\n\n"
                f"Numerical:\n {n}\nAnalytical:\n{a}\n\n"
                f"The max per-element difference (slow mode) is: "
                f"{float(np.abs(n._data - a._data).max(initial=0))}.\n")
        return text + (_FAST_FAIL_SLOW_OK if np.allclose(a._data, n._data, rtol, atol) else "")
    return explain


_FAST_FAIL_SLOW_OK = """
Fast gradcheck failed but element-wise differences are small. This means that the
test might've passed in slow_mode!

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck:

If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `fast_mode=False` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `gradcheck_fast_mode=False`
- is a Module test (e.g., in common_nn.py), then modify the corresponding
  module_test entry to have `gradcheck_fast_mode=False`""".strip()


def _compare_forward(func, inputs, indices, outputs, numerical, rtol, atol) -> None:
    """The jvp Jacobians against the numerical ones, per output that requires grad, then per
    input (both numbered among those that require grad, as torch); with complex inputs the
    imaginary parts of all inputs first, then the real parts, each named."""
    is_complex = [inputs[i].is_complex() for i in indices]
    analytical = [forward_jacobian(func, inputs, i) for i in indices]
    starts = np.cumsum([0] + [_real_components(_host(o._data)).size for o in outputs])
    blocks = [slice(starts[k], starts[k + 1]) for k, o in enumerate(outputs) if o.requires_grad]
    for part in ("imaginary", "real") if any(is_complex) else (None,):
        for number, rows in enumerate(blocks):
            for j in range(len(indices)):
                a, n = analytical[j], numerical[j]
                a = np.zeros_like(n) if a.shape != n.shape and a.size == 0 else a
                columns, prefix = slice(None), ""
                if is_complex[j]:  # the real parts' columns first, then the imaginary parts'
                    half = n.shape[1] // 2
                    columns = slice(half, None) if part == "imaginary" else slice(0, half)
                    prefix = f"While considering the {part} part of complex inputs only, "
                elif part == "real":
                    continue  # a real input was checked whole in the imaginary pass
                a, n = a[rows, columns], n[rows, columns]
                if not np.allclose(a, n, rtol=rtol, atol=atol):
                    raise GradcheckError(f"{prefix}Jacobian computed with forward mode mismatch "
                                         f"for output {number} with respect to input {j},\n"
                                         + _both_jacobians(n, a, inputs[indices[j]]))


def gradgradcheck(func, inputs, grad_outputs=None, *, eps: float = 1e-6, atol: float = 1e-5,
                  rtol: float = 1e-3, gen_non_contig_grad_outputs: bool = False,
                  raise_exception: bool = True, nondet_tol: float = 0.0,
                  check_undefined_grad: bool = True, check_grad_dtypes: bool = False,
                  check_batched_grad: bool = False, check_fwd_over_rev: bool = False,
                  check_rev_over_rev: bool = True, fast_mode: bool = False, masked=None) -> bool:
    """Check second derivatives: gradcheck of ``(inputs, grad_outputs) -> vjp``."""
    inputs = _as_tuple(inputs)
    outputs = _outputs(func, inputs)
    diff_outputs = [o for o in outputs if o.requires_grad]
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = tuple(
            Tensor._make(rand_like(rng, _host(o._data)))._set_requires_grad(True)
            for o in diff_outputs)
    grad_outputs = _as_tuple(grad_outputs)
    n_inputs = len(inputs)
    indices = _diff_inputs(inputs)

    def vjp(*args):
        ins, seeds = args[:n_inputs], args[n_inputs:]
        outs = [o for o in _outputs(func, ins) if o.requires_grad]
        grads = autograd_grad(outs, [ins[i] for i in indices], seeds, create_graph=True,
                              allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(vjp, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol, fast_mode=fast_mode)


def _check_no_differentiable_outputs(func, inputs, indices, eps, error) -> None:
    """No output requires grad: then the numerical gradient must be zero everywhere."""
    jacobians = _restoring_numerical_jacobian(func, inputs, indices, eps)
    if any(np.any(j != 0) for j in jacobians):
        raise error("Numerical gradient for function expected to be zero")
