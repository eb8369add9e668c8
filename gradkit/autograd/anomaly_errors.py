"""Anomaly mode's errors: a node's report (what it saved, its gradients, its forward stack),
put on the exception and warned with the user's stack level, as torch."""
from __future__ import annotations

import sys
import warnings

from gradkit import _compat
from gradkit._user_frames import internal_files, is_internal
from gradkit.autograd import anomaly_report as report_mod
from gradkit.autograd.anomaly_report import AnomalyReport
from gradkit.autograd.graph import AccumulateGrad


def _saved_stats(node) -> list:
    """Statistics of what the node saved from its forward inputs/outputs, by name."""
    saved = node.saved
    spec = getattr(node.op, "save_spec", None)
    if not saved or spec is None:
        return []
    stats = []
    names = getattr(node.op, "input_names", [])
    for (kind, index, attr), value in zip(spec, saved, strict=False):
        if attr or kind == "inputs":
            continue
        name = names[index] if kind == "input" and index < len(names) else f"result{index or ''}"
        data = getattr(value, "data", value)
        item = report_mod.tensor_stats(f"saved {name}", data)
        if item is not None:
            stats.append(item)
    return stats


def node_report(kind: str, message: str, node, run, output_index=None, grads=None,
                grad_inputs=None) -> AnomalyReport:
    """The report on a node of a backward run (``run``: [the loss's node] or None)."""
    stack, parents = report_mod.trace_parts(node.anomaly_trace)
    inputs = _saved_stats(node)
    if type(node) is AccumulateGrad:  # a leaf's hook failed: show the leaf
        inputs.append(report_mod.tensor_stats("leaf", node.variable))
    for i, g in enumerate(grads or ()):
        item = g is not None and report_mod.tensor_stats(f"grad_output {i}", g)
        if item:
            inputs.append(item)
    outputs = []
    if output_index is not None and grad_inputs is not None:
        item = report_mod.tensor_stats(f"grad_input {output_index}", grad_inputs[output_index])
        outputs = [item] if item else []
    path = report_mod.path_between(run[0], node) if run else None
    op_name = getattr(node.op, "profiler_name", None)
    return AnomalyReport(kind, message, node.name(), op_name, output_index, stack, parents,
                         inputs, outputs, path)


def attach_report(exc: BaseException, report: AnomalyReport) -> None:
    """Put the report on the exception (and its text in a note), then warn like torch."""
    exc.anomaly = report
    _compat.add_note(exc, report.render())
    try:
        level = _user_stacklevel()
        for text in report.warning_texts():  # as torch: one warning per link of the chain
            warnings.warn(text, stacklevel=level)
    except Warning:  # warnings raised as errors: the report is on the exception already
        pass


def _user_stacklevel() -> int:
    """warnings.warn's stacklevel that points at the innermost user frame (its backward call)."""
    level, frame = 1, sys._getframe(1)
    while frame is not None and (internal_files.get(frame.f_code.co_filename)
                                 or is_internal(frame.f_code.co_filename)):
        level, frame = level + 1, frame.f_back
    return level


def nan_error(kind: str, message: str, node, run, index, grads, grad_inputs) -> RuntimeError:
    """The RuntimeError of a NaN gradient, with its report attached."""
    error = RuntimeError(message)
    attach_report(error, node_report(kind, message, node, run, index, grads, grad_inputs))
    return error
