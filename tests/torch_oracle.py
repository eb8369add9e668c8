"""Run one program under torch and under gradkit and compare what each observed.

A program takes the library as its argument (``lib.ones``, ``lib.autograd...``)
and returns what it saw; an exception is an observation too (its type and
message, with ``torch.`` spelled ``gradkit.``). Only for test files that
``pytest.importorskip("torch")``.
"""
import gradkit


def outcome(program, lib):
    """What ``program(lib)`` returned, or the type and message of what it raised."""
    try:
        return ("returned", program(lib))
    except Exception as e:  # noqa: BLE001 - the error is the observation
        return ("raised", type(e).__name__, str(e).replace("torch.", "gradkit."))


def same_as_torch(program):
    """Assert gradkit observes what torch does; return torch's observation."""
    import torch
    expected = outcome(program, torch)
    assert outcome(program, gradkit) == expected
    return expected
