"""torch's module table (ModuleInfo) at the dtypes other than float64 it lists, and the scan's
own bookkeeping: the encoder layer TransformerEncoder is handed, dtypes gradkit has not, and
comparisons that run out of time (printed, not counted as agreeing)."""
import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore")  # the modules warn as torch's do

import gradkit  # noqa: E402
from fuzz import module_samples  # noqa: E402
from fuzz.module_samples import _encoder_layer, compare_module_input, module_db  # noqa: E402
from fuzz.module_scan import present_dtypes, scan  # noqa: E402
from fuzz.opinfo_scan import TIMED_OUT, _TimeoutError, report  # noqa: E402


def _differing(name: str, dtype) -> list:
    info = next(m for m in module_db if m.module_cls.__name__ == name)
    assert dtype in info.dtypes
    found = []
    for training in (False, True):
        for k, module_input in enumerate(info.module_inputs_func(
                info, device="cpu", dtype=dtype, requires_grad=True, training=training)):
            difference = compare_module_input(info, module_input, dtype, training)
            if difference:
                found.append(f"{'train' if training else 'eval'} #{k}: {difference}")
    return found


# one module of each kind the table lists past float64 (the whole table: module_scan.py)
@pytest.mark.parametrize("name,dtype", [
    ("TransformerEncoder", "float32"), ("BatchNorm2d", "float32"),
    ("GroupNorm", "float16"), ("ConvTranspose2d", "complex64"),
    ("ConvTranspose1d", "complex128")])
def test_torch_module_inputs_agree_at_other_dtypes(name, dtype):
    assert not _differing(name, getattr(torch, dtype))


@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_the_encoder_layer_twin_reads_torchs_settings_back(activation):
    layer = torch.nn.TransformerEncoderLayer(
        4, 2, 8, dropout=0.25, activation=activation, layer_norm_eps=1e-3, batch_first=True,
        norm_first=True, bias=False)
    twin = _encoder_layer(layer)
    assert isinstance(twin, gradkit.nn.TransformerEncoderLayer)
    assert (twin.self_attn.embed_dim, twin.self_attn.num_heads, twin.linear1.out_features,
            twin.dropout.p, twin.norm1.eps, twin.self_attn.batch_first, twin.norm_first,
            twin.linear1.bias) == (4, 2, 8, 0.25, 1e-3, True, True, None)
    assert twin.activation is getattr(gradkit.nn.functional, activation)
    assert _encoder_layer(3) == 3


def test_a_wrong_encoder_layer_is_seen(monkeypatch):
    """The comparison can fail: a twin built post-norm where torch's layer is pre-norm."""
    info = next(m for m in module_db if m.module_cls.__name__ == "TransformerEncoder")
    module_input = next(iter(info.module_inputs_func(
        info, device="cpu", dtype=torch.float64, requires_grad=True, training=False)))
    assert compare_module_input(info, module_input, torch.float64, False) is None

    def flipped(layer):
        twin = _encoder_layer(layer)
        if isinstance(twin, gradkit.nn.TransformerEncoderLayer):
            twin.norm_first = not twin.norm_first
        return twin
    monkeypatch.setattr(module_samples, "_encoder_layer", flipped)
    found = compare_module_input(info, module_input, torch.float64, False)
    assert found and "values" in found


def test_dtypes_gradkit_has_not_are_named_and_skipped():
    dtypes, absent = present_dtypes(["float32", "complex32"])
    assert dtypes == [torch.float32] and absent == ["complex32"]


def test_dtypes_the_table_does_not_list_are_not_run():
    assert scan({"Linear"}, [torch.float16], 0) == (0, 0)  # Linear: float32, float64 only


def test_a_comparison_out_of_time_is_printed_not_counted(capsys):
    def slow(_):
        raise _TimeoutError()
    assert report("Slow [float32 eval", [1, 2], slow, 2, str) == 0
    assert capsys.readouterr().out.count(TIMED_OUT) == 2
