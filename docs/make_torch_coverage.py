"""Regenerate the name lists of docs/torch_coverage.md from gradkit itself.

    python docs/make_torch_coverage.py          # rewrite the generated blocks in place
    python docs/make_torch_coverage.py --check  # exit 1 if the page is out of date

Each section of the page has a block between ``<!-- generated: NAME -->`` and
``<!-- end generated -->``: the public names gradkit defines for that torch module. Names that
are gradkit's own (not in torch) are listed in OWN_NAMES and shown apart; tests/test_tutorials.py
checks both lists against torch.
"""
from __future__ import annotations

import re
import sys
import types
from pathlib import Path

PAGE = Path(__file__).resolve().parent / "torch_coverage.md"
BLOCK = re.compile(r"(<!-- generated: (?P<name>[\w.]+) -->\n)(?P<body>.*?)(<!-- end generated -->)",
                   re.S)

# torch module -> gradkit object whose public names cover it
SECTIONS = {
    "torch": "gradkit",
    "torch.Tensor": "gradkit.Tensor",
    "torch.autograd": "gradkit.autograd",
    "torch.autograd.graph": "gradkit.autograd.graph",
    "torch.autograd.functional": "gradkit.autograd.functional",
    "torch.autograd.forward_ad": "gradkit.autograd.forward_ad",
    "torch.nn": "gradkit.nn",
    "torch.nn.Module": "gradkit.nn.Module",
    "torch.nn.functional": "gradkit.nn.functional",
    "torch.nn.init": "gradkit.nn.init",
    "torch.nn.utils": "gradkit.nn.utils",
    "torch.optim": "gradkit.optim",
    "torch.optim.lr_scheduler": "gradkit.optim.lr_scheduler",
    "torch.optim.swa_utils": "gradkit.optim.swa_utils",
    "torch.func": "gradkit.func",
    "torch.linalg": "gradkit.linalg",
    "torch.fft": "gradkit.fft",
    "torch.signal.windows": "gradkit.signal.windows",
    "torch.special": "gradkit.special",
    "torch.distributions": "gradkit.distributions",
    "torch.distributions.constraints": "gradkit.distributions.constraints",
    "torch.distributions.transforms": "gradkit.distributions.transforms",
    "torch.utils": "gradkit.utils",
    "torch.utils.checkpoint": "gradkit.utils.checkpoint",
    "torch.utils.data": "gradkit.utils.data",
    "torch.profiler": "gradkit.profiler",
    "torch.cuda": "gradkit.cuda",
    "torch.testing": "gradkit.testing",
}

# public names of gradkit that torch's module does not have (extensions, or gradkit's plumbing)
OWN_NAMES = {
    "torch": {"Op", "astype", "copy_from", "dispatch", "elu", "expand", "gelu", "getitem",
              "inplace", "leaky_relu", "op", "pad", "repeat", "setitem_", "silu", "softplus",
              "sum_to_shape", "to_device", "view", "zeros_like_op"},
    "torch.autograd": {"AnomalyReport", "FunctionCtx", "anomaly_report", "api", "batching",
                       "transform_errors", "node_edges",
                       "engine", "hooks", "is_anomaly_check_forward_enabled",
                       "is_anomaly_check_nan_enabled", "is_anomaly_enabled", "is_grad_enabled",
                       "is_inference_mode_enabled", "multi_grad_hook", "observers",
                       "once_differentiable", "saved_hooks", "inference", "saved_mutation",
                       "gradcheck_modes", "gradcheck_fast", "anomaly_errors", "reentrant",
                       "function_checks", "functional_strict", "saved_names", "zero_grads",
                       "hook_handles",
                       "saved_messages", "exec_plan", "function_node", "backward_pass",
                       "hook_results", "raw_saved", "saved_hidden"},
    "torch.autograd.graph": {"AccumulateGrad", "FunctionNode", "NodeExtras", "SavedTensor",
                             "accumulate_node", "add_hook", "declare_saved_names",
                             "saved_hooks_state", "holds_saved_variables", "node_type",
                             "edge_meta", "not_writable"},
    "torch.autograd.forward_ad": {"SavedTensor", "has_tangents", "propagate",
                                  "propagate_function", "suspended", "after_inplace",
                                  "grad_state", "input_tangents", "level_open"},
    "torch.profiler": {"ChromeTraceWriter", "EventList", "FunctionEvent", "FunctionEventAvg",
                       "TraceFile", "load_trace"},
}


def _resolve(path: str):
    import importlib
    module_name, _, attribute = path.rpartition(".")
    try:
        return importlib.import_module(path)
    except ModuleNotFoundError:
        return getattr(importlib.import_module(module_name), attribute)


def public_names(gradkit_path: str) -> list[str]:
    """The public names of a gradkit module (or class) that make up its torch-like API."""
    obj = _resolve(gradkit_path)
    if isinstance(obj, type):
        return sorted(n for n in dir(obj) if not n.startswith("_"))
    names = getattr(obj, "__all__", None)
    if names is None:
        names = [n for n, value in vars(obj).items()
                 if not n.startswith("_") and _belongs_to(value, obj)]
    # bfloat16 exists only with the optional ml_dtypes: the page speaks of it in prose
    return sorted(set(names) - {"module_getattr", "bfloat16"})


def _belongs_to(value, module) -> bool:
    """True for what ``module`` offers as its API: its own functions, classes and submodules,
    and gradkit names it re-exports — not its imports from typing/numpy, nor names (``enable_grad``,
    ``saved_tensors_hooks`` ...) that gradkit, gradkit.autograd or its graph already export."""
    import gradkit
    if isinstance(value, types.ModuleType):
        return value.__name__.startswith(module.__name__ + ".")
    origin = getattr(value, "__module__", None) or type(value).__module__
    if not origin.startswith("gradkit") or origin.startswith("gradkit._"):
        return False
    if origin == module.__name__ or hasattr(module, "__path__"):
        return True
    name = getattr(value, "__name__", None)
    exported = [vars(api).get(name) for api in (gradkit, gradkit.autograd, gradkit.autograd.graph)]
    # gradkit.zeros_like is the function itself or wraps it (ops/keywords.py's NumPy names,
    # the profiler's creation events), maybe twice over
    return not any(value is layer for e in exported for layer in _layers(e))


def _layers(function):
    """``function`` and each function it wraps (``__wrapped__``), outermost first."""
    while function is not None:
        yield function
        function = getattr(function, "__wrapped__", None)


def split(torch_name: str) -> tuple[list[str], list[str]]:
    """(names torch has too, gradkit's own names) of one section."""
    names = public_names(SECTIONS[torch_name])
    own = OWN_NAMES.get(torch_name, set())
    return [n for n in names if n not in own], [n for n in names if n in own]


def render(torch_name: str) -> str:
    covered, own = split(torch_name)
    text = f"Covered ({len(covered)}): " + " ".join(f"`{n}`" for n in covered) + "\n"
    if own:
        text += "\ngradkit's own: " + " ".join(f"`{n}`" for n in own) + "\n"
    return text


def regenerate(page: str) -> str:
    return BLOCK.sub(lambda m: m.group(1) + render(m.group("name")) + m.group(4), page)


def main(argv: list[str]) -> int:
    page = PAGE.read_text(encoding="utf-8")
    fresh = regenerate(page)
    if "--check" in argv:
        return 0 if fresh == page else 1
    PAGE.write_text(fresh, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(PAGE.parent.parent))  # this checkout's gradkit, not an installed one
    sys.exit(main(sys.argv[1:]))
