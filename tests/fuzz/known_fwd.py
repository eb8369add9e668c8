"""The fwd class's known differences (tests/fuzz/known.py lists them with their docs): how
gradkit's transforms, built on reverse mode and run once per sample, differ from torch's by
design, and torch's own forward-mode warts."""
from __future__ import annotations

import dataclasses
import re

import numpy as np

from .programs import OPS
from .runner import Result, compare, run

_CAPTURED_WRITE = "would mutate a captured Tensor"
# the transforms that push tangents forward (torch's forward mode)
_FORWARD = ("dual", "jvp", "jacfwd", "hessian", "jvp_of_grad")


def _phase_rank(phase: str) -> tuple:
    """Steps in order, then the transform's own work."""
    return (1, int(phase.split()[1])) if phase.startswith("step ") else \
        (0, 0) if phase == "forward" else (2, 0)


def captured_write_seen_at_return(program, mine: Result, theirs: Result) -> bool:
    """torch refused a write into a captured tensor at the write; gradkit sees it when the
    function returns (the same error), or, the write done, a later step raised first, or the
    write itself failed with its own error (an index that does not broadcast: fwd seed
    310182)."""
    if program.transform in ("", "dual", "vmap") or theirs.error is None or \
            _CAPTURED_WRITE not in theirs.message or mine.error is None:
        return False
    return mine.message.startswith(theirs.message[:60]) or \
        _phase_rank(mine.error[0]) > _phase_rank(theirs.error[0]) or \
        mine.error[0] == theirs.error[0] and mine.error[0].startswith("step ") and \
        OPS[program.steps[_phase_rank(mine.error[0])[1]].op].inplace


def vmap_refuses_every_captured_write(program, mine: Result, theirs: Result) -> bool:
    """gradkit's per-sample vmap refuses every write into an unmapped or captured tensor;
    torch only those whose value depends on the mapped inputs."""
    return program.transform == "vmap" and mine.error is not None and \
        "wrote in place into a tensor it captured" in mine.message and (
            theirs.error is None or "vmap: inplace arithmetic" in theirs.message or
            "doesn't match the broadcast shape" in theirs.message)  # a batched value


def _single_of(mine: np.ndarray, theirs: np.ndarray) -> bool:
    """Another precision, or torch's complex tangent of a real tensor (copy_ of a complex
    dual into it) or real one of a complex tensor (copy_ of a real dual: fwd seed 19407)."""
    pairs = {("float32", "float64"), ("complex64", "complex128"), ("float64", "float32"),
             ("complex128", "complex64")}
    return (str(mine.dtype), str(theirs.dtype)) in pairs or \
        {mine.dtype.kind, theirs.dtype.kind} == {"f", "c"}


def tangent_dtype(program, mine: Result, theirs: Result) -> bool:
    """Only derivatives' precision differs (values agree once cast): torch's forward
    transforms (and forward AD after an in-place op with a double operand) give some tangents
    the double dtype of a single-precision output."""
    if program.transform not in _FORWARD or len(mine.grads) != len(theirs.grads):
        return False
    differ = [i for i, (a, b) in enumerate(zip(mine.grads, theirs.grads))
              if a is not None and b is not None and a.dtype != b.dtype]
    if not differ or not all(_single_of(mine.grads[i], theirs.grads[i]) for i in differ):
        return False
    cast = [g if g is None or b is None else (g.real if b.dtype.kind == "f" else g).astype(
        b.dtype) + (1j * b.imag if b.dtype.kind == "c" and g.dtype.kind == "f" else 0)
            for g, b in zip(mine.grads, theirs.grads)]  # (the real part of torch's)
    return not compare(mine._replace(grads=cast), theirs)


_DOUBLE_SOURCE = ("got Float for the destination and Double for the source",
                  "got ComplexFloat for the destination and ComplexDouble for the source")


def torch_index_put_of_a_double_tangent(program, mine: Result, theirs: Result) -> bool:
    """The double tangent of ``tangent_dtype`` reaching an indexing backward (index_put into
    single-precision zeros: fwd seed 312638) or max's (a scatter, whose message names no dtype:
    single-precision leaves, fwd seed 335948) under torch's jvp of grad: torch raises,
    gradkit's tangents keep their outputs' dtype."""
    if program.transform not in _FORWARD or mine.error is not None or theirs.error is None:
        return False
    if theirs.message.startswith("scatter(): Expected self.dtype to be equal to src.dtype"):
        return all(leaf.dtype in ("float32", "complex64") for leaf in program.leaves)
    if re.match(r"index_add_\(\): self \((Complex)?Float\) and source \((Complex)?Double\)",
                theirs.message):  # (index_select's backward: fwd seed 386433)
        return True
    return "Index put requires the source and destination dtypes match" in theirs.message and \
        theirs.message.endswith(_DOUBLE_SOURCE + tuple(text + "." for text in _DOUBLE_SOURCE))


# a kernel refusing a double tangent beside its single-precision value: gelu's oneDNN one,
# and a product's (einsum's dot: "expected scalar type ComplexFloat but found ComplexDouble")
_REFUSED_DOUBLE = re.compile(r"itensor_view_from_dense expects .* tensor inputDouble|"
                             r"expected scalar type (Complex)?Float but found (Complex)?Double|"
                             r"scatter\(\): Expected self.dtype to be equal to src.dtype")


def torch_kernel_refuses_a_double_tangent(program, mine: Result, theirs: Result) -> bool:
    """torch's jvp gives a 0-d single-precision tensor plus or times a Python number a double
    tangent (``tangent_dtype``); a later step's kernel then refuses the pair: gelu's oneDNN
    kernel (fwd seed 464720) or einsum's dot (fwd seed 487394), or, under jvp of grad, the
    backward's kernels (max(dim)'s, dot's: fwd seeds 500873, 508624). gradkit's tangents keep
    their outputs' dtypes and compute."""
    return program.transform in _FORWARD and mine.error is None and \
        theirs.error is not None and theirs.error[0].startswith(("step ", "transform")) and \
        all(leaf.dtype in ("float32", "complex64") for leaf in program.leaves
            if leaf.requires_grad) and bool(_REFUSED_DOUBLE.search(theirs.message))


def torch_asserts_on_a_dual_written_into_an_integer_view(program, mine: Result,
                                                          theirs: Result) -> bool:
    """A dual written into a view (a slice) of a bool or integer tensor: torch's forward AD
    fails an internal assert ("Expected both tensor and its forward grad to be floating point
    or complex"), or under jacfwd its vmap refuses the batched tangent ("vmap: fill_ ..."),
    where one sample computes; gradkit writes the value, and the integer tensor takes no
    tangent, as torch's does for a write into the whole tensor (fwd seed 731635)."""
    if program.transform not in _FORWARD or mine.error is None and theirs.error is None or \
            mine.error is not None or not theirs.error[0].startswith("step "):
        return False
    if "new_grad_base.is_floating_point()" in theirs.message:
        return True
    step = program.steps[int(theirs.error[0].split()[1])]
    return theirs.message.startswith("vmap: ") and step.op.startswith("setitem") and \
        mine.values[step.inputs[0]].dtype.kind in "biu" and _unbatched(program).error is None


def torch_batched_tangent_of_an_empty_index(program, mine: Result, theirs: Result) -> bool:
    """jacfwd/hessian of an advanced index whose result is empty: torch's vmapped forward AD
    refuses the batched tangent ("a forward gradient that has a different size ... [0, 1]
    while the given forward gradient is of size [0, 6]"), where one sample computes; gradkit
    goes on, maybe to a later refusal of its own (fwd seed 753154)."""
    if program.transform not in ("jacfwd", "hessian") or theirs.error is None or \
            not theirs.error[0].startswith("step ") or \
            "forward gradient that has a different size" not in theirs.message or \
            "Tensor is of size [0" not in theirs.message:
        return False
    single = _unbatched(program)
    return (mine.error is None or _phase_rank(mine.error[0]) > _phase_rank(theirs.error[0])) \
        and (single.error is None or _phase_rank(single.error[0]) > _phase_rank(theirs.error[0]))


def _is_power(step) -> bool:
    return step.op in ("pow", "i_pow_") or step.params.get("op") == "**" or \
        step.params.get("fn") in ("pow", "float_power")


def torch_pow_tangent_of_a_real_operand(program, mine: Result, theirs: Result) -> bool:
    """A power with a real operand (carrying a tangent) and a complex result: torch's jvp
    keeps only the real part of that operand's term (its backward's projection)."""
    if program.transform not in _FORWARD or not mine.values or not all(
            p.startswith("grads") for p in compare(mine, theirs)):  # (torch's dtypes too)
        return False
    leaves = len(program.leaves)
    for k, step in enumerate(program.steps):
        if not _is_power(step) or leaves + k >= len(mine.values):
            continue
        # the core "pow" is (|x| + 0.5) ** (y / 2): a real base
        real = step.op == "pow" or any(mine.values[i].dtype.kind == "f" for i in step.inputs)
        if real and mine.values[leaves + k].dtype.kind == "c":
            return True
    return False


def _root(program, slot: int, views: frozenset = frozenset(), values: list = ()) -> int:
    """The slot whose tensor ``slot`` is (an in-place step's output is its first input), or,
    following the ops in ``views`` too, whose memory it views; given the slots' ``values``,
    a cast to the dtype its input has is that input too (``x.double()`` of a float64 x)."""
    leaves = len(program.leaves)
    if slot < leaves:
        return slot
    step = program.steps[slot - leaves]
    same_cast = step.op == "unary" and step.params.get("fn") in _CASTS and len(values) > slot \
        and str(values[step.inputs[0]].dtype) == _CASTS[step.params["fn"]]
    view = step.op in views and (step.op != "getitem" or _basic_key(step)) and (
        step.op != "flatten" or len(values) > step.inputs[0] and values[step.inputs[0]].ndim < 2)
    follow = OPS[step.op].inplace or OPS[step.op].same or view or same_cast
    return _root(program, step.inputs[0], views, values) if follow else slot


_CASTS = {"double": "float64", "float": "float32"}


# the fuzz ops that return a view of their first input (torch's forward AD shares its tangent)
_VIEWS = frozenset({"transpose", "unsqueeze", "squeeze", "expand", "slice", "permute",
                    "view_flat", "t", "chunk_last", "v_basic_index", "v_view", "v_squeeze_all",
                    "v_view_as", "v_expand_as", "v_view_as_real", "v_view_as_complex",
                    "getitem",  # (a getitem of a basic key: fwd seed 407977)
                    "select0", "flatten"})  # (reshape(-1) of a 0-d or 1-d tensor: 508116)


def _basic_key(step) -> bool:
    """A getitem of basic indices only (a view; advanced ones copy)."""
    return all(part[0] in ("slice", "int", "none", "ellipsis") for part in step.params["key"])


def torch_tangent_of_a_self_write(program, mine: Result, theirs: Result) -> bool:
    """``x.mul_(x)`` (``x %= x``, ``x.squeeze().mul_(x)``: fwd seed 322131, ...; ``x.mul_(
    x.flatten()[0])`` of a 0-d x: 508116) on a dual:
    torch's tangent formula reads the tangent (and value) it has already updated in place
    (x t + x (x t) for 2 x t)."""
    def root(slot: int) -> int:  # (a view or same-dtype cast: fwd seeds 372593, 357135)
        return _root(program, slot, _VIEWS, mine.values)
    return program.transform in _FORWARD and any(
        OPS[step.op].inplace and root(step.inputs[0]) in {root(i) for i in step.inputs[1:]}
        for step in program.steps) and all(p.startswith("grads") for p in compare(mine, theirs))


def _shares_its_tangent(step) -> bool:
    """A step whose tangent in torch is its input's tangent tensor itself: ``x % number``,
    ``x.fmod(number)``."""
    return step.op == "scalar_op" and step.params.get("op") == "%" and \
        not step.params.get("left") or step.op == "e_fmod_scalar"


def torch_remainder_by_a_number_shares_its_tangent(program, mine: Result,
                                                   theirs: Result) -> bool:
    """``x % number`` (``x.fmod(number)``) under torch's forward mode: the result's tangent is
    x's tangent tensor itself, so an in-place write into the result updates x's tangent too
    (fwd seed 303192: tanh_ of x % 2.0 under jacfwd), and a later write into x the result's
    (fwd seed 746326: masked_fill_ of x); gradkit's result has its own."""
    if program.transform not in _FORWARD:
        return False
    leaves = len(program.leaves)
    shared = {leaves + k for k, step in enumerate(program.steps) if _shares_its_tangent(step)}
    sources = {k: _root(program, step.inputs[0]) for k, step in enumerate(program.steps)
               if _shares_its_tangent(step)}
    return any(OPS[step.op].inplace and (_root(program, step.inputs[0]) in shared or any(
        j < k and _root(program, step.inputs[0]) == root for j, root in sources.items()))
        for k, step in enumerate(program.steps)) and all(
        p.startswith("grads") for p in compare(mine, theirs))


def torch_complex_tangent_of_a_real_copy(program, mine: Result, theirs: Result) -> bool:
    """copy_ of a dual of the other kind (complex into real: fwd seed 319174, or real into
    complex): torch's tangent of the tensor keeps the dual's kind, which what is computed from
    it carries (a stack of it) or a later op's forward formula refuses (masked_fill's
    view_as_real, gelu's complex kernel: fwd seeds 415201, 419291); gradkit's tangent has the
    tensor's kind (of a real tensor: the real part, the derivative of the value copied)."""
    if program.transform not in _FORWARD or not mine.values:
        return False
    copies = [k for k, step in enumerate(program.steps) if step.op in ("copy_", "i_copy_") and
              (mine.values[step.inputs[0]].dtype.kind == "c") !=
              (mine.values[step.inputs[1]].dtype.kind == "c")]
    if copies and mine.error is None and theirs.error is not None:
        return _phase_rank(theirs.error[0]) > (1, copies[0])
    return bool(copies) and all(p.startswith("grads") for p in compare(mine, theirs))


def torch_complex_silu_tangent(program, mine: Result, theirs: Result) -> bool:
    """torch's forward formula of silu for complex input is not the derivative (its backward
    refuses complex outputs); gradkit's tangent is."""
    return program.transform in _FORWARD and mine.values and any(
        step.op == "silu" and mine.values[step.inputs[0]].dtype.kind == "c"
        for step in program.steps) and all(p.startswith("grads") for p in compare(mine, theirs))


def vmap_torch_refuses_what_batched_tensors_cannot_do(program, mine: Result,
                                                      theirs: Result) -> bool:
    """torch's vmap refuses .item(), detach_() of a batched tensor, a write of mapped values
    into an unbatched one made inside; gradkit's per-sample vmap runs them."""
    refusal = ("vmap: ", "Can't detach views in-place")
    if _jacfwds_index_put_of_a_batched_tangent(program, mine, theirs):
        return True
    if program.transform != "vmap" or theirs.error is None or not (
            mine.error is None or _phase_rank(mine.error[0]) >= _phase_rank(theirs.error[0])):
        return False
    if theirs.message.startswith(refusal) or _batched_into_unbatched(program, theirs):
        return True
    # or a step torch runs on one sample (an index_put of a batched value: fwd seed 435274)
    single = _unbatched(program)
    return theirs.error[0].startswith("step ") and (
        single.error is None or _phase_rank(single.error[0]) > _phase_rank(theirs.error[0]))


def _jacfwds_index_put_of_a_batched_tangent(program, mine: Result, theirs: Result) -> bool:
    """torch's jacfwd vmaps the tangents: a write through advanced indices split by None puts
    the batch dim behind the indexed ones and refuses the value (fwd seed 494042, as vmap's
    456030), where one sample (torch's run without the transform) writes it; gradkit's run
    goes on, maybe to a later step's refusal (fwd seed 533225: detach_ of the dual)."""
    return program.transform in ("jacfwd", "hessian") and theirs.error is not None and (
        mine.error is None or _phase_rank(mine.error[0]) > _phase_rank(theirs.error[0])) and \
        theirs.error[0].startswith("step ") and \
        "cannot be broadcast to indexing result" in theirs.message and \
        _unbatched(program).error is None


def _batched_into_unbatched(program, theirs: Result) -> bool:
    """torch's refusal of a write of a batched value into an unbatched tensor that names the
    batch as a broadcast dim ("output with shape [2] doesn't match the broadcast shape [3, 2]":
    add_ into a reciprocal of an unmapped input, fwd seed 327785)."""
    found = re.match(r"output with shape \[(.*)\] doesn't match the broadcast shape \[(.*)\]$",
                     theirs.message)
    batch = str(2 + program.seed % 2)  # (transforms.py's batch)
    return found is not None and found[2] == ", ".join(x for x in (batch, found[1]) if x)


def _unbatched(program) -> Result:
    """torch's run of the program on one sample (no transform), whose leaves require no grad
    as the transforms' inputs (a write into a leaf is no error: fwd seed 456030)."""
    import torch
    leaves = tuple(leaf._replace(requires_grad=False) for leaf in program.leaves)
    return run(dataclasses.replace(program, transform="", leaves=leaves), torch)


def vmap_refusal_is_torchs_for_one_sample(program, mine: Result, theirs: Result) -> bool:
    """Both refuse a step under vmap: gradkit's per-sample vmap with torch's own error for one
    sample, torch's vmap with its batched kernel's (amax of empty samples: "Expected reduction
    dim 1 to have non-zero size", fwd seed 382254; cat of a 0-d sample: "Dimension out of
    range", fwd seed 432958)."""
    if program.transform != "vmap" or mine.error is None or theirs.error is None or \
            mine.error[0] != theirs.error[0]:
        return False
    single = _unbatched(program)
    return single.error is not None and single.error[0] == mine.error[0] and \
        single.message == mine.message


def _empty(program, mine: Result) -> bool:
    return any(0 in leaf.shape for leaf in program.leaves) or any(
        v.size == 0 for v in mine.values)


def torch_jacobian_of_an_empty_tensor(program, mine: Result, theirs: Result) -> bool:
    """torch's jacfwd/hessian of an empty input raise under its vmap (IndexError, a reshape
    of 0 elements, a forward formula it lacks), its jacrev of an empty output runs that
    output's backward; gradkit's blocks are empty, computed by no backward pass."""
    return program.transform in ("jacfwd", "hessian", "jacrev") and theirs.error is not None \
        and (mine.error is None or _phase_rank(mine.error[0]) >= _phase_rank(theirs.error[0])) \
        and _empty(program, mine)


def _differing(mine: Result, theirs: Result) -> list | None:
    """(gradkit's, torch's) elements of every derivative where they differ, or None when
    anything else (values, errors, shapes) differs."""
    if mine.error or theirs.error or len(mine.grads) != len(theirs.grads) or any(
            p.startswith(("values", "signed zero in values")) for p in compare(mine, theirs)):
        return None
    pairs = []
    for a, b in zip(mine.grads, theirs.grads):
        if a is None or b is None or a.shape != b.shape:
            if (a is None) != (b is None) and np.any(a if b is None else b):
                return None
            continue
        with np.errstate(invalid="ignore"):
            differ = ~np.isclose(a, b, rtol=2e-3, atol=1e-6, equal_nan=True)
        pairs.append((a[differ], b[differ]))
    return pairs


def torch_prod_backward_under_func(program, mine: Result, theirs: Result) -> bool:
    """prod's backward under torch.func: its wrapped tensors count as tensor subclasses, for
    which torch always takes prod_safe_zeros_backward (the products of the others), finite
    beside an inf where out / x (torch's plain autograd's, gradkit's) is NaN (fwd seed
    333286)."""
    if program.transform in ("", "dual", "vmap") or not any(
            step.op == "prod_dim" for step in program.steps):
        return False
    pairs = _differing(mine, theirs)
    return bool(pairs) and all(np.isnan(a).all() for a, _ in pairs)


def nan_placement_in_jacobians(program, mine: Result, theirs: Result) -> bool:
    """A derivative that is NaN (or NaN through 0 * inf) lands in the Jacobian's rows under
    forward mode and in its columns under reverse mode, and torch's jacrev spreads a NaN
    (0 * NaN) between outputs' rows (fwd seed 463187: sqrt of a negative, then square): the
    results differ only where one side is NaN."""
    pairs = _differing(mine, theirs) if program.transform in ("jacfwd", "hessian",
                                                              "jacrev") else None
    return bool(pairs) and any(a.size for a, _ in pairs) and all(
        (np.isnan(a) | np.isnan(b)).all() for a, b in pairs)


def vmap_of_a_scalar_promotes_as_a_tensor(program, mine: Result, theirs: Result) -> bool:
    """vmap over a 0-d input: each of torch's samples is a batched tensor, which type
    promotion counts as a dimensioned tensor (its batch dim), so a float64 scalar sample
    and a float32 tensor give float64; gradkit's per-sample call sees a 0-d tensor, and
    float32 (fwd seed 450971). Only dtypes (and the values computed in them) differ."""
    if program.transform != "vmap" or mine.error or theirs.error or not any(
            leaf.requires_grad and leaf.shape == () for leaf in program.leaves):
        return False
    problems = compare(mine, theirs)
    return bool(problems) and any(" dtype " in p for p in problems) and all(
        " dtype " in p or p.startswith(("values", "signed zero")) for p in problems)


def vmap_of_a_product_is_one_product(program, mine: Result, theirs: Result) -> bool:
    """Only signed zeros differ under vmap, after a matrix product: torch's batching rule
    runs a matrix times a batch of vectors as one matrix product (gemm keeps a single
    product's -0.0), gradkit's per-sample call a matrix-vector product each (gemv adds it to
    +0.0), as torch's own without vmap (fwd seed 499775; x @ x.mT, fwd seed 535880)."""
    problems = compare(mine, theirs)
    return program.transform == "vmap" and bool(problems) and all(
        p.startswith("signed zero") for p in problems) and any(
        step.op in ("matvec", "matmul", "b_mv", "gram") for step in program.steps)


def inner_detach_under_jvp(program, mine: Result, theirs: Result) -> bool:
    """A detach_() inside grad nested in jvp: torch detaches from grad's level only, its jvp
    still pushes the tangent through (into an op without a forward formula, which raises:
    floor_divide_, fwd seed 337639); gradkit's tensors carry one tangent, which detach_()
    drops with the graph."""
    refused = mine.error is None and theirs.error is not None and \
        theirs.message.startswith("Trying to use forward AD with")
    return program.transform in ("jvp_of_grad", "hessian") and any(
        step.op == "i_detach_" for step in program.steps) and (
            refused or _differing(mine, theirs) is not None)


def input_captured_too(program, mine: Result, theirs: Result) -> bool:
    """The function captures the very tensor it is given: a write through the input (made
    writable by detach_()) changes the captured tensor's version, which gradkit's check after
    the call takes for a write into it."""
    return program.transform not in ("", "dual", "vmap") and theirs.error is None and \
        mine.error is not None and _CAPTURED_WRITE in mine.message and any(
            step.op == "i_detach_" and step.inputs[0] < len(program.leaves) and
            program.leaves[step.inputs[0]].requires_grad for step in program.steps)


# what in-place ops refuse outside vmap and torch's vmap runs: a sample broadcast by its
# operand, an operand overlapping the sample written (x.squeeze(0).add_(x): fwd seed 18504)
_REFUSED_OUTSIDE_VMAP = ("doesn't match the broadcast shape",
                         "refer to a single memory location")


def vmap_in_place_broadcast(program, mine: Result, theirs: Result) -> bool:
    """torch's vmap writes x.div_(w) of a 0-d sample x and an unbatched w of shape (1,), and
    x.squeeze(0).add_(x) of a sample x of shape (1, 3), which the op refuses outside vmap
    (and gradkit's per-sample vmap too)."""
    return program.transform == "vmap" and theirs.error is None and mine.error is not None \
        and any(text in mine.message for text in _REFUSED_OUTSIDE_VMAP)


def _leaf_sources(program, slot: int) -> set:
    """The leaves ``slot``'s value is computed from (a view_as / expand_as takes only its
    shape from the second tensor: fwd seed 339583)."""
    leaves = len(program.leaves)
    if slot < leaves:
        return {slot}
    step = program.steps[slot - leaves]
    inputs = step.inputs[:1] if step.op in ("v_view_as", "v_expand_as") else step.inputs
    return set().union(*(_leaf_sources(program, i) for i in inputs))


def write_into_a_view_of_a_captured_tensor(program, mine: Result, theirs: Result) -> bool:
    """A write into a view (made inside the function) of a captured tensor: torch runs it,
    even of a value made from the inputs (fwd seed 312489: ``w[...].add_(x)``), gradkit sees
    the captured tensor's version change."""
    if program.transform in ("", "dual", "vmap") or theirs.error is not None or \
            mine.error is None or _CAPTURED_WRITE not in mine.message:
        return False
    leaves = len(program.leaves)
    return any(OPS[step.op].inplace and step.inputs[0] >= leaves and not any(
        program.leaves[i].requires_grad for i in _leaf_sources(program, step.inputs[0]))
        for step in program.steps)
