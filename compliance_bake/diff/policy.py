"""What changed in the policy's questions between two snapshots (registry/compliance-policy.json
beside each, when both sides are folders and their files hold): each failing disagreement kind's
count, named by rule as the bake and `verify` name it, and each recorded licence whose status
moved (`active -> suspended`, where the shadow rows can only say `active -> none`)."""

from __future__ import annotations

from typing import Any

from compliance_bake.diff.model import Change, ChangeClass
from compliance_bake.findings import FAIL
from compliance_bake.report.policy import KINDS, SEVERITY

Licences = dict[tuple[str, str], str | None]


def recorded_licences(doc: dict[str, Any] | None) -> Licences:
    """The licence statuses a policy file records, by (state, partner)."""
    if doc is None:
        return {}
    return {(x["state"], x["partner"]): x["status"] for x in doc["registry"]["licences"]}


def policy_changes(
    old: dict[str, Any] | None, new: dict[str, Any] | None, pairs: set[tuple[str, str]]
) -> list[Change]:
    """The policy's changes; a licence that moved is a change of its own only where no pair
    change already shows it (`suspended -> revoked`: both are null in the shadow rows)."""
    if old is None or new is None:
        return []
    changes: list[Change] = []
    before, after = old["summary"]["disagreements"], new["summary"]["disagreements"]
    for kind in KINDS:
        was, now = before.get(kind, 0), after.get(kind, 0)
        if was != now:
            cls = ChangeClass.SELF_CHECK if SEVERITY.get(kind) == FAIL else ChangeClass.COSMETIC
            field = {"field": f"policy.disagreements.{kind}"}
            changes.append(Change(cls, "policy-disagreement", field, was, now))
    if old["asked"] != new["asked"]:
        changes.append(
            Change(
                ChangeClass.COVERAGE,
                "policy-asked",
                {"field": "policy.asked"},
                old["asked"],
                new["asked"],
            )
        )
    was_held, now_held = recorded_licences(old), recorded_licences(new)
    for key in dict.fromkeys([*was_held, *now_held]):
        moved = key in was_held and key in now_held and was_held[key] != now_held[key]
        if moved and key not in pairs:
            concerns = {"state": key[0], "partner": key[1]}
            changes.append(
                Change(ChangeClass.COVERAGE, "licence", concerns, was_held[key], now_held[key])
            )
    return changes


def with_recorded_licences(changes: list[Change], old: Licences, new: Licences) -> list[Change]:
    """Pair changes whose `licenseStatus` is null (no active licence) show the status the
    policy file records for the pair (`suspended`), so a suspension reads as one."""
    for change in changes:
        if not change.kind.startswith("pair-"):
            continue
        key = (change.concerns.get("state", ""), change.concerns.get("partner", ""))
        for view, held in ((change.before, old), (change.after, new)):
            if isinstance(view, dict) and "licenseStatus" in view and view["licenseStatus"] is None:
                recorded = held.get(key)
                if recorded is not None:
                    view["licenseStatus"] = recorded
    return changes


def describe_policy(change: Change) -> str | None:
    """The line of a policy change (diff/render.py), None for another kind."""
    if change.kind == "policy-disagreement":
        name = change.concerns["field"].rsplit(".", 1)[-1]
        return f"policy {KINDS.get(name, name)}: {change.before} -> {change.after} questions"
    if change.kind == "policy-asked":
        return f"policy questions asked: {change.before} -> {change.after}"
    if change.kind == "licence":
        c = change.concerns
        moved = f"{change.before or 'none'} -> {change.after or 'none'}"
        return f"licence {c['state']} {c['partner']}: {moved}"
    return None
