"""The snapshot's own checks, on any source: digests, HMACs, rules and recorded checks.

`verify_snapshot` adds them to a report in this order: the three digests and the signature that
must equal one (kind DIGEST), both proofs' HMACs (HMAC), every rule of rules/ (RULE), every
check the snapshot records (RECORDED). The digests and HMACs are those computed when
verify/source.py authenticated the snapshot; verifier.py runs this on a single
document or an out/ folder.
"""

from __future__ import annotations

from typing import Any

from compliance_bake.findings import DIGEST, FAIL, HMAC, RECORDED
from compliance_bake.progress import Phases, no_phases
from compliance_bake.report import disagreements
from compliance_bake.report.models import ShadowRow
from compliance_bake.signing.integrity import hmac_present
from compliance_bake.signing.proofs import FAILS
from compliance_bake.signing.secret import Secret
from compliance_bake.verify.columns import ShadowColumns, shadow_columns
from compliance_bake.verify.findings import VerifyReport
from compliance_bake.verify.rules import RuleContext, check_rules
from compliance_bake.verify.source import SnapshotReading
from compliance_bake.waivers.apply import SHADOW, Applied

HMAC_METHOD = "HMAC-SHA3-256 with REPORT_SIGNING_SECRET"


def _digest(report: VerifyReport, name: str, what: str, recorded: Any, compute: Any) -> None:
    try:
        ok = recorded() == compute()
    except FAILS:
        ok = False
    report.add(name, ok, what if ok else f"{what} does not match the content it digests", DIGEST)


def _computed(value: str | None) -> str:
    if value is None:
        raise ValueError("the digest cannot be computed on this document")
    return value


def _hmac(report: VerifyReport, name: str, where: str, proof: Any, holds: bool | None) -> bool:
    """`holds`: whether verify/source.py found the HMAC to hold (None: no secret was given)."""
    if not (isinstance(proof, dict) and hmac_present(proof)):
        return report.add(name, False, f"{where}.hmac is missing or malformed", HMAC)
    if holds is None:
        return True
    ok = holds
    return report.add(
        name,
        ok,
        f"{where}.hmac" + ("" if ok else " does not match (tampered, or another secret)"),
        HMAC,
    )


def verify_snapshot(
    name: str,
    reading: SnapshotReading,
    secret: Secret | None,
    report: VerifyReport,
    raws: list[tuple[str, bytes]],
    phases: Phases = no_phases,
    rendering: str | None = None,
    block_renderings: frozenset[str] = frozenset(),
    columns: ShadowColumns | None = None,
    waived: Applied | None = None,
) -> ShadowColumns | None:
    """Add the checks' findings to `report`; return the shadow rows as columns, as the rules
    read them (None: not columns, or not a JSON object). `columns`: `shadow_columns` of the
    document, when the caller has made them."""
    snap = reading.document
    if not isinstance(snap, dict) or reading.authentication is None:
        report.add(name, False, "the snapshot is not a JSON object")
        return None
    authentication = reading.authentication
    board, shadow, integrity = (snap.get(k) or {} for k in ("enhancements", "shadow", "integrity"))
    computed = authentication.digests
    hmacs = authentication.hmacs or {}
    _digest(
        report,
        name,
        "enhancements.signature",
        lambda: board["signature"],
        lambda: _computed(computed.board),
    )
    _digest(
        report,
        name,
        "shadow.proof.digest",
        lambda: shadow["proof"]["digest"],
        lambda: _computed(computed.shadow),
    )
    _digest(
        report,
        name,
        "shadow.signature equals proof.digest",
        lambda: shadow["signature"],
        lambda: shadow["proof"]["digest"],
    )
    _digest(
        report,
        name,
        "integrity.proof.digest",
        lambda: integrity["proof"]["digest"],
        lambda: _computed(computed.integrity),
    )
    shadow_ok = _hmac(report, name, "shadow.proof", shadow.get("proof"), hmacs.get("shadow.proof"))
    integrity_ok = _hmac(
        report, name, "integrity.proof", integrity.get("proof"), hmacs.get("integrity.proof")
    )
    if secret is not None:
        report.signers.append(f"{HMAC_METHOD} ({secret.source})")
        if not (shadow_ok and integrity_ok):
            report.signers[-1] += ": does not match"
    phases("rules")
    if columns is None:
        columns = shadow_columns(snap)
    proof = shadow.get("proof")
    context = RuleContext(
        hmac_ok=isinstance(proof, dict) and hmac_present(proof),
        secret_value=None if secret is None else secret.value,
        files=tuple(raws),
        shadow_digest=computed.of_shadow_block,
        rendering=rendering,
        block_renderings=block_renderings,
        columns=columns,
    )
    report.findings.extend(check_rules(snap, context, name))
    checks = integrity.get("checks")
    for check in checks if isinstance(checks, list) else []:
        if isinstance(check, dict) and check.get("ok") is not True:
            report.add(
                name,
                False,
                f"recorded check {check.get('id')} failed: {check.get('label')}",
                RECORDED,
            )
    counts = shadow.get("disagreements") if isinstance(shadow, dict) else None
    counts = counts if isinstance(counts, dict) else {}
    waived_rows = {} if waived is None else waived.waived_kinds(SHADOW)
    for kind, what in recorded_disagreements(shadow):
        failing = disagreements.SEVERITY[kind] == FAIL
        if failing and waived_rows.get(kind, 0) >= counts[kind]:
            report.notes.append(what.replace("recorded disagreement", "waived", 1))
        elif failing:
            report.add(name, False, what, RECORDED)
        else:  # reported, as the bake reports it: the row holds the target's words or none
            report.notes.append(what.replace("recorded disagreement", "reported", 1))
    report.add(name, True, "recorded checks read", RECORDED)
    if waived is not None and waived.waived:
        report.waived = waived.verdict().replace("PASS", "compliant", 1)
    return columns


def _examples(rows: Any, from_target: bool, limit: int = 5) -> dict[str, list[str]]:
    """For each kind with rows, the first `limit` pairs, as `disagreements.pair_words` names
    them; each JSON row is read by name, its members as they are."""
    found: dict[str, list[str]] = {}
    for r in rows:
        row = ShadowRow(
            state=r["state"], partner=r["partner"], license_status=r["licenseStatus"],
            real_allowed=r["realAllowed"], shadow_allowed=r["shadowAllowed"],
            match=r.get("match"), reason=r.get("reason"),
        )  # fmt: skip
        for kind in disagreements.classify_row(row, from_target):
            listed = found.setdefault(kind, [])
            if len(listed) < limit:
                listed.append(disagreements.pair_words(row.state, row.partner, row.reason))
    return found


def recorded_disagreements(shadow: Any) -> list[tuple[str, str]]:
    """`recorded disagreement <kind>: n rows: <pairs>` for each kind the block counts rows of
    (named as the bake names it); the pairs are read from the rows. Malformed counts are the
    schema's and the rules' to name."""
    counts = shadow.get("disagreements") if isinstance(shadow, dict) else None
    if not isinstance(counts, dict) or not any(type(n) is int and n > 0 for n in counts.values()):
        return []
    try:
        from_target = shadow["sources"]["shadowAllowed"] == disagreements.SOURCE_TARGET_SHADOW
        found = _examples(shadow["rows"], from_target)
    except FAILS:
        found = {}
    out: list[tuple[str, str]] = []
    for kind, label in disagreements.KINDS.items():
        n = counts.get(kind)
        if type(n) is int and n > 0:
            pairs = found.get(kind, [])
            listed = f": {'; '.join(pairs)}" if pairs else ""
            more = f"; ... {n - len(pairs)} more" if pairs and n > len(pairs) else ""
            rows = f"{n} row{'s' if n != 1 else ''}"
            out.append((kind, f"recorded disagreement {label}: {rows}{listed}{more}"))
    return out
