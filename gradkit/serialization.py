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
from gradkit._not_implemented import module_getattr
from gradkit._tensor import Size, Tensor
from gradkit.nn.parameter import Parameter, UninitializedBuffer, UninitializedParameter, is_lazy
from gradkit.ops.memory_overlap import _address, storage_of
from gradkit.serialization_span import archive_at
from gradkit.storage import UntypedStorage, _memory_bytes

FORMAT = "gradkit-save"
VERSION = 2  # 2: tensors are views of stored memory (storages); 1 (one array each) still loads
READABLE = (1, 2)
MANIFEST = "manifest.json"
_DOC = "see docs/serialization.md"

FileLike = str | os.PathLike | BinaryIO


def save(obj: Any, f: FileLike, pickle_module=None, pickle_protocol: int = 2,
         _use_new_zipfile_serialization: bool = True) -> None:
    """Write ``obj`` (tensors, numbers, strings, bytes, None, dtypes, devices, and
    dicts/lists/tuples/sets of them — state dicts, optimizer state) to the path or binary file
    ``f`` (a file object is only written to and flushed).

    Anything else raises TypeError naming where it sits in ``obj``: no object is pickled.
    The same Tensor object stored twice loads as one object; tensors sharing memory (a tensor
    and its views) load sharing one memory, with their strides and offsets, as torch's.
    """
    if pickle_module is not None:
        raise TypeError(f"gradkit.save does not pickle (pickle_module given); {_DOC}")
    _check_target(f)
    arrays: list[np.ndarray] = []
    manifest = {"format": FORMAT, "version": VERSION,
                "root": _Encoder(arrays).encode(obj, "obj")}
    # a file object is only written to and flushed, as torch's (the zip is built aside)
    target = f if isinstance(f, (str, os.PathLike)) else io.BytesIO()
    with _open(target, "w") as archive:
        archive.writestr(MANIFEST, json.dumps(manifest))
        for i, array in enumerate(arrays):
            with archive.open(f"arrays/{i}.npy", "w") as out:
                np.lib.format.write_array(out, array, allow_pickle=False)
    if target is not f:
        f.write(target.getvalue())
        f.flush()


def load(f: FileLike, map_location=None, pickle_module=None, *, weights_only: bool | None = None,
         mmap: bool | None = None, **pickle_load_args) -> Any:
    """Read what :func:`save` wrote. ``map_location`` (a device, a string, a dict
    ``{"cuda:0": "cpu"}`` or torch's ``fn(storage, location)`` returning a storage or None)
    moves tensors; ``weights_only`` is accepted for torch's sake: the format holds only data,
    so loading is always as safe as torch's ``weights_only=True``.
    """
    if pickle_module is not None or pickle_load_args:
        raise TypeError(f"gradkit.load does not unpickle (pickle arguments given); {_DOC}")
    reader, end = f, None
    if not isinstance(f, (str, os.PathLike)):
        _check_seekable(f)
        # the archive at the position, as torch's reader (zipfile would read the file's last)
        reader, end = archive_at(f)
    loaded = _read(reader, map_location)
    if end is not None:
        f.seek(end)  # after this archive: the next load reads the next one
    return loaded


def _read(f, map_location) -> Any:
    with _open(f, "r") as archive:
        names = set(archive.namelist())
        if MANIFEST not in names:
            kind = ("a torch.save (pickle) checkpoint"
                    if any(n.endswith("data.pkl") for n in names) else "not a gradkit save file")
            raise RuntimeError(f"gradkit.load: {kind}; gradkit reads only the files gradkit.save "
                               f"writes (no pickle); {_DOC}")
        manifest = json.loads(archive.read(MANIFEST))
        if manifest.get("format") != FORMAT or manifest.get("version") not in READABLE:
            raise RuntimeError(f"gradkit.load: unknown format {manifest.get('format')!r} version "
                               f"{manifest.get('version')!r}; {_DOC}")

        def read_array(index: int) -> np.ndarray:
            with archive.open(f"arrays/{int(index)}.npy") as stream:
                return np.lib.format.read_array(io.BytesIO(stream.read()), allow_pickle=False)
        return _Decoder(read_array, map_location).decode(manifest["root"])


def _check_target(f) -> None:
    """torch's errors for where ``save`` cannot write."""
    if isinstance(f, (str, os.PathLike)):
        parent = os.path.dirname(os.fspath(f))
        # torch's C++ writer says so for an ASCII name (Python's open, for others, raises)
        if parent and not os.path.isdir(parent) and os.fspath(f).isascii():
            raise RuntimeError(f"Parent directory {parent} does not exist.")
    elif not hasattr(f, "write"):
        raise AttributeError("expected 'f' to be string, path, or a file-like object with a "
                             "'write' attribute")
    elif not callable(f.write):
        raise TypeError(f"Buffer of {str(type(f)).strip('<>')} has no callable attribute 'write'")


def _check_seekable(f) -> None:
    """torch's check and words: an archive is found and read by seeking."""
    try:
        f.seek(f.tell())
    except (io.UnsupportedOperation, AttributeError) as error:
        if "seek" in str(error) or "tell" in str(error):
            raise type(error)(f"{error}. You can only torch.load from a file that is seekable. "
                              "Please pre-load the data into a buffer like io.BytesIO and try to "
                              "load from it instead.") from None
        raise


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
        self.storages: dict[int, tuple[int, str]] = {}  # id(memory owner): (array, dtype)
        self.keep_alive: list = []  # ids stay unique while we hold the tensors and owners

    def encode(self, obj: Any, where: str):
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, (int, np.integer)) and not isinstance(obj, np.bool_):
            return int(obj)
        if isinstance(obj, (bytes, bytearray)):
            return {"type": type(obj).__name__, "hex": obj.hex()}
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
            return self._tensor(obj, where)
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
        if type(obj) in (list, tuple, Size, set, frozenset):
            return {"type": type(obj).__name__.lower(),
                    "items": [self.encode(v, f"{where}[{i}]") for i, v in enumerate(obj)]}
        raise TypeError(
            f"gradkit.save cannot store {where}, an object of type {type(obj).__qualname__}: "
            "its safe format holds tensors, numbers, strings, None, dtypes, devices and "
            f"dicts/lists/tuples/sets of them, and pickles nothing; {_DOC}")

    def _tensor(self, t: Tensor, where: str) -> dict:
        number = self.tensor_index.get(id(t))
        if number is not None:
            return {"type": "same", "id": number}
        self.keep_alive.append(t)
        number = self.tensor_index[id(t)] = len(self.tensor_index)
        node = {"type": "parameter" if isinstance(t, Parameter) else "tensor", "id": number,
                "dtype": t.dtype.name, "requires_grad": t.requires_grad, "device": str(t.device),
                **self._view(backend.to_device(t._data, backend.CPU), t.dtype.name)}
        if t.__dict__:  # the user's own attributes (t.note = ...), as torch keeps them
            node["attributes"] = self.encode(dict(t.__dict__), f"{where} (attributes)")
        return node

    def _view(self, array, dtype: str) -> dict:
        """Where ``array`` lies in its memory owner's bytes, stored once per owner (torch's
        storage): views saved together load as views of one memory again."""
        owner, size = storage_of(array), array.itemsize
        memory = _memory_bytes(owner)
        offset = _address(array) - _address(memory)
        if (not array.size or not np.may_share_memory(memory, owner) or offset % size
                or any(stride % size for stride in array.strides)):
            # not in whole elements of an owner in one block: a memory of its own
            array = np.array(array)
            owner, offset = array, 0
        if id(owner) not in self.storages:
            self.keep_alive.append(owner)
            self.storages[id(owner)] = (len(self.arrays), dtype)
            self.arrays.append(_memory_bytes(owner))
        index, stored_as = self.storages[id(owner)]
        if stored_as != dtype:
            raise RuntimeError("Cannot save multiple tensors or storages that view the same data "
                               "as different types")
        return {"storage": index, "shape": list(array.shape), "offset": offset // size,
                "stride": [stride // size for stride in array.strides]}

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
        self.memories: dict[int, tuple] = {}  # storage index: (bytes, device)

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
        if kind in _SEQUENCES:
            return _SEQUENCES[kind]([self.decode(v) for v in node["items"]])
        if kind in ("bytes", "bytearray"):
            return {"bytes": bytes, "bytearray": bytearray}[kind].fromhex(node["hex"])
        if kind == "float":
            return float(node["value"])
        if kind == "complex":
            return complex(self.decode(node["real"]), self.decode(node["imag"]))
        if kind in ("tensor", "parameter"):
            return self._tensor(node)
        if kind == "same":
            return self.tensors[node["id"]]
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
        if "storage" in node:
            array, device = self._view(node)
        else:  # version 1: an array of its own
            array, device = self._array(node["index"], node["dtype"]), self._device(node)
        t = Tensor._make(backend.to_device(array, device) if device.type != "cpu" else array)
        t._vc[0] = 1  # torch sets each loaded tensor onto its storage: an in-place change
        if node["type"] == "parameter":
            t = Parameter(t, requires_grad=node["requires_grad"])
        elif node["requires_grad"]:
            t._set_requires_grad(True)
        if "attributes" in node:
            t.__dict__.update(self.decode(node["attributes"]))
        self.tensors[node.get("id", node.get("index"))] = t
        return t

    def _view(self, node: dict) -> tuple:
        """The tensor's elements as a view of its storage's bytes (read once per storage)."""
        index = node["storage"]
        if index not in self.memories:
            memory = self.read_array(index)
            self.memories[index] = memory, self._device(node, UntypedStorage(memory))
        memory, device = self.memories[index]
        dtype = _dtype_named(node["dtype"]).np
        try:
            return np.ndarray(tuple(node["shape"]), dtype, buffer=memory,
                              offset=node["offset"] * dtype.itemsize,
                              strides=tuple(s * dtype.itemsize for s in node["stride"])), device
        except (TypeError, ValueError) as error:
            raise RuntimeError(f"gradkit.load: malformed tensor entry ({error}); {_DOC}") from None

    def _device(self, node: dict, storage=None) -> backend.device:
        saved = node["device"]
        target = self.map_location
        if isinstance(target, dict):
            target = target.get(saved, saved)
        elif callable(target) and not isinstance(target, (str, backend.device)):
            # torch's map_location(storage, location): a storage somewhere, or None for saved
            moved = target(storage or UntypedStorage(np.empty(0, np.uint8)), saved)
            target = None if moved is None else moved.device
        device = backend.device(saved if target is None else target)
        if device.type == "cuda" and not backend.cuda_is_available():
            raise RuntimeError(
                "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() "
                "is False. If you are running on a CPU-only machine, please use torch.load with "
                "map_location=torch.device('cpu') to map your storages to the CPU.")
        return device


_SEQUENCES = {"list": list, "tuple": tuple, "size": Size, "set": set, "frozenset": frozenset}


def _dtype_named(name: str) -> backend.dtype:
    found = getattr(backend, "bool_" if name == "bool" else name, None)
    if not isinstance(found, backend.dtype):
        raise RuntimeError(f"gradkit.load: the file holds dtype {name!r}, which this gradkit "
                           f"does not have (bfloat16 needs ml_dtypes); {_DOC}")
    return found


__getattr__ = module_getattr(__name__)  # names torch's (add_safe_globals, skip_data...): none apply
