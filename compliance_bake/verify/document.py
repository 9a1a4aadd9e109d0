"""Steps 1 (a file) and 2 of the one way a snapshot is read (verify/source.py): the capped
read of a regular file and the strict parse, with the words that refuse a document.

Apart from source.py so that the attestation check, which source.py runs to authenticate a
folder, reads the snapshot its predicate summarises the same way without importing source.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from compliance_bake.inputs.files import read_regular_file
from compliance_bake.inputs.jsonio import StrictJSONError, loads_pretty
from compliance_bake.targets.fetch import SNAPSHOT_MAX_BYTES


def read_document(path: Path, max_bytes: int = SNAPSHOT_MAX_BYTES) -> Any:
    """The parsed snapshot file; InputError (or FileNotFoundError) when it cannot be read,
    ValueError when it is not strict JSON."""
    parsed = parse_snapshot_bytes(read_regular_file(path, max_bytes=max_bytes, what="snapshot"))
    if isinstance(parsed, str):
        raise ValueError(parsed)
    return parsed[0]


def parse_snapshot_bytes(raw: bytes) -> tuple[Any, bool] | str:
    """Step 2: the strictly parsed document and whether `raw` is its baked rendering, or the
    words that refuse it."""
    try:
        return loads_pretty(raw)
    except StrictJSONError as exc:
        return f"not JSON at {exc.where}: {exc}"
