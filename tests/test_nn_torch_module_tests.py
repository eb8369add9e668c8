"""torch's test_nn.py generated tests (characters ~354k): every entry of ``module_tests`` and
``get_new_module_tests()`` (torch.testing._internal.common_nn) built in torch 2.13 and in
gradkit with the same parameters and run on the same input (torch's input function or size,
float64): outputs, parameter gradients and input gradients compared (tests/nn_twins.py). An
entry's own constructor (a lambda over ``nn``/``F``/``torch``, or wrap_functional's module) is
rebuilt over gradkit: the same code with gradkit's modules as its globals and the tensors it
closes over converted. Then the ``criterion_tests`` (losses without a batch dim)."""
import importlib
import types

import numpy as np
import pytest

import gradkit
from tests.nn_twins import same

torch = pytest.importorskip("torch")
common_nn = pytest.importorskip("torch.testing._internal.common_nn")


def _name(entry) -> str:
    if "fullname" in entry:
        return entry["fullname"]
    head = entry.get("module_name") or entry["constructor"].__name__
    return "_".join(filter(None, (head, entry.get("desc"))))


ENTRIES = {_name(e): e for e in common_nn.module_tests + common_nn.get_new_module_tests()}
SPARSE = {"Embedding_sparse", "EmbeddingBag_sparse"}  # sparse gradients: out of scope


def rebuilt(value, lib):
    """``value`` (a constructor, function, argument) in ``lib``'s terms."""
    if isinstance(value, torch.Tensor):
        return lib.tensor(value.detach().numpy())
    if isinstance(value, torch.dtype):
        return getattr(lib, str(value).split(".")[-1])
    if isinstance(value, (tuple, list)):
        return type(value)(rebuilt(v, lib) for v in value)
    if isinstance(value, dict):
        return {k: rebuilt(v, lib) for k, v in value.items()}
    if isinstance(value, type) and value.__name__ == "FunctionalModule":  # wrap_functional's
        free = value.forward.__code__.co_freevars
        cells = dict(zip(free, (c.cell_contents for c in value.forward.__closure__)))
        fn, kwargs = rebuilt(cells["fn"], lib), rebuilt(cells.get("kwargs", {}), lib)

        class FunctionalModule(lib.nn.Module):
            def forward(self, *args):
                return fn(*args, **kwargs)
        return FunctionalModule
    name = getattr(value, "__name__", None)
    if name and getattr(torch.nn.functional, name, None) is value:
        return getattr(lib.nn.functional, name)  # a builtin such as F.gelu
    if not isinstance(value, types.FunctionType):
        return value
    if value.__module__ != common_nn.__name__:  # torch's own function: gradkit's namesake
        module = importlib.import_module(value.__module__.replace("torch", "gradkit", 1))
        return getattr(module, value.__name__)
    names = {"nn": lib.nn, "F": lib.nn.functional, "torch": lib}
    closure = tuple(types.CellType(rebuilt(c.cell_contents, lib))
                    for c in value.__closure__ or ())
    return types.FunctionType(value.__code__, {**value.__globals__, **names}, value.__name__,
                              value.__defaults__, closure or None)


def _make(entry, lib):
    args = entry.get("constructor_args", ())
    if "constructor" in entry:
        constructor = entry["constructor"] if lib is torch else rebuilt(entry["constructor"], lib)
    else:
        constructor = getattr(lib.nn, entry["module_name"])
    module = constructor(*(args if lib is torch else rebuilt(args, lib)))
    return module.double()


def _inputs(entry) -> list:
    torch.manual_seed(0)
    if "input_fn" in entry:
        found = entry["input_fn"]()
    elif "input" in entry:
        found = entry["input"]
    else:
        found = torch.randn(entry["input_size"], dtype=torch.double)
    found = found if isinstance(found, (tuple, list)) else [found]
    return [t.double() if t.is_floating_point() else t for t in found]


def _run(module, inputs, lib, seed_of):
    out = module(*inputs)
    outs = [t for t in (out if isinstance(out, tuple) else (out,)) if isinstance(t, lib.Tensor)]
    grown = [t for t in outs if t.requires_grad]
    if grown:
        lib.autograd.backward(grown, [lib.tensor(seed_of(t)).to(t.dtype) for t in grown])
    return outs


@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_module_test_entry_as_torch(name):
    entry = ENTRIES[name]
    if name in SPARSE:
        pytest.skip("sparse gradients (out of scope)")
    theirs, ours = _make(entry, torch), _make(entry, gradkit)
    ours.load_state_dict({k: gradkit.tensor(v.detach().numpy())
                          for k, v in theirs.state_dict().items()})
    train = not name.startswith("RReLU")  # RReLU draws its slope in training: eval compared
    theirs.train(train)
    ours.train(train)
    t_in = [t.detach().clone().requires_grad_(t.is_floating_point() or t.is_complex())
            for t in _inputs(entry)]
    g_in = [gradkit.tensor(t.detach().numpy()).requires_grad_(t.requires_grad) for t in t_in]

    def seed_of(t):
        return np.random.default_rng(1).standard_normal(tuple(t.shape))
    for g, t in zip(_run(ours, g_in, gradkit, seed_of), _run(theirs, t_in, torch, seed_of),
                    strict=True):
        same(g, t, rtol=1e-8, atol=1e-10)
    for g, t in zip(list(ours.parameters()) + g_in, list(theirs.parameters()) + t_in,
                    strict=True):
        assert (g.grad is None) == (t.grad is None)
        if t.grad is not None:
            same(g.grad, t.grad, rtol=1e-8, atol=1e-10)


def test_entries_found():
    """The harness reads torch's tables (a rename there would silently empty this file)."""
    assert len(ENTRIES) > 200 and len(CRITERIA) > 40


def _criterion_case(entry) -> tuple:
    """(loss name, reduction, inputs, target) of a criterion entry, as NumPy data drawn by
    torch's own input and target functions (or its sizes)."""
    name, reduction = entry["fullname"].split("_no_batch_dim_")
    torch.manual_seed(0)
    if "input_fn" in entry:
        inputs, target = entry["input_fn"](), entry["target_fn"]()
    else:
        inputs = torch.randn(entry["input_size"], dtype=torch.double)
        target = torch.randn(entry["target_size"], dtype=torch.double)
    inputs = inputs if isinstance(inputs, (tuple, list)) else [inputs]
    return name, reduction, [t.numpy() for t in inputs], target.numpy()


CRITERIA = {e["fullname"]: e for e in common_nn.criterion_tests if "_no_batch_dim_" in
            e.get("fullname", "")}


@pytest.mark.parametrize("fullname", sorted(CRITERIA))
def test_criterion_test_entry_as_torch(fullname):
    """torch's criterion_tests (losses without a batch dim, each reduction; torch's entries
    bind the reduction late, so all are 'sum' there): the loss and its input gradients, and
    single_batch_reference_criterion_fn's batch of one."""
    name, reduction, inputs, target = _criterion_case(CRITERIA[fullname])
    results = []
    for lib in (torch, gradkit):
        loss = getattr(lib.nn, name)(reduction=reduction)
        xs = [lib.tensor(x).requires_grad_(x.dtype.kind == "f") for x in inputs]
        t = lib.tensor(target)
        out = loss(*xs, t)
        batched = loss(*[x.unsqueeze(0) for x in xs], t.unsqueeze(0))
        out.sum().backward()
        results.append([out.detach().numpy(), batched.detach().numpy()]
                       + [x.grad.numpy() for x in xs if x.requires_grad])
    for ours, theirs in zip(results[1], results[0], strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
    expected = results[0][1].squeeze(0) if reduction == "none" else results[0][1]
    np.testing.assert_allclose(results[1][0], expected, rtol=1e-10, atol=1e-12)


LONG = sorted(n for n, e in ENTRIES.items() if e.get("check_with_long_tensor"))


@pytest.mark.parametrize("name", LONG)
def test_module_test_entry_with_long_tensor_as_torch(name):
    """The ``_with_long_tensor`` variants: parameters and input of integer values, the module
    and input cast to int64 (torch's ``_apply(lambda t: t.long())``), forward only."""
    entry = ENTRIES[name]
    theirs, ours = _make(entry, torch), _make(entry, gradkit)
    rng = np.random.default_rng(0)
    state = {k: rng.integers(-1000, 1000, tuple(v.shape)).astype(np.float64)
             for k, v in theirs.state_dict().items()}
    x = rng.integers(-1000, 1000, entry["input_size"])
    outs = []
    for lib, module in ((torch, theirs), (gradkit, ours)):
        module.load_state_dict({k: lib.tensor(v) for k, v in state.items()})
        for p in module.parameters():
            p.requires_grad_(False)
        module._apply(lambda t: t.long())
        outs.append(module(lib.tensor(x)))
    same(outs[1], outs[0], rtol=0, atol=0)
