"""Assemble the signed snapshot (spec 2.1-2.8) from fixtures, a target, a secret and a clock.

`build_snapshot` is the whole bake short of writing: it returns the typed `Snapshot` and its
JSON. Nothing here reads or writes files. One walk through the data: build the blocks; sign them
(the signing functions take the blocks' JSON and leave out the signature and proof fields, so a
block is built UNSIGNED, signed from its JSON and given its signature); check the signatures once
(`models.integrity_checks` over the tests of `signing.integrity`, as `verify` makes them, given
the shadow digest the seal computed so that 500,000 rows are not canonicalised and hashed again;
their outcome is signed content, typed `IntegrityCheck` values); then seal the whole snapshot,
the shadow block's canonical bytes spliced in from its seal.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from datetime import datetime
from typing import NamedTuple, cast

import msgspec

from compliance_bake.clock import iso_millis
from compliance_bake.inputs.fixtures import LICENCES_FILE
from compliance_bake.inputs.models import Fixtures
from compliance_bake.inputs.registry_source import folder_of
from compliance_bake.progress import Phases, ProgressSink, no_phases
from compliance_bake.report.board import BOARD_WAGER_TYPES, run_board
from compliance_bake.report.disagreements import RowKind
from compliance_bake.report.models import (
    UNSIGNED,
    UNSIGNED_PROOF,
    DeepAudit,
    Geo,
    Integrity,
    JsonObject,
    Links,
    Proof,
    Shadow,
    Snapshot,
    integrity_checks,
)
from compliance_bake.report.shadow import matrix_wager_types, run_shadow
from compliance_bake.signing import proofs
from compliance_bake.signing.integrity import digests_consistent, geo_discrete, proof_hmac_holds
from compliance_bake.signing.secret import Secret
from compliance_bake.targets.interface import Target

DEFAULT_CONSOLE_DEPTH = 2
# links.deepAudit without --deep-audit: the command an operator would run (on the demo plays).
DEEP_AUDIT_COMMAND = "compliance-bake audit deep --plays fixtures/plays.csv --days 90"
# links (spec 2.7); deep_audit is the bake's own command.
LINKS = Links(
    portal="/portal/compliance/",
    registry_enhancements="/registry/compliance-enhancements.json",
    registry_shadow="/registry/compliance-shadow.json",
    api="/api/compliance",
    deep_audit=DEEP_AUDIT_COMMAND,
)
PROTON = {
    "note": "Offline-safe bake: `compliance-bake bake snapshot` reads local fixtures, needs "
    "no network but the --target service it is given, and replaces out/ atomically.",
    "inject": "Deploy with REPORT_SIGNING_SECRET injected from the secrets vault as a file: "
    "REPORT_SIGNING_SECRET_FILE=/run/secrets/report-signing-secret (mode 0600).",
    "bakeVault": "In CI, bake with the vault-injected secret and a pinned clock: "
    "REPORT_SIGNING_SECRET_FILE=... SOURCE_DATE_EPOCH=... compliance-bake bake snapshot",
    "reportSigning": "Proof HMACs are HMAC-SHA3-256 keyed by REPORT_SIGNING_SECRET; mint one "
    "locally with `compliance-bake secret mint` or read it from the vault. Its value is never "
    "published.",
    "vaultMap": "docs/vault-map.md",
}


@dataclass(frozen=True, slots=True)
class BakeSettings:
    now: datetime
    console_depth: int = DEFAULT_CONSOLE_DEPTH
    # The deepAudit block (spec 2.5) when the bake ran the ZIP-window audit, else None.
    deep_audit: DeepAudit | None = None


class Baked(NamedTuple):
    """The snapshot, its JSON (`snapshot.to_json()`), made once while it was sealed, and its
    rows' kinds (report/row_kinds.py), counted once as the rows were built."""

    snapshot: Snapshot
    document: JsonObject
    kinds: Counter[RowKind]


def build_snapshot(
    fixtures: Fixtures,
    target: Target,
    secret: Secret,
    settings: BakeSettings,
    progress: ProgressSink | None = None,
    phases: Phases = no_phases,
) -> Baked:
    stamp = iso_millis(settings.now)
    registry = fixtures.registry
    # A profile's {wager.NAME} without a table for a wager type asked: exit 2, no request sent.
    target.wager_types_missing([*BOARD_WAGER_TYPES, *matrix_wager_types(registry)])
    runtime = target.runtime()

    folder = folder_of(fixtures.source)  # a database registry has no file: its source
    licences_file = fixtures.source if folder is None else str(folder / LICENCES_FILE)
    board = run_board(target, registry, licences_file, stamp, settings.console_depth)
    matrix = run_shadow(target, fixtures.policy, progress, int(settings.now.timestamp()))
    phases("sign")
    shadow = Shadow(
        stamp,
        target.base,
        matrix.rows,
        matrix.summary,
        UNSIGNED,
        UNSIGNED_PROOF,
        matrix.sources,
        matrix.disagreements,
    )
    geo = Geo(fixtures.geo)

    # Sign the blocks from their JSON, each canonicalised once. The shadow block's JSON is the
    # one the snapshot's JSON holds: its 500,000 rows become JSON once.
    board = msgspec.structs.replace(board, signature=proofs.board_signature(board.to_json()))
    shadow_json = shadow.to_json()
    rows_json = cast("list[dict[str, str | bool | None]]", shadow_json["rows"])
    sealed = proofs.seal_shadow(shadow_json, rows_json, runtime, stamp, secret.value)
    proof = Proof.from_json(cast("JsonObject", shadow_json["proof"]))
    shadow = replace(shadow, signature=sealed.digest, proof=proof)

    # Check the signatures once, from the content (the functions `verify` runs, given the
    # shadow digest just computed from the block's canonical bytes, where `verify` computes it
    # from the file): the outcome is part of the signed snapshot.
    deep_audit = settings.deep_audit
    checks = integrity_checks(
        passed=board.passed,
        total=board.total,
        mismatches=shadow.summary.mismatches,
        digests_consistent=digests_consistent(board.to_json(), shadow_json, sealed.digest),
        hmac_holds=proof_hmac_holds(shadow.proof.to_json(), secret.value),
        geo_discrete=geo_discrete(geo.partners),
        zip_window=None if deep_audit is None else deep_audit.zip_window,
    )
    command = DEEP_AUDIT_COMMAND if deep_audit is None else deep_audit.command
    draft = Snapshot(
        generated_at=stamp,
        board=board,
        shadow=shadow,
        geo=geo,
        deep_audit=deep_audit,
        integrity=Integrity(UNSIGNED_PROOF, checks),
        links=msgspec.structs.replace(LINKS, deep_audit=command),
        proton=dict(PROTON),
    )

    # Seal the whole, the shadow's canonical bytes reused. The JSON of everything but the
    # shadow block is made here; the shadow's is the one just signed.
    document = replace(draft, shadow=replace(shadow, rows=())).to_json()
    document["shadow"] = shadow_json
    content_digest = proofs.integrity_digest(document, {"shadow": sealed.signed})
    proof = Proof.from_json(proofs.make_proof(content_digest, runtime, stamp, secret.value))
    snapshot = replace(draft, integrity=replace(draft.integrity, proof=proof))
    document["integrity"] = snapshot.integrity.to_json()
    return Baked(snapshot, document, matrix.kinds)
