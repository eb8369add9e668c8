"""torch's test/test_serialization.py read against gradkit.save / gradkit.load: the same objects
load as one, views saved together load as views of one memory (strides and offsets kept, a
write through one seen by the others), dtypes and empty tensors, tensors' own attributes,
bytes and sets, paths, file objects (only write/flush to save; read/seek/tell to load), a file
after a header, gzip streams, map_location (a function too) and torch's errors. Each program
runs under both libraries and is compared with torch 2.13; gradkit's file format is its own."""

import copy
import gzip
import io
import json
import os
import pathlib
import pickle
import tempfile
import zipfile

import pytest

import gradkit
from tensor_twins import same_as_torch

PROGRAMS = {}


def program(function):
    PROGRAMS[function.__name__] = function
    return function


def round_trip(lib, obj, **load_options):
    buffer = io.BytesIO()
    lib.save(obj, buffer)
    buffer.seek(0)
    return lib.load(buffer, **load_options)


def layout(t):
    """What torch's tests read of a loaded tensor's place in its storage."""
    return [t, t.stride(), t.storage_offset(), t.is_contiguous(), len(t.untyped_storage())]


@program
def the_same_tensor_twice_loads_as_one_object(lib):
    # SerializationMixin._test_serialization_data / _assert (storages aside)
    a = [lib.arange(25.0).reshape(5, 5), lib.arange(25.0, 50.0).reshape(5, 5)]
    loaded = round_trip(lib, [a[i % 2] for i in range(4)] + [lib.arange(1, 11).int()])
    loaded[0].fill_(10)
    loaded[1].fill_(20)
    return [loaded[0] is loaded[2], loaded[1] is loaded[3], loaded[2], loaded[3], loaded[4]]


@program
def views_saved_together_stay_views(lib):
    # test_serialization_dtype's even/odd check, test_skip_data_serialization_preserves_views
    x = lib.arange(0.0, 10.0)
    y = round_trip(lib, {"x": x, "even": x[0::2], "odd": x[1::2]}, weights_only=True)
    y["odd"][0] = 0.25
    y["even"][0] = -0.25
    t = lib.arange(6.0).reshape(2, 3)
    z = round_trip(lib, {"t": t, "view": t.view(-1), "row": t[1]})
    z["t"].zero_()
    same = z["view"].untyped_storage().data_ptr() == z["t"].untyped_storage().data_ptr()
    return [
        y["x"][:2],
        layout(y["odd"]),
        z["view"],
        layout(z["row"]),
        same,
        z["view"]._version,
        z["view"].is_leaf,
    ]


@program
def a_view_alone_keeps_its_strides_offset_and_whole_storage(lib):
    t = lib.arange(12.0).reshape(3, 4)
    return [layout(round_trip(lib, v)) for v in (t.t(), t[1:, 2:], t[:, 1], t[2:3].expand(2, 4))]


@program
def views_of_one_memory_as_two_dtypes_are_refused(lib):
    out = []
    a = lib.arange(10.0, dtype=lib.complex128)
    b = lib.arange(10.0)
    for pair in ([a, a.imag], [b, b.view(lib.int32)], [b[:2], b.view(lib.int64)]):
        try:
            lib.save(pair, io.BytesIO())
        except RuntimeError as error:
            out.append(str(error))
    return out


@program
def a_state_dict_with_tied_weights_loads_them_sharing(lib):
    # a module's state dict: detached tensors, two of them on one memory when weights are tied
    model = lib.nn.Sequential(lib.nn.Linear(2, 2, bias=False), lib.nn.Linear(2, 2, bias=False))
    model[1].weight = model[0].weight
    with lib.no_grad():
        model[0].weight.copy_(lib.arange(4.0).reshape(2, 2))
    state = round_trip(lib, model.state_dict(), weights_only=True)
    state["0.weight"].add_(1)
    fresh = lib.nn.Sequential(lib.nn.Linear(2, 2, bias=False), lib.nn.Linear(2, 2, bias=False))
    fresh.load_state_dict(state)
    return [list(state), state["1.weight"], type(state).__name__, fresh[1].weight]


@program
def a_parameter_and_its_tensor_share_after_loading(lib):
    t = lib.arange(4.0)
    p = lib.nn.Parameter(t)
    a, b, c, d = round_trip(lib, [t, p, p.data, p.detach()[1:]])
    a.mul_(10)
    return [
        type(b).__name__,
        b,
        c,
        d,
        b.requires_grad,
        c.requires_grad,
        d.storage_offset(),
        a._version,
        b._version,
    ]


@program
def views_of_every_kind(lib):
    x = lib.arange(8.0).reshape(2, 4)
    y = round_trip(
        lib,
        {
            "x": x,
            "chunks": x.chunk(2, dim=1),
            "rows": x.unbind(0),
            "narrow": x.narrow(1, 1, 2),
            "diagonal": x.diagonal(),
            "expand": x[0].unsqueeze(0).expand(3, 4),
            "permute": x.permute(1, 0),
            "unfold": x.view(-1).unfold(0, 3, 2),
        },
    )
    y["x"].neg_()
    return [[v, v.stride(), v.storage_offset()] for v in y.values() if not isinstance(v, tuple)] + [
        [v, v.stride(), v.storage_offset()] for v in y["chunks"] + y["rows"]
    ]


@program
def views_and_requires_grad(lib):
    w = lib.arange(4.0, requires_grad=True)
    loaded = round_trip(lib, [w, w[1:], w * 2])
    return [[t.requires_grad, t.is_leaf, t.grad_fn is None, t.grad] for t in loaded]


@pytest.mark.parametrize("weights_only", [True, False])
def test_tensor_attributes_are_kept_as_torch(weights_only):
    # test_serialization_python_attr
    def attributes(lib):
        t = lib.zeros(3, 3)
        t.foo, t.pi = "foo", 3.14
        p = lib.nn.Parameter(lib.zeros(2))
        p.foo = "bar"
        a, b = round_trip(lib, [t, p], weights_only=weights_only)
        return [a, a.foo, a.pi, b.foo, type(b).__name__, b.requires_grad]

    same_as_torch(attributes)


@program
def conjugated_tensors_load_their_values(lib):
    # test_serialization_math_bits (gradkit has no lazy conj bit; the values are what count)
    t = lib.tensor([1 + 2j, -3j], dtype=lib.complex64)
    return [round_trip(lib, t.conj()), round_trip(lib, t.conj().conj())]


@program
def bytes_and_bytearrays(lib):
    # test_serialization_byte_literal
    return [round_trip(lib, b"byte", weights_only=False), round_trip(lib, bytearray(b"ba"))]


@program
def sets(lib):
    # test_sets_are_loadable_with_weights_only (torch 2.13 loads them without weights_only)
    loaded = round_trip(lib, {"s": {1, 2, 3}, "f": frozenset({"a"})}, weights_only=False)
    return [sorted(loaded["s"]), type(loaded["s"]).__name__, type(loaded["f"]).__name__]


@program
def basic_types(lib):
    # test_safe_load_basic_types
    return round_trip(
        lib, {"int": 123, "str": "world", "float": 3.14, "bool": False}, weights_only=True
    )


DTYPES = [
    "uint8",
    "int8",
    "int16",
    "int32",
    "int64",
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
    "bool",
    "uint16",
    "uint32",
    "uint64",
]


@program
def every_dtype_empty_or_not_and_in_a_state_dict(lib):
    # test_save_load_preserves_dtype, test_save_different_dtype_unallocated (tensors part)
    out = []
    for name in DTYPES:
        dtype = getattr(lib, name)
        t = (lib.arange(10) % 3).to(dtype)
        param = lib.nn.Parameter(t, requires_grad=dtype.is_floating_point or dtype.is_complex)
        loaded = round_trip(
            lib,
            {
                "t": t,
                "empty": lib.tensor([], dtype=dtype),
                "i": t[1].item(),
                "sd": {"param": param},
            },
        )
        out.append(
            [
                loaded["t"],
                loaded["empty"],
                loaded["i"],
                loaded["sd"]["param"],
                loaded["sd"]["param"].requires_grad,
            ]
        )
    return out


@program
def paths_named_files_and_buffers(lib):
    # test_serialization_zipfile, test_pathlike_serialization (a non-ASCII folder too)
    folder = tempfile.mkdtemp(suffix="非ASCIIパス")
    path = os.path.join(folder, "x.pt")
    lib.save(lib.ones(2), path)
    lib.save(lib.ones(3), pathlib.Path(path + "3"))
    with tempfile.NamedTemporaryFile() as named:
        lib.save(lib.ones(4), named)
        named.seek(0)
        from_file = lib.load(named)
    return [lib.load(path), lib.load(pathlib.Path(path + "3")), from_file]


@program
def a_save_after_a_header(lib):
    # test_serialization_with_header
    buffer = io.BytesIO()
    buffer.write(b"header")
    lib.save(lib.arange(3.0), buffer)
    buffer.seek(6)
    return lib.load(buffer)


@program
def the_archive_at_the_position_loads(lib):
    # test_serialization_offset_filelike's stream (torch runs it on its legacy format; its zip
    # format loads the first archive at the position too, and cannot load a second)
    buffer = io.BytesIO()
    pickle.dump(41, buffer)
    lib.save(lib.ones(1), buffer)
    pickle.dump(43, buffer)
    lib.save(lib.zeros(2), buffer)
    buffer.seek(0)
    return [pickle.load(buffer), lib.load(buffer)]


@program
def a_gzip_stream(lib):
    # test_serialization_gzip
    path = os.path.join(tempfile.mkdtemp(), "x.gz")
    with gzip.open(path, "wb") as out:
        lib.save([lib.arange(3.0), lib.ones(2)], out)
    with gzip.open(path, "rb") as stream:
        return lib.load(stream)


@program
def a_tensor_whose_bytes_start_like_a_zip(lib):
    # test_serialization_fake_zip
    t = lib.tensor([ord("P"), ord("K"), 5, 6] + [0] * 100, dtype=lib.uint8)
    return round_trip(lib, t)


@program
def the_old_format_flag_is_accepted(lib):
    # test_serialization_new_format_old_format_compat (one format in gradkit)
    buffer = io.BytesIO()
    lib.save([lib.ones(2, 2)] * 3, buffer, _use_new_zipfile_serialization=False)
    buffer.seek(0)
    return lib.load(buffer)


@program
def devices_deep_copy(lib):
    # test_serialize_device
    return [copy.deepcopy(lib.device(d)) == lib.device(d) for d in ["cpu", "cpu:0", "cuda"]]


@program
def a_one_cycle_schedulers_state(lib):
    # test_lr_scheduler_serialization
    sgd = lib.optim.SGD([lib.ones(3, requires_grad=True)], lr=0.1, momentum=0.9)
    state = round_trip(
        lib, lib.optim.lr_scheduler.OneCycleLR(sgd, 6.0, total_steps=10).state_dict()
    )
    return [state["base_lrs"], "anneal_func" in state, state["_anneal_func_type"]]


@program
def map_locations(lib):
    # test_serialization_map_location (the CPU ones): a function, a dict, a string, a device
    buffer = io.BytesIO()
    lib.save({"a": lib.ones(2), "b": lib.ones(2)[1:]}, buffer)
    seen = []

    def keep(storage, location):
        seen.append(location)
        return storage

    out = []
    for where in (
        keep,
        lambda storage, location: None,
        {"cuda:0": "cpu"},
        "cpu",
        lib.device("cpu"),
    ):
        buffer.seek(0)
        loaded = lib.load(buffer, map_location=where)
        out.append([loaded["a"].device, loaded["b"]])
    return out + [seen]


class _Mock:
    """test_serialization's FilelikeMock: a BytesIO that records which methods are called."""

    def __init__(self, data, has_fileno=True, has_readinto=False):
        self.calls, self._buffer = set(), io.BytesIO(data)
        for name in ["read", "readline", "seek", "tell", "write", "flush"]:
            setattr(self, name, self._traced(name))
        if has_readinto:
            self.readinto = self._traced("readinto")
        if has_fileno:
            self.fileno = self._no_fileno

    def _traced(self, name):
        def call(*args, **kwargs):
            self.calls.add(name)
            return getattr(self._buffer, name)(*args, **kwargs)

        return call

    def _no_fileno(self):
        raise io.UnsupportedOperation("Not a real file")


@program
def file_objects_use_only_what_torch_uses(lib):
    # test_serialization_filelike_api_requirements, _missing_attrs
    mock = _Mock(b"")
    lib.save(lib.arange(15.0).reshape(3, 5), mock)
    saving = mock.calls <= {"write", "flush"}
    mock.seek(0)
    mock.calls.clear()
    loaded = lib.load(mock)
    out = [saving, mock.calls <= {"read", "readline", "seek", "tell"}, loaded]
    for options in ({}, {"has_readinto": True}, {"has_fileno": False}):
        written = _Mock(b"")
        lib.save(lib.arange(30.0).reshape(3, 10), written)
        written.seek(0)
        out.append(lib.load(_Mock(written.read(), **options)))
    return out


@program
def saving_into_what_is_not_a_file(lib):
    # test_serialization_filelike_exceptions, with torch's messages; a missing folder
    x = lib.zeros(10)

    class WriteIsAString:
        write, flush = "bar", "baz"

    class WriteTakesNoBytes:
        write, flush = str.__add__, str.__mul__

    class NoFlush:
        def write(self, data):
            return len(data)

    missing = os.path.join(tempfile.mkdtemp(), "missing")
    out = []
    for target in (
        x,
        WriteIsAString(),
        WriteTakesNoBytes(),
        x.numpy(),
        NoFlush(),
        os.path.join(missing, "x.pt"),
        pathlib.Path(missing) / "x.pt",
    ):
        try:
            lib.save("foo", target)
        except (AttributeError, TypeError, RuntimeError) as error:
            message = str(error).replace(missing, "<missing>")
            out.append([type(error).__name__, message if "str" not in message else None])
    return out


@program
def loading_from_what_cannot_seek(lib):
    # test_load_error_msg
    class Unseekable:
        def __init__(self):
            self._buffer = io.BytesIO(b"data")

        def read(self, *size):
            return self._buffer.read(*size)

    lib.load(Unseekable(), weights_only=False)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_serialization_program_matches_torch(name):
    same_as_torch(PROGRAMS[name])


def test_a_view_loads_sharing_memory_with_its_base_in_gradkit_terms():
    """Closed form: the loaded views' arrays are windows on one loaded memory."""
    t = gradkit.arange(6.0).reshape(2, 3)
    loaded = round_trip(gradkit, [t, t.t(), t[1]])
    loaded[0][1, 2] = 50.0
    assert loaded[1][2, 1].item() == 50.0 and loaded[2][2].item() == 50.0
    assert loaded[1].stride() == (1, 3) and loaded[2].storage_offset() == 3


def test_a_crafted_view_outside_its_memory_is_refused(tmp_path):
    t = gradkit.arange(4.0)
    gradkit.save([t], tmp_path / "x.pt")
    with zipfile.ZipFile(tmp_path / "x.pt") as archive:
        manifest = json.loads(archive.read("manifest.json"))
        arrays = {
            name: archive.read(name) for name in archive.namelist() if name != "manifest.json"
        }
    manifest["root"]["items"][0]["offset"] = 3
    with zipfile.ZipFile(tmp_path / "y.pt", "w") as archive:
        archive.writestr("manifest.json", json.dumps(manifest))
        for name, data in arrays.items():
            archive.writestr(name, data)
    with pytest.raises(RuntimeError, match="malformed tensor entry"):
        gradkit.load(tmp_path / "y.pt")


def test_after_a_load_the_next_archive_in_the_stream_loads_beyond_torch():
    """torch's zip reader leaves the stream inside the archive it read; gradkit after it."""
    buffer = io.BytesIO()
    for value in (41, gradkit.ones(1), 43, [gradkit.zeros(2)]):
        (pickle.dump if isinstance(value, int) else gradkit.save)(value, buffer)
    buffer.write(b"trailing bytes")
    buffer.seek(0)
    loaded = [pickle.load(buffer), gradkit.load(buffer), pickle.load(buffer), gradkit.load(buffer)]
    assert loaded[0] == 41 and loaded[2] == 43
    assert loaded[1].tolist() == [1.0] and loaded[3][0].tolist() == [0.0, 0.0]
    assert buffer.read() == b"trailing bytes"
    with pytest.raises(RuntimeError, match="not a gradkit save file"):
        gradkit.load(io.BytesIO(b"PK\x03\x04 cut short"))
