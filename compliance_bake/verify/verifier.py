"""Re-check a baked `out/` offline: schema, layout, registry copies, digests, HMACs, labels.

Every finding names the file and what failed. A check that cannot run (a file that does not
parse, say) is reported as a failure, never skipped as a pass. Without a secret the HMACs cannot
be checked; the report says so and checks everything else.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compliance_bake.errors import InputError
from compliance_bake.inputs import schemas
from compliance_bake.inputs.jsonio import StrictJSONError, dumps_pretty, loads_strict
from compliance_bake.report import layout
from compliance_bake.report.deepequal import strict_equals
from compliance_bake.report.portal import render_portal
from compliance_bake.signing import proofs as signing
from compliance_bake.signing.canon import same_mac
from compliance_bake.signing.integrity import (
    hmac_present,
    integrity_checks,
    zip_window_label,
)
from compliance_bake.signing.secret import Secret


@dataclass(frozen=True, slots=True)
class Finding:
    file: str
    ok: bool
    what: str


@dataclass(slots=True)
class VerifyReport:
    out_dir: str
    hmac_checked: bool
    findings: list[Finding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(f.ok for f in self.findings)

    @property
    def failures(self) -> list[Finding]:
        return [f for f in self.findings if not f.ok]

    def add(self, file: str, ok: bool, what: str) -> bool:
        self.findings.append(Finding(file, ok, what))
        return ok


def _load(out_dir: Path, name: str, report: VerifyReport) -> Any | None:
    try:
        raw = (out_dir / name).read_bytes()
    except OSError as exc:
        report.add(name, False, f"cannot read: {exc.strerror}")
        return None
    try:
        doc = loads_strict(raw)
    except StrictJSONError as exc:
        report.add(name, False, f"not strict JSON at {exc.where}: {exc}")
        return None
    problem = schemas.first_violation(layout.JSON_FILES[name], doc)
    if problem is not None:
        report.add(name, False, f"schema: {problem.path}: {problem.message}")
        return None
    report.add(name, True, "schema valid")
    report.add(
        name,
        dumps_pretty(doc) == raw,
        "bytes are in the baked layout"
        if dumps_pretty(doc) == raw
        else "bytes differ from the baked layout (the file was edited after the bake)",
    )
    return doc


def _check_board(report: VerifyReport, name: str, enh: dict[str, Any]) -> None:
    rows = enh["rows"]
    report.add(
        name, enh["signature"] == signing.enhancements_signature(enh), "enhancements.signature"
    )
    consistent = all(
        r["match"] is strict_equals(r["expectedState"], r["actualState"]) for r in rows
    )
    report.add(name, consistent, "every board row's match follows from expected vs actual")
    counted = enh["passed"] == sum(r["match"] for r in rows) and enh["total"] == len(rows)
    report.add(name, counted, "enhancements passed/total count the rows")


def _check_shadow(report: VerifyReport, name: str, shadow: dict[str, Any]) -> None:
    rows = shadow["rows"]
    recomputed = signing.shadow_digest(shadow)
    report.add(name, shadow["proof"]["digest"] == recomputed, "shadow.proof.digest")
    report.add(name, shadow["signature"] == recomputed, "shadow.signature equals proof.digest")
    report.add(
        name,
        all(r["match"] is (r["realAllowed"] is r["shadowAllowed"]) for r in rows),
        "every shadow row's match follows from real vs shadow",
    )
    allow = sum(1 for r in rows if r["realAllowed"])
    summary = {
        "allow": allow,
        "block": len(rows) - allow,
        "mismatches": sum(not r["match"] for r in rows),
    }
    report.add(name, summary == shadow["summary"], "shadow.summary counts the rows")


def _check_hmac(
    report: VerifyReport, name: str, where: str, proof: dict[str, Any], secret: Secret | None
) -> bool:
    if not hmac_present(proof):
        return report.add(name, False, f"{where}.hmac is missing or malformed")
    if secret is None:
        return True
    ok = same_mac(proof["hmac"], signing.proof_hmac(proof, secret.value))
    return report.add(
        name, ok, f"{where}.hmac" + ("" if ok else " does not match (tampered, or another secret)")
    )


def verify_out(out_dir: Path, secret: Secret | None) -> VerifyReport:
    if not out_dir.is_dir():
        raise InputError(
            f"{out_dir}: no such folder",
            "pass the out/ folder of a bake: compliance-bake verify OUT",
        )
    report = VerifyReport(str(out_dir), hmac_checked=secret is not None)
    docs = {name: _load(out_dir, name, report) for name in layout.JSON_FILES}
    snap = docs[layout.API_FILE]
    for copy_name, block in (
        (layout.ENHANCEMENTS_FILE, "enhancements"),
        (layout.SHADOW_FILE, "shadow"),
    ):
        copy = docs[copy_name]
        if copy is not None and snap is not None:
            report.add(
                copy_name,
                strict_equals(copy, snap[block]),
                f"registry copy equals the snapshot's {block}",
            )
    if snap is None:
        report.add(
            layout.API_FILE, False, "snapshot unreadable: digests, HMACs and labels not checked"
        )
        return report
    name = layout.API_FILE
    _check_board(report, name, snap["enhancements"])
    _check_shadow(report, name, snap["shadow"])
    report.add(
        name,
        snap["integrity"]["proof"]["digest"] == signing.integrity_digest(snap),
        "integrity.proof.digest",
    )
    shadow_ok = _check_hmac(report, name, "shadow.proof", snap["shadow"]["proof"], secret)
    _check_hmac(report, name, "integrity.proof", snap["integrity"]["proof"], secret)
    deep_audit = snap.get("deepAudit")
    zip_window = None if deep_audit is None else deep_audit["zipWindow"]
    if deep_audit is not None:
        report.add(
            name,
            snap["links"]["deepAudit"] == deep_audit["command"],
            "links.deepAudit equals deepAudit.command",
        )
        window = deep_audit["zipWindow"]
        report.add(
            name,
            window["label"]
            == zip_window_label(window["days"], window["inWindowPlays"], window["totalPlays"])
            and window["inWindowPlays"] <= window["totalPlays"],
            "deepAudit.zipWindow label follows from its counts",
        )
    expected = integrity_checks(
        snap["enhancements"], snap["shadow"], snap["geo"], shadow_ok, zip_window
    )
    report.add(
        name,
        strict_equals(expected, snap["integrity"]["checks"]),
        "integrity checks follow from the content",
    )
    portal = out_dir / layout.PORTAL_FILE
    try:
        same = portal.read_bytes() == render_portal(snap)
    except OSError as exc:
        report.add(layout.PORTAL_FILE, False, f"cannot read: {exc.strerror}")
    else:
        report.add(
            layout.PORTAL_FILE,
            same,
            "portal page renders the snapshot"
            if same
            else "portal page differs from the snapshot's rendering (edited after the bake)",
        )
    return report
