"""How a snapshot we did not just bake is read: `read_snapshot`, so every reader agrees on it.

`verify`, both sides of `diff` and `bake --previous` read every snapshot through it, in one
process and in this order:

1. read the source: an `out/` folder (its `api/compliance.json`), a snapshot file (a regular
   file, size-capped) or an http(s) URL of a published `/api/compliance` (targets/fetch.py: one
   deadline, no redirects, a size cap);
2. parse strictly (verify/document.py, its shadow rows typed as they are read; inputs/jsonio.py:
   duplicate keys, NaN/Infinity, fractions, lone surrogates and the parser's limits are refused,
   with the place);
3. validate against the snapshot schema (the rows typed in step 2 against its row definition,
   `rows_meet_schema`, and the rest by the validator);
4. authenticate: recompute the digests (signing/proofs.py), check both proofs' HMACs with the
   report signing secret, and, for a folder with trusted Ed25519 public keys, its attestation.

Reading failures raise (a missing or unreadable file: InputError, exit 2; a failed fetch:
TargetError, exit 3). What the later steps find is kept in the `SnapshotReading`, never raised:
`verify` turns every step into findings (a document that is not strict JSON is a failed check,
exit 1; its rules read the JSON document, since they judge documents the schema may refuse),
while `diff` and `bake --previous` call `snapshot()`, the typed `Snapshot`, and
`refuse_unless_authentic`, which refuse with the same words (exit 2). So one file is refused the
same way by every command.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compliance_bake.errors import InputError
from compliance_bake.findings import Refusal
from compliance_bake.gc_pause import gc_paused
from compliance_bake.inputs import schemas
from compliance_bake.inputs.files import read_regular_file
from compliance_bake.inputs.schemas import SchemaViolation
from compliance_bake.progress import Phases, no_phases
from compliance_bake.report import layout
from compliance_bake.report.disagreements import RowKind
from compliance_bake.report.escape import json_line
from compliance_bake.report.models import ShadowRow, Snapshot
from compliance_bake.report.row_kinds import row_kinds, snapshot_violation
from compliance_bake.signing import proofs
from compliance_bake.signing.attestation import ATTESTATION_FILE
from compliance_bake.signing.integrity import proof_hmac_holds
from compliance_bake.signing.secret import Secret
from compliance_bake.targets.fetch import (
    SNAPSHOT_MAX_BYTES,
    fetch_document,
    is_url,
    shown_url,
)
from compliance_bake.targets.routes import DEFAULT_TIMEOUT
from compliance_bake.verify.attestation import AttestationResult, check_attestation
from compliance_bake.verify.document import parse_snapshot
from compliance_bake.verify.findings import QUOTED

NOT_SNAPSHOT_HINT = "pass a snapshot baked by compliance-bake (out/api/compliance.json)"
SOURCE_HINT = (
    "pass a baked out/ folder, a snapshot file (out/api/compliance.json) or an http(s):// URL "
    "of a published /api/compliance"
)
PROOFS = ("shadow.proof", "integrity.proof")
SNAPSHOT_BLOCKS = ("enhancements", "shadow", "geo", "integrity")  # spec 2.1's objects
SchemaOutcome = SchemaViolation | Refusal | None  # Refusal: the validator itself stopped


@dataclass(frozen=True, slots=True)
class KeyMaterial:
    """What can say who signed a snapshot: the HMAC secret, trusted Ed25519 public keys."""

    secret: Secret | None = None
    public_keys: tuple[bytes, ...] = ()  # PEM SubjectPublicKeyInfo, for the attestation

    @property
    def empty(self) -> bool:
        return self.secret is None and not self.public_keys


@dataclass(frozen=True, slots=True)
class Authenticity:
    authentic: bool
    checked: str  # how, with which secret source; or why not


@dataclass(frozen=True, slots=True)
class Authentication:
    """Step 4's outcome: what was recomputed and checked, and the verdict drawn from it."""

    digests: proofs.Digests
    hmacs: Mapping[str, bool] | None  # per proof (PROOFS): whether it holds; None: no secret
    attestation: AttestationResult | None  # None: no public key, or not a folder
    authenticity: Authenticity


@dataclass(frozen=True, slots=True, kw_only=True)
class SnapshotReading:
    """One source read through the four steps. `document` is None when the strict parse
    refused it (`parse_problem` says why); `schema` and `authentication` are None when their
    step could not run. `rows`: the shadow rows typed by the strict parse (verify/document.py),
    or None (then the typed snapshot converts the document's)."""

    source: str  # as every output shows it (a URL without user, password, query, fragment)
    kind: str  # "folder", "file" or "url"
    path: str  # the file read (a folder's api/compliance.json), or the source as shown
    folder: Path | None
    raw: bytes
    document: Any | None = None
    in_layout: bool = False  # the bytes are exactly the baked rendering of the document
    parse_problem: str | None = None
    schema: SchemaOutcome = None
    authentication: Authentication | None = None
    rows: Sequence[ShadowRow] | None = None
    kinds: Counter[RowKind] | None = None  # the typed rows' kinds (report/row_kinds.py)
    not_json: bool = False  # the strict parse refused text that is not JSON at all

    @property
    def no_snapshot(self) -> str | None:
        """Why the source holds no snapshot at all, so that no verdict can be given on it: text
        that is not JSON (nothing, bad UTF-8, bad syntax), JSON that is not an object, or an
        object with none of a snapshot's blocks (SNAPSHOT_BLOCKS). None: a snapshot, perhaps
        damaged (doubtful JSON, a block edited or missing), which is judged and fails."""
        if self.parse_problem is not None:
            if not self.not_json:
                return None
            return "it is empty" if not self.raw.strip() else self.parse_problem
        return _no_snapshot_in(self.document)

    @property
    def refusal(self) -> str | None:
        """Why this is not a snapshot (the strict parse, then the schema); None: it is one."""
        if self.parse_problem is not None:
            return self.parse_problem
        if not isinstance(self.document, dict):
            return "not a snapshot: the JSON is not an object"
        if isinstance(self.schema, Refusal):
            return f"not a snapshot: the schema cannot validate it ({self.schema.message})"
        if self.schema is not None:
            return f"not a snapshot: {plain_violation(self.schema)}"
        return None

    def snapshot(self, label: str) -> Snapshot:
        """The typed snapshot, or InputError (exit 2) saying why it is not one, `label` first.
        Built from the document once the schema has accepted it (`Snapshot.from_json` reads a
        valid document); the JSON stays behind, at the edge."""
        problem = self.refusal
        if problem is not None:
            raise InputError(f"{label} {self.path}: {problem}", NOT_SNAPSHOT_HINT)
        assert isinstance(self.document, dict)
        return Snapshot.from_json(self.document, shadow_rows=self.rows)

    def typed(self) -> Snapshot | None:
        """The typed snapshot, or None when the document is not one (`refusal` says why, or
        the schema let through what the models cannot hold: then every check reads the JSON)."""
        if self.refusal is not None:
            return None
        assert isinstance(self.document, dict)
        try:
            return Snapshot.from_json(self.document, shadow_rows=self.rows)
        except (KeyError, TypeError, ValueError):  # msgspec.ValidationError is a ValueError
            return None

    @property
    def authenticity(self) -> Authenticity:
        if self.authentication is None:
            return Authenticity(False, "not checked: not a snapshot")
        return self.authentication.authenticity


def _no_snapshot_in(document: Any) -> str | None:
    """Why a parsed document is no snapshot at all (see `SnapshotReading.no_snapshot`)."""
    if not isinstance(document, dict):
        return "the JSON is not an object"
    if not any(block in document for block in SNAPSHOT_BLOCKS):
        return f"the JSON object holds none of a snapshot's blocks ({', '.join(SNAPSHOT_BLOCKS)})"
    return None


def _read(source: str, timeout: float, max_bytes: int) -> tuple[str, str, Path | None, bytes]:
    """Step 1: (kind, the file read or the URL as shown, the folder or None, its bytes)."""
    if is_url(source):
        return (
            "url",
            shown_url(source),
            None,
            fetch_document(source, timeout=timeout, max_bytes=max_bytes),
        )
    path, folder, kind = Path(source), None, "file"
    if path.is_dir():
        path, folder, kind = path / layout.API_FILE, path, "folder"
    # In a folder, through inputs/files with no link inside it followed.
    raw = read_regular_file(
        path if folder is None else layout.API_FILE,
        max_bytes=max_bytes,
        what="snapshot",
        inside=folder,
        missing=MissingSnapshot(f"{path}: cannot read: no such file", SOURCE_HINT),
    )
    return kind, str(path), folder, raw


class MissingSnapshot(InputError):
    """The source names no file: a folder without api/compliance.json, or nothing at all."""


def plain_violation(violation: SchemaViolation) -> str:
    """What is wrong where, in words and JSON values: the validator's own wording names schema
    keywords (`not`, `const`) and prints the schema's internals, which a reader of the snapshot
    cannot act on."""
    where, value = violation.path, json_line(violation.instance, 80)
    message, keyword = violation.message, violation.keyword
    quoted = re.findall(r"'((?:[^'\\]|\\.)*)'", message)
    if keyword == "not":
        forbidden = re.match(r'\{"required":\[(.*?)\]\} is not allowed', message)
        if forbidden:
            absent = forbidden.group(1)
            return f"{where}: {absent} is not allowed with the other values of this object"
        return f"{where}: {value} is a value this place forbids"
    if keyword == "additionalProperties" and quoted:
        names = ", ".join(json_line(q, QUOTED) for q in quoted)
        return f"{where}: {names} is not a property this object may have"
    if keyword == "required":
        missing = message.removesuffix(" is a required property")
        return f"{where}: the required property {missing} is missing"
    if keyword == "const":
        return f"{where} is {value}; it must be {message.removesuffix(' was expected')}"
    if keyword == "type":
        wanted = message.rpartition(" is not of type ")[2]
        return f"{where} is {value}; it must be of type {wanted}"
    if keyword == "enum":
        return f"{where} is {value}; it must be {message.partition(' is not ')[2]}"
    if keyword == "pattern":
        wanted = message.rpartition(" does not match ")[2]
        return f"{where} is {value}; it must match the pattern {wanted}"
    return f"{where} is {value}: {message}"


def schema_outcome(schema: str, doc: Any) -> SchemaOutcome:
    """Step 3 for any JSON file of out/ (the registry copies, each with its own schema)."""
    try:
        return schemas.first_violation(schema, doc)
    except (RecursionError, ValueError) as exc:  # jsonschema-rs on a pathological document
        return Refusal(schema, type(exc).__name__)


def snapshot_schema_outcome(document: Any, kinds: Counter[RowKind] | None) -> SchemaOutcome:
    """Step 3 for a snapshot (row_kinds.snapshot_violation). `kinds`: the kinds of its shadow
    rows as the strict parse typed them (then the document's rows are exactly these, member for
    member, each partner held to `ShadowRow.partner`: verify/document.py), or None when they
    were not read the typed way."""
    try:
        return snapshot_violation(document, kinds)
    except (RecursionError, ValueError) as exc:  # jsonschema-rs on a pathological document
        return Refusal(schemas.SNAPSHOT, type(exc).__name__)


def _by_secret(
    snap: dict[str, Any], digests: proofs.Digests, hmacs: Mapping[str, bool], secret: Secret
) -> Authenticity:
    try:
        recorded = snap["integrity"]["proof"]["digest"]
    except (KeyError, TypeError):
        recorded = None
    if digests.integrity is None or recorded != digests.integrity:
        return Authenticity(False, "integrity.proof.digest does not match the content (edited)")
    for where in PROOFS:
        if not hmacs[where]:
            return Authenticity(
                False, f"{where}.hmac does not match (tampered, or baked with another secret)"
            )
    return Authenticity(True, f"HMAC-SHA3-256 with the report signing secret from {secret.source}")


def _by_attestation(result: AttestationResult | None) -> Authenticity:
    if result is None:
        return Authenticity(
            False, "public key: a snapshot file has no attestation beside it (pass its out/ folder)"
        )
    if result.ok:
        return Authenticity(
            True, f"Ed25519 attestation {ATTESTATION_FILE}, public key {result.key_id}"
        )
    failure = result.failures[0] if result.failures else None
    why = "no public key verified it" if failure is None else f"{failure.file}: {failure.what}"
    return Authenticity(False, f"public key: {why}")


def authenticate(snap: Any, keys: KeyMaterial, folder: Path | None) -> Authentication:
    """Step 4. Authentic when the integrity digest is the content's and both HMACs hold with the
    secret, or (for an out/ folder) its attestation verifies with a trusted key. Fails closed."""
    doc: dict[str, Any] = snap if isinstance(snap, dict) else {}
    digests = proofs.snapshot_digests(doc)
    hmacs: dict[str, bool] | None = None
    if keys.secret is not None:
        shadow, integrity = doc.get("shadow"), doc.get("integrity")
        blocks = {"shadow.proof": shadow, "integrity.proof": integrity}
        hmacs = {
            where: proof_hmac_holds(
                block.get("proof") if isinstance(block, dict) else None, keys.secret.value
            )
            for where, block in blocks.items()
        }
    attestation = None
    if keys.public_keys and folder is not None:
        attestation = check_attestation(folder, keys.public_keys, snapshot=doc)
    reasons: list[str] = []
    if keys.empty:
        reasons.append("not checked: no report signing secret or public key configured")
    if keys.secret is not None and hmacs is not None:
        found = _by_secret(doc, digests, hmacs, keys.secret)
        if found.authentic:
            return Authentication(digests, hmacs, attestation, found)
        reasons.append(found.checked)
    if keys.public_keys:
        found = _by_attestation(attestation)
        if found.authentic:
            return Authentication(digests, hmacs, attestation, found)
        reasons.append(found.checked)
    return Authentication(digests, hmacs, attestation, Authenticity(False, "; ".join(reasons)))


def read_snapshot(
    source: str,
    keys: KeyMaterial,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    max_bytes: int = SNAPSHOT_MAX_BYTES,
    phases: Phases = no_phases,
) -> SnapshotReading:
    """Read, strictly parse, validate and authenticate the snapshot at `source` (see above)."""
    phases("read")
    kind, path, folder, raw = _read(source, timeout, max_bytes)
    shown = shown_url(source)
    with gc_paused(keep=True):  # an acyclic tree, kept to the end: collections would walk it
        parsed = parse_snapshot(raw)
    if isinstance(parsed, Refusal):
        return SnapshotReading(
            source=shown, kind=kind, path=path, folder=folder, raw=raw,
            parse_problem=parsed.message, not_json=parsed.not_json,
        )  # fmt: skip
    document, in_layout, rows = parsed
    kinds = None if rows is None else row_kinds(rows)
    schema = snapshot_schema_outcome(document, kinds)
    if _no_snapshot_in(document) is None:  # else the caller's one line says what it is
        phases("digests")
    authentication = authenticate(document, keys, folder) if isinstance(document, dict) else None
    return SnapshotReading(
        source=shown, kind=kind, path=path, folder=folder, raw=raw, document=document,
        in_layout=in_layout, schema=schema, authentication=authentication, rows=rows, kinds=kinds,
    )  # fmt: skip


def refuse_unless_authentic(
    label: str, shown: str, authenticity: Authenticity, allowed: bool, hint: str
) -> None:
    """InputError (exit 2) for a snapshot that is not authentic, unless the caller allowed it."""
    if not authenticity.authentic and not allowed:
        raise InputError(f"{label} {shown} is not authentic: {authenticity.checked}", hint)
