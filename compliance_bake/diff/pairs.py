"""Shadow pairs compared by (state, partner), and the regulated states and partners they cover.

The rows cover every regulated state times every partner (spec 2.3, rule 1), so a state added
brings one new pair per partner. Those pairs are counted in the state's `state-added` change (and a
new partner's in `partner-added`), not listed one by one; a pair is listed on its own only when
its state and its partner are on both sides. A pair whose real decision changed is a `decision`
change; one whose shadow decision or match changed while the real decision held is a
`self-check` change (the service and the registry now agree or disagree differently); one whose
licence status alone changed (say `suspended` to none: blocked either way) is `coverage`; a
change of the reason text alone is `cosmetic`.

Speed matters (two 500,000-row matrices): equal row lists are recognised by one C-level
comparison, and the rows that differ position by position are found by C-level iteration; when
they all keep their (state, partner), those are the changes. Only otherwise are the rows indexed
by key: by state, then by partner (`_index`), which a partner added or removed costs.
"""

from __future__ import annotations

from collections.abc import Container, Sequence
from itertools import chain, compress, groupby, repeat
from operator import attrgetter, ne, not_

from compliance_bake.diff.model import Change, ChangeClass
from compliance_bake.errors import InputError
from compliance_bake.report.models import JsonObject, ShadowRow

_KEY = attrgetter("state", "partner")
_STATE = attrgetter("state")
_PARTNER = attrgetter("partner")


def _view(row: ShadowRow) -> JsonObject:
    """The fields a pair change shows, by their JSON names."""
    return {
        "licenseStatus": row.license_status,
        "realAllowed": row.real_allowed,
        "shadowAllowed": row.shadow_allowed,
        "match": row.match,
    }


def _pair_class(old: ShadowRow, new: ShadowRow) -> ChangeClass | None:
    if old.real_allowed is not new.real_allowed:
        return ChangeClass.DECISION
    if old.shadow_allowed is not new.shadow_allowed or old.match is not new.match:
        return ChangeClass.SELF_CHECK
    if old.license_status != new.license_status:
        return ChangeClass.COVERAGE
    if old != new:
        return ChangeClass.COSMETIC
    return None


def pair_change(
    kind: str, key: tuple[str, str], old: ShadowRow | None, new: ShadowRow | None
) -> Change:
    concerns = {"state": key[0], "partner": key[1]}
    if old is None or new is None:
        before = None if old is None else _view(old)
        after = None if new is None else _view(new)
        return Change(ChangeClass.COVERAGE, kind, concerns, before, after)
    cls = _pair_class(old, new) or ChangeClass.COSMETIC
    if cls is ChangeClass.COSMETIC:
        return Change(cls, kind, concerns, {"reason": old.reason}, {"reason": new.reason})
    return Change(cls, kind, concerns, _view(old), _view(new))


Rows = Sequence[ShadowRow]
Index = dict[str, dict[str, ShadowRow]]  # state -> partner -> row
Blocks = list[tuple[str, list[str], list[ShadowRow]]]  # (state, partners, rows), in order


def _index(rows: Rows, side: str) -> tuple[Index, Blocks]:
    """Rows by state, then by partner, and the runs of rows of one state in their order.

    Two levels keyed by strings (whose hashes Python caches), filled by C-level `update`s
    one run of a state at a time, cost a fraction of one dict keyed by (state, partner) tuples,
    whose hashes are computed on every lookup."""
    index: Index = {}
    blocks: Blocks = []
    for state, group in groupby(rows, _STATE):
        block = list(group)
        partners = list(map(_PARTNER, block))
        known = index.setdefault(state, {})
        size = len(known)
        known.update(zip(partners, block, strict=True))
        if len(known) - size != len(block):
            raise InputError(
                f"{side}: the shadow matrix lists a (state, partner) pair twice",
                "compare snapshots baked by compliance-bake (each pair once)",
            )
        blocks.append((state, partners, block))
    return index, blocks


def grouped(
    kind: str,
    keys: list[tuple[str, str]],
    rows: list[ShadowRow],
    other_states: Container[str],
    other_partners: Container[str],
) -> list[Change]:
    """Pairs only on one side (`keys`, their `rows` alongside): those of a state (else a
    partner) the other side lacks become one `state-<kind>` (`partner-<kind>`) change each,
    with counts; the rest, pair changes."""
    groups: dict[tuple[str, str], dict[str, int]] = {}
    single: list[Change] = []
    for key, row in zip(keys, rows, strict=True):
        state, partner = key
        what = ("state", state) if state not in other_states else None
        what = what or (("partner", partner) if partner not in other_partners else None)
        if what is None:
            pair = (None, row) if kind == "added" else (row, None)
            single.append(pair_change(f"pair-{kind}", key, *pair))
            continue
        counts = groups.setdefault(what, {"pairs": 0, "allowed": 0})
        counts["pairs"] += 1
        counts["allowed"] += row.real_allowed is True
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


def _grouped(kind: str, keys: list[tuple[str, str]], index: Index, other: Index) -> list[Change]:
    rows = [index[state][partner] for state, partner in keys]
    return grouped(kind, keys, rows, other.keys(), set(chain.from_iterable(other.values())))


def _keyed(old_rows: Rows, new_rows: Rows) -> list[Change]:
    """Rows that do not line up: both sides indexed by state and partner; the pairs whose row
    differs or is missing on the other side found with C-level passes over each state's run."""
    old_index, old_blocks = _index(old_rows, "OLD")
    new_index, new_blocks = _index(new_rows, "NEW")
    differ: list[tuple[str, str]] = []
    for state, partners, block in new_blocks:
        olds = old_index.get(state, {})
        moved = compress(partners, map(ne, map(olds.get, partners), block))
        differ += zip(repeat(state), moved)
    removed: list[tuple[str, str]] = []
    for state, partners, _ in old_blocks:
        news = new_index.get(state, {})
        gone = compress(partners, map(not_, map(news.__contains__, partners)))
        removed += zip(repeat(state), gone)
    added = [key for key in differ if key[1] not in old_index.get(key[0], ())]
    changes = _grouped("added", added, new_index, old_index) if added else []
    if removed:
        changes += _grouped("removed", removed, old_index, new_index)
    changes += [
        pair_change("pair-changed", key, old_index[key[0]][key[1]], new_index[key[0]][key[1]])
        for key in differ
        if key[1] in old_index.get(key[0], ())
    ]
    return changes


def pair_changes(old_rows: Rows, new_rows: Rows) -> list[Change]:
    """Every change of the shadow matrix: states and partners, then pairs."""
    if list(old_rows) == list(new_rows):  # C-level comparisons: the common case of a quiet day
        return []
    if len(old_rows) == len(new_rows):
        moved = list(compress(range(len(new_rows)), map(ne, old_rows, new_rows)))
        keys = [(_KEY(old_rows[i]), _KEY(new_rows[i])) for i in moved]
        if all(old_key == new_key for old_key, new_key in keys):
            return [
                pair_change("pair-changed", key, old_rows[i], new_rows[i])
                for i, (key, _) in zip(moved, keys, strict=True)
            ]
    return _keyed(old_rows, new_rows)
