"""Known, reported differences from torch, and the one-call diff of a program.

Only behaviour that docs/ documents as a deliberate departure from torch belongs in
``KNOWN_DIFFERENCES``: each entry names the docs page and a phrase on it (checked by
tests/test_fuzz_vs_torch.py), so an undocumented difference can never be silenced here.
Everything else a program shows is a mismatch.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import NamedTuple

import math

import numpy as np

from . import known_fwd
from .ops_breadth import _hermitian_pd, _shifted, _square
from .ops_optim import (error_problems, lbfgs_parting_at_convergence, negated_complex_zero,
                        single_precision_lbfgs)
from .programs import OPS
from .runner import Result, TorchInternalError, _diff, _numpy, compare, run


class Known(NamedTuple):
    what: str
    doc: str                      # docs page, relative to the repository root
    phrase: str                   # text on that page that documents the difference
    applies: Callable             # (program, mine, theirs) -> bool


def _only_flags_differ(mine: Result, theirs: Result, dtype_kinds: str) -> bool:
    """Only requires_grad differs, on tensors of ``dtype_kinds`` torch marks and gradkit not."""
    if len(mine.flags) != len(theirs.flags):
        return False
    differ = [i for i, (a, b) in enumerate(zip(mine.flags, theirs.flags)) if a != b]
    return bool(differ) and all(
        theirs.flags[i] and mine.values[i].dtype.kind in dtype_kinds for i in differ) and not \
        compare(mine, theirs._replace(flags=mine.flags))


def _integer_tensor_requires_grad(program, mine: Result, theirs: Result) -> bool:
    """Integer/bool tensors torch marks as requiring grad and gradkit does not (and torch's
    later refusal to record an op on such a tensor: "Autograd not support dtype"; gradkit's
    refusal of its ``retain_grad()``)."""
    if theirs.error is not None and theirs.message.startswith("Autograd not support dtype") \
            and (mine.error is None or _phase_rank(mine.error[0]) >= _phase_rank(theirs.error[0])):
        # torch refused the step before its own checks (gradkit's error: seed 667186), or
        # gradkit went on and failed later, where torch never got (seed 1263898)
        return True
    torch_refused_later = theirs.error is None or \
        theirs.message.startswith("Autograd not support dtype")
    if mine.error is not None and mine.error[0].endswith(
            "(retain_grad)") and mine.message.startswith("can't retain_grad"):
        step = program.steps[int(mine.error[0].split()[1])]
        if torch_refused_later:
            return theirs.error is not None or (
                bool(theirs.values) and theirs.values[step.inputs[0]].dtype.kind in "biu")
        # torch retained and failed at a later step (seed 1415034): an integer or bool leaf,
        # or in backward, where its values show the retained step result's dtype (2928722)
        return _phase_rank(theirs.error[0]) > _phase_rank(mine.error[0]) and (
            _leaf_dtype(program, step.inputs[0]).startswith(("int", "uint", "bool")) or
            (bool(theirs.values) and theirs.values[step.inputs[0]].dtype.kind in "biu"))
    if mine.error is None and theirs.error is not None and theirs.error[0] == "backward" \
            and theirs.values and any(text in theirs.message for text in (
                "is not implemented", "isDifferentiableType", "modified by an inplace")):
        # so the float values computed from it require grad there, and reach an op torch
        # cannot differentiate (wide seed 22409: bincount's weights), or a node saved it or
        # a float computed from it and an in-place op wrote that before backward (wide seeds
        # 168923: cosh, negative_; 322809: sigmoid_, exp2_ of its copysign)
        return any(t and not m and v.dtype.kind in "biu"
                   for t, m, v in zip(theirs.flags, mine.flags, theirs.values))
    return _flags_from_an_integer_torch_marks(program, mine, theirs)


def _flags_from_an_integer_torch_marks(program, mine: Result, theirs: Result) -> bool:
    """Only requires_grad differs, torch's True, on integer/bool tensors and on values
    computed from them (wide seed 387429: arccos of such a tensor)."""
    if len(mine.flags) != len(theirs.flags) or compare(mine, theirs._replace(flags=mine.flags)):
        return False
    differ = [i for i, (a, b) in enumerate(zip(mine.flags, theirs.flags)) if a != b]
    integers = {i for i in differ if mine.values[i].dtype.kind in "biu"}
    return bool(integers) and all(
        theirs.flags[i] and (i in integers or _sources(program, i) & integers) for i in differ)


def _leaf_dtype(program, slot: int) -> str:
    """The dtype name of the leaf that env ``slot`` is, through in-place steps ("" when it
    is another step's result)."""
    leaves = len(program.leaves)
    while slot >= leaves:
        step = program.steps[slot - leaves]
        if not (OPS[step.op].inplace or OPS[step.op].same):
            return ""
        slot = step.inputs[0]
    return program.leaves[slot].dtype


def _phase_rank(phase: str) -> tuple:
    """Where in a program's run ``phase`` (runner.run's names) comes: steps in order, then
    reading the values, backward and double backward."""
    if phase.startswith("step "):
        return 1, int(phase.split()[1])
    return {"forward": (0, 0), "values": (2, 0), "backward": (3, 0)}.get(phase, (4, 0))


_LAZY_VIEW_ERROR = "A view was created in no_grad mode and its base or another view of its base"


def _view_before_requires_grad(program, mine: Result, theirs: Result) -> bool:
    """Float views made before their base's requires_grad_(): torch says True for a view with
    no history whose gradients go nowhere (and when such a view of unbind was written in place,
    torch's backward raises rebuilding its history, where gradkit's view has none)."""
    if not any(s.op == "i_requires_grad_" for s in program.steps):
        return False
    if _retained_view_before_requires_grad(program, mine, theirs):
        return True
    if mine.error is None and theirs.error is not None and theirs.error[0] == "backward" and \
            theirs.message.startswith(_LAZY_VIEW_ERROR):
        theirs = theirs._replace(error=None, grads=mine.grads, grads2=mine.grads2)
    written = any(OPS[s.op].inplace for s in program.steps)  # torch rebuilt the view's history
    if written and mine.error is None and theirs.error is None:
        theirs = theirs._replace(grads=mine.grads, grads2=mine.grads2)
    return _only_flags_differ(mine, theirs, "fc")


def _retained_view_before_requires_grad(program, mine: Result, theirs: Result) -> bool:
    """retain_grad() of such a view: gradkit's does not require grad and refuses it, as any
    tensor that needs no gradient; torch's requires grad, is a leaf, and ignores the call
    (views seed 1669961)."""
    if theirs.error is not None or mine.error is None or not mine.error[0].endswith(
            "(retain_grad)") or not mine.message.startswith("can't retain_grad"):
        return False
    k, leaves = int(mine.error[0].split()[1]), len(program.leaves)
    view = program.steps[k].inputs[0] - leaves   # the step that made the retained tensor
    return view >= 0 and program.steps[view].op in _VIEWS | _RESHAPES and any(
        step.op == "i_requires_grad_" and step.inputs[0] == program.steps[view].inputs[0]
        for step in program.steps[view + 1:k])


_SAVED_WRITTEN = "one of the variables needed for gradient computation has been modified by"


def _view_of_detached_base(program, mine: Result, theirs: Result) -> bool:
    """A base was written in place and then detach_()ed: torch's view (rebuilt lazily from the
    detached base) passes no gradient, gradkit's keeps its path. Only gradients differ, or
    that kept path reaches a node whose saved tensor the write changed (gradkit's backward
    raises), or gradkit's view still requires grad where torch's rebuilt one does not."""
    ops = [s.op for s in program.steps]
    if "i_detach_" not in ops or theirs.error is not None:
        return False
    last_detach = len(ops) - 1 - ops[::-1].index("i_detach_")
    written = any(OPS[o].inplace and o not in ("i_detach_", "i_requires_grad_")
                  for o in ops[:last_detach])
    if mine.error is not None and mine.error[0].startswith("step ") and \
            mine.message.startswith("a view of a leaf Variable that requires grad"):
        # a later write into that view: refused as into a view of a leaf (seed 1448033)
        return written and int(mine.error[0].split()[1]) > last_detach
    if mine.error is not None and (mine.message.startswith(_LAZY_VIEW_ERROR) or
                                   "is a view and its base or another view" in mine.message):
        # a view that may not be written (unbind's, no_grad's) stays unusable; torch's, of a
        # base that required no grad when it was made, is a plain tensor again (seed 2105617)
        after = mine.error[0] in ("backward", "double backward") or \
            int(mine.error[0].split()[1]) > last_detach
        return written and after
    if mine.error is not None and not (mine.error[0] in ("backward", "transform") and
                                       mine.message.startswith(
            (_SAVED_WRITTEN, "Trying to use a saved tensor that has been detached"))):
        return False  # (the node saved the base itself, detached: views seed 7204377)
    if mine.error is not None and mine.error[0] == "transform":
        return written  # func.grad's backward: no values come back to compare (fwd 772423)
    stale = len(mine.flags) == len(theirs.flags) and all(
        a == b or (a and not b) for a, b in zip(mine.flags, theirs.flags))
    return written and stale and not compare(mine, theirs._replace(
        grads=mine.grads, grads2=mine.grads2, error=mine.error, flags=mine.flags))


_BOOL_SUBTRACTION = "Subtraction, the `-` operator, with a bool tensor is not supported"


_IGAMMAS = ("igamma", "igammac", "special_gammaincc", "igamma_", "igammac_")


def _pow_by_bool_backward(program, mine: Result, theirs: Result) -> bool:
    """torch's pow backward computes ``exponent - 1``, which it refuses for a bool exponent
    (``x ** e``, or ``pow(x, e)``: seed 1306895); igamma's and igammac's backward compute
    ``self - 1`` of a bool ``self`` likewise (wide seeds 973, 1102)."""
    return (mine.error is None and theirs.error is not None and theirs.error[0] == "backward"
            and theirs.message.startswith(_BOOL_SUBTRACTION)
            and any(s.params.get("op") == "**" or s.params.get("fn") == "pow"
                    or s.params.get("name") in _IGAMMAS for s in program.steps))


_IN_PLACE_RESHAPES = frozenset({"fb_unsqueeze_", "fb_squeeze_", "fb_t_", "fb_transpose_",
                                 "fb_as_strided_"})


def _conj_view_reshaped_in_place(program, mine: Result, theirs: Result) -> bool:
    """torch's backward finds a gradient of the old shape: a complex tensor (a conj view in
    torch, ifft of a real one) reshaped in place (unsqueeze_) and then written in place by
    another op (logical_not_) gets its grad_fn regenerated from the conj alone, the shape
    before the reshape (breadth seed 1846247), or replays the view on dims it no longer has
    ("Dimension out of range": wide seed 383153, adjoint of a complex 0-d); gradkit's backward
    runs, or refuses at its own check (there a node saved the base the write moved)."""
    if mine.error is not None and mine.error[0] != "backward" or theirs.error is None or \
            theirs.error[0] != "backward" or not any(
                text in theirs.message for text in ("returned an invalid gradient at index",
                                                    "Dimension out of range")):
        return False
    reshaped = {mine.slots[s.inputs[0]] for s in program.steps if s.op in _IN_PLACE_RESHAPES}
    return any(OPS[s.op].inplace and s.op not in _IN_PLACE_RESHAPES
               and mine.slots[s.inputs[0]] in reshaped for s in program.steps)


def _stale_view_read_after_the_kernel(program, mine: Result, theirs: Result) -> bool:
    """Both raise at one step: torch because an input is a multi-output view whose base was
    written in place (it reads grad_fn before its kernel checks the arguments), gradkit the
    step's own argument error (hooks seed 7076118: unbind(0) of a 0-d unbind output after a
    sigmoid_ of its base)."""
    return mine.error is not None and theirs.error is not None and \
        mine.error[0] == theirs.error[0] and mine.error[0].startswith("step ") and \
        "its base or another view of its base has been modified inplace" in theirs.message


def _first_signed_zero_slot(mine: Result, theirs: Result) -> int | None:
    """The first slot where only the sign of a zero differs, when nothing but signed zeros
    differs; else None."""
    problems = compare(mine, theirs)
    if not problems or not all(p.startswith("signed zero") for p in problems):
        return None
    return min(int(p.split("[", 1)[1].split("]", 1)[0]) for p in problems)


def _first_signed_zero_step(program, mine: Result, theirs: Result):
    """The step whose output is the first slot where only the sign of a zero differs, when
    nothing but signed zeros differs; else None."""
    first = _first_signed_zero_slot(mine, theirs)
    k = -1 if first is None else first - len(program.leaves)
    return program.steps[k] if 0 <= k < len(program.steps) else None


def _signed_zero_writers(program, mine: Result, theirs: Result) -> list:
    """The steps that made or wrote in place the tensor of the first slot where only the sign
    of a zero differs (a slot shows its tensor's final values)."""
    first = _first_signed_zero_slot(mine, theirs)
    if first is None or len(mine.slots) != len(program.leaves) + len(program.steps):
        return []
    return [s for k, s in enumerate(program.steps)
            if mine.slots[len(program.leaves) + k] == mine.slots[first]]


_TIE_PICKERS = {"maximum", "minimum", "max", "min", "amax", "amin0", "amax_dim_raw",
                "max_dim_raw", "e2_clamp_min", "b_clamp_tensor",
                "clamp_min_tensor_", "clamp_max_tensor_"}  # w_binary_'s names (seed 382576)


def _vectorized_tie(program, mine: Result, theirs: Result) -> bool:
    """A tie of 0.0 and -0.0 in max/min/maximum/minimum or a tensor-bounded clamp, where
    torch's vectorized loop picked by lane (tensors of 16 float32 / 8 float64 elements or more)."""
    return any(step.op in _TIE_PICKERS or step.params.get("fn") in _TIE_PICKERS
               or step.params.get("name") in _TIE_PICKERS
               for step in _signed_zero_writers(program, mine, theirs))


def _zero_of_noise_of_another_sign(program, mine: Result, theirs: Result) -> bool:
    """Only zero signs differ, first out of a step one of whose inputs (agreeing within the
    tolerance, as every value does then) is rounding noise around 0 of one sign here and the
    other in torch: the step rounds it to a zero of that sign (a truncating division of
    batch_norm's noise over equal values: strided_breadth seed 1688020)."""
    step = _first_signed_zero_step(program, mine, theirs)
    if step is None:
        return False
    out = len(program.leaves) + program.steps.index(step)
    ours, torchs = np.real(mine.values[out]), np.real(theirs.values[out])
    for i in step.inputs:
        a, b = mine.values[i], theirs.values[i]
        if a.dtype.kind != "f" or a.shape != b.shape:
            continue
        noise = (np.signbit(a) != np.signbit(b)) & (a != 0) & (b != 0)
        if a.shape == ours.shape:  # the noise where the zeros' signs differ
            noise &= np.signbit(ours) != np.signbit(torchs)
        if noise.any():
            return True
    return False


def _vectorized_softshrink_zero(program, mine: Result, theirs: Result) -> bool:
    """softshrink of a negative x inside [-lambd, lambd]: torch's vectorized loop gives +0.0
    for the elements of its full vectors (8 float64 or 16 float32), its scalar tail x * 0,
    -0.0 (breadth seed 109194); gradkit gives -0.0 everywhere."""
    step = _first_signed_zero_step(program, mine, theirs)
    return step is not None and "softshrink" in (step.op, step.params.get("fn"))


def _vectorized_lerp_to_negative_zero(program, mine: Result, theirs: Result) -> bool:
    """lerp with weight 1 to an end of -0.0: torch's vectorized loop computes
    end + (end - self)(weight - 1), a zero of the sign opposite to self's (+0.0 for
    self = -0.0), for the elements of its full vectors; its scalar loop and gradkit
    end - (end - self)(1 - weight), -0.0 (breadth seed 2207478)."""
    step = _first_signed_zero_step(program, mine, theirs)
    return step is not None and step.op == "e_lerp" and step.params.get("w") == 1


def _vectorized_complex_negation(program, mine: Result, theirs: Result) -> bool:
    """Only signed zeros differ, after a negation of a complex tensor: torch's vectorized loop
    computes it as 0 - x, +0.0 of a zero, for the elements of its full vectors (4 complex128
    with AVX2), -x in its tail; gradkit gives -0.0 everywhere (strided seed 354233)."""
    problems = compare(mine, theirs)
    return bool(problems) and all(p.startswith("signed zero") for p in problems) and any(
        step.op in ("neg", "neg_") and mine.values[step.inputs[0]].dtype.kind == "c"
        for step in program.steps)


def _is_gelu(step) -> bool:
    return "gelu" in (step.op, step.params.get("fn"))


_ZERO_SUM_PRODUCTS = {"b_bmm", "b_dot", "b_einsum", "b_inner", "b_linear", "b_matmul_bcast", "b_mm",
                      "b_mv", "e_addbmm", "e_addmm", "e_addmv", "e_baddbmm", "e_tensordot",
                      "l_multi_dot", "l_vecdot", "linear", "matmul", "n_conv", "conv1d",
                      "conv3d", "conv_transpose1d", "conv_transpose2d", "s_chain_matmul",
                      "f_multi_head_attention", "f_bilinear", "f_rnn_cell", "fb_convolution",
                      # lane fuzzwide: conv_tbc's and conv_transpose3d's products (wide seed
                      # 28577), the functional RNN cells', addmv_'s
                      "w_conv", "w_cell", "w_addmv_"}


def _zero_sum_of_products(program, mine: Result, theirs: Result) -> bool:
    """A matrix product or convolution whose sum of products is all signed zeros: its sign
    is whatever the BLAS kernel's accumulator starts from (torch's differs by shape). An
    in-place product (addmv_) writes it into an earlier slot, a leaf's (at beta 0 gradkit
    now adds gemv's +0.0 too: wide seeds 33822, 37308, 128898 agree)."""
    step = _first_signed_zero_step(program, mine, theirs)
    if step is not None:
        return step.op in _ZERO_SUM_PRODUCTS
    problems = compare(mine, theirs)
    if not problems or not all(p.startswith("signed zero") for p in problems) or \
            len(mine.slots) < len(program.leaves) + len(program.steps):
        return False
    first = min(int(p.split("[", 1)[1].split("]", 1)[0]) for p in problems)
    return any(s.op in _ZERO_SUM_PRODUCTS and OPS[s.op].inplace
               and mine.slots[len(program.leaves) + k] == mine.slots[first]
               for k, s in enumerate(program.steps))


def _onednn_gelu(program, mine: Result, theirs: Result) -> bool:
    """float32 gelu of more than one element: torch's oneDNN kernel gives 0.0 for -0.0 and
    underflowing negatives and NaN for +inf; its own kernel (float64, one element) gives -0.0
    and inf, as gradkit. What reads gelu's inf or NaN may differ then: a maximum picks the
    other operand of the NaN, and its gradient goes there (special seed 5018909)."""
    step = _first_signed_zero_step(program, mine, theirs)
    if step is not None:
        return _is_gelu(step)
    # the same error later (floor_divide's backward: seed 2002663) is no matter
    if mine.error != theirs.error or not theirs.values:
        return False
    if _gelu_of_inf_is_the_first_difference(program, mine, theirs):
        return True
    at_inf = any(_is_gelu(step) and any(
        theirs.values[i].dtype == np.float32 and np.isposinf(theirs.values[i]).any()
        for i in step.inputs) for step in program.steps)
    return at_inf and mine.flags == theirs.flags and mine.slots == theirs.slots and \
        _only_non_finite_differ(mine, theirs)


def _gelu_of_inf_is_the_first_difference(program, mine: Result, theirs: Result) -> bool:
    """The first value to differ is a float32 gelu's where its input is +inf on both sides,
    gradkit's inf against torch's NaN (elsewhere it agrees to rounding)."""
    first = _first_differing_value(program, mine, theirs)
    if first is None or not _is_gelu(first[0]):
        return False
    ours, out = mine.values[first[1]], theirs.values[first[1]]
    x_mine, x = mine.values[first[0].inputs[0]], theirs.values[first[0].inputs[0]]
    if out.dtype != np.float32 or not ours.shape == out.shape == x.shape == x_mine.shape:
        return False
    with np.errstate(invalid="ignore"):
        close = np.isclose(ours, out, rtol=1e-6, atol=0, equal_nan=True)
    at_inf = np.isposinf(x) & np.isposinf(x_mine) & np.isposinf(ours) & np.isnan(out)
    return bool(at_inf.any() and np.all(close | at_inf))


def _std_of_equal_values(program, mine: Result, theirs: Result) -> bool:
    """Only gradients differ, and a std is rounding noise (elements equal but for rounding):
    its gradient there is noise over noise on both sides."""
    if mine.error or theirs.error or not theirs.values or any(
            p.split("[")[0] in ("values", "signed zero in values") for p in compare(mine, theirs)):
        return False
    for k, step in enumerate(program.steps):
        out = theirs.values[len(program.leaves) + k]
        source = theirs.values[step.inputs[0]]
        is_std = step.op in ("std", "b_std") or (  # or a std of a number parameter's draw
            step.op == "num_param" and step.params.get("call") == "std")  # (breadth 1293756)
        if is_std and out.size and source.size and \
                np.isfinite(source).all():  # b_std: complex too (breadth seed 45892)
            scale = max(1.0, float(np.abs(source).max()))
            # rounding noise of the source's precision: float32's is 1e-7 (core seed
            # 1327208; 6.5e-8 of 0.74, breadth seed 83455)
            noise = max(1e-12, 16 * float(np.finfo(source.dtype).eps)) \
                if source.dtype.kind in "fc" else 1e-12
            if (np.abs(out) <= noise * scale).any():
                return True
    return False


def _sources(program, slot: int) -> set:
    """``slot`` and the slots it was computed from, directly or not."""
    found, first = {slot}, len(program.leaves)
    for k in reversed(range(len(program.steps))):
        if first + k in found:
            found.update(program.steps[k].inputs)
    return found


def _ctc_of_equal_rows(program, mine: Result, theirs: Result) -> bool:
    """Only gradients differ, of leaves feeding a ctc_loss whose log-probabilities the draw
    tiles from values all equal: every row of log_softmax is constant, so their gradient is
    sum(g) * (1 - sum(softmax)), rounding noise each side rounds apart (nn_new seed 1894)."""
    problems = compare(mine, theirs)
    if mine.error or theirs.error or not problems or not all(
            p.startswith(("grads[", "grads2[", "signed zero in grads")) for p in problems):
        return False
    with_grad = [i for i, leaf in enumerate(program.leaves) if leaf.requires_grad]
    fed = set()
    for step in program.steps:
        source = theirs.values[step.inputs[0]] if step.op == "f_ctc_loss" else None
        if source is not None and source.size and np.ptp(np.real(source)) == 0:
            fed |= _sources(program, step.inputs[0])
    differing = {int(p.split("[", 1)[1].split("]", 1)[0]) for p in problems}
    return bool(fed) and all(i < len(with_grad) and with_grad[i] in fed for i in differing)


def _corrcoef_of_equal_values(program, mine: Result, theirs: Result) -> bool:
    """A corrcoef of a variable whose values are equal but for rounding: its variance is
    rounding noise (or 0), so c / c is 1 or NaN as the upstream values round."""
    for step in program.steps:
        if step.op != "e2_corrcoef" or not theirs.values:
            continue
        source = theirs.values[step.inputs[0]]
        rows = source.reshape(source.shape[0] if source.ndim > 1 else 1, -1)  # 0-d: 67629
        if rows.size and np.isfinite(rows).all() and rows.dtype.kind in "fc":
            # (complex values too: breadth seed 1071948)
            spread = np.abs(rows - rows[:, :1]).max(axis=1)
            scale = np.maximum(1.0, np.abs(rows).max(axis=1))
            if (spread <= 1e-12 * scale).any():
                return True
    return False


def _cast_wraps_a_rounding(program, mine: Result, theirs: Result) -> bool:
    """Only values differ, first at a cast to an integer dtype whose float input agrees to
    rounding (a few ulp, which a step such as x ** x may have grown from one) but has other
    integer parts, where the cast differs: C's cast keeps the low bits of a number whose
    last bits already differ (an exp one ulp apart; x ** x of float32 exp(2), 1.4e-6
    relative at 2.6e6: dtypes seed 4353875)."""
    problems = compare(mine, theirs)
    if not problems or not all(p.startswith("values[") for p in problems):
        return False
    first = min(int(p.split("[", 1)[1].split("]", 1)[0]) for p in problems)
    k = first - len(program.leaves)
    if not 0 <= k < len(program.steps):
        return False
    step = program.steps[k]
    if step.op != "cast" or step.params.get("dtype") not in _INTEGER_DTYPES:
        return False
    source, reference = mine.values[step.inputs[0]], theirs.values[step.inputs[0]]
    if source.dtype.kind != "f" or source.shape != reference.shape or \
            mine.values[first].shape != theirs.values[first].shape or \
            not np.allclose(source, reference, rtol=1e-5, equal_nan=True):
        return False
    with np.errstate(invalid="ignore"):
        other_integer_part = np.isfinite(reference) & (np.trunc(source) != np.trunc(reference))
    return bool(np.all(other_integer_part[mine.values[first] != theirs.values[first]]))


_INTEGER_DTYPES = {"uint8", "int8", "int16", "int32", "int64"}


def _integer_result_of_a_float32_ulp(program, mine: Result, theirs: Result) -> bool:
    """Only values differ, first at a step's integer result from inputs bitwise torch's: a
    float32 computed inside the step and cast (diagonal_scatter of an integer tensor with
    its diagonal's exp: float32 exp(25) is 72004894720 here, 72004902912 in torch, one ulp:
    breadth seed 1979487). Each differing element is 2^24 or more, a float32 there, at most
    one float32 ulp from torch's; every later difference reads from that step."""
    step = _first_step_of_its_own_rounding(program, mine, theirs)
    if step is None:
        return False
    ours, torchs = (r.values[len(program.leaves) + program.steps.index(step)]
                    for r in (mine, theirs))
    if ours.dtype.kind not in "iu":
        return False
    apart = ours != torchs
    a, b = ours[apart].astype(np.float64), torchs[apart].astype(np.float64)
    return bool(np.all((np.abs(b) >= 2.0 ** 24) & (a.astype(np.float32) == a) &
                       (np.abs(a - b) <= np.spacing(np.abs(b).astype(np.float32)))))


def _first_step_of_its_own_rounding(program, mine: Result, theirs: Result):
    """The step of the first value to differ when only values differ, all read from it, and
    its inputs are bitwise torch's (the difference is the step's own), or None."""
    problems = compare(mine, theirs)
    if not problems or not all(p.startswith("values[") for p in problems):
        return None
    slots = {int(p.split("[", 1)[1].split("]", 1)[0]) for p in problems}
    first = min(slots)
    k = first - len(program.leaves)
    if not 0 <= k < len(program.steps) or not slots <= _reading(program, first):
        return None
    step = program.steps[k]
    if mine.values[first].shape != theirs.values[first].shape or not all(
            np.array_equal(mine.values[i], theirs.values[i], equal_nan=True)
            for i in step.inputs):
        return None
    return step


def _float32_exp_of_an_integer_input(program, mine: Result, theirs: Result) -> bool:
    """A float64 poisson_nll_loss (log rates: exp(input) - target * input) of a bool or
    integer input, which both libraries exponentiate in float32 before the float64 target
    joins: NumPy's float32 exp an ulp from torch's (exp(True) is 2.718282 here, 2.7182817 in
    torch: strided_breadth seed 2004606). The first value to differ is that loss's, by at
    most one float32 ulp of each exp summed; every later difference reads from it."""
    step = _first_step_of_its_own_rounding(program, mine, theirs)
    if step is None or step.op != "n_pointwise_loss" or step.params.get("fn") != "poisson":
        return False
    rates = mine.values[step.inputs[0]]
    if rates.dtype.kind not in "biu":
        return False
    slot = len(program.leaves) + program.steps.index(step)
    with np.errstate(all="ignore"):  # (an overflowing exp has no ulp: not this)
        ulps = np.spacing(np.exp(rates.astype(np.float32))).astype(np.float64).sum()
        return bool(np.all(np.abs(mine.values[slot] - theirs.values[slot]) <= ulps))


def _reading(program, slot: int) -> set:
    """``slot`` and the slots of the steps computed from it, directly or not."""
    first = len(program.leaves)
    found = {slot}
    for k, step in enumerate(program.steps):
        if found.intersection(step.inputs):
            found.add(first + k)
    return found


def _empty_multi_margin(program, mine: Result, theirs: Result) -> bool:
    """multi_margin_loss of an empty batch, summed or averaged: torch returns whatever its
    uninitialized output held; gradkit 0 (sum) and NaN (mean, as torch's other losses). Only
    that value, the values computed from it (breadth seed 55291) and gradients differ, or
    gradkit's NaN is refused by a later step that reads it where torch's garbage is not (an
    SVD: breadth seed 90217)."""
    for k, step in enumerate(program.steps):
        if step.op != "n_multi_margin":
            continue
        empty = theirs.values[step.inputs[0]].size == 0 if theirs.values else \
            step.params["labels"] == []   # no values when torch raised later: no labels
        if empty:
            reading = _reading(program, len(program.leaves) + k)
            if mine.error is not None and mine.error[0].startswith("step ") and \
                    len(program.leaves) + int(mine.error[0].split()[1]) in reading:
                return theirs.error is None or \
                    _phase_rank(theirs.error[0]) > _phase_rank(mine.error[0])
            if not theirs.values:
                return False
            problems = compare(mine, theirs)
            slots = {f"[{i}]" for i in reading}
            return bool(problems) and all(
                p.startswith("grads") or any(s in p.split(":")[0] for s in slots)
                for p in problems)
    return False


def _complex_inf_renorm(program, mine: Result, theirs: Result) -> bool:
    """renorm of a complex tensor by its inf-norm: torch's backward compares float |x| with
    its norm accumulated in double, finds no maximum, and gives NaN gradients; only gradients
    differ, and torch's are NaN there, or the NaN reached a complex SVD's or eigh's phase check
    earlier in the chain, which refuses it in torch's backward alone (strided_breadth seed
    1724859)."""
    if not any(s.op == "s_renorm" and s.params.get("p") == math.inf and theirs.values and
               theirs.values[s.inputs[0]].dtype.kind == "c" for s in program.steps):
        return False
    if mine.error is None and theirs.error is not None and theirs.error[0] == "backward":
        return "specified up to multiplication by e^{i phi}" in theirs.message
    problems = compare(mine, theirs)
    return bool(problems) and all(p.startswith(("grads", "signed zero in grads"))
                                  for p in problems) and any(
        g is not None and np.isnan(g).any() for g in theirs.grads + theirs.grads2)


def _matrix_exp_gradient_of_a_large_norm(program, mine: Result, theirs: Result) -> bool:
    """matrix_exp's backward is the exp of the block matrix [[A^H, G], [0, A^H]]: a large
    incoming gradient G makes its norm large, and the many squarings of the scaling amplify
    each algorithm's rounding (torch's Taylor polynomial, gradkit's [13/13] Pade): only
    gradients differ, by a relative 1e-5 or less (breadth seed 128972: G ~ 1e10), or, in
    single precision, where gradkit's are as near the double-precision gradients as the
    comparison allows (a relative |G| * eps: 1e-3 for G ~ 3e4, breadth seed 1064464)."""
    if not any(s.op == "l_matrix_exp" for s in program.steps):
        return False
    problems = compare(mine, theirs)
    return bool(problems) and all(p.startswith("grads") for p in problems) and (all(
        a is None or b is None or np.allclose(a, b, rtol=1e-5, atol=0, equal_nan=True)
        for a, b in zip(mine.grads + mine.grads2, theirs.grads + theirs.grads2)) or
        _near_the_double_precision_truth(program, mine, problems))


def _cross_of_itself(program, mine: Result, theirs: Result) -> bool:
    """cross(v, v) is rounding noise (each a * b - b * a rounded as torch's kernel, bit for
    bit), and v itself one rounding from torch's (an FFT, a sum): only gradients through that
    noise differ (a product's gradient at its near-zero factors), or values computed from it
    (a branch cut after it)."""
    first = len(program.leaves)
    slots = [first + k for k, s in enumerate(program.steps) if s.op.startswith("e_cross") and
             len(s.inputs) == 2 and s.inputs[0] == s.inputs[1]]
    if mine.error is not None and mine.error == theirs.error:  # the same error: the values
        mine, theirs = mine._replace(error=None), theirs._replace(error=None)
    return _only_downstream_of(program, mine, theirs, slots)


def _retained_stale_view(program, mine: Result, theirs: Result) -> bool:
    """retain_grad() of a view whose base gained a history by an in-place write, before
    anything read the view's grad_fn: torch's is_leaf reads the stale field, takes the view
    for a leaf and ignores the call (its .grad stays None); gradkit retains it. The write is
    any in-place op (x[i] = v, or copy_: seed 1434881)."""
    if not any(s.op == "retain_grad" for s in program.steps) or not any(
            s.op.startswith("setitem") or OPS[s.op].inplace for s in program.steps):
        return False
    leaves = sum(leaf.requires_grad for leaf in program.leaves)
    problems = compare(mine, theirs)
    return bool(problems) and all(p.startswith("grads[") and "one side is None" in p and
                                  int(p[6:p.index("]")]) >= leaves and
                                  theirs.grads[int(p[6:p.index("]")])] is None
                                  for p in problems)


def _written_stale_view(program, mine: Result, theirs: Result) -> bool:
    """A write into a view whose base gained a history by another write, before anything read
    the view's grad_fn: torch's in-place check reads the stale field and raises as for a leaf
    (seeds 819026, 852562); gradkit writes, as torch once grad_fn has been read, and its
    backward may then refuse a saved tensor the write changed (seed 2670146), or a later step
    fail where torch never got (a write into a leaf that requires grad: seed 4858986)."""
    if theirs.error is None or not theirs.error[0].startswith("step") or \
            "a leaf Variable that requires grad" not in theirs.message or (
            mine.error is not None and _phase_rank(mine.error[0]) <= _phase_rank(theirs.error[0])):
        return False
    k = int(theirs.error[0].split()[1])
    leaves, written = len(program.leaves), _written_slot(program, program.steps[k].inputs[0])
    # view(-1) and reshape make views too (views seed 3342865), the fuzz's flatten (reshape(-1))
    # even of a 1-D x (views seed 5187465: torch.flatten would return x itself)
    made_by = program.steps[written - leaves].op if written >= leaves else ""
    laid_out = written < leaves and program.leaves[written].layout  # a view (strided seed 1469)
    return (laid_out or made_by in _VIEWS | _RESHAPES | {"getitem"}) and \
        sum(OPS[step.op].inplace for step in program.steps[:k]) > 0


def _hook_added_to_a_stale_view(program, mine: Result, theirs: Result) -> bool:
    """A second hook on a view, registered after a write made the view stale (before anything
    read its grad_fn): torch adds it to the hooks dict its first hook left on the view's old
    node, so it sees the old value's gradient; gradkit hooks the view's current node, as
    torch does once grad_fn was read. Only gradients differ (hooks seed 3363502)."""
    if mine.error or theirs.error or any(not p.startswith("grads") for p in compare(
            mine, theirs)):
        return False
    leaves = len(program.leaves)
    hooks = [(k, _written_slot(program, step.inputs[0]))
             for k, step in enumerate(program.steps) if step.op == "hook"]
    return any(
        first_slot == slot and slot >= leaves and
        program.steps[slot - leaves].op in _VIEWS | _RESHAPES | {"getitem"} and
        any(OPS[step.op].inplace for step in program.steps[first + 1:k])
        for n, (first, first_slot) in enumerate(hooks) for k, slot in hooks[n + 1:])


def _second_hook_on_a_stale_multi_output_view(program, mine: Result, theirs: Result) -> bool:
    """gradkit's register_hook raised reading the grad_fn of an unbind or split output whose
    base was written in place, where the view had a hook from before the write: torch's second
    register_hook reads no grad_fn (it adds to the dict its first left on the old node), so
    torch raises only where it next reads grad_fn, later (hooks seed 3902318)."""
    if mine.error is None or not mine.error[0].endswith("(hook)") or \
            "returns multiple views" not in mine.message or (
            theirs.error is not None and _phase_rank(theirs.error[0]) <= _phase_rank(
                mine.error[0])):
        return False
    k = int(mine.error[0].split()[1])
    hooked = _written_slot(program, program.steps[k].inputs[0])
    return any(step.op == "hook" and _written_slot(program, step.inputs[0]) == hooked
               for step in program.steps[:k])


def _written_slot(program, slot: int) -> int:
    """The env slot of the tensor that ``slot`` is, through in-place and same-tensor steps."""
    leaves = len(program.leaves)
    while slot >= leaves and (OPS[program.steps[slot - leaves].op].inplace or
                              OPS[program.steps[slot - leaves].op].same):
        slot = program.steps[slot - leaves].inputs[0]
    return slot


def _lapack_signed_zero(program, mine: Result, theirs: Result) -> bool:
    """Only the sign of zeros differs, first in a LAPACK routine's output (det of a singular
    matrix, the zeros cholesky or householder_product leave) or solve_triangular's (torch's
    MKL trsm: breadth seed 1269118): MKL's, not OpenBLAS's or gradkit's."""
    step = _first_signed_zero_step(program, mine, theirs)
    return step is not None and (step.op in LAPACK_OPS or step.op == "l_solve_triangular"
                                 or _complex_signed_zero_before(program, mine, theirs, step,
                                                                LAPACK_OPS)) \
        or _inverted_lapack_signed_zero(program, mine, theirs)


def _complex_signed_zero_before(program, mine: Result, theirs: Result, step, ops) -> bool:
    """An earlier step of ``ops`` has a complex result that differs only in the sign of a
    zero part, which the comparison of complex values lets pass, until a later step reads
    that part (ormqr's -0.0 + 0j, then embedding of its real part: breadth seed 1329439; an
    stft's, then its real part: signal seed 312123)."""
    leaves = len(program.leaves)
    for k, earlier in enumerate(program.steps[:program.steps.index(step)]):
        ours, torchs = mine.values[leaves + k], theirs.values[leaves + k]
        if earlier.op in ops and ours.dtype.kind == "c" and ours.shape == torchs.shape \
                and np.array_equal(ours, torchs, equal_nan=True) and any(
                    (np.signbit(part(ours)) != np.signbit(part(torchs)))[part(ours) == 0].any()
                    for part in (np.real, np.imag)):
            return True
    return False


def _inverted_lapack_signed_zero(program, mine: Result, theirs: Result) -> bool:
    """A LAPACK step's result differs only in the sign of a zero, and later values differ
    only where one side is not finite: 1 / -0.0 is -inf (strided seed 90118:
    float_power(lu_solve of a zero matrix, -1))."""
    if mine.error or theirs.error or not compare(mine, theirs) or mine.slots != theirs.slots \
            or not _only_non_finite_differ(mine, theirs):
        return False
    leaves = len(program.leaves)
    computed = max(0, min(len(mine.values), len(theirs.values)) - leaves)  # (a transform's: 0)
    for k, step in enumerate(program.steps[:computed]):
        ours, torchs = mine.values[leaves + k], theirs.values[leaves + k]
        if step.op in LAPACK_OPS and ours.shape == torchs.shape and ours.dtype.kind == "f" \
                and np.array_equal(ours, torchs, equal_nan=True) and \
                (np.signbit(ours) != np.signbit(torchs))[ours == 0].any():
            return True
    return False


# the steps whose result depends on which of some (near-)equal elements is the largest
_PICKS_AN_ELEMENT = frozenset({
    "max_dim", "max_dim_raw", "b_sort", "b_argsort", "b_topk", "b_cummax", "b_cummin",
    "b_kthvalue", "b_median", "b_nanmedian", "b_mode", "b_msort", "n_max_pool",
    "f_max_unpool"})


def _max_distance_among_rounded_ties(program, mine: Result, theirs: Result) -> bool:
    """Only gradients differ, and a p=inf pdist/cdist got inputs equal but for rounding (a
    cdist of another p: torch's powers are Sleef's, an ulp from C's): its gradient goes to
    every coordinate whose difference ties the maximum, so a tie one library's rounding makes
    and the other's breaks moves it (strided_breadth seed 1688935)."""
    return _only_gradients_differ(mine, theirs) and any(
        step.op in ("s_pdist", "s_cdist", "s_cdist_self") and step.params.get("p") == math.inf
        and _agree_but_for_rounding(step, mine, theirs) for step in program.steps)


def _only_gradients_differ(mine: Result, theirs: Result) -> bool:
    """Neither run raised, and only gradients differ."""
    problems = compare(mine, theirs)
    return not (mine.error or theirs.error) and bool(problems) and all(
        p.startswith(("grads", "signed zero in grads")) for p in problems)


def _float32_lgamma_in_an_incomplete_gamma(program, mine: Result, theirs: Result) -> bool:
    """Only gradients differ, within float32's rounding, through gammainc/gammaincc of an
    integer tensor's a: the draw's ``|a| + 0.5`` is float32 there, so the derivative's
    lgamma(a) is float32 (glibc's lgammaf is an ulp off: lgamma(1.5) is -0.120782234 in
    torch, -0.120782241 here, correctly rounded), a float64 gradient 2e-9 apart (wide seed
    457405)."""
    if not _only_gradients_differ(mine, theirs) or not any(
            step.op in ("sp_gammainc", "sp_gammaincc") and
            theirs.values[step.inputs[0]].dtype.kind in "iub" for step in program.steps):
        return False
    return all(np.allclose(m, t, rtol=1e-7, atol=1e-9, equal_nan=True)
               for kind in ("grads", "grads2") for m, t in zip(getattr(mine, kind),
                                                               getattr(theirs, kind))
               if m is not None and t is not None and m.shape == t.shape)


def _median_along_a_stride_zero_dim(program, mine: Result, theirs: Result) -> bool:
    """The first value to differ is median/nanmedian along a dim whose values are all equal
    (a stride-0 dim) where torch's is no value of the row plus an index: its kernel reads
    memory it did not write there (6.9e-310; breadth seed 1092789), gradkit's is the median
    (the draw adds the index to the value)."""
    first = _first_differing_value(program, mine, theirs)
    if first is None or first[0].op not in ("b_median", "b_nanmedian") or \
            first[0].params["dim"] is None or not theirs.values[first[0].inputs[0]].ndim:
        return False
    lanes = np.moveaxis(theirs.values[first[0].inputs[0]], first[0].params["dim"], -1)
    if lanes.shape[-1] < 2 or not (lanes == lanes[..., :1]).all():
        return False

    def a_row_value_plus_an_index(result):
        offsets = result.reshape(-1) - lanes[..., 0].reshape(-1)
        return bool(((offsets == np.round(offsets)) & (offsets >= 0) &
                     (offsets < lanes.shape[-1])).all())
    # (torch's unwritten memory may even hold a row value and another index: the suite's
    # runs met that now and then)
    return a_row_value_plus_an_index(mine.values[first[1]])


def _torchs_step_gives_ours_from_our_inputs(program, mine: Result, theirs: Result) -> bool:
    """The first value to differ is a step's whose inputs are a few ulps apart, and torch's
    own step given gradkit's inputs gives gradkit's value: the step amplifies the rounding
    (a triplet loss's hinge of p-norm distances of 1e15, from householder_product values an
    ulp apart, whose difference is noise of the margin's size: strided_breadth seed
    1570035). Last among the Knowns: the ones that name the mechanism come first."""
    import torch
    first = _first_differing_value(program, mine, theirs)
    if first is None:
        return False
    step, slot = first
    if OPS[step.op].inplace or not _agree_but_for_rounding(step, mine, theirs) or not all(
            _ulps_apart(mine.values[i], theirs.values[i]) for i in step.inputs):
        return False
    args = [torch.from_numpy(np.array(mine.values[i])) for i in step.inputs]
    try:
        ours = _numpy(OPS[step.op].fn(torch, *args, **step.params))
    except Exception:  # noqa: BLE001 - a step torch refuses on these inputs explains nothing
        return False
    return _diff(f"values[{slot}]", mine.values[slot], ours) is None


def _torchs_chain_from_our_step(program, mine: Result, theirs: Result) -> bool:
    """Every value agrees to the comparison's tolerance, but the first one not bitwise
    torch's, a step's output a few ulps apart from bitwise-equal inputs (the step's own
    rounding: a 1 x 1 complex QR's Householder scalar, MKL's times 1 / beta against OpenBLAS's
    division), and torch's chain given gradkit's value there gives gradkit's results: later
    steps amplify that ulp (log of a cosine_embedding_loss of a vector with itself, 3e-13 of
    noise: breadth seed 1681399). Last among the Knowns; programs under a transform run
    otherwise."""
    import torch
    if program.transform or mine.error != theirs.error or any(
            p.startswith("values") for p in compare(mine, theirs)):
        return False
    leaves = len(program.leaves)
    slot = next((i for i in range(leaves, min(len(mine.values), len(theirs.values)))
                 if not np.array_equal(mine.values[i], theirs.values[i], equal_nan=True)), None)
    if slot is None:
        return False
    k = slot - leaves
    step = program.steps[k]
    ours, torchs = mine.values[slot], theirs.values[slot]
    if OPS[step.op].inplace or OPS[step.op].same or ours.dtype.kind not in "fc" or \
            ours.shape != torchs.shape or not _ulps_apart(ours, torchs) or not all(
            np.array_equal(mine.values[i], theirs.values[i], equal_nan=True)
            for i in step.inputs):
        return False
    spec, calls = OPS[step.op], [sum(s.op == step.op for s in program.steps[:k])]

    def ours_at_that_step(lib, *args, **params):  # torch's value plus the (exact) difference
        out = spec.fn(lib, *args, **params)
        calls[0] -= 1
        return out + torch.from_numpy(np.asarray(ours - torchs)) if calls[0] == -1 else out
    OPS[step.op] = spec._replace(fn=ours_at_that_step)
    try:
        replayed = run(program, torch)
    finally:
        OPS[step.op] = spec
    return replayed.error == mine.error and len(replayed.values) > slot and \
        np.array_equal(replayed.values[slot], ours, equal_nan=True) and not compare(mine, replayed)


def _abs_of_a_one_entry_complex_q(program, mine: Result, theirs: Result) -> bool:
    """Only gradients differ, through ``|Q|`` of a 1 x 1 complex QR: Q is the entry's phase,
    so ``|Q|`` is 1 in exact arithmetic and its derivative is rounding noise (QR's backward
    cancels complex 1 x 1 products, which torch's MKL gemm rounds fused and NumPy's not) that
    later steps amplify (acosh of 1 + ulp: strided_breadth seed 1764692). torch's own
    gradients are as far from the exact ones (that step's derivative 0) as gradkit's are from
    torch's."""
    import torch
    if program.transform or mine.error != theirs.error or not any(
            step.op == "b_qr_abs" and step.params["n"] == 1 and
            theirs.values[step.inputs[0]].dtype.kind == "c" for step in program.steps):
        return False
    problems = compare(mine, theirs)
    if not problems or not all(p.startswith(("grads[", "grads2[")) for p in problems):
        return False
    spec = OPS["b_qr_abs"]

    def exact(lib, x, n):  # torch's value, with the derivative of a constant (finite x)
        return spec.fn(lib, x, n).detach() + 0 * _square(lib, x, n).real
    OPS["b_qr_abs"] = spec._replace(fn=lambda lib, x, n: exact(lib, x, n) if n == 1 and
                                    x.is_complex() else spec.fn(lib, x, n))
    try:
        reference = run(program, torch)
    finally:
        OPS["b_qr_abs"] = spec
    for problem in problems:
        kind, index = _problem_slot(problem)
        ours, torchs, truths = (getattr(r, kind) for r in (mine, theirs, reference))
        if index >= len(truths) or truths[index] is None or \
                truths[index].shape != torchs[index].shape:
            return False
        with np.errstate(invalid="ignore"):
            noise = np.abs(torchs[index] - truths[index])
            off = np.abs(ours[index] - torchs[index])
            if not np.all((off <= 4 * noise) | (ours[index] == torchs[index])):
                return False
    return True


def _ulps_apart(a, b, ulps: int = 64) -> bool:
    """Arrays equal but for a few ulps of their dtype (exactly equal if not floating)."""
    if a.dtype.kind not in "fc":
        return np.array_equal(a, b)
    return np.allclose(a, b, rtol=ulps * float(np.finfo(a.dtype).eps), atol=0, equal_nan=True)


def _agree_but_for_rounding(step, mine: Result, theirs: Result) -> bool:
    """The step's inputs agree to rounding, and some differ (so a tie may break otherwise)."""
    pairs = [(mine.values[i], theirs.values[i]) for i in step.inputs]
    return all(a.shape == b.shape and np.allclose(a, b, rtol=1e-6, atol=1e-7, equal_nan=True)
               for a, b in pairs) and not all(
        np.array_equal(a, b, equal_nan=True) for a, b in pairs)


def _rounding_amplified(program, mine: Result, theirs: Result) -> bool:
    """A step at or before the first value to differ turns a rounding difference of its
    input into another number: unique's ties, x ** inf at |x| = 1 (0, inf or NaN), xlogy(x,
    inf) at x = 0, cdist's matmul form near a zero distance, atanh at 1 (atanh(1 - ulp) is
    8.7, atanh(1) inf), acosh at 1 (its slope is infinite there: strided seed 20711),
    lgamma (digamma, polygamma) at a pole,
    vector_norm(ord=0) (nonzero, count_nonzero: strided seed 32768) counting a rounding-noise
    entry that is 0 on the other side, x % y
    (fmod, //) where y divides x but for rounding, sin of a huge argument, a polynomial's
    degree floor(4 |n|) of an n one ulp below 1 (breadth seed 99391), histc of a value at a
    bin edge but for rounding (breadth seed 201754), a logical op's truth of a value that is
    0 on one side and rounding noise on the other (an inverse FFT; breadth seed 1291364); or
    the first
    value to differ picks among values equal but for rounding (max pooling's index, sort's
    order: nn_new seed 1686, attention's rows one float32 ulp from torch's)."""
    first = _first_differing_value(program, mine, theirs)
    if first is None:
        return _gradients_through_a_pole(program, mine, theirs) \
            or _gradients_of_a_saturated_tanh(program, mine, theirs)
    if first[0].op in _PICKS_AN_ELEMENT and _agree_but_for_rounding(first[0], mine, theirs) \
            or _sign_test_of_noise(first[0], mine, theirs) \
            or _in_place_power_of_a_huge_argument(program, mine, first[1]):
        return True
    leaves = len(program.leaves)
    # the steps to the first value to differ, and any later one writing into it in place
    # (through any value that is the same tensor: breadth seed 1325286)
    same = {v for v, slot in enumerate(mine.slots) if slot == mine.slots[first[1]]} \
        if len(mine.slots) > first[1] else {first[1]}
    end = max([first[1] - leaves + 1] + [k + 1 for k, s in enumerate(program.steps)
                                        if OPS[s.op].inplace and s.inputs[0] in same])
    for k, step in enumerate(program.steps[:end]):
        # _floors_a_quotient: counts noise; x % y where y divides x but for rounding
        before = _values_before(program, k)[0] if OPS[step.op].inplace and \
            step.op == "exp_" else None  # (exp_ overwrote its complex input)
        periodic = _periodic_of_a_huge_argument(
            step, mine if before is None else mine._replace(values=before))
        amplifies = periodic or step.op == "b_unique" or (
            step.op in _BY_AN_INFINITE_SCALAR and abs(step.params.get("s", 0)) == math.inf) \
            or (step.op == "s_cdist" and step.params.get("mode") == "use_mm_for_euclid_dist") \
            or step.op in ("fb_atanh", "fb_atanh_") or _acosh_of_a_rounding(program, k) \
            or _gamma_near_a_pole(step, mine) \
            or _incomplete_gamma_at_zero(step, mine, theirs) \
            or _cosine_of_noise(step, mine) \
            or _erfinv_of_a_tanh_ulp(step, mine, leaves + k) \
            or (step.op == "b_vector_norm" and step.params.get("ord") == 0) \
            or step.op in ("b_nonzero", "b_count_nonzero") \
            or _floors_a_quotient(step) \
            or step.op == "sp_polynomial_tensor_n" \
            or step.op == "b_histc" \
            or step.op in _TRUTH_TESTS or _compares(step) \
            or _truncates_a_rounding(step, mine, theirs, leaves + k) \
            or (step.op == "d_statistic" and step.params["family"] == "Weibull"
                and step.params["stat"] == "mode") \
            or _bernoulli_mode_at_one_half(step, mine, theirs, leaves + k)
        # (Weibull's mode: NaN or inf as 1 / c is an integer or not)
        out = leaves + k
        # a huge argument of sin may carry an earlier step's float32 ulp amplified (x ** x
        # of NumPy's exp(2), an ulp from torch's: dtypes seed 3220491)
        rtol = 1e-5 if periodic else 1e-6
        ours, torchs = mine.values, theirs.values
        if amplifies and OPS[step.op].inplace:  # its input was overwritten: the values before
            ours, torchs = _values_before(program, k)
        if amplifies and ours is not None and all(
                ours[i].shape == torchs[i].shape and np.allclose(
                    ours[i], torchs[i], rtol=rtol, equal_nan=True, atol=_rounding_floor(
                        ours[i]) if step.op in _TRUTH_TESTS else 1e-7)
                for i in step.inputs) and not (
                mine.values[out].shape == theirs.values[out].shape and all(np.array_equal(
                    part(mine.values[out]), part(theirs.values[out]), equal_nan=True)
                    for part in (np.real, np.imag))):
            return True
    return False


_TRUTH_TESTS = frozenset({"fb_logical_", "logical_not"})  # read x != 0


def _compares(step) -> bool:
    """An in-place comparison, x > y and the like: at values equal but for rounding its
    answer is the rounding's (x > mean(x) of attention's rows, which torch's flash kernel
    makes bitwise equal, (v + v + v) / 3, and gradkit's softmax weights an ulp apart,
    v / 3 + v / 3 + v / 3: wide seed 123108)."""
    return step.op == "fb_compare_" and step.params.get("scalar") is None or \
        step.op == "w_binary_" and step.params.get("name") in ("greater_", "less_equal_")


def _singular_lapack_input(program, mine: Result, theirs: Result) -> bool:
    """The first value to differ is a LAPACK routine's, of inputs that agree but for rounding,
    and the matrix is singular to its precision (checked after every other Known)."""
    first = _first_differing_value(program, mine, theirs)
    return first is not None and _lapack_of_a_singular_matrix(first[0], mine) and \
        _agree_but_for_rounding(first[0], mine, theirs)


def _lapack_of_a_singular_matrix(step, mine: Result) -> bool:
    """A LAPACK routine of a matrix singular to its precision (condition past 1 / eps): past
    the first pivots its factors are the rounding noise of cancelled entries (lu_factor of a
    float32 outer product of exp values, each an ulp from torch's: breadth seed 2293417)."""
    if step.op not in LAPACK_OPS or not step.inputs:
        return False
    a = mine.values[step.inputs[0]]
    if a.ndim < 2 or a.shape[-1] != a.shape[-2] or a.shape[-1] < 2 or \
            a.dtype.kind not in "fc" or not np.isfinite(a).all():
        return False
    with np.errstate(all="ignore"):
        condition = np.linalg.cond(a.astype(np.complex128 if a.dtype.kind == "c" else np.float64))
    return bool(np.any(~(condition < 1 / np.finfo(a.dtype).eps)))


def _rounding_floor(x) -> float:
    """The rounding noise of ``x``'s precision at its scale (an FFT's exact 0 on one side is
    1e-7 on the other in complex64: breadth seed 1291364)."""
    if x.dtype.kind not in "fc" or not x.size or not np.isfinite(x).any():
        return 1e-7
    return max(1e-7, 16 * float(np.finfo(x.dtype).eps) * float(np.nanmax(np.abs(
        x[np.isfinite(x)]))))


def _acosh_of_a_rounding(program, k: int) -> bool:
    """acosh (acosh_) at step ``k`` of inputs that differ in value, not only in the sign of a
    zero (that is the branch cut's conjugate: the FFT zero-sign Known, breadth seed 1045773)."""
    step = program.steps[k]
    if step.op not in ("fb_acosh", "fb_acosh_"):
        return False
    ours, torchs = _values_before(program, k)
    return ours is not None and not all(
        np.array_equal(ours[i], torchs[i], equal_nan=True) for i in step.inputs)


def _gamma_near_a_pole(step, mine: Result) -> bool:
    """lgamma, digamma or a polygamma of an input within rounding of a non-positive integer,
    a pole: -1 is inf, -0.99999994 is 16.6 (a float32 corrcoef of -1: breadth seed 1171628)."""
    if (step.op, step.params.get("fn")) not in _GAMMA_STEPS:
        return False
    x = np.real(mine.values[step.inputs[0]])
    x = x[np.isfinite(x)]
    nearest = np.round(x)
    return bool(np.any((nearest <= 0) & (np.abs(x - nearest) <= 1e-6 * np.maximum(1, -x))))


def _incomplete_gamma_at_zero(step, mine: Result, theirs: Result) -> bool:
    """gammainc (gammaincc) of an argument that is 0 on one side and rounding noise on the
    other: gammainc(0, 0) is NaN, gammainc(4e-18, 4e-18) 1 (an inverse FFT's zero bin:
    wide seed 93342)."""
    if step.op not in ("sp_gammainc", "sp_gammaincc"):
        return False
    for k in step.inputs:
        ours, reference = (np.abs(r.values[k]) for r in (mine, theirs))
        if ours.shape == reference.shape and np.any(
                ((ours == 0) != (reference == 0)) & (np.maximum(ours, reference) < 1e-6)):
            return True
    return False


def _cosine_of_noise(step, mine: Result) -> bool:
    """cosine_similarity or atan2 of an input that is rounding noise around 0 (a float32 1 -
    cos of two 1-element vectors: 0 here, 6e-8 in torch; the cosine of that with itself is 0
    below eps, 1 above: wide seed 57992; atan2(v, v) of an inverse FFT's zero bins, 0 here and
    -2.8e-17 in torch, is 0 or -3 pi / 4: strided_breadth seed 2257043)."""
    if step.op == "e_atan2":  # an element where both are noise
        y, x = (np.abs(mine.values[k]) for k in step.inputs)
        if y.dtype.kind != "f" or x.dtype.kind != "f" or not y.size or not x.size:
            return False
        return bool(((y <= _rounding_floor(y)) & (x <= _rounding_floor(x))).any())
    return step.op == "n_cosine_similarity" and any(
        np.abs(mine.values[k]).max(initial=0) < 1e-6 for k in step.inputs)


def _erfinv_of_a_tanh_ulp(step, mine: Result, out: int) -> bool:
    """erfinv(tanh(x)) with a tanh within 1e-4 of 1 (or -1), where erfinv's slope (1e5 at 1 -
    1e-6) magnifies the last bit of NumPy's float32 tanh, an ulp from torch's on a third of
    inputs (docs/numerics.md), past float32's tolerance; torch's erfinv of gradkit's tanh is
    gradkit's value (breadth seed 1995409: 3.5172 here, 3.5053 in torch, 3.5096 in float64)."""
    if step.op != "e_special_unary" or step.params.get("fn") != "erfinv":
        return False
    import torch
    x = mine.values[step.inputs[0]]
    if x.dtype.kind != "f" or out >= len(mine.values):
        return False
    with np.errstate(invalid="ignore"):
        t = np.tanh(x)
        near_one = bool((np.abs(t) > 1 - 1e-4).any())
    return near_one and np.array_equal(torch.erfinv(torch.from_numpy(np.array(t))).numpy(),
                                       mine.values[out], equal_nan=True)


_GAMMA_STEPS = frozenset([("e2_gamma_unary", fn) for fn in (
    "lgamma", "digamma", "trigamma", "polygamma3")] + [("sp_function", "gammaln")])


def _gradients_through_a_pole(program, mine: Result, theirs: Result) -> bool:
    """Only gradients differ, and a gamma (atanh) step got inputs that agree but for rounding,
    near a pole by the scale of that rounding (it moves 1 / (x - pole) by 1e-4 or more): its
    values stay within the tolerance, its derivatives (digamma's, trigamma's, 1 / (1 - x²))
    do not (gammaln of a float32 layer_norm an ulp from torch's -0.99999374: strided seed
    106125; atanh of a float32 layer_norm of two values, 1 - 5e-6: strided_breadth seed
    2259464)."""
    if not _only_gradients_differ(mine, theirs):
        return False
    for step in program.steps:
        at_one = step.op in ("fb_atanh", "fb_atanh_")
        if ((step.op, step.params.get("fn")) in _GAMMA_STEPS or at_one) and \
                _agree_but_for_rounding(step, mine, theirs):
            ours, torchs = (np.real(r.values[step.inputs[0]]) for r in (mine, theirs))
            # the nearest pole: atanh's at -1 or 1, gamma's at the integers <= 0
            pole = np.sign(ours) if at_one else np.minimum(np.round(ours), 0.0)
            with np.errstate(invalid="ignore"):
                moved = np.abs(ours - torchs) > 1e-4 * np.abs(ours - pole)
                near = (pole != 0) if at_one else (np.round(ours) <= 0)
            if np.any(near & moved & np.isfinite(ours)):
                return True
    return False


def _gradients_of_a_saturated_tanh(program, mine: Result, theirs: Result) -> bool:
    """Only gradients differ, and a tanh step's float32 output, from inputs bitwise equal,
    is within 1e-6 of -1 or 1 and a few ulps from torch's: NumPy's float32 tanh is an
    ulp from torch's (docs/numerics.md), and the derivative 1 - t ** 2 there is a few ulps,
    so that ulp moves it by half (rnn_tanh_cell of a pre-activation -8.2877: t is 1 - 3 ulp
    here, 1 - 2 ulp in torch, 1 - 2.12 ulp in float64; wide seed 190162)."""
    if not _only_gradients_differ(mine, theirs):
        return False
    leaves = len(program.leaves)
    for k, step in enumerate(program.steps):
        out = leaves + k
        if "tanh" not in step.op + str(step.params) or out >= len(mine.values) or any(
                not np.array_equal(mine.values[i], theirs.values[i], equal_nan=True)
                for i in step.inputs):
            continue
        ours, torchs = mine.values[out], theirs.values[out]
        if ours.dtype != np.float32 or ours.shape != torchs.shape:
            continue
        differ = ours != torchs
        if differ.any() and np.all(np.abs(ours[differ]) > 1 - 1e-6) and np.all(
                np.abs(ours[differ] - torchs[differ]) <= 2 * np.spacing(np.float32(1))):
            return True
    return False


# steps of a scalar s that, at s = inf, turn rounding noise into another number: |x| ** inf
# at |x| = 1 (0 or inf), xlogy(x, inf) of an x around 0 (-inf, 0 or inf: strided seed 32471)
# (add(x, y, alpha=inf) makes inf of either sign of y's noise: strided seed 176727; rsub's
# too: strided_breadth seed 1657730, x / x of one complex64 element, exact in torch)
_BY_AN_INFINITE_SCALAR = ("e2_float_power_scalar", "b_pow_scalar", "e_xlogy_scalar",
                          "b_add_alpha", "e2_rsub")


def _values_before(program, k: int) -> tuple:
    """Each library's env values as step ``k`` starts (the program run to there), or
    (None, None) when either raises in a step (an in-place step overwrites its input's values;
    atanh_ of |Q| one ulp either side of 1: breadth seed 110686). A backward that raises
    leaves the values whole (breadth seed 1325286)."""
    import torch

    import gradkit
    head = dataclasses.replace(program, steps=program.steps[:k])
    results = [run(head, lib) for lib in (gradkit, torch)]
    if any(r.error is not None and str(r.error[0]).startswith("step") for r in results):
        return None, None
    return results[0].values, results[1].values


def _bernoulli_mode_at_one_half(step, mine: Result, theirs: Result, out: int) -> bool:
    """A Bernoulli's mode (NaN at probs exactly 1/2) where its float32 probs, sigmoid of a
    logit within a few ulps of 0, round to 1/2 on one side only: NumPy's float32 exp of
    -1.19e-7 is an ulp from torch's, so 1 / (1 + exp(-x)) is 0.5 here and 0.50000006 in
    torch (dist seed 37067). The dist class's first parameter is ``x * mult``."""
    if step.op != "d_statistic" or step.params["stat"] != "mode" or \
            step.params["family"] not in ("Bernoulli", "Bernoulli-logits") or \
            out >= min(len(mine.values), len(theirs.values)):
        return False
    x = theirs.values[step.inputs[0]]
    ours, torchs = mine.values[out], theirs.values[out]
    if x.dtype != np.float32 or ours.shape != torchs.shape or x.shape != ours.shape:
        return False
    differ = ~((ours == torchs) | (np.isnan(ours) & np.isnan(torchs)))
    logits = np.abs(x.astype(np.float64) * step.params["mult"])
    return bool(differ.any()) and bool(np.all(
        logits[differ] <= 4 * np.finfo(np.float32).eps)) and bool(
        np.all(np.isnan(ours[differ]) | np.isnan(torchs[differ])))


_OF_THE_LOG = ("e2_nanmean", "e2_nanquantile")  # (steps of x.log())


def _sign_test_of_noise(step, mine: Result, theirs: Result) -> bool:
    """where(x.real > 0, x, y) of an x that agrees but for rounding and is above 0 on one side
    only (logsumexp(log_softmax(x)) is rounding noise around 0: 0 here, 6e-8 in torch, whose
    log_softmax is an ulp off; core seed 3145072); masked_select(x, x.real > 0) of such an x
    too (a singular complex64 det, 2e-16 here and 2e-8 in torch: breadth seed 1152123);
    nanmean(log(x)) of an x whose sign differs (a float32 layer_norm's cumsum is -9e-8 here and
    0 in torch: log gives NaN, which nanmean skips, and -inf; breadth seed 1453357), and
    nanquantile's (the mean of a layer_norm, -1.9e-17 here and 1.9e-17 in torch: 1559119)."""
    if step.op not in ("where", "b_masked_select") + _OF_THE_LOG:
        return False
    x_mine, x_theirs = mine.values[step.inputs[0]], theirs.values[step.inputs[0]]
    if x_mine.shape != x_theirs.shape or not np.allclose(
            x_mine, x_theirs, rtol=1e-6, atol=1e-7, equal_nan=True):
        return False
    test = np.sign if step.op in _OF_THE_LOG else (lambda x: x > 0)  # log's three cases
    differ = test(x_mine.real) != test(x_theirs.real)  # where both are noise, not inf or NaN
    return bool(differ.any()) and bool(
        np.isfinite(x_mine[differ]).all() and np.isfinite(x_theirs[differ]).all())


def _truncates_a_rounding(step, mine: Result, theirs: Result, out: int) -> bool:
    """A step that rounds to an integer (a cast to an integer dtype or long() truncates,
    floor floors) a number one side rounded just below an integer and the other to it:
    1.9999999 is 1 and 2.0 is 2 (a complex64 dot product that is 2 + 4j exactly:
    OpenBLAS's 2.0, torch's MKL 1.9999999, dtypes seed 3572947; torch's own x / x is 1 out
    of place and 0.9999999 in place, dtypes seed 3812483). Every element the results
    disagree on came from a number that differs."""
    integer_part = _INTEGER_PART.get(step.op, {}).get(step.params.get(
        "dtype" if step.op == "cast" else "fn"))
    if integer_part is None:
        return False
    source, reference = (np.real(r.values[step.inputs[0]]) for r in (mine, theirs))
    result, expected = mine.values[out], theirs.values[out]
    if source.dtype.kind != "f" or source.shape != reference.shape or result.shape != \
            expected.shape:
        return False
    differ = np.real(result) != np.real(expected)
    rounded_apart = np.isfinite(source) & np.isfinite(reference) & (
        integer_part(source) != integer_part(reference))  # NaN and inf are no rounding
    return bool(differ.any()) and bool(rounded_apart[differ].all())


# the steps (and their parameter) that round a number to an integer, and how
_INTEGER_PART = {"cast": dict.fromkeys(_INTEGER_DTYPES, np.trunc),
                 "unary": {"long": np.trunc, "trunc": np.trunc, "floor": np.floor}}


# the steps that compute sin or cos of their input
_PERIODIC = {"sin": None, "cos": None, "raw_unary": "sin", "e_special_unary": "sinc"}


def _writes_into(program, mine: Result, slot: int) -> list:
    """The steps that write in place into the tensor of ``slot``; none known where the run
    keeps no aliasing (a transform's: fwd seed 13769)."""
    if slot >= len(mine.slots):
        return []
    return [k for k, step in enumerate(program.steps) if OPS[step.op].inplace and
            mine.slots[step.inputs[0]] == mine.slots[slot]]


def _in_place_power_of_a_huge_argument(program, mine: Result, slot: int) -> bool:
    """The first value to differ (``slot``) is a tensor's that an in-place complex x **= y
    wrote last, whose operands before the write (the program replayed up to it in both)
    agree but for rounding and make Im(y log x) huge: its cis is a sine of such an argument
    (dtypes seed 5394155, y ~ 1e29)."""
    writes = _writes_into(program, mine, slot)
    if not writes or program.steps[writes[-1]].op != "ibinop" or \
            program.steps[writes[-1]].params.get("op") != "**":
        return False
    step = program.steps[writes[-1]]
    ours, torchs = _values_before(program, writes[-1])
    if ours is None:
        return False
    pairs = [(ours[i], torchs[i]) for i in step.inputs]
    if not all(a.shape == b.shape and np.allclose(a, b, rtol=1e-6, equal_nan=True)
               for a, b in pairs):
        return False
    replayed = mine._replace(values=[a for a, _ in pairs])
    return _periodic_of_a_huge_argument(step._replace(inputs=(0, 1)), replayed)


def _in_place_division_by_zero_of_noise(program, mine: Result, theirs: Result) -> bool:
    """The first value to differ (a leaf's too) is a tensor's that an in-place division by
    zero (``x /= 0``, ``x /= y`` at y = 0) wrote last, whose dividend before the write (the
    program replayed up to it in both) agrees but for rounding: a part that is noise on one
    side and an exact 0 on the other is inf or NaN over 0 (torch's complex64 ``x /= x`` of a
    short tensor is exactly real, gradkit's Smith division leaves ~1e-9j: dtypes seed 5593763;
    ``x.div_(0)`` of a complex lu_solve's 1 -+ 6e-17j: breadth seed 1481578)."""
    slots = [int(p.split("[", 1)[1].split("]", 1)[0]) for p in compare(mine, theirs)
             if p.startswith("values[")]
    if not slots or mine.error != theirs.error or mine.slots != theirs.slots:
        return False
    slot = min(slots)
    writes = _writes_into(program, mine, slot)
    if not writes:
        return False
    step = program.steps[writes[-1]]
    true_division = step.params.get("op") == "/" if step.op in ("ibinop", "iscalar_op") else \
        step.op == "num_div_" and step.params.get("mode") is None
    if not true_division:
        return False
    ours, torchs = _values_before(program, writes[-1])
    if ours is None:
        return False
    x_mine, x_theirs = ours[step.inputs[0]], torchs[step.inputs[0]]
    divisor = step.params["scalar"] if step.op == "iscalar_op" else step.params["s"] if \
        step.op == "num_div_" and step.params["form"] != "tensor" else torchs[step.inputs[1]]
    out_mine, out_theirs = mine.values[slot], theirs.values[slot]
    if x_mine.dtype.kind not in "fc" or x_mine.shape != x_theirs.shape or \
            out_mine.shape != x_mine.shape or out_mine.shape != out_theirs.shape:
        return False
    differ = ~((out_mine == out_theirs) | (np.isnan(out_mine) & np.isnan(out_theirs)))
    with np.errstate(all="ignore"):
        noise = np.isclose(x_mine, x_theirs, rtol=1e-6, atol=0.0, equal_nan=True)
    by_zero = np.broadcast_to(np.asarray(divisor) == 0, out_mine.shape)
    return bool(differ.any()) and bool(noise.all()) and bool(by_zero[differ].all())


def _periodic_of_a_huge_argument(step, mine: Result) -> bool:
    """sin or cos of an argument whose ulp is a visible part of the period: the last bit of
    float32 exp(74.2) (1.7e32, torch's one ulp above NumPy's) is another sine (seed
    1585067); a complex x ** y is |.| cis(Im(y log x)), with y ~ 1e23 such a sine too
    (seed 2717347), and a complex exp is |.| cis(Im x) (mixed seed 1666399: x ~ 1e18)."""
    if step.op in _PERIODIC and step.params.get("fn") == _PERIODIC[step.op]:
        x = mine.values[step.inputs[0]]
    elif step.op in ("exp", "exp_") and mine.values[step.inputs[0]].dtype.kind == "c":
        x = np.imag(mine.values[step.inputs[0]]) * 0.5  # exp(x / 2): |.| cis(Im(x) / 2)
    elif step.op in ("binop", "ibinop") and step.params.get("op") == "**" and \
            len(step.inputs) == 2:
        base, exponent = (mine.values[i] for i in step.inputs)
        if base.dtype.kind != "c" and exponent.dtype.kind != "c":
            return False
        with np.errstate(all="ignore"):
            x = np.imag(exponent * np.log(base.astype(complex)))
    else:
        return False
    if x.dtype.kind not in "fc":
        return False
    finite = np.abs(x[np.isfinite(x)])
    return bool(finite.size) and float(finite.max()) * np.finfo(x.dtype).eps > 1e-4


_WIDER = {"float32": "float64", "complex64": "complex128"}


def _single_precision_noise(program, mine: Result, theirs: Result) -> bool:
    """Only gradients of single-precision leaves differ, and torch's own are farther from
    the same program's in double precision than the comparison allows: rounding noise of
    terms that cancel, which both round apart (the second derivative of x / relu(x) near
    0 is 1/x**2 terms that cancel to 0: special seed 2505013)."""
    problems = compare(mine, theirs)
    return bool(problems) and all(p.startswith(("grads", "signed zero in grads"))
                                  for p in problems) and _noise_in_torch_too(
        program, mine, theirs, problems)


def _softplus_backward_overflow(program, mine: Result, theirs: Result) -> bool:
    """Only float32 gradients differ, where torch's are infinite or NaN and its own float64
    run of the program is finite, and gradkit's are as close to that as the comparison
    allows: torch's softplus backward multiplies the gradient by exp(beta x) before dividing
    by exp(beta x) + 1, which overflows float32 for a gradient over 3.4e38 / exp(beta x)
    (1.4e34 through a LogNormal's softplus-made scale: dist seed 310956)."""
    problems = compare(mine, theirs)
    if not problems or not all(p.startswith("grads[") for p in problems) or not any(
            s.op.startswith("d_") or "softplus" in s.op or s.params.get("call") == "softplus"
            for s in program.steps):
        return False
    triples = _with_truth(program, mine, theirs, problems)
    if triples is None:
        return False
    for ours, torchs, truth in triples:
        if ours is None or torchs is None or truth is None or ours.dtype != np.float32 or \
                ours.shape != truth.shape:
            return False
        differ = ~np.isclose(ours, torchs, rtol=1e-5, equal_nan=True)
        if np.isfinite(torchs[differ]).any() or not np.isfinite(truth[differ]).all() or \
                not np.allclose(ours[differ], truth[differ], rtol=1e-3):
            return False
    return True


_EDGE = -1000  # the loss's weights times 2**-1000: derivatives far from float64's range


def _overflow_at_the_edge(program, mine: Result, theirs: Result) -> bool:
    """Only derivatives differ, where torch's are infinite or NaN and gradkit's are the
    exact ones: the program with its loss weighted 2**-1000 (every derivative scaled by that,
    far from float64's range) agrees in both libraries, and gradkit's are that run's scaled
    back (inf where that overflows). torch's formulas overflow an intermediate product (its
    softplus backward's grad * exp(beta x) in float64: dist seed 324689; a second derivative
    at 1.5e308 through exp and eigvals: breadth seed 1422039)."""
    import torch

    import gradkit
    problems = compare(mine, theirs)
    if not problems or not all(p.startswith(("grads[", "grads2[")) for p in problems):
        return False
    ours, torchs = run(program, gradkit, scale=_EDGE), run(program, torch, scale=_EDGE)
    if ours.error or torchs.error or compare(ours, torchs):
        return False
    for problem in problems:
        kind, index = _problem_slot(problem)
        gradkits, torchs_, truth = (getattr(r, kind)[index] for r in (mine, theirs, torchs))
        if gradkits is None or torchs_ is None or truth is None:
            return False
        with np.errstate(over="ignore"):
            exact = np.ldexp(truth, -_EDGE) if truth.dtype.kind == "f" else None
        differ = ~np.isclose(gradkits, torchs_, rtol=0, atol=0, equal_nan=True)
        if exact is None or not differ.any() or np.isfinite(torchs_[differ]).any() or \
                not np.allclose(gradkits[differ], exact[differ], rtol=1e-5):
            return False
    return True


def _single_precision_value_noise(program, mine: Result, theirs: Result) -> bool:
    """Float values (and gradients) of a single-precision program differ, and torch's own
    are farther from the same program's in double precision than the comparison allows: a
    chain that amplifies rounding (float32 exp of a Gumbel sample a few ulp apart, then the
    sine of 4.9e18: dist seed 20522)."""
    problems = [p for p in compare(mine, theirs) if not p.startswith("signed zero")]
    return any(p.startswith("values[") for p in problems) and all(
        p.startswith(("values[", "grads")) and " values differ" in p for p in problems) and \
        _noise_in_torch_too(program, mine, theirs, problems)


def _validation_of_single_precision_noise(program, mine: Result, theirs: Result) -> bool:
    """gradkit's distribution refuses a parameter (ValueError) at a step where torch's runs:
    an input of that step is NaN on gradkit's side only, where its float64 value is below
    1e-3, the square root of float32's noise: a stddev of a variance that cancels (float32
    Kumaraswamy's: 1.6e-5 in float64, 3.4e-4 in torch, NaN here, dist seed 316415; 0 in
    float64 and torch, -1.2e-7 and NaN here from an ulp of softplus and lgamma, 315134)."""
    if theirs.error is not None or mine.error is None or mine.error[2] != "ValueError" or \
            not mine.error[0].startswith("step "):
        return False
    k = int(mine.error[0].split()[1])
    head = dataclasses.replace(program, steps=program.steps[:k])
    ours, torchs = _values_before(program, k)
    reference = _double_precision_run(head)
    if ours is None or reference is None:
        return False
    for i in program.steps[k].inputs:
        a, b, truth = ours[i], torchs[i], reference.values[i]
        differ = ~np.isclose(a, b, rtol=1e-5, equal_nan=True) if a.shape == b.shape else None
        if differ is None or not differ.any() or a.dtype != np.float32:
            continue
        nan = differ & np.isnan(a)  # (elsewhere the two differ by no more than that noise)
        with np.errstate(invalid="ignore"):
            if nan.any() and (np.abs(truth[nan]) < 1e-3).all() and \
                    (np.abs(a - b)[differ & ~nan] < 1e-3).all():
                return True
    return False


def _double_precision_run(program) -> Result | None:
    """torch's run of ``program`` with its single-precision leaves in double precision (None
    when it has none, or that run raises before its second derivatives: an error there, such
    as ctc_loss's double backward, leaves its values and gradients: nn_new seed 324334)."""
    if not any(leaf.dtype in _WIDER for leaf in program.leaves):
        return None
    import torch
    wide = dataclasses.replace(program, leaves=tuple(
        leaf._replace(dtype=_WIDER.get(leaf.dtype, leaf.dtype)) for leaf in program.leaves))
    reference = run(wide, torch)
    return reference if reference.error is None or reference.error[0] == "double backward" \
        else None


def _near_the_double_precision_truth(program, mine: Result, problems: list) -> bool:
    """gradkit's value of each problem is as close to torch's double-precision one as the
    comparison allows a single-precision result to be."""
    reference = _double_precision_run(program)
    if reference is None:
        return False
    for problem in problems:
        kind, index = _problem_slot(problem)
        ours = getattr(mine, kind)[index]
        truth = getattr(reference, kind)[index] if index < len(getattr(reference, kind)) \
            else None
        if ours is None or truth is None or truth.dtype.kind not in "fc" or \
                ours.shape != truth.shape or _diff(problem, ours.astype(truth.dtype), truth,
                                                   single_inputs=True) is not None:
            return False
    return True


def _with_truth(program, mine: Result, theirs: Result, problems: list) -> list | None:
    """(gradkit's, torch's, torch's float64 run's) value of each problem; None when there is
    no float64 run."""
    reference = _double_precision_run(program)
    if reference is None:
        return None
    triples = []
    for problem in problems:
        kind, index = _problem_slot(problem)
        truths = getattr(reference, kind)
        triples.append((getattr(mine, kind)[index], getattr(theirs, kind)[index],
                        truths[index] if index < len(truths) else None))
    return triples


def _noise_in_torch_too(program, mine: Result, theirs: Result, problems: list) -> bool:
    """A problem's torch value is farther from torch's double-precision run of the program
    than the comparison allows, and each problem's gradkit value is no farther from it than
    a few times torch's, element by element (a part of such a value, torch's row of a noisy
    float32 pinv, may be within the tolerance on each side and not of the other:
    strided_breadth seed 1963357)."""
    triples = _with_truth(program, mine, theirs, problems)
    if triples is None:
        return False
    noisy = False
    for (gradkits, torchs, truth), problem in zip(triples, problems):
        if torchs is None or gradkits is None or truth is None or \
                truth.dtype.kind not in "fc" or gradkits.shape != truth.shape or \
                not np.array_equal(np.isnan(gradkits), np.isnan(torchs)):
            return False
        noisy = noisy or _diff(problem, torchs.astype(truth.dtype), truth,
                               single_inputs=True) is not None
        # gradkit's noise is no larger than a few times torch's, element by element (a wrong
        # number would be, and so would a difference where torch's agrees with the truth)
        with np.errstate(invalid="ignore"):
            noise = np.abs(torchs.astype(truth.dtype) - truth)
            off = np.abs(gradkits.astype(truth.dtype) - truth)
            if not np.all((off <= 4 * noise) | (gradkits == torchs) | np.isnan(off)):
                return False
    return noisy


def _problem_slot(problem: str) -> tuple[str, int]:
    """("values", 7) for a problem line "values[7]: ..." (or "signed zero in grads[0]...")."""
    head, rest = problem.split("[", 1)
    return head.split()[-1], int(rest.split("]", 1)[0])


def _ill_conditioned(program, mine: Result, theirs: Result) -> bool:
    """Float values or gradients differ where torch's own move further than the comparison
    allows when every float leaf moves one ulp (either way), and gradkit's are no further
    from torch's than a few times that: an ill-conditioned result, rounding noise in both
    (a float64 gradient whose terms of 1e14 cancel to 3e4, the KL of a Uniform 1e-11 wide
    from a Gamma: dist seed 24225). The same error later in both (a double backward through
    ctc_loss) is no matter: the gradients before it are compared (breadth seed 1045759)."""
    if mine.error != theirs.error or mine.flags != theirs.flags or mine.slots != theirs.slots:
        return False
    problems = [p for p in compare(mine, theirs) if not p.startswith("signed zero")]
    if not problems or not all(p.startswith(("values[", "grads")) and " values differ" in p
                               for p in problems):
        return False
    import torch
    nudged = [run(program, torch, nudge) for nudge in (math.inf, -math.inf)]
    if any(r.error != theirs.error for r in nudged):
        return False
    single = any(v.dtype in (np.float32, np.complex64) for v in theirs.values)
    for problem in problems:
        kind, index = _problem_slot(problem)
        torchs, gradkits = getattr(theirs, kind)[index], getattr(mine, kind)[index]
        moved = [getattr(r, kind)[index] if index < len(getattr(r, kind)) else None
                 for r in nudged]
        if gradkits.dtype.kind not in "fc" or any(
                m is None or m.shape != torchs.shape for m in moved) or \
                not np.array_equal(np.isnan(gradkits), np.isnan(torchs)) or \
                all(_diff(problem, m, torchs, single) is None for m in moved):
            return False   # torch's result holds still: the difference is gradkit's
        with np.errstate(invalid="ignore"):  # element by element: where torch's holds still,
            spread = np.max([np.abs(m - torchs) for m in moved], axis=0)  # gradkit's must too
            off = np.abs(gradkits - torchs)
            if not np.all((off <= 4 * spread) | (gradkits == torchs) | np.isnan(off)):
                return False
    return True


def _floors_a_quotient(step) -> bool:
    """remainder, fmod or floor_divide: a quotient one rounding off an integer floors to the
    next one (0.35 % 0.35000002 is 0.35, 0.35000002 % 0.35 is 2e-8; seed 1320653); so does
    div with rounding_mode (an OpenBLAS |q| of 1 + ulp by -0.5 floors to -3: breadth 1747053)."""
    return step.op in ("e_fmod", "e_fmod_scalar") or \
        (step.op in ("num_div", "num_div_") and step.params.get("mode") is not None) or \
        (step.op == "raw_binary" and step.params.get("fn") in ("remainder", "floor_divide")) or \
        (step.op in ("binop", "ibinop", "scalar_op", "iscalar_op") and
         step.params.get("op") in ("%", "//"))


def _detached_matmul_operand(program, mine: Result, theirs: Result) -> bool:
    """An operand of a matrix product detached in place: torch's matmul saved a reshaped view
    of it (batched or folded operands), which the detach does not reach; gradkit saved the
    operand and its backward refuses (edge seed 1132220). Everything before agrees."""
    ops = [step.op for step in program.steps]
    return (theirs.error is None and mine.error is not None
            and mine.error[0] in ("backward", "double backward")
            and mine.message.startswith("Trying to use a saved tensor that has been detached")
            and "i_detach_" in ops and any(op in MATRIX_PRODUCTS for op in ops)
            and not compare(mine._replace(error=None, grads=[], grads2=[]),
                            theirs._replace(grads=[], grads2=[])))


def _repeated_spectrum(program, mine: Result, theirs: Result) -> bool:
    """Only gradients differ, through eig of a matrix whose eigenvalues repeat up to
    rounding: its gradient divides by their differences, rounding noise that MKL and
    OpenBLAS round apart (torch's formula, like gradkit's, is undefined there). So may the
    phase check of a complex eigh's backward, which reads such a gradient: one side refuses
    where the other computes (breadth seed 22185 on a CPU without AVX-512)."""
    problems = compare(mine, theirs)
    if not problems or not (_phase_check_of_noise(mine, theirs) or all(
            p.startswith(("grads", "signed zero in grads")) for p in problems)):
        return False
    return _has_repeated_spectrum(program, range(len(program.steps)), theirs)


def _det_gradient_at_a_singular_matrix(program, mine: Result, theirs: Result) -> bool:
    """Only gradients differ, without create_graph, through a det that is exactly 0 in torch:
    torch's plain backward solves for det * A^{-H} and gives zeros there, gradkit's is the
    adjugate, as torch's with create_graph (breadth seed 1033888: det of [[a, a], [a, a]])."""
    problems = compare(mine, theirs)
    if program.create_graph or not problems or not all(
            p.startswith(("grads", "signed zero in grads")) for p in problems):
        return False
    leaves = len(program.leaves)
    return any(step.op == "b_det" and leaves + k < len(theirs.values) and
               bool((theirs.values[leaves + k] == 0).any())
               for k, step in enumerate(program.steps))


# steps whose derivative in an input (its index) is infinite at 0: gammaincc(a, x)'s and
# gammainc's in x for a < 1 (then times abs' 0 there: NaN)
_INFINITE_SLOPE_AT_ZERO = {"sp_gammaincc": 1, "sp_gammainc": 1}


def _slope_input_not_finite_at_zero(step):
    """The input a step's derivative (or its second derivative: sinc's, 0/0 at 0 in both
    libraries) is not finite at 0, or None."""
    if step.op == "e_special_unary" and step.params.get("fn") == "sinc":
        return step.inputs[0]
    at = _INFINITE_SLOPE_AT_ZERO.get(step.op)
    return None if at is None else step.inputs[at]


def _sinc_second_derivative_near_zero(program, mine: Result, theirs: Result) -> bool:
    """Only second derivatives differ, through sinc of an input with an entry within 1e-3 of
    0 (not 0): its derivative's formula (pi x cos(pi x) - sin(pi x)) / (pi x^2) cancels there,
    and differentiated op by op its rounding is noise of relative size 1e-7 in both
    libraries, which round it apart (wide seed 12673: x = -1e-5)."""
    problems = compare(mine, theirs)
    if mine.error or theirs.error or not problems or \
            not all(p.startswith(("grads2", "signed zero in grads2")) for p in problems):
        return False
    return any(step.op == "e_special_unary" and step.params.get("fn") == "sinc" and bool(
        ((np.abs(x) < 1e-3) & (x != 0)).any()) for step in program.steps
        for x in [theirs.values[step.inputs[0]]])


def _infinite_slope_at_a_lapack_zero(program, mine: Result, theirs: Result) -> bool:
    """Only gradients differ, through a step whose derivative is infinite at 0 reading an
    entry that a LAPACK routine before it left an exact 0 on one side and rounding noise on
    the other (MKL's U S V^H of [[2, 0], [-0.77, 2]] has an exact 0 where OpenBLAS's has
    -1e-17: NaN in torch, a finite gradient here; breadth seed 1041007; sinc's second
    derivative of a singular det, complex: breadth seed 1196732)."""
    if not _only_gradients_differ(mine, theirs):
        return False
    for k, step in enumerate(program.steps):
        i = _slope_input_not_finite_at_zero(step)
        if i is None or not any(_runs_lapack(s) for s in program.steps[:k]):
            continue
        ours, torchs = mine.values[i], theirs.values[i]
        if ours.shape != torchs.shape or ours.dtype.kind not in "fc" or not ours.size:
            continue
        with np.errstate(invalid="ignore"):
            scale = max(1.0, float(np.nanmax(np.abs(torchs))))
            noise = np.abs(ours - torchs) <= 16 * np.finfo(ours.dtype).eps * scale
        if ((noise & ((ours == 0) != (torchs == 0))).any()):
            return True
    return _det_at_a_singular_value_zero(program, theirs)


def _domain_edge_at_lapack_noise(program, mine: Result, theirs: Result) -> bool:
    """The first value to differ is NaN on one side only, exactly where an input of its step
    (elementwise, of its shape) is rounding noise around 0 that a LAPACK routine before it
    left of one sign here and the other in torch: a step undefined below 0 (a fractional
    power, sqrt, log) gives NaN of the negative one, and what is computed from it differs
    (breadth seed 1951073: float_power(x, -2.5) of U S V^H's 0 of [[0, 0], [a, a]] plus 2 I,
    5e-8 here, -1.7e-7 in torch)."""
    first = _first_differing_value(program, mine, theirs)
    if first is None or mine.error or theirs.error:
        return False
    step, slot = first
    k = slot - len(program.leaves)
    ours, torchs = mine.values[slot], theirs.values[slot]
    if ours.shape != torchs.shape or ours.dtype.kind not in "fc" or \
            not any(_runs_lapack(s) for s in program.steps[:k]):
        return False
    one_nan = np.isnan(ours) != np.isnan(torchs)
    for i in step.inputs:
        a, b = mine.values[i], theirs.values[i]
        if a.shape != ours.shape or a.dtype.kind != "f" or b.shape != a.shape:
            continue
        scale = max(1.0, float(np.nanmax(np.abs(b), initial=0)))
        noise = (np.signbit(a) != np.signbit(b)) & (a != 0) & (b != 0) & \
            (np.abs(a - b) <= 64 * np.finfo(a.dtype).eps * scale)
        if one_nan.any() and (noise | ~one_nan).all():
            return _only_downstream_of(program, mine, theirs, [slot])
    return False


def _det_at_a_singular_value_zero(program, theirs: Result) -> bool:
    """A det of a singular matrix under create_graph: its derivative is then the SVD's
    cofactors, whose backward divides by each singular value, and the smallest is an exact
    0 from one LAPACK and rounding noise from the other (complex64 [[a, b], [a, b]]:
    OpenBLAS's 0, NaN here; MKL's 9e-8, finite in torch; breadth seed 1183277; a real
    float32 constant 4 x 4 matrix, two exact zeros from OpenBLAS, MKL's 1e-21 and 4e-36:
    strided_breadth seed 1935499)."""
    if not program.create_graph:
        return False
    for step in program.steps:
        matrix = theirs.values[step.inputs[0]] if step.op == "b_det" else None
        if matrix is None or matrix.dtype.kind not in "fc" or not np.isfinite(matrix).all():
            continue
        values = np.linalg.svd(_square(np, matrix, step.params["n"]), compute_uv=False)
        if values.size and values.min() <= 64 * np.finfo(matrix.dtype).eps * values.max():
            return True
    return False


def _phase_check_of_noise(mine: Result, theirs: Result) -> bool:
    """One side's backward alone raised the eigenvectors' phase check, the values agreeing."""
    return _one_sided_phase_check(mine, theirs) and not compare(
        mine._replace(error=None, grads=[], grads2=[]),
        theirs._replace(error=None, grads=[], grads2=[]))


def _one_sided_phase_check(mine: Result, theirs: Result) -> bool:
    """One side's backward alone raised the singular/eigen vectors' phase check."""
    if (mine.error is None) == (theirs.error is None):
        return False
    raised = mine if mine.error else theirs
    return raised.error[0] in ("backward", "double backward") and \
        "specified up to multiplication by e^{i phi}" in raised.message


def _eigenvectors_of_a_repeated_eigenvalue(program, mine: Result, theirs: Result) -> bool:
    """The first value to differ is the draw's sum_i L_i |V_i|^2 of eig at a repeated
    eigenvalue: eig's unit eigenvectors of it may be any basis of its eigenspace (not an
    orthogonal one), which MKL and OpenBLAS pick apart (breadth seed 137918: a constant 4 x 4
    matrix plus 2 I, eigenvalue 2 three times). A backward that only one side survives follows
    from it too (breadth seed 1086692: gradkit's svd phase check of the gradient it got)."""
    if any(r.error and r.error[0] not in ("backward", "double backward") for r in (mine, theirs)):
        return False
    first = _first_differing_value(program, mine._replace(error=None), theirs._replace(error=None))
    return first is not None and first[0].op == "l_eig_pairs" and \
        _has_repeated_spectrum(program, [first[1] - len(program.leaves)], theirs)


def _has_repeated_spectrum(program, steps, theirs: Result) -> bool:
    """Some eig/eigh step (of the indices ``steps``) has a matrix whose eigenvalues repeat up
    to rounding, or an SVD step with singular vectors one whose singular values do (its
    gradient divides by their squares' differences: breadth seed 1044475, a constant 3 x 3
    matrix plus 2 I); a matrix written in place afterwards is read as the step found it
    (breadth seed 1156231: cumsum_ of the rank-1 matrix after its eig); U S V^H too (breadth
    seed 1369393: torch's gradient is NaN there)."""
    for k in steps:
        step = program.steps[k]
        # (svdvals' second derivative goes through the singular vectors: breadth 1557579;
        # so does the legacy svd's without them: breadth 1868663)
        svd = step.op == "fb_svd_legacy" and (step.params["flag2"] or program.create_graph) \
            or step.op == "b_svd_prod" or step.op == "b_svdvals" and program.create_graph
        # (eigvalsh's second derivative goes through the eigenvectors: strided_breadth
        # 1958176, 3 ones(3, 3) + I)
        eigh = step.op == "b_eigh_prod" or step.op == "b_eigvalsh" and program.create_graph
        if (svd or eigh or step.op in ("l_eigvals_exp", "l_eig_pairs")) and theirs.values:
            source = theirs.values[step.inputs[0]]
            if any(w > k for w in _writes_into(program, theirs, step.inputs[0])):
                source = _values_before(program, k)[1]
                source = None if source is None else source[step.inputs[0]]
            if source is None or not source.size or not np.isfinite(source).all():
                continue
            # the matrix the draw builds (eigh's: its eigenvectors' gradient divides too)
            build = _hermitian_pd if eigh else _shifted
            matrix = build(np, source, step.params["n"])
            values = np.sort_complex((np.linalg.svd(matrix, compute_uv=False) if svd else
                                      np.linalg.eigvals(matrix)).ravel())
            if not values.size:  # a 0 x 0 matrix (breadth seed 1120328: a harness error)
                continue
            scale = max(1.0, float(np.abs(values).max()))
            if (np.abs(np.diff(values)) <= 1e-6 * scale).any():
                return True
    return False


def _matmul_empty_batch_dtypes(program, mine: Result, theirs: Result) -> bool:
    """matmul of two dtypes where a batched operand is empty: torch's bmm path checks no
    dtypes then (on one broadcast order only); gradkit refuses as for any other shape (and
    torch may fail later, where gradkit never got: mixed seed 3197583)."""
    torch_went_on = theirs.error is None or (
        mine.error is not None and _phase_rank(theirs.error[0]) > _phase_rank(mine.error[0]))
    return (torch_went_on and mine.error is not None and
            ("to have the same dtype" in mine.message or  # (mm's words; bmm's below)
             mine.message.startswith("expected scalar type")) and any(
                step.op in ("matmul", "b_matmul_bcast") and
                any(theirs.values[i].size == 0 for i in step.inputs) for step in program.steps))


def _only_non_finite_differ(mine: Result, theirs: Result,
                            kinds=("values", "grads", "grads2")) -> bool:
    """Values and gradients (``kinds``) agree wherever both sides are finite numbers."""
    for kind in kinds:
        for a, b in zip(getattr(mine, kind), getattr(theirs, kind)):
            if a is None or b is None or a.shape != b.shape or a.dtype != b.dtype:
                if a is not b:
                    return False
                continue
            both = np.isfinite(a) & np.isfinite(b)
            if not np.allclose(a[both], b[both], rtol=1e-4, atol=1e-6):
                return False
    return True


# the ops that run a BLAS product (gemm, gemv, dot)
MATRIX_PRODUCTS = frozenset({
    "matmul", "matvec", "dot_last", "gram", "b_bmm", "b_dot", "b_einsum", "b_inner",
    "b_matmul_bcast", "b_mm", "b_mv", "b_outer", "e_addbmm", "e_addmm", "e_addmv", "e_baddbmm",
    "e_tensordot", "b_linear",  # linear: x @ W^T (breadth seed 78482)
    "l_multi_dot", "l_vecdot", "s_addr", "s_chain_matmul"})


# torch's complex convolution is three real ones (Gauss's trick: inf - inf is NaN), gradkit's
# a complex einsum (breadth seed 1052072: conv_transpose2d)
_COMPLEX_INF_PRODUCTS = MATRIX_PRODUCTS | {"n_conv", "conv1d", "conv3d", "conv_transpose1d",
                                           "conv_transpose2d", "fb_convolution"}


def _complex_matmul_at_inf(program, mine: Result, theirs: Result) -> bool:
    """A complex matmul (or convolution) with an infinite operand, and only non-finite entries
    differ: which come out inf and which NaN is up to the BLAS kernel (torch's gemv scales x
    by 1 + 0j)."""
    if _torch_factor_refuses_its_product_at_inf(program, mine, theirs):
        return True
    # the same error later (no output that requires grad: seed 2089487) is no matter
    if mine.error != theirs.error or not theirs.values:
        return False
    infinite = any(step.op in _COMPLEX_INF_PRODUCTS and any(
        theirs.values[i].dtype.kind == "c" and np.isinf(theirs.values[i]).any()
        for i in step.inputs) for step in program.steps)
    if not infinite or mine.flags != theirs.flags or mine.slots != theirs.slots:
        return False
    if _only_non_finite_differ(mine, theirs):
        return True
    # or the first value to differ is such a product's, in non-finite entries only: what
    # follows (a where() on it, say) differs because of it; compare takes inf + nanj and
    # nan + nanj for the same NaN, so the product may come before the first value to differ
    # (special seed 1141885: where(dot(x, x).real > 0, ...))
    first = _first_differing_value(program, mine, theirs)
    if first is None:
        return False
    leaves = len(program.leaves)
    for k, step in enumerate(program.steps[:first[1] - leaves + 1]):
        out = leaves + k
        mine_out, their_out = mine.values[out], theirs.values[out]
        if step.op in _COMPLEX_INF_PRODUCTS and mine_out.shape == their_out.shape and \
                not np.isfinite(their_out).all() and (
                out == first[1] or not all(np.array_equal(part(mine_out), part(their_out),
                                                          equal_nan=True)
                                           for part in (np.real, np.imag))):
            return _only_non_finite_differ(
                mine._replace(values=[mine_out], grads=[], grads2=[]),
                theirs._replace(values=[their_out], grads=[], grads2=[]))
    return False


# the breadth ops that factor x x^H + I (a complex matmul) with a Cholesky factorization
_FACTOR_A_PRODUCT = frozenset({"b_cholesky", "l_cholesky_ex", "fb_cholesky_legacy",
                               "fb_cholesky_solve", "fb_cholesky_inverse"})


def _torch_factor_refuses_its_product_at_inf(program, mine: Result, theirs: Result) -> bool:
    """torch's x x^H of an infinite complex x is NaN (its BLAS multiplies by 1 + 0j), so its
    Cholesky factorization of that product refuses it as not positive-definite, where
    gradkit's is inf and factors (breadth seed 59823)."""
    if theirs.error is None or mine.error is not None or \
            "not positive-definite" not in theirs.message or not theirs.error[0].startswith("step"):
        return False
    step = program.steps[int(theirs.error[0].split()[1])]
    x = mine.values[step.inputs[0]] if mine.values else None
    return step.op in _FACTOR_A_PRODUCT and x is not None and x.dtype.kind == "c" and \
        bool(np.isinf(x).any())


def _first_differing_value(program, mine: Result, theirs: Result):
    """(step, slot) of the first value that differs, or None (none). A leaf's value differs
    only as a step wrote into it in place: the first such step made it (breadth seed 1301177)."""
    slots = [int(p.split("[", 1)[1].split("]", 1)[0]) for p in compare(mine, theirs)
             if p.startswith(("values[", "signed zero in values["))]
    if not slots:
        return None
    slot = min(slots)
    k = slot - len(program.leaves) if slot >= len(program.leaves) else next(
        (j for j, s in enumerate(program.steps) if OPS[s.op].inplace and s.inputs[0] == slot), -1)
    return (program.steps[k], slot) if 0 <= k < len(program.steps) else None


def _cov_of_noise_over_zero(program, mine: Result, theirs: Result) -> bool:
    """The first value to differ is cov's with no degree of freedom (correction at least the
    number of observations): it divides by 0, so an entry's rounding noise (a complex
    diagonal's imaginary part: 2e-11 in torch, -6e-11 here) is inf of its sign or NaN; every
    entry that differs is non-finite on both sides (breadth seed 1508442)."""
    first = _first_differing_value(program, mine, theirs)
    if first is None or first[0].op != "e2_cov":
        return False
    step, slot = first
    x = mine.values[step.inputs[0]]
    observations = int(np.prod(x.shape[1:])) if x.ndim > 1 else x.size
    if step.params["correction"] < observations or mine.values[slot].shape != \
            theirs.values[slot].shape:
        return False
    a, b = mine.values[slot], theirs.values[slot]
    differ = ~((a == b) | (np.isnan(a) & np.isnan(b)))
    return bool(differ.any()) and not np.isfinite(a[differ]).any() and \
        not np.isfinite(b[differ]).any()


def _copy_from_a_conj_view_of_itself(program, mine: Result, theirs: Result) -> bool:
    """The first value to differ is a write (``x[...] = y``, ``x.copy_(y)``) from a conj view
    of x itself: torch's copy_ handles the conj bit in its kernel, which reads elements it has
    already written (an expanded source: its result depends on its loop order); gradkit reads
    the source whole first (conj_views seed 327845)."""
    first = _first_differing_value(program, mine, theirs)
    if first is None:
        return False
    writes = _writes_into(program, mine, first[1])
    step = program.steps[writes[-1]] if writes else first[0]
    if step.op not in ("setitem", "copy_", "i_copy_"):
        return False
    destination, source = step.inputs[:2]
    k = source - len(program.leaves)
    return 0 <= k < len(program.steps) and program.steps[k].op == "v_conj" and \
        mine.slots[program.steps[k].inputs[0]] == mine.slots[destination]


_ROWWISE_MOMENT_NORMS = {"layer_norm", "native_layer_norm", "group_norm", "native_group_norm",
                         "group"}


def _rowwise_moments_of_a_huge_mean(program, mine: Result, theirs: Result) -> bool:
    """The first value to differ is a layer or group norm's, NaN in torch and not here, of an
    input with a finite |x| > 1.3e154: torch's RowwiseMoments combines each vector lane's
    moments with the rest through delta² · c · m0, inf · 0 = NaN where a lane or the scalar
    tail is empty (wide seed 308608)."""
    first = _first_differing_value(program, mine, theirs)
    if first is None:
        return False
    step, slot = first
    kind = step.params.get("kind", step.params.get("call"))
    if step.op != "b_layer_norm" and kind not in _ROWWISE_MOMENT_NORMS:
        return False
    x = np.real(mine.values[step.inputs[0]])
    ours, torchs = mine.values[slot], theirs.values[slot]
    return x.dtype.kind == "f" and bool((np.isfinite(x) & (np.abs(x) > 1.3e154)).any()) and \
        ours.shape == torchs.shape and bool((np.isnan(torchs) & ~np.isnan(ours)).any())


def _fused_group_norm_cancellation(program, mine: Result, theirs: Result) -> bool:
    """The first value to differ is a float32 group_norm's whose result torch's kernel takes as
    x * scale + (b - mean * scale) (scale = rstd * w): two products of |x| * |scale| that
    cancel, rounded in float32 (a mean of 7.7e8 scaled by 2.4e9: -5e10 where b is 3.8e8);
    gradkit centres x first. torch's own float64 run of the step's inputs is gradkit's value
    to the tolerance, its float32 one not (breadth seed 1533484)."""
    import torch

    first = _first_differing_value(program, mine, theirs)
    if first is None or first[0].op != "fb_aten_norm" or \
            first[0].params["kind"] not in ("group_norm", "native_group_norm"):
        return False
    step, slot = first
    ours, torchs = mine.values[slot], theirs.values[slot]
    if ours.dtype != np.float32 or ours.shape != torchs.shape:
        return False
    inputs = [torch.tensor(theirs.values[i]).double() for i in step.inputs]
    wide = OPS[step.op].fn(torch, *inputs, **step.params).detach().numpy()
    return wide.shape == ours.shape and np.allclose(ours, wide, rtol=2e-3, atol=2e-4) and \
        not np.allclose(torchs, wide, rtol=2e-3, atol=2e-4)


def _norm_of_an_infinite_weight(program, mine: Result, theirs: Result) -> bool:
    """An affine normalization step whose weight is not finite, and only non-finite entries
    differ: torch's fused group norm takes ``b - mean * rstd * w`` (inf - inf, NaN) and its
    fused batch norm backward multiplies w by rounding noise (±inf); gradkit's composite
    normalization is inf or NaN by the exact arithmetic (breadth seed 2276920)."""
    def affine_infinite(step) -> bool:
        return step.op == "fb_aten_norm" and step.params.get("affine") and \
            not np.isfinite(theirs.values[step.inputs[1]]).all()
    return _non_finite_input_to(affine_infinite, program, mine, theirs)


def _copysign_by_a_nan(program, mine: Result, theirs: Result) -> bool:
    """The first value to differ is copysign(x, y)'s where y is NaN only: it reads the sign
    bit of a NaN, which the op that made it chose (NumPy's log of a negative is -nan, torch's
    +nan; breadth seed 21105). What follows from it (copysign's gradient) differs too."""
    if mine.error or theirs.error or mine.flags != theirs.flags or mine.slots != theirs.slots:
        return False
    first = _first_differing_value(program, mine, theirs)
    if first is None or first[0].op != "e2_copysign":
        return False
    y_mine, y_theirs = (v.values[first[0].inputs[1]] for v in (mine, theirs))
    out_mine, out_theirs = mine.values[first[1]], theirs.values[first[1]]
    nan = np.broadcast_to(np.isnan(y_theirs), out_theirs.shape)
    return bool(nan.any()) and np.array_equal(np.isnan(y_mine), np.isnan(y_theirs)) and \
        np.array_equal(out_mine[~nan], out_theirs[~nan], equal_nan=True) and \
        np.array_equal(np.abs(out_mine), np.abs(out_theirs), equal_nan=True)


# the steps that multiply two tensors (an in-place one overwrites the input it would need)
_PRODUCTS = {("mul", None), ("binop", "*"), ("raw_binary", "mul")}


def _complex_product_rounding(program, mine: Result, theirs: Result) -> bool:
    """The first value to differ is a complex product x * y of inputs that agree: torch's
    vectorized loop rounds the four real products apart, gradkit's (NumPy's) fuses them, and
    where a product overflows that is another number: torch's ac - bd is inf - inf, NaN,
    gradkit's an infinity (mixed seed 4952887). Each of torch's elements is the fused or the
    unfused product of its inputs."""
    if mine.error or theirs.error:
        return False
    first = _first_differing_value(program, mine, theirs)
    if first is None:
        return False
    step, slot = first
    if (step.op, step.params.get("op", step.params.get("fn"))) not in _PRODUCTS:
        return False
    out, inputs = theirs.values[slot], [theirs.values[i] for i in step.inputs]
    if out.dtype.kind != "c" or not all(  # the inputs agree but for rounding (a pow's)
            mine.values[i].shape == v.shape and np.allclose(mine.values[i], v, rtol=1e-6,
                                                            equal_nan=True)
            for i, v in zip(step.inputs, inputs)):
        return False
    x, y = (np.broadcast_to(v, out.shape).astype(out.dtype) for v in inputs)
    unfused = np.empty(out.shape, out.dtype)
    with np.errstate(all="ignore"):
        fused = x * y  # NumPy's product of torch's own inputs
        unfused.real = x.real * y.real - x.imag * y.imag
        unfused.imag = x.real * y.imag + x.imag * y.real
    fused_here, unfused_here = (np.all([(a == b) | (np.isnan(a) & np.isnan(b)) for a, b in (
        (part(out), part(other)) for part in (np.real, np.imag))], axis=0)
        for other in (fused, unfused))
    return bool(np.all(fused_here | unfused_here) and np.any(unfused_here & ~fused_here))


# the breadth class's ops that run a LAPACK routine (NumPy's OpenBLAS here, MKL in torch)
LAPACK_OPS = frozenset({"b_solve", "b_inv", "b_det", "b_slogdet", "b_cholesky", "b_qr_abs",
                        "b_qr_prod", "b_svdvals", "b_svd_prod", "b_eigvalsh", "b_eigh_prod",
                        "l_cholesky_ex", "l_inv_ex", "l_solve_ex", "l_lstsq", "l_pinv",
                        "l_pinv_hermitian", "l_eig_pairs", "l_eigvals_exp", "l_cond",
                        "l_lu_factor", "l_lu_lower", "l_lu_upper", "l_lu_unpack", "l_lu_solve",
                        "l_householder_product",
                        # lane fuzzb: the older spellings and the solves of factors
                        "fb_svd_legacy", "fb_qr_legacy", "fb_cholesky_legacy", "fb_lu_legacy",
                        "fb_lu_solve_legacy", "fb_pinverse", "fb_triangular_solve",
                        "fb_cholesky_solve", "fb_cholesky_inverse", "fb_ormqr", "fb_ldl_solve",
                        "l_solve_triangular",  # MKL's trsm kernels, as fb_triangular_solve's
                        "e2_logdet",  # lane fuzzm: logdet is slogdet's LU (seed 113324)
                        "l_tensorinv",  # an inverse (strided_breadth seed 16102)
                        # lane fuzzwide: an SVD, an LU and an LDL factorization
                        "w_nuclear_norm", "w_matrix_rank", "w_lu_factor_ex", "w_ldl_factor_ex"})


def _lapack_at_non_finite(program, mine: Result, theirs: Result) -> bool:
    """A LAPACK routine got a matrix with an infinite or NaN entry, and only values that are
    not finite on one side differ: OpenBLAS and MKL propagate them differently. Gradients
    through its factors (singular or eigenvectors of such a matrix) are whatever each
    library's routine left in them, finite or not."""
    return _non_finite_input_to(_runs_lapack, program, mine, theirs, kinds=("values",)) or \
        _lapack_overflow(program, mine, theirs) or \
        _lapack_refuses_a_nan_left_by_lapack(program, mine, theirs) or \
        _lapack_refuses_a_nan_left_by_blas(program, mine, theirs) or \
        _ldl_refuses_a_nan_pivot(program, mine, theirs) or \
        _ldl_ex_pivots_at_non_finite(program, mine, theirs) or \
        _phase_check_of_nan_vectors(program, mine, theirs) or \
        _downstream_of_a_non_finite_lapack_result(program, mine, theirs) or \
        _svd_does_not_converge_at_non_finite(program, mine, theirs) or \
        _lu_zero_pivot_at_non_finite(program, mine, theirs) or \
        _lu_zero_pivot_in_forward(program, mine, theirs) or \
        _backward_refuses_a_non_finite_lapack_input(program, mine, theirs)


def _backward_refuses_a_non_finite_lapack_input(program, mine: Result, theirs: Result) -> bool:
    """gradkit's backward refused a non-finite matrix (its SVD, in lstsq's backward) that a
    LAPACK step got, where torch's computed: gradkit's ormqr multiplies by the Q it forms,
    NaN of an infinite right-hand side where LAPACK's skips a reflector whose tau is 0
    (strided_breadth seed 1773947). The values agree wherever both are finite."""
    if mine.error is None or mine.error[0] not in ("backward", "double backward") or \
            "contained non-finite values" not in mine.message or theirs.error is not None \
            and _phase_rank(theirs.error[0]) <= _phase_rank(mine.error[0]):
        return False
    return bool(theirs.values) and any(_runs_lapack(step) and any(
        not np.isfinite(theirs.values[i]).all() for i in step.inputs)
        for step in program.steps) and _only_non_finite_differ(mine, theirs, ("values",))


def _lu_zero_pivot_at_non_finite(program, mine: Result, theirs: Result) -> bool:
    """One library's LU of a matrix with an infinite entry met an exact zero pivot, so its
    solve refused the matrix as singular in backward (A^H's solve), where the other's carried
    NaN on and computed: gradkit's refused (breadth seed 1205874), or torch's create_graph
    derivative of det solved a matrix whose det NumPy gives as 0 at a zero pivot and torch
    as its pivots' product inf * 0 = NaN (breadth seed 1582109). The values agree wherever
    both are finite."""
    for refused, other in ((mine, theirs), (theirs, mine)):
        if refused.error is None or refused.error[0] not in ("backward", "double backward") \
                or "input matrix is singular" not in refused.message or other.error is not None \
                and _phase_rank(other.error[0]) <= _phase_rank(refused.error[0]):
            continue
        return bool(theirs.values) and any(_runs_lapack(step) and any(
            not np.isfinite(theirs.values[i]).all() for i in step.inputs)
            for step in program.steps) and _only_non_finite_differ(mine, theirs, ("values",))
    return False


def _lu_zero_pivot_in_forward(program, mine: Result, theirs: Result) -> bool:
    """One library's LU of a matrix with an infinite entry met an exact zero pivot, so the
    step refused the matrix as singular, where the other's carried NaN on (strided_breadth
    seed 2240137: OpenBLAS's elimination by multipliers x / inf = 0 leaves an exact 0 pivot,
    torch's MKL solve gave NaN)."""
    for refused, other in ((mine, theirs), (theirs, mine)):
        if refused.error is None or not refused.error[0].startswith("step ") or \
                "input matrix is singular" not in refused.message or not other.values:
            continue
        k = int(refused.error[0].split()[1])
        step, out = program.steps[k], len(program.leaves) + k
        return _runs_lapack(step) and len(other.values) > out and any(
            not np.isfinite(other.values[i]).all() for i in step.inputs) and \
            not np.isfinite(other.values[out]).all()
    return False


def _svd_does_not_converge_at_non_finite(program, mine: Result, theirs: Result) -> bool:
    """torch's MKL SVD did not converge on a matrix with an infinite entry and raised, where
    gradkit's gives NaN and goes on (strided seed 54005: pinverse of atanh of a bool matrix;
    breadth seed 1762910: lstsq's backward, a pinv, of a matrix with an inf)."""
    if theirs.error is None or \
            "failed to converge because the input matrix is ill-conditioned" not in \
            theirs.message or mine.error is not None and \
            _phase_rank(mine.error[0]) <= _phase_rank(theirs.error[0]):
        return False
    if theirs.error[0] in ("backward", "double backward"):
        return any(_runs_lapack(step) and any(not np.isfinite(theirs.values[i]).all()
                                              for i in step.inputs) for step in program.steps) \
            and _only_non_finite_differ(mine, theirs, ("values",))
    if not theirs.error[0].startswith("step"):
        return False
    step = program.steps[int(theirs.error[0].split()[1])]
    return _runs_lapack(step) and any(
        i < len(mine.values) and not np.isfinite(mine.values[i]).all() for i in step.inputs)


def _downstream_of_a_non_finite_lapack_result(program, mine: Result, theirs: Result) -> bool:
    """A LAPACK step of a non-finite input whose results differ only where one side is not
    finite, and a later step that makes another value (or shape) of that difference: a
    masked_select of ``x.real > 0`` keeps torch's inf and drops gradkit's NaN (breadth seed
    104672). A side that raised at a step is read as the program ran up to it (strided seed
    62139: gradkit's eig refuses the NaN of its lstsq where MKL's left zeros)."""
    leaves, slots = len(program.leaves), []
    values = mine.values, theirs.values
    failed = [int(r.error[0].split()[1]) for r in (mine, theirs)
              if r.error is not None and r.error[0].startswith("step ")]
    if failed and not all(values):
        values = _values_before(program, min(failed))
        if values[0] is None:
            return False
    for k, step in enumerate(program.steps):
        slot = leaves + k
        if not _runs_lapack(step) or slot >= min(map(len, values)) or all(
                np.isfinite(values[1][i]).all() for i in step.inputs):
            continue
        ours, torchs = values[0][slot], values[1][slot]
        written = [w for w in _writes_into(program, mine, slot) if w > k]
        if written:  # read as the step left it (strided seed 1577282: logical_not_ of it)
            before = _values_before(program, written[0])
            if before[0] is None:
                continue
            ours, torchs = before[0][slot], before[1][slot]
        if ours.shape == torchs.shape and ours.dtype == torchs.dtype:
            both = np.isfinite(ours) & np.isfinite(torchs)
            if np.allclose(ours[both], torchs[both], rtol=1e-4, atol=1e-6):
                slots.append(slot)
    return _only_downstream_of(program, mine, theirs, slots)


def _lapack_overflow(program, mine: Result, theirs: Result) -> bool:
    """A LAPACK step of finite input whose torch result is not finite (it overflowed), and
    only values that are not finite on one side differ (breadth seed 76674)."""
    if mine.error or theirs.error or not theirs.values or mine.flags != theirs.flags or \
            mine.slots != theirs.slots:
        return False
    first = len(program.leaves)
    return any(_runs_lapack(step) and first + k < len(theirs.values)
               and all(np.isfinite(theirs.values[i]).all() for i in step.inputs)
               and not np.isfinite(theirs.values[first + k]).all()
               for k, step in enumerate(program.steps)) and _only_non_finite_differ(mine, theirs)


def _lapack_refuses_a_nan_left_by_blas(program, mine: Result, theirs: Result) -> bool:
    """torch's routine refused as not positive-definite a complex matrix its BLAS product of an
    infinite entry made NaN (cholesky's m @ m.mH + I); gradkit's product left an infinity
    there and its routine computed (breadth seed 24151)."""
    if theirs.error is None or mine.error is not None or theirs.error[2] != "_LinAlgError" or \
            "not positive-definite" not in theirs.message or \
            not theirs.error[0].startswith("step"):
        return False
    step = program.steps[int(theirs.error[0].split()[1])]
    return step.op in LAPACK_OPS and any(
        mine.values[i].dtype.kind == "c" and np.isinf(mine.values[i]).any() for i in step.inputs)


def _phase_check_of_nan_vectors(program, mine: Result, theirs: Result) -> bool:
    """gradkit's complex SVD/eigh backward refused the NaN phase term of the singular vectors
    OpenBLAS left for a matrix with an infinite entry (MKL's are finite: a 1 x 1 matrix's U is
    1), where torch's backward computed; the values agree where finite (breadth seed 92801)."""
    if mine.error is None or mine.error[0] not in ("backward", "double backward") or \
            "specified up to multiplication by e^{i phi}" not in mine.message or \
            theirs.error is not None and \
            _phase_rank(theirs.error[0]) <= _phase_rank(mine.error[0]):
        return False
    return bool(theirs.values) and any(_runs_lapack(step) and any(
        not np.isfinite(theirs.values[i]).all() for i in step.inputs)
        for step in program.steps) and _only_non_finite_differ(mine, theirs, ("values",))


def _runs_lapack(step) -> bool:
    """A LAPACK step: one of LAPACK_OPS, a matrix norm by singular values (an SVD), or a
    negative matrix power (an inverse)."""
    return step.op in LAPACK_OPS or (step.op == "b_matrix_norm" and
                                     step.params["ord"] in (2, -2, "nuc")) or (
        step.op == "l_matrix_power" and step.params["k"] < 0)


def _ldl_ex_pivots_at_non_finite(program, mine: Result, theirs: Result) -> bool:
    """ldl_factor_ex of a matrix with an infinite or NaN entry: gradkit's sytf2 reports a NaN
    pivot in ``info`` and stops, MKL's sytrf computes on, so pivots and info differ too, and
    whatever is computed from them (wide seeds 15230, 19320)."""
    if not theirs.values:
        return False
    first = len(program.leaves)
    return _only_downstream_of(program, mine, theirs, [
        first + k for k, step in enumerate(program.steps)
        if step.op == "w_ldl_factor_ex" and first + k < len(theirs.values)
        and not np.isfinite(theirs.values[step.inputs[0]]).all()])


def _ldl_refuses_a_nan_pivot(program, mine: Result, theirs: Result) -> bool:
    """gradkit's ldl_factor (reference LAPACK's sytf2) reports the NaN pivot of a non-finite
    matrix as singular and raises; MKL's sytrf leaves it and torch computes on (breadth seed
    55562; torch's run may fail later, where gradkit never got: strided seed 75518)."""
    if mine.error is None or not mine.error[0].startswith("step") \
            or "Unknown error code" not in mine.message or theirs.error is not None and \
            _phase_rank(theirs.error[0]) <= _phase_rank(mine.error[0]):
        return False
    k = int(mine.error[0].split()[1])
    step = program.steps[k]
    values = theirs.values or _values_before(program, k)[1]
    return step.op == "fb_ldl_solve" and values is not None and not all(
        np.isfinite(values[i]).all() for i in step.inputs)


def _lapack_refuses_a_nan_left_by_lapack(program, mine: Result, theirs: Result) -> bool:
    """torch's routine refused a NaN an earlier LAPACK routine left (MKL's lstsq of an infinite
    right-hand side); gradkit's earlier routine left an infinity there (breadth seed 12697)."""
    if theirs.error is None or mine.error is not None or \
            "contained non-finite values" not in theirs.message or \
            not theirs.error[0].startswith("step"):
        return False
    k = int(theirs.error[0].split()[1])
    step = program.steps[k]
    return step.op in LAPACK_OPS and any(s.op in LAPACK_OPS for s in program.steps[:k]) and \
        any(i < len(mine.values) and not np.isfinite(mine.values[i]).all() for i in step.inputs)


# the breadth class's FFT ops (NumPy's pocketfft here, MKL in torch)
FFT_OPS = frozenset(f"fft_{name}{form}" for name in ("fft", "ifft", "rfft", "irfft", "hfft",
                                                      "ihfft") for form in ("", "n", "2")) | {
    "s_stft", "s_istft"}  # the signal class's transforms (gradkit.fft underneath)


def _fft_at_non_finite(program, mine: Result, theirs: Result) -> bool:
    """An FFT of infinite or NaN values, and only entries that are not finite on one side
    differ: pocketfft multiplies by trivial twiddle factors (inf * 0 is NaN), MKL does not.
    Or the first value to differ is such an FFT's output, in non-finite entries only, which
    later steps read otherwise (masked_scatter's mask ``x.real > 0`` of NaN or inf:
    strided_breadth seed 1686381); or only gradients differ and such an FFT's output has a
    NaN part on one side only, in non-finite entries, which a later mask reads (x * isreal(x)
    of a real fft's DC term, nan + 0j here, nan + nanj in torch: wide seed 199852)."""
    if _non_finite_input_to(FFT_OPS, program, mine, theirs):
        return True
    first = _first_differing_value(program, mine, theirs)
    if first is None:
        return _only_gradients_differ(mine, theirs) and any(
            _parts_differ_where_non_finite(program, mine, theirs, len(program.leaves) + k)
            for k, step in enumerate(program.steps) if step.op in FFT_OPS)
    if first[0].op not in FFT_OPS:
        return False
    a, b = mine.values[first[1]], theirs.values[first[1]]
    both = np.isfinite(a) & np.isfinite(b)
    return a.shape == b.shape and not both.all() and bool(
        np.allclose(a[both], b[both], rtol=1e-4, atol=1e-6)) and any(
        not np.isfinite(theirs.values[i]).all() for i in first[0].inputs)


def _parts_differ_where_non_finite(program, mine: Result, theirs: Result, out: int) -> bool:
    """Value ``out``'s real or imaginary parts differ (NaN on one side), all in entries that
    are not finite, from inputs that are not all finite."""
    inputs = program.steps[out - len(program.leaves)].inputs
    if out >= len(mine.values) or all(np.isfinite(theirs.values[i]).all() for i in inputs):
        return False
    a, b = mine.values[out], theirs.values[out]
    if a.shape != b.shape:
        return False
    differ = np.zeros(a.shape, bool)
    for part in (np.real, np.imag):
        differ |= ~((part(a) == part(b)) | (np.isnan(part(a)) & np.isnan(part(b))))
    return bool(differ.any()) and not np.isfinite(a[differ]).any()


def _fft_zero_sign(program, mine: Result, theirs: Result) -> bool:
    """Only the sign of zeros differs, first in an FFT's output: pocketfft's and MKL's
    butterflies leave their own signs on the zeros (an hfft of zeros after dropout(p=1):
    breadth seed 110647)."""
    step = _first_signed_zero_step(program, mine, theirs)
    return step is not None and (step.op in FFT_OPS or _complex_signed_zero_before(
        program, mine, theirs, step, FFT_OPS))


def _fft_zero_sign_through_a_branch_cut(program, mine: Result, theirs: Result) -> bool:
    """The first value to differ is computed from complex inputs that agree but for the sign
    of zero imaginary parts, after an FFT (pocketfft leaves +0 where MKL leaves -0): a branch
    cut (a power or log of a negative real number) turns that sign into the conjugate
    (breadth seed 15820: float_power after ihfft). Where in-place ops wrote that value later,
    one of them as it ran (acosh_ of an FFT's output: breadth seed 1045773; acosh_ then
    cumsum_: strided_breadth seed 1683905)."""
    first = _first_differing_value(program, mine, theirs)
    if first is None:
        return False
    end = first[1] - len(program.leaves)
    runs = [(first[0], end, mine.values, theirs.values)]
    later = [k for k in _writes_into(program, mine, first[1]) if k > end]
    if later:
        runs = [(program.steps[k], k, *_values_before(program, k)) for k in later]
    return any(ours is not None and any(s.op in FFT_OPS for s in program.steps[:k])
               and _zero_signs_only_differ(step, ours, torchs) for step, k, ours, torchs in runs)


def _zero_signs_only_differ(step, ours, torchs) -> bool:
    """The step's inputs agree to rounding, and some complex zero imaginary part has another
    sign."""
    signs = False
    for i in step.inputs:
        a, b = ours[i], torchs[i]
        if a.shape != b.shape or a.dtype != b.dtype or not np.allclose(
                a, b, rtol=1e-6, atol=1e-7, equal_nan=True):
            return False
        if a.dtype.kind == "c":
            zeros = (a.imag == 0) & (b.imag == 0)
            signs |= bool((np.signbit(a.imag[zeros]) != np.signbit(b.imag[zeros])).any())
    return signs


def _non_finite_input_to(ops, program, mine: Result, theirs: Result,
                         kinds=("values", "grads", "grads2")) -> bool:
    if mine.error != theirs.error or not theirs.values:  # the same error later is no matter
        return False
    runs = ops if callable(ops) else (lambda step: step.op in ops)
    non_finite = any(runs(step) and any(
        not np.isfinite(theirs.values[i]).all() for i in step.inputs if i < len(theirs.values))
        for step in program.steps)
    return non_finite and mine.flags == theirs.flags and mine.slots == theirs.slots and \
        _only_non_finite_differ(mine, theirs, kinds)


def _uses(program, op: str, **params) -> bool:
    return any(s.op == op and all(s.params.get(k) == v for k, v in params.items())
               for s in program.steps)


def _write_into_an_integer_leaf_from_the_graph(program, mine: Result, theirs: Result) -> bool:
    """``x[key] = v`` into a bool or integer leaf x with v requiring grad: torch's x then
    requires grad (a CopySlices node), so a later op saves it and a write refuses backward;
    gradkit keeps an integer tensor off the graph (main seed 6640258)."""
    leaves = program.leaves
    return (mine.error is None and theirs.error is not None and theirs.error[0] == "backward"
            and "modified by an inplace operation" in theirs.message
            and any(s.op == "setitem_adv" and s.inputs[0] < len(leaves)
                    and leaves[s.inputs[0]].dtype.startswith(("bool", "int", "uint"))
                    for s in program.steps))


def _take_along_flat_view(program, mine: Result, theirs: Result) -> bool:
    """take_along_dim without dim: torch flattens with view(-1), which refuses a layout no
    view flattens; gradkit reads the values (a deliberate improvement; strided_breadth seed
    33857). isin's brute-force kernel (few test elements) views them so too (wide seed
    222011: transposed test elements)."""
    return (mine.error is None and theirs.error is not None
            and "view size is not compatible" in theirs.message
            and (_uses(program, "b_take_along_flat") or _uses(program, "w_binary", name="isin")))


def _phase_check_of_huge_gradients(program, mine: Result, theirs: Result) -> bool:
    """gradkit's eig/eigh/svd backward refuses a loss that depends on the vectors' phase, by
    torch's absolute tolerance 1e-2, where the gradients reach 1e16 or more: the phase term
    is the rounding of such numbers (-2**19 at 1e22), torch's summed to another (breadth seed
    1693459: a double backward through eigvals and float_power)."""
    return (mine.error is not None and theirs.error is None
            and "specified up to multiplication by e^{i phi}" in mine.message
            and max((float(np.nanmax(np.abs(g), initial=0)) for g in theirs.grads + theirs.grads2
                     if g is not None and np.size(g)), default=0.0) >= 1e16)


def _no_torch_double_backward(steps: tuple):
    """torch has no derivative of the backward of the ``(kind, op)`` steps; gradkit's second
    derivative exists (everything before it must agree)."""
    def applies(program, mine: Result, theirs: Result) -> bool:
        return (mine.error is None and theirs.error is not None
                and theirs.error[0] == "double backward"
                and any(f"_{kind}_backward" in theirs.message and _uses(program, op)
                        for kind, op in steps)
                and _first_order_agrees(program, mine, theirs))
    return applies


_cdist_double_backward = _no_torch_double_backward(
    (("cdist", "s_cdist"), ("cdist", "s_cdist_self"), ("pdist", "s_pdist")))
# segment_reduce is composed of narrow and the reductions (wide seed 876)
_segment_reduce_double_backward = _no_torch_double_backward(
    (("segment_reduce", "w_segment_reduce"),))


def _write_through_an_unsafe_piece(program, mine: Result, theirs: Result) -> bool:
    """An in-place write into a piece of unsafe_split/unsafe_chunk, whose memory is a saved
    result's (no version check: torch's documented unsafety): torch's backward reads the
    written values (segment_reduce's prod gradient grad * output / data), gradkit's composed
    node its own arrays (wide seed 368254). Only gradients differ, or torch's double backward
    fails where gradkit's has none to refuse."""
    first = len(program.leaves)
    pieces = {first + k for k, s in enumerate(program.steps) if s.op == "fb_view_copies"
              and s.params["kind"].startswith("unsafe_")}
    if not any(OPS[s.op].inplace and s.inputs[0] in pieces for s in program.steps):
        return False
    problems = compare(mine, theirs)
    return bool(problems) and all(p.startswith(("grads", "signed zero in grads")) or (
        p.startswith("missing error") and theirs.error[0] == "double backward")
        for p in problems)


def _addmv_into_overlapping_memory(program, mine: Result, theirs: Result) -> bool:
    """addmv_ into an expanded tensor: torch's BLAS path has no overlap check, so it writes
    each element over the one it shares memory with (and refuses a recorded write in
    backward); gradkit refuses the write as its other in-place ops (wide seed 41733)."""
    if mine.error is None or not mine.error[0].startswith("step ") or \
            "refers to a single memory location" not in mine.message or \
            theirs.error is not None and _phase_rank(theirs.error[0]) <= _phase_rank(mine.error[0]):
        return False
    return program.steps[int(mine.error[0].split()[1])].op == "w_addmv_"


def _segment_reduce_kernel_gradient(program, mine: Result, theirs: Result) -> bool:
    """A max/min/prod segment_reduce of data holding NaN or inf, or equal values: torch's
    kernel gives a NaN (zero) element of a prod segment the product of the others, where
    gradkit's prod gives NaN; and torch shares only a positive gradient among tied maxima (a
    negative one goes whole to each). Only gradients differ (before torch's double backward
    raises, if it does: wide seeds 14137, 1778)."""
    if mine.error is not None or theirs.error is not None and \
            theirs.error[0] != "double backward" or not theirs.values:
        return False
    problems = compare(mine._replace(grads2=[]), theirs._replace(error=None, grads2=[]))
    return bool(problems) and all(p.startswith(("grads", "signed zero in grads"))
                                  for p in problems) and any(
        step.op == "w_segment_reduce" and step.params["reduce"] in ("max", "min", "prod")
        and (not np.isfinite(data).all() or np.unique(data).size < data.size)
        for step in program.steps for data in [theirs.values[step.inputs[0]].real])
_CONVOLUTIONS = frozenset({"n_conv", "fb_convolution", "w_conv"})  # w_conv: wide seed 34466


def _empty_convolution_double_backward(program, mine: Result, theirs: Result) -> bool:
    """torch's double backward of a convolution whose output is empty (but not its batch or
    channels) runs a convolution of that empty gradient and refuses it ("Only zero batch or
    zero channel inputs are supported"); gradkit's second derivative is the zeros it is
    (strided_breadth seed 1761222: a grouped, strided conv_transpose1d of width 0)."""
    return (mine.error is None and theirs.error is not None
            and theirs.error[0] == "double backward"
            and "Only zero batch or zero channel inputs are supported" in theirs.message
            and any(step.op in _CONVOLUTIONS and mine.values[len(program.leaves) + k].size == 0
                    for k, step in enumerate(program.steps) if len(program.leaves) + k <
                    len(mine.values))
            and _first_order_agrees(program, mine, theirs))


def _first_order_agrees(program, mine: Result, theirs: Result) -> bool:
    """Everything before torch's double backward agrees but for signed zeros (another
    difference) or as another Known explains: integer tensors torch marks as requiring grad
    (breadth seed 1064727), as_strided_scatter's gradient of self (seed 1136505), ..."""
    mine, theirs = mine._replace(grads2=[]), theirs._replace(error=None, grads2=[])
    return not [p for p in compare(mine, theirs) if not p.startswith("signed zero")] or \
        known_difference(program, mine, theirs) is not None


def _dist_p0_backward(program, mine: Result, theirs: Result) -> bool:
    """torch's dist(p=0) backward negates an undefined gradient for ``other`` and raises;
    gradkit goes on, so an error of its double backward (a phase torch never reached: seed
    127440, eig's gauge check, which torch raises too with p=1) is no difference either."""
    return ((mine.error is None or mine.error[0] == "double backward")
            and theirs.error is not None and theirs.error[0] == "backward"
            and theirs.message.startswith("Expected a proper Tensor but got None")
            and _uses(program, "s_dist", p=0))


def _cdist_matmul_noise(program, mine: Result, theirs: Result) -> bool:
    """cdist's matmul form at a zero distance that rounding left as a tiny positive square
    (at different entries in NumPy and torch): only gradients differ (noise there), or one
    side's eig backward refuses its phase check of such a gradient (breadth seed 1208859)."""
    return ((mine.error is None and theirs.error is None or _one_sided_phase_check(mine, theirs))
            and _uses(program, "s_cdist", mode="use_mm_for_euclid_dist")
            and not compare(mine._replace(error=None, grads=[], grads2=[]),
                            theirs._replace(error=None, grads=[], grads2=[])))


def _max_pool_padding_window(program, mine: Result, theirs: Result) -> bool:
    """A max-pool window that reads padding only: torch's double backward raises, gradkit's
    gives zeros (everything before it agrees, or only first gradients differ as the Known
    below: strided seed 110448)."""
    if not (mine.error is None and theirs.error is not None
            and theirs.error[0] == "double backward" and _uses(program, "n_max_pool")):
        return False
    problems = compare(mine._replace(grads2=[]), theirs._replace(error=None, grads2=[]))
    return not problems or _pools_padding_only(program, theirs) and all(
        p.startswith("grads") for p in problems)


def _pools_padding_only(program, theirs: Result) -> bool:
    """A max-pool step has a window of padding only: torch's output there is -inf from a
    finite input, or (of -inf inputs too: strided seed 110448) its geometry says so."""
    first = len(program.leaves)
    return bool(theirs.values) and any(
        step.op == "n_max_pool" and (_has_padding_only_window(step.params) or np.isneginf(
            theirs.values[first + k]).any() and not np.isneginf(
            theirs.values[step.inputs[0]]).any())
        for k, step in enumerate(program.steps))


def _has_padding_only_window(params: dict) -> bool:
    """Whether a max-pool window (torch's output size, ceil_mode's last window kept only if
    it starts inside the input or left padding) reads no element of the input."""
    d = params["d"]
    spatial = params["shape"][-d:]

    def per_dim(name, default):
        value = params.get(name, default)
        return value if isinstance(value, (tuple, list)) else (value,) * d
    kernel, padding, dilation = per_dim("kernel_size", 1), per_dim("padding", 0), \
        per_dim("dilation", 1)
    stride = per_dim("stride", None) if params.get("stride") else kernel
    for n, k, s, p, dl in zip(spatial, kernel, stride, padding, dilation):
        span = n + 2 * p - dl * (k - 1) - 1
        out = (-(-span // s) if params.get("ceil_mode") else span // s) + 1
        if params.get("ceil_mode") and (out - 1) * s >= n + p:
            out -= 1
        if any(all(not 0 <= j * s - p + i * dl < n for i in range(k)) for j in range(out)):
            return True
    return False


def _max_pool_padding_window_gradient(program, mine: Result, theirs: Result) -> bool:
    """A max-pool window that reads padding only (-inf, its index past the plane): torch's
    backward writes its gradient through that index into the next plane's element (or past
    the tensor), gradkit's drops it; only gradients differ (breadth seed 95687)."""
    if mine.error or theirs.error:
        return False
    problems = compare(mine, theirs)
    return _pools_padding_only(program, theirs) and bool(problems) and all(
        p.startswith("grads") for p in problems)


_EXPANDING = frozenset({"expand", "v_expand_as", "v_expand"})
_RELAYING = _EXPANDING | {"permute", "transpose", "t"}
_RESHAPES = frozenset({"flatten", "view_flat", "v_reshape"})  # views of a contiguous input
_VIEWS = _RELAYING | {"unsqueeze", "squeeze", "slice", "select0", "split0", "unbind0",
                      "chunk_last", "v_basic_index", "v_view", "v_view_as", "v_squeeze_all",
                      "detach"}
# the conj_views class's views: the same memory, conjugated or not (seed 17299)
_CONJ_VIEWS = frozenset({"v_conj", "v_imag", "v_detach", "v_data", "v_diagonal"})


def _in_place_reads_expanded_self(program, mine: Result, theirs: Result) -> bool:
    """An in-place op whose other operand is an expanded view that may alias the written
    tensor, or a view of it that broadcasts: torch reads it while writing, in its loop's
    order; gradkit reads the old values."""
    first = len(program.leaves)
    made_by = {first + k: step for k, step in enumerate(program.steps)}

    def same_tensor(i):  # an in-place op's result is its target
        step = made_by.get(i)
        while step is not None and (OPS[step.op].inplace or OPS[step.op].same):
            i = step.inputs[0]
            step = made_by.get(i)
        return i

    def root(i):  # the tensor whose memory a chain of views reads, and whether the chain
        relaid = False  # lays the elements out anew (a transpose, an expand)
        i = same_tensor(i)
        step = made_by.get(i)
        while step is not None and step.op in _VIEWS | _RESHAPES | _CONJ_VIEWS:
            relaid = relaid or step.op in _RELAYING
            i = same_tensor(step.inputs[0])
            step = made_by.get(i)
        return i, relaid

    def aliases(i, target) -> bool:
        step = made_by.get(i)
        if step is None:
            return False
        if step.op in _EXPANDING:
            return True
        shapes = theirs.values
        broadcast = i < len(shapes) and target < len(shapes) and \
            shapes[i].shape != shapes[target].shape
        (base, relaid), (target_base, target_relaid) = root(i), root(target)
        # x.t()[:] = x[:, :1] (seed 751622), x *= x.squeeze().split(1, -1)[0] (seed 790361)
        return base == target_base and (relaid or target_relaid or broadcast)
    return mine.error == theirs.error and any(
        OPS[step.op].inplace and any(aliases(i, step.inputs[0]) for i in step.inputs[1:])
        for step in program.steps)


def _pow_by_false_backward(program, mine: Result, theirs: Result) -> bool:
    """``x ** False``: gradkit's gradient is 0, as for ``x ** 0``; torch's is 0 * x ** -1
    (NaN at x = 0): only gradients differ."""
    by_false = any(step.op in ("iscalar_op", "scalar_op") and step.params.get("op") == "**"
                   and step.params.get("scalar") is False for step in program.steps)
    return by_false and mine.error is None and theirs.error is None and not compare(
        mine._replace(grads=[], grads2=[]), theirs._replace(grads=[], grads2=[]))


def _empty_pixel_shuffle(program, mine: Result, theirs: Result) -> bool:
    """pixel_shuffle/pixel_unshuffle of an empty tensor: torch returns the input's shape (and
    its backward raises); gradkit gives the shape the op defines, and a later op that
    broadcasts it may then compute where torch's raises (breadth seed 1097530: gradkit's
    values, torch's run having none)."""
    values = theirs.values or mine.values
    return any(step.op == "n_resample" and step.params.get("kind") in ("shuffle", "unshuffle")
               and any(i < len(values) and values[i].size == 0 for i in step.inputs)
               for step in program.steps)


def _one_element_dim_strides(program, mine: Result, theirs: Result) -> bool:
    """torch refused an in-place op as a partial overlap that gradkit ran: the operand holds
    the same elements laid out otherwise only in a one-element dim's stride (gradkit may then
    fail later, in backward, on what the write changed, or under vmap on another write: fwd
    seed 312729)."""
    ran = mine.error is None or mine.error[0] in ("backward", "double backward", "transform")
    return (ran and theirs.error is not None and theirs.error[0].startswith("step")
            and "refer to a single memory location" in theirs.message
            and any(OPS[step.op].inplace for step in program.steps))


def _empty_view_as_complex(program, mine: Result, theirs: Result) -> bool:
    """torch refused view_as_complex of an empty tensor for its strides (NumPy's, often all 0
    for an empty array), in the forward or in view_as_real's backward (an empty gradient);
    gradkit does not check an empty tensor's strides (and may fail later, where torch never
    got: seed 1427996)."""
    return (theirs.error is not None and (
        mine.error is None or _phase_rank(mine.error[0]) > _phase_rank(theirs.error[0]))
            and "Tensor must have a" in theirs.message and "stride" in theirs.message
            and (_uses(program, "v_view_as_complex") or _uses(program, "v_view_as_real")))


# torch's fused kernels whose backward it cannot differentiate, where gradkit composes the op
_UNDIFFERENTIATED_BACKWARDS = {
    "f_embedding_bag": ("'_embedding_bag_backward'", "_embedding_bag_per_sample_weights_backward"),
    "f_multi_head_attention": ("_scaled_dot_product_flash_attention_for_cpu_backward",),
}


def _composed_double_backward(program, mine: Result, theirs: Result) -> bool:
    """torch's embedding_bag and fused CPU attention kernel have no second derivative; gradkit
    composes them, so its second derivative exists (everything before it must agree but for
    the sign of zeros, as cdist's: the -0.0 of attention's products at a -0.0 input, breadth
    seed 98517)."""
    return (mine.error is None and theirs.error is not None
            and theirs.error[0] == "double backward"
            and any(_uses(program, op) and any(name in theirs.message for name in names)
                    for op, names in _UNDIFFERENTIATED_BACKWARDS.items())
            and _first_order_agrees(program, mine, theirs))


def _grid_sample_at_a_non_finite_point(program, mine: Result, theirs: Result) -> bool:
    """Bilinear grid_sample at a non-finite grid point: torch's second derivative of the input
    through the grid's gradient is NaN there, gradkit's 0 (its corners outside the image are
    left out of every derivative, as torch leaves them out of the first; breadth seed
    108284). So is it where a non-finite incoming gradient meets a point whose corners lie
    outside the image: torch's masked 0 times it is NaN at the clamped corner (strided_breadth
    seed 1751843: a first gradient NaN). Only second derivatives differ, NaN in torch."""
    incoming_non_finite = any(g is not None and g.dtype.kind in "fc" and
                              not np.isfinite(g).all() for g in theirs.grads)
    steps = [s for s in program.steps if s.op == "f_grid_sample" and s.params["mode"] ==
             "bilinear" and (incoming_non_finite or
                             not np.isfinite(theirs.values[s.inputs[1]]).all())]
    problems = compare(mine, theirs)
    if not steps or not problems or not all(p.startswith("grads2[") for p in problems):
        return False
    for ours, torchs in zip(mine.grads2, theirs.grads2):
        if ours is None or torchs is None or ours.shape != torchs.shape:
            continue
        differ = ~np.isclose(ours, torchs, rtol=1e-5, atol=1e-8, equal_nan=True)
        if not np.isnan(torchs[differ]).all():
            return False
    return True


def _nearest_grid_gradient_has_no_graph(program, mine: Result, theirs: Result) -> bool:
    """torch's nearest grid_sample gives the grid a zero gradient as an output of its backward
    node, so its double backward walks through it to the nodes before it and raises at one
    with no derivative (ctc_loss's backward: nn_new seeds 8461, 13569); gradkit's zero has no
    graph. Everything before the double backward agrees."""
    return (mine.error is None and theirs.error is not None
            and theirs.error[0] == "double backward"
            and theirs.message.startswith("derivative for aten::")
            and "is not implemented" in theirs.message
            and _uses(program, "f_grid_sample", mode="nearest")
            and not compare(mine._replace(grads2=[]), theirs._replace(error=None, grads2=[])))


def _as_strided_scatter_self_gradient(program, mine: Result, theirs: Result) -> bool:
    """torch's as_strided_scatter gives self the gradient of the written slice (its own OpInfo
    marks the gradient test failing); gradkit's is the derivative. Only gradients differ (and
    both raise the same error, if any: a later double backward, breadth seed 53842), or, beside
    them, an FFT's signed zeros (strided seed 162919: irfftn after it). torch's also scatters
    into a fresh gradient at the input's storage offset, out of its bounds for an input that
    is a view at an offset: its backward raises there (strided seed 174541)."""
    if not _uses(program, "fb_as_strided_scatter"):
        return False
    if mine.error is None and theirs.error is not None and theirs.error[0] == "backward" and \
            "out of bounds for storage" in theirs.message:
        theirs = theirs._replace(error=None)
    if mine.error != theirs.error:
        return False
    ours = theirs._replace(grads=mine.grads, grads2=mine.grads2)
    problems = compare(mine, ours)
    # (a convolution's zero sums beside it may also differ in sign, the Known of the sign of
    # a zero sum of products: wide seed 253093)
    return not problems or all(p.startswith("signed zero in values") for p in problems) or \
        _fft_zero_sign(program, mine, ours)


def _empty_native_dropout_leaf(program, mine: Result, theirs: Result) -> bool:
    """native_dropout returns an empty input itself; torch also gives it the dropout's node
    when it requires grad (a leaf "moved into the graph interior": its backward raises, and
    in-place ops on it are no longer refused as on a leaf). A run that raised has no values:
    the leaf's own declaration tells then (breadth seed 1237291)."""
    def empty_and_requiring_grad(slot: int) -> bool:
        if slot < len(theirs.values):
            return theirs.values[slot].size == 0 and theirs.flags[slot]
        leaf = program.leaves[slot] if slot < len(program.leaves) else None
        return leaf is not None and leaf.requires_grad and 0 in leaf.shape
    return any(step.op == "fb_native_dropout" and empty_and_requiring_grad(step.inputs[0])
               for step in program.steps)


def _second_derivative_of_a_single_value_norm(program, mine: Result, theirs: Result) -> bool:
    """Only second derivatives differ, through a normalization of a single value: its result
    is rounding noise (x * rstd - mean * rstd, -2.5e-6 for float32 -0.4), which a later step
    may divide by. torch's double-backward formulas recompute x - mean as an exact 0, gradkit
    differentiates its forward's rounding (breadth seed 1305519)."""
    problems = compare(mine, theirs)
    return bool(problems) and all(p.startswith(("grads2[", "signed zero in grads2["))
                                  for p in problems) and any(
        s.op == "fb_aten_norm" and mine.values[s.inputs[0]].size == 1 for s in program.steps)


def _batch_norm_of_a_channels_last_input(program, mine: Result, theirs: Result) -> bool:
    """torch 2.13's CPU batch_norm backward of an input laid out channels-last (a reshaped
    transposed view: strides (2, 1, 2, 2) for (1, 2, 3, 1)) reads a C-order incoming gradient
    in the input's order, so its gradient is permuted; torch agrees with gradkit when its
    batch_norm is given the same input made contiguous (breadth seed 1241979)."""
    if not any(s.op == "n_norm" and s.params.get("kind", "").startswith("batch")
               for s in program.steps) or mine.error or theirs.error or not all(
            p.startswith(("grads", "signed zero in grads")) for p in compare(mine, theirs)):
        return False
    import torch
    functional = torch.nn.functional
    original = functional.batch_norm
    functional.batch_norm = lambda input, *args, **kwargs: original(input.contiguous(), *args,
                                                                    **kwargs)
    try:
        again = run(program, torch)
    finally:
        functional.batch_norm = original
    return not compare(mine, again)


def _copysign_by_a_cleared_nan(program, mine: Result, theirs: Result) -> bool:
    """copysign(x, y) at a NaN y takes the NaN's sign bit, which NumPy's math functions (log,
    exp, sin...) clear where torch's keep it: only the magnitudes agree there, and only values
    computed from that copysign and gradients differ (breadth seed 45514)."""
    if not (mine.values and theirs.values):
        return False
    first = len(program.leaves)
    slots = set()
    for k, step in enumerate(program.steps):
        if step.op != "e2_copysign":
            continue
        out, sign = mine.values[first + k], theirs.values[step.inputs[1]]
        other = theirs.values[first + k]
        flipped = np.signbit(out) != np.signbit(other)
        if out.shape != other.shape or out.dtype.kind != "f" or not np.array_equal(
                np.abs(out), np.abs(other), equal_nan=True) or \
                not np.isnan(np.broadcast_to(sign, out.shape)[flipped]).all():
            return False
        slots |= {f"[{i}]" for i in _reading(program, first + k)}
    problems = compare(mine, theirs)
    return bool(slots) and bool(problems) and all(
        p.startswith(("grads", "signed zero in grads")) or any(s in p.split(":")[0] for s in slots)
        for p in problems)


_STORAGE_READERS = ("fb_as_strided", "fb_as_strided_copy", "fb_as_strided_",
                    "fb_as_strided_scatter")


_VIEW_SCATTERS = frozenset({"s_select_scatter", "s_slice_scatter", "s_diagonal_scatter"})


def _overlaps(size, stride) -> bool:
    """Whether a view of ``size`` and ``stride`` reaches some element twice."""
    addresses = np.zeros((), dtype=np.int64)
    for n, s in zip(size, stride):
        addresses = np.add.outer(addresses, np.arange(n) * s)
    return np.unique(addresses).size < addresses.size


def _overlapping_view(program, slot: int) -> bool:
    """The tensor in ``slot`` is an as_strided view that reaches some element twice."""
    leaves = len(program.leaves)
    while slot >= leaves:
        step = program.steps[slot - leaves]
        if step.op in ("fb_as_strided", "fb_as_strided_"):
            return _overlaps(step.params["size"], step.params["stride"])
        if not (OPS[step.op].inplace or OPS[step.op].same):
            return False
        slot = step.inputs[0]
    return False


def _scatter_into_overlapping_view(program, mine: Result, theirs: Result) -> bool:
    """The first value to differ is select/slice/diagonal_scatter's of a view whose elements
    overlap: torch's result keeps those strides (clone_preserve_strides), so the scattered
    values land on aliased elements; gradkit's result is dense (breadth seed 83197)."""
    first = _first_differing_value(program, mine, theirs)
    return first is not None and first[0].op in _VIEW_SCATTERS and \
        _overlapping_view(program, first[0].inputs[0])


# in-place ops computing from the values they overwrite (a repeated update compounds)
_IN_PLACE_ARITHMETIC = frozenset({
    "add_", "mul_", "div_", "num_div_", "exp_", "neg_", "sigmoid_", "clamp_", "fb_acosh_",
    "fb_asinh_", "fb_atanh_", "fb_conj_physical_", "fb_compare_", "fb_logical_", "i_add_scalar_",
    "i_clamp_", "i_iadd", "i_imul", "i_mul_scalar_", "i_pow_", "i_sub_", "i_tanh_", "ibinop",
    "iscalar_op", "w_binary_", "w_unary_"})


def _arithmetic_into_overlapping_view(program, mine: Result, theirs: Result) -> bool:
    """An in-place arithmetic op on an as_strided view whose elements overlap: torch's kernel
    updates element by element, so a location k elements share is updated k times (asinh_
    applied twice where two share it); gradkit's once (strided_breadth seed 1892547)."""
    return any(step.op in _IN_PLACE_ARITHMETIC and _overlapping_view(program, step.inputs[0])
               for step in program.steps)


def _made_by(program, slot: int):
    """The step that made the tensor in ``slot`` (through in-place ops on it), or None."""
    leaves = len(program.leaves)
    while slot >= leaves:
        step = program.steps[slot - leaves]
        if not (OPS[step.op].inplace or OPS[step.op].same):
            return step
        slot = step.inputs[0]
    return None


# losses whose reduced (0-d) result keeps the storage of the kernel's elementwise losses
_LOSS_BUFFERS = frozenset({"smooth_l1", "soft_margin", "bce"})


def _reduced_loss_storage(program, mine: Result, theirs: Result) -> bool:
    """as_strided (scatter) past the one element of a reduced mse, smooth_l1, soft_margin or
    bce loss: torch's 0-d result keeps the storage its kernel wrote the elementwise losses
    to, so the view is in bounds there (reading uninitialized memory; a later backward raises)
    and out of bounds here, where the result has a storage of its own (breadth seed
    1865622)."""
    if mine.error is None or "out of bounds for storage" not in mine.message or \
            not mine.error[0].startswith("step "):
        return False
    step = program.steps[int(mine.error[0].split()[1])]
    made = _made_by(program, step.inputs[0]) if step.op in _STORAGE_READERS else None
    return made is not None and made.params.get("reduction") in ("mean", "sum") and (
        made.op == "b_mse" or made.op == "n_pointwise_loss" and
        made.params["fn"] in _LOSS_BUFFERS)


def _storage_layout_read(program, mine: Result, theirs: Result) -> bool:
    """The first value to differ is an as_strided read of inputs that agree: the two libraries
    laid the input out differently in memory (a LAPACK factor, an FFT along a middle dim)."""
    first = _first_differing_value(program, mine, theirs)
    if first is None:
        return False
    step, ours, torchs = first[0], mine.values, theirs.values
    writes = _writes_into(program, mine, first[1])
    if writes and program.steps[writes[-1]].op == "fb_as_strided_":
        # in place: the first value to differ is the tensor it rewrote; compare its input as
        # the step found it (torch's inverse is column-major: breadth seed 1162051)
        step = program.steps[writes[-1]]
        ours, torchs = _values_before(program, writes[-1])
    elif step.op not in _STORAGE_READERS or step.op == "fb_as_strided_":
        return False
    return ours is not None and all(ours[i].shape == torchs[i].shape and np.allclose(
        ours[i], torchs[i], rtol=1e-6, atol=1e-7, equal_nan=True) for i in step.inputs)


def _only_downstream_of(program, mine: Result, theirs: Result, slots: list) -> bool:
    """Only gradients or values computed from env ``slots`` differ, or the first error (one
    side's) is a step computed from them (a noise value out of the next one's support)."""
    problems = compare(mine, theirs)
    if not slots or not problems:
        return False
    # (the same error on both sides is no difference: strided seed 1577282)
    errors = [e[0] for e in (mine.error, theirs.error) if e is not None] \
        if mine.error != theirs.error else []
    if errors:
        first = min(errors, key=_phase_rank)
        if not first.startswith("step "):
            return False
        step = program.steps[int(first.split()[1])]
        return any(_sources(program, i) & set(slots) for i in step.inputs)
    for p in problems:
        if p.startswith(("grads", "signed zero in grads")):
            continue
        if not p.startswith(("values[", "signed zero in values[")):
            return False
        if not _sources(program, int(p.split("[", 1)[1].split("]", 1)[0])) & set(slots):
            return False
    return True


def _kl_between_sharers(program, mine: Result, theirs: Result) -> bool:
    """kl_divergence(p, q) with p and q made from one tensor (the dist class's d_kl of one
    slot): their shared parameters cancel in torch's formula term by term (``p.loc / q.scale -
    q.loc / q.scale``), exactly in value but not in the rounding of the terms' derivatives,
    which are large where a parameter is at the edge (a scale of 1e-7); a KL of p with itself
    is 0 up to such noise (dist seeds 1411, 1870, 4232)."""
    leaves = len(program.leaves)
    return _only_downstream_of(program, mine, theirs, [
        leaves + k for k, s in enumerate(program.steps)
        if s.op == "d_kl" and s.inputs[0] == s.inputs[1]])


def _woodbury_at_the_edge(program, mine: Result, theirs: Result) -> bool:
    """LowRankMultivariateNormal with parameters scaled to the edge (cov_diag underflowing
    next to a cov_factor of 100): torch's Woodbury form subtracts two nearly equal terms of
    1e20 and more, so what it computes is rounding noise in both (dist seeds 5487, 5964)."""
    leaves = len(program.leaves)
    return _only_downstream_of(program, mine, theirs, [
        leaves + k for k, s in enumerate(program.steps)
        if s.op in ("d_statistic", "d_kl") and s.params["mult"] >= 20 and "LowRank" in str(
            s.params.get("family", s.params.get("pair")))])

def _continuous_bernoulli_near_half(program, mine: Result, theirs: Result) -> bool:
    """A float32 ContinuousBernoulli whose probs are within 0.02 of 1/2 but outside torch's
    Taylor region (0.499, 0.501]: its exact forms (mean, variance, the log normalizer)
    subtract terms of 1 / (1 - 2 p)^2, so what they compute is rounding noise in both
    (dist seeds 7677, 7763). The dist class makes probs sigmoid(x * mult) of the step's input
    (of its second input for q in a KL)."""
    leaves, slots = len(program.leaves), []
    for k, step in enumerate(program.steps):
        family = step.params.get("family")
        members = (family,) if step.op == "d_statistic" else step.params.get("pair", ())
        if step.op not in ("d_statistic", "d_kl") or theirs.values[step.inputs[0]].dtype \
                != np.float32:
            continue
        for member, slot in zip(members, step.inputs):
            if member != "ContinuousBernoulli":
                continue
            x = theirs.values[slot].astype(np.float64) * step.params["mult"]
            off = np.abs(1 / (1 + np.exp(-x)) - 0.5)
            if np.any((off < 0.02) & (off > 0.0009)):
                slots.append(leaves + k)
    return _only_downstream_of(program, mine, theirs, slots)


def _kumaraswamy_variance_at_zero(program, mine: Result, theirs: Result) -> bool:
    """A float32 Kumaraswamy variance (or stddev) within a few ulps of 0: it is E[X^2] - E[X]^2,
    two numbers of at most 1 that round to within an ulp of each other, each a float32 exp of
    lgammas that torch's kernels and NumPy's round an ulp apart; at torch's exact 0 the
    stddev's gradient is NaN, at an ulp it is finite (dist seed 34170). A float64 one within
    a few of its ulps is as much noise (a stddev of 1e-8: dist seed 329437)."""
    leaves, slots = len(program.leaves), []
    for k, step in enumerate(program.steps):
        if step.op != "d_statistic" or step.params.get("family") != "Kumaraswamy" or \
                step.params.get("stat") not in ("variance", "stddev") or \
                len(theirs.values) <= leaves + k or len(mine.values) <= leaves + k:
            continue
        power = 2 if step.params["stat"] == "stddev" else 1
        values = [r.values[leaves + k] for r in (mine, theirs)]
        if all(v.dtype in (np.float32, np.float64) for v in values) and any(
                np.any(np.abs(v.astype(np.float64)) ** power <= 4 * np.finfo(v.dtype).eps)
                for v in values):
            slots.append(leaves + k)
    return _only_downstream_of(program, mine, theirs, slots)


def _kumaraswamy_log_prob_near_one(program, mine: Result, theirs: Result) -> bool:
    """A float32 Kumaraswamy log_prob (or cdf) of a value within 1e-4 of 1 (sigmoid of a y
    above 9): its 1 - x^a is that small, and NumPy's float32 pow of such an x may round an
    ulp from torch's, a relative 1e-3 or more of the difference (1e-7 near 1: a few percent,
    dist seed 57283), so the log of it and all after differ (dist seed 42359: 2e-6 from 1)."""
    leaves, near, slots = len(program.leaves), 1 - 1e-4, []
    for k, step in enumerate(program.steps):
        if step.op != "d_statistic" or step.params.get("family") != "Kumaraswamy" or \
                step.params.get("stat") not in ("log_prob", "cdf") or \
                len(theirs.values) <= max(step.inputs):
            continue
        x, y = (theirs.values[i] for i in step.inputs)
        if x.dtype == np.float32 and np.any(1 / (1 + np.exp(-y.astype(np.float64))) >= near):
            slots.append(leaves + k)
    return _only_downstream_of(program, mine, theirs, slots)


def _float32_second_derivative_at_the_edge(program, mine: Result, theirs: Result) -> bool:
    """Only second derivatives differ, of a program with a distribution whose parameters are
    scaled to the edge (softplus(200 x) = 1.7e-5): they subtract terms equal to 1e-5
    (d2/dx2 log softplus(200 x)), which leaves a few float32 ulps of 1e5 each side rounds
    apart (dist seed 8390); in float64 a scale of 1e-35 amplifies as much (seed 18346)."""
    problems = compare(mine, theirs)
    return bool(problems) and all(p.startswith("grads2[") for p in problems) and any(
        s.op.startswith("d_") and s.params.get("mult", 1) >= 20 for s in program.steps)


def _unexplained_problems(program) -> list:
    """The program's problems that no known difference explains."""
    problems, known = diff_program(program)
    return problems if known is None else []


def _single_precision_lbfgs(program, mine: Result, theirs: Result) -> bool:
    return single_precision_lbfgs(program, mine, theirs, _unexplained_problems)


def _lbfgs_parting_at_convergence(program, mine: Result, theirs: Result) -> bool:
    import torch

    import gradkit
    return lbfgs_parting_at_convergence(program, mine, theirs,
                                        lambda p: (run(p, gradkit), run(p, torch)))


def _negated_complex_zero(program, mine: Result, theirs: Result) -> bool:
    return negated_complex_zero(program, compare(mine, theirs))


KNOWN_DIFFERENCES: tuple[Known, ...] = (
    # the setitem Known before the general one it is a case of
    Known("a value from the graph written into a bool or integer tensor leaves it off the "
          "graph (torch's requires grad)", "docs/torch_expectations.md",
          "an integer tensor that requires grad", _write_into_an_integer_leaf_from_the_graph),
    Known("an integer tensor written with a value that requires grad does not require grad",
          "docs/numerics.md", "leaves the integer tensor not requiring grad",
          _integer_tensor_requires_grad),
    Known("a view made before its base's requires_grad_() does not require grad",
          "docs/autograd.md", "made before its base's `requires_grad_()`) has",
          _view_before_requires_grad),
    Known("a view of a base written in place, then detach_()ed, keeps its history",
          "docs/autograd.md", "gradkit keeps the view's history as of the write",
          _view_of_detached_base),
    Known("x ** bool tensor (or igamma of a bool) differentiates (torch's backward raises)",
          "docs/numerics.md",
          "raises computing `exponent - 1`", _pow_by_bool_backward),
    Known("softshrink's zero of a negative x: +0.0 in torch's full vectors, -0.0 in its tail",
          "docs/numerics.md", "`softshrink` of a negative `x` inside", _vectorized_softshrink_zero),
    Known("the negation of a complex zero: +0.0 in torch's full vectors, -0.0 in its tail",
          "docs/numerics.md", "torch's vectorized complex negation", _vectorized_complex_negation),
    Known("lerp with weight 1 to -0.0: a zero of either sign in torch's full vectors",
          "docs/numerics.md", "torch's vectorized `lerp`", _vectorized_lerp_to_negative_zero),
    Known("a p=inf pdist or cdist of inputs equal but for rounding: its gradient goes to "
          "the coordinates that tie its maximum, which rounding decides",
          "docs/numerics.md", "the coordinates whose difference ties",
          _max_distance_among_rounded_ties),
    Known("median/nanmedian along a stride-0 dim: torch's reads memory it did not write",
          "docs/numerics.md", "read memory they did not write", _median_along_a_stride_zero_dim),
    Known("max/min/clamp tie of 0.0 and -0.0 picked by lane in torch's vectorized loop",
          "docs/numerics.md", "vectorized loops pick by lane", _vectorized_tie),
    Known("a zero made from rounding noise around 0 of another sign (its sign is the noise's)",
          "docs/numerics.md", "noise of the other sign", _zero_of_noise_of_another_sign),
    Known("the sign of a matrix product's or convolution's zero sum of products",
          "docs/numerics.md", "makes from a sum of products", _zero_sum_of_products),
    Known("float32 gelu gives 0.0 (NaN) in torch's oneDNN kernel where gradkit gives -0.0 (inf)",
          "docs/numerics.md", "oneDNN kernel", _onednn_gelu),
    Known("the gradient of std at elements equal but for rounding is noise over noise",
          "docs/numerics.md", "noise divided by rounding noise", _std_of_equal_values),
    Known("the gradient through ctc_loss of constant log_softmax rows is rounding noise",
          "docs/numerics.md", "of a row of equal values is rounding noise", _ctc_of_equal_rows),
    Known("corrcoef of a variable equal but for rounding: 1 or NaN as the values round",
          "docs/numerics.md", "a variable whose values are equal but for rounding",
          _corrcoef_of_equal_values),
    Known("a cast to an integer dtype keeps the low bits of a float one ulp from torch's",
          "docs/numerics.md", "keeps the low bits of a number", _cast_wraps_a_rounding),
    Known("an integer result one float32 ulp from torch's: a float the step computed, cast",
          "docs/numerics.md", "keeps the low bits of a number", _integer_result_of_a_float32_ulp),
    Known("a float64 poisson_nll_loss of an integer input: its float32 exp an ulp from torch's",
          "docs/numerics.md", "before a float64 operand joins", _float32_exp_of_an_integer_input),
    Known("multi_margin_loss of an empty batch: torch returns uninitialized memory",
          "docs/numerics.md", "returns whatever its uninitialized output", _empty_multi_margin),
    Known("renorm of a complex tensor by its inf-norm: torch's gradients are NaN (a phase "
          "check refuses them)",
          "docs/numerics.md", "finds no element equal to", _complex_inf_renorm),
    Known("matrix_exp's gradient for a large incoming gradient: each scaling's rounding",
          "docs/numerics.md", "amplify each algorithm's", _matrix_exp_gradient_of_a_large_norm),
    Known("gradients (and values) through cross(v, v), which is rounding noise in both",
          "docs/numerics.md", "gradients through it compare rounding noise", _cross_of_itself),
    Known("retain_grad() of a view made stale by a write into its base (torch ignores it)",
          "docs/autograd.md", "takes the view for a leaf and ignores the call",
          _retained_stale_view),
    Known("a write into a view made stale by a write into its base (torch raises as for a "
          "leaf)", "docs/autograd.md", "unless something read its `grad_fn` first",
          _written_stale_view),
    Known("a hook added to a view made stale by a write joins the earlier hooks on the old "
          "node in torch", "docs/autograd.md", "joins the hooks registered before the write",
          _hook_added_to_a_stale_view),
    Known("a second hook on a stale unbind/split output raises at once (torch: at the next "
          "read of its grad_fn)", "docs/autograd.md", "first hook only (later ones join",
          _second_hook_on_a_stale_multi_output_view),
    Known("the sign of a zero a LAPACK routine leaves (MKL's, not OpenBLAS's)",
          "docs/numerics.md", "the sign of the zeros they leave", _lapack_signed_zero),
    Known("a distribution refuses a parameter that float32 noise made NaN here only",
          "docs/numerics.md", "validation refuses a parameter that single-precision",
          _validation_of_single_precision_noise),
    Known("torch's softplus backward overflows float32 (grad * exp(beta x) first)",
          "docs/numerics.md", "multiplies the incoming gradient by", _softplus_backward_overflow),
    Known("derivatives at the edge of float64's range: torch's formulas overflow an "
          "intermediate product", "docs/numerics.md", "where an intermediate product of "
          "torch's overflows", _overflow_at_the_edge),
    Known("a step that turns a rounding difference of its input into another number",
          "docs/numerics.md", "turn a last-bit difference", _rounding_amplified),
    Known("a write through an unsafe split's piece into a saved result reaches torch's "
          "backward, not gradkit's composed node", "docs/api.md",
          "reaches torch's backward", _write_through_an_unsafe_piece),
    Known("float32 lgamma inside an incomplete gamma's derivative (an integer a)",
          "docs/numerics.md", "float32 inputs are computed in float32 as torch's kernels",
          _float32_lgamma_in_an_incomplete_gamma),
    Known("an infinite norm weight: torch's fused kernels' inf/NaN", "docs/numerics.md",
          "an infinite norm weight", _norm_of_an_infinite_weight),
    Known("a float32 group_norm: torch's fused x * scale + bias cancels in float32",
          "docs/numerics.md", "as `x * scale + (b - mean * scale)`",
          _fused_group_norm_cancellation),
    Known("layer/group norm of a row whose mean exceeds 1.3e154: NaN in torch (empty lanes)",
          "docs/numerics.md", "torch's `layer_norm` and `group_norm` of a row",
          _rowwise_moments_of_a_huge_mean),
    Known("a copy from a conj view of its own destination: torch's kernel reads what it wrote",
          "docs/numerics.md", "reads elements it has already written",
          _copy_from_a_conj_view_of_itself),
    Known("cov with no degree of freedom: rounding noise over 0 is inf of its sign",
          "docs/numerics.md", "with no degree of freedom divides", _cov_of_noise_over_zero),
    Known("an in-place division by zero of a dividend that agrees but for rounding",
          "docs/numerics.md", "are exactly 0 where gradkit's", _in_place_division_by_zero_of_noise),
    Known("single-precision gradients that torch's own double-precision ones show are noise",
          "docs/numerics.md", "further from its own float64 gradient", _single_precision_noise),
    Known("a matmul operand detached in place: torch saved a reshaped view of it",
          "docs/autograd.md", "which the detach does not reach", _detached_matmul_operand),
    Known("gradients of eig (eigh, svd) where eigenvalues (singular values) repeat up to rounding",
          "docs/numerics.md", "up to rounding divide by their", _repeated_spectrum),
    Known("det's gradient at an exactly singular matrix: the adjugate, zeros in torch's plain "
          "backward", "docs/numerics.md", "torch's plain backward solves for",
          _det_gradient_at_a_singular_matrix),
    Known("a derivative infinite at 0 of an entry a LAPACK routine left 0 on one side only",
          "docs/numerics.md", "infinite at 0 (`gammaincc(a, x)`", _infinite_slope_at_a_lapack_zero),
    Known("a step undefined below 0 of LAPACK rounding noise around 0 of another sign",
          "docs/numerics.md", "noise of opposite signs around 0", _domain_edge_at_lapack_noise),
    Known("eig's eigenvectors of a repeated eigenvalue: any basis of its eigenspace",
          "docs/numerics.md", "basis of its eigenspace (not an orthogonal one)",
          _eigenvectors_of_a_repeated_eigenvalue),
    Known("matmul of two dtypes with an empty batch: torch computes on one path only",
          "docs/numerics.md", "checks no dtypes when", _matmul_empty_batch_dtypes),
    Known("complex matmul with infinite entries: inf or NaN as the BLAS kernel computes",
          "docs/numerics.md", "BLAS kernel computes", _complex_matmul_at_inf),
    Known("max pooling over a window of padding only: torch's double backward raises",
          "docs/numerics.md", "torch's double backward through it raises",
          _max_pool_padding_window),
    Known("max pooling over a window of padding only: torch's backward writes into the "
          "next plane", "docs/numerics.md", "into the next plane's element",
          _max_pool_padding_window_gradient),
    Known("an in-place op reading an expanded or transposed view of the tensor it writes",
          "docs/numerics.md", "operand while it writes", _in_place_reads_expanded_self),
    Known("x ** False has gradient 0 (torch's is 0 * x ** -1, NaN at 0)", "docs/numerics.md",
          "`x ** False` differentiates as `x ** 0`", _pow_by_false_backward),
    Known("take_along_dim without dim (or isin's few test elements) of a non-contiguous input "
          "computes (torch's view(-1) refuses)", "docs/torch_expectations.md",
          "its `view(-1)` refuses", _take_along_flat_view),
    Known("pixel_(un)shuffle of an empty tensor has the op's shape (torch: the input's)",
          "docs/numerics.md", "input unchanged, whatever the factor", _empty_pixel_shuffle),
    Known("an in-place op between views differing in a one-element dim's stride runs",
          "docs/numerics.md", "decided on the strides of the dims with more",
          _one_element_dim_strides),
    Known("view_as_complex of an empty tensor does not check its strides",
          "docs/api.md", "does not check the strides of an empty tensor", _empty_view_as_complex),
    Known("a complex product: torch's vector loop rounds its four real products apart (inf - "
          "inf where one overflows)", "docs/numerics.md", "torch's unfused `ac - bd` is",
          _complex_product_rounding),
    Known("copysign(x, NaN) reads the NaN's sign bit, which the op that made it chose",
          "docs/numerics.md", "The sign bit of a NaN an op makes", _copysign_by_a_nan),
    Known("a LAPACK routine of a non-finite matrix: OpenBLAS's inf/NaN, not MKL's",
          "docs/numerics.md", "OpenBLAS and torch's MKL propagate", _lapack_at_non_finite),
    Known("an FFT of non-finite values: pocketfft's inf/NaN, not MKL's", "docs/numerics.md",
          "multiplies every element by its twiddle factor", _fft_at_non_finite),
    Known("the sign of a zero an FFT leaves", "docs/numerics.md",
          "of a zero it leaves is the algorithm's", _fft_zero_sign),
    Known("the sign of a zero imaginary part an FFT leaves, through a branch cut",
          "docs/numerics.md", "a branch cut after it", _fft_zero_sign_through_a_branch_cut),
    Known("the phase check of complex eigen/singular vectors refuses rounding noise of "
          "gradients of 1e16 or more", "docs/numerics.md", "tolerance is torch's, absolute (1e-2)",
          _phase_check_of_huge_gradients),
    Known("cdist's and pdist's second derivative exists (torch's backwards have none)",
          "docs/numerics.md", "'_cdist_backward' is not implemented",
          _cdist_double_backward),
    Known("segment_reduce's second derivative exists (torch's backward has none)",
          "docs/numerics.md", "'aten::_segment_reduce_backward' is not",
          _segment_reduce_double_backward),
    Known("segment_reduce's prod gradient at a NaN element, max/min's at a tie: torch's "
          "kernel's (gradkit's prod gives NaN, max/min share every gradient)", "docs/numerics.md",
          "torch's kernel gives a NaN element of its segment", _segment_reduce_kernel_gradient),
    Known("sinc's second derivative near 0: its derivative's formula cancels, rounding noise "
          "in both", "docs/numerics.md", "within 1e-3 of 0 `sinc`'s second derivative",
          _sinc_second_derivative_near_zero),
    Known("addmv_ into an expanded tensor: torch writes element over element, gradkit refuses",
          "docs/autograd.md", "whose BLAS path torch does not check",
          _addmv_into_overlapping_memory),
    Known("a convolution's second derivative where its output is empty: torch's refuses",
          "docs/numerics.md", "convolution whose output is empty",
          _empty_convolution_double_backward),
    Known("dist(p=0) passes no gradient (torch's backward for `other` raises)",
          "docs/numerics.md", "negating that missing gradient", _dist_p0_backward),
    Known("cdist's matmul form at a zero distance: the gradient is rounding noise in both",
          "docs/numerics.md", "Euclidean matmul form at a zero distance is rounding noise",
          _cdist_matmul_noise),
    Known("embedding_bag's and multi-head attention's second derivatives exist (torch's fused "
          "kernels have none)", "docs/numerics.md",
          "gradkit composes both from differentiable ops", _composed_double_backward),
    Known("bilinear grid_sample at a non-finite grid point or gradient: torch's second "
          "derivative of the input is NaN", "docs/numerics.md", "at a non-finite grid point",
          _grid_sample_at_a_non_finite_point),
    Known("nearest grid_sample's zero grid gradient has no graph (torch's double backward "
          "walks through it and raises further back)", "docs/numerics.md",
          "walks through it into the nodes before", _nearest_grid_gradient_has_no_graph),
    Known("as_strided_scatter's gradient of self is the derivative (torch's is the written "
          "slice)", "docs/api.md", "torch's is not (it returns the written slice",
          _as_strided_scatter_self_gradient),
    Known("the second derivative through a normalization of a single value (rounding noise)",
          "docs/numerics.md", "a normalization of a single value",
          _second_derivative_of_a_single_value_norm),
    Known("batch_norm's gradient of a channels-last input: torch 2.13 permutes it",
          "docs/torch_expectations.md", "gradient in the input's channels-last order",
          _batch_norm_of_a_channels_last_input),
    Known("native_dropout of an empty leaf: torch moves the leaf into the graph interior",
          "docs/api.md", "a leaf moved into the graph interior, whose backward raises",
          _empty_native_dropout_leaf),
    Known("an op's argument error where torch first refuses an input view whose base was "
          "written in place", "docs/autograd.md", "reads an input's `grad_fn` before its kernel",
          _stale_view_read_after_the_kernel),
    Known("torch's backward of a conj view reshaped in place, then written in place, expects "
          "the old shape", "docs/autograd.md", "regenerates its `grad_fn` from the conj alone",
          _conj_view_reshaped_in_place),
    Known("as_strided reads the storage of a result laid out otherwise than torch's",
          "docs/numerics.md", "`as_strided` reads the storage, not the logical order",
          _storage_layout_read),
    Known("in-place arithmetic on an overlapping view: torch updates a shared location once "
          "per element sharing it", "docs/numerics.md", "Arithmetic in place there differs",
          _arithmetic_into_overlapping_view),
    Known("as_strided past a reduced loss's element: torch's keeps its elementwise buffer's "
          "storage", "docs/numerics.md", "the storage of its kernel's elementwise losses",
          _reduced_loss_storage),
    Known("select/slice/diagonal_scatter of an overlapping view: torch keeps the overlap",
          "docs/numerics.md", "its `clone_preserve_strides`", _scatter_into_overlapping_view),
    Known("the KL divergence between two distributions made from one tensor: terms that "
          "cancel have derivatives that round apart", "docs/distributions.md",
          "cancel exactly in value but their derivatives round apart", _kl_between_sharers),
    Known("LowRankMultivariateNormal of a cov_diag tiny next to its cov_factor: the Woodbury "
          "form is rounding noise", "docs/distributions.md",
          "subtracts two nearly equal terms", _woodbury_at_the_edge),
    Known("float32 ContinuousBernoulli with probs just outside torch's Taylor region around "
          "1/2: its exact forms are rounding noise", "docs/distributions.md",
          "just outside the Taylor region", _continuous_bernoulli_near_half),
    Known("a Kumaraswamy variance within a few ulps of 0: which ulp is the rounding of "
          "exp and lgamma", "docs/distributions.md", "Kumaraswamy's variance in float32",
          _kumaraswamy_variance_at_zero),
    Known("a float32 Kumaraswamy log_prob of a value near 1: 1 - x^a amplifies an ulp of "
          "pow's rounding", "docs/distributions.md", "Kumaraswamy's `log_prob` and `cdf` of",
          _kumaraswamy_log_prob_near_one),
    Known("second derivatives through parameters scaled to the edge are rounding noise",
          "docs/distributions.md", "float32 second derivatives of a distribution",
          _float32_second_derivative_at_the_edge),
    Known("LBFGS in single precision: its convergence tests compare rounding noise",
          "docs/optim.md", "float32 rounding noise, so a run may take", _single_precision_lbfgs),
    Known("LBFGS's strong-Wolfe line search at convergence: losses an ulp apart (NumPy's "
          "sums and dot products round otherwise than torch's) pick another step",
          "docs/optim.md", "once the loss has converged", _lbfgs_parting_at_convergence),
    Known("maximize=True of a complex zero gradient: torch's vectorized negation gives +0.0",
          "docs/optim.md", "negates a complex tensor as `0 - x`", _negated_complex_zero),
    Known("copysign by a NaN: the NaN's sign bit, which NumPy's math functions clear",
          "docs/numerics.md", "The sign bit of a NaN is not compared",
          _copysign_by_a_cleared_nan),
    Known("a step torch's own gives gradkit's value from gradkit's inputs, a few ulps from "
          "torch's", "docs/numerics.md", "accepts any step whose inputs are a few ulps apart",
          _torchs_step_gives_ours_from_our_inputs),
    # the fwd class (tests/fuzz/known_fwd.py)
    Known("a write into a captured tensor under a transform: gradkit sees it when the function "
          "returns", "docs/func.md", "so unlike torch the write has happened",
          known_fwd.captured_write_seen_at_return),
    Known("vmap refuses every write into an unmapped or captured tensor", "docs/func.md",
          "and allows them otherwise", known_fwd.vmap_refuses_every_captured_write),
    Known("torch's forward transforms give some single-precision tangents a double dtype",
          "docs/func.md", "a double-precision tangent for a single-precision output",
          known_fwd.tangent_dtype),
    Known("torch's double tangent of a single-precision output reaches an index_put, "
          "index_add or scatter, which refuses it", "docs/func.md",
          "scatter such a tangent into single-precision zeros",
          known_fwd.torch_index_put_of_a_double_tangent),
    Known("torch's double tangent of a single-precision 0-d result reaches a kernel that "
          "refuses it (gelu's oneDNN one, einsum's dot)", "docs/func.md",
          "oneDNN `gelu` kernel and `einsum`'s dot",
          known_fwd.torch_kernel_refuses_a_double_tangent),
    Known("torch's tangent of a tensor copy_ wrote a dual of the other kind (complex, real) "
          "into keeps the dual's kind, in what is computed from it too", "docs/func.md",
          "carries its imaginary part into what is computed from it",
          known_fwd.torch_complex_tangent_of_a_real_copy),
    Known("prod's gradient under torch.func is torch's safe-zeros product of the others "
          "(finite beside an inf), gradkit's out / x", "docs/func.md",
          "always takes its backward's zero-safe path",
          known_fwd.torch_prod_backward_under_func),
    Known("torch's jvp of a power with a real operand and a complex result drops the "
          "imaginary part of that operand's term", "docs/autograd.md",
          "keeps only the real part of that operand's term",
          known_fwd.torch_pow_tangent_of_a_real_operand),
    Known("torch's tangent of x.mul_(x) reads the tangent it has already updated",
          "docs/autograd.md", "tangent it has already updated in place",
          known_fwd.torch_tangent_of_a_self_write),
    Known("torch's vmap refuses what its batched tensors cannot do (.item(), detach_())",
          "docs/func.md", "a tensor computed from the mapped inputs (torch:",
          known_fwd.vmap_torch_refuses_what_batched_tensors_cannot_do),
    Known("both refuse a step under vmap: gradkit with torch's error for one sample, torch "
          "with its batched kernel's", "docs/func.md", "an empty sample's `amax()` with no dim",
          known_fwd.vmap_refusal_is_torchs_for_one_sample),
    Known("torch's Jacobians of an empty tensor raise under its vmap or backward",
          "docs/func.md", "The Jacobians of an empty input or output are empty blocks",
          known_fwd.torch_jacobian_of_an_empty_tensor),
    Known("torch's vmapped forward AD refuses the tangent of an empty advanced index",
          "docs/func.md", "the tangent of an empty advanced index",
          known_fwd.torch_batched_tangent_of_an_empty_index),
    Known("torch's forward AD asserts on a dual written into a view of an integer tensor",
          "docs/autograd.md", "fails an internal assert there",
          known_fwd.torch_asserts_on_a_dual_written_into_an_integer_view),
    Known("torch's tangent of x % number is x's own tangent: a write into the result changes "
          "x's", "docs/autograd.md", "is x's own tangent tensor",
          known_fwd.torch_remainder_by_a_number_shares_its_tangent),
    Known("a NaN derivative lands in a Jacobian's rows (forward mode) or columns (reverse)",
          "docs/func.md", "in its columns under reverse mode",
          known_fwd.nan_placement_in_jacobians),
    Known("detach_() inside grad nested in jvp: torch's jvp still pushes the tangent",
          "docs/func.md", "a `detach_()` inside a `grad` nested in `jvp`",
          known_fwd.inner_detach_under_jvp),
    Known("a function capturing the tensor it is given: a write through the input looks like "
          "a captured write", "docs/func.md", "captures the very tensor it is given",
          known_fwd.input_captured_too),
    Known("vmap over a 0-d input: torch's samples promote as dimensioned tensors, gradkit's "
          "per-sample call as 0-d ones", "docs/func.md", "promotes as a dimensioned tensor",
          known_fwd.vmap_of_a_scalar_promotes_as_a_tensor),
    Known("the sign of a zero product under vmap: torch's batching rule runs one matrix "
          "product, gradkit a matrix-vector product per sample", "docs/func.md",
          "runs a matrix times a batch of vectors as one",
          known_fwd.vmap_of_a_product_is_one_product),
    Known("torch's vmap runs an in-place op the op refuses outside vmap (a broadcast sample, "
          "an overlapping operand)",
          "docs/func.md", "which the op refuses outside vmap, and gradkit's vmap refuses",
          known_fwd.vmap_in_place_broadcast),
    Known("a write into a view of a captured tensor made inside the function: torch runs it",
          "docs/func.md", "view of a captured tensor made inside the function",
          known_fwd.write_into_a_view_of_a_captured_tensor),
    Known("torch's forward formula of a complex silu is not its derivative",
          "docs/autograd.md", "dual is not its derivative (torch's backward refuses complex",
          known_fwd.torch_complex_silu_tangent),
    Known("gradients through |Q| of a 1 x 1 complex QR (1 in exact arithmetic): rounding "
          "noise in both", "docs/numerics.md", "of a 1 x 1 complex QR is 1 in exact arithmetic",
          _abs_of_a_one_entry_complex_q),
    # the most general explanations last: the entries above name a specific cause
    Known("single-precision values that torch's own double-precision ones show are noise",
          "docs/numerics.md", "further from its own float64 value", _single_precision_value_noise),
    Known("an ill-conditioned result: torch's own moves as much when its inputs move an ulp",
          "docs/numerics.md", "moves one ulp (either way)", _ill_conditioned),
    Known("a step's own rounding a few ulps from torch's, which later steps amplify: torch's "
          "chain from gradkit's value there gives gradkit's result", "docs/numerics.md",
          "from gradkit's value of that step", _torchs_chain_from_our_step),
    Known("a LAPACK routine of a matrix singular to its precision: its factors are rounding "
          "noise", "docs/numerics.md", "moves one ulp (either way)", _singular_lapack_input),
)


def known_difference(program, mine: Result, theirs: Result) -> str | None:
    """The documented difference this mismatch is an instance of, if any."""
    return next((k.what for k in KNOWN_DIFFERENCES if k.applies(program, mine, theirs)), None)


def diff_program(program) -> tuple:
    """Run ``program`` in gradkit and torch: (differences, known difference they are or None)."""
    import torch

    import gradkit
    try:
        theirs = run(program, torch)
    except TorchInternalError:
        return [], None
    mine = run(program, gradkit)
    problems = compare(mine, theirs)
    if program.klass == "optim":    # its runs' errors are torch's own messages
        problems = problems or error_problems(mine, theirs)
    return problems, (known_difference(program, mine, theirs) if problems else None)


def check(program) -> list:
    """The differences between gradkit and torch on ``program``, known differences excepted."""
    problems, known = diff_program(program)
    return [] if known else problems
