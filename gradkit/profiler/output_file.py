"""OutputFile: write a file the user named (a trace, a report) without ever clobbering it.

As editors and ``install`` do: a symlink is followed (its target gets the text, the link
stays), a regular file or a new path gets a temporary file next to it that is renamed into
place only once it is whole (so a crash, a full disk or a signal never leaves half a file, and
the old one stays until then), and a character device or FIFO (``/dev/null``, a pipe) is written
through, never replaced by a file. Anything else (a directory, a socket, a block device) is
refused with the reason. Deferring signals during the final write is the caller's part (the
CLI: ``gradkit.cli.signals.DeferredSignals``): only the main thread may set handlers.
"""
from __future__ import annotations

import errno
import os
import stat
import tempfile


def output_destination(path) -> tuple[str, bool]:
    """Where a file named ``path`` is written, and whether atomically (temp file + rename).

    Raises ``OSError`` with the reason for a directory, a socket or a block device.
    """
    real = os.path.realpath(os.fspath(path))
    try:
        mode = os.stat(real).st_mode
    except FileNotFoundError:
        return real, True
    if stat.S_ISREG(mode):
        return real, True
    if stat.S_ISCHR(mode) or stat.S_ISFIFO(mode):
        return real, False
    kind = "a directory" if stat.S_ISDIR(mode) else "not a regular file, device or FIFO"
    raise OSError(errno.EISDIR if stat.S_ISDIR(mode) else errno.EINVAL,
                  f"{path} is {kind}; give a file name", os.fspath(path))


def _open_through(path: str) -> int:
    """A descriptor writing into a device or FIFO; a FIFO nobody reads is an error, not a hang."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise OSError(errno.ENXIO, f"no process is reading the FIFO {path}", path) from None
        raise
    os.set_blocking(fd, True)
    return fd


class OutputFile:
    """An open descriptor ``fd`` for ``path`` (see the module's docstring): write through it,
    close it, then :meth:`commit`; on any failure :meth:`discard` (no temporary file is left,
    the target is untouched). ``make_folders``: create the missing folders of the path."""

    def __init__(self, path, make_folders: bool = False) -> None:
        self.path = os.fspath(path)
        self.target, atomic = output_destination(self.path)
        self.temporary: str | None = None
        if not atomic:
            self.fd = _open_through(self.target)
            return
        directory = os.path.dirname(self.target)
        if make_folders:
            os.makedirs(directory, exist_ok=True)
        # a short prefix: the temp name must fit where the target's name just fits
        self.fd, self.temporary = tempfile.mkstemp(
            dir=directory, suffix=".tmp", prefix=os.path.basename(self.target)[:64] + ".")
        os.chmod(self.temporary, 0o644)  # mkstemp's 0600 would make the file private

    def commit(self) -> None:
        """Move the whole file into place (after its descriptor is closed)."""
        if self.temporary is not None:
            os.replace(self.temporary, self.target)
            self.temporary = None

    def discard(self) -> None:
        """Drop the temporary file; a device or FIFO keeps what it was sent."""
        if self.temporary is not None and os.path.exists(self.temporary):
            os.remove(self.temporary)
        self.temporary = None


def write_text_file(path, text: str) -> str:
    """Write ``text`` (UTF-8) to ``path`` through :class:`OutputFile`; returns the path."""
    output = OutputFile(path)
    try:
        with open(output.fd, "w", encoding="utf-8", errors="backslashreplace") as f:
            f.write(text)
        output.commit()
    except BaseException:
        output.discard()
        raise
    return output.path
