"""The baked files `serve` answers with, read inside `--out` and nowhere else.

Each file is opened one path component at a time, relative to its parent and with O_NOFOLLOW, so
a symlink planted in `out/` (to a key file, to /etc) is never followed: checking a real path and
then opening it leaves a moment in which a component can be swapped for a link; opening each
component relative to the last cannot be raced that way. Only regular files are served.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path


class LinkOut(Exception):
    """A component of a served path is a symlink: it may point anywhere on the machine."""


class NotServable(Exception):
    """The served path is not a regular file (a FIFO, a device, a folder) or is too large."""


_OPEN = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)


def _open_inside(out_dir: Path, relative: str) -> int:
    """A descriptor of `out_dir/relative`, opened one component at a time with O_NOFOLLOW, so no
    symlink inside `out_dir` is followed: a checked real path could be swapped for a link between
    the check and the open, a component opened relative to its parent cannot. `out_dir` itself
    may be a link; it is the folder the operator chose."""
    *folders, name = relative.split("/")
    here = os.open(out_dir, _OPEN | os.O_DIRECTORY)
    try:
        for folder in folders:
            try:
                inner = os.open(folder, _OPEN | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=here)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise LinkOut from None
                raise
            os.close(here)
            here = inner
        try:
            return os.open(name, _OPEN | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=here)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise LinkOut from None
            raise
    finally:
        os.close(here)


def read_baked(out_dir: Path, relative: str, max_bytes: int) -> bytes:
    """Runs in a worker thread: the event loop never waits on a disk, and a FIFO or a device
    planted in `out/` is refused without blocking (opened non-blocking, then checked)."""
    fd = _open_inside(out_dir, relative)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > max_bytes:
            raise NotServable
        os.set_blocking(fd, True)
        chunks: list[bytes] = []
        total = 0
        while total <= max_bytes:  # bounded: one byte past the cap at most
            chunk = os.read(fd, max(1 << 20, info.st_size + 1 - total))
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
            total += len(chunk)
        raise NotServable
    finally:
        os.close(fd)
