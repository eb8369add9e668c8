"""torch's test_nn.py generated tests (characters ~354k) beyond tests/test_nn_table.py (which
runs every entry of common_nn's tables in eval mode): the ``module_tests`` and
``get_new_module_tests()`` entries in training mode (tests/fuzz/nn_table_samples.py's
comparison: outputs, gradients, second derivatives), their ``_with_long_tensor`` variants
(int64, forward), and the ``criterion_tests`` losses without a batch dim under each reduction
with ``single_batch_reference_criterion_fn``'s batch of one."""
import numpy as np
import pytest

import gradkit
from tests.nn_twins import same

torch = pytest.importorskip("torch")
common_nn = pytest.importorskip("torch.testing._internal.common_nn")
pytestmark = pytest.mark.filterwarnings("ignore")  # the modules warn as torch's do

from fuzz.nn_table_samples import compare_entry, entries, gradkit_twin, to_gradkit  # noqa: E402

ENTRIES = {name: e for name, e, criterion in entries() if not criterion}
SPARSE = {"Embedding_sparse", "EmbeddingBag_sparse"}  # sparse gradients: out of scope


@pytest.mark.parametrize("name", sorted(set(ENTRIES) - SPARSE))
def test_module_test_entry_in_training_as_torch(name):
    """test_nn.py runs its NewModuleTest entries in training mode (RReLU draws its slope
    there: eval mode is test_nn_table.py's)."""
    if name.startswith("RReLU"):
        pytest.skip("a random slope in training")
    assert compare_entry(ENTRIES[name], False, training=True) is None


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
    constructor = entry.get("constructor") or getattr(torch.nn, entry["module_name"])
    args = entry.get("constructor_args", ())
    theirs, ours = constructor(*args), gradkit_twin(constructor)(*to_gradkit(args, []))
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
