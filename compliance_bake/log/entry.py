"""One log entry per published snapshot: what a reader of the log needs, in RFC 8785 bytes.

The entry names the snapshot (its `generatedAt` and the integrity proof's digest), binds it to
the published `out/` (the SHA-256 of the attestation envelope, whose subjects are every other
file, and the signer's key id), and says how it went (the verdict: the bake's own, every
recorded check and no failing disagreement with the service; the board, the shadow mismatches,
the failing disagreements when there are, the ZIP-window audit when there was one) and against
what (the target's base). A bake that records failures is logged like any other: that is the
point.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any, NotRequired, TypedDict

from compliance_bake.findings import FAIL, INFO, RECORDED, Finding
from compliance_bake.report.disagreements import SEVERITY
from compliance_bake.report.escape import visible
from compliance_bake.signing.canon import canon

FIELDS = ("attestationSha256", "generatedAt", "integrityDigest", "keyId", "target", "verdict")


class Verdict(TypedDict):
    ok: bool
    board: dict[str, int]  # {"passed", "total"}
    shadowMismatches: int
    shadowDisagreements: NotRequired[dict[str, int]]  # the failing kinds with rows, by kind
    deepAuditOk: NotRequired[bool]
    waivers: NotRequired[dict[str, object]]  # bake --waivers: the file's digest and counts


class LogEntry(TypedDict):
    """The entry a bake appends (FIELDS, in order)."""

    attestationSha256: str
    generatedAt: str
    integrityDigest: str
    keyId: str
    target: str
    verdict: Verdict


def entry_of(document: Mapping[str, Any], attestation_sha256: str, key_id: str) -> LogEntry:
    """The entry of the snapshot whose JSON is `document`: the document the bake wrote, or
    `out/api/compliance.json` as `verify` reads it (which rebuilds the entry to compare every
    field with the logged one), so both compute it by this one function. `attestation_sha256`:
    the attestation's `sha256_hex`, as the bake signed it or `read_attestation` read it
    (signing/attestation.py). Raises KeyError or TypeError on a document without the
    snapshot's fields."""
    integrity = document["integrity"]
    board = document["enhancements"]
    shadow = document["shadow"]
    # The bake's verdict (bake.BakeResult.ok), as the portal and `verify` give it: a failing
    # kind fails it even where the real and shadow decisions agree (no mismatch).
    counts = (shadow.get("disagreements") or {}) if isinstance(shadow, dict) else None
    if not isinstance(counts, dict):
        raise TypeError("shadow or shadow.disagreements is not an object")
    waived = waived_rows(document)
    failing = {
        kind: counts[kind] - waived.get(kind, 0)
        for kind, severity in SEVERITY.items()
        if severity == FAIL and counts.get(kind, 0) - waived.get(kind, 0)
    }
    verdict: Verdict = {
        "ok": all(check["ok"] is True for check in integrity["checks"]) and not failing,
        "board": {"passed": board["passed"], "total": board["total"]},
        "shadowMismatches": shadow["summary"]["mismatches"],
    }
    if failing:
        verdict["shadowDisagreements"] = failing
    if "waivers" in document:
        recorded = document["waivers"]
        verdict["waivers"] = {k: recorded[k] for k in ("sha3", "applied", "until", "waived")}
    if "deepAudit" in document:
        verdict["deepAuditOk"] = document["deepAudit"]["zipWindow"]["ok"]
    return {
        "attestationSha256": attestation_sha256,
        "generatedAt": document["generatedAt"],
        "integrityDigest": integrity["proof"]["digest"],
        "keyId": key_id,
        "target": shadow["base"],
        "verdict": verdict,
    }


def verdict_finding(entry: Mapping[str, Any]) -> Finding:
    """A logged entry's verdict as what its bake recorded: failed unless it says `ok` true (an
    entry read from a log is any JSON, so an odd one is no pass), its self-checks and shadow
    mismatches the words, escaped (they are the log's text) and `?` where the entry has none."""
    verdict = entry.get("verdict") or {}
    board = verdict.get("board") or {}
    what = (
        f"self-checks {visible(board.get('passed', '?'))}/{visible(board.get('total', '?'))}  "
        f"mismatches {visible(verdict.get('shadowMismatches', '?'))}"
    )
    return Finding("", INFO if verdict.get("ok") is True else FAIL, what, RECORDED)


def waived_rows(document: Mapping[str, Any]) -> dict[str, int]:
    """The shadow rows the snapshot records as waived, by kind (`verify` checks that the record
    follows from its waivers and clock: waivers/apply.py)."""
    from compliance_bake.waivers.apply import APPLIED, SHADOW

    if "waivers" not in document:
        return {}
    seen = {
        (item["index"], item["kind"])
        for waiver in document["waivers"]["waivers"]
        if waiver["status"] == APPLIED
        for item in waiver["matched"]
        if item["in"] == SHADOW
    }
    return dict(Counter(kind for _, kind in seen))


def entry_bytes(entry: Mapping[str, object]) -> bytes:
    """The entry's RFC 8785 bytes: what the log stores and hashes (any JSON object: the log
    itself never reads an entry's fields)."""
    return canon(dict(entry))


def mismatches(logged: Any, expected: Any, where: str = "") -> list[str]:
    """The dotted names of the fields where the logged entry differs from the entry rebuilt
    from the snapshot: a different value, a missing field, or one the snapshot does not give
    (any JSON as read from out/: an odd shape is a mismatch, never an error)."""
    if isinstance(logged, dict) and isinstance(expected, dict):
        names: list[str] = []
        for key in sorted(logged.keys() | expected.keys()):
            name = f"{where}.{key}" if where else str(key)
            if key not in logged or key not in expected:
                names.append(name)
            else:
                names.extend(mismatches(logged[key], expected[key], name))
        return names
    same = type(logged) is type(expected) and logged == expected  # true is not 1
    return [] if same else [where or "entry"]
