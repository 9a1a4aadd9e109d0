"""Rules of the shadow matrix, geo, deepAudit, integrity and secrecy (spec 2.3-2.8, 5, 8).

A rule over every row first asks the columns (columns.py) whether it holds, and walks the rows,
naming places, only when they cannot say so.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import orjson

from compliance_bake.report import disagreements
from compliance_bake.report.deepequal import strict_equals
from compliance_bake.report.disagreements import SOURCE_REGISTRY, SOURCE_TARGET_SHADOW
from compliance_bake.report.escape import json_line
from compliance_bake.report.models import IntegrityCheck, ZipWindow, integrity_checks
from compliance_bake.report.row_kinds import reason_holds
from compliance_bake.signing.integrity import (
    digests_consistent,
    profile_discrete,
    profiles_discrete,
    zip_window_label,
)
from compliance_bake.verify import columns
from compliance_bake.verify.findings import QUOTED
from compliance_bake.verify.rules.book import (
    LICENCE_STATUSES,
    SECRET_NAME,
    WINDOW_DAYS,
    RuleContext,
    health_states,
    rule,
)


@rule("shadow-coverage", "shadow rows: every regulated state x every partner, once (2.3 rule 1)")
def _shadow_coverage(snap: dict[str, Any], ctx: RuleContext) -> list[str]:
    states = health_states(snap)
    if not states:
        return ["no regulated states (the health.states row)"]
    if ctx.columns is not None and columns.covers(states, ctx.columns):
        return []
    rows = snap["shadow"]["rows"]
    partners = list(dict.fromkeys(r["partner"] for r in rows))
    pairs = Counter((r["state"], r["partner"]) for r in rows)
    bad = [
        f"row for {s}, not a regulated state"
        for s in dict.fromkeys(s for s, _ in pairs)
        if s not in states
    ]
    bad += [f"{s} x {p} {n} times" for (s, p), n in pairs.items() if n > 1]
    bad += [f"{s} x {p} missing" for s in states for p in partners if (s, p) not in pairs]
    return bad


@rule("shadow-roles", "with 2 states, the 4 demonstration partners' roles are there (2.3 rule 1)")
def _shadow_roles(snap: dict[str, Any], _: RuleContext) -> list[str]:
    states = health_states(snap)
    if len(states) != 2:
        return []
    held: dict[str, set[str]] = {}
    for r in snap["shadow"]["rows"]:
        held.setdefault(r["partner"], set())
        if r["licenseStatus"] == "active":
            held[r["partner"]].add(r["state"])
    first, second = states
    roles = {
        f"licensed in {first} only": {first},
        f"licensed in {second} only": {second},
        "licensed in both": {first, second},
        "licensed in neither": set(),
    }
    found = list(held.values())
    return [f"no partner {name}" for name, role in roles.items() if role not in found]


@rule("shadow-licence-status", "licenseStatus is `active` or null (spec 2.3, 3)")
def _licence_status(snap: dict[str, Any], ctx: RuleContext) -> list[str]:
    if ctx.columns is not None and columns.statuses_within(ctx.columns, LICENCE_STATUSES):
        return []
    return [
        f"$.shadow.rows[{i}].licenseStatus {json_line(r['licenseStatus'], QUOTED)}"
        for i, r in enumerate(snap["shadow"]["rows"])
        if r["licenseStatus"] not in LICENCE_STATUSES
    ]


def _shadow_from_registry(snap: dict[str, Any]) -> bool:
    """Whether the block says its shadow decisions are the licence registry's. A block without
    `sources` was baked before compliance-bake recorded them, when the registry gave every
    shadow decision; an odd value raises, and the rule could not run."""
    if "sources" not in snap["shadow"]:
        return True
    source = snap["shadow"]["sources"]["shadowAllowed"]
    if source not in (SOURCE_REGISTRY, SOURCE_TARGET_SHADOW):
        raise ValueError(source)
    return bool(source == SOURCE_REGISTRY)


@rule("shadow-licence-decides", "registry shadow: active allows, null blocks; match: real = shadow")
def _licence_decides(snap: dict[str, Any], ctx: RuleContext) -> list[str]:
    # A shadow computed from the registry must follow the licence; a shadow the target gave is
    # its own. Whether the real decision agrees is what `match` and the disagreements record.
    registry = _shadow_from_registry(snap)
    if ctx.columns is not None and columns.licence_decides(ctx.columns, registry):
        return []
    return [
        f"$.shadow.rows[{i}] {r['state']} x {r['partner']}"
        for i, r in enumerate(snap["shadow"]["rows"])
        if (registry and r["shadowAllowed"] is not (r["licenseStatus"] == "active"))
        or (r["realAllowed"] is r["shadowAllowed"]) is not r["match"]
    ]


@rule("shadow-reason", "no reason on an allowed row; a block's reason is text (2.3)")
def _shadow_reason(snap: dict[str, Any], ctx: RuleContext) -> list[str]:
    if ctx.columns is not None and all(map(reason_holds, ctx.columns.kinds)):
        return []
    bad = []
    for i, r in enumerate(snap["shadow"]["rows"]):
        reason = r.get("reason")
        if (
            (reason is not None)
            if r["realAllowed"]
            else (reason is not None and not (isinstance(reason, str) and reason))
        ):
            bad.append(f"$.shadow.rows[{i}].reason {json_line(reason, QUOTED)}")
    return bad


def row_kinds(snap: dict[str, Any], ctx: RuleContext) -> Counter[disagreements.RowKind]:
    """The rows' kinds (columns.py), from the columns or, without them, row by row."""
    if ctx.columns is not None:
        return ctx.columns.kinds
    return Counter(map(disagreements.RowKind.of_json, snap["shadow"]["rows"]))


@rule("shadow-disagreements", "disagreements count the rows by kind (2.3)")
def _shadow_disagreements(snap: dict[str, Any], ctx: RuleContext) -> list[str]:
    from_target = not _shadow_from_registry(snap)
    counted = disagreements.count(row_kinds(snap, ctx).items(), from_target)
    if "disagreements" not in snap["shadow"]:
        # Baked before they were recorded (or taken out): what the rows hold is not checked
        # against a record, and the rule says so rather than holding.
        found = disagreements.failing(counted)
        return [f"not recorded; the rows hold {'; '.join(found) if found else 'none failing'}"]
    recorded = snap["shadow"]["disagreements"]
    if strict_equals(counted, recorded):
        return []
    return [
        f"{kind} counted {counted[kind]}, recorded {json_line(recorded.get(kind), QUOTED)}"
        for kind in disagreements.KINDS
        if not strict_equals(counted[kind], recorded.get(kind))
    ] or [f"recorded {json_line(recorded, QUOTED)}"]


@rule("shadow-summary", "shadow.summary counts the rows (spec 2.3)")
def _shadow_summary(snap: dict[str, Any], ctx: RuleContext) -> list[str]:
    rows = snap["shadow"]["rows"]
    if ctx.columns is not None:
        allow, matches = columns.decisions(ctx.columns)
    else:
        allow = sum(r["realAllowed"] is True for r in rows)
        matches = sum(r["match"] is True for r in rows)
    counted = {"allow": allow, "block": len(rows) - allow, "mismatches": len(rows) - matches}
    recorded = snap["shadow"]["summary"]
    shown = f"counted {json_line(counted, QUOTED)}, recorded {json_line(recorded, QUOTED)}"
    return [] if counted == recorded else [shown]


@rule("geo-profiles", "geo: one discrete profile per partner of the matrix, unique (spec 2.4)")
def _geo_profiles(snap: dict[str, Any], ctx: RuleContext) -> list[str]:
    rows = snap["shadow"]["rows"]
    partners = (  # in the matrix's order, and a set to look up
        columns.matrix_partners(ctx.columns)
        if ctx.columns is not None
        else dict.fromkeys(r["partner"] for r in rows)
    )
    profiles = snap["geo"]["partners"]
    counts = Counter(p["nodeId"] for p in profiles)
    bad = [f"no profile for {p}" for p in partners if counts[p] == 0]
    bad += [f"{n} profiles for {p}" for p, n in counts.items() if n > 1]
    bad += [f"profile for {p}, not a partner of the matrix" for p in counts if p not in partners]
    if not profiles_discrete(profiles):
        bad += [
            f"$.geo.partners[{i}] not discrete"
            for i, p in enumerate(profiles)
            if not profile_discrete(p)
        ]
    return bad


@rule("deep-audit-window", "deepAudit.zipWindow: 90 days, counts <= total, label from counts (2.5)")
def _deep_audit_window(snap: dict[str, Any], _: RuleContext) -> list[str]:
    if "deepAudit" not in snap:
        return []
    window = snap["deepAudit"]["zipWindow"]
    bad = [] if window["days"] == WINDOW_DAYS else [f"days {json_line(window['days'], QUOTED)}"]
    if not window["inWindowPlays"] <= window["totalPlays"]:
        bad.append("inWindowPlays > totalPlays")
    label = zip_window_label(window["days"], window["inWindowPlays"], window["totalPlays"])
    if window["label"] != label:
        bad.append(f"label {json_line(window['label'], QUOTED)}")
    return bad


@rule("links-deep-audit", "links.deepAudit equals deepAudit.command (spec 2.7)")
def _links_deep_audit(snap: dict[str, Any], _: RuleContext) -> list[str]:
    if "deepAudit" not in snap:
        return []
    same = snap["links"]["deepAudit"] == snap["deepAudit"]["command"]
    return [] if same else ["links.deepAudit differs from deepAudit.command"]


def _label_free(checks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # spec 2.6: the hmac check's wording differs between snapshots; it must name the secret.
    return [
        {**c, "label": SECRET_NAME}
        if c.get("id") == "hmac" and SECRET_NAME in str(c.get("label"))
        else c
        for c in checks
    ]


def content_checks(
    snap: dict[str, Any], hmac_ok: bool, shadow_digest: str | None = None
) -> tuple[IntegrityCheck, ...]:
    """The integrity checks that a document's own content gives, read from it as parsed (the
    fields are not trusted: a missing one raises, and the rule says it could not run).
    `shadow_digest`: signing.shadow_digest(snap["shadow"]), when the verifier has computed it."""
    deep = snap.get("deepAudit")
    board, shadow, geo = snap["enhancements"], snap["shadow"], snap["geo"]
    window = None if deep is None else deep["zipWindow"]
    return integrity_checks(
        passed=board["passed"],
        total=board["total"],
        mismatches=shadow["summary"]["mismatches"],
        digests_consistent=digests_consistent(board, shadow, shadow_digest),
        hmac_holds=hmac_ok,
        geo_discrete=bool(geo["partners"]) and profiles_discrete(geo["partners"]),
        zip_window=None if window is None else ZipWindow.from_json(window),
    )


@rule("integrity-checks", "integrity.checks follow from the content (spec 2.6)")
def _integrity_checks(snap: dict[str, Any], ctx: RuleContext) -> list[str]:
    # Compared as JSON, made once here: the recorded checks are the document's, as parsed.
    computed = content_checks(snap, ctx.hmac_ok, ctx.shadow_digest)
    expected = [check.to_json() for check in computed]
    recorded = snap["integrity"]["checks"]
    if strict_equals(_label_free(expected), _label_free(recorded)):
        return []
    by_id = {c.get("id"): c for c in _label_free(recorded)}
    wrong = [c["id"] for c in _label_free(expected) if not strict_equals(by_id.get(c["id"]), c)]
    return [f"check {name}" for name in wrong] or ["the list of checks"]


# What may stand between two tokens of JSON text.
_BETWEEN_TOKENS = frozenset(' \t\n\r",:[]{}')


def _not_in_renderings(ctx: RuleContext, needle: bytes) -> bool:
    """Whether the needle is in no rendering of the snapshot (its file, its blocks' files, its
    compact serialisation), decided by one search of its file.

    A needle holding no whitespace, quote or structural character lies within one token (a
    string, a number, a literal) wherever it occurs, and every rendering of the snapshot or of
    one of its blocks is made of the snapshot's own tokens, written alike: the needle is in one
    of them only if it is in the snapshot's file."""
    if ctx.rendering is None or not ctx.secret_value or set(ctx.secret_value) & _BETWEEN_TOKENS:
        return False
    data = dict(ctx.files).get(ctx.rendering)
    return data is not None and needle not in data


@rule("secret-absent", "the signing secret's value appears in no file (spec 2.8, 5.2)")
def _secret_absent(snap: dict[str, Any], ctx: RuleContext) -> list[str]:
    if not ctx.secret_value:
        return []
    needle = ctx.secret_value.encode("utf-8")
    if _not_in_renderings(ctx, needle):
        seen = {ctx.rendering, *ctx.block_renderings}
        return [name for name, data in ctx.files if name not in seen and needle in data]
    found = [name for name, data in ctx.files if needle in data]
    # The decoded strings too: a JSON escape (\\u0041...) hides the value from a byte search.
    if needle in orjson.dumps(snap):
        found.append("the snapshot's decoded strings")
    return found
