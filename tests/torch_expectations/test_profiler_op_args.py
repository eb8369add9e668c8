"""Op events' arguments and names as torch's profiler records them (record_shapes=True):
every argument of the op (numbers, int lists, dtypes, tensor lists), torch's in-place names,
and the events of creation functions. Each program runs on gradkit and torch 2.13; events
are compared by name without the namespace (``aten::``, ``gradkit::``).
"""
import json
import os

import pytest

import gradkit

from .twin import like_torch

os.environ.setdefault("KINETO_LOG_LEVEL", "6")  # torch's profiler is chatty on stderr

ARGS = ("Input Dims", "Input type", "Concrete Inputs", "Input Strides")


def _op_args(prof, path, names) -> dict:
    """{short name: [the args of each of its cpu_op events]} for ``names``, from the trace."""
    prof.export_chrome_trace(str(path))
    found: dict = {}
    for e in json.loads(path.read_text())["traceEvents"]:
        name = e.get("name", "").split("::")[-1]
        if e.get("cat") == "cpu_op" and name in names:
            found.setdefault(name, []).append([e["args"][k] for k in ARGS])
    return found


def test_op_event_args(tmp_path):
    # torch: test_profiler_op_event_args (aten::ones lists its size, dtype, layout, device and
    # pin_memory); cat lists its tensors as one TensorList and its dim
    def program(lib):
        with lib.profiler.profile(record_shapes=True) as prof:
            a = lib.ones((64, 32), dtype=lib.float32)
            lib.cat([a, a]).sin()
        return _op_args(prof, tmp_path / f"{lib.__name__}.json", ("ones", "cat", "sin"))
    args = like_torch(program)
    assert args["ones"] == [[[[]] * 5, ["ScalarList", "Scalar", "", "", "Scalar"],
                             ["[64, 32]", "6", "", "", "False"], [[]] * 5]]
    assert args["cat"] == [[[[[64, 32], [64, 32]], []], ["TensorList", "Scalar"], ["", "0"],
                            [[[32, 1], [32, 1]], []]]]


def test_concrete_inputs_profiling():
    # torch: test_concrete_inputs_profiling (the events' concrete_inputs are values: lists)
    def program(lib):
        x = lib.rand(2, 6)
        with lib.profiler.profile(record_shapes=True) as prof:
            x.as_strided([4, 3], [1, 4])
        (event,) = [e for e in prof.events() if e.name.endswith("::as_strided")]
        return event.input_shapes[0], event.concrete_inputs[:3]
    assert like_torch(program) == ([2, 6], [None, [4, 3], [1, 4]])


def test_storage_offset_is_the_one_used():
    # Known: torch lists the storage_offset as given (None when left out); gradkit's event has
    # the offset the view starts at
    x = gradkit.rand(2, 6)
    with gradkit.profiler.profile(record_shapes=True) as prof:
        x.as_strided([4, 3], [1, 4])
    (event,) = prof.events()
    assert event.concrete_inputs[3] == 0 and event.input_types[3] == "Scalar"


PROGRAMS = {  # ops whose arguments are torch's: positional, keyword and defaults
    "transpose": lambda lib, x, y: x.transpose(0, 1),
    "permute": lambda lib, x, y: x.permute(1, 0),
    "reshape": lambda lib, x, y: x.reshape(3, 4),
    "unsqueeze": lambda lib, x, y: x.unsqueeze(0),
    "sum": lambda lib, x, y: x.sum(dim=1, keepdim=True),  # an int dim listed as [1]
    "mean": lambda lib, x, y: x.mean(1),
    "amax": lambda lib, x, y: x.amax(1),
    "cat": lambda lib, x, y: lib.cat([x, y], dim=1),
    "stack": lambda lib, x, y: lib.stack([x, y]),
    "add": lambda lib, x, y: x.add(y, alpha=2),
    "sub": lambda lib, x, y: x - 1,  # a number operand is a 0-d long tensor
    "mul": lambda lib, x, y: x * 2.5,  # ... a double one
    "div": lambda lib, x, y: x / 2,
    "pow": lambda lib, x, y: x.pow(2),  # a Scalar: pow has that overload
    "gt": lambda lib, x, y: x > 0.5,
    "clamp": lambda lib, x, y: x.clamp(0, 1),
    "softmax": lambda lib, x, y: lib.softmax(x, 1),
    "select": lambda lib, x, y: x.select(1, 2),
    "roll": lambda lib, x, y: x.roll(1, 0),
    "cumsum": lambda lib, x, y: x.cumsum(1),
    "where": lambda lib, x, y: lib.where(x > 0.5, x, 0.0),
    "masked_fill": lambda lib, x, y: x.masked_fill(x > 0.5, 1.0),
    "leaky_relu": lambda lib, x, y: lib.nn.functional.leaky_relu(x, 0.2),
    "gelu": lambda lib, x, y: lib.nn.functional.gelu(x),  # a string: ""
    "gather": lambda lib, x, y: x.gather(1, lib.tensor([[0], [1]])),
    "sort": lambda lib, x, y: x.sort(1),
    "tril": lambda lib, x, y: x.tril(1),
    "repeat": lambda lib, x, y: x.repeat(2, 1),
    "expand": lambda lib, x, y: x.expand(3, 2, 6),  # (implicit, sorted, non_blocking: torch's
    "topk": lambda lib, x, y: x.topk(2, 1),  # arguments gradkit's ops have not)
    "copy_": lambda lib, x, y: x.copy_(y),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_op_arguments_as_torch_lists_them(name, tmp_path):
    def program(lib):
        x, y = lib.rand(2, 6), lib.rand(2, 6)
        with lib.profiler.profile(record_shapes=True) as prof:
            PROGRAMS[name](lib, x, y)
        return _op_args(prof, tmp_path / f"{lib.__name__}.json", (name,))[name][:1]
    assert like_torch(program)


REDUCTIONS = [  # torch's overload without dim (sum, mean), dim=[] (amax), a dtype as a number
    ("sum", lambda x, lib: x.sum()), ("mean", lambda x, lib: x.mean()),
    ("amax", lambda x, lib: x.amax()), ("sum", lambda x, lib: x.sum(dtype=lib.float64)),
    ("nansum", lambda x, lib: x.nansum()), ("logsumexp", lambda x, lib: x.logsumexp(1))]


@pytest.mark.parametrize("case", range(len(REDUCTIONS)))
def test_reduction_arguments_as_torch_lists_them(case, tmp_path):
    name, reduce = REDUCTIONS[case]

    def program(lib):
        x = lib.rand(2, 6)
        with lib.profiler.profile(record_shapes=True) as prof:
            reduce(x, lib)
        return _op_args(prof, tmp_path / f"{lib.__name__}.json", (name,))[name][:1]
    assert like_torch(program)


def test_float_values_as_torch_writes_them(tmp_path):
    # c10 prints a double with 17 significant digits, and a point when it is whole
    def program(lib):
        x = lib.rand(3)
        with lib.profiler.profile(record_shapes=True) as prof:
            for value in (1.0, 0.1, 1e-8, 1e20, 123456789.0, -2.0, float("inf"), 7):
                x.fill_(value)
        return [args[2][1] for args in _op_args(prof, tmp_path / "t.json", ("fill_",))["fill_"]]
    assert like_torch(program) == ["1.", "0.10000000000000001", "1e-08", "1e+20", "123456789.",
                                   "-2.", "inf", "7"]


def test_in_place_ops_carry_torch_names():
    # torch names an in-place op's event by its own name (aten::add_), not the out-of-place one
    def program(lib):
        x, y = lib.rand(2, 6), lib.rand(2, 6)
        index, mask, one = lib.tensor([0, 1]), y > 0.5, lib.tensor(1.0)
        with lib.profiler.profile(record_shapes=True) as prof:
            x.add_(1), x.mul_(2), x.zero_(), x.fill_(3.0), x.copy_(y), x.sub_(y, alpha=2)
            x.clamp_(0, 1), x.neg_(), x.sigmoid_(), x.relu_(), x.masked_fill_(mask, 0.0)
            x.index_put_((index,), one)
            x[index] = one
            x.uniform_(), x.normal_(), x.bernoulli_(0.5), x.div_(2.0), x.exp_(), x.abs_()
            x.clamp_min_(0.1), x.clamp_max_(1.0), x.pow_(2), x.sqrt_(), x.tanh_()
            x.addcmul_(y, y, value=0.5), x.lerp_(y, 0.5)
            x.t_(), x.unsqueeze_(0), x.squeeze_()
            lib.nn.functional.relu(x, inplace=True)
            x.floor_(), x.log_()
        return [e.name.split("::")[-1] for e in prof.events() if e.cpu_parent is None]
    assert like_torch(program) == [
        "add_", "mul_", "zero_", "fill_", "copy_", "sub_", "clamp_", "neg_", "sigmoid_",
        "relu_", "masked_fill_", "index_put_", "index_put_", "uniform_", "normal_",
        "bernoulli_", "div_", "exp_", "abs_", "clamp_min_", "clamp_max_", "pow_", "sqrt_",
        "tanh_", "addcmul_", "lerp_", "t_", "unsqueeze_", "squeeze_", "relu_", "floor_",
        "log_"]


def test_in_place_event_arguments(tmp_path):
    def program(lib):
        x, y = lib.rand(2, 6), lib.rand(2, 6)
        with lib.profiler.profile(record_shapes=True) as prof:
            x.sub_(y, alpha=2)
            x.fill_(1.5)
            x.zero_()
        return _op_args(prof, tmp_path / f"{lib.__name__}.json", ("sub_", "fill_", "zero_"))
    args = like_torch(program)
    assert args["sub_"] == [[[[2, 6], [2, 6], []], ["float", "float", "Scalar"], ["", "", "2"],
                             [[6, 1], [6, 1], []]]]


CREATIONS = {  # torch's top-level event of each creation function and its arguments
    "zeros": lambda lib, x: lib.zeros(2, 6),
    "ones": lambda lib, x: lib.ones((3,), dtype=lib.float64),
    "empty": lambda lib, x: lib.empty(2, 2),
    "full": lambda lib, x: lib.full((2,), 1.0),
    "rand": lambda lib, x: lib.rand(2),
    "randn": lambda lib, x: lib.randn(2, 3),
    "arange": lambda lib, x: lib.arange(5),
    "zeros_like": lambda lib, x: lib.zeros_like(x),
    "ones_like": lambda lib, x: lib.ones_like(x),
    "empty_like": lambda lib, x: lib.empty_like(x),
    "rand_like": lambda lib, x: lib.rand_like(x),
    "randn_like": lambda lib, x: lib.randn_like(x),
    "full_like": lambda lib, x: lib.full_like(x, 2.0),
}


@pytest.mark.parametrize("name", sorted(CREATIONS))
def test_creation_functions_are_op_events(name, tmp_path):
    def program(lib):
        x = lib.rand(2, 6)
        with lib.profiler.profile(record_shapes=True) as prof:
            CREATIONS[name](lib, x)
        top = [e.name.split("::")[-1] for e in prof.events() if e.cpu_parent is None]
        # (torch's arange has a second arange inside: its out= form)
        return top, _op_args(prof, tmp_path / f"{lib.__name__}.json", (name,))[name][:1]
    assert like_torch(program)[0] == [name]


def test_creation_events_count_their_memory():
    # torch: the array of a creation function is an allocation of its event (aten::empty's)
    def program(lib):
        with lib.profiler.profile(profile_memory=True) as prof:
            x = lib.zeros(10, 10)
            del x
        usage = {e.key.split("::")[-1]: e.cpu_memory_usage for e in prof.key_averages()}
        return usage["zeros"], usage["[memory]"]
    assert like_torch(program) == (400, -400)


def test_tensor_is_no_event():
    # gradkit.tensor makes no event: torch's are the steps of its copy (aten::empty, aten::to,
    # aten::lift_fresh, aten::detach_), none named tensor
    with gradkit.profiler.profile(record_shapes=True) as prof:
        gradkit.tensor([1.0, 2.0])
    assert prof.events() == []


def test_creation_with_arguments_it_refuses_raises_its_own_error():
    with gradkit.profiler.profile(record_shapes=True):
        with pytest.raises(TypeError, match="zeros"):
            gradkit.zeros("a")


def test_creation_events_are_the_profilers_only():
    # other op observers (anomaly mode, vmap's) see ops only: a full(-inf) mask is no anomaly
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        with gradkit.autograd.detect_anomaly(check_forward=True):
            mask = gradkit.full((2, 2), float("-inf"))
    assert mask.shape == (2, 2)
    seen = []

    class Names(gradkit.autograd.observers.Observer):
        def op_exit(self, token, name, inputs, outputs, node, params):
            seen.append(name)
    names = Names()
    gradkit.autograd.observers.attach(names)
    try:
        gradkit.zeros(2) + 1
    finally:
        gradkit.autograd.observers.detach(names)
    assert seen == ["gradkit::add"]


def test_equal_numbers_of_other_types_stay_apart(tmp_path):
    # 2 == 2.0 == True in Python: each call still lists its own argument
    def program(lib):
        x, y = lib.rand(3), lib.rand(3)
        with lib.profiler.profile(record_shapes=True) as prof:
            for value in (1, 1.0, True):
                x * value
            for value in (2, 2.0):  # (a bool alpha is refused for a float x)
                x.add(y, alpha=value)
        found = _op_args(prof, tmp_path / f"{lib.__name__}.json", ("mul", "add"))
        return [args[1:3] for args in found["mul"] + found["add"]]
    assert like_torch(program) == [
        [["float", "long int"], ["", ""]], [["float", "double"], ["", ""]],
        [["float", "bool"], ["", ""]], [["float", "float", "Scalar"], ["", "", "2"]],
        [["float", "float", "Scalar"], ["", "", "2."]]]


def test_strides_of_an_input_that_is_not_contiguous(tmp_path):
    # an op that makes a node lists its inputs' own strides (a transposed input: [1, 4]), not
    # those of a contiguous tensor of the same shape
    def program(lib):
        x = lib.rand(3, 4, requires_grad=True)
        with lib.profiler.profile(record_shapes=True) as prof:
            y = x.t()
            y.sin(), y * y, y * 2.0
        found = _op_args(prof, tmp_path / f"{lib.__name__}.json", ("sin", "mul"))
        return found["sin"] + found["mul"]
    args = like_torch(program)
    assert [a[3] for a in args] == [[[1, 4]], [[1, 4], [1, 4]], [[1, 4], []]]


def test_inputs_as_they_were_at_the_call(tmp_path):
    # an input changed in place after the op (its shape, its strides) is listed as the op saw
    # it: the event keeps what was read at the call, not the tensor
    def program(lib):
        w = lib.rand(2, 6, requires_grad=True)
        x, v = w * 1, lib.rand(2, 6)
        with lib.profiler.profile(record_shapes=True) as prof:
            x.sin(), v.cos(), v * 0.5, v.sum(1)
            x.t_(), v.unsqueeze_(0)
            x.sin(), v.cos()
        found = _op_args(prof, tmp_path / f"{lib.__name__}.json", ("sin", "cos", "mul", "sum"))
        return [[a[0], a[3]] for name in ("sin", "cos", "mul", "sum") for a in found[name]]
    assert like_torch(program) == [
        [[[2, 6]], [[6, 1]]], [[[6, 2]], [[1, 6]]], [[[2, 6]], [[6, 1]]],
        [[[1, 2, 6]], [[12, 6, 1]]], [[[2, 6], []], [[6, 1], []]],
        [[[2, 6], [], [], []], [[6, 1], [], [], []]]]


def test_unrecorded_setitem_is_one_index_put():
    # Known: x[0] = v on a tensor that records no graph is one index_put_ (torch: select, then
    # fill_ into the view); recorded, gradkit's write is torch's select and fill_ too
    x, w = gradkit.rand(2, 6), gradkit.rand(2, 6, requires_grad=True)
    with gradkit.profiler.profile() as prof:
        x[0] = 5.0
        y = w * 1
        y[0] = 2.0
    top = [e.name for e in prof.events() if e.cpu_parent is None]
    assert top[:4] == ["gradkit::index_put_", "gradkit::mul", "gradkit::select", "gradkit::fill_"]
