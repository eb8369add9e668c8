"""The one mechanism every op goes through: its declaration (dispatch: ops/_dispatch.py).

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

import inspect

import numpy as np

from gradkit.autograd.batching import batch_shape, state as batch_state
from gradkit.autograd.graph import FREED_MESSAGE, Node, SavedTensor, node_type
from gradkit.autograd.saved_names import declare_saved_names
from gradkit.autograd.zero_grads import (
    KNOWN_ZERO_BY_INPUT, KNOWN_ZERO_BY_NODE, PASSES_KNOWN_ZERO, KnownZero, is_known_zero,
    known_zeros_by_input, known_zeros_for, plain)
from gradkit.int_arguments import INT64, function_form
from gradkit.numbers_hooks import passes_int
from gradkit.ops._dispatch import _materialize, dispatch
from gradkit.ops._dispatch_general import (  # noqa: F401  (re-exported for the ops, forward_ad)
    _SavedInputs, _entries_read, _scalar_meta, _unpack_all, cast_grad, fit_grad, seam,
    sum_to_shape)
from gradkit.ops._dispatch_hot import dispatch_binary, dispatch_unary
from gradkit.ops.result_layout import forwards
from gradkit.ops.keywords import (
    SPECIAL_KEYWORDS, TENSOR_KEYWORDS, named_inputs, tensor_keywords, torch_keywords)
from gradkit.ops.methods import register as register_method
from gradkit.ops.missing_inputs import bind_inputs, too_many_positionals
from gradkit.signature_errors import missing_arguments


ALL_OPS: list = []  # every Op made (the profiler finds an event's parameters by its name)


def _to_node_name(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.split("_")) + "Backward0"


class Op:
    """A differentiable operation; calling it dispatches on Tensors or raw arrays."""

    vjp_needs = False  # whether vjp_all takes needs= (defvjp_all)
    checks_grads = True  # backward() returns gradients of its inputs' shapes and dtypes
    view_inverse = None  # a view op whose output is computed (conj): the op that maps back
    # torch's name of an op whose autograd has no complex formula: recording a node for a
    # complex output (an empty input passes the kernel) raises, as torch's autograd does
    no_complex_grad: str | None = None
    # fn(args, kwargs) -> (args, kwargs) in the current signature, for torch's deprecated
    # overloads taking a number before tensors (``x.add_(-lr, grad)``), or None
    _legacy_positionals = None
    # its method takes an int list as separate ints (``x.squeeze(0, 1)``: torch's int[] dim)
    method_varargs = False
    # torch's "invalid combination" for more positionals than it takes (another signature)
    positionals_overloaded = False
    # keyword-only parameters torch requires in some signature (round's decimals): counted
    # in the least of its "takes from N to M positional arguments"
    required_keywords = 0
    # torch wraps a Python number operand as a 0-d tensor (add, mul): an edge (None, 0), and
    # a saved tensor freed by backward (node_names.py sets it)
    number_edges = False
    # torch's node has an edge for every input, (None, 0) for an absent one (convolution's bias)
    every_edge = False

    def __init__(self, forward, name=None, save=(), broadcast=False, linear=False,
                 view=False, outputs=1, differentiable_outputs=None, node_name=None,
                 elementwise=False, batchable=False, method=False, inplace=False,
                 contiguous=False):
        # results laid out as torch's (result_layout.py); the hot paths call ``kernel``
        self.forward, self.kernel, self.lays_out = forwards(forward, elementwise, contiguous)
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
        self.plain_dispatch = outputs == 1 and not view  # may take dispatch's fast path
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
        self.profiled_params = [p for p in self.param_names if p[0] != "_"]  # torch's (no _own)
        # how many parameters torch takes positionally (``keyword_only`` lowers it)
        self.positional_limit = len(self.param_names)
        self.input_keywords = None  # torch's names of the inputs (input=, mat1=, ...), if taken
        self.n_inputs = -1 if self.variadic else len(self.input_names)  # -1: any number
        # one output and one or two inputs (or a view): dispatch hands it to its own hot path
        self.hot_dispatch = None if outputs != 1 else dispatch_unary if view or \
            self.n_inputs == 1 else dispatch_binary if self.n_inputs == 2 else None
        self.save_spec = tuple(self._parse_save(s) for s in
                               ((save,) if isinstance(save, str) else save))
        declare_saved_names(self)
        # (is_result, index) per entry when only whole inputs/results are saved: the fast path
        self.plain_save = tuple((kind == "result", index) for kind, index, _ in self.save_spec) \
            if all(kind != "inputs" and not attr for kind, _, attr in self.save_spec) else None
        self.differentiable = False  # until a vjp rule is declared
        self.saves_read = None  # per input: the save entries its vjp rule reads (None: all)
        self._save_masks = {}   # inputs-needing-grad bitmask -> which save entries to keep
        # torch's node saves what either input's rule reads whenever both are tensors (pow's
        # Pow1: its result), not only for the inputs needing a gradient
        self.saves_for_every_tensor = False
        self.vjps = None      # tuple: one rule per input (None = not differentiable)
        self.vjp_all = None   # or one rule returning all input gradients
        self.vjp_order = None  # the inputs whose rules run first, if not in order (div's)
        self.edge_inputs = None  # the inputs torch's node has edges for, if not all
        self.jvps = self.jvp_all = None
        self.__doc__ = forward.__doc__
        self.__name__ = self.name
        self.numbers = None
        # method=True (or a name, or names): also x.name(...); inplace=True: also x.name_(...)
        register_method(self, self.name, method, inplace)
        ALL_OPS.append(self)

    @property
    def numbers(self):  # fn(params) -> params read as torch's parser reads them, or None
        return self._numbers

    @numbers.setter
    def numbers(self, hook) -> None:
        self._numbers = hook  # int_first: the first parameter if a bare int for it binds as
        first = self.param_names[0] if self.param_names else None  # itself (x.squeeze(0))
        self.int_first = None if first is None or first in TENSOR_KEYWORDS or \
            first in SPECIAL_KEYWORDS or hook is not None and not passes_int(hook, first) or \
            self._legacy_positionals is not None or not self.positional_limit else first
        second = self.param_names[1] if len(self.param_names) > 1 else None  # and a second
        self.int_second = None if self.int_first is None or second is None or \
            second in TENSOR_KEYWORDS or second in SPECIAL_KEYWORDS or \
            hook is not None and not passes_int(hook, second) or self.positional_limit < 2 \
            else second  # (x.transpose(0, 1))

    @property
    def legacy_positionals(self):
        return self._legacy_positionals

    @legacy_positionals.setter
    def legacy_positionals(self, reader) -> None:
        self._legacy_positionals = reader
        self.numbers = self._numbers  # int_first again

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

    def defvjp_all(self, rule, needs: bool = False):
        """One rule for all inputs: ``rule(g, *saved, **params) -> tuple of grads``, told
        ``needs=[bool per input]`` (torch's grad_input_mask) if ``needs``: atan2's."""
        self.vjp_all, self.vjp_needs = rule, needs
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
            d = derivative(*saved, **params) if params else derivative(*saved)
            if type(d) is np.ndarray and d.dtype.kind != "c":  # conj: d itself, without a call
                return g * d
            return g * seam.conj(d)

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
        if kwargs or len(args) != n:  # not the common call (its inputs alone): bind them
            if not kwargs and len(args) == n + 1 and self.int_first is not None and \
                    (type(args[n]) is int and -INT64 <= args[n] < INT64 or self._numbers is None):
                # x.squeeze(0), or any one value of an op without a hook (expand's sizes):
                # as the lines below bind it
                kwargs, args = {self.int_first: args[n]}, args[:n]
            elif not kwargs and len(args) == n + 2 and self.int_second is not None and \
                    type(args[n]) is int and type(args[n + 1]) is int and \
                    -INT64 <= args[n] < INT64 and -INT64 <= args[n + 1] < INT64:  # two int64s
                kwargs, args = {self.int_first: args[n], self.int_second: args[n + 1]}, args[:n]
            else:
                extra = 0
                if n >= 0 and len(args) > n:  # extra positionals: parameters, in order
                    if self._legacy_positionals is not None:
                        args, kwargs = self._legacy_positionals(args, kwargs)
                    extra = len(args) - n
                    if extra > self.positional_limit:
                        raise too_many_positionals(self, args, kwargs)
                    kwargs.update(zip(self.param_names, args[n:]))
                    args = args[:n]
                if kwargs:
                    if 0 < n <= 2 and not TENSOR_KEYWORDS.isdisjoint(kwargs):  # input=, x1= ...
                        args, kwargs = tensor_keywords(args, n, self.param_names, kwargs)
                    elif self.input_keywords is not None and len(args) < n:
                        args, kwargs = named_inputs(args, kwargs, self.input_keywords)
                    if not SPECIAL_KEYWORDS.isdisjoint(kwargs):  # axis=, keepdims=, dtype=
                        kwargs = torch_keywords(self.name, self.param_names, kwargs)
                if len(args) < n:  # tensors by name, or none: torch's TypeError
                    args, kwargs = bind_inputs(self, args, kwargs)
                if kwargs and self.numbers is not None:  # (positions named by torch)
                    try:
                        kwargs = self.numbers(kwargs, self.param_names[:extra], args)
                    except TypeError as error:  # (a method words it back)
                        raise function_form(error, args) from None
        hot = self.hot_dispatch  # ops of one or two inputs: their own path, no dispatch frame
        try:
            return dispatch(self, args, kwargs) if hot is None else hot(self, args, kwargs)
        except TypeError as error:  # a required parameter not given: torch's parser's words
            worded = self.parser_error(error, kwargs)
            if worded is error:
                raise
            raise worded from None

    def parser_error(self, error: TypeError, kwargs: dict) -> TypeError:
        """torch's error for a call with parameters ``kwargs`` that raised ``error``: the
        required parameters from the first one not given on, if any, else ``error``."""
        names = [p for p in self.param_names if p not in self.defaults]
        first = next((i for i, p in enumerate(names) if p not in kwargs), len(names))
        return missing_arguments(self.name, tuple(names[first:])) if names[first:] else error

    def keyword_only(self, *names: str, overloaded: bool = False, required: bool = False):
        """Declare that torch takes the parameters ``names`` (the last ones declared) only by
        keyword, so a positional one is refused (``cumsum(x, 0, None)``: dtype). ``overloaded``:
        torch's error is then its "invalid combination"; ``required``: they are required in
        one of torch's signatures (round's decimals), which its count reports."""
        self.positional_limit = min(self.param_names.index(name) for name in names)
        self.numbers = self._numbers  # int_first again
        self.positionals_overloaded = overloaded
        self.required_keywords = len(names) if required else 0
        return self

    def __repr__(self) -> str:
        return f"<gradkit op {self.name}>"

    # -- backward -------------------------------------------------------------------
    def backward(self, node: Node, grads: tuple, create_graph: bool, edges: tuple) -> tuple:
        """Input gradients of ``node`` from its output gradients (None = zero); ``edges``:
        ``node._next`` with None where none is wanted (torch's ``should_compute_output``)."""
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
                return (None,) * len(edges)
            # is_known_zero(g), inline: every node runs this line (a plain array first: its
            # getattr would raise and swallow an AttributeError)
            tg = type(g)
            if tg is KnownZero or tg is not np.ndarray and \
                    type(getattr(g, "_data", None)) is KnownZero:
                name = type(node).__name__
                if name in PASSES_KNOWN_ZERO:
                    return known_zeros_for(g, node, self.broadcast, edges, batch_shape())
                modes = KNOWN_ZERO_BY_INPUT.get(name)
                if modes is None and name in KNOWN_ZERO_BY_NODE:
                    modes = KNOWN_ZERO_BY_NODE[name](node)
                if modes is not None:
                    computed = self.backward(node, (plain(g),), create_graph, edges)
                    return known_zeros_by_input(computed, g, node, self.broadcast, modes, edges,
                                                batch_shape())
                g = plain(g)
        else:
            if any(map(is_known_zero, grads)):
                grads = [plain(g) for g in grads]
            diff = self.differentiable_outputs
            every = range(len(node._extras.output_meta))
            g = _materialize(grads, node, every if diff is None else diff, create_graph)
            if diff is not None and len(diff) == 1:
                g = g[0]
        params = node.params
        meta = node.input_meta
        if self.vjp_all is not None:  # one rule for all; torch keeps only the wanted ones,
            result = list(self.vjp_all(g, *values, **params) if not self.vjp_needs else
                          self.vjp_all(g, *values, needs=[c is not None for c in edges], **params))
            result += [None] * (len(edges) - len(result))  # a rule may stop at its last input
            if edges is not node._next and not self.variadic:  # but all of a tensor list
                result = [r if child is not None else None for r, child in zip(result, edges)]
            rules = None
        else:
            rules = self.vjps
            result = [None] * len(edges)
        # each gradient takes its input's shape (unbroadcast) and dtype, as the engine expects
        for i in self.vjp_order or range(len(edges)):  # torch's formulas' order, as it
            child = edges[i]  # numbers the nodes they make: the double backward runs them so
            if child is not None:
                r = result[i] if rules is None else rules[i](g, *values, **params) if \
                    params else rules[i](g, *values)  # no empty dict built per call
                if r is not None:
                    shape, dtype = meta[i]
                    data = r if type(r) is np.ndarray else getattr(r, "_data", r)
                    if data.shape != shape or data.dtype is not dtype:  # else nothing to fix
                        r = fit_grad(node, i, r, shape, dtype, self.broadcast or batch_state.size)
                    result[i] = r
        return result


def op(name=None, **options):
    """Decorator form of :class:`Op`: ``@op(save=("x",))`` over the array forward."""
    if callable(name):
        return Op(name)

    def declare(forward):
        return Op(forward, name=name, **options)
    return declare


