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

from itertools import compress
from operator import itemgetter, ne, not_
from typing import Any

from compliance_bake.diff.model import Change, ChangeClass
from compliance_bake.errors import InputError

FIELDS = ("licenseStatus", "realAllowed", "shadowAllowed", "match")
_KEY = itemgetter("state", "partner")
_FIRST = itemgetter(0)
_SECOND = itemgetter(1)


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


def _index(
    keys: list[tuple[str, str]], rows: list[dict[str, Any]], side: str
) -> dict[tuple[str, str], dict[str, Any]]:
    index = dict(zip(keys, rows, strict=True))
    if len(index) != len(rows):
        raise InputError(
            f"{side}: the shadow matrix lists a (state, partner) pair twice",
            "compare snapshots baked by compliance-bake (each pair once)",
        )
    return index


def _grouped(
    kind: str,
    keys: list[tuple[str, str]],
    index: dict[tuple[str, str], dict[str, Any]],
    other: list[tuple[str, str]],
) -> list[Change]:
    """Pairs only on one side: those of a state (else a partner) the other side lacks become
    one `state-<kind>` (`partner-<kind>`) change each, with counts; the rest, pair changes."""
    states, partners = set(map(_FIRST, other)), set(map(_SECOND, other))
    groups: dict[tuple[str, str], dict[str, int]] = {}
    single: list[Change] = []
    for key in keys:
        state, partner = key
        what = ("state", state) if state not in states else None
        what = what or (("partner", partner) if partner not in partners else None)
        if what is None:
            row = index[key]
            pair = (None, row) if kind == "added" else (row, None)
            single.append(_pair_change(f"pair-{kind}", key, *pair))
            continue
        counts = groups.setdefault(what, {"pairs": 0, "allowed": 0})
        counts["pairs"] += 1
        counts["allowed"] += index[key].get("realAllowed") is True
    grouped = [
        Change(
            ChangeClass.COVERAGE,
            f"{what}-{kind}",
            {what: name},
            None if kind == "added" else counts,
            counts if kind == "added" else None,
        )
        for (what, name), counts in sorted(groups.items())
    ]
    return grouped + single


def pair_changes(old_rows: list[dict[str, Any]], new_rows: list[dict[str, Any]]) -> list[Change]:
    """Every change of the shadow matrix: states and partners, then pairs."""
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
    # Rows that do not line up: index both sides by key, and find in C-level passes the keys
    # whose row differs or is missing on the other side.
    old_keys, new_keys = list(map(_KEY, old_rows)), list(map(_KEY, new_rows))
    old_index, new_index = _index(old_keys, old_rows, "OLD"), _index(new_keys, new_rows, "NEW")
    differ = list(compress(new_keys, map(ne, map(old_index.get, new_keys), new_rows)))
    removed = list(compress(old_keys, map(not_, map(new_index.__contains__, old_keys))))
    added = [key for key in differ if key not in old_index]
    changes = _grouped("added", added, new_index, old_keys) if added else []
    if removed:
        changes += _grouped("removed", removed, old_index, new_keys)
    changes += [
        _pair_change("pair-changed", key, old_index[key], new_index[key])
        for key in differ
        if key in old_index
    ]
    return changes
