"""Bad input: a table of misuses, each with the error it must raise (type and message), after
which the program, its tensors, their gradients and any existing trace file are unchanged.

docs/misuse.md is generated from ``MISUSES``:  python tests/test_misuse.py > docs/misuse.md
(a test fails when the two drift apart).
"""
from __future__ import annotations

import errno
import gzip
import os
import sys
import warnings
from pathlib import Path
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import pytest

import gradkit
import gradkit.nn.functional as F  # noqa: N812 - torch's convention
from gradkit.autograd import Function, detect_anomaly
from gradkit.profiler import ChromeTraceWriter, profile

DOC = Path(__file__).resolve().parents[1] / "docs" / "misuse.md"


class Misuse(NamedTuple):
    category: str
    what: str
    action: Callable  # action(world) must raise
    error: type
    match: str        # regex searched in the message


class World:
    """A small program mid-training: a leaf with a gradient, a live graph and a trace file."""

    def __init__(self, directory: Path) -> None:
        self.dir = directory
        self.w = gradkit.tensor(np.array([0.5, -1.0, 2.0]), requires_grad=True)
        (self.w * self.w).sum().backward()              # w.grad = 2w
        self.h = self.w.exp()                             # a graph still to be used
        with profile() as prof:
            (self.w * 3).sum()
        self.prof = prof
        self.trace = directory / "existing.json"
        prof.export_chrome_trace(str(self.trace))

    def snapshot(self) -> tuple:
        return (self.w.detach().numpy().copy(), self.w.grad.numpy().copy(), self.w._version,
                self.h.detach().numpy().copy(), self.trace.read_bytes(),
                sorted(p.name for p in self.dir.iterdir()))


# -- helpers the table uses --------------------------------------------------------------------

class _TwoInputsOneGrad(Function):
    @staticmethod
    def forward(ctx, a, b):
        return a * b

    @staticmethod
    def backward(ctx, g):
        return g


class _WrongShapeGrad(Function):
    @staticmethod
    def forward(ctx, a):
        return a * 2

    @staticmethod
    def backward(ctx, g):
        return gradkit.ones(5, dtype=gradkit.float64)


class _SavesAnInt(Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(5)
        return a * 2

    @staticmethod
    def backward(ctx, g):
        return g


def _leaf(*shape):
    return gradkit.ones(*shape, dtype=gradkit.float64, requires_grad=True)


def _backward_twice(world):
    y = (world.w * 1).exp().sum()
    y.backward(gradkit.tensor(0.0, dtype=gradkit.float64))
    y.backward()


def _saved_tensor_after_free(world):
    y = (world.w * 1).exp()
    gradkit.autograd.grad(y.sum(), world.w)
    _ = y.grad_fn._saved_result


def _modify_saved_tensor(world):
    y = (world.w * 1).exp()
    y.add_(1)
    gradkit.autograd.grad(y.sum(), world.w)


def _hook(world, returns):
    y = world.w * 2
    y.register_hook(lambda g: returns)
    gradkit.autograd.grad(y.sum(), world.w)


def _nan_in_backward(world):
    x = gradkit.tensor([0.0, 1.0], dtype=gradkit.float64, requires_grad=True)
    with detect_anomaly(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (x.sqrt() * 0).sum().backward()


def _nan_in_forward(world):
    with detect_anomaly(check_forward=True), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gradkit.log(world.w * 1)


def _cli_summary(world, content, name: str = "bad.json") -> None:
    """``gradkit trace summary`` on a file with ``content``; raises SystemExit(code) on error."""
    from click.testing import CliRunner

    from gradkit.cli.main import main
    path = world.dir / name
    if content is not None:
        path.write_bytes(content)
    result = CliRunner().invoke(main, ["trace", "summary", str(path)])
    try:
        if result.exit_code:
            lines = result.output.strip().splitlines()
            assert len(lines) == 1 and "Traceback" not in result.output, result.output
            raise click_error(lines[0])
    finally:
        if content is not None:
            path.unlink()


class click_error(Exception):  # noqa: N801,N818 - reads as the CLI's one-line error
    """The one-line error ``gradkit trace summary`` printed (exit status 1)."""


def _export(world, path) -> None:
    world.prof.export_chrome_trace(str(path))


def _export_disk_full(world) -> None:
    def no_space(self, text):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    original = ChromeTraceWriter._emit
    ChromeTraceWriter._emit = no_space
    try:
        world.prof.export_chrome_trace(str(world.trace))
    finally:
        ChromeTraceWriter._emit = original


def _export_under_a_file(world) -> None:
    _export(world, world.trace / "t.json")


# -- the table ---------------------------------------------------------------------------------

MISUSES = [
    # wrong shapes
    Misuse("shape", "add of non-broadcastable shapes",
           lambda w: _leaf(2, 3) + _leaf(4), RuntimeError, r"size of tensor a \(3\) must match"),
    Misuse("shape", "matmul of mismatched inner dims",
           lambda w: _leaf(2, 3) @ _leaf(4, 2), RuntimeError,
           r"cannot be multiplied \(2x3 and 4x2\)"),
    Misuse("shape", "reshape to a different number of elements",
           lambda w: _leaf(2, 3).reshape(5), RuntimeError,
           r"shape '\[5\]' is invalid for input of size 6"),
    Misuse("shape", "view of a non-contiguous tensor",
           lambda w: _leaf(2, 3).t().view(6), RuntimeError, r"view size is not compatible"),
    Misuse("shape", "cat of tensors differing outside the cat dim",
           lambda w: gradkit.cat([_leaf(2, 3), _leaf(2, 4)], 0), RuntimeError,
           r"Sizes of tensors must match"),
    Misuse("shape", "backward with a gradient of the wrong shape",
           lambda w: (w.w * 2).backward(gradkit.ones(5, dtype=gradkit.float64)), RuntimeError,
           r"Mismatch in shape: grad_output\[0\] has a shape of"),
    Misuse("shape", "backward of a non-scalar without a gradient",
           lambda w: (w.w * 2).backward(), RuntimeError,
           r"grad can be implicitly created only for scalar"),
    Misuse("shape", "sum over a dim that does not exist",
           lambda w: w.w.sum(5), IndexError,
           r"Dimension out of range \(expected to be in range of \[-1, 0\], but got 5\)"),
    Misuse("shape", "index out of bounds",
           lambda w: w.w[7], IndexError, r"index 7 is out of bounds for dimension 0 with size 3"),
    Misuse("shape", "Linear layer fed the wrong number of features",
           lambda w: gradkit.nn.Linear(4, 2)(_leaf(2, 3)), RuntimeError,
           r"cannot be multiplied \(2x3 and 4x2\)"),
    Misuse("shape", "assigning a .grad of a different size",
           lambda w: setattr(w.w, "grad", gradkit.ones(4, dtype=gradkit.float64)), RuntimeError,
           r"assigned grad has data of a different size"),
    # wrong dtypes
    Misuse("dtype", "backward of a complex scalar",
           lambda w: (w.w * 1j).sum().backward(), RuntimeError, r"only for real scalar outputs"),
    Misuse("dtype", "requires_grad on an integer tensor",
           lambda w: gradkit.ones(3, dtype=gradkit.int64).requires_grad_(), RuntimeError,
           r"only Tensors of floating point dtype can require gradients"),  # torch's words
    Misuse("dtype", "in-place write of complex values into a real tensor",
           lambda w: (w.w * 1).add_(gradkit.tensor([1j, 1j, 1j])), RuntimeError,
           r"result type Complex\w* can't be cast to the desired output type"),
    Misuse("dtype", "matmul of an integer and a float tensor",
           lambda w: gradkit.ones(2, 2, dtype=gradkit.int64) @ gradkit.ones(2, 2), RuntimeError,
           r"expected m1 and m2 to have the same dtype"),
    Misuse("dtype", "cross_entropy with a float target of the wrong shape",
           lambda w: F.cross_entropy(_leaf(2, 3), gradkit.ones(2)), RuntimeError,
           r"expected target dtype to be Long or Byte, but got Float"),  # (class indices, as torch)
    # wrong devices
    Misuse("device", "moving to CUDA without CuPy/GPU",
           lambda w: w.w.to("cuda"), RuntimeError, r"CUDA support needs CuPy"),
    Misuse("device", "an unknown device type",
           lambda w: gradkit.device("tpu"), RuntimeError, r"Expected one of cpu, cuda device type"),
    # non-tensor arguments
    Misuse("argument", "autograd.grad with a string as inputs",
           lambda w: gradkit.autograd.grad((w.w * 2).sum(), "w"), TypeError,
           r"inputs must be a Tensor or a sequence of Tensors, but got str"),
    Misuse("argument", "backward with a string as gradient",
           lambda w: (w.w * 2).sum().backward(gradient="one"), TypeError,
           r"gradients can be either Tensors or None, but got str"),
    Misuse("argument", "an op given a string",
           lambda w: gradkit.exp("w"), TypeError,
           r"exp\(\): argument 'input' \(position 1\) must be Tensor, not str"),
    Misuse("argument", "a tensor plus a string",
           lambda w: w.w + "1", TypeError,  # torch's + answers NotImplemented to a str
           r"unsupported operand type\(s\) for \+: 'Tensor' and 'str'"),
    Misuse("argument", "a float as a reduction's dim (torch has several signatures)",
           lambda w: w.w.sum(dim=0.5), TypeError,
           r"^sum\(\) received an invalid combination of arguments - got \(dim=float, \), "
           r"but expected one of:$"),
    Misuse("argument", "a one-element tensor as an int dim (only a 0-d integer one reads)",
           lambda w: w.w.softmax(gradkit.tensor([0])), TypeError,
           r"softmax\(\): argument 'dim' \(position 1\) must be int, not Tensor"),
    Misuse("argument", "a float tensor as a size",
           lambda w: gradkit.zeros(gradkit.tensor(2.0)), TypeError,
           r"zeros\(\): argument 'size' \(position 1\) must be tuple of ints, not Tensor"),
    Misuse("argument", "a string among a shape's sizes",
           lambda w: w.w.reshape(3, "a"), TypeError,
           r"reshape\(\): argument 'shape' failed to unpack the object at pos 2 with error "
           r"\"type must be tuple of ints,but got str\""),
    Misuse("argument", "integer tensor to a negative integer power",
           lambda w: gradkit.tensor([2]) ** -1, RuntimeError,
           r"Integers to negative integer powers are not allowed"),
    Misuse("argument", "tensor() of an arbitrary object",
           lambda w: gradkit.tensor(object()), RuntimeError, r"Could not infer dtype of object"),
    Misuse("argument", "tensor() of a ragged list",
           lambda w: gradkit.tensor([[1.0, 2.0], [3.0]]), ValueError,
           r"expected sequence of length 2 at dim 1 \(got 1\)"),
    Misuse("argument", "save_for_backward of a non-tensor",
           lambda w: _SavesAnInt.apply(w.w), TypeError,
           r"save_for_backward can only save variables, but argument 0 is of type int"),
    Misuse("argument", "numpy() of a tensor that requires grad",
           lambda w: w.w.numpy(), RuntimeError,
           r"Can't call numpy\(\) on Tensor that requires grad"),
    Misuse("argument", "bool() of a multi-element tensor",
           lambda w: bool(w.w), RuntimeError,
           r"Boolean value of Tensor with more than one value is ambiguous"),
    Misuse("argument", "autograd.grad of an input the output does not use",
           lambda w: gradkit.autograd.grad((w.w * 2).sum(), [w.w, _leaf(2)]), RuntimeError,
           r"appears to not have been used in the graph"),
    # NaN / Inf
    Misuse("nan", "anomaly mode: backward produces NaN (sqrt at 0 times 0)",
           _nan_in_backward, RuntimeError,
           r"Function 'SqrtBackward0' returned nan values in its 0th output"),
    Misuse("nan", "anomaly mode check_forward: log of a negative input",
           _nan_in_forward, RuntimeError,
           r"Op 'gradkit::log' returned nan values in its 0th output in the forward pass"),
    # empty tensors and zero-size dims
    Misuse("empty", "max() of an empty tensor",
           lambda w: gradkit.tensor([]).max(), RuntimeError,
           r"Expected reduction dim to be specified for input.numel\(\) == 0"),
    Misuse("empty", "argmax() of an empty tensor",
           lambda w: gradkit.tensor([]).argmax(), IndexError,
           r"argmax\(\): Expected reduction dim to be specified for input.numel\(\) == 0"),
    Misuse("empty", "item() of an empty tensor",
           lambda w: gradkit.tensor([]).item(), RuntimeError,
           r"a Tensor with 0 elements cannot be converted to Scalar"),
    Misuse("empty", "item() of a tensor of three elements",
           lambda w: w.w.item(), RuntimeError,
           r"a Tensor with 3 elements cannot be converted to Scalar"),
    Misuse("empty", "matmul with a zero-size dim that does not match",
           lambda w: gradkit.zeros(0, 3) @ gradkit.zeros(4, 2), RuntimeError,
           r"cannot be multiplied \(0x3 and 4x2\)"),
    # huge and negative shapes
    Misuse("size", "a tensor too large to allocate (3.5 PiB)",
           lambda w: gradkit.zeros(10**6, 10**6, 10**3), MemoryError, r"Unable to allocate"),
    Misuse("size", "a negative dimension",
           lambda w: gradkit.ones(-1), RuntimeError,
           r"Trying to create tensor with negative dimension"),
    # freed graphs and in-place misuse
    Misuse("graph", "backward through a graph a second time",
           _backward_twice, RuntimeError, r"Trying to backward through the graph a second time"),
    Misuse("graph", "reading a saved tensor after backward freed it",
           _saved_tensor_after_free, RuntimeError,
           r"Trying to backward through the graph a second time"),
    Misuse("graph", "modifying in place a tensor saved for backward",
           _modify_saved_tensor, RuntimeError,
           r"variables needed for gradient computation has been modified by an inplace operation"),
    Misuse("graph", "in-place op on one output of unbind (a multi-output view)",
           lambda w: (w.w * 1).unbind(0)[0].mul_(2), RuntimeError,
           r"Output 0 of \w+ is a view and is being modified inplace"),
    Misuse("graph", "in-place op on a leaf that requires grad",
           lambda w: w.w.mul_(2), RuntimeError,
           r"a leaf Variable that requires grad is being used in an in-place operation"),
    # hooks
    Misuse("hook", "a tensor hook returning a gradient of the wrong shape",
           lambda w: _hook(w, gradkit.ones(5, dtype=gradkit.float64)), RuntimeError,
           r"hook '<lambda>' has changed the size of value"),
    Misuse("hook", "a tensor hook returning a non-tensor",
           lambda w: _hook(w, "grad"), TypeError,
           r"expected Variable, but hook returned 'str'"),
    Misuse("hook", "a hook on a tensor that does not require grad",
           lambda w: gradkit.ones(2).register_hook(lambda g: g), RuntimeError,
           r"cannot register a hook on a tensor that doesn't require gradient"),
    # custom Functions
    Misuse("function", "custom Function returning too few gradients",
           lambda w: _TwoInputsOneGrad.apply(w.w, w.w * 1).sum().backward(), RuntimeError,
           r"OneGradBackward returned an incorrect number of gradients \(expected 2, got 1"),
    Misuse("function", "custom Function returning a gradient of the wrong shape",
           lambda w: gradkit.autograd.grad(_WrongShapeGrad.apply(w.w).sum(), w.w), RuntimeError,
           r"invalid gradient at index 0 - got \[5\] but expected shape compatible with \[3\]"),
    # trace files fed to `gradkit trace summary`
    Misuse("trace", "summary of a file that is not JSON",
           lambda w: _cli_summary(w, b"{not json"), click_error,
           r"is not a readable Chrome trace \(JSON\)"),
    Misuse("trace", "summary of an empty file",
           lambda w: _cli_summary(w, b""), click_error, r"is not a readable Chrome trace"),
    Misuse("trace", "summary of binary garbage",
           lambda w: _cli_summary(w, b"\xff\xfe\x00garbage"), click_error,
           r"is not a readable Chrome trace"),
    Misuse("trace", "summary of a truncated .json.gz",
           lambda w: _cli_summary(w, gzip.compress(b'{"traceEvents": []}')[:10], "cut.json.gz"),
           click_error, r"Compressed file ended before the end-of-stream marker"),
    Misuse("trace", "summary of a trace whose traceEvents is not a list",
           lambda w: _cli_summary(w, b'{"traceEvents": 5}'), click_error,
           r"'traceEvents' must be a list"),
    Misuse("trace", "summary of an event with a non-numeric timestamp",
           lambda w: _cli_summary(w, b'{"traceEvents": [{"ph": "X", "name": "a", "ts": "abc", '
                                     b'"dur": 1, "pid": 1, "tid": 1}]}'),
           click_error, r"bad.json: .*could not convert string to float: 'abc'"),
    Misuse("trace", "summary of a file that does not exist",
           lambda w: _cli_summary(w, None, "missing.json"), click_error, r"no such trace file"),
    # writing traces
    Misuse("trace", "export_chrome_trace to a path that is a directory",
           lambda w: _export(w, w.dir), IsADirectoryError, r"is a directory; give a file name"),
    Misuse("trace", "export_chrome_trace under a path that is a regular file",
           _export_under_a_file, OSError, r"Not a directory|File exists"),
    Misuse("trace", "the disk fills while the trace is written (ENOSPC)",
           _export_disk_full, OSError, r"No space left on device"),
]


def _ids():
    return [f"{i:02d}-{m.category}-{m.what[:40]}" for i, m in enumerate(MISUSES)]


@pytest.mark.parametrize("misuse", MISUSES, ids=_ids())
def test_misuse_raises_a_clear_error_and_changes_nothing(misuse, tmp_path):
    world = World(tmp_path)
    before = world.snapshot()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(misuse.error, match=misuse.match):
            misuse.action(world)
    after = world.snapshot()
    for b, a in zip(before, after):
        if isinstance(b, np.ndarray):
            np.testing.assert_array_equal(a, b)
        else:
            assert a == b
    # the program goes on: the graph built before the misuse still differentiates
    (grad,) = gradkit.autograd.grad(world.h.sum(), world.w)
    np.testing.assert_allclose(grad.numpy(), np.exp(before[0]))


def test_the_table_has_at_least_40_misuses_over_every_category():
    assert len(MISUSES) >= 40
    assert {m.category for m in MISUSES} >= {
        "shape", "dtype", "device", "argument", "nan", "empty", "size", "graph", "hook",
        "function", "trace"}


def test_a_misuse_that_changes_state_is_caught(tmp_path):
    """The intactness check can fail: a failing action that first bumps w's grad is noticed."""
    world = World(tmp_path)
    before = world.snapshot()
    world.w.grad.add_(1)
    assert not np.array_equal(world.snapshot()[1], before[1])


def render_doc() -> str:
    """docs/misuse.md: the table above as Markdown."""
    lines = ["# Misuse table", "",
             "Every row is a test in `tests/test_misuse.py`: the misuse must raise this error, "
             "and leave the program, its tensors, their `.grad` and any existing trace file "
             "unchanged (a failed trace write leaves no temporary file behind). "
             "Where torch's argument parser lists every signature after \"received an invalid "
             "combination of arguments - got (...), but expected one of:\", gradkit's message "
             "is that first line alone (the listing is not copied). "
             "Regenerate with `python tests/test_misuse.py > docs/misuse.md`.", "",
             "| # | category | misuse | error | message matches |",
             "|---|---|---|---|---|"]
    for i, m in enumerate(MISUSES):
        error = "one-line CLI error, exit 1" if m.error is click_error else f"`{m.error.__name__}`"
        pattern = m.match.replace("|", r"\|")
        lines.append(f"| {i} | {m.category} | {m.what} | {error} | `{pattern}` |")
    return "\n".join(lines) + "\n"


def test_doc_table_is_in_sync():
    assert DOC.read_text() == render_doc(), "run: python tests/test_misuse.py > docs/misuse.md"


if __name__ == "__main__":
    sys.stdout.write(render_doc())
