"""The one place that writes `out/`: all files staged first, then renamed into place.

Each file is written to a temporary file in its own folder, flushed to disk and set to 0644; only
when every file is staged are they renamed over the old ones. A failure while staging removes the
temporary files and leaves the previous `out/` as it was.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from compliance_bake.errors import InputError


def publish(out_dir: Path, files: dict[str, bytes]) -> list[Path]:
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
        for tmp, _ in staged:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        where = exc.filename or out_dir
        raise InputError(
            f"cannot write {where}: {exc.strerror}",
            "pass --out DIR pointing at a writable folder with free space",
        ) from None
    for tmp, dest in staged:
        os.replace(tmp, dest)
    return [dest for _, dest in staged]
