"""Cases the differential fuzzer found in views, indexing and in-place writes, each run under
torch and gradkit: the same values, gradients and errors (type and message)."""
import pytest

import gradkit

torch = pytest.importorskip("torch")


def _error(program, lib):
    try:
        program(lib)
    except Exception as error:  # noqa: BLE001 - the error itself is the result compared
        return type(error).__name__, str(error)
    return None


def same_error_as_torch(program, *, message=True):
    """``program(lib)`` raises the same error type (and message) under torch and gradkit."""
    expected, got = _error(program, torch), _error(program, gradkit)
    assert expected is not None, "torch computes: the case is no error case"
    assert got is not None, f"gradkit computed where torch raised {expected}"
    assert got[0] == expected[0], (got, expected)
    if message:
        assert got[1].splitlines()[0].split(" - ")[0] == expected[1].splitlines()[0].split(
            " - ")[0], (got, expected)


@pytest.mark.parametrize("method", ["expand", "reshape", "view", "permute", "repeat", "flip"])
@pytest.mark.parametrize("shape", [(), (2, 3)])
def test_shape_methods_need_their_sizes(method, shape):
    same_error_as_torch(lambda lib: getattr(lib.ones(shape), method)())


@pytest.mark.parametrize("method", ["expand", "reshape", "view", "permute", "flip"])
def test_an_empty_size_tuple_is_a_0d_tensors_sizes(method):
    x = gradkit.tensor(2.0)
    assert getattr(x, method)(()).shape == getattr(torch.tensor(2.0), method)(()).shape == ()
