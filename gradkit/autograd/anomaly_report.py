"""AnomalyReport: what anomaly mode knows about a NaN/Inf or an error, as data and as text.

Capture (in ``anomaly_mode``) stores only ``(code, lasti)`` pairs; everything here
runs once, when something went wrong, so it may be as slow as it likes. The CLI
renders the same fields with rich; ``render()`` gives plain text.

Fields of :class:`AnomalyReport` (all plain data, safe to keep after the graph is gone):

- ``kind``: ``"backward_nan"`` (a node's backward returned NaN), ``"hook_nan"`` (a
  gradient hook returned NaN), ``"backward_error"`` (an exception inside a node's
  backward or its hooks) or ``"forward_nonfinite"`` (``check_forward``: an op's forward
  output has NaN/Inf).
- ``message``: one line saying what went wrong (the RuntimeError's message for our errors).
- ``node_name``: the backward node, e.g. ``"SqrtBackward0"`` (None for a forward op without node).
- ``op_name``: the forward op, e.g. ``"gradkit::sqrt"`` (None when unknown, e.g. custom Functions).
- ``output_index``: which output held the NaN/Inf (None for errors).
- ``stack``: the user's forward call stack, outermost first, as :class:`SourceFrame`
  (None: no forward information was captured).
- ``parents``: for nodes made during a ``create_graph`` backward, the chain of nodes whose
  backward created them, as :class:`ParentCall` (innermost first).
- ``inputs`` / ``outputs``: :class:`TensorStats` of the values involved (saved forward inputs
  and incoming gradients; the offending output): label, shape, dtype, numel, nan/inf counts,
  min/max of the finite values and the index of the first NaN/Inf.
- ``path``: node names from the loss down to this node (None when unknown).
"""
from __future__ import annotations

import linecache
from dataclasses import dataclass, field
from typing import NamedTuple

from gradkit._user_frames import user_frame_count
from gradkit.backend import get_array_module

NO_FORWARD_INFO = ("No forward pass information available. Enable detect anomaly during forward "
                   "pass for more information.")


@dataclass
class SourceFrame:
    """One frame of the forward call stack: ``file:line``, the function and the line's text."""

    filename: str
    lineno: int
    function: str
    line: str

    def render(self) -> str:
        text = f'  File "{self.filename}", line {self.lineno}, in {self.function}\n'
        return text + (f"    {self.line}\n" if self.line else "")


@dataclass
class TensorStats:
    """Shape, dtype and value statistics of one array (min/max over its finite values)."""

    label: str
    shape: tuple
    dtype: str
    numel: int
    nan: int | None = None
    inf: int | None = None
    min: float | None = None
    max: float | None = None
    first_nonfinite: tuple | None = None  # index of the first NaN/Inf element

    def render(self) -> str:
        text = f"{self.label}: shape={list(self.shape)} dtype={self.dtype}"
        if self.nan is None:
            return text
        text += f" min={self.min} max={self.max} nan={self.nan} inf={self.inf}"
        if self.first_nonfinite is not None:
            text += f" first at {list(self.first_nonfinite)}"
        return text


@dataclass
class ParentCall:
    """A node whose backward (under ``create_graph``) created the node in the report."""

    node_name: str
    stack: list[SourceFrame] | None


@dataclass
class AnomalyReport:
    """Everything anomaly mode found out about one anomaly; ``render()`` gives the text."""

    kind: str
    message: str
    node_name: str | None = None
    op_name: str | None = None
    output_index: int | None = None
    stack: list[SourceFrame] | None = None
    parents: list[ParentCall] = field(default_factory=list)
    inputs: list[TensorStats] = field(default_factory=list)
    outputs: list[TensorStats] = field(default_factory=list)
    path: list[str] | None = None

    @property
    def source(self) -> SourceFrame | None:
        """The innermost user frame: the line of the forward call behind the anomaly."""
        return self.stack[-1] if self.stack else None

    def traceback_text(self) -> str:
        """PyTorch's anomaly warnings as one text: the forward traceback, then the chain of
        parents."""
        return "".join(self.warning_texts())

    def warning_texts(self) -> list[str]:
        """PyTorch's anomaly warnings, one per entry: the forward traceback, then one per
        parent of a double backward ("Previous calculation was induced by ...")."""
        where = self.node_name or self.op_name
        if self.kind == "forward_nonfinite":
            text = f"Error detected in {where}. Traceback of the forward call:\n"
        else:
            text = f"Error detected in {where}. Traceback of forward call that caused the error:\n"
        texts = [text + _stack_text(self.stack)]
        for parent in self.parents:
            texts.append(f"\n\nPrevious calculation was induced by {parent.node_name}. Traceback "
                         "of forward call that induced the previous calculation:\n"
                         + _stack_text(parent.stack))
        return texts

    def render(self) -> str:
        """The full report as text: message, source line, statistics, traceback, path."""
        lines = [self.message]
        if self.source is not None:
            s = self.source
            lines.append(f"Source: {s.filename}:{s.lineno} in {s.function}: {s.line}")
        names = [n for n in (self.op_name, self.node_name) if n]
        if names:
            lines.append("Op: " + " / ".join(names))
        if self.inputs:
            lines.append("Inputs:")
            lines += [f"  {s.render()}" for s in self.inputs]
        if self.outputs:
            lines.append("Offending output:")
            lines += [f"  {s.render()}" for s in self.outputs]
        if self.path:
            lines.append("Path from the loss: " + " -> ".join(self.path))
        lines.append(self.traceback_text().rstrip("\n"))
        return "\n".join(lines)


def _stack_text(stack) -> str:
    if not stack:
        return NO_FORWARD_INFO
    return "".join(frame.render() for frame in stack)


# -- building the pieces (only on error) ---------------------------------------------

def _line_of(code, lasti: int) -> int:
    for start, end, line in code.co_lines():
        if start <= lasti < end and line is not None:
            return line
    return code.co_firstlineno


def source_frames(frames) -> list[SourceFrame] | None:
    """Format a captured ``(code, lasti, ...)`` tuple (innermost first), outermost first.

    Frames of a runner above the user's script (runpy, click, the console script) are left out.
    """
    if frames is None:
        return None
    out = []
    for i in range(2 * user_frame_count(frames[::2]) - 2, -1, -2):
        code, lasti = frames[i], frames[i + 1]
        lineno = _line_of(code, lasti)
        line = linecache.getline(code.co_filename, lineno).strip()
        out.append(SourceFrame(code.co_filename, lineno, code.co_name, line))
    return out


def tensor_stats(label: str, value) -> TensorStats | None:
    """Statistics of a Tensor or array (None for anything else)."""
    data = getattr(value, "_data", value)
    if not hasattr(data, "dtype") or not hasattr(data, "shape"):
        return None
    xp = get_array_module(data)
    stats = TensorStats(label, tuple(data.shape), str(data.dtype), int(data.size))
    if data.dtype.kind not in "fciub":
        return stats
    magnitude = xp.abs(data) if data.dtype.kind == "c" else data
    nan = xp.isnan(magnitude) if data.dtype.kind in "fc" else xp.zeros(data.shape, bool)
    inf = xp.isinf(magnitude) if data.dtype.kind in "fc" else nan
    stats.nan, stats.inf = int(nan.sum()), int(inf.sum())
    if stats.nan or stats.inf:
        stats.first_nonfinite = tuple(int(i) for i in xp.argwhere(nan | inf)[0])
    finite = magnitude[~(nan | inf)]
    if finite.size:
        stats.min, stats.max = float(finite.min()), float(finite.max())
    return stats


class InducedTrace(NamedTuple):
    """The capture of a node made during the backward of another (``create_graph``)."""

    frames: tuple
    parent_name: str
    parent_trace: object  # the parent's own capture: frames, InducedTrace or None


def trace_parts(trace) -> tuple[list[SourceFrame] | None, list[ParentCall]]:
    """A node's capture (frames tuple or InducedTrace) as its frames and chain of parents."""
    if type(trace) is not InducedTrace:
        return source_frames(trace), []
    parents = []
    parent = trace
    while type(parent) is InducedTrace:
        grandparent = parent.parent_trace
        frames = grandparent.frames if type(grandparent) is InducedTrace else grandparent
        parents.append(ParentCall(parent.parent_name, source_frames(frames)))
        parent = grandparent
    return source_frames(trace.frames), parents


def path_between(root, node) -> list[str] | None:
    """Node names on a shortest path from ``root`` (the loss's node) to ``node``."""
    if root is None:
        return None
    came_from = {root: None}
    frontier = [root]
    while frontier and node not in came_from:
        following = []
        for current in frontier:
            for child in current._next:
                if child is not None and child not in came_from:
                    came_from[child] = current
                    following.append(child)
        frontier = following
    if node not in came_from:
        return None
    path = []
    while node is not None:
        path.append(node.name())
        node = came_from[node]
    return path[::-1]
