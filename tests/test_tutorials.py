"""docs/examples/tutorials: torch tutorial-style programs, run unchanged on torch and on gradkit.

Each program starts with ``import torch``; under gradkit it runs through
``python -m gradkit.utils.as_torch`` (``torch`` is gradkit in that process). Both runs must
print the same text and the same numbers (within float32 tolerance).
"""
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TUTORIALS = ROOT / "docs" / "examples" / "tutorials"
# programs that use torch features gradkit leaves out: gradkit must stop naming the feature
OUT_OF_SCOPE = {"tensorboard_out_of_scope.py":
                "gradkit does not implement torch.utils.tensorboard"}
PROGRAMS = sorted(p.name for p in TUTORIALS.glob("*.py") if p.name not in OUT_OF_SCOPE)
NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|[-+]?inf|nan")


def run_script(script: Path, on_gradkit: bool, tmp_path: Path) -> subprocess.CompletedProcess:
    # one BLAS thread (a small shared machine); the worktree's gradkit, not an installed one
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    runner = ["-m", "gradkit.utils.as_torch"] if on_gradkit else []
    return subprocess.run([sys.executable, *runner, str(script)],
                          capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)


def run(program: str, on_gradkit: bool, tmp_path: Path) -> subprocess.CompletedProcess:
    return run_script(TUTORIALS / program, on_gradkit, tmp_path)


def split_numbers(text: str) -> tuple[str, list[float]]:
    """The text of ``text`` with its numbers as ``#`` (gradkit's module name read as torch's,
    white space dropped: tensor printing pads differently) and the numbers."""
    numbers = [float(m) for m in NUMBER.findall(text)]
    skeleton = re.sub(r"\s+", "", NUMBER.sub("#", text.replace("gradkit", "torch")))
    return skeleton, numbers


def assert_same_output(got: str, expected: str, rtol=2e-4, atol=1e-5) -> None:
    got_words, got_numbers = split_numbers(got)
    expected_words, expected_numbers = split_numbers(expected)
    assert got_words == expected_words
    assert len(got_numbers) == len(expected_numbers)
    for i, (g, e) in enumerate(zip(got_numbers, expected_numbers)):
        same = (math.isnan(g) and math.isnan(e)) or math.isclose(g, e, rel_tol=rtol, abs_tol=atol)
        assert same, f"number {i}: gradkit {g}, torch {e}"


def test_there_are_ten_tutorials_at_least():
    assert len(PROGRAMS) >= 10
    for program in PROGRAMS + list(OUT_OF_SCOPE):
        source = (TUTORIALS / program).read_text(encoding="utf-8")
        assert source.startswith('"""'), f"{program} needs a docstring saying what it shows"
        assert "\nimport torch\n" in source and "import gradkit" not in source, program


@pytest.mark.parametrize("program", PROGRAMS)
def test_tutorial_prints_what_torch_prints(program, tmp_path):
    pytest.importorskip("torch")
    expected = run(program, on_gradkit=False, tmp_path=tmp_path)
    assert expected.returncode == 0, expected.stderr
    got = run(program, on_gradkit=True, tmp_path=tmp_path)
    assert got.returncode == 0, got.stderr
    assert_same_output(got.stdout, expected.stdout)


@pytest.mark.parametrize("program", sorted(OUT_OF_SCOPE))
def test_out_of_scope_tutorial_stops_with_a_clear_message(program, tmp_path):
    got = run(program, on_gradkit=True, tmp_path=tmp_path)
    assert got.returncode != 0
    assert OUT_OF_SCOPE[program] in got.stderr
    assert "see docs/torch_coverage.md" in got.stderr


def test_split_numbers_compares_words_and_numbers():
    assert split_numbers("loss 1.5e-3, tensor([ 2., -3.]) gradkit.float64 inf") == (
        "loss#,tensor([#,#])torch.float##", [1.5e-3, 2.0, -3.0, 64.0, math.inf])


def run_code(code: str, tmp_path: Path) -> subprocess.CompletedProcess:
    script = tmp_path / "program.py"
    script.write_text(code, encoding="utf-8")
    return run_script(script, on_gradkit=True, tmp_path=tmp_path)


def test_as_torch_maps_torch_submodules_to_gradkits(tmp_path):
    got = run_code(
        "import sys\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
        "from torch.autograd.functional import jacobian\nimport torch.utils.checkpoint\n"
        "from torch.utils.data import DataLoader\nimport gradkit\n"
        "print(torch is gradkit, nn is gradkit.nn, F is gradkit.nn.functional,\n"
        "      jacobian is gradkit.autograd.functional.jacobian,\n"
        "      torch.utils.checkpoint is gradkit.utils.checkpoint,\n"
        "      DataLoader is gradkit.utils.data.DataLoader, sys.argv[1:])\n"
        "", tmp_path)
    assert got.returncode == 0, got.stderr
    assert got.stdout.split() == ["True"] * 6 + ["[]"]


TENSORBOARD = "torch.utils.tensorboard (SummaryWriter)"


@pytest.mark.parametrize("statement,feature", [
    ("import torch.utils.tensorboard", TENSORBOARD),
    ("from torch.utils.tensorboard import SummaryWriter", TENSORBOARD),
    ("import torch\ntorch.utils.tensorboard.SummaryWriter", TENSORBOARD),
    ("import torch.utils.data\ntorch.utils.data.IterDataPipe", "torch.utils.data.IterDataPipe"),
    ("import torch.utils.data.datapipes", "torch.utils.data.datapipes (IterDataPipe, MapDataPipe)"),
    ("import torch\ntorch.func.rearrange", "torch.func.rearrange"),
    ("import torchvision", "torchvision (datasets, models, transforms)"),
    ("import torch\ntorch.compile(lambda x: x)", "torch.compile"),
    ("import torch\ntorch.nn.SyncBatchNorm(2)", "torch.nn.SyncBatchNorm"),
    ("import torch.nn.quantized", "torch.nn.quantized"),
])
def test_out_of_scope_torch_features_fail_naming_the_feature(statement, feature, tmp_path):
    got = run_code(statement + "\n", tmp_path)
    assert got.returncode != 0
    assert f"gradkit does not implement {feature}" in got.stderr, got.stderr
    assert "see docs/torch_coverage.md" in got.stderr

# -- docs/torch_coverage.md ---------------------------------------------------------------

COVERAGE_PAGE = ROOT / "docs" / "torch_coverage.md"


def _coverage_module():
    import importlib.util
    spec = importlib.util.spec_from_file_location("make_torch_coverage",
                                                  ROOT / "docs" / "make_torch_coverage.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _not_covered_by_section(page: str) -> dict[str, list[str]]:
    """``{torch module: names}`` from each section's "Not covered:" paragraph."""
    found = {}
    for section in re.split(r"^#+ ", page, flags=re.M)[1:]:
        title = section.split("\n", 1)[0].strip()
        match = re.search(r"^Not covered:(.*?)(?:\n\n|\Z)", section, re.M | re.S)
        if match and re.fullmatch(r"torch[\w.]*", title):
            found[title] = re.findall(r"`([\w.]+)`", match.group(1))
    return found


def _torch_object(torch, name):
    obj = torch
    for part in name.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


def test_coverage_page_lists_what_gradkit_has():
    coverage = _coverage_module()
    page = COVERAGE_PAGE.read_text(encoding="utf-8")
    assert coverage.regenerate(page) == page, "run: python docs/make_torch_coverage.py"
    assert [m.group("name") for m in coverage.BLOCK.finditer(page)] == list(coverage.SECTIONS)


def _torch_has(torch_obj, section: str, name: str) -> bool:
    """``name`` is in torch's module, or is a submodule it does not import itself
    (``torch.nn.utils.prune``)."""
    import importlib
    if hasattr(torch_obj, name):
        return True
    try:
        importlib.import_module(f"{section}.{name}")
    except ImportError:
        return False
    return True


def test_coverage_page_names_agree_with_torch():
    torch = pytest.importorskip("torch")
    import gradkit  # noqa: F401 - the sections resolve gradkit's modules
    coverage = _coverage_module()
    for section in coverage.SECTIONS:
        torch_obj = _torch_object(torch, section)
        covered, own = coverage.split(section)
        assert [n for n in covered if not _torch_has(torch_obj, section, n)] == [], section
        assert [n for n in own if hasattr(torch_obj, n)] == [], f"{section}: torch has these"
    not_covered = _not_covered_by_section(COVERAGE_PAGE.read_text(encoding="utf-8"))
    assert len(not_covered) >= 12
    for section, names in not_covered.items():
        torch_obj = _torch_object(torch, section)
        gradkit_obj = coverage._resolve("gradkit" + section[len("torch"):])
        assert [n for n in names if not hasattr(torch_obj, n)] == [], f"{section}: not torch's"
        assert [n for n in names if hasattr(gradkit_obj, n)] == [], f"{section}: gradkit has"
