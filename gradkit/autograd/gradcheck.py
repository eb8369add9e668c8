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
from gradkit.autograd.gradcheck_modes import (
    _as_tuple, _device_like, _host, _outputs, _real_components, check_same_outputs,
    forward_jacobian, jvp_outputs)


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
                reentrant_ok = reentrant_ok and _reproduced(grads, again, nondet_tol)
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


def _reproduced(grads, again, nondet_tol: float) -> bool:
    """Whether a second backward gave the same gradients, within ``nondet_tol``."""
    return all(g1 is None or g2 is None or np.max(
        np.abs(_host(g1._data) - _host(g2._data)), initial=0) <= nondet_tol
        for g1, g2 in zip(grads, again))


def _not_reentrant(nondet_tol: float) -> GradcheckError:
    return GradcheckError(
        "Backward is not reentrant, i.e., running backward with same input and grad_output "
        "multiple times gives different values, although analytical gradient matches "
        f"numerical gradient.The tolerance for nondeterminism was {nondet_tol}.")


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
            _fast_check(func, inputs, indices, outputs, eps, atol, rtol, nondet_tol,
                        check_backward_ad, check_forward_ad)
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
    _CURRENT_INPUTS[0] = inputs
    saved = [inputs[i]._data.copy() for i in indices]
    try:
        numerical = _numerical_jacobian(func, inputs, indices, eps)
    finally:
        for i, data in zip(indices, saved):
            inputs[i]._data[...] = data
        _CURRENT_INPUTS[0] = None
    if check_backward_ad:
        _compare_by_output(analytical, numerical, outputs, indices, rtol, atol)
    for j, i in enumerate(indices):
        if check_forward_ad:
            _compare(forward_jacobian(func, inputs, i), numerical[j], i, rtol, atol,
                     " computed with forward mode")
    if check_backward_ad and not reentrant:
        raise _not_reentrant(nondet_tol)


def _compare_by_output(analytical, numerical, outputs, indices, rtol, atol) -> None:
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
            for j, i in enumerate(indices):
                a, n = analytical[j][rows], numerical[j][rows]
                if a.size == 0 and n.size == 0:  # an empty input or output: nothing to compare
                    continue
                if not np.allclose(a, n, rtol=rtol, atol=atol):
                    raise GradcheckError(f"{prefix}Jacobian mismatch for output {number[id(o)]} "
                                         f"with respect to input {i},\nnumerical:{n}\n"
                                         f"analytical:{a}\n")


def _compare(a, n, i, rtol, atol, how: str) -> None:
    if a.shape != n.shape:
        a = np.zeros_like(n) if a.size == 0 else a
    if not np.allclose(a, n, rtol=rtol, atol=atol):
        raise GradcheckError(f"Jacobian{how} mismatch for output 0 with respect to input {i},\n"
                             f"numerical:{n}\nanalytical:{a}\n")


def _fast_check(func, inputs, indices, outputs, eps, atol, rtol, nondet_tol, check_backward_ad,
                check_forward_ad) -> None:
    """torch's fast mode: for each output o and input i, compare u_o^T J_oi v_i for random
    u, v instead of whole Jacobians."""

    rng = np.random.default_rng(0)
    diff = [k for k, o in enumerate(outputs) if o.requires_grad]
    seeds = {k: Tensor._make(_rand_like(rng, _host(outputs[k]._data), uniform=True))
             for k in diff}
    vs = {i: _rand_like(rng, _host(inputs[i]._data), uniform=True) for i in indices}

    def vjps():
        return {k: autograd_grad(outputs[k], [inputs[i] for i in indices], seeds[k],
                                 retain_graph=True, allow_unused=True) for k in diff}

    backward, again = (vjps(), vjps()) if check_backward_ad else ({}, {})
    # as torch: the numerical products first, then the vjps twice (reproducible?), then compare
    numericals = [_numerical_jv(func, inputs, i, vs[i], eps) for i in indices]
    if not all(_reproduced(backward[k], again[k], nondet_tol) for k in backward):
        raise _not_reentrant(nondet_tol)
    for j, i in enumerate(indices):
        numerical = numericals[j]
        forward = jvp_outputs(func, inputs, {i: vs[i]}) if check_forward_ad else None
        for k in diff:
            u = _host(seeds[k]._data)
            expected = _real_dot(u, numerical[k])
            if check_backward_ad:
                g = backward[k][j]
                _compare_fast(0.0 if g is None else _real_dot(_host(g._data), vs[i]), expected,
                              k, i, rtol, atol, "")
            if check_forward_ad:
                _compare_fast(_real_dot(u, forward[k]), expected, k, i, rtol, atol,
                              " computed with forward mode")


def _numerical_jv(func, inputs, i, v, eps) -> list:
    """(f(x + eps v) - f(x - eps v)) / 2 eps per output, moving input ``i`` only."""
    t = inputs[i]
    original = t._data.copy()
    try:
        t._data[...] = original + eps * v
        # copies: an output may alias the input, which the -eps pass overwrites
        outs_plus = _outputs(func, inputs)
        plus = [np.array(_host(o._data)) for o in outs_plus]
        t._data[...] = original - eps * v
        outs_minus = _outputs(func, inputs)
        minus = [np.array(_host(o._data)) for o in outs_minus]
    finally:
        t._data[...] = original
    check_same_outputs(outs_minus, outs_plus, eps, "")
    return [(p - m) / (2 * eps) for p, m in zip(plus, minus)]


def _compare_fast(analytical, numerical, output, i, rtol, atol, how: str) -> None:
    if not np.isclose(analytical, numerical, rtol=rtol, atol=atol):
        raise GradcheckError(
            f"Jacobian{how} mismatch for output {output} with respect to input {i},\n"
            f"numerical:{numerical}\nanalytical:{analytical}\n\nThe above quantities relating "
            "the numerical and analytical jacobians are computed \nin fast mode.")


def _rand_like(rng, array, uniform: bool = False):
    """Random values shaped as ``array``: normal, or in [0, 1) as torch's fast mode draws."""
    draw = rng.random if uniform else rng.standard_normal
    v = draw(array.shape)
    if array.dtype.kind == "c":
        v = v + 1j * draw(array.shape)
    return np.asarray(v.astype(array.dtype))  # 0-d: an array, not a NumPy scalar


def _real_dot(a, b) -> float:
    return float(np.real(np.sum(np.conj(a) * b)))


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
            Tensor._make(_rand_like(rng, _host(o._data)))._set_requires_grad(True)
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
    _CURRENT_INPUTS[0] = inputs
    saved = [inputs[i]._data.copy() for i in indices]
    try:
        jacobians = _numerical_jacobian(func, inputs, indices, eps)
    finally:
        for i, data in zip(indices, saved, strict=True):
            inputs[i]._data[...] = data
        _CURRENT_INPUTS[0] = None
    if any(np.any(j != 0) for j in jacobians):
        raise error("Numerical gradient for function expected to be zero")
