"""gradcheck's fast mode, as torch's: for each output o and input i, compare u_o^T J_oi v_i
for random u, v instead of whole Jacobians. As torch, complex outputs are checked by their
imaginary parts first, then their real parts (backward), and complex inputs likewise
(forward mode), the message naming the part."""
from __future__ import annotations

import numpy as np

from gradkit._tensor import Tensor
from gradkit.autograd.api import grad as autograd_grad
from gradkit.autograd.gradcheck_modes import (
    _host, _outputs, check_same_outputs, jvp_outputs, not_reentrant_message, reproduced)


def fast_check(func, inputs, indices, outputs, eps, atol, rtol, nondet_tol, check_backward_ad,
               check_forward_ad, error, explain) -> None:
    """Raise ``error`` where an analytical product differs from the numerical one, its text
    ended by ``explain(input index, output index, forward)`` (the pair's whole Jacobians).
    Outputs are numbered among those that require grad, as torch numbers them. As torch, the
    vectors are unit vectors of [0, 1) draws and ``atol`` grows by their sums (an error of
    atol in every Jacobian entry moves u^T J v by that much)."""
    rng = np.random.default_rng(0)
    diff = [k for k, o in enumerate(outputs) if o.requires_grad]
    us = {k: rand_like(rng, _host(outputs[k]._data), uniform=True) for k in diff}
    vs = {i: rand_like(rng, _host(inputs[i]._data), uniform=True) for i in indices}
    # as torch: the numerical products first (they refuse outputs changing shape or dtype)
    numericals = {i: _numerical_jv(func, inputs, i, vs[i], eps) for i in indices}
    is_complex = {k: outputs[k].is_complex() for k in diff}
    if check_backward_ad:
        _backward(inputs, indices, outputs, diff, is_complex, us, vs, numericals, nondet_tol,
                  rtol, atol, error, explain)
    if check_forward_ad:
        _forward(func, inputs, indices, diff, vs, numericals, eps, rtol, atol, error,
                 explain)


def _parts(complex_flags) -> tuple:
    return ("imaginary", "real") if any(complex_flags) else (None,)


def _part_of(v, part):
    """The imaginary part of complex ``v`` (as 1j * imag) or its real part, in v's dtype."""
    return (1j * v.imag if part == "imaginary" else v.real).astype(v.dtype)


def _prefix(part, is_complex: bool, element: str) -> str:
    return f"While considering the {part} part of complex {element} only, " if is_complex \
        else ""


def _backward(inputs, indices, outputs, diff, is_complex, us, vs, numericals, nondet_tol, rtol,
              atol, error, explain) -> None:
    """vJ v against u^T (numerical J v); a complex output's u split into its two parts."""
    targets = [inputs[i] for i in indices]
    for part in _parts(is_complex.values()):
        seeds = {k: _part_of(us[k], part) if is_complex[k] else us[k] for k in diff}

        first, second = (_vjps(outputs, diff, targets, seeds) for _ in range(2))
        if not all(reproduced(first[k], second[k], nondet_tol) for k in diff):
            raise error(not_reentrant_message(nondet_tol))
        for j, i in enumerate(indices):
            for n, k in enumerate(diff):
                if part == "real" and not is_complex[k]:
                    continue  # a real output was checked whole in the imaginary pass
                g = first[k][j]
                analytical = 0.0 if g is None else _real_dot(_host(g._data), vs[i])
                if not np.isclose(analytical, numerical := _real_dot(seeds[k], numericals[i][k]),
                                  rtol=rtol, atol=atol * _sum(vs[i]) * _sum(seeds[k])):
                    raise error(_fast_message(numerical, analytical, n, j, "",
                                              _prefix(part, is_complex[k], "outputs"))
                                + explain(i, k, False))


def _vjps(outputs, diff, targets, seeds) -> dict:
    return {k: autograd_grad(outputs[k], targets, Tensor._make(seeds[k]), retain_graph=True,
                             allow_unused=True) for k in diff}


def _forward(func, inputs, indices, diff, vs, numericals, eps, rtol, atol, error,
             explain) -> None:
    """J v from jvps against the numerical J v, element by element as torch (forward mode
    has no output vector); a complex input's v split in two."""
    is_complex = {i: inputs[i].is_complex() for i in indices}
    for part in _parts(is_complex.values()):
        for j, i in enumerate(indices):
            if part == "real" and not is_complex[i]:
                continue  # a real input was checked whole in the imaginary pass
            v, numerical = vs[i], numericals[i]
            if is_complex[i]:
                v = _part_of(v, part)
                numerical = _numerical_jv(func, inputs, i, v, eps)
            forward = jvp_outputs(func, inputs, {i: v})
            for n, k in enumerate(diff):
                analytical, theirs = (np.asarray(r[k]).reshape(-1) for r in (forward, numerical))
                if not np.allclose(analytical, theirs, rtol=rtol, atol=atol * _sum(v)):
                    raise error(_fast_message(Tensor._make(theirs), Tensor._make(analytical), n,
                                              j, " computed with forward mode",
                                              _prefix(part, is_complex[i], "inputs"))
                                + explain(i, k, True))


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


def _fast_message(numerical, analytical, output, j, how: str, prefix: str) -> str:
    """``output`` and ``j`` are numbered among the outputs and inputs that require grad."""
    return (f"{prefix}Jacobian{how} mismatch for output {output} with respect to input {j},\n"
            f"numerical:{numerical}\nanalytical:{analytical}\n")


def _sum(vector) -> float:
    """The sum of a vector's real and imaginary entries (torch's atol factor)."""
    return float(np.sum(vector.real) + np.sum(vector.imag))


def rand_like(rng, array, uniform: bool = False):
    """Random values shaped as ``array``: normal, or as torch's fast mode draws them: in
    [0, 1), scaled to norm 1 (a complex array's real and imaginary parts each)."""
    def draw():
        if not uniform:
            return rng.standard_normal(array.shape)
        v = rng.random(array.shape)
        return v / (np.linalg.norm(v) or 1.0)
    v = draw()
    if array.dtype.kind == "c":
        v = v + 1j * draw()
    return np.asarray(v.astype(array.dtype))  # 0-d: an array, not a NumPy scalar


def _real_dot(a, b) -> float:
    return float(np.real(np.sum(np.conj(a) * b)))
