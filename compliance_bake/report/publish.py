"""Writing `out/`: the whole new folder staged first, then swapped in at once (never half a bake).

On Linux the new `out/` is built beside the old one, in `.compliance-bake-<name>.<random>.tmp`:
the new files are written, flushed to disk and set to 0644, and everything else the old folder
holds (files of other tools, an audit report of an earlier run) is hard-linked in, so nothing is
copied and nothing foreign is lost. The two folders are then exchanged in one step
(`renameat2(RENAME_EXCHANGE)`, report/folder_swap.py): a reader, or a kill at any instant, sees
all of the old `out/` or all of the new. The old folder, now under the staging name, is removed; an
entry another program added to it meanwhile is moved into the new one first.

Where the exchange is not possible (another system, `out/` a mount point, a parent folder the
bake may not write, a filesystem that refuses it), each file is staged in its own folder and
renamed over the old one: each file is whole, but between the first rename and the last the
folder mixes old and new files for a moment (milliseconds per large file).

`before_swap` runs once every file is staged and before anything is swapped in; the files it
returns are staged and published with the others. A bake with `--log` appends to the log there
(log/append.py), so `out/` is published only once the append is durable, with the entry's proof
in the same swap, and an append that fails leaves `out/` as it was (the staged files removed).

`stale` names files of an earlier bake that this one does not write (the attestation of a keyed
bake, when this bake has no key): the new folder does not carry them, and the fallback removes
them before any rename, so `out/` never pairs an old attestation with new files.

A crash (kill -9, power loss) cannot clean up, so every temporary name is the tool's own and the
next bake into the same `out/` removes what a killed one left (a staging folder beside `out/`,
a `.compliance-bake-<name>.<random>.tmp` file, or the `.<name>.<random>.tmp` of earlier versions
next to the file it stages) and nothing else. A bake holds an exclusive lock on the `out/` folder
itself (flock on its descriptor, no lock file), and on the staging folder it swaps in, so the
cleanup never removes the files of a bake still running. Folders are created 0755 whatever the
umask: the files are published, and so are the folders that hold them.

The kill -9 attack tests (tests/attacks/) need exact points: with `_COMPLIANCE_BAKE_CRASH_AT`
set to `staged:N`, `renamed:N` or `exchanged` the process SIGKILLs itself after N files are
staged or renamed, or after the exchange; with `pause:swap` it stops itself (SIGSTOP) once every
file is staged, just before the swap (the exchange, or the renames), so a test can aim kills at
the instants where a folder could tear. Nothing else reads that variable.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import shutil
import signal
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path

from compliance_bake.errors import InputError
from compliance_bake.report.folder_swap import (
    STAGE_PREFIX,
    ExchangeUnsupported,
    can_exchange,
    exchange,
    link_the_rest,
    move_late_arrivals,
    remove_stale_stages,
)

TEMP_PREFIX = ".compliance-bake-"
OWN_TEMP = re.compile(r"\.compliance-bake-(.+)\.[A-Za-z0-9_]+\.tmp")
_FOLDER_MODE = 0o755
_CRASH_ENV = "_COMPLIANCE_BAKE_CRASH_AT"


def crash_point(stage: str, count: int | None = None) -> None:
    """Stop here when _COMPLIANCE_BAKE_CRASH_AT names this point (`stage` or `stage:count`):
    killed (SIGKILL), paused (`pause:stage`, SIGSTOP) or failed (`fail:stage[:count]`, an
    OSError as a failing disk raises), so the tests reach every step of a publish or a log
    append. Unset, as in every real run, it does nothing."""
    point = os.environ.get(_CRASH_ENV)
    if point is None:
        return
    if point == (f"fail:{stage}" if count is None else f"fail:{stage}:{count}"):
        # A disk that fails at this step (EIO), for the tests of a failed publish or append.
        raise OSError(errno.EIO, "input/output error (injected by _COMPLIANCE_BAKE_CRASH_AT)")
    if point == (stage if count is None else f"{stage}:{count}"):
        os.kill(os.getpid(), signal.SIGKILL)
    if point == f"pause:{stage}":
        os.kill(os.getpid(), signal.SIGSTOP)


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
    own = OWN_TEMP.fullmatch(entry.name)
    if own is not None:
        return own.group(1) in names  # the temporary file of a file this bake writes
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


def _busy(out_dir: Path) -> InputError:
    return InputError(
        f"{out_dir}: another bake is writing this folder",
        "wait for it to finish, or pass another --out",
    )


@contextlib.contextmanager
def _locked(out_dir: Path) -> Iterator[None]:
    fd = os.open(out_dir, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise _busy(out_dir) from None
        if not os.path.samestat(os.fstat(fd), os.stat(out_dir)):
            raise _busy(out_dir)  # swapped out by another bake between the open and the lock
        yield
    finally:
        os.close(fd)  # releases the lock


# Called once every file is staged, before anything is swapped in: the files it answers are
# staged too. A bake with --log appends to the log here, so `out/` is published only after the
# append is durable, and an append that fails leaves `out/` as it was.
BeforeSwap = Callable[[], Mapping[str, bytes]]


def publish(
    out_dir: Path,
    files: dict[str, bytes],
    stale: Iterable[str] = (),
    before_swap: BeforeSwap | None = None,
) -> list[Path]:
    """`files` (and what `before_swap` adds) published in `out/` at once; `stale` removed."""
    try:
        make_folders(out_dir)
        with _locked(out_dir):
            remove_stale_temporaries(out_dir, list(files))
            real = Path(os.path.realpath(out_dir))
            remove_stale_stages(real)
            stage = _stage_folder(real)
            if stage is None:
                written = _stage_and_rename(out_dir, dict(files), stale, before_swap)
            else:
                written = _stage_and_exchange(real, stage, dict(files), set(stale), before_swap)
            return [out_dir / relative for relative in written]
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


def _stage_folder(real: Path) -> Path | None:
    """A new staging folder beside `real`, or None when the folders cannot be exchanged."""
    if not can_exchange() or real.parent == real:
        return None
    try:
        if os.stat(real.parent).st_dev != os.stat(real).st_dev:
            return None  # `out/` is a mount point: the exchange would cross filesystems
        prefix = f"{STAGE_PREFIX}{real.name}."
        stage = Path(tempfile.mkdtemp(dir=real.parent, prefix=prefix, suffix=".tmp"))
    except OSError:
        return None  # a parent folder this bake may not write
    os.chmod(stage, stat.S_IMODE(os.stat(real).st_mode))
    return stage


def _write_file(path: Path, data: bytes) -> None:
    make_folders(path.parent)
    with open(path, "xb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.chmod(path, 0o644)


def _stage_and_exchange(
    real: Path,
    stage: Path,
    files: dict[str, bytes],
    stale: set[str],
    before_swap: BeforeSwap | None,
) -> list[str]:
    lock = os.open(stage, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        # The new out/ is locked from its first instant, as the old one is.
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        try:
            for count, (relative, data) in enumerate(files.items(), start=1):
                _write_file(stage / relative, data)
                crash_point("staged", count)
            if before_swap is not None:
                for relative, data in before_swap().items():
                    files[relative] = data
                    _write_file(stage / relative, data)
        except BaseException:  # a failed write or append: out/ stays as it was
            shutil.rmtree(stage, ignore_errors=True)
            raise
        crash_point("swap")
        try:
            # A file another user owns may refuse a hard link (fs.protected_hardlinks).
            link_the_rest(real, stage, stale | set(files), OWN_TEMP)
            for folder, _, _ in os.walk(stage):
                sync_folder(Path(folder))  # every entry of the new folder survives a power loss
            exchange(stage, real)
        except (OSError, ExchangeUnsupported):
            _rename_each(stage, real, files, stale)
            shutil.rmtree(stage, ignore_errors=True)
            return list(files)
        crash_point("exchanged")
        sync_folder(real.parent)  # the exchange itself survives a power loss
        move_late_arrivals(stage, real, stale, OWN_TEMP)  # `stage` now holds the old folder
        shutil.rmtree(stage, ignore_errors=True)
        return list(files)
    finally:
        os.close(lock)


def _rename_each(stage: Path, real: Path, files: dict[str, bytes], stale: Iterable[str]) -> None:
    """The fallback when a filesystem refuses the exchange: the staged files renamed in."""
    for relative in stale:
        (real / relative).unlink(missing_ok=True)
    for count, relative in enumerate(files, start=1):
        make_folders((real / relative).parent)
        os.replace(stage / relative, real / relative)
        crash_point("renamed", count)
    for folder in dict.fromkeys((real / relative).parent for relative in files):
        sync_folder(folder)


def _stage_beside(dest: Path, data: bytes, staged: list[tuple[str, Path]]) -> None:
    make_folders(dest.parent)
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f"{TEMP_PREFIX}{dest.name}.", suffix=".tmp")
    staged.append((tmp, dest))
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.chmod(tmp, 0o644)


def _stage_and_rename(
    out_dir: Path, files: dict[str, bytes], stale: Iterable[str], before_swap: BeforeSwap | None
) -> list[str]:
    staged: list[tuple[str, Path]] = []
    try:
        for relative, data in files.items():
            _stage_beside(out_dir / relative, data, staged)
            crash_point("staged", len(staged))
        if before_swap is not None:
            for relative, data in before_swap().items():
                files[relative] = data
                _stage_beside(out_dir / relative, data, staged)
    except BaseException:  # a failed write or append: out/ stays as it was
        _discard(staged)
        raise
    crash_point("swap")
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
        crash_point("renamed", count)
    for folder in dict.fromkeys(dest.parent for _, dest in staged):
        sync_folder(folder)  # the renames themselves survive a power loss
    return list(files)


def sync_folder(folder: Path) -> None:
    """fsync a folder: the renames and new names in it survive a power loss."""
    fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
