"""An op's tensors given by name (``gather(x, dim=0, index=i)``), and torch's TypeError for
an op called without one of them (``torch.mul(x)``, ``x.gather()``): its parser's "missing
N required positional arguments" where torch has one signature, "received an invalid
combination of arguments" where it has several (a Number overload: ``add``, ``eq``, ``pow``
...), read from torch 2.13 op by op."""
from __future__ import annotations

from gradkit.int_arguments import invalid_combination, reads_as_int, type_name
from gradkit.signature_errors import missing_arguments

# the NumPy names torch's parser also takes for a parameter (python_arg_parser.cpp)
NUMPY_SPELLINGS = {"input": ("x", "a", "x1"), "other": ("x2",), "dim": ("axis",),
                   "keepdim": ("keepdims",)}

# gradkit's names of an op's inputs that torch names otherwise
_TORCH_NAMES = {"x": "input", "y": "other", "cond": "condition"}
_ONE_SIGNATURE = frozenset((
    "arctan2", "atan2", "complex", "dist", "fmax", "fmin", "gather", "gcd", "heaviside",
    "hypot", "index_add", "index_copy", "index_select", "isclose", "lcm", "ldexp", "logaddexp",
    "logaddexp2", "logical_and", "logical_or", "logical_xor", "masked_scatter", "masked_select",
    "matmul", "maximum", "minimum", "mul", "nextafter", "polar", "put", "scatter_add", "take"))
_SEVERAL_SIGNATURES = frozenset((
    "add", "addbmm", "addcdiv", "addcmul", "addmm", "addmv", "addr", "baddbmm", "bitwise_and",
    "bitwise_left_shift", "bitwise_or", "bitwise_right_shift", "bitwise_xor", "copysign", "div",
    "divide", "eq", "fill", "floor_divide", "fmod", "ge", "greater", "greater_equal", "gt",
    "index_fill", "le", "lerp", "less", "less_equal", "lt", "masked_fill", "multiply", "ne",
    "not_equal", "pow", "remainder", "rsub", "scatter", "sub", "subtract", "xlogy"))


# the methods torch lists one signature for (its deprecated others hidden) in place of
# "one of:"; the first seven their functions too, with the input and ``out``
_ONE_LISTED = {
    "add": "Tensor other, *, Number alpha = 1", "sub": "Tensor other, *, Number alpha = 1",
    "addbmm": "Tensor batch1, Tensor batch2, *, Number beta = 1, Number alpha = 1",
    "addcdiv": "Tensor tensor1, Tensor tensor2, *, Number value = 1",
    "addcmul": "Tensor tensor1, Tensor tensor2, *, Number value = 1",
    "addmv": "Tensor mat, Tensor vec, *, Number beta = 1, Number alpha = 1",
    "addr": "Tensor vec1, Tensor vec2, *, Number beta = 1, Number alpha = 1",
    "addmm": "Tensor mat1, Tensor mat2, *, Number beta = 1, Number alpha = 1",
    "baddbmm": "Tensor batch1, Tensor batch2, *, Number beta = 1, Number alpha = 1",
}
_FUNCTION_LISTS_ONE = frozenset(("add", "sub", "addbmm", "addcdiv", "addcmul", "addmv", "addr"))


def method_expectation(name: str) -> str | None:
    """The "but expected (...)" torch's method ``name`` ends its invalid combination with,
    where it lists one signature."""
    listed = _ONE_LISTED.get(name)
    return None if listed is None else f"but expected ({listed})"


def torch_names(op) -> tuple:
    """torch's names of ``op``'s inputs (``lerp``: input, end, weight)."""
    names = getattr(op, "torch_input_names", None) or op.input_names
    return tuple("input" if name == "self" else _TORCH_NAMES.get(name, name) for name in names)


def torch_input_keywords(op, given: int, kwargs: dict) -> dict:
    """``kwargs`` with the inputs after the ``given`` positionals named as torch names them
    (or by NumPy's spellings its parser takes: ``x=``, ``x2=``, ``axis=``) under gradkit's
    names."""
    kwargs = dict(kwargs)
    others = getattr(op, "keyword_spellings", {})  # another signature's name (scatter's value)
    for position, (name, torch_name) in enumerate(zip(op.input_names, torch_names(op))):
        spellings = (torch_name, *NUMPY_SPELLINGS.get(torch_name, ()), *others.get(name, ()))
        if position < given or name in kwargs:
            continue
        found = [spelling for spelling in spellings if spelling in kwargs]
        if len(found) == 1:
            kwargs[name] = kwargs.pop(found[0])
    return kwargs


def bind_inputs(op, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """(args, kwargs) of a call of ``op`` given fewer tensors than it takes: the next inputs
    given by their names (``gather(x, dim=0, index=i)``) moved in place; then, when an input
    is still missing and no keyword but the op's parameters is left, torch's TypeError."""
    names = op.input_names
    if kwargs:
        kwargs = torch_input_keywords(op, len(args), kwargs)
    if any(name in kwargs for name in names[len(args):]):
        kwargs = dict(kwargs)
        args = list(args)
        while len(args) < len(names) and names[len(args)] in kwargs:
            name = names[len(args)]
            if name == "dim" and not reads_as_int(kwargs[name]):  # torch's int, by keyword
                if op.name in _SEVERAL_SIGNATURES:
                    raise invalid_combination(op.name, tuple(args), kwargs)
                raise TypeError(f"{op.name}(): argument 'dim' must be int, not "
                                f"{type_name(kwargs[name])}")
            args.append(kwargs.pop(name))
        args = tuple(args)
    if len(args) == len(names) or any(key not in op.param_names for key in kwargs):
        return args, kwargs  # (another keyword may still give an input: the op reads it)
    if op.name in _SEVERAL_SIGNATURES and not kwargs:
        error = invalid_combination(op.name, args, kwargs)
        if op.name in _FUNCTION_LISTS_ONE:
            error = TypeError(str(error).replace(
                "but expected one of:",
                f"but expected (Tensor input, {_ONE_LISTED[op.name]}, Tensor out = None)"))
        raise error
    # add's and sub's alpha= picks their signature with one: its missing other
    if op.name in _ONE_SIGNATURE or op.name in ("add", "sub") and kwargs:
        raise missing_arguments(op.name, tuple(_TORCH_NAMES.get(name, name)
                                               for name in names[len(args):]))
    return args, kwargs


def too_many_positionals(op, args: tuple, kwargs: dict) -> TypeError:
    """Python's TypeError for more positionals than ``op``'s inputs and parameters (torch
    refuses them; they were dropped)."""
    if op.positionals_overloaded:
        return invalid_combination(op.name, args, kwargs)
    given = len(args)
    positional = op.param_names[:op.positional_limit]
    most = op.n_inputs + len(positional)
    least = op.n_inputs + sum(name not in op.defaults for name in positional) + \
        op.required_keywords
    takes = (f"{most} positional argument{'' if most == 1 else 's'}" if least == most
             else f"from {least} to {most} positional arguments")
    return TypeError(f"{op.name}() takes {takes} but {given} were given")
