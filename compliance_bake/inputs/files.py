"""Reading an input file: a regular file of bounded size, or a refusal; never a hang.

A FIFO, a character device (`/dev/zero`, even through a symlink) or a socket given where a file
is expected would block the reader or feed it without end. Every path the tool reads goes through
`read_regular_file`: the path is opened with O_NONBLOCK (opening a FIFO does not wait for a
writer), the opened descriptor is checked with fstat (so a file swapped after a stat is caught
too), and its size is checked against the caller's cap before a byte is read. The read itself
stops one byte past the cap, so a file that grows while it is read is refused too.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from compliance_bake.errors import InputError

MIB = 1024 * 1024
FIXTURE_MAX_BYTES = 64 * MIB  # licences.json, geo.json, the agent-key file (docs/limits.md)
CREDENTIAL_MAX_BYTES = 64 * 1024  # a signing secret file, an agent key file
_CHUNK = 1024 * 1024


def file_kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "not a file"


def size_text(count: int) -> str:
    return f"{count // MIB} MiB" if count >= MIB and count % MIB == 0 else f"{count:,} bytes"


def read_regular_file(
    path: Path | str,
    *,
    max_bytes: int,
    what: str,
    error: type[InputError] = InputError,
) -> bytes:
    """The bytes of `path`, a regular file (symlinks followed) of at most `max_bytes` bytes.

    Raises `error` (one line naming the path, with a fix) when it is not a regular file, larger
    than the cap, or unreadable. FileNotFoundError propagates: each caller words "missing" itself.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise
    except OSError as exc:
        # Opening a Unix socket fails (ENXIO): say what it is rather than the errno.
        with contextlib.suppress(OSError):
            mode = os.stat(path).st_mode
            if not stat.S_ISREG(mode):
                raise error(
                    f"{path}: not a regular file ({file_kind(mode)})",
                    f"point it at the {what} itself, a regular file",
                ) from None
        raise error(f"{path}: cannot read the {what} ({exc.strerror})", "check its path") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise error(
                f"{path}: not a regular file ({file_kind(info.st_mode)})",
                f"point it at the {what} itself, a regular file",
            )
        if info.st_size > max_bytes:
            raise error(
                f"{path}: the {what} is {size_text(info.st_size)}, over the "
                f"{size_text(max_bytes)} limit",
                "see `compliance-bake docs limits`",
            )
        os.set_blocking(fd, True)
        chunks: list[bytes] = []
        total = 0
        expected = info.st_size + 1  # asked for at once: a file that does not grow is one read
        while total <= max_bytes:  # bounded: stops one byte past the cap at most
            chunk = os.read(fd, min(max(_CHUNK, expected - total), max_bytes + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > max_bytes:
            raise error(
                f"{path}: the {what} grew past the {size_text(max_bytes)} limit while read",
                "see `compliance-bake docs limits`",
            )
        return b"".join(chunks)
    except OSError as exc:
        raise error(f"{path}: cannot read the {what} ({exc.strerror})", "check its path") from None
    finally:
        os.close(fd)
