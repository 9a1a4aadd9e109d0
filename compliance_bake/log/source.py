"""Where a log is read from: a folder (the one `bake --log` writes) or its http(s):// prefix.

Both answer a log-relative path (`checkpoint`, `tile/0/000.p/3`) with its bytes. A folder
answers None for a file that is not there; a URL fails as any fetched source does (exit 3):
tlog-tiles is static, so a log served as files answers exactly what the folder holds.
"""

from __future__ import annotations

from pathlib import Path

from compliance_bake.errors import InputError
from compliance_bake.inputs.files import read_if_present
from compliance_bake.log.tiles import Source
from compliance_bake.targets.fetch import fetch_document, is_url

MAX_FILE_BYTES = 1 << 20  # a full entry bundle of 256 entries of 4 KiB is 1 MiB


def folder_source(folder: Path) -> Source:
    def read(path: str) -> bytes | None:
        # Inside the log folder: a link there (to a key, to /dev/zero) is refused.
        return read_if_present(path, max_bytes=MAX_FILE_BYTES, what="log file", inside=folder)

    return read


def url_source(prefix: str, timeout: float) -> Source:
    base = prefix.rstrip("/")

    def read(path: str) -> bytes | None:
        return fetch_document(f"{base}/{path}", timeout=timeout, max_bytes=MAX_FILE_BYTES)

    return read


def open_source(location: str, timeout: float = 30.0) -> Source:
    """The log at a folder or URL; a folder that does not exist is bad input."""
    if is_url(location):
        return url_source(location, timeout)
    folder = Path(location)
    if not folder.is_dir():
        raise InputError(
            f"{location}: no such log folder",
            "pass the folder given to `bake snapshot --log`, or the log's http(s):// prefix",
        )
    return folder_source(folder)
