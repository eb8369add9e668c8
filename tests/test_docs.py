"""Every ```python block in docs/*.md runs (blocks fenced ```python no-run are skipped)."""
import re
from pathlib import Path

import pytest

import gradkit

DOCS = Path(__file__).resolve().parent.parent / "docs"
FENCE = re.compile(r"^```python(?P<info>[^\n]*)\n(?P<code>.*?)^```\s*$", re.M | re.S)


def extract_blocks(text: str) -> list[tuple[int, str, bool]]:
    """(line number, code, runnable) for each ```python block of a markdown text."""
    blocks = []
    for match in FENCE.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        runnable = "no-run" not in match.group("info").split()
        blocks.append((line, match.group("code"), runnable))
    return blocks


def collect() -> list:
    params = []
    for path in sorted(DOCS.glob("*.md")):
        for line, code, runnable in extract_blocks(path.read_text(encoding="utf-8")):
            marks = () if runnable else (pytest.mark.skip(reason="marked no-run"),)
            params.append(pytest.param(path, line, code, id=f"{path.name}:{line}", marks=marks))
    return params


@pytest.fixture
def restore_defaults():
    dtype = gradkit.get_default_dtype()
    yield
    gradkit.set_default_dtype(dtype)


@pytest.mark.parametrize("path,line,code", collect())
def test_doc_block_runs(path, line, code, restore_defaults, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # blocks that write files write them here
    # padding with blank lines makes traceback line numbers those of the markdown file
    source = compile("\n" * line + code, str(path), "exec")
    exec(source, {"__name__": "__docs__"})


def test_extract_blocks():
    text = "intro\n```python\nx = 1\n```\n```python no-run\ngpu()\n```\n```bash\nls\n```\n"
    assert extract_blocks(text) == [(2, "x = 1\n", True), (5, "gpu()\n", False)]

