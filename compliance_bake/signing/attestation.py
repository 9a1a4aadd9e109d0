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

`read_attestation` reads the file in a folder for every reader (verify's checks, the portal's
previous-snapshot record, the portal's signer, the log's proof): through inputs/files, its
size capped, a link or a FIFO planted there never followed; the envelope parsed strictly and
its Statement's subjects checked for shape, each problem named once, the same for every reader.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, NotRequired, TypedDict, TypeGuard

from compliance_bake.findings import FAIL, KEY, Finding
from compliance_bake.inputs.files import LeavesFolder, NotRegular, TooLarge, read_bounded
from compliance_bake.inputs.jsonio import StrictJSONError, dumps_pretty, loads_strict
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
    """The SHA-256 an attestation names a file by, and the log an attestation by."""
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
    waivers: NotRequired[dict[str, object]]  # `bake --waivers`: the file's digest and counts


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
    if "waivers" in snapshot:  # bake --waivers (docs/waivers.md)
        waivers = snapshot["waivers"]
        summary["waivers"] = {k: waivers[k] for k in ("sha3", "applied", "until", "waived")}
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


_SHA256_HEX = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True, slots=True)
class DsseSignature:
    """One of the envelope's signatures as written: `keyid` as given (a key id when well
    formed), `sig` decoded (None when it is not base64)."""

    keyid: object
    sig: bytes | None


@dataclass(frozen=True, slots=True)
class ReadAttestation:
    """The attestation of a folder as read: its bytes and their SHA-256, the envelope's payload
    and signatures, and the Statement's subjects (name: SHA-256) and predicate. Nothing the
    Statement says counts before a signature over the payload verifies, so a Statement that
    cannot be read is kept as `statement_problem` (then no subjects, no predicate) for a
    verifier to name after the signature."""

    raw: bytes
    sha256: str
    payload: bytes
    signatures: tuple[DsseSignature, ...]
    subjects: Mapping[str, str]
    predicate: object
    statement_problem: Finding | None = None


def _problem(what: str) -> Finding:
    return Finding(ATTESTATION_FILE, FAIL, what, KEY)


def _b64(value: object) -> bytes | None:
    if not isinstance(value, str):
        return None
    try:
        return base64.b64decode(value.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError):
        return None


def _safe_name(name: object) -> TypeGuard[str]:
    """A subject's name: a relative POSIX path inside the folder (no `..`, no backslash)."""
    if not isinstance(name, str) or not name or "\\" in name or "\x00" in name:
        return False
    parts = PurePosixPath(name).parts
    return (
        not name.startswith("/")
        and "/".join(parts) == name
        and all(part not in (".", "..") for part in parts)
    )


def _statement(payload: bytes) -> tuple[dict[str, str], object] | Finding:
    """{name: sha256} and the predicate of the payload's Statement, or why it is not one."""
    try:
        statement = loads_strict(payload)
    except StrictJSONError as exc:
        return _problem(f"payload: not strict JSON at {exc.where}: {exc}")
    if not isinstance(statement, dict) or statement.get("_type") != STATEMENT_TYPE:
        return _problem(f"payload: not an in-toto Statement ({STATEMENT_TYPE})")
    if statement.get("predicateType") != PREDICATE_TYPE:
        return _problem(f"payload: predicateType is not {PREDICATE_TYPE}")
    subject = statement.get("subject")
    digests: dict[str, str] = {}
    for entry in subject if isinstance(subject, list) else [None]:
        name = entry.get("name") if isinstance(entry, dict) else None
        digest = entry.get("digest") if isinstance(entry, dict) else None
        sha = digest.get("sha256") if isinstance(digest, dict) else None
        if not _safe_name(name) or not isinstance(sha, str) or not _SHA256_HEX.fullmatch(sha):
            return _problem("payload: a subject is not {name, digest: {sha256}}")
        if name in digests or name == ATTESTATION_FILE:
            return _problem(f"payload: subject {name} listed twice or names itself")
        digests[name] = sha
    return digests, statement.get("predicate")


def read_attestation(folder: Path) -> ReadAttestation | Finding | None:
    """`folder`'s attestation (see above); None when there is none: missing, or not a regular
    file (a link or a FIFO planted there is no attestation, and is not followed); a failed
    Finding (kind KEY) when it is there and cannot be read as an envelope of our payload type."""
    try:
        raw = read_bounded(ATTESTATION_FILE, MAX_ENVELOPE_BYTES, inside=folder)
    except (FileNotFoundError, NotADirectoryError, LeavesFolder, NotRegular):
        return None
    except TooLarge:
        return _problem(f"larger than {MAX_ENVELOPE_BYTES} bytes")
    except OSError as exc:
        return _problem(f"cannot read: {exc.strerror}")
    try:
        doc = loads_strict(raw)
    except StrictJSONError as exc:
        return _problem(f"not strict JSON at {exc.where}: {exc}")
    if not isinstance(doc, dict) or set(doc) != {"payloadType", "payload", "signatures"}:
        return _problem("not a DSSE envelope {payloadType, payload, signatures}")
    if doc["payloadType"] != PAYLOAD_TYPE:
        return _problem(f"payloadType is not {PAYLOAD_TYPE}")
    payload, signatures = _b64(doc["payload"]), doc["signatures"]
    if not (
        payload is not None
        and isinstance(signatures, list)
        and signatures
        and all(isinstance(s, dict) and set(s) == {"keyid", "sig"} for s in signatures)
    ):
        return _problem("payload is not base64, or signatures are not [{keyid, sig}]")
    statement = _statement(payload)
    subjects, claimed = ({}, None) if isinstance(statement, Finding) else statement
    return ReadAttestation(
        raw=raw,
        sha256=sha256_hex(raw),
        payload=payload,
        signatures=tuple(DsseSignature(s["keyid"], _b64(s["sig"])) for s in signatures),
        subjects=subjects,
        predicate=claimed,
        statement_problem=statement if isinstance(statement, Finding) else None,
    )
