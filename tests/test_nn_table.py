"""torch's older nn test tables (common_nn: the NewModuleTest / CriterionTest entries test_nn.py
runs) in gradkit and torch: outputs, gradients of the input and parameters, and second
derivatives, entry by entry (tests/fuzz/nn_table_samples.py; the command is nn_table_scan.py)."""
import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore")  # the modules warn as torch's do

import gradkit  # noqa: E402
from fuzz import nn_table_samples  # noqa: E402
from fuzz.nn_table_samples import compare_entry, entries, gradkit_twin  # noqa: E402

ENTRIES = entries()
# torch's sparse gradients: gradkit refuses them with its "not supported" (docs/api.md)
SPARSE = {"Embedding_sparse", "EmbeddingBag_sparse"}


@pytest.mark.parametrize("name,entry,criterion", [e for e in ENTRIES if e[0] not in SPARSE],
                         ids=[e[0] for e in ENTRIES if e[0] not in SPARSE])
def test_table_entry_agrees_with_torch(name, entry, criterion):
    assert compare_entry(entry, criterion, training=False) is None


@pytest.mark.parametrize("name", sorted(SPARSE))
def test_sparse_entries_are_refused_as_not_supported(name):
    _, entry, criterion = next(e for e in ENTRIES if e[0] == name)
    assert "sparse=True (a sparse gradient of the weight) is not supported by gradkit" in \
        compare_entry(entry, criterion, training=False)


def test_the_tables_are_read_whole():
    """Every kind of entry is there: plain modules, wrapped functionals, criteria."""
    names = [name for name, _, _ in ENTRIES]
    assert len(names) > 250 and "interpolate_bicubic_2d" in names and \
        any(criterion for _, _, criterion in ENTRIES)


def test_a_wrapped_functional_runs_gradkits_function():
    _, entry, _ = next(e for e in ENTRIES if e[0] == "interpolate_bilinear_2d")
    twin = gradkit_twin(entry["constructor"])()
    assert isinstance(twin, gradkit.nn.Module)
    assert isinstance(twin(gradkit.ones(1, 2, 4, 4)), gradkit.Tensor)


def _softmax_entry():
    return next(e for e in ENTRIES if e[0] == "softmax_lastdim")


def test_a_wrong_value_is_seen(monkeypatch):
    """The comparison can fail: gradkit's softmax made to scale its input."""
    _, entry, criterion = _softmax_entry()
    assert compare_entry(entry, criterion, training=False) is None
    real = gradkit.nn.functional.softmax
    monkeypatch.setattr(gradkit.nn.functional, "softmax",
                        lambda x, dim=None, dtype=None: real(x * 1.01, dim))
    assert "out[0]" in compare_entry(entry, criterion, training=False)


def test_a_wrong_second_derivative_is_seen(monkeypatch):
    """gradkit's softmax made to keep its values and first derivative at the sample but change
    its second derivative (a square of zero slope there)."""
    _, entry, criterion = _softmax_entry()
    real = gradkit.nn.functional.softmax

    def bent(x, dim=None, dtype=None):
        return real(x, dim) + (x - x.detach()) ** 2 * 0.5

    monkeypatch.setattr(gradkit.nn.functional, "softmax", bent)
    assert "gradgrad" in compare_entry(entry, criterion, training=False)


def test_twins_of_partials_and_closures():
    import functools
    part = gradkit_twin(functools.partial(torch.nn.Linear, 2, bias=False))
    assert isinstance(part(3), gradkit.nn.Linear) and part(3).bias is None
    scale = torch.tensor(2.0)
    assert gradkit_twin(lambda x: x * scale)(gradkit.ones(2)).tolist() == [2.0, 2.0]
    with pytest.raises(nn_table_samples.UntranslatableError, match="gradkit has no"):
        gradkit_twin(torch.nn.functional.scaled_mm if hasattr(torch.nn.functional, "scaled_mm")
                     else torch._C._nn.slow_conv3d)
