"""Higher-level derivatives of a function: vjp, jvp, jacobian, hessian, hvp, vhp.

Same signatures, output structure and strict-mode errors as
``torch.autograd.functional``: a Tensor argument gives Tensor results, a tuple
gives tuples (tuple of tuples for jacobian of tuple -> tuple).

>>> from gradkit.autograd.functional import jacobian
>>> jacobian(lambda x: x ** 2, gradkit.tensor([1.0, 2.0]))
tensor([[2., 0.],
        [0., 4.]])
"""
from __future__ import annotations

from gradkit._tensor import Tensor
from gradkit.autograd import forward_ad
from gradkit.autograd.api import grad as _grad
from gradkit.autograd.functional_strict import (
    check_jacobian_entry as _check_jacobian_entry, check_requires_grad as _check_requires_grad,
    fill_in_zeros as _fill_in_zeros)
from gradkit.autograd.grad_mode import enable_grad, is_grad_enabled, set_grad_enabled
from gradkit.autograd.transform_errors import REQUIRES_GRAD
from gradkit.autograd.transform_errors import refuse_in_transform as _refuse_in_transform
from gradkit.creation import eye, zeros, zeros_like
from gradkit.ops.joining import stack
from gradkit.ops.shape import reshape

_STRATEGIES = ("forward-mode", "reverse-mode")


def _zeros_like(t, requires_grad: bool = False):
    return zeros_like(t, requires_grad=requires_grad)


# -- argument and result plumbing -------------------------------------------------------

def _as_tuple(value, what: str, fn_name: str) -> tuple[bool, tuple]:
    if isinstance(value, Tensor):
        return False, (value,)
    if isinstance(value, (tuple, list)) and all(isinstance(v, Tensor) for v in value):
        return True, tuple(value)
    of_fn = "of the user-provided function " if what == "outputs" else ""
    raise TypeError(f"The {what} {of_fn}given to {fn_name} must be either a Tensor or a tuple of "
                    f"Tensors but the given {what} {of_fn}has type {type(value)}.")


def _untuple(values, is_tuple):
    """Undo _as_tuple; ``is_tuple`` may be a pair (outer, inner) for nested results."""
    if isinstance(is_tuple, tuple):
        outer, inner = is_tuple
        if not outer:
            return _untuple(values[0], inner)
        return tuple(_untuple(v, inner) for v in values)
    return tuple(values) if is_tuple else values[0]


def _prepare(inputs: tuple, create_graph: bool, need_graph: bool) -> tuple:
    """Inputs the function will be differentiated at (views keep the caller's graph)."""
    _refuse_in_transform(REQUIRES_GRAD)  # torch's requires_grad_() inside a transform
    return tuple(t.view_as(t) if create_graph and t.requires_grad
                 else t.detach()._set_requires_grad(need_graph) for t in inputs)


def _finish(values: tuple, create_graph: bool) -> tuple:
    if create_graph:
        return values
    return tuple(v.detach() if v is not None else None for v in values)


def _validate_v(v: tuple, other: tuple, other_is_tuple: bool) -> None:
    if len(v) != len(other):
        if other_is_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got "
                               f"{len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (vi, oi) in enumerate(zip(v, other, strict=False)):
        if vi.shape != oi.shape:
            prefix = f"Entry {i} in v" if other_is_tuple else "v"
            raise RuntimeError(f"{prefix} has invalid size: should be {oi.shape} but got "
                               f"{vi.shape}.")


def _autograd_grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None,
                   is_grads_batched=False) -> tuple:
    """autograd.grad over the outputs that do require grad; None for unreachable inputs."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs, strict=False)
             if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return _grad([o for o, _ in pairs], inputs, [g for _, g in pairs], allow_unused=True,
                 create_graph=create_graph, retain_graph=retain_graph,
                 is_grads_batched=is_grads_batched)


def _single_element_output(outputs: tuple, fn_name: str) -> None:
    if len(outputs) != 1:
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].numel() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should "
                           "contain a single element")


# -- vjp / jvp -----------------------------------------------------------------------

def vjp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(*inputs), v^T J)``: the vector-Jacobian product at ``inputs``.

    >>> vjp(lambda x: x * 2, gradkit.ones(2), gradkit.tensor([1.0, 3.0]))[1]
    tensor([2., 6.])
    """
    with enable_grad():
        in_tuple, inputs = _prepared_inputs(inputs, create_graph, "vjp")
        out_tuple, outputs = _call(func, inputs, strict, "vjp")
        v = _checked_v(v, outputs, out_tuple, create_graph, "vjp",
                       "the user-provided function returns")
        grads = _autograd_grad(outputs, inputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grads, inputs, strict, "back", create_graph)
    return _output_and_product(outputs, out_tuple, result, in_tuple, create_graph)


def _prepared_inputs(inputs, create_graph: bool, fn_name: str) -> tuple[bool, tuple]:
    """Whether ``inputs`` was a tuple, and its tensors ready to differentiate func at."""
    in_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
    return in_tuple, _prepare(inputs, create_graph, need_graph=True)


def _call(func, inputs: tuple, strict: bool, fn_name: str) -> tuple[bool, tuple]:
    """Whether func returned a tuple, and its outputs (under ``strict``, each needs a graph)."""
    out_tuple, outputs = _as_tuple(func(*inputs), "outputs", fn_name)
    _check_requires_grad(outputs, "outputs", strict)
    return out_tuple, outputs


def _output_and_product(outputs, out_tuple, product, product_tuple, create_graph):
    """vjp/jvp/vhp/hvp's ``(func(*inputs), product)``, each a tuple only if given as one."""
    return (_untuple(_finish(outputs, create_graph), out_tuple),
            _untuple(_finish(product, create_graph), product_tuple))


def _checked_v(v, like, like_tuple, create_graph, fn_name, which):
    """``v`` as a tuple matching ``like`` (None only for one single-element tensor)."""
    if v is not None:
        _, v = _as_tuple(v, "v", fn_name)
        v = _prepare(v, create_graph, need_graph=False)
        _validate_v(v, like, like_tuple)
    elif len(like) != 1 or like[0].numel() != 1:
        raise RuntimeError(f"The vector v can only be None if {which} a single Tensor with a "
                           "single element.")
    return v


def jvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(*inputs), J v)``: the Jacobian-vector product (by the double-vjp trick).

    >>> jvp(lambda x: x * 2, gradkit.ones(2), gradkit.tensor([1.0, 3.0]))[1]
    tensor([2., 6.])
    """
    with enable_grad():
        in_tuple, inputs = _prepared_inputs(inputs, create_graph, "jvp")
        v = _checked_v(v, inputs, in_tuple, create_graph, "jvp",
                       "the input to the user-provided function is")
        out_tuple, outputs = _call(func, inputs, strict, "jvp")
        # u -> J^T u is linear; differentiating <J^T u, v> with respect to u gives J v
        probes = tuple(_zeros_like(o, requires_grad=True) for o in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, probes, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict)
        grads = _autograd_grad(grad_inputs, probes, v, create_graph=create_graph)
        result = _fill_in_zeros(grads, outputs, strict, "back_trick", create_graph)
    return _output_and_product(outputs, out_tuple, result, out_tuple, create_graph)


# -- jacobian / hessian --------------------------------------------------------------------

def jacobian(func, inputs, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``: entry [i][j] has shape out_i.shape + in_j.shape.

    >>> jacobian(lambda x: x.sum() * x, gradkit.tensor([1.0, 2.0]))
    tensor([[4., 1.],
            [2., 5.]])
    """
    if strategy not in _STRATEGIES:
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: '
                         'If your function has more outputs than inputs, "forward-mode" tends to '
                         'be more performant. Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                "torch.autograd.functional.jacobian: `create_graph=True` and `strategy=\"forward-"
                "mode\"` are not supported together (yet). Please either set `create_graph=False` "
                "or `strategy=\"reverse-mode\"`.")
        if not vectorize:
            raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse "
                                      "Hessian isonly implemented for `vectorize=True`.")
    if strict and vectorize:
        raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and "
                           "`vectorized=True` are not supported together. Please either set "
                           "`strict=False` or `vectorize=False`.")
    in_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    if strategy == "forward-mode":
        out_tuple, rows = _forward_jacobian(func, inputs)
    else:
        out_tuple, rows = _reverse_jacobian(func, inputs, create_graph, strict, vectorize)
    return _untuple(rows, (out_tuple, in_tuple))


def _reverse_jacobian(func, inputs, create_graph, strict, vectorize):
    """One vjp per output element (batched through is_grads_batched when vectorize)."""
    with enable_grad():
        inputs = _prepare(inputs, create_graph, need_graph=True)
        out_tuple, outputs = _call(func, inputs, strict, "jacobian")
        rows = []
        for i, out in enumerate(outputs):
            n = out.numel()
            batched = vectorize and n and out.requires_grad
            if batched:
                seeds = _eye(n, out).reshape(n, *out.shape)
                # each gradient is already the stacked block (n, *input shape), or None
                blocks = _autograd_grad((out,), inputs, (seeds,), create_graph=create_graph,
                                        retain_graph=True, is_grads_batched=True)
            else:
                columns = [[] for _ in inputs]
                flat = reshape(out, (-1,))
                for k in range(n):
                    grads = _autograd_grad((flat[k],), inputs, retain_graph=True,
                                           create_graph=create_graph)
                    for j, g in enumerate(grads):
                        _check_jacobian_entry(g, i, j, strict, create_graph)
                        columns[j].append(g)
            row = []
            for j, inp in enumerate(inputs):
                if batched:
                    block = blocks[j] if blocks[j] is not None else stack([_zeros_like(inp)] * n)
                else:
                    entries = [g if g is not None else _zeros_like(inp) for g in columns[j]]
                    block = stack(entries) if entries else _zeros_like(inp).reshape(0, *inp.shape)
                row.append(reshape(block, tuple(out.shape) + tuple(inp.shape)))
            rows.append(tuple(_finish(tuple(row), create_graph)))
    return out_tuple, tuple(rows)


def _eye(n: int, like):
    return eye(n, dtype=like.dtype, device=like.device)


def _forward_jacobian(func, inputs):
    """One forward-mode pass per input element: each gives a column of every output."""
    columns = None
    out_tuple = False
    shapes = None
    for j, inp in enumerate(inputs):
        basis = _eye(inp.numel(), inp) if inp.numel() else None
        for k in range(inp.numel()):
            with forward_ad.dual_level():
                duals = [forward_ad.make_dual(x.detach(), reshape(basis[k], tuple(x.shape)))
                         if m == j else x.detach() for m, x in enumerate(inputs)]
                out_tuple, outputs = _as_tuple(func(*duals), "outputs", "jacobian")
                if columns is None:
                    columns = [[[] for _ in inputs] for _ in outputs]
                    shapes = [tuple(o.shape) for o in outputs]
                for i, out in enumerate(outputs):
                    tangent = forward_ad.unpack_dual(out).tangent
                    columns[i][j].append(tangent if tangent is not None else
                                         _zeros_like(out.detach()))
    if columns is None:  # no input has elements: evaluate once for the output shapes
        out_tuple, outputs = _as_tuple(func(*inputs), "outputs", "jacobian")
        columns = [[[] for _ in inputs] for _ in outputs]
        shapes = [tuple(o.shape) for o in outputs]
    rows = []
    for i, shape in enumerate(shapes):
        row = []
        for j, inp in enumerate(inputs):
            if not columns[i][j]:
                row.append(zeros(shape + tuple(inp.shape), dtype=inp.dtype))
                continue
            block = stack(columns[i][j], dim=-1)  # out.shape + (in.numel,)
            row.append(reshape(block, shape + tuple(inp.shape)).detach())
        rows.append(tuple(row))
    return out_tuple, tuple(rows)


def hessian(func, inputs, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode"):
    """The Hessian of a scalar ``func``: entry [i][j] has shape in_i.shape + in_j.shape.

    >>> hessian(lambda x: (x ** 3).sum(), gradkit.tensor([1.0, 2.0]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    in_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in _STRATEGIES:
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def scalar_func(*inp):
        out_tuple, out = _call(func, inp, strict, "hessian")
        _single_element_output(() if out_tuple else out, "hessian")
        return out[0].squeeze()  # as torch: an output of shape (1, 1, 1) is a scalar

    def jacobian_func(*inp):
        if outer_jacobian_strategy == "forward-mode":  # forward-over-reverse
            inp = tuple(t._set_requires_grad(True) for t in inp)
        jac = jacobian(scalar_func, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        return jac

    result = jacobian(jacobian_func, inputs, create_graph=create_graph, strict=strict,
                      vectorize=vectorize, strategy=outer_jacobian_strategy)
    return _untuple(result, (in_tuple, in_tuple))


def vhp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(*inputs), v^T H)`` for a scalar ``func`` (grad of <grad f, v>).

    >>> vhp(lambda x: (x ** 3).sum(), gradkit.tensor([1.0, 2.0]), gradkit.ones(2))[1]
    tensor([ 6., 12.])
    """
    return _hessian_product(func, inputs, v, create_graph, strict, "vhp")


def hvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(*inputs), H v)`` for a scalar ``func`` (by the double-vjp trick).

    >>> hvp(lambda x: (x ** 3).sum(), gradkit.tensor([1.0, 2.0]), gradkit.ones(2))[1]
    tensor([ 6., 12.])
    """
    return _hessian_product(func, inputs, v, create_graph, strict, "hvp")


def _hessian_product(func, inputs, v, create_graph, strict, fn_name):
    """vhp or hvp (``fn_name``): both differentiate func's gradient (taken with a graph)
    once more, vhp directly, hvp through the double-vjp trick as torch does."""
    with enable_grad():
        in_tuple, inputs = _prepared_inputs(inputs, create_graph, fn_name)
        v = _checked_v(v, inputs, in_tuple, create_graph, fn_name,
                       "the input to the user-provided function is")
        out_tuple, outputs = _call(func, inputs, strict, fn_name)
        _single_element_output(outputs, fn_name)
        jac = _autograd_grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        if fn_name == "vhp":
            grads = _autograd_grad(jac, inputs, v, create_graph=create_graph)
            result = _fill_in_zeros(grads, inputs, strict, "double_back", create_graph)
        else:
            probes = tuple(_zeros_like(t, requires_grad=True) for t in inputs)
            double_back = _autograd_grad(jac, inputs, probes, create_graph=True)
            _check_requires_grad(jac, "hessian", strict)
            with set_grad_enabled(True if create_graph else is_grad_enabled()):
                grads = _autograd_grad(double_back, probes, v, create_graph=create_graph)
                result = _fill_in_zeros(grads, inputs, strict, "double_back_trick",
                                        create_graph)
    return _output_and_product(outputs, out_tuple, result, in_tuple, create_graph)
