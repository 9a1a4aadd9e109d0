"""Reading a file from outside: a regular file of bounded size, or a refusal; never a hang.

A FIFO, a character device (`/dev/zero`, even through a symlink) or a socket given where a file
is expected would block the reader or feed it without end. Every file the tool reads whole goes
through `read_bounded` (and `read_regular_file`, which words its refusals): the path is opened
with O_NONBLOCK (opening a FIFO does not wait for a writer), the opened descriptor is checked
with fstat (so a file swapped after a stat is caught too), and its size is checked against the
caller's cap before a byte is read. The read itself stops one byte past the cap, so a file that
grows while it is read is refused too.

Two kinds of path, two rules (docs/limits.md lists which is which):

- a file the operator names (a secret, a key, a profile, a fixture folder's files): opened by
  its path, links followed, as mounted secrets are links;
- a file inside a folder the tool publishes, serves or keeps (`out/`, the log folder): given as
  `inside=` the folder and a relative path, opened one component at a time relative to the last,
  with O_NOFOLLOW, so a link planted in the folder (to a key file, to /etc, to /dev/zero) is
  refused rather than followed, and cannot be swapped in between a check and the open. The
  folder itself may be a link: it is the one the operator chose.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import BinaryIO

from compliance_bake.errors import InputError

MIB = 1024 * 1024
FIXTURE_MAX_BYTES = 64 * MIB  # licences.json, geo.json, the agent-key file (docs: limits)
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


class LeavesFolder(Exception):
    """A path read `inside=` a folder has a symbolic link (or `..`) among its components: it
    may lead anywhere on the machine, so it is not followed."""


class NotRegular(Exception):
    """Not a regular file: a FIFO, a device, a socket or a folder (`kind` says which)."""

    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind


class TooLarge(Exception):
    """Over the caller's cap: `size` bytes as stat saw them, or None when it grew while read."""

    def __init__(self, size: int | None) -> None:
        super().__init__(size)
        self.size = size


_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
_FOLDER = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0)


def _refuse_kind(name: str, dir_fd: int | None) -> None:
    """After an open failed: NotRegular when the path is a socket or other non-file (a socket
    cannot be opened at all), LeavesFolder when it is a link inside the folder."""
    try:
        mode = os.stat(name, dir_fd=dir_fd, follow_symlinks=dir_fd is None).st_mode
    except OSError:
        return
    if dir_fd is not None and stat.S_ISLNK(mode):
        raise LeavesFolder from None
    if not stat.S_ISREG(mode) and not stat.S_ISLNK(mode):
        raise NotRegular(file_kind(mode)) from None


def open_folder(folder: Path, parts: Sequence[str], *, create: bool = False) -> int:
    """A descriptor of the folder `folder/part/part...`, each part opened relative to the last
    without following a link (LeavesFolder on a link, or on an empty part, `.` or `..`); with
    `create`, a missing part is made (0o755) first. The caller closes it."""
    if any(part in ("", ".", "..") for part in parts):
        raise LeavesFolder
    here = os.open(folder, _FOLDER)
    try:
        for part in parts:
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o755, dir_fd=here)
            try:
                inner = os.open(part, _FOLDER | os.O_NOFOLLOW, dir_fd=here)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    _refuse_kind(part, here)
                raise
            os.close(here)
            here = inner
    except BaseException:
        os.close(here)
        raise
    return here


def _open_inside(folder: Path, relative: str) -> int:
    *folders, name = relative.split("/")
    if name in ("", ".", ".."):
        raise LeavesFolder
    here = open_folder(folder, folders)
    try:
        return os.open(name, _FLAGS | os.O_NOFOLLOW, dir_fd=here)
    except OSError as exc:
        if not isinstance(exc, FileNotFoundError):
            _refuse_kind(name, here)
        raise
    finally:
        os.close(here)


def _open(path: Path | str, inside: Path | None) -> int:
    if inside is not None:
        return _open_inside(inside, str(path))
    try:
        return os.open(path, _FLAGS)
    except OSError as exc:
        if not isinstance(exc, FileNotFoundError):
            _refuse_kind(str(path), None)
        raise


@contextlib.contextmanager
def open_regular(path: Path | str) -> Iterator[BinaryIO]:
    """`path` opened to be streamed, once it is known to be a regular file: opened without
    blocking (a FIFO does not wait for a writer) and checked on the descriptor, as
    `read_bounded` does, for a reader that reads on as it goes (a plays file's head, the
    engine's scan) rather than whole. Raises NotRegular; OSError when it cannot be opened."""
    fd = _open(path, None)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegular(file_kind(info.st_mode))
        os.set_blocking(fd, True)
        handle = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with handle:
        yield handle


def read_bounded(path: Path | str, max_bytes: int, *, inside: Path | None = None) -> bytes:
    """The bytes of `path`, a regular file of at most `max_bytes` bytes; with `inside`, `path`
    is a slash-separated path relative to that folder, and no link inside it is followed.

    Raises LeavesFolder, NotRegular or TooLarge; OSError (FileNotFoundError among them) when it
    cannot be opened or read."""
    fd = _open(path, inside)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegular(file_kind(info.st_mode))
        if info.st_size > max_bytes:
            raise TooLarge(info.st_size)
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
            raise TooLarge(None)
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_regular_file(
    path: Path | str,
    *,
    max_bytes: int,
    what: str,
    error: type[InputError] = InputError,
    inside: Path | None = None,
    missing: InputError | None = None,
) -> bytes:
    """`read_bounded`, its refusals worded: `error` (one line naming the path, with a fix) when
    it is a link inside `inside`, not a regular file, larger than the cap, or unreadable.
    When there is no file at the path (FileNotFoundError, or NotADirectoryError: a file stands
    where one of its folders should be), `missing` is raised: the caller's words for what the
    file is and how to give it; without `missing`, the OSError propagates to a caller for whom
    a missing file is a finding rather than an error.
    """
    shown = path if inside is None else inside / path
    try:
        return read_bounded(path, max_bytes, inside=inside)
    except (FileNotFoundError, NotADirectoryError):
        if missing is None:
            raise
        raise missing from None
    except LeavesFolder:
        raise error(
            f"{shown}: a symbolic link inside {inside}, not followed",
            f"put the {what} itself there, a regular file (`compliance-bake docs limits`)",
        ) from None
    except NotRegular as exc:
        raise error(
            f"{shown}: not a regular file ({exc.kind})",
            f"point it at the {what} itself, a regular file",
        ) from None
    except TooLarge as exc:
        if exc.size is None:
            raise error(
                f"{shown}: the {what} grew past the {size_text(max_bytes)} limit while read",
                "see `compliance-bake docs limits`",
            ) from None
        raise error(
            f"{shown}: the {what} is {size_text(exc.size)}, over the {size_text(max_bytes)} limit",
            "see `compliance-bake docs limits`",
        ) from None
    except OSError as exc:
        raise error(f"{shown}: cannot read the {what} ({exc.strerror})", "check its path") from None


def read_if_present(
    path: Path | str, *, max_bytes: int, what: str, inside: Path | None = None
) -> bytes | None:
    """`read_regular_file` of a file whose absence is itself an answer (no state kept yet, no
    password file, a tile not written): None when there is no file at the path."""
    try:
        return read_regular_file(path, max_bytes=max_bytes, what=what, inside=inside)
    except (FileNotFoundError, NotADirectoryError):
        return None
