"""Assemble the signed snapshot (spec 2.1-2.8) from fixtures, a target, a secret and a clock.

`build_snapshot` is the whole bake short of writing: it returns the snapshot as plain data in the
specification's field order. Nothing here reads or writes files. One walk through the data:
build the blocks, sign them (`signing.seal`, each block canonicalised once), check the signatures
once (`signing.integrity`, the checks `verify` also runs, given the shadow digest the seal computed
so that 500,000 rows are not canonicalised and hashed again; their outcome is signed content),
then seal the whole snapshot.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

from compliance_bake.clock import iso_millis
from compliance_bake.inputs.fixtures import LICENCES_FILE
from compliance_bake.inputs.models import Fixtures
from compliance_bake.progress import Phases, ProgressSink, no_phases
from compliance_bake.report.board import run_board
from compliance_bake.report.shadow import run_shadow
from compliance_bake.signing import seal
from compliance_bake.signing.integrity import integrity_checks, proof_hmac_holds
from compliance_bake.signing.secret import Secret
from compliance_bake.targets.interface import Target

DEFAULT_CONSOLE_DEPTH = 2
# links.deepAudit without --deep-audit: the command an operator would run (on the demo plays).
DEEP_AUDIT_COMMAND = "compliance-bake audit deep --plays fixtures/plays.csv --days 90"
LINKS = {
    "portal": "/portal/compliance/",
    "registryEnhancements": "/registry/compliance-enhancements.json",
    "registryShadow": "/registry/compliance-shadow.json",
    "api": "/api/compliance",
}
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
    deep_audit: dict[str, Any] | None = None


def all_checks_hold(snapshot: dict[str, Any]) -> bool:
    return all(check["ok"] for check in snapshot["integrity"]["checks"])


def build_snapshot(
    fixtures: Fixtures,
    target: Target,
    secret: Secret,
    settings: BakeSettings,
    progress: ProgressSink | None = None,
    phases: Phases = no_phases,
    while_sealing: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """`while_sealing(snapshot)`, when given, runs while the whole is sealed (see
    `seal.seal_snapshot`): everything but `snapshot["integrity"]` is final by then."""
    stamp = iso_millis(settings.now)
    runtime = target.runtime()
    registry = fixtures.registry

    # Build.
    board = run_board(target, registry, str(Path(fixtures.source) / LICENCES_FILE))
    enhancements: dict[str, Any] = {
        "generatedAt": stamp,
        "consoleDepth": settings.console_depth,
        "rows": [row.as_json() for row in board],
        "passed": sum(row.match for row in board),
        "total": len(board),
    }
    rows, summary = run_shadow(target, registry, progress)
    phases("sign")
    shadow: dict[str, Any] = {
        "generatedAt": stamp,
        "base": target.base,
        "rows": rows,
        "summary": summary,
    }
    geo = {"partners": [profile.to_json() for profile in fixtures.geo]}

    # Sign the blocks, each canonicalised once.
    seal.seal_enhancements(enhancements)
    sealed = seal.seal_shadow(shadow, rows, runtime, stamp, secret.value)

    # Check the signatures once, from the content (the functions `verify` runs, given the
    # shadow digest just computed from the block's canonical bytes, where `verify` computes it
    # from the file): the outcome is part of the signed snapshot.
    hmac_ok = proof_hmac_holds(shadow["proof"], secret.value)
    deep_audit = settings.deep_audit
    snapshot: dict[str, Any] = {
        "ok": True,
        "mode": "snapshot",
        "readOnly": True,
        "schemaVersion": 1,
        "generatedAt": stamp,
        "enhancements": enhancements,
        "shadow": shadow,
        "geo": geo,
    }
    if deep_audit is not None:
        snapshot["deepAudit"] = deep_audit
    snapshot["integrity"] = {
        "scoreHint": "integrity+hmac",
        "checks": integrity_checks(
            enhancements,
            shadow,
            geo,
            hmac_ok,
            None if deep_audit is None else deep_audit["zipWindow"],
            shadow_digest=sealed.digest,
        ),
    }
    command = DEEP_AUDIT_COMMAND if deep_audit is None else deep_audit["command"]
    snapshot["links"] = {**LINKS, "deepAudit": command}
    snapshot["proton"] = dict(PROTON)

    # Seal the whole, the shadow's canonical bytes reused.
    meanwhile = None if while_sealing is None else partial(while_sealing, snapshot)
    seal.seal_snapshot(snapshot, sealed.signed, runtime, stamp, secret.value, meanwhile)
    return snapshot
