"""Arguments torch's parser refuses (None, a missing or extra one, a wrong type), run in
torch and gradkit: the same error type and the same first line of its message (where torch
lists its signatures after that line, gradkit gives the first line only)."""
import warnings

import pytest

import gradkit

torch = pytest.importorskip("torch")


def _outcome(module, call):
    """("ok", shape, dtype, values) of ``call(module)``, or (error type, first line)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch.range's deprecation
            out = call(module)
    except (TypeError, RuntimeError, ValueError, IndexError) as error:
        return type(error).__name__, str(error).split("\n")[0]
    return "ok", tuple(out.shape), str(out.dtype).split(".")[-1], out.tolist()


def assert_same_outcome(call):
    expected = _outcome(torch, call)
    assert _outcome(gradkit, call) == expected


_RANGES = {
    "arange(0, None)": lambda m: m.arange(0, None),
    "arange(None, 5)": lambda m: m.arange(None, 5),
    "arange(0, 5, None)": lambda m: m.arange(0, 5, None),
    "arange(0, 5, step=None)": lambda m: m.arange(0, 5, step=None),
    "arange(end=None)": lambda m: m.arange(end=None),
    "arange(start=0, end=None)": lambda m: m.arange(start=0, end=None),
    "arange()": lambda m: m.arange(),
    "arange(5, step=2)": lambda m: m.arange(5, step=2),
    "arange(0, 5, 1, 2)": lambda m: m.arange(0, 5, 1, 2),
    "arange(0, 'a')": lambda m: m.arange(0, "a"),
    "arange(end=5)": lambda m: m.arange(end=5),
    "arange(start=1, end=5)": lambda m: m.arange(start=1, end=5),
    "arange(1, 6, step=2)": lambda m: m.arange(1, 6, step=2),
    "arange(tensor)": lambda m: m.arange(m.tensor(5)),
    "linspace(0, None, 3)": lambda m: m.linspace(0, None, 3),
    "linspace(None, 1, 3)": lambda m: m.linspace(None, 1, 3),
    "linspace(0, 1, None)": lambda m: m.linspace(0, 1, None),
    "linspace(0, 1, steps=None)": lambda m: m.linspace(0, 1, steps=None),
    "linspace(0, 1)": lambda m: m.linspace(0, 1),
    "linspace(0)": lambda m: m.linspace(0),
    "linspace(0, 1, 2.0)": lambda m: m.linspace(0, 1, 2.0),
    "linspace(0, 1, True)": lambda m: m.linspace(0, 1, True),
    "linspace(0, 1, 3, 2)": lambda m: m.linspace(0, 1, 3, 2),
    "linspace(0, 'a', 3)": lambda m: m.linspace(0, "a", 3),
    "linspace(0, 1, tensor)": lambda m: m.linspace(0, 1, m.tensor(3)),
    "linspace(keywords)": lambda m: m.linspace(start=0, end=1, steps=3),
    "logspace(0, None, 3)": lambda m: m.logspace(0, None, 3),
    "logspace(0, 1, None)": lambda m: m.logspace(0, 1, None),
    "logspace(0, 1, 3, None)": lambda m: m.logspace(0, 1, 3, None),
    "logspace(0, 1, 3, base=None)": lambda m: m.logspace(0, 1, 3, base=None),
    "logspace(0, 1, 3, 2j)": lambda m: m.logspace(0, 1, 3, 2j),
    "logspace(0, 1, 3, 2, 5)": lambda m: m.logspace(0, 1, 3, 2, 5),
    "logspace(0, 1, 3, base=tensor)": lambda m: m.logspace(0, 1, 3, base=m.tensor(2)),
    "logspace(0, 1, 3, True)": lambda m: m.logspace(0, 1, 3, True),
    "range(0, None)": lambda m: m.range(0, None),
    "range(None, 5)": lambda m: m.range(None, 5),
    "range(0, 5, None)": lambda m: m.range(0, 5, None),
    "range(None)": lambda m: m.range(None),
    "range(5)": lambda m: m.range(5),
    "range()": lambda m: m.range(),
    "range(end=3)": lambda m: m.range(end=3),
    "range(0, step=2)": lambda m: m.range(0, step=2),
    "range(start=0, end=None)": lambda m: m.range(start=0, end=None),
    "range(0, 5, 1, 2)": lambda m: m.range(0, 5, 1, 2),
    "range(0, 5, foo=1)": lambda m: m.range(0, 5, foo=1),
    "range(0, 5, end=3)": lambda m: m.range(0, 5, end=3),
    "range(tensors)": lambda m: m.range(m.tensor(0), m.tensor(5.0)),
}


@pytest.mark.parametrize("name", list(_RANGES))
def test_range_arguments_as_torch(name):
    """None or a missing, extra or ill-typed number: arange, linspace and logspace have
    several signatures (torch's "invalid combination"; arange's one-number form names the
    argument), range one (too many, twice, missing, ill-typed, unknown, in torch's words)."""
    assert_same_outcome(_RANGES[name])
