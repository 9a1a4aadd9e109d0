"""The one place that writes `out/`: all files staged first, then renamed into place.

Each file is written to a temporary file in its own folder, flushed to disk and set to 0644; only
when every file is staged are they renamed over the old ones. A failure while staging removes the
temporary files and leaves the previous `out/` as it was.

`stale` names files of an earlier bake that this one does not write (the attestation of a keyed
bake, when this bake has no key): they are removed once everything is staged, before any rename,
so `out/` never pairs an old attestation with new files.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from compliance_bake.errors import InputError


def _discard(staged: list[tuple[str, Path]]) -> None:
    for tmp, _ in staged:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def publish(out_dir: Path, files: dict[str, bytes], stale: Iterable[str] = ()) -> list[Path]:
    staged: list[tuple[str, Path]] = []
    try:
        for relative, data in files.items():
            dest = out_dir / relative
            dest.parent.mkdir(parents=True, exist_ok=True, mode=0o755)
            fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".tmp")
            staged.append((tmp, dest))
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(tmp, 0o644)
    except OSError as exc:
        _discard(staged)
        where = exc.filename or out_dir
        raise InputError(
            f"cannot write {where}: {exc.strerror}",
            "pass --out DIR pointing at a writable folder with free space",
        ) from None
    try:
        for relative in stale:
            (out_dir / relative).unlink(missing_ok=True)
    except OSError as exc:
        _discard(staged)
        raise InputError(
            f"cannot remove the stale {exc.filename}: {exc.strerror}",
            "remove it by hand, or pass --out DIR pointing at a writable folder",
        ) from None
    for tmp, dest in staged:
        os.replace(tmp, dest)
    return [dest for _, dest in staged]
