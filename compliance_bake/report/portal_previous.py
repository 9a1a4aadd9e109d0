"""The portal's "since the previous snapshot" section, and the record it is rendered from.

`bake snapshot --previous OLD` compares the new snapshot with an earlier one. The comparison is
presentation only: the snapshot's fields never change. What the section shows is a *record*
(`PreviousRecord`; its JSON is what the bake puts in the signed attestation's predicate as
`previous`, signing/attestation.py) that this module alone turns into HTML, so `verify`
re-renders the page from the snapshot and that record and compares bytes:

- `source`, `generatedAt`, `integrityDigest`: the previous snapshot as given, its time and its
  `integrity.proof.digest` (which binds its every field);
- `authenticated`, `checked`: whether and how it was authenticated when the bake read it;
- `snapshot`: this snapshot's `integrity.proof.digest` (the record belongs to it alone);
- `counts`: the changes per class; `decisions`: the first RECORD_LIMIT decision changes,
  `decisionsTotal` how many there are;
- `hmac`: HMAC-SHA3-256 of the record's RFC 8785 bytes without `hmac`, keyed with the report
  signing secret (so `verify` with the secret alone can authenticate the record, as the
  Ed25519 signature of the attestation does for a public key).

Every value shown passes through `escape.escape_html` (the template's `cell` filter). A record
that is not of this shape raises ValueError: `verify` then fails the page, never shows it.

`verify` re-renders the page from the snapshot and the record, so the section must come from a
record a key vouches for (`checked_record`):
- with trusted public keys, the attestation's Ed25519 signature covers the predicate, record
  included (verify fails the attestation when the signature or a file does not hold);
- with the report signing secret, the record's own `hmac` must hold;
- the record must name this snapshot (`snapshot` = its `integrity.proof.digest`);
- with no key at all (`--digests-only`), the record is used to render the page but said to be
  unauthenticated, as everything else is in that mode.
No record (no attestation, or a predicate without `previous`): the page must be the plain
rendering, so a section added to the page by hand fails. A record that cannot be read fails.

This module is the record's one home: its shape, seal, check and view. diff/previous.py builds it
(it needs diff's comparison), the bake seals and signs it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from compliance_bake.errors import InputError
from compliance_bake.findings import HMAC, KEY, Findings
from compliance_bake.report.models import JsonObject, JsonValue, Snapshot
from compliance_bake.signing.attestation import ATTESTATION_FILE, ReadAttestation, read_attestation
from compliance_bake.signing.integrity import proof_hmac_holds
from compliance_bake.signing.proofs import proof_hmac

RECORD_LIMIT = 200
CLASSES = ("decision", "coverage", "self-check", "cosmetic")
_FIELDS = ("realAllowed", "shadowAllowed", "licenseStatus", "match")
_STRINGS = ("source", "generatedAt", "integrityDigest", "checked", "snapshot", "hmac")


class PreviousComparison(Protocol):
    """What `bake snapshot --previous` is handed (diff/previous.py builds it): the previous
    snapshot read and authenticated first, then compared with the new one."""

    def load(self) -> None:
        """Read and authenticate the previous snapshot; a BakeError refuses it."""

    def record(self, snapshot: Snapshot) -> PreviousRecord:
        """The record of the comparison with `snapshot` (not sealed yet)."""


def require_attestation(signing_key: bool) -> None:
    """The record goes in the signed attestation: without a signing key there is none."""
    if not signing_key:
        raise InputError(
            "--previous needs an Ed25519 signing key: the record of the comparison goes in the "
            "signed attestation",
            "pass --signing-key PEM (or set $COMPLIANCE_SIGNING_KEY_FILE; "
            "`compliance-bake signing-key mint` makes one)",
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class PreviousRecord:
    """The record of a `--previous` comparison, as the bake builds, seals and hands it on; its
    JSON (`to_json`) is what the attestation's predicate carries as `previous`. The decision
    changes stay the JSON of diff's changes (`Change.as_json()` without `class`): the record
    carries them as shown, and the portal reads them back from that JSON as `verify` does."""

    source: str
    generated_at: str
    integrity_digest: str
    authenticated: bool
    checked: str
    snapshot: str
    counts: Mapping[str, int]
    decisions: tuple[JsonObject, ...]
    decisions_total: int
    hmac: str | None = None  # None until sealed

    def to_json(self) -> JsonObject:
        out: JsonObject = {
            "source": self.source,
            "generatedAt": self.generated_at,
            "integrityDigest": self.integrity_digest,
            "authenticated": self.authenticated,
            "checked": self.checked,
            "snapshot": self.snapshot,
            "counts": dict(self.counts),
            "decisions": list(self.decisions),
            "decisionsTotal": self.decisions_total,
        }
        if self.hmac is not None:
            out["hmac"] = self.hmac
        return out

    @classmethod
    def from_json(cls, doc: object) -> PreviousRecord:
        """The record as an attestation carries it; ValueError names what is malformed (a
        decision change's own fields are checked where they are shown, `_decision_row`)."""
        _need(isinstance(doc, dict), "not an object")
        assert isinstance(doc, dict)
        for name in _STRINGS:
            _need(isinstance(doc.get(name), str), f"{name} is not a string")
        _need(type(doc.get("authenticated")) is bool, "authenticated is not true or false")
        counts, decisions = doc.get("counts"), doc.get("decisions")
        total = doc.get("decisionsTotal")
        _need(
            isinstance(counts, dict) and all(type(counts.get(c)) is int for c in CLASSES),
            "counts are not integers per class",
        )
        _need(isinstance(decisions, list) and type(total) is int, "no decisions list or total")
        assert isinstance(counts, dict) and isinstance(decisions, list) and isinstance(total, int)
        _need(len(decisions) <= total, "more decisions listed than counted")
        return cls(
            source=doc["source"],
            generated_at=doc["generatedAt"],
            integrity_digest=doc["integrityDigest"],
            authenticated=doc["authenticated"],
            checked=doc["checked"],
            snapshot=doc["snapshot"],
            counts=counts,
            decisions=tuple(decisions),
            decisions_total=total,
            hmac=doc["hmac"],
        )

    def sealed(self, secret: str) -> PreviousRecord:
        """The record with its `hmac`, computed by `seal` from its JSON."""
        mac = seal(self.to_json(), secret)["hmac"]
        assert isinstance(mac, str)
        return replace(self, hmac=mac)


def seal(record: Mapping[str, JsonValue], secret: str) -> JsonObject:
    """The record's JSON with its `hmac` (over the record's canonical bytes without `hmac`)."""
    sealed = {k: v for k, v in record.items() if k != "hmac"}
    sealed["hmac"] = proof_hmac(sealed, secret)
    return sealed


def _need(ok: bool, what: str) -> None:
    if not ok:
        raise ValueError(f"previous-snapshot record: {what}")


def _word(name: str, value: object) -> str:
    if name == "match":
        return "yes" if value is True else "NO" if value is False else str(value)
    if name == "licenseStatus":
        return "none" if value is None else str(value)
    return "allow" if value is True else "block" if value is False else str(value)


@dataclass(frozen=True, slots=True)
class Cell:
    """One field of a decision change in words: before, after, and whether it moved."""

    before: str
    after: str
    moved: bool


@dataclass(frozen=True, slots=True)
class DecisionRow:
    state: str
    partner: str
    cells: dict[str, Cell]  # by the field's JSON name, in _FIELDS order


@dataclass(frozen=True, slots=True)
class PreviousView:
    """What the section template shows."""

    source: str
    generated_at: str
    digest: str
    authenticated: bool
    checked: str
    counts: list[tuple[str, int]]
    rows: list[DecisionRow]
    total: int
    more: int


def _decision_row(change: object) -> DecisionRow:
    _need(isinstance(change, dict), "a decision is not an object")
    assert isinstance(change, dict)
    concerns, before, after = change.get("concerns"), change.get("before"), change.get("after")
    _need(
        isinstance(concerns, dict)
        and isinstance(concerns.get("state"), str)
        and isinstance(concerns.get("partner"), str),
        "a decision names no state and partner",
    )
    _need(isinstance(before, dict) and isinstance(after, dict), "a decision has no before/after")
    assert isinstance(concerns, dict) and isinstance(before, dict) and isinstance(after, dict)
    cells = {}
    for name in _FIELDS:
        was, now = _word(name, before.get(name)), _word(name, after.get(name))
        cells[name] = Cell(before=was, after=now, moved=was != now)
    return DecisionRow(concerns["state"], concerns["partner"], cells)


def view(record: PreviousRecord | object) -> PreviousView:
    """What the section template shows, from the record alone: the bake's own, or its JSON as
    an attestation carries it (ValueError if malformed)."""
    if not isinstance(record, PreviousRecord):
        record = PreviousRecord.from_json(record)
    return PreviousView(
        source=record.source,
        generated_at=record.generated_at,
        digest=record.integrity_digest,
        authenticated=record.authenticated,
        checked=record.checked,
        counts=[(name, record.counts[name]) for name in CLASSES],
        rows=[_decision_row(change) for change in record.decisions],
        total=record.decisions_total,
        more=record.decisions_total - len(record.decisions),
    )


WHERE = "attestation predicate.previous"


@dataclass(slots=True)
class CheckedRecord(Findings):
    """The record to render the portal with (None: the plain page), and what was found about
    it: findings of kind FILE, HMAC or KEY (verify's kinds) on the attestation, and notes."""

    record: dict[str, Any] | None = None


def checked_record(
    out_dir: Path, own_digest: str | None, secret: str | None, attested: bool | None
) -> CheckedRecord:
    """The out/ folder's previous-snapshot record and whether a key vouches for it (see above).
    `own_digest`: the snapshot's integrity.proof.digest; `attested`: None when no public key
    was given, else whether the attestation verified with one."""
    out = CheckedRecord()
    read = read_attestation(out_dir)  # none there (or a link, a FIFO): no record
    problem = read.statement_problem if isinstance(read, ReadAttestation) else read
    if problem is not None:
        out.add(ATTESTATION_FILE, False, f"{WHERE}: cannot read the attestation ({problem.what})")
        return out
    predicate = read.predicate if isinstance(read, ReadAttestation) else None
    if not isinstance(predicate, dict) or "previous" not in predicate:
        return out
    record = predicate["previous"]
    if not isinstance(record, dict):
        out.add(ATTESTATION_FILE, False, f"{WHERE}: not an object")
        return out
    names_this = record.get("snapshot") == own_digest
    out.add(
        ATTESTATION_FILE,
        names_this,
        f"{WHERE} names this snapshot"
        if names_this
        else f"{WHERE} names another snapshot (copied from another bake)",
        KEY,
    )
    if secret is not None:
        ok = proof_hmac_holds(record, secret)
        what = "hmac" + ("" if ok else " does not match (tampered, or another secret)")
        out.add(ATTESTATION_FILE, ok, f"{WHERE}.{what}", HMAC)
    if attested is not None:
        what = "signed by the attestation" if attested else "the attestation does not verify"
        out.add(ATTESTATION_FILE, attested, f"{WHERE}: {what}", KEY)
    if secret is None and attested is None:
        out.notes.append(
            f"the portal's previous-snapshot section comes from {WHERE}, "
            "NOT authenticated (no key given)"
        )
    out.record = record
    return out
