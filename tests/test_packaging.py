"""The wheel a user installs holds every package: an editable install hides a missing one."""

import pathlib
import shutil
import subprocess
import sys
import zipfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


def source_packages() -> set[str]:
    """Every folder with an __init__.py under gradkit/ and cli/, named as installed."""
    found = {"gradkit.cli"}
    for init in (ROOT / "gradkit").rglob("__init__.py"):
        folder = init.parent.relative_to(ROOT)
        if folder.parts[:2] != ("gradkit", "cli"):  # the symlink some checkouts keep
            found.add(".".join(folder.parts))
    return found


def source_modules() -> set[str]:
    """Every module a user can import, but the CLI's entry module (importing it runs the CLI)."""
    names = set()
    for package in source_packages():
        folder = ROOT / "cli" if package == "gradkit.cli" else ROOT.joinpath(*package.split("."))
        names |= {f"{package}.{path.stem}" for path in folder.glob("*.py")}
    return {name.removesuffix(".__init__") for name in names if not name.endswith("__main__")}


def test_pyproject_lists_every_package():
    tomllib = pytest.importorskip("tomllib")
    listed = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    assert set(listed) == source_packages()


def test_a_built_wheel_imports_every_module(tmp_path):
    pytest.importorskip("setuptools")
    # A copy of the sources: setuptools reuses a build/ folder, which would hide a missing package.
    source = tmp_path / "source"
    skip = shutil.ignore_patterns("__pycache__", "*.egg-info", "build", "cli")
    shutil.copytree(ROOT / "gradkit", source / "gradkit", ignore=skip)
    shutil.copytree(ROOT / "cli", source / "cli", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
         "-w", str(tmp_path / "wheel"), str(source)],
        capture_output=True, text=True, timeout=300,
    )
    if build.returncode != 0 and "No module named" in build.stderr:
        pytest.skip(f"cannot build a wheel here: {build.stderr.strip()[-200:]}")
    assert build.returncode == 0, build.stderr
    (wheel,) = (tmp_path / "wheel").glob("gradkit-*.whl")
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    modules = sorted(source_modules())
    walk = (
        "import importlib, gradkit\n"
        f"assert gradkit.__file__.startswith({str(site)!r}), gradkit.__file__\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "print('imported')\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", walk], cwd=site, capture_output=True, text=True, timeout=300,
        env={"PATH": "", "PYTHONPATH": str(site), "PYTHONNOUSERSITE": "1"},
    )
    assert run.stdout.strip().endswith("imported"), run.stderr[-2000:]
