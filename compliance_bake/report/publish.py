"""The one place that writes `out/`: all files staged first, then renamed into place.

Each file is written to a temporary file in its own folder, flushed to disk and set to 0644; only
when every file is staged are they renamed over the old ones. A failure while staging removes the
temporary files and leaves the previous `out/` as it was.

`stale` names files of an earlier bake that this one does not write (the attestation of a keyed
bake, when this bake has no key): they are removed once everything is staged, before any rename,
so `out/` never pairs an old attestation with new files.

A crash (kill -9, power loss) cannot run that cleanup, so the temporary files carry a name of
the tool's own, `.compliance-bake-<name>.<random>.tmp`, and the next bake into the same `out/`
removes the stale ones it owns (that pattern, or the `.<name>.<random>.tmp` of earlier versions
next to the file it stages) before staging, and nothing else. A bake holds an exclusive lock on
the `out/` folder itself (flock on its descriptor, no lock file) while it publishes, so the
cleanup never removes the files of a bake still running. Folders are created 0755 whatever the
umask: the files are published, and so are the folders that hold them.

The kill -9 attack test (tests/attacks/) needs a crash at an exact point: with
`_COMPLIANCE_BAKE_CRASH_AT=staged:N` or `renamed:N` in the environment the process SIGKILLs
itself after N files are staged or renamed. Nothing else reads that variable.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import signal
import stat
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

from compliance_bake.errors import InputError

TEMP_PREFIX = ".compliance-bake-"
OWN_TEMP = re.compile(r"\.compliance-bake-.+\.[A-Za-z0-9_]+\.tmp")
_FOLDER_MODE = 0o755
_CRASH_ENV = "_COMPLIANCE_BAKE_CRASH_AT"


def _crash_point(stage: str, count: int) -> None:
    if os.environ.get(_CRASH_ENV) == f"{stage}:{count}":
        os.kill(os.getpid(), signal.SIGKILL)


def make_folders(folder: Path) -> None:
    """Create `folder` and its missing parents, each 0755 whatever the umask."""
    missing: list[Path] = []
    here = folder
    while not here.exists() and here != here.parent:  # bounded by the path's depth
        missing.append(here)
        here = here.parent
    for path in reversed(missing):
        with contextlib.suppress(FileExistsError):
            path.mkdir()
            os.chmod(path, _FOLDER_MODE)


def _is_own_temp(entry: os.DirEntry[str], names: set[str]) -> bool:
    if OWN_TEMP.fullmatch(entry.name):
        return True
    # Earlier versions staged as `.<name>.<8 random>.tmp` beside <name>.
    legacy = re.fullmatch(r"\.(.+)\.[a-z0-9_]{8}\.tmp", entry.name)
    return legacy is not None and legacy.group(1) in names


def remove_stale_temporaries(out_dir: Path, relatives: list[str]) -> list[Path]:
    """Remove the temporary files a killed bake left in the folders it writes; return them."""
    by_folder: dict[Path, set[str]] = {}
    for relative in relatives:
        dest = out_dir / relative
        by_folder.setdefault(dest.parent, set()).add(dest.name)
    removed: list[Path] = []
    for folder, names in by_folder.items():
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if not _is_own_temp(entry, names):
                continue
            with contextlib.suppress(OSError):
                if stat.S_ISREG(entry.stat(follow_symlinks=False).st_mode):
                    os.unlink(entry.path)
                    removed.append(Path(entry.path))
    return removed


@contextlib.contextmanager
def _locked(out_dir: Path) -> Iterator[None]:
    fd = os.open(out_dir, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise InputError(
                f"{out_dir}: another bake is writing this folder",
                "wait for it to finish, or pass another --out",
            ) from None
        yield
    finally:
        os.close(fd)  # releases the lock


def publish(out_dir: Path, files: dict[str, bytes], stale: Iterable[str] = ()) -> list[Path]:
    try:
        make_folders(out_dir)
        with _locked(out_dir):
            remove_stale_temporaries(out_dir, list(files))
            return _stage_and_rename(out_dir, files, stale)
    except OSError as exc:
        where = exc.filename or out_dir
        raise InputError(
            f"cannot write {where}: {exc.strerror}",
            "pass --out DIR pointing at a writable folder with free space",
        ) from None


def _discard(staged: list[tuple[str, Path]]) -> None:
    for tmp, _ in staged:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def _stage_and_rename(out_dir: Path, files: dict[str, bytes], stale: Iterable[str]) -> list[Path]:
    staged: list[tuple[str, Path]] = []
    try:
        for relative, data in files.items():
            dest = out_dir / relative
            make_folders(dest.parent)
            fd, tmp = tempfile.mkstemp(
                dir=dest.parent, prefix=f"{TEMP_PREFIX}{dest.name}.", suffix=".tmp"
            )
            staged.append((tmp, dest))
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(tmp, 0o644)
            _crash_point("staged", len(staged))
    except OSError:
        _discard(staged)
        raise
    try:
        for relative in stale:
            (out_dir / relative).unlink(missing_ok=True)
    except OSError as exc:
        _discard(staged)
        raise InputError(
            f"cannot remove the stale {exc.filename}: {exc.strerror}",
            "remove it by hand, or pass --out DIR pointing at a writable folder",
        ) from None
    for count, (tmp, dest) in enumerate(staged, start=1):
        os.replace(tmp, dest)
        _crash_point("renamed", count)
    for folder in dict.fromkeys(dest.parent for _, dest in staged):
        _sync_folder(folder)  # the renames themselves survive a power loss
    return [dest for _, dest in staged]


def _sync_folder(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
