"""The public attestation: an in-toto Statement v1 in a DSSE envelope, signed with Ed25519.

`out/attestation/compliance.intoto.json` sits beside the snapshot, never inside its fields:

- the Statement's subjects are the other files the bake writes, each named by its path relative
  to `out/` with its SHA-256, sorted by name;
- its predicate summarises the snapshot (generatedAt, board passed/total, the shadow summary,
  the ZIP-window audit's `ok` when there is one, and the two proof digests);
- the envelope's payload is the Statement's RFC 8785 bytes, base64; its one signature is the
  Ed25519 signature of DSSE's pre-authentication encoding
  `"DSSEv1" SP len(type) SP type SP len(payload) SP payload` (lengths in decimal bytes).

Ed25519 is deterministic and every part is canonical, so the same files and key give the same
bytes. The bake hands the rendered files in; this module never imports report.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping
from typing import Any, NotRequired, TypedDict

from compliance_bake.inputs.jsonio import dumps_pretty
from compliance_bake.signing.canon import canon
from compliance_bake.signing.signing_key import SigningKey

ATTESTATION_FILE = "attestation/compliance.intoto.json"
PAYLOAD_TYPE = "application/vnd.in-toto+json"
STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
# The project publishes no web site, so the predicate type is a URN: it names the type without
# pretending to be a page one could fetch. docs/signing.md (Attestation) documents its fields.
PREDICATE_TYPE = "urn:compliance-bake:predicate:snapshot-summary:v1"
MAX_ENVELOPE_BYTES = 1 << 20  # the envelope of four subjects takes about 1 KiB


def pae(payload_type: str, payload: bytes) -> bytes:
    """DSSE v1 pre-authentication encoding: what the signature covers."""
    kind = payload_type.encode("utf-8")
    return b"DSSEv1 %d %b %d %b" % (len(kind), kind, len(payload), payload)


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Subject(TypedDict):
    name: str
    digest: dict[str, str]  # {"sha256": hex}


class BoardSummary(TypedDict):
    passed: int
    total: int


class ShadowSummary(TypedDict):
    rows: int
    allow: int
    block: int
    mismatches: int


class Proofs(TypedDict):
    shadow: str
    integrity: str


class Predicate(TypedDict):
    """The predicate's fields (the payload's RFC 8785 bytes sort them)."""

    generatedAt: str
    board: BoardSummary
    shadow: ShadowSummary
    deepAudit: NotRequired[dict[str, bool]]  # {"ok": the ZIP-window audit's verdict}
    proofs: Proofs
    previous: NotRequired[dict[str, object]]  # the `bake --previous` record, as signed


class Statement(TypedDict):
    _type: str
    subject: list[Subject]
    predicateType: str
    predicate: Predicate


class Signature(TypedDict):
    keyid: str
    sig: str


class Envelope(TypedDict):
    payloadType: str
    payload: str
    signatures: list[Signature]


def subjects(files: Mapping[str, bytes]) -> list[Subject]:
    return [{"name": name, "digest": {"sha256": sha256_hex(files[name])}} for name in sorted(files)]


def predicate(
    snapshot: Mapping[str, Any], previous: Mapping[str, object] | None = None
) -> Predicate:
    """What a reader without the HMAC secret may want at a glance, bound by the signature; with
    `bake --previous`, also `previous`: the record the portal's "since the previous snapshot"
    section is rendered from (report/portal_previous.py), never a field of the snapshot.

    `snapshot` is the snapshot's JSON: the document the bake wrote, or the file `verify` read
    (for which it checks the claimed predicate), so both compute it by this one function."""
    board = snapshot["enhancements"]
    shadow = snapshot["shadow"]
    summary: Predicate = {
        "generatedAt": snapshot["generatedAt"],
        "board": {"passed": board["passed"], "total": board["total"]},
        "shadow": {
            "rows": len(shadow["rows"]),
            "allow": shadow["summary"]["allow"],
            "block": shadow["summary"]["block"],
            "mismatches": shadow["summary"]["mismatches"],
        },
        "proofs": {
            "shadow": shadow["proof"]["digest"],
            "integrity": snapshot["integrity"]["proof"]["digest"],
        },
    }
    if "deepAudit" in snapshot:
        summary["deepAudit"] = {"ok": snapshot["deepAudit"]["zipWindow"]["ok"]}
    if previous is not None:
        summary["previous"] = dict(previous)
    return summary


def statement(
    files: Mapping[str, bytes],
    snapshot: Mapping[str, Any],
    previous: Mapping[str, object] | None = None,
) -> Statement:
    return {
        "_type": STATEMENT_TYPE,
        "subject": subjects(files),
        "predicateType": PREDICATE_TYPE,
        "predicate": predicate(snapshot, previous),
    }


def envelope(payload: bytes, key: SigningKey) -> Envelope:
    signature = key.sign(pae(PAYLOAD_TYPE, payload))
    return {
        "payloadType": PAYLOAD_TYPE,
        "payload": base64.b64encode(payload).decode("ascii"),
        "signatures": [{"keyid": key.key_id, "sig": base64.b64encode(signature).decode("ascii")}],
    }


def render_attestation(
    files: Mapping[str, bytes],
    snapshot: Mapping[str, Any],
    key: SigningKey,
    previous: Mapping[str, object] | None = None,
) -> bytes:
    """The attestation file's bytes for these rendered files (the attestation itself excluded)."""
    if ATTESTATION_FILE in files:
        raise ValueError(f"{ATTESTATION_FILE} cannot be its own subject")
    payload = canon(statement(files, snapshot, previous))
    return dumps_pretty(envelope(payload, key))
