"""Running a script as __main__: argv, sys.path, __file__, exit codes, exceptions, Ctrl-C."""
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from gradkit.cli.script_runner import (
    EXIT_INTERRUPTED, ScriptNotFoundError, format_script_traceback, run_script)


def write_script(folder: Path, body: str, name: str = "script.py") -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(body))
    return path


def test_script_sees_its_own_argv_file_name_and_folder(tmp_path, capsys):
    script = write_script(tmp_path, """
        import sys
        print(__name__, sys.argv[1:], __file__.endswith("script.py"), sys.path[0])
    """)
    result = run_script(script, ["--epochs", "3", "x y"])
    assert result.exit_code == 0 and result.exception is None
    out = capsys.readouterr().out.split()
    assert out[0] == "__main__"
    assert out[-1] == str(tmp_path.resolve())
    assert "['--epochs', '3', 'x y']" in " ".join(out)


def test_argv_and_path_are_restored_even_after_a_failure(tmp_path):
    argv, path = list(sys.argv), list(sys.path)
    script = write_script(tmp_path, "import sys; sys.path.append('junk'); raise ValueError('x')")
    assert run_script(script, ["a"]).exit_code == 1
    assert sys.argv == argv and sys.path == path


def test_script_imports_its_sibling_modules(tmp_path):
    write_script(tmp_path, "VALUE = 7", name="cli_test_helper.py")
    script = write_script(tmp_path, "import cli_test_helper, sys; sys.exit(cli_test_helper.VALUE)")
    try:
        assert run_script(script).exit_code == 7
    finally:
        sys.modules.pop("cli_test_helper", None)


@pytest.mark.parametrize("exit_call, code", [
    ("sys.exit()", 0), ("sys.exit(0)", 0), ("sys.exit(3)", 3), ("sys.exit(None)", 0),
    ("sys.exit('bad config')", 1), ("raise RuntimeError('boom')", 1),
    ("raise KeyboardInterrupt", EXIT_INTERRUPTED),
])
def test_exit_code_is_the_scripts(tmp_path, exit_call, code):
    script = write_script(tmp_path, f"import sys\n{exit_call}\n")
    assert run_script(script).exit_code == code


def test_sys_exit_with_a_message_prints_it(tmp_path, capsys):
    run_script(write_script(tmp_path, "import sys; sys.exit('bad config')"))
    assert capsys.readouterr().err == "bad config\n"


def test_keyboard_interrupt_is_reported_not_raised(tmp_path):
    result = run_script(write_script(tmp_path, "raise KeyboardInterrupt"))
    assert result.interrupted and isinstance(result.exception, KeyboardInterrupt)


def test_missing_script_raises_a_clear_error(tmp_path):
    with pytest.raises(ScriptNotFoundError, match=r"script not found: .*nope\.py"):
        run_script(tmp_path / "nope.py")
    with pytest.raises(ScriptNotFoundError, match="script not found"):
        run_script(tmp_path)  # a folder is not a script


def test_traceback_starts_at_the_script(tmp_path):
    script = write_script(tmp_path, """
        def inner():
            raise ValueError("bad value 42")
        inner()
    """)
    result = run_script(script)
    text = format_script_traceback(result.exception)
    assert text.startswith("Traceback (most recent call last):\n")
    assert "ValueError: bad value 42" in text
    assert f'File "{script}", line 4, in <module>' in text
    assert "runpy" not in text and "script_runner" not in text


def _python_traceback_frames(script: Path) -> list[str]:
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    return [line for line in proc.stderr.splitlines() if line.lstrip().startswith("File ")]


def test_traceback_frames_match_plain_python(tmp_path):
    script = write_script(tmp_path, """
        import json
        def parse():
            return json.loads("{not json")
        parse()
    """)
    ours = format_script_traceback(run_script(script).exception).splitlines()
    assert [line for line in ours if line.lstrip().startswith("File ")] == \
        _python_traceback_frames(script)
