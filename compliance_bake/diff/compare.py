"""Two snapshots compared by meaning: every change, classified (see README "diff").

Keys: shadow pairs by (state, partner) (pairs.py), board rows by feature, integrity checks by
id, geo profiles by nodeId, the deepAudit block by its fields. Positions never matter.

deepAudit: the block states `totalPlays` and `inWindowPlays` (and days, mode, ok, label,
command). It does not state how many plays were not enriched or why a play fell outside the
window (`totalPlays - inWindowPlays` mixes plays outside the window with plays never enriched),
so the diff reports the two stated counts and their deltas, and derives nothing else.
"""

from __future__ import annotations

from typing import Any

from compliance_bake.diff.model import Change, ChangeClass
from compliance_bake.diff.pairs import pair_changes

COVERAGE, SELF_CHECK, COSMETIC = ChangeClass.COVERAGE, ChangeClass.SELF_CHECK, ChangeClass.COSMETIC
_COUNTS = ("days", "mode", "totalPlays", "inWindowPlays")
_TEXTS = ("label",)


def _field(cls: ChangeClass, name: str, before: Any, after: Any) -> list[Change]:
    if before == after and type(before) is type(after):
        return []
    return [Change(cls, "field", {"field": name}, before, after)]


def _keyed(items: list[dict[str, Any]], key: str) -> dict[str, dict[str, Any]]:
    """By `key`; a repeated key gets `#2`, `#3`... so no item is lost."""
    out: dict[str, dict[str, Any]] = {}
    for item in items:
        name = str(item.get(key))
        label, n = name, 1
        while label in out:
            n += 1
            label = f"{name}#{n}"
        out[label] = item
    return out


def _board(old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    changes: list[Change] = []
    before, after = _keyed(old["rows"], "feature"), _keyed(new["rows"], "feature")
    for feature, row in after.items():
        was = before.get(feature)
        concerns = {"feature": feature}
        if was is None:
            view = {"match": row["match"], "actualState": row["actualState"]}
            changes.append(Change(SELF_CHECK, "board-row-added", concerns, None, view))
            continue
        moved = [k for k in ("match", "actualState", "expectedState") if was.get(k) != row.get(k)]
        if moved:
            changes.append(
                Change(
                    SELF_CHECK,
                    "board-row-changed",
                    concerns,
                    {k: was.get(k) for k in moved},
                    {k: row.get(k) for k in moved},
                )
            )
        elif was.get("notes") != row.get("notes"):
            changes.append(
                Change(COSMETIC, "board-row-notes", concerns, was.get("notes"), row.get("notes"))
            )
    for feature, was in before.items():
        if feature not in after:
            view = {"match": was["match"], "actualState": was["actualState"]}
            concerns = {"feature": feature}
            changes.append(Change(SELF_CHECK, "board-row-removed", concerns, view, None))
    return changes


def _integrity(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[Change]:
    """A check whose verdict changed is `self-check`; a label alone (its counts are reported
    where they come from, or the hmac wording) is `cosmetic`."""
    changes: list[Change] = []
    before, after = _keyed(old, "id"), _keyed(new, "id")
    for check, item in after.items():
        was = before.get(check)
        view = {"ok": item.get("ok"), "label": item.get("label")}
        if was is None:
            changes.append(Change(SELF_CHECK, "check-added", {"check": check}, None, view))
        elif was.get("ok") is not item.get("ok"):
            old_view = {"ok": was.get("ok"), "label": was.get("label")}
            changes.append(Change(SELF_CHECK, "check-changed", {"check": check}, old_view, view))
        elif was.get("label") != item.get("label"):
            changes.append(
                Change(COSMETIC, "check-label", {"check": check}, was.get("label"), item["label"])
            )
    for check, was in before.items():
        if check not in after:
            view = {"ok": was.get("ok"), "label": was.get("label")}
            changes.append(Change(SELF_CHECK, "check-removed", {"check": check}, view, None))
    return changes


def _geo(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[Change]:
    if old == new:
        return []
    changes: list[Change] = []
    before, after = _keyed(old, "nodeId"), _keyed(new, "nodeId")
    for node, profile in after.items():
        was = before.get(node)
        if was is None:
            changes.append(Change(COVERAGE, "geo-added", {"nodeId": node}, None, profile))
        elif was != profile:
            moved = [k for k in profile.keys() | was.keys() if was.get(k) != profile.get(k)]
            moved.sort()
            changes.append(
                Change(
                    COVERAGE,
                    "geo-changed",
                    {"nodeId": node},
                    {k: was.get(k) for k in moved},
                    {k: profile.get(k) for k in moved},
                )
            )
    for node, was in before.items():
        if node not in after:
            changes.append(Change(COVERAGE, "geo-removed", {"nodeId": node}, was, None))
    return changes


def _deep_audit(old: dict[str, Any] | None, new: dict[str, Any] | None) -> list[Change]:
    concerns = {"field": "deepAudit"}
    if old is None and new is None:
        return []
    if old is None or new is None:
        kind = "deep-audit-added" if old is None else "deep-audit-removed"
        return [
            Change(
                COVERAGE,
                kind,
                concerns,
                None if old is None else old["zipWindow"],
                None if new is None else new["zipWindow"],
            )
        ]
    was, now = old["zipWindow"], new["zipWindow"]
    changes: list[Change] = []
    if any(was.get(k) != now.get(k) for k in _COUNTS):
        before = {k: was.get(k) for k in _COUNTS}
        after: dict[str, Any] = {k: now.get(k) for k in _COUNTS}
        after["delta"] = {
            "totalPlays": now["totalPlays"] - was["totalPlays"],
            "inWindowPlays": now["inWindowPlays"] - was["inWindowPlays"],
        }
        changes.append(Change(COVERAGE, "deep-audit-counts", concerns, before, after))
    if was.get("ok") is not now.get("ok"):
        changes.append(Change(SELF_CHECK, "deep-audit-verdict", concerns, was["ok"], now["ok"]))
    for name in _TEXTS:
        changes += _field(COSMETIC, f"deepAudit.zipWindow.{name}", was.get(name), now.get(name))
    changes += _field(COSMETIC, "deepAudit.command", old.get("command"), new.get("command"))
    return changes


def _strings(prefix: str, old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    changes: list[Change] = []
    for name in dict.fromkeys([*old, *new]):
        changes += _field(COSMETIC, f"{prefix}.{name}", old.get(name), new.get(name))
    return changes


def compare(old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    """Every change from `old` to `new`, grouped by what it concerns (the result sorts by class)."""
    changes = pair_changes(old["shadow"]["rows"], new["shadow"]["rows"])
    changes += _field(COVERAGE, "shadow.base", old["shadow"]["base"], new["shadow"]["base"])
    changes += _board(old["enhancements"], new["enhancements"])
    changes += _integrity(old["integrity"]["checks"], new["integrity"]["checks"])
    changes += _geo(old["geo"]["partners"], new["geo"]["partners"])
    changes += _deep_audit(old.get("deepAudit"), new.get("deepAudit"))
    changes += _field(COSMETIC, "generatedAt", old["generatedAt"], new["generatedAt"])
    changes += _field(
        COSMETIC,
        "runtime",
        old["integrity"]["proof"]["bunVersion"],
        new["integrity"]["proof"]["bunVersion"],
    )
    changes += _field(
        COSMETIC,
        "enhancements.consoleDepth",
        old["enhancements"]["consoleDepth"],
        new["enhancements"]["consoleDepth"],
    )
    changes += _strings("links", old["links"], new["links"])
    changes += _strings("proton", old["proton"], new["proton"])
    return changes
