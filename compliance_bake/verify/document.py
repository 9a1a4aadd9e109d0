"""Steps 1 (a file) and 2 of reading a snapshot, as every command does (verify/source.py): the
capped read of a regular file and the strict parse, with the words that refuse a document.

Apart from source.py so that the attestation check, which source.py runs to authenticate a
folder, reads the snapshot its predicate summarises the same way without importing source.py.

`parse_snapshot` reads a snapshot in the baked layout with its shadow rows decoded straight
into typed rows (report/models.py `ShadowRow`), in one msgspec pass: the rows are nearly all of a
large snapshot, and this pass costs less than orjson's reading into dicts, makes the typed rows
the rules and the portal read without a second conversion, and spares the float scan of the
rows' bytes, since their type holds no number. The document (JSON values, as the validator,
the digests and the rules read it) is then built from that reading, its rows included, and it
is the strict reading because `raw` is exactly its rendering and the parts not typed hold no
float (inputs/jsonio.py `loads_typed`, the proof beside the fast path). The rows' JSON values
are what makes that proof cheap: orjson renders them, and it cannot render the typed rows.
Anything else (another layout, a row that is not a `ShadowRow`, a member out of order or
unknown) is read by `parse_snapshot_bytes`, the plain strict reading, which refuses with the
place.
tests/verify/test_document.py holds the two to the same answers.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

import msgspec

from compliance_bake.findings import Refusal
from compliance_bake.inputs.files import read_regular_file
from compliance_bake.inputs.jsonio import StrictJSONError, loads_pretty, loads_typed
from compliance_bake.report.models import ShadowRow
from compliance_bake.targets.fetch import SNAPSHOT_MAX_BYTES


class ParsedSnapshot(NamedTuple):
    document: Any  # the strict reading: JSON values
    in_layout: bool  # the bytes are exactly the baked rendering of the document
    rows: Sequence[ShadowRow] | None  # the shadow rows, typed, when read so (else None)


class _ShadowBlock(msgspec.Struct, kw_only=True, omit_defaults=True, rename="camel"):
    """The shadow block as the bake lays it out (spec 2.3), its rows typed; a block that
    differs is read the plain way. Its JSON names are its field names in camelCase; `sources`
    and `disagreements` are compliance-bake's (`compliance-bake docs spec`), absent from older
    snapshots."""

    generated_at: Any
    base: Any
    rows: list[ShadowRow]
    summary: Any
    sources: Any = msgspec.UNSET
    disagreements: Any = msgspec.UNSET
    signature: Any
    proof: Any


class _SnapshotLayout(msgspec.Struct, kw_only=True, omit_defaults=True, rename="camel"):
    """The snapshot's members in the bake's order (spec 2.1); `deepAudit` only when there."""

    ok: Any
    mode: Any
    read_only: Any
    schema_version: Any
    generated_at: Any
    enhancements: Any
    shadow: _ShadowBlock
    geo: Any
    deep_audit: Any = msgspec.UNSET
    integrity: Any
    links: Any
    proton: Any


def read_document(
    path: Path | str, max_bytes: int = SNAPSHOT_MAX_BYTES, inside: Path | None = None
) -> Any:
    """The parsed snapshot file (`path` relative to `inside`, no link in it followed, when
    given); InputError (or FileNotFoundError) when it cannot be read, ValueError when it is not
    strict JSON."""
    raw = read_regular_file(path, max_bytes=max_bytes, what="snapshot", inside=inside)
    parsed = parse_snapshot(raw)
    if isinstance(parsed, Refusal):
        raise ValueError(parsed.message)
    return parsed.document


def parse_snapshot(raw: bytes) -> ParsedSnapshot | Refusal:
    """Step 2 for a snapshot: its strict reading, whether `raw` is its baked rendering, and its
    rows typed when it is in the baked layout (see above); or the refusal."""
    typed = _typed_reading(raw)
    if typed is not None:
        return typed
    parsed = parse_snapshot_bytes(raw)
    if isinstance(parsed, Refusal):
        return parsed
    return ParsedSnapshot(parsed[0], parsed[1], None)


def _typed_reading(raw: bytes) -> ParsedSnapshot | None:
    """The strict reading of a snapshot in the baked layout, its rows typed; None: not shown
    so (then the plain strict reading decides)."""
    typed = loads_typed(raw, _SnapshotLayout, _without_rows)
    return None if typed is None else ParsedSnapshot(typed[1], True, typed[0].shadow.rows)


def _without_rows(document: Any) -> Any:
    return {**document, "shadow": {**document["shadow"], "rows": []}}


def parse_snapshot_bytes(raw: bytes) -> tuple[Any, bool] | Refusal:
    """Step 2 for any JSON file of out/: the strictly parsed document and whether `raw` is its
    baked rendering, or the refusal."""
    try:
        return loads_pretty(raw)
    except StrictJSONError as exc:
        return Refusal(exc.where, f"not JSON at {exc.where}: {exc}", not_json=exc.syntax)
