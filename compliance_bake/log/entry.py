"""One log entry per published snapshot: what a reader of the log needs, in RFC 8785 bytes.

The entry names the snapshot (its `generatedAt` and the integrity proof's digest), binds it to
the published `out/` (the SHA-256 of the attestation envelope, whose subjects are every other
file, and the signer's key id), and says how it went (the verdict: every recorded check, the
board, the shadow mismatches, the ZIP-window audit when there was one) and against what (the
target's base). A bake that records failures is logged like any other: that is the point.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any, NotRequired, TypedDict

from compliance_bake.report.models import Snapshot
from compliance_bake.signing.canon import canon

FIELDS = ("attestationSha256", "generatedAt", "integrityDigest", "keyId", "target", "verdict")


class Verdict(TypedDict):
    ok: bool
    board: dict[str, int]  # {"passed", "total"}
    shadowMismatches: int
    deepAuditOk: NotRequired[bool]


class LogEntry(TypedDict):
    """The entry a bake appends (FIELDS, in order)."""

    attestationSha256: str
    generatedAt: str
    integrityDigest: str
    keyId: str
    target: str
    verdict: Verdict


def entry_of(snapshot: Snapshot, attestation: bytes, key_id: str) -> LogEntry:
    verdict: Verdict = {
        "ok": snapshot.integrity.holds,
        "board": {"passed": snapshot.enhancements.passed, "total": snapshot.enhancements.total},
        "shadowMismatches": snapshot.shadow.summary.mismatches,
    }
    if snapshot.deep_audit is not None:
        verdict["deepAuditOk"] = snapshot.deep_audit.zip_window.ok
    return {
        "attestationSha256": hashlib.sha256(attestation).hexdigest(),
        "generatedAt": snapshot.generated_at,
        "integrityDigest": snapshot.integrity.proof.digest,
        "keyId": key_id,
        "target": snapshot.shadow.base,
        "verdict": verdict,
    }


def entry_bytes(entry: Mapping[str, object]) -> bytes:
    """The entry's RFC 8785 bytes: what the log stores and hashes (any JSON object: the log
    itself never reads an entry's fields)."""
    return canon(dict(entry))


def predicate_mismatches(entry: Mapping[str, Any], predicate: Mapping[str, Any]) -> list[str]:
    """Fields of the entry that the attestation's signed predicate contradicts; both as read
    from out/ (any JSON: a missing or odd field is a mismatch, never an error)."""
    verdict = entry.get("verdict") or {}
    pairs = [
        ("generatedAt", entry.get("generatedAt"), predicate.get("generatedAt")),
        ("integrityDigest", entry.get("integrityDigest"),
         (predicate.get("proofs") or {}).get("integrity")),
        ("verdict.board", verdict.get("board"), predicate.get("board")),
        ("verdict.shadowMismatches", verdict.get("shadowMismatches"),
         (predicate.get("shadow") or {}).get("mismatches")),
        ("verdict.deepAuditOk", verdict.get("deepAuditOk"),
         (predicate.get("deepAudit") or {}).get("ok")),
    ]  # fmt: skip
    return [name for name, ours, theirs in pairs if ours != theirs]
