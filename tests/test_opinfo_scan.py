"""torch's own OpInfo samples and error inputs agree with gradkit for the ops fixed from them.

The scan (`python tests/fuzz/opinfo_scan.py`) covers every op; here the ops whose
differences were fixed run every sample torch's table has for them, so each fix stays."""
import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore")  # the ops warn as torch does

from fuzz.opinfo_samples import (  # noqa: E402
    compare_error, compare_sample, differing_samples, op_db)

FIXED = ("gather", "scatter", "scatter_add", "searchsorted", "native_layer_norm",
         "nn.functional.layer_norm", "to",
         "nn.functional.binary_cross_entropy")  # 0-d: backward called clamp on a NumPy scalar


def _opinfos(names):
    return [o for o in op_db if o.name in names]


@pytest.mark.parametrize("opinfo", _opinfos(FIXED), ids=lambda o: o.name)
@pytest.mark.parametrize("dtype", ["float64", "int64"])
def test_torch_samples_of_fixed_ops_agree(opinfo, dtype):
    dtype = getattr(torch, dtype)
    if dtype not in opinfo.supported_dtypes("cpu"):
        pytest.skip(f"torch's table has no {dtype} samples of {opinfo.name}")
    differing = differing_samples(opinfo, [dtype])
    assert not differing, differing


def test_the_comparison_sees_a_wrong_value():
    """The oracle can fail: a sample whose gradkit side is changed differs."""
    opinfo = _opinfos(("gather",))[0]
    sample = next(iter(opinfo.sample_inputs("cpu", torch.float64)))
    assert compare_sample(opinfo, "op", sample, False) is None
    sample.input = sample.input.clone()
    broken = type(opinfo)("gather", op=lambda x, *a, **k: torch.gather(x, *a, **k) + 1,
                          sample_inputs_func=opinfo.sample_inputs_func,
                          dtypes=opinfo.dtypes)
    assert "values" in compare_sample(broken, "op", sample, False)


def test_an_error_input_gradkit_accepts_is_reported():
    opinfo = _opinfos(("gather",))[0]
    error_input = next(iter(opinfo.error_inputs("cpu")))
    assert compare_error(opinfo, error_input) is None
    error_input.error_type = KeyError  # gradkit raises torch's RuntimeError, not this
    assert "error type" in compare_error(opinfo, error_input)


@pytest.mark.parametrize("name", ["CrossEntropyLoss", "NLLLoss", "KLDivLoss", "LayerNorm"])
def test_torch_module_inputs_of_fixed_modules_agree(name):
    from fuzz.module_samples import compare_module_input, module_db

    info = next(m for m in module_db if m.module_cls.__name__ == name)
    differing = []
    for training in (False, True):
        for k, module_input in enumerate(info.module_inputs_func(
                info, device="cpu", dtype=torch.float64, requires_grad=True, training=training)):
            found = compare_module_input(info, module_input, torch.float64, training)
            if found:
                differing.append(f"{'train' if training else 'eval'} #{k}: {found}")
    assert not differing, differing
