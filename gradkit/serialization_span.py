"""The zip archive that starts at a file object's position. torch.load reads that one (a stream
may hold more after it); Python's zipfile reads the last one in the file, from its end. Walking
the records from the position finds where this archive ends.

>>> import io
>>> stream = io.BytesIO()
>>> gradkit.save(gradkit.ones(1), stream); gradkit.save(gradkit.zeros(2), stream)
>>> _ = stream.seek(0)
>>> gradkit.load(stream), gradkit.load(stream)
(tensor([1.]), tensor([0., 0.]))
"""
from __future__ import annotations

import io
import struct

_LOCAL, _CENTRAL, _END = b"PK\x03\x04", b"PK\x01\x02", b"PK\x05\x06"
_END64, _LOCATOR64 = b"PK\x06\x06", b"PK\x06\x07"


def archive_at(f) -> tuple:
    """``(reader, end)``: what zipfile should read for the archive at ``f``'s position (``f``
    itself when nothing follows the archive, else a copy of its bytes) and the position after
    it (None when its records cannot be walked: zipfile then reads ``f`` as it can)."""
    start = f.tell()
    try:
        length = _length(f)
    except struct.error:  # cut short
        length = None
    seekable = callable(getattr(f, "seekable", None))  # zipfile asks; torch's reader does not
    if length is not None:
        f.seek(start + length)
        if not f.read(1) and seekable:
            f.seek(start)
            return f, start + length
    f.seek(start)
    if length is None:
        return (f if seekable else io.BytesIO(f.read())), None
    return io.BytesIO(f.read(length)), start + length


def _length(f) -> int | None:
    """Bytes from the position to the end of the end-of-central-directory record."""
    size = 0
    while True:
        signature = f.read(4)
        if signature == _LOCAL:
            fixed = f.read(26)
            (flags,), (packed,) = struct.unpack("<H", fixed[2:4]), struct.unpack("<I", fixed[14:18])
            names, extras = struct.unpack("<HH", fixed[22:26])
            if flags & 0x08 or packed == 0xFFFFFFFF:  # sizes after the data, or zip64 ones
                return None
            f.seek(names + extras + packed, 1)
            size += 30 + names + extras + packed
        elif signature == _CENTRAL:
            names, extras, comment = struct.unpack("<HHH", f.read(42)[24:30])
            f.seek(names + extras + comment, 1)
            size += 46 + names + extras + comment
        elif signature == _END64:
            (rest,) = struct.unpack("<Q", f.read(8))
            f.seek(rest, 1)
            size += 12 + rest
        elif signature == _LOCATOR64:
            f.seek(16, 1)
            size += 20
        elif signature == _END:
            (comment,) = struct.unpack("<H", f.read(18)[16:18])
            return size + 22 + comment
        else:
            return None
