"""Two snapshots compared by meaning: every change, classified (docs/commands.md, `diff OLD NEW`).

Keys: shadow pairs by (state, partner) (pairs.py), board rows by feature, integrity checks by
id, geo profiles by nodeId, the deepAudit block by its fields. Positions never matter.

deepAudit: the block states `totalPlays` and `inWindowPlays` (and days, mode, ok, label,
command). It does not state how many plays were not enriched or why a play fell outside the
window (`totalPlays - inWindowPlays` mixes plays outside the window with plays never enriched),
so the diff reports the two stated counts and their deltas, and derives nothing else.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from compliance_bake.diff.model import Change, ChangeClass
from compliance_bake.diff.pairs import pair_changes
from compliance_bake.diff.policy import policy_changes, recorded_licences, with_recorded_licences
from compliance_bake.diff.waivers import waiver_changes
from compliance_bake.findings import FAIL
from compliance_bake.inputs.models import GeoProfile
from compliance_bake.report import disagreements
from compliance_bake.report.models import (
    BoardRow,
    DeepAudit,
    IntegrityCheck,
    JsonObject,
    JsonValue,
    Snapshot,
)

COVERAGE, SELF_CHECK, COSMETIC = ChangeClass.COVERAGE, ChangeClass.SELF_CHECK, ChangeClass.COSMETIC
_COUNTS = ("days", "mode", "totalPlays", "inWindowPlays")
_TEXTS = ("label",)
_BOARD_MOVES = ("match", "actualState", "expectedState")
_KEYS = {"board-row": "feature", "check": "check", "geo": "nodeId"}  # what `concerns` names
T = TypeVar("T")


def _field(cls: ChangeClass, name: str, before: JsonValue, after: JsonValue) -> list[Change]:
    if before == after and type(before) is type(after):
        return []
    return [Change(cls, "field", {"field": name}, before, after)]


def _keyed(items: Iterable[T], key: Callable[[T], str]) -> dict[str, T]:
    """By `key`; a repeated key gets `#2`, `#3`... so no item is lost."""
    out: dict[str, T] = {}
    for item in items:
        name = key(item)
        label, n = name, 1
        while label in out:
            n += 1
            label = f"{name}#{n}"
        out[label] = item
    return out


def _matched(
    cls: ChangeClass,
    name: str,
    key: Callable[[T], str],
    old: Iterable[T],
    new: Iterable[T],
    view: Callable[[T], JsonValue],
    changed: Callable[[dict[str, str], T, T], list[Change]],
) -> list[Change]:
    """Records of both sides matched by `key` (`_KEYS` names it in `concerns`): one on a side
    only is `NAME-added` or `NAME-removed` with its view, one on both is what `changed` finds;
    in the new side's order, then the removed ones in the old side's."""
    before, after = _keyed(old, key), _keyed(new, key)
    changes: list[Change] = []
    for label, item in after.items():
        was = before.get(label)
        if was is None:
            changes.append(Change(cls, f"{name}-added", {_KEYS[name]: label}, None, view(item)))
        else:
            changes += changed({_KEYS[name]: label}, was, item)
    for label, was in before.items():
        if label not in after:
            changes.append(Change(cls, f"{name}-removed", {_KEYS[name]: label}, view(was), None))
    return changes


def _row_view(row: BoardRow) -> JsonObject:
    return {"match": row.match, "actualState": row.actual_state}


def _row_changes(concerns: dict[str, str], was: BoardRow, row: BoardRow) -> list[Change]:
    was_json, now_json = was.to_json(), row.to_json()
    moved = [k for k in _BOARD_MOVES if was_json[k] != now_json[k]]
    if moved:
        before, after = {k: was_json[k] for k in moved}, {k: now_json[k] for k in moved}
        return [Change(SELF_CHECK, "board-row-changed", concerns, before, after)]
    if was.notes != row.notes:
        return [Change(COSMETIC, "board-row-notes", concerns, was.notes, row.notes)]
    return []


def _check_view(check: IntegrityCheck) -> JsonObject:
    return {"ok": check.ok, "label": check.label}


def _check_changes(
    concerns: dict[str, str], was: IntegrityCheck, item: IntegrityCheck
) -> list[Change]:
    """A check whose verdict changed is `self-check`; a label alone (its counts are reported
    where they come from, or the hmac wording) is `cosmetic`."""
    if was.ok is not item.ok:
        return [Change(SELF_CHECK, "check-changed", concerns, _check_view(was), _check_view(item))]
    if was.label != item.label:
        return [Change(COSMETIC, "check-label", concerns, was.label, item.label)]
    return []


def _profile_changes(concerns: dict[str, str], was: GeoProfile, now: GeoProfile) -> list[Change]:
    if was == now:
        return []
    previous, profile = was.to_json(), now.to_json()
    moved = sorted(k for k in profile.keys() | previous.keys() if previous.get(k) != profile.get(k))
    before, after = {k: previous.get(k) for k in moved}, {k: profile.get(k) for k in moved}
    return [Change(COVERAGE, "geo-changed", concerns, before, after)]


def _deep_audit(old: DeepAudit | None, new: DeepAudit | None) -> list[Change]:
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
                None if old is None else old.zip_window.to_json(),
                None if new is None else new.zip_window.to_json(),
            )
        ]
    was, now = old.zip_window.to_json(), new.zip_window.to_json()
    changes: list[Change] = []
    if any(was[k] != now[k] for k in _COUNTS):
        before = {k: was[k] for k in _COUNTS}
        after: JsonObject = {k: now[k] for k in _COUNTS}
        after["delta"] = {
            "totalPlays": new.zip_window.total_plays - old.zip_window.total_plays,
            "inWindowPlays": new.zip_window.in_window_plays - old.zip_window.in_window_plays,
        }
        changes.append(Change(COVERAGE, "deep-audit-counts", concerns, before, after))
    if old.zip_window.ok is not new.zip_window.ok:
        changes.append(
            Change(SELF_CHECK, "deep-audit-verdict", concerns, old.zip_window.ok, new.zip_window.ok)
        )
    for name in _TEXTS:
        changes += _field(COSMETIC, f"deepAudit.zipWindow.{name}", was[name], now[name])
    changes += _field(COSMETIC, "deepAudit.command", old.command, new.command)
    return changes


def _strings(
    prefix: str, old: Mapping[str, JsonValue], new: Mapping[str, JsonValue]
) -> list[Change]:
    changes: list[Change] = []
    for name in dict.fromkeys([*old, *new]):
        changes += _field(COSMETIC, f"{prefix}.{name}", old.get(name), new.get(name))
    return changes


def _disagreements(old: Snapshot, new: Snapshot) -> list[Change]:
    """Where the shadow decisions came from, and the rows of each disagreement kind (named as
    the bake and `verify` name them): a failing kind's count is a self-check change, a reported
    kind's a cosmetic one."""
    changes: list[Change] = []
    was, now = old.shadow.sources, new.shadow.sources
    before, after = old.shadow.disagreements, new.shadow.disagreements
    if was is None or now is None or before is None or after is None:
        return changes  # one side was baked before they were recorded: nothing to compare
    changes += _field(
        COVERAGE, "shadow.sources.shadowAllowed", was.get("shadowAllowed"), now.get("shadowAllowed")
    )
    for kind in disagreements.KINDS:
        cls = SELF_CHECK if disagreements.SEVERITY.get(kind) == FAIL else COSMETIC
        if before.get(kind) != after.get(kind):
            changes.append(
                Change(
                    cls,
                    "disagreement",
                    {"field": f"shadow.disagreements.{kind}"},
                    before.get(kind),
                    after.get(kind),
                )
            )
    return changes


def compare(
    old: Snapshot,
    new: Snapshot,
    old_policy: dict[str, Any] | None = None,
    new_policy: dict[str, Any] | None = None,
) -> list[Change]:
    """Every change from `old` to `new`, grouped by what it concerns (the result sorts by class);
    with both sides' policy files, the policy's changes too (diff/policy.py)."""
    changes = with_recorded_licences(
        pair_changes(old.shadow.rows, new.shadow.rows),
        recorded_licences(old_policy),
        recorded_licences(new_policy),
    )
    paired = {
        (c.concerns["state"], c.concerns["partner"]) for c in changes if c.kind.startswith("pair-")
    }
    changes += policy_changes(old_policy, new_policy, paired)
    changes += _field(COVERAGE, "shadow.base", old.shadow.base, new.shadow.base)
    changes += _disagreements(old, new)
    rows = (old.board.rows, new.board.rows)
    checks = (old.integrity.checks, new.integrity.checks)
    changes += _matched(
        SELF_CHECK, "board-row", lambda r: r.feature, *rows, _row_view, _row_changes
    )
    changes += _matched(SELF_CHECK, "check", lambda c: c.id, *checks, _check_view, _check_changes)
    if old.geo.partners != new.geo.partners:
        profiles = (old.geo.partners, new.geo.partners)
        changes += _matched(
            COVERAGE, "geo", lambda p: p.node_id, *profiles, GeoProfile.to_json, _profile_changes
        )
    changes += _deep_audit(old.deep_audit, new.deep_audit)
    changes += waiver_changes(old.waivers, new.waivers)
    changes += _field(COSMETIC, "generatedAt", old.generated_at, new.generated_at)
    changes += _field(
        COSMETIC, "runtime", old.integrity.proof.bun_version, new.integrity.proof.bun_version
    )
    changes += _field(
        COSMETIC,
        "enhancements.consoleDepth",
        old.board.console_depth,
        new.board.console_depth,
    )
    changes += _strings("links", old.links.to_json(), new.links.to_json())
    changes += _strings("proton", old.proton, new.proton)
    return changes
