"""Shadow pairs compared by (state, partner), and the regulated states and partners they cover.

The rows cover every regulated state times every partner (spec 2.3, rule 1), so a state added
brings one new pair per partner. Those pairs are counted in the one `state-added` change (and a
new partner's in `partner-added`), not listed one by one; a pair is listed on its own only when
its state and its partner are on both sides. A pair whose real decision changed is a `decision`
change; one whose shadow decision or match changed while the real decision held is a
`self-check` change (the service and the registry now agree or disagree differently); one whose
licence status alone changed (say `suspended` to none: blocked either way) is `coverage`; a
change of the reason text alone is `cosmetic`.

Speed matters (two 500,000-row matrices): equal row lists are recognised by one C-level
comparison, and the rows that differ position by position are found by C-level iteration; when
they all keep their (state, partner), those are the changes. Only otherwise are the rows indexed
by key.
"""

from __future__ import annotations

from collections import Counter
from itertools import compress
from operator import itemgetter, ne
from typing import Any

from compliance_bake.diff.model import Change, ChangeClass
from compliance_bake.errors import InputError

FIELDS = ("licenseStatus", "realAllowed", "shadowAllowed", "match")
_KEY = itemgetter("state", "partner")
_STATE = itemgetter("state")
_PARTNER = itemgetter("partner")
_REAL = itemgetter("realAllowed")


def _view(row: dict[str, Any]) -> dict[str, Any]:
    return {name: row.get(name) for name in FIELDS}


def _pair_class(old: dict[str, Any], new: dict[str, Any]) -> ChangeClass | None:
    if old.get("realAllowed") is not new.get("realAllowed"):
        return ChangeClass.DECISION
    if old.get("shadowAllowed") is not new.get("shadowAllowed") or old.get("match") is not new.get(
        "match"
    ):
        return ChangeClass.SELF_CHECK
    if old.get("licenseStatus") != new.get("licenseStatus"):
        return ChangeClass.COVERAGE
    if old != new:
        return ChangeClass.COSMETIC
    return None


def _pair_change(kind: str, key: tuple[str, str], before: Any, after: Any) -> Change:
    cls = ChangeClass.COVERAGE
    if before is not None and after is not None:
        cls = _pair_class(before, after) or ChangeClass.COSMETIC
        if cls is ChangeClass.COSMETIC:
            before, after = {"reason": before.get("reason")}, {"reason": after.get("reason")}
        else:
            before, after = _view(before), _view(after)
    else:
        before = None if before is None else _view(before)
        after = None if after is None else _view(after)
    return Change(cls, kind, {"state": key[0], "partner": key[1]}, before, after)


def _index(rows: list[dict[str, Any]], side: str) -> dict[tuple[str, str], dict[str, Any]]:
    index = dict(zip(map(_KEY, rows), rows, strict=True))
    if len(index) != len(rows):
        raise InputError(
            f"{side}: the shadow matrix lists a (state, partner) pair twice",
            "compare snapshots baked by compliance-bake (each pair once)",
        )
    return index


def _set_changes(old_rows: list[dict[str, Any]], new_rows: list[dict[str, Any]]) -> list[Change]:
    """States and partners added or removed, each with its count of pairs and allowed pairs."""
    changes: list[Change] = []
    for getter, what in ((_STATE, "state"), (_PARTNER, "partner")):
        old_of, new_of = Counter(map(getter, old_rows)), Counter(map(getter, new_rows))
        if old_of.keys() == new_of.keys():
            continue
        old_allowed = Counter(compress(map(getter, old_rows), map(_REAL, old_rows)))
        new_allowed = Counter(compress(map(getter, new_rows), map(_REAL, new_rows)))
        for name in sorted(new_of.keys() - old_of.keys()):
            after = {"pairs": new_of[name], "allowed": new_allowed[name]}
            changes.append(Change(ChangeClass.COVERAGE, f"{what}-added", {what: name}, None, after))
        for name in sorted(old_of.keys() - new_of.keys()):
            before = {"pairs": old_of[name], "allowed": old_allowed[name]}
            changes.append(
                Change(ChangeClass.COVERAGE, f"{what}-removed", {what: name}, before, None)
            )
    return changes


def pair_changes(old_rows: list[dict[str, Any]], new_rows: list[dict[str, Any]]) -> list[Change]:
    """Every change of the shadow matrix: states, partners, then pairs in the new side's order."""
    if old_rows == new_rows:  # one C-level comparison: the common case of a quiet day
        return []
    if len(old_rows) == len(new_rows):
        moved = list(compress(range(len(new_rows)), map(ne, old_rows, new_rows)))
        keys = [(_KEY(old_rows[i]), _KEY(new_rows[i])) for i in moved]
        if all(old_key == new_key for old_key, new_key in keys):
            return [
                _pair_change("pair-changed", key, old_rows[i], new_rows[i])
                for i, (key, _) in zip(moved, keys, strict=True)
            ]
    old_index, new_index = _index(old_rows, "OLD"), _index(new_rows, "NEW")
    changes = _set_changes(old_rows, new_rows)
    old_states, new_states = set(map(_STATE, old_rows)), set(map(_STATE, new_rows))
    old_partners, new_partners = set(map(_PARTNER, old_rows)), set(map(_PARTNER, new_rows))
    for key, new in new_index.items():
        old = old_index.get(key)
        if old is None:
            if key[0] in old_states and key[1] in old_partners:
                changes.append(_pair_change("pair-added", key, None, new))
        elif old != new:
            changes.append(_pair_change("pair-changed", key, old, new))
    for key, old in old_index.items():
        if key not in new_index and key[0] in new_states and key[1] in new_partners:
            changes.append(_pair_change("pair-removed", key, old, None))
    return changes
