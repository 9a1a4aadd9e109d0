"""A compact copy of the `zipcodes` database, cached per user, so that a bake skips its start-up.

The `zipcodes` package keeps its database inside its compiled extension: the first query costs
about 0.3 s to load it, and listing all 42,000 records about 0.2 s more. The fields the ZIP index
reads (ZIP, state, city, acceptable cities) fit in one 1.4 MB JSON file, read back in about
20 ms. The file lives in the user's cache folder (`$XDG_CACHE_HOME`, else `~/.cache`), under
`compliance-bake/`, and its name carries a key of the installed `zipcodes` (its version, and the
size and modification time of its extension): another `zipcodes` reads its own database again
and writes its own copy.

The copy is the four fields as columns (a list each, the acceptable cities by ZIP where there
are some), after a first line holding the SHA-256 of the rest. A cache is never needed: a copy
that is missing, unreadable, of another format or whose digest does not match (truncated, edited)
is ignored and the database read instead, and a copy that cannot be written is not written.
Writes go to a temporary file renamed into place, so concurrent bakes never read half a copy.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from pathlib import Path
from typing import NamedTuple

import orjson

from compliance_bake.resources import user_cache_dir


class ZipColumns(NamedTuple):
    """The fields the ZIP index reads, a list each in the database's order; the acceptable
    cities by ZIP, for the ZIPs that have some."""

    zips: list[str]
    states: list[str]
    cities: list[str]
    acceptable: dict[str, list[str]]

_FORMAT = 1


def cache_file() -> Path:
    """Where the copy of the installed `zipcodes` database lives."""
    import zipcodes
    from zipcodes import _zipcodes

    extension = os.stat(_zipcodes.__file__)
    identity = f"{_FORMAT} {zipcodes.__version__} {extension.st_size} {extension.st_mtime_ns}"
    key = hashlib.sha256(identity.encode()).hexdigest()[:16]
    return user_cache_dir() / f"zipcodes-{key}.json"


def read_cached() -> ZipColumns | None:
    """The cached columns, or None when there is no usable copy."""
    try:
        data = cache_file().read_bytes()
    except OSError:
        return None
    header, _, payload = data.partition(b"\n")
    if header != hashlib.sha256(payload).hexdigest().encode():
        return None  # not a whole copy written by `_write` (truncated, or edited)
    try:
        document = orjson.loads(payload)
        if document["format"] != _FORMAT:
            return None
        columns = ZipColumns(
            document["zips"], document["states"], document["cities"], document["acceptable"]
        )
    except (orjson.JSONDecodeError, KeyError, TypeError):
        return None
    lists = columns.zips, columns.states, columns.cities
    if not all(type(column) is list and len(column) == len(columns.zips) for column in lists):
        return None
    return columns if type(columns.acceptable) is dict else None


def read_database() -> ZipColumns:
    """Every record of the `zipcodes` database (and a cached copy of them, when it can be
    written)."""
    import zipcodes

    records = zipcodes.filter_by()  # type: ignore[no-untyped-call]
    columns = ZipColumns(
        [row["zip_code"] for row in records],
        [row["state"] for row in records],
        [row["city"] for row in records],
        {row["zip_code"]: row["acceptable_cities"] for row in records if row["acceptable_cities"]},
    )
    with contextlib.suppress(OSError):
        _write(cache_file(), columns)
    return columns


def _write(path: Path, columns: ZipColumns) -> None:
    """The columns, after a line holding the SHA-256 of the rest."""
    document = {"format": _FORMAT, **columns._asdict()}
    payload = orjson.dumps(document)
    data = hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
