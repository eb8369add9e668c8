"""``gradkit.save`` / ``gradkit.load``: tensors and containers of them, in a format that never
unpickles (a zip of a JSON manifest and ``.npy`` arrays; see docs/serialization.md).

>>> import io
>>> buffer = io.BytesIO()
>>> gradkit.save({"w": gradkit.ones(2), "step": 3}, buffer)
>>> _ = buffer.seek(0)
>>> gradkit.load(buffer)
{'w': tensor([1., 1.]), 'step': 3}
"""
from __future__ import annotations

import io
import json
import math
import os
import zipfile
from collections import OrderedDict
from typing import Any, BinaryIO

import numpy as np

from gradkit import backend
from gradkit._tensor import Size, Tensor
from gradkit.nn.parameter import Parameter, UninitializedBuffer, UninitializedParameter, is_lazy

FORMAT = "gradkit-save"
VERSION = 1
MANIFEST = "manifest.json"
_DOC = "see docs/serialization.md"

FileLike = str | os.PathLike | BinaryIO


def save(obj: Any, f: FileLike, pickle_module=None, pickle_protocol: int = 2,
         _use_new_zipfile_serialization: bool = True) -> None:
    """Write ``obj`` (tensors, numbers, strings, None, dtypes, devices, and dicts/lists/tuples
    of them — state dicts, optimizer state) to the path or binary file ``f``.

    Anything else raises TypeError naming where it sits in ``obj``: no object is pickled.
    The same Tensor object stored twice is stored once and loads as one object.
    """
    if pickle_module is not None:
        raise TypeError(f"gradkit.save does not pickle (pickle_module given); {_DOC}")
    arrays: list[np.ndarray] = []
    manifest = {"format": FORMAT, "version": VERSION,
                "root": _Encoder(arrays).encode(obj, "obj")}
    with _open(f, "w") as archive:
        archive.writestr(MANIFEST, json.dumps(manifest))
        for i, array in enumerate(arrays):
            with archive.open(f"arrays/{i}.npy", "w") as out:
                np.lib.format.write_array(out, array, allow_pickle=False)


def load(f: FileLike, map_location=None, pickle_module=None, *, weights_only: bool | None = None,
         mmap: bool | None = None, **pickle_load_args) -> Any:
    """Read what :func:`save` wrote. ``map_location`` (a device, a string or a dict
    ``{"cuda:0": "cpu"}``) moves tensors; ``weights_only`` is accepted for torch's sake: the
    format holds only data, so loading is always as safe as torch's ``weights_only=True``.
    """
    if pickle_module is not None or pickle_load_args:
        raise TypeError(f"gradkit.load does not unpickle (pickle arguments given); {_DOC}")
    with _open(f, "r") as archive:
        names = set(archive.namelist())
        if MANIFEST not in names:
            kind = ("a torch.save (pickle) checkpoint"
                    if any(n.endswith("data.pkl") for n in names) else "not a gradkit save file")
            raise RuntimeError(f"gradkit.load: {kind}; gradkit reads only the files gradkit.save "
                               f"writes (no pickle); {_DOC}")
        manifest = json.loads(archive.read(MANIFEST))
        if manifest.get("format") != FORMAT or manifest.get("version") != VERSION:
            raise RuntimeError(f"gradkit.load: unknown format {manifest.get('format')!r} version "
                               f"{manifest.get('version')!r}; {_DOC}")

        def read_array(index: int) -> np.ndarray:
            with archive.open(f"arrays/{int(index)}.npy") as stream:
                return np.lib.format.read_array(io.BytesIO(stream.read()), allow_pickle=False)
        return _Decoder(read_array, map_location).decode(manifest["root"])


def _open(f: FileLike, mode: str) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(os.fspath(f) if isinstance(f, (str, os.PathLike)) else f, mode)
    except zipfile.BadZipFile:
        raise RuntimeError(f"gradkit.load: not a gradkit save file; {_DOC}") from None


class _Encoder:
    """Objects to JSON nodes; tensor data goes to ``arrays`` (each Tensor object once)."""

    def __init__(self, arrays: list) -> None:
        self.arrays = arrays
        self.tensor_index: dict[int, int] = {}
        self.keep_alive: list = []  # ids stay unique while we hold the tensors

    def encode(self, obj: Any, where: str):
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, (int, np.integer)) and not isinstance(obj, np.bool_):
            return int(obj)
        if isinstance(obj, (float, np.floating)):
            return float(obj) if math.isfinite(obj) else {"type": "float", "value": str(obj)}
        if isinstance(obj, np.bool_):
            return bool(obj)
        if isinstance(obj, complex):
            return {"type": "complex", "real": self.encode(obj.real, where),
                    "imag": self.encode(obj.imag, where)}
        if is_lazy(obj):  # a lazy module's placeholder: as torch pickles it, requires_grad only
            return {"type": type(obj).__name__, "requires_grad": obj.requires_grad}
        if isinstance(obj, Tensor):
            return self._tensor(obj)
        if isinstance(obj, np.ndarray):
            return {"type": "ndarray", **self._array(obj)}
        if isinstance(obj, backend.dtype):
            return {"type": "dtype", "name": obj.name}
        if isinstance(obj, backend.device):
            return {"type": "device", "name": str(obj)}
        if isinstance(obj, dict) and type(obj) in (dict, OrderedDict):
            node = {"type": "ordered_dict" if isinstance(obj, OrderedDict) else "dict",
                    "items": [[self.encode(k, f"{where} (a key)"),
                               self.encode(v, f"{where}[{k!r}]")] for k, v in obj.items()]}
            if hasattr(obj, "_metadata"):  # a state dict's module versions, kept as torch's
                node["metadata"] = self.encode(obj._metadata, f"{where}._metadata")
            return node
        if type(obj) in (list, tuple, Size):
            return {"type": type(obj).__name__.lower(),
                    "items": [self.encode(v, f"{where}[{i}]") for i, v in enumerate(obj)]}
        raise TypeError(
            f"gradkit.save cannot store {where}, an object of type {type(obj).__qualname__}: "
            "its safe format holds tensors, numbers, strings, None, dtypes, devices and "
            f"dicts/lists/tuples of them, and pickles nothing; {_DOC}")

    def _tensor(self, t: Tensor) -> dict:
        index = self.tensor_index.get(id(t))
        if index is None:
            self.keep_alive.append(t)
            index = self.tensor_index[id(t)] = len(self.arrays)
            self._array(backend.to_device(t._data, backend.CPU))
        return {"type": "parameter" if isinstance(t, Parameter) else "tensor", "index": index,
                "dtype": t.dtype.name, "requires_grad": t.requires_grad, "device": str(t.device)}

    def _array(self, array: np.ndarray) -> dict:
        array = np.asarray(array, order="C")  # (np.ascontiguousarray would make 0-d 1-d)
        stored = array if array.dtype.isbuiltin else array.view(f"u{array.dtype.itemsize}")
        self.arrays.append(stored)
        # bfloat16 has no .npy code: its bits go as unsigned integers, the name in the manifest
        return {"index": len(self.arrays) - 1, "dtype": str(array.dtype)}


_PLACEHOLDERS = {cls.__name__: cls for cls in (UninitializedParameter, UninitializedBuffer)}


class _Decoder:
    """JSON nodes back to objects; refuses any node type it does not know."""

    def __init__(self, read_array, map_location) -> None:
        self.read_array = read_array
        self.map_location = map_location
        self.tensors: dict[int, Tensor] = {}

    def decode(self, node):
        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        if isinstance(node, list) or not isinstance(node, dict):
            raise RuntimeError(f"gradkit.load: malformed manifest entry {node!r}; {_DOC}")
        kind = node.get("type")
        if kind in ("dict", "ordered_dict"):
            pairs = [(self.decode(k), self.decode(v)) for k, v in node["items"]]
            result = OrderedDict(pairs) if kind == "ordered_dict" else dict(pairs)
            if "metadata" in node and kind == "ordered_dict":
                result._metadata = self.decode(node["metadata"])
            return result
        if kind in ("list", "tuple", "size"):
            items = [self.decode(v) for v in node["items"]]
            return {"list": list, "tuple": tuple, "size": Size}[kind](items)
        if kind == "float":
            return float(node["value"])
        if kind == "complex":
            return complex(self.decode(node["real"]), self.decode(node["imag"]))
        if kind in ("tensor", "parameter"):
            return self._tensor(node)
        if kind in _PLACEHOLDERS:
            return _PLACEHOLDERS[kind](node["requires_grad"])
        if kind == "ndarray":
            return self._array(node["index"], node["dtype"])
        if kind == "dtype":
            return _dtype_named(node["name"])
        if kind == "device":
            return backend.device(node["name"])
        raise RuntimeError(f"gradkit.load: unknown entry type {kind!r}; {_DOC}")

    def _array(self, index: int, dtype_name: str) -> np.ndarray:
        array = self.read_array(index)
        wanted = _dtype_named(dtype_name).np if dtype_name == "bfloat16" else np.dtype(dtype_name)
        return array if array.dtype == wanted else array.view(wanted)

    def _tensor(self, node: dict) -> Tensor:
        index = node["index"]
        if index not in self.tensors:
            array = self._array(index, node["dtype"])
            device = self._device(node["device"])
            t = Tensor._make(backend.to_device(array, device) if device.type != "cpu" else array)
            if node["type"] == "parameter":
                t = Parameter(t, requires_grad=node["requires_grad"])
            elif node["requires_grad"]:
                t._set_requires_grad(True)
            self.tensors[index] = t
        return self.tensors[index]

    def _device(self, saved: str) -> backend.device:
        target = self.map_location
        if isinstance(target, dict):
            target = target.get(saved, saved)
        if target is None:
            target = saved
        if callable(target) and not isinstance(target, (str, backend.device)):
            raise TypeError(f"gradkit.load: map_location may be a device, a string or a dict, "
                            f"not a function; {_DOC}")
        device = backend.device(target)
        if device.type == "cuda" and not backend.cuda_is_available():
            raise RuntimeError(
                "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() "
                "is False. If you are running on a CPU-only machine, please use torch.load with "
                "map_location=torch.device('cpu') to map your storages to the CPU.")
        return device


def _dtype_named(name: str) -> backend.dtype:
    found = getattr(backend, "bool_" if name == "bool" else name, None)
    if not isinstance(found, backend.dtype):
        raise RuntimeError(f"gradkit.load: the file holds dtype {name!r}, which this gradkit "
                           f"does not have (bfloat16 needs ml_dtypes); {_DOC}")
    return found
