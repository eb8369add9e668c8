"""The line table on the docs' examples: `gradkit profile --with-modules --profile-memory` on
cnn_digits.py and char_transformer.py names the lines and modules of their layers, its time
adds up to the op table's cpu_op self time and its saved bytes to the counter's peak."""
import gzip
import json
import sys
from pathlib import Path

import pytest

from gradkit.profiler import load_trace
from gradkit.profiler.saved_lines import costs_per_line
from gradkit.profiler.trace_export import SAVED_BYTES

sys.path.insert(0, str(Path(__file__).parent))
from test_cli_run import gradkit_cli  # noqa: E402

EXAMPLES = Path(__file__).resolve().parent.parent / "docs" / "examples"
pytestmark = pytest.mark.slow


def _profiled(tmp_path, script: str, *args: str):
    trace = tmp_path / f"{script}.json.gz"
    result = gradkit_cli("profile", "--with-modules", "--profile-memory", "--no-color",
                         "--row-limit", "-1", "-o", trace, EXAMPLES / script, *args)
    assert result.returncode == 0, result.stderr
    with gzip.open(trace, "rt") as f:
        counter = [e["args"]["Saved"] for e in json.load(f)["traceEvents"]
                   if e.get("name") == SAVED_BYTES]
    events = load_trace(trace).events()
    return events, costs_per_line(events), max(counter), result.stdout


def _site(script: str, text: str) -> str:
    """``file:line`` of the line of ``script`` that contains ``text``."""
    lines = (EXAMPLES / script).read_text().splitlines()
    return f"{EXAMPLES / script}:{next(i for i, t in enumerate(lines) if text in t) + 1}"


def _check_totals(events, costs, saved_peak: int) -> None:
    op_names = {e.name for e in events if e.cat == "cpu_op"}
    op_table = sum(a.self_cpu_time_total for a in events.key_averages() if a.key in op_names)
    assert sum(c.total_us for c in costs) == pytest.approx(op_table, rel=1e-9)
    assert sum(c.saved_bytes for c in costs) == saved_peak


def test_cnn_digits_layers_are_rows_of_the_training_line(tmp_path):
    events, costs, saved_peak, out = _profiled(tmp_path, "cnn_digits.py", "--epochs", "1",
                                               "--batch-size", "256")
    _check_totals(events, costs, saved_peak)
    train = _site("cnn_digits.py", "loss = F.cross_entropy(model(")
    rows = {c.module: c for c in costs if c.site == train}
    for layer in ("Sequential.0 (Conv2d)", "Sequential.3 (Conv2d)", "Sequential.8 (Linear)"):
        assert rows[layer].forward_us > 0 and rows[layer].backward_us > 0, layer
        assert rows[layer].saved_bytes > 0, layer  # input and weight, held until backward
    assert "Sequential.0 (Conv2d)" in out and "Saved at peak" in out


def test_char_transformer_rows_name_the_attention_and_mlp_lines(tmp_path):
    events, costs, saved_peak, out = _profiled(tmp_path, "char_transformer.py", "--steps", "2",
                                               "--sample", "1")
    _check_totals(events, costs, saved_peak)
    rows = {(c.site, c.module): c for c in costs}
    script = "char_transformer.py"
    expected = [
        (_site(script, "q, k, v = self.qkv(x)"), "TinyTransformer.block.attention.qkv (Linear)"),
        (_site(script, "return self.out(mixed"), "TinyTransformer.block.attention.out (Linear)"),
        (_site(script, "scores = q @ k.transpose"),
         "TinyTransformer.block.attention (CausalSelfAttention)"),
        (_site(script, "return x + self.mlp(self.norm2(x))"),
         "TinyTransformer.block.mlp.0 (Linear)"),
    ]
    for key in expected:
        assert key in rows, key
        assert rows[key].calls > 0 and rows[key].backward_us > 0, key
        assert rows[key].saved_bytes > 0, key
