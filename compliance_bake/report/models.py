"""The snapshot (spec 2.1-2.8) as typed values: every JSON field is named here, and only here.

The core builds and passes these models; JSON exists only at the edges. `Model.from_json(doc)`
reads a document that has already passed the snapshot's JSON Schema (it looks fields up, it does
not check them again: a missing field is a KeyError, a programming error); `model.to_json()` gives
the JSON value back with the specification's field order and the same types (True stays True,
not 1), so `Model.from_json(doc).to_json() == doc` for every valid document, and a baked file
renders to the same bytes.

Board states (`expectedState`, `actualState`) stay JSON objects: their shape depends on the
feature, they are compared by strict deep equality and printed as JSON, never read field by field.
The operator notes (`proton`) stay a mapping of strings for the same reason: they are text the
schema fixes, which the core only prints.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Self, TypeAlias

import msgspec

from compliance_bake.findings import BOARD, FAIL, INFO, INTEGRITY, Finding
from compliance_bake.inputs.models import GeoProfile
from compliance_bake.report.deepequal import differences
from compliance_bake.report.disagreements import SOURCE_TARGET_SHADOW

# Read-only containers, so that a dict of narrower values (a row's strings and booleans) is one.
JsonValue: TypeAlias = (
    "str | int | float | bool | None | Sequence[JsonValue] | Mapping[str, JsonValue]"
)
JsonObject: TypeAlias = dict[str, JsonValue]

SCORE_HINT = "integrity+hmac"
SNAPSHOT_MODE = "snapshot"
SCHEMA_VERSION = 1
# The signature or digest of a block before it is signed: the signing functions leave it out.
UNSIGNED = ""


class Block(msgspec.Struct, frozen=True, rename="camel"):
    """A flat model whose JSON names are its field names in camelCase, in the field order the
    specification gives: `from_json` and `to_json` are msgspec's conversions, written once."""

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Self:
        return msgspec.convert(doc, cls)

    def to_json(self) -> JsonObject:
        out: JsonObject = msgspec.to_builtins(self)
        return out


class BoardRow(Block, frozen=True):
    """One row of the board: a feature, measured (spec 2.2)."""

    feature: str
    expected_state: dict[str, Any]  # JSON objects (see above), which msgspec takes as they are
    actual_state: dict[str, Any]
    match: bool
    notes: str


class Board(Block, frozen=True):
    """The board: the snapshot's `enhancements` block (spec 2.2)."""

    generated_at: str
    console_depth: int
    rows: Sequence[BoardRow]
    passed: int
    total: int
    signature: str

    def findings(self) -> list[Finding]:
        """The self-checks as results, the feature as the rule: an INFO for a row that holds,
        else a FAIL per differing field (deepequal.differences), which the reports list."""
        return [
            Finding("", INFO if row.match else FAIL, what, BOARD, row.feature)
            for row in self.rows
            for what in (["holds"] if row.match else _differing(row))
        ]


def _differing(row: BoardRow) -> list[str]:
    """A failed row's differing fields; a row can fail on types alone (`1` is not `1.0`)."""
    found = differences(row.expected_state, row.actual_state)
    return found or ["$: expected and actual differ in type"]


# A partner's id is a non-empty string (the snapshot schema's `minLength: 1`): a snapshot's
# rows decoded as `ShadowRow`s are held to it at C speed, as they are read.
PartnerId = Annotated[str, msgspec.Meta(min_length=1)]


class ShadowRow(msgspec.Struct, frozen=True, gc=False, rename="camel", omit_defaults=True):
    """One (state, partner) pair of the shadow matrix (spec 2.3); `reason` only when blocked.

    A large bake makes hundreds of thousands of them, hence a msgspec Struct and not a
    dataclass: a frozen dataclass sets each field through `object.__setattr__`, many times the
    Struct's cost, and the garbage collector does not track a Struct
    either (its fields are strings, booleans and None). Its JSON names are its field
    names in camelCase; `reason` is left out when None.
    """

    state: str
    partner: PartnerId
    license_status: str | None
    real_allowed: bool
    shadow_allowed: bool
    match: bool
    reason: str | None = None

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> ShadowRow:
        return msgspec.convert(doc, cls)

    def to_json(self) -> dict[str, str | bool | None]:
        out: dict[str, str | bool | None] = msgspec.to_builtins(self)
        return out


class ShadowSummary(Block, frozen=True):
    allow: int
    block: int
    mismatches: int


class Proof(Block, frozen=True):
    """A proof object (spec 2.3), in `shadow.proof` and `integrity.proof`."""

    algorithm: str
    digest: str
    bun_version: str
    generated_at: str
    hmac: str


# A proof not made yet: the signing functions leave a block's proof out of what they sign.
UNSIGNED_PROOF = Proof(UNSIGNED, UNSIGNED, UNSIGNED, UNSIGNED, UNSIGNED)


@dataclass(frozen=True, slots=True)
class Shadow:
    """The `shadow` block (spec 2.3)."""

    generated_at: str
    base: str
    rows: Sequence[ShadowRow]
    summary: ShadowSummary
    signature: str
    proof: Proof
    # compliance-bake's own fields beside the spec's (docs/spec.md 2.3): which party gave each
    # column of the rows, and the rows of each disagreement kind (report/disagreements.py).
    # None in a snapshot baked before they were written.
    sources: Mapping[str, str] | None = None
    disagreements: Mapping[str, int] | None = None

    @property
    def shadow_from_target(self) -> bool:
        return (self.sources or {}).get("shadowAllowed") == SOURCE_TARGET_SHADOW

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], rows: Sequence[ShadowRow] | None = None) -> Shadow:
        """`rows`: the block's rows already typed (the strict parse of a snapshot types them
        as it reads them), so that they are not converted a second time."""
        return cls(
            generated_at=doc["generatedAt"],
            base=doc["base"],
            rows=msgspec.convert(doc["rows"], list[ShadowRow]) if rows is None else rows,
            summary=ShadowSummary.from_json(doc["summary"]),
            signature=doc["signature"],
            proof=Proof.from_json(doc["proof"]),
            sources=doc.get("sources"),
            disagreements=doc.get("disagreements"),
        )

    def to_json(self) -> JsonObject:
        out: JsonObject = {
            "generatedAt": self.generated_at,
            "base": self.base,
            "rows": shadow_rows_json(self.rows),
            "summary": self.summary.to_json(),
        }
        if self.sources is not None:
            out["sources"] = dict(self.sources)
        if self.disagreements is not None:
            out["disagreements"] = dict(self.disagreements)
        out["signature"] = self.signature
        out["proof"] = self.proof.to_json()
        return out


def shadow_rows_json(rows: Sequence[ShadowRow]) -> list[dict[str, str | bool | None]]:
    """`[row.to_json() for row in rows]`, in one call of msgspec's, in C."""
    out: list[dict[str, str | bool | None]] = msgspec.to_builtins(rows)
    return out


@dataclass(frozen=True, slots=True)
class Geo:
    """The `geo` block (spec 2.4): one discrete profile per partner."""

    partners: tuple[GeoProfile, ...]

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Geo:
        return cls(tuple(msgspec.convert(doc["partners"], list[GeoProfile])))

    def to_json(self) -> JsonObject:
        partners: list[dict[str, str | int]] = msgspec.to_builtins(self.partners)
        return {"partners": partners}


class ZipWindow(Block, frozen=True):
    """deepAudit.zipWindow (spec 2.5)."""

    ok: bool
    days: int
    mode: str
    total_plays: int
    in_window_plays: int
    label: str


class DeepAudit(Block, frozen=True):
    """The optional `deepAudit` block (spec 2.5)."""

    zip_window: ZipWindow
    command: str


class IntegrityCheck(Block, frozen=True):
    """One of integrity.checks (spec 2.6)."""

    id: str
    ok: bool
    label: str


@dataclass(frozen=True, slots=True)
class Integrity:
    """The `integrity` block (spec 2.6)."""

    proof: Proof
    checks: tuple[IntegrityCheck, ...]
    score_hint: str = SCORE_HINT

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Integrity:
        return cls(
            proof=Proof.from_json(doc["proof"]),
            checks=tuple(map(IntegrityCheck.from_json, doc["checks"])),
            score_hint=doc["scoreHint"],
        )

    def to_json(self) -> JsonObject:
        return {
            "scoreHint": self.score_hint,
            "proof": self.proof.to_json(),
            "checks": [check.to_json() for check in self.checks],
        }

    @property
    def holds(self) -> bool:
        """Every recorded check is ok. The bake's verdict also asks that no shadow row holds a
        failing disagreement kind (bake.BakeResult.ok, report/disagreements.py)."""
        return all(check.ok for check in self.checks)

    @property
    def failed(self) -> tuple[IntegrityCheck, ...]:
        return tuple(check for check in self.checks if not check.ok)

    def findings(self) -> list[Finding]:
        """The checks as results: failed or held, the label said, the check id as the rule."""
        return [Finding("", INFO if c.ok else FAIL, c.label, INTEGRITY, c.id) for c in self.checks]


class Links(Block, frozen=True):
    """The `links` block (spec 2.7): the published paths, and the deep-audit command."""

    portal: str
    registry_enhancements: str
    registry_shadow: str
    api: str
    deep_audit: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Snapshot:
    """The whole snapshot (spec 2.1), as written to api/compliance.json."""

    generated_at: str
    board: Board  # `enhancements` in JSON (spec 2.2)
    shadow: Shadow
    geo: Geo
    integrity: Integrity
    links: Links
    proton: Mapping[str, str]
    deep_audit: DeepAudit | None = None
    # `bake --waivers`' extension field (waivers/apply.py), as recorded; None without
    waivers: Mapping[str, Any] | None = None
    ok: bool = True
    mode: str = SNAPSHOT_MODE
    read_only: bool = True
    schema_version: int = SCHEMA_VERSION

    @classmethod
    def from_json(
        cls, doc: Mapping[str, Any], shadow_rows: Sequence[ShadowRow] | None = None
    ) -> Snapshot:
        """`shadow_rows`: the shadow block's rows already typed (see `Shadow.from_json`)."""
        deep_audit = doc.get("deepAudit")
        return cls(
            ok=doc["ok"],
            mode=doc["mode"],
            read_only=doc["readOnly"],
            schema_version=doc["schemaVersion"],
            generated_at=doc["generatedAt"],
            board=Board.from_json(doc["enhancements"]),
            shadow=Shadow.from_json(doc["shadow"], shadow_rows),
            geo=Geo.from_json(doc["geo"]),
            deep_audit=None if deep_audit is None else DeepAudit.from_json(deep_audit),
            integrity=Integrity.from_json(doc["integrity"]),
            links=Links.from_json(doc["links"]),
            proton=doc["proton"],
            waivers=doc.get("waivers"),
        )

    def to_json(self) -> JsonObject:
        out: JsonObject = {
            "ok": self.ok,
            "mode": self.mode,
            "readOnly": self.read_only,
            "schemaVersion": self.schema_version,
            "generatedAt": self.generated_at,
            "enhancements": self.board.to_json(),
            "shadow": self.shadow.to_json(),
            "geo": self.geo.to_json(),
        }
        if self.deep_audit is not None:
            out["deepAudit"] = self.deep_audit.to_json()
        out["integrity"] = self.integrity.to_json()
        out["links"] = self.links.to_json()
        out["proton"] = dict(self.proton)
        if self.waivers is not None:
            out["waivers"] = dict(self.waivers)
        return out


# The integrity checks' fixed labels (spec 2.6); the others are made from the content.
SHA3_LABEL = "Board integrity sha3-256"
HMAC_LABEL = "Proof HMAC-SHA3-256 keyed by REPORT_SIGNING_SECRET"
GEO_LABEL = "Geo profiles discrete (state/age/location/zip)"


def integrity_checks(
    *,
    passed: int,
    total: int,
    mismatches: int,
    digests_consistent: bool,
    hmac_holds: bool,
    geo_discrete: bool,
    zip_window: ZipWindow | None,
) -> tuple[IntegrityCheck, ...]:
    """integrity.checks (spec 2.6), in its order, from what each check reads
    (signing/integrity.py tests the digests, the HMAC and the profiles). The bake makes them
    from its models and `verify` from the document it reads, both here, so a label or an `ok`
    that does not follow from a snapshot's content is caught on both sides."""
    checks = (
        IntegrityCheck("enhancements", passed == total, f"Enhancements {passed}/{total}"),
        IntegrityCheck("shadow", mismatches == 0, f"Shadow mismatches {mismatches}"),
        IntegrityCheck("sha3", digests_consistent, SHA3_LABEL),
        IntegrityCheck("hmac", hmac_holds, HMAC_LABEL),
        IntegrityCheck("geo", geo_discrete, GEO_LABEL),
    )
    if zip_window is None:
        return checks
    return (*checks, IntegrityCheck("zip-window", zip_window.ok, zip_window.label))
