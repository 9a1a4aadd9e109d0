"""Writing a file whole or not at all: a temporary file in the same folder, synced, renamed over.

Every file the tool writes outside `out/`'s swap (the secret and the private keys at 0600, the
attestation key's public half, the transparency log's tiles and checkpoint, a report) is written
this way, so a crash or a kill leaves the old file or the new one, never a torn one, and a
leftover temporary file is the only trace. `before_rename` lets the log's crash tests stop
between the write and the rename.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path


def write_whole(
    path: Path,
    data: bytes,
    *,
    mode: int = 0o644,
    prefix: str = ".",
    before_rename: Callable[[], None] | None = None,
) -> None:
    """`prefix` names the temporary file (`PREFIX<name>.<random>.tmp`), so a writer can find
    and remove what a killed run left."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f"{prefix}{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        if before_rename is not None:
            before_rename()
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
