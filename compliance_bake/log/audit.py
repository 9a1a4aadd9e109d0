"""`log verify` and `log show`: the whole log recomputed, and one entry read.

The audit checks the checkpoint's signature, recomputes every tile from the entry bundles and
the root from the tiles, and lists each entry (its index, date, verdict and target). Each check
is a finding, held or failed; `summary` is `log verify --json`'s document. A log that
is consistent within itself can still be a rebuilt history: that is what a witness, holding an
earlier checkpoint, and `verify --log`, holding the snapshot's, catch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from compliance_bake.errors import InputError
from compliance_bake.findings import FAIL, Finding, Findings
from compliance_bake.inputs.jsonio import StrictJSONError, loads_strict
from compliance_bake.log import check, merkle, note
from compliance_bake.log.tiles import TILE_HEIGHT, TILE_WIDTH, Source, TileMissing, TileReader
from compliance_bake.report.models import JsonObject
from compliance_bake.targets.fetch import shown_url


@dataclass(slots=True)
class LogAudit(Findings):
    """The log's checkpoint, its entries as read, and what failed (`failures`)."""

    location: str  # as every output shows it: a URL without its user name or password
    checkpoint: note.Checkpoint | None = None
    entries: list[dict[str, Any]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.checkpoint is not None and not self.failures

    def summary(self) -> JsonObject:
        """`log verify --json`, and the details of its reports."""
        cp = self.checkpoint
        return {
            "ok": self.ok,
            "log": self.location,
            "origin": cp.origin if cp else None,
            "size": cp.size if cp else None,
            "root": cp.root.hex() if cp else None,
            "problems": [f.line for f in self.failures],
            "entries": list(self.entries),
        }


def _entry(index: int, data: bytes) -> tuple[dict[str, Any], Finding | None]:
    try:
        value = loads_strict(data)
    except StrictJSONError as exc:
        return {"index": index}, Finding("", FAIL, f"entry {index}: not JSON ({exc})")
    if not isinstance(value, dict):
        return {"index": index}, Finding("", FAIL, f"entry {index}: not a JSON object")
    return {"index": index, **value}, None


def audit_log(location: str, source: Source, keys: Sequence[Ed25519PublicKey]) -> LogAudit:
    result = LogAudit(shown_url(location))
    recomputed = "every tile recomputed from the entries, and the root"
    signed, entries = check.checked_tiles(result, source, keys, "the given key", recomputed)
    if signed is None:
        return result
    result.checkpoint = signed.checkpoint
    for index, data in enumerate(entries):
        value, bad = _entry(index, data)
        result.entries.append(value)
        if bad:
            result.findings.append(bad)
    return result


def show_entry(source: Source, keys: Sequence[Ed25519PublicKey], index: int) -> dict[str, Any]:
    """Entry `index` of the log, under a checkpoint that verifies; InputError otherwise."""
    signed = check.read_signed(source(check.CHECKPOINT), check.CHECKPOINT, keys)
    if isinstance(signed, Finding):
        raise InputError(signed.line, "check --public-key and the log")
    size = signed.checkpoint.size
    if not 0 <= index < size:
        raise InputError(
            f"entry {index}: the log holds entries 0 to {size - 1}", "pass an index the log holds"
        )
    try:
        bundle = TileReader(source, size).entries(index >> TILE_HEIGHT)
        data = bundle[index % TILE_WIDTH]
        proof = merkle.inclusion_proof(TileReader(source, size), index, size)
    except TileMissing as exc:
        raise InputError(f"{exc.path}: {exc.what}", "run `log verify` on the log") from None
    if not merkle.verify_inclusion(
        index, size, merkle.leaf_hash(data), proof, signed.checkpoint.root
    ):
        raise check.LogCheckFailed(
            f"entry {index}: not included in {signed.checkpoint.describe()} (the tiles or the "
            "entry were edited)",
            "run `log verify` on the log",
        )
    value, bad = _entry(index, data)
    if bad:
        raise InputError(bad.line, "run `log verify` on the log")
    return value
