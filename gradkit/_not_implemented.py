"""The parts of torch's API gradkit leaves out, and the error that says so.

Missing attributes of gradkit's torch-like modules raise AttributeError through
:func:`module_getattr`, naming the torch feature and pointing at docs/torch_coverage.md, so a
torch program run on gradkit stops with a clear message rather than a bare "no attribute".
"""
from __future__ import annotations

COVERAGE_DOC = "docs/torch_coverage.md"

# torch names gradkit knowingly does not implement -> what they are (for the message)
NOT_IMPLEMENTED = {
    "torch.utils.data.datapipes": "torch.utils.data.datapipes (IterDataPipe, MapDataPipe)",
    "torch.utils.tensorboard": "torch.utils.tensorboard (SummaryWriter)",
    "torch.jit": "torch.jit (TorchScript)",
    "torch.compile": "torch.compile",
    "torch.fx": "torch.fx",
    "torch.export": "torch.export",
    "torch.onnx": "torch.onnx",
    "torch.distributed": "torch.distributed",
    "torch.multiprocessing": "torch.multiprocessing",
    "torch.amp": "torch.amp (automatic mixed precision)",
    "torch.autocast": "torch.autocast (automatic mixed precision)",
    "torch.sparse": "torch.sparse (sparse tensors)",
    "torch.bfloat16": "torch.bfloat16 (the dtype needs the ml_dtypes package, and bfloat16 "
                      "tensors are refused even then)",
    "torch.quantization": "torch.quantization",
    "torch.hub": "torch.hub",
    "torchvision": "torchvision (datasets, models, transforms)",
    "torchaudio": "torchaudio",
    "torchtext": "torchtext",
}


def message(torch_name: str) -> str:
    """The error text for the torch feature ``torch_name`` (``"torch.jit"``)."""
    feature = NOT_IMPLEMENTED.get(torch_name, torch_name)
    return f"gradkit does not implement {feature}; see {COVERAGE_DOC}"


def module_getattr(gradkit_module: str):
    """A module ``__getattr__`` for ``gradkit_module`` that names the missing torch feature."""
    torch_module = "torch" + gradkit_module[len("gradkit"):]

    def missing_attribute(name: str):
        if name.startswith("__"):  # Python's own probes (__wrapped__, __path__ ...) stay plain
            raise AttributeError(f"module '{gradkit_module}' has no attribute '{name}'")
        raise AttributeError(f"module '{gradkit_module}' has no attribute '{name}': "
                             + message(f"{torch_module}.{name}"))
    return missing_attribute
