"""Writing a file whole or not at all: a temporary file in the same folder, synced, renamed over.

Every file the tool writes outside `out/`'s swap (the secret and the private keys at 0600, the
attestation key's public half, the transparency log's tiles and checkpoint, a report) is written
this way, so a crash or a kill leaves the old file or the new one, never a torn one, and a
leftover temporary file is the only trace. `before_rename` lets the log's crash tests stop
between the write and the rename.

A file inside a folder the tool keeps (the transparency log) is written with `inside=` that
folder, as inputs/files reads it: the folders down to it opened one at a time without
following a link (`inputs/files.py`, `open_folder`), the temporary file made and renamed
relative to the last of them, so a link planted in the folder (the log may come from a branch,
and git keeps links) cannot make the tool write, replace or remove a file anywhere else;
`remove_inside` removes the same way.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
from collections.abc import Callable
from pathlib import Path

from compliance_bake.inputs.files import open_folder

_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def write_whole(
    path: Path | str,
    data: bytes,
    *,
    inside: Path | None = None,
    mode: int = 0o644,
    prefix: str = ".",
    before_rename: Callable[[], None] | None = None,
) -> None:
    """`prefix` names the temporary file (`PREFIX<name>.<random>.tmp`), so a writer can find
    and remove what a killed run left. Without `inside` the path is the operator's: its folder
    may be a link. With `inside`, `path` is a slash-separated path relative to that folder, as
    `inputs/files.read_bounded` takes it: no link inside it is followed (LeavesFolder), the
    folders it needs are made, a killed writer's leftovers of this one file are removed first
    (the caller holds the folder's lock), and every folder down to it is synced."""
    if inside is None:
        folder, parts, name = Path(path).parent, [], Path(path).name
    else:
        folder = inside
        *parts, name = str(path).split("/")
    here = open_folder(folder, parts, create=inside is not None)
    try:
        if inside is not None:
            stale = f"{prefix}{name}."
            for entry in os.listdir(here):
                if entry.startswith(stale) and entry.endswith(".tmp"):
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(entry, dir_fd=here)
        _write_at(here, name, data, mode, prefix, before_rename)
    finally:
        os.close(here)
    for depth in range(len(parts) - 1, -1, -1):  # the folders above it, up to `inside`
        synced = open_folder(folder, parts[:depth])
        try:
            os.fsync(synced)
        finally:
            os.close(synced)


def _write_at(
    here: int,
    name: str,
    data: bytes,
    mode: int,
    prefix: str,
    before_rename: Callable[[], None] | None,
) -> None:
    """How every file is written whole: a new temporary file beside it in the folder
    `here` (never a link: O_NOFOLLOW, O_EXCL), synced, its mode set, renamed over `name`, and
    the folder synced, so the new name survives a power loss."""
    tmp = f"{prefix}{name}.{secrets.token_hex(4)}.tmp"
    fd = os.open(tmp, _NEW, 0o600, dir_fd=here)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
            os.fchmod(handle.fileno(), mode)
        if before_rename is not None:
            before_rename()
        os.replace(tmp, name, src_dir_fd=here, dst_dir_fd=here)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=here)
        raise
    os.fsync(here)


def remove_inside(folder: Path, relative: str) -> None:
    """Remove `folder/relative`, a file or a whole folder, no link inside `folder` followed
    (a link itself is removed as the name it is, never what it points to); nothing when it
    is not there."""
    *parts, name = relative.split("/")
    try:
        here = open_folder(folder, parts)
    except (FileNotFoundError, NotADirectoryError):
        return
    try:
        try:
            os.unlink(name, dir_fd=here)
        except IsADirectoryError:
            shutil.rmtree(name, dir_fd=here)
        except FileNotFoundError:
            return
    finally:
        os.close(here)
