"""The one mechanism every op goes through: declaration and dispatch.

An op is declared once, next to its derivative rules::

    @op(save=("x", "y"), broadcast=True)
    def mul(xp, x, y):                      # forward on raw arrays of module xp
        return x * y

    mul.defvjp(lambda g, x, y: g * conj(y),  # one rule per input, like derivatives.yaml
               lambda g, x, y: g * conj(x))
    mul.defjvp(lambda t, x, y: t * y,
               lambda t, x, y: x * t)

Rules receive the gradient, then the values named in ``save`` (input names,
``"result"``, or ``"x.shape"``-style metadata), then the op's parameters as
keywords. Rules are written with gradkit ops, which accept raw arrays as well
as Tensors: a plain backward runs them on arrays (no graph, no wrapping), and
``create_graph=True`` runs the very same rules on Tensors, which records them —
so every op is differentiable to any order without extra code.
"""
from __future__ import annotations

import dis
import inspect
from sys import modules as _modules
from time import perf_counter_ns
import numpy as np

from gradkit._tensor import Tensor
from gradkit.autograd import observers
from gradkit.autograd.batching import state as batch_state
from gradkit.autograd.grad_mode import state as grad_state
from gradkit.autograd.graph import FREED_MESSAGE, Node, SavedTensor, accumulate_node, node_type
from gradkit.autograd.saved_names import declare_saved_names
from gradkit.ops.keywords import SPECIAL_KEYWORDS, torch_keywords
from gradkit.ops.methods import register as register_method
from gradkit.ops.promotion import NumpyOperand
from gradkit.backend import get_array_module
from gradkit.ops.views import mark_view

_forward_ad = None  # the forward_ad module while a dual level is open (set by forward_ad)


class _Seam:
    """The ops the mechanism itself uses (gradient casts and sums, derived rules): declared
    with ``op`` in the files above this one, so ``gradkit/ops/__init__.py`` binds them once they
    are loaded. The one place where a lower layer reaches up (also used by the backward rules
    of shape.py and indexing.py, which reduction.py imports)."""

    conj = sum = real = astype = None


seam = _Seam()

_ARRAY_TYPES = (np.ndarray, np.generic)


def _to_node_name(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.split("_")) + "Backward0"


class Op:
    """A differentiable operation; calling it dispatches on Tensors or raw arrays."""

    checks_grads = True  # backward() returns gradients of its inputs' shapes and dtypes
    view_inverse = None  # a view op whose output is computed (conj): the op that maps back

    def __init__(self, forward, name=None, save=(), broadcast=False, linear=False,
                 view=False, outputs=1, differentiable_outputs=None, node_name=None,
                 elementwise=False, batchable=False, method=False, inplace=False):
        self.forward = forward
        self.name = name or forward.__name__.strip("_")
        self.node_name = node_name or _to_node_name(self.name)
        self.node_name_rule = None  # or fn(params, input arrays) -> name of torch's overload
        self.profiler_name = "gradkit::" + self.name
        self.broadcast = broadcast   # reduce each input's gradient back to its shape
        self.linear = linear         # jvp is the op applied to the tangents
        self.view = view             # output shares memory (and version) with input 0
        self.elementwise = elementwise
        self.batchable = batchable  # vjp rules broadcast over a leading batch dim (batching.py)
        self.outputs = outputs       # 1, a fixed count, or -1 for "as many as forward returns"
        self.differentiable_outputs = differentiable_outputs  # indices; None = all
        sig = inspect.signature(forward)
        params = list(sig.parameters.values())[1:]  # drop xp
        self.variadic = any(p.kind is p.VAR_POSITIONAL for p in params)
        # positional parameters without a default are the op's inputs (arrays or scalars);
        # keyword-only ones and those with defaults are static parameters
        self.input_names = [p.name for p in params
                            if p.default is p.empty and p.kind is p.POSITIONAL_OR_KEYWORD]
        self.param_names = [p.name for p in params
                            if p.default is not p.empty or p.kind is p.KEYWORD_ONLY]
        self.defaults = {p.name: p.default for p in params if p.default is not p.empty}
        self.n_inputs = -1 if self.variadic else len(self.input_names)  # -1: any number
        self.save_spec = tuple(self._parse_save(s) for s in
                               ((save,) if isinstance(save, str) else save))
        declare_saved_names(self)
        # (is_result, index) per entry when only whole inputs/results are saved: the fast path
        self.plain_save = tuple((kind == "result", index) for kind, index, _ in self.save_spec) \
            if all(kind != "inputs" and not attr for kind, _, attr in self.save_spec) else None
        self.differentiable = False  # until a vjp rule is declared
        self.saves_read = None  # per input: the save entries its vjp rule reads (None: all)
        self._save_masks = {}   # inputs-needing-grad bitmask -> which save entries to keep
        self.vjps = None      # tuple: one rule per input (None = not differentiable)
        self.vjp_all = None   # or one rule returning all input gradients
        self.jvps = None
        self.jvp_all = None
        self.__doc__ = forward.__doc__
        self.__name__ = self.name
        # method=True (or a name, or names): also x.name(...); inplace=True: also x.name_(...)
        register_method(self, self.name, method, inplace)

    @property
    def node_name(self) -> str:
        """The name of this op's backward nodes (torch's, e.g. ``MulBackward0``)."""
        return self.node_class.__name__

    @node_name.setter
    def node_name(self, name: str) -> None:
        self.node_class = node_type(name)

    def _parse_save(self, entry: str):
        name, _, attr = entry.partition(".")
        if name == "result":
            return ("result", 0, attr)
        if name.startswith("result") and name[6:].isdigit():
            return ("result", int(name[6:]), attr)
        if name in self.input_names:
            return ("input", self.input_names.index(name), attr)
        if self.variadic and name == "inputs":
            return ("inputs", 0, attr)
        raise ValueError(f"op {self.name}: cannot save {entry!r}; inputs are {self.input_names}")

    # -- declaring rules -------------------------------------------------------------
    def defvjp(self, *rules):
        """One vjp rule per input: ``rule(g, *saved, **params) -> grad of that input``.

        A node keeps only the saved values that the rules of its inputs needing a gradient
        read (found from the rules' code), as torch saves ``other`` for ``self * other``
        only when ``self`` needs a gradient.
        """
        self.vjps = rules
        self.differentiable = True
        n_saved = len(self.save_spec)
        self.saves_read = tuple(None if rule is None else _entries_read(rule, n_saved)
                                for rule in rules)
        self._save_masks = {}
        return self

    def defvjp_all(self, rule):
        """One rule for all inputs: ``rule(g, *saved, **params) -> tuple of grads``."""
        self.vjp_all = rule
        self.differentiable = True
        self.saves_read = None  # one rule for every input: it gets everything
        self._save_masks = {}
        return rule

    def save_mask(self, needing_grad: int) -> tuple | None:
        """Which save entries to keep when the inputs in bitmask ``needing_grad`` need grads."""
        mask = self._save_masks.get(needing_grad)
        if mask is None:
            reads = self.saves_read
            if reads is None or any(reads[i] is None for i in range(len(reads))
                                    if needing_grad >> i & 1):
                mask = ()  # keep everything
            else:
                kept = set()
                for i, entries in enumerate(reads):
                    if needing_grad >> i & 1:
                        kept |= entries
                mask = tuple(k in kept for k in range(len(self.save_spec)))
                if all(mask):
                    mask = ()
            self._save_masks[needing_grad] = mask
        return mask

    def defderivative(self, derivative):
        """Elementwise ops: from f'(saved) derive vjp ``g * conj(f')`` and jvp ``t * f'``."""
        def vjp(g, *saved, **params):
            return g * seam.conj(derivative(*saved, **params))

        def jvp(t, *saved, **params):
            return t * derivative(*saved, **params)
        vjp.__qualname__ = f"{derivative.__qualname__}.vjp"
        jvp.__qualname__ = f"{derivative.__qualname__}.jvp"
        self.defvjp(vjp)
        self.batchable = True  # g * f'(x) broadcasts over a leading batch dim
        self.defjvp(jvp)
        return derivative

    def defjvp(self, *rules):
        """One jvp rule per input: ``rule(t, *saved, **params) -> its tangent contribution``."""
        self.jvps = rules
        return self

    def defjvp_all(self, rule):
        """``rule(tangents, *saved, **params)``; missing tangents are None."""
        self.jvp_all = rule
        return rule

    # -- calling ----------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        n = self.n_inputs
        if n >= 0 and len(args) > n:  # extra positionals are parameters, in declaration order
            kwargs.update(zip(self.param_names, args[n:]))
            args = args[:n]
        if kwargs and not SPECIAL_KEYWORDS.isdisjoint(kwargs):  # axis=, keepdims=, dtype=
            kwargs = torch_keywords(self.name, self.param_names, kwargs)
        return dispatch(self, args, kwargs)

    def __repr__(self) -> str:
        return f"<gradkit op {self.name}>"

    # -- backward -------------------------------------------------------------------
    def backward(self, node: Node, grads: tuple, create_graph: bool) -> tuple:
        """Input gradients of ``node`` from its output gradients (None = zero)."""
        saved = node.saved
        if saved is None:
            raise RuntimeError(FREED_MESSAGE)
        values = []  # a loop, not a comprehension: no function frame for one or two values
        for s in saved:
            values.append(s.unpack(node, create_graph) if type(s) is SavedTensor else
                          _unpack_all(s, node, create_graph) if type(s) is _SavedInputs else s)
        if self.outputs == 1:
            g = grads[0]
            if g is None:
                return (None,) * len(node._next)
        else:
            diff = self.differentiable_outputs
            every = range(len(node._extras.output_meta))
            g = _materialize(grads, node, every if diff is None else diff, create_graph)
            if diff is not None and len(diff) == 1:
                g = g[0]
        params = node.params
        edges = node._next
        if self.vjp_all is not None:
            result = list(self.vjp_all(g, *values, **params))
        else:
            rules = self.vjps
            result = [None] * len(edges)
            for i, edge in enumerate(edges):
                if edge is not None:
                    result[i] = rules[i](g, *values, **params)
        # each gradient takes its input's shape (unbroadcast) and dtype, as the engine expects
        meta = node.input_meta
        for i, r in enumerate(result):
            if r is None or edges[i] is None:
                continue
            shape, dtype = meta[i]
            data = r if type(r) is np.ndarray else getattr(r, "_data", r)
            if data.shape == shape and data.dtype is dtype:  # the common case: nothing to fix
                continue
            if data.shape != shape:
                if not self.broadcast and not batch_state.size:
                    raise RuntimeError(
                        f"Function {node.name()} returned an invalid gradient at index {i} - got "
                        f"{list(data.shape)} but expected shape compatible with {list(shape)}")
                r = sum_to_shape(r, shape)
                data = getattr(r, "_data", r)
            if data.dtype != dtype:
                r = cast_grad(r, dtype)
            result[i] = r
        return result


def _entries_read(rule, n_saved: int) -> frozenset | None:
    """Indices of the saved values (the parameters after ``g``) that ``rule``'s code reads.

    None when that cannot be told (``*args``, a non-function): then everything is kept.
    Parameters used by nested functions or comprehensions count as read.
    """
    code = getattr(rule, "__code__", None)
    if code is None or code.co_flags & inspect.CO_VARARGS or code.co_argcount < 1 + n_saved:
        return None
    names = code.co_varnames[1:1 + n_saved]
    read = set(code.co_cellvars)
    for instruction in dis.get_instructions(code):
        if instruction.opname.startswith("LOAD_FAST") or instruction.opname in (
                "LOAD_DEREF", "LOAD_CLOSURE"):
            value = instruction.argval
            read.update(value if isinstance(value, tuple) else (value,))
    return frozenset(k for k, name in enumerate(names) if name in read)


def _materialize(grads, node, differentiable, create_graph):
    """Zeros for the outputs that received no gradient (multi-output ops)."""
    out = []
    for i in differentiable:
        g = grads[i] if i < len(grads) else None  # engine buffers stop at the last slot fed
        if g is None:
            shape, dtype, xp = node._extras.output_meta[i]
            g = xp.zeros(shape, dtype)
            if create_graph:
                g = Tensor._make(g)
        out.append(g)
    return tuple(out)


def op(name=None, **options):
    """Decorator form of :class:`Op`: ``@op(save=("x",))`` over the array forward."""
    if callable(name):
        return Op(name)

    def declare(forward):
        return Op(forward, name=name, **options)
    return declare


# -- dispatch (the hot path) ------------------------------------------------------------

def dispatch(op: Op, args: tuple, params: dict):
    """Run ``op`` on ``args``: Tensors give a Tensor (and a node); raw arrays an array."""
    datas = []
    tensors = False
    needs_grad = False
    others = False  # arguments besides tensors and Python numbers (NumPy values, lists, ...)
    for a in args:
        if type(a) is Tensor or isinstance(a, Tensor):
            datas.append(a._data)
            tensors = True
            if a._requires_grad:
                needs_grad = True
        else:
            datas.append(a)
            if type(a) not in _PLAIN_ARGUMENTS:
                others = True
    if others and tensors:
        args, datas = _numpy_operands(args, datas)
    if not tensors:  # raw arrays: a derivative rule running in a plain backward
        xp = _xp_of(datas)
        try:
            return op.forward(xp, *datas, **params) if xp is np else \
                _forward_on_device(op, xp, datas, params)
        except (AttributeError, TypeError):
            _check_argument_types(op, args)
            raise
    watchers = observers.op_watchers
    if not watchers:
        return _apply(op, args, datas, params, needs_grad)
    if len(watchers) > 1:
        return _dispatch_observed(watchers, op, args, datas, params, needs_grad)
    # one observer (a profiler or anomaly mode): _dispatch_observed's work, inline
    observer, name = watchers[0], op.profiler_name
    token = observer.op_enter(name, args) if observers.op_entering else perf_counter_ns()
    try:
        result = _apply(op, args, datas, params, needs_grad)
    except BaseException:
        observer.op_exit(token, name, args, None, None)
        raise
    observer.op_exit(token, name, args, result,
                     result.grad_fn if type(result) is Tensor else _node_of(result))
    return result


_PLAIN_ARGUMENTS = frozenset({int, float, bool, complex, type(None)})


def _numpy_operands(args, datas):
    """NumPy values given with tensors, read as torch reads them: a 0-d array ranks as a
    dimensioned operand in promotion (NumPy computes it in torch), a NumPy scalar is a
    Python number. (Derivative rules on raw arrays keep NumPy scalars as 0-d values.)"""
    read = [a if d is not a else
            a.view(NumpyOperand) if type(a) is np.ndarray and not a.ndim else
            a.item() if isinstance(a, np.generic) else a
            for a, d in zip(args, datas)]
    return tuple(read), [d if d is not a else r for a, d, r in zip(args, datas, read)]


def _node_of(result):
    """The node that made an op's outputs (a tuple of Tensors, possibly empty), or None."""
    return result[0].grad_fn if result else None


def _apply(op, args, datas, params, needs_grad):
    """The op proper: forward on arrays, then the output tensors (and node when recording)."""
    xp = _xp_of(datas)
    try:
        out = (op.forward(xp, *datas, **params) if xp is np
               else _forward_on_device(op, xp, datas, params))
    except ValueError as e:  # NumPy's broadcast error, in torch's words and type
        if op.broadcast and "could not be broadcast" in str(e):
            raise RuntimeError(_broadcast_message(datas)) from None
        raise
    except TypeError:
        _check_argument_types(op, args)
        raise
    if needs_grad and op.differentiable and grad_state.grad_enabled \
            and not grad_state.inference and (
            out.dtype.kind in "fcV" if type(out) is np.ndarray else _floating(out)):
        result = _record(op, args, datas, params, out, xp)
    elif op.outputs == 1:
        result = Tensor._make(out if type(out) is np.ndarray else _as_array(xp, out))
    else:
        result = tuple(Tensor._make(_as_array(xp, o)) for o in out)
    if op.view:
        mark_view(op, args[0], result, params)
    if _forward_ad is not None and _forward_ad.has_tangents(args):
        _forward_ad.propagate(op, args, params, result)
    return result


def _check_argument_types(op, args) -> None:
    """torch's TypeError for an argument that is neither a tensor, an array nor a number."""
    for i, a in enumerate(args):
        if isinstance(a, (str, bytes, dict, set)) or callable(a):
            name = "input" if i == 0 else "other" if i == 1 else op.input_names[i]
            raise TypeError(f"{op.name}(): argument '{name}' (position {i + 1}) must be Tensor, "
                            f"not {type(a).__name__}")


def _broadcast_message(datas) -> str:
    shapes = [tuple(d.shape) for d in datas if hasattr(d, "shape")]
    a, b = shapes[0], shapes[1] if len(shapes) > 1 else ()
    ndim = max(len(a), len(b))
    for dim in range(ndim - 1, -1, -1):
        i, j = dim - ndim + len(a), dim - ndim + len(b)
        n, m = (a[i] if i >= 0 else 1), (b[j] if j >= 0 else 1)
        if n != m and n != 1 and m != 1:
            return (f"The size of tensor a ({n}) must match the size of tensor b ({m}) at "
                    f"non-singleton dimension {dim}")
    return f"shapes {list(a)} and {list(b)} cannot be broadcast together"


def _dispatch_observed(watchers, op, args, datas, params, needs_grad):
    """``_apply`` between the op_enter and op_exit of several observers."""
    def run():
        result = _apply(op, args, datas, params, needs_grad)
        return result, result.grad_fn if type(result) is Tensor else _node_of(result)
    return observers.observe_op(watchers, op.profiler_name, args, run)


def _floating(out) -> bool:
    """Only floating/complex results carry gradients (torch: integer outputs never do)."""
    first = out[0] if type(out) is tuple else out
    kind = getattr(getattr(first, "dtype", None), "kind", "f")
    return kind in "fcV"


def _xp_of(datas):
    for d in datas:
        if isinstance(d, _ARRAY_TYPES):
            if "cupy" in _modules and _maybe_gpu(datas):  # GPU arrays may exist: check
                _check_same_device(datas)
            return np
        if hasattr(d, "__cuda_array_interface__"):
            _check_same_device(datas)
            return get_array_module(d)
        if isinstance(d, (list, tuple)) and d:
            return _xp_of(d)
    return np


def _forward_on_device(op, xp, datas, params):
    """GPU forwards run with their inputs' device current: CuPy allocates on the current one."""
    with _first_gpu_array(datas).device:
        return op.forward(xp, *datas, **params)


def _first_gpu_array(datas):
    for d in datas:
        if hasattr(d, "__cuda_array_interface__"):
            return d
        if isinstance(d, (list, tuple)):
            found = _first_gpu_array(d)
            if found is not None:
                return found
    return None


def _maybe_gpu(datas) -> bool:
    """Whether anything besides NumPy arrays and scalars is among the inputs (cheap test)."""
    for d in datas:
        if type(d) not in _HOST_TYPES and not isinstance(d, np.generic):
            return True
    return False


_HOST_TYPES = frozenset({np.ndarray, int, float, complex, bool, str, type(None)})


def _check_same_device(datas) -> None:
    """torch's error when one op meets arrays of two devices (NumPy scalars have none)."""
    seen = _device_indices(datas, set())
    if len(seen) > 1:
        a, b = (f"cuda:{i}" if i >= 0 else "cpu"
                for i in sorted(seen, key=lambda i: (i < 0, i))[:2])
        raise RuntimeError("Expected all tensors to be on the same device, but found at least "
                           f"two devices, {a} and {b}!")


def _device_indices(datas, seen: set) -> set:
    """-1 for NumPy arrays, the CUDA device index for GPU arrays, looking into lists."""
    for d in datas:
        if type(d) is np.ndarray:
            seen.add(-1)
        elif hasattr(d, "__cuda_array_interface__"):
            seen.add(d.device.id)
        elif isinstance(d, (list, tuple)):
            _device_indices(d, seen)
    return seen


def _as_array(xp, out):
    """Scalars (NumPy reductions) become 0-d arrays; arrays of any device stay as they are."""
    if type(out) is np.ndarray or hasattr(out, "__cuda_array_interface__"):
        return out
    return xp.asarray(out)


def edge_of(a):
    """The graph edge to ``a``'s history: (grad_fn, output_nr), its AccumulateGrad, or None."""
    if type(a) is Tensor or isinstance(a, Tensor):
        if a._requires_grad:
            fn = a.grad_fn
            return (fn, a._output_nr) if fn is not None else (accumulate_node(a), 0)
    return None


def _record(op: Op, args, datas, params, out, xp):
    """Create the node for one op call and the output tensors that point at it."""
    edges = []
    meta = []  # (shape, dtype) of each tensor input: what its gradient must look like
    needing_grad = 0  # bitmask of the inputs with an edge
    for i, (a, d) in enumerate(zip(args, datas)):
        if d is a:  # not a Tensor: dispatch passes those through as their own data
            edges.append(None)
            meta.append(None)
            continue
        if a._requires_grad:
            fn = a.grad_fn
            edges.append((fn, a._output_nr) if fn is not None else (accumulate_node(a), 0))
            needing_grad |= 1 << i
        else:
            edges.append(None)
        meta.append((d.shape, d.dtype))
    node_params = {**op.defaults, **params} if params and op.defaults else params or op.defaults
    node_class = op.node_class if op.node_name_rule is None else \
        node_type(op.node_name_rule(node_params, datas))
    node = node_class(op, tuple(edges), None, node_params, tuple(meta))
    if op.outputs == 1:
        result = Tensor._make(out if type(out) is np.ndarray else _as_array(xp, out), node, 0)
        outputs = (result,)
    else:
        diff = op.differentiable_outputs
        outputs = tuple(
            Tensor._make(_as_array(xp, o), node if diff is None or i in diff else None, i)
            for i, o in enumerate(out))
        node.extras().output_meta = tuple((o._data.shape, o._data.dtype, xp) for o in outputs)
        result = outputs
    plain = op.plain_save
    keep = op.save_mask(needing_grad) if op.saves_read is not None else ()
    node.saved = _save_plain(plain, args, outputs, keep) if plain is not None else \
        _save(op, args, datas, outputs, keep)
    return result


def _save_plain(plain, args, outputs, keep) -> tuple:
    """``_save`` for ops that save whole inputs/results only (most ops): one short loop."""
    saved = []
    nbytes = 0
    held = None  # a SavedTensor of this pack: its death releases the pack's bytes
    for k, (is_result, index) in enumerate(plain):
        if keep and not keep[k]:  # no rule that will run reads it
            saved.append(None)
            continue
        source = outputs[index] if is_result else args[index]
        if type(source) is Tensor or isinstance(source, Tensor):
            source = held = SavedTensor(source, is_result)
            nbytes += source.nbytes
        saved.append(source)  # a Python scalar argument is saved as is
    if nbytes and observers.saved_watchers:
        observers.saved_pack_held_by(held, nbytes)
    return tuple(saved)


def _save(op, args, datas, outputs, keep) -> tuple:
    saved = []
    nbytes = 0
    held = None  # a SavedTensor of this pack: its death releases the pack's bytes
    for k, (kind, index, attr) in enumerate(op.save_spec):
        if keep and not keep[k]:  # no rule that will run reads it
            saved.append(None)
            continue
        if kind == "inputs":
            if attr:
                saved.append(tuple(getattr(d, attr) for d in datas))
                continue
            packed = _SavedInputs(SavedTensor(a, False) if isinstance(a, Tensor) else a
                                  for a in args)
            tensors = [p for p in packed if type(p) is SavedTensor]
            nbytes += sum(p.nbytes for p in tensors)
            held = tensors[-1] if tensors else held
            saved.append(packed)
            continue
        source = args[index] if kind == "input" else outputs[index]
        if attr:
            value = datas[index] if kind == "input" else source._data
            saved.append(getattr(value, attr) if hasattr(value, attr) else _scalar_meta(attr))
        elif isinstance(source, Tensor):
            held = SavedTensor(source, kind == "result")
            nbytes += held.nbytes
            saved.append(held)
        else:
            saved.append(source)  # a Python scalar argument: saved as is
    if nbytes and observers.saved_watchers:
        observers.saved_pack_held_by(held, nbytes)
    return tuple(saved)


def _scalar_meta(attr):
    """Metadata of a Python scalar argument: shape () and no dtype of its own."""
    return () if attr == "shape" else None


class _SavedInputs(tuple):
    """All inputs of a variadic op saved for backward (``save="inputs"``)."""


def _unpack_all(saved, node, create_graph):
    return tuple(s.unpack(node, create_graph) if type(s) is SavedTensor else s for s in saved)


def cast_grad(g, dtype):
    """A gradient in its input's dtype: the real part for real inputs, then a cast (torch)."""
    data = getattr(g, "_data", g)
    if data.dtype.kind == "c" and dtype.kind != "c":
        g = seam.real(g)
    return seam.astype(g, dtype=dtype)


def sum_to_shape(g, shape):
    """Sum a broadcast gradient back to ``shape`` (the one shared unbroadcast helper)."""
    _sum = seam.sum
    lead = 1 if batch_state.size else 0  # a vectorized batched backward keeps its batch dim
    extra = g.ndim - lead - len(shape)
    if extra > 0:  # leading broadcast dims: summed away (a fresh array, not a view)
        g = _sum(g, tuple(range(lead, lead + extra)))
    axes = tuple(lead + i for i, n in enumerate(shape) if n == 1 and g.shape[lead + i] != 1)
    if axes:
        g = _sum(g, axes, True)
    return g
