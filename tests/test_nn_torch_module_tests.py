"""torch's test_nn.py generated tests (characters ~354k): the ``module_tests`` and
``get_new_module_tests()`` entries of torch.testing._internal.common_nn that name a module,
its constructor arguments and an input size, each built in torch 2.13 and in gradkit with the
same parameters and run on the same input (float64, training mode and, for ``check_eval``,
eval mode): outputs, parameter gradients and input gradients compared (tests/nn_twins.py).
The entries with their own constructor or input function build torch objects and are left."""
import numpy as np
import pytest

import gradkit
from tests.nn_twins import compare

torch = pytest.importorskip("torch")
common_nn = pytest.importorskip("torch.testing._internal.common_nn")


def _entries() -> dict:
    found = {}
    for entry in common_nn.module_tests + common_nn.get_new_module_tests():
        if "module_name" not in entry or "input_size" not in entry or "constructor" in entry:
            continue
        name = entry.get("fullname") or "_".join(
            filter(None, (entry["module_name"], entry.get("desc"))))
        found[name] = entry
    return found


ENTRIES = _entries()


def _argument(value, lib):
    """A constructor argument in ``lib``'s terms (torch tensors become ``lib``'s)."""
    if isinstance(value, torch.Tensor):
        return lib.tensor(value.detach().numpy())
    if isinstance(value, (tuple, list)):
        return type(value)(_argument(v, lib) for v in value)
    if callable(value) and getattr(torch.nn.functional, getattr(value, "__name__", ""),
                                   None) is value:  # an activation given as F.gelu
        return getattr(lib.nn.functional, value.__name__)
    return value


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_module_test_entry_as_torch(name, training):
    entry = ENTRIES[name]
    if not training and not entry.get("check_eval"):
        pytest.skip("torch's entry has no eval variant")
    if training and entry["module_name"] == "RReLU":  # a random slope in training: the
        training = False  # fixed one of eval compared instead
    args = entry.get("constructor_args", ())

    def make(lib):
        return getattr(lib.nn, entry["module_name"])(*_argument(args, lib))
    values = np.random.default_rng(0).standard_normal(entry["input_size"])
    compare(torch, make, [values], training=training)


def test_entries_found():
    """The harness reads torch's tables (a rename there would silently empty this file)."""
    assert len(ENTRIES) > 50
    assert all(hasattr(gradkit.nn, e["module_name"]) for e in ENTRIES.values())


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
    """torch's criterion_tests (losses without a batch dim, each reduction): the loss and its
    input gradients, and single_batch_reference_criterion_fn's batch of one."""
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
