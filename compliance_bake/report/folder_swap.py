"""Swapping a folder for a staged copy: the exchange in one step, what the copy carries over, the
leftovers of killed bakes.

Exchanging two folders in one step: Linux `renameat2(RENAME_EXCHANGE)`, called through ctypes.

Two renames (old aside, new in) leave a moment with no folder at the name, and one rename
cannot replace a folder that is not empty. RENAME_EXCHANGE swaps the two names atomically: a
reader, or a crash, sees the old folder or the new one, never neither. The standard library does
not wrap it, and glibc has exported `renameat2` since 2.28; elsewhere `exchange` raises
`ExchangeUnsupported` and the caller falls back to renaming file by file.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import re
import shutil
import stat
import sys
from functools import cache
from pathlib import Path
from typing import Any

STAGE_PREFIX = ".compliance-bake-"  # the staging folder: .compliance-bake-<name>.<random>.tmp
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
# The kernel or the filesystem cannot exchange: nothing was changed, the caller may fall back.
_UNSUPPORTED = {errno.ENOSYS, errno.EINVAL, errno.EXDEV, errno.EPERM, errno.ENOTSUP}


class ExchangeUnsupported(Exception):
    """This system or this filesystem cannot exchange two names atomically."""


@cache
def _renameat2() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        function = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return None
    function.argtypes = [
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_uint,
    ]
    function.restype = ctypes.c_int
    return function


def can_exchange() -> bool:
    """Whether this system has the call at all (a filesystem may still refuse it)."""
    return _renameat2() is not None


def exchange(a: Path, b: Path) -> None:
    """Swap the names `a` and `b` (both must exist) in one step."""
    function = _renameat2()
    if function is None:
        raise ExchangeUnsupported("renameat2 is not available")
    done = function(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    if done != 0:
        code = ctypes.get_errno()
        if code in _UNSUPPORTED:
            raise ExchangeUnsupported(os.strerror(code))
        raise OSError(code, os.strerror(code), str(b))


def stage_name(real: Path) -> re.Pattern[str]:
    return re.compile(re.escape(f"{STAGE_PREFIX}{real.name}.") + r"[A-Za-z0-9_]+\.tmp")


def remove_stale_stages(real: Path) -> list[Path]:
    """Remove the staging folders killed bakes left beside `real`; return them."""
    pattern = stage_name(real)
    removed: list[Path] = []
    try:
        entries = list(os.scandir(real.parent))
    except OSError:
        return removed
    for entry in entries:
        if pattern.fullmatch(entry.name) and entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path, ignore_errors=True)
            removed.append(Path(entry.path))
    return removed


def link_the_rest(
    old: Path, new: Path, skip: set[str], own: re.Pattern[str], relative: str = ""
) -> None:
    """Hard-link into `new` every entry of `old` that `new` does not have and `skip` does not
    name; folders are made anew (with their modes) and filled the same way."""
    for entry in os.scandir(old / relative if relative else old):
        name = f"{relative}/{entry.name}" if relative else entry.name
        if name in skip or own.fullmatch(entry.name):
            continue
        target = new / name
        if entry.is_dir(follow_symlinks=False):
            if not target.exists():
                target.mkdir()
                os.chmod(target, stat.S_IMODE(entry.stat(follow_symlinks=False).st_mode))
            elif not target.is_dir() or target.is_symlink():
                continue
            link_the_rest(old, new, skip, own, name)
        elif not os.path.lexists(target):
            os.link(entry.path, target, follow_symlinks=False)


def move_late_arrivals(
    old: Path, new: Path, skip: set[str], own: re.Pattern[str], relative: str = ""
) -> None:
    """Entries another program added to `old` while the new folder was staged (those
    `link_the_rest` did not see): moved into `new`. What `skip` names stays behind."""
    with contextlib.suppress(OSError):
        for entry in os.scandir(old / relative if relative else old):
            name = f"{relative}/{entry.name}" if relative else entry.name
            if name in skip or own.fullmatch(entry.name):
                continue
            target = new / name
            if not os.path.lexists(target):
                with contextlib.suppress(OSError):
                    os.rename(entry.path, target)
            elif entry.is_dir(follow_symlinks=False) and target.is_dir():
                move_late_arrivals(old, new, skip, own, name)
