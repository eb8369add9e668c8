"""Python 3.10 is supported (requires-python >= 3.10): 3.11-only features go through _compat."""
import ast
import pathlib

import pytest

import gradkit
from gradkit import _compat

ROOT = pathlib.Path(__file__).resolve().parent.parent


def nan_error(**anomaly):
    x = gradkit.zeros(1, requires_grad=True)
    with gradkit.autograd.detect_anomaly(**anomaly), pytest.warns(UserWarning):
        with pytest.raises(RuntimeError) as info:
            (x.sqrt() * 0).sum().backward()
    return info.value


@pytest.mark.parametrize("has_add_note", [True, False], ids=["3.11+", "3.10"])
def test_anomaly_report_is_a_note_with_or_without_add_note(monkeypatch, has_add_note):
    if has_add_note and not _compat.HAS_ADD_NOTE:
        pytest.skip("this Python has no BaseException.add_note")
    monkeypatch.setattr(_compat, "HAS_ADD_NOTE", has_add_note)
    err = nan_error()
    assert str(err) == "Function 'SqrtBackward0' returned nan values in its 0th output."
    assert err.__notes__ == [err.anomaly.render()]


def test_add_note_fallback_appends_like_python_311(monkeypatch):
    monkeypatch.setattr(_compat, "HAS_ADD_NOTE", False)
    err = ValueError("x")
    _compat.add_note(err, "first")
    _compat.add_note(err, "second")
    assert err.__notes__ == ["first", "second"]


PY311_ONLY_NAMES = {"ExceptionGroup", "BaseExceptionGroup", "tomllib", "Self", "StrEnum",
                    "TaskGroup", "LiteralString", "assert_never", "reveal_type"}


@pytest.mark.parametrize("folder", ["gradkit", "cli"])
def test_no_python_311_only_features_outside_compat(folder):
    found = []
    for path in sorted((ROOT / folder).rglob("*.py")):
        if path.name == "_compat.py":
            continue
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if type(node).__name__ == "TryStar":  # except*
                found.append(f"{path.name}:{node.lineno} except*")
            elif isinstance(node, ast.Attribute) and node.attr == "add_note" and not (
                    isinstance(node.value, ast.Name) and node.value.id == "_compat"):
                found.append(f"{path.name}:{node.lineno} .add_note")
            elif isinstance(node, ast.Name) and node.id in PY311_ONLY_NAMES:
                found.append(f"{path.name}:{node.lineno} {node.id}")
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                names = {a.name for a in node.names} | {getattr(node, "module", None)}
                found += [f"{path.name}:{node.lineno} {n}" for n in names & PY311_ONLY_NAMES]
    assert found == []
