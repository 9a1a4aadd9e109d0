"""The fast paths that stay say what the plain ones say, and catch what they catch.

- `may_hold_float`, the one float scan of a rendering (compact or indented), finds every float
  the value holds;
- `loads_pretty` (one orjson parse of a file in the baked layout) reads what `loads_strict` reads
  and refuses what it refuses, with the same place;
- the registry copies, compared by serialisation (`json_equals`) or by their bytes, still fail on
  one changed value;
- the digests from canonical bytes made once (`proofs.snapshot_digests`) are the scheme's;
- the shadow rules on columns (verify/columns.py) give the row-by-row findings, exactly.
"""

from __future__ import annotations

import copy
import random
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compliance_bake.findings import FAIL, INFO
from compliance_bake.inputs.jsonio import (
    INT_MAX,
    MAX_DEPTH,
    StrictJSONError,
    dumps_pretty,
    loads_pretty,
    loads_strict,
    may_hold_float,
)
from compliance_bake.report import layout
from compliance_bake.report.deepequal import json_equals, strict_equals
from compliance_bake.report.row_kinds import reason_holds
from compliance_bake.signing import proofs
from compliance_bake.signing.integrity import profile_discrete, profiles_discrete
from compliance_bake.signing.proofs import snapshot_digests
from compliance_bake.verify import columns, rules
from compliance_bake.verify.columns import shadow_columns
from compliance_bake.verify.rules.book import LICENCE_STATUSES, RuleContext, health_states
from tests.conftest import invoke

text = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)
scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**64), 2**65)
    | st.floats(allow_nan=False, allow_infinity=False)
    | text
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(text, inner, max_size=4),
    max_leaves=20,
)


def _holds_float(value: Any) -> bool:
    if isinstance(value, dict):
        return any(_holds_float(item) for item in value.values())
    if isinstance(value, list):
        return any(_holds_float(item) for item in value)
    return type(value) is float


@settings(max_examples=400, deadline=None)
@given(values)
def test_the_one_float_scan_finds_every_float_in_either_rendering(value: Any) -> None:
    """A float found by the value's types is found in its compact and its indented text; a
    value without one is told so unless a string looks like one."""
    import orjson

    try:
        compact = orjson.dumps(value)
    except TypeError:  # an integer past 64 bits: orjson writes none, and neither do we
        return
    for rendering in (compact, dumps_pretty(value)):
        if _holds_float(value):
            assert may_hold_float(value, rendering)
        elif not any(type(leaf) is str for leaf in _leaves(value)):
            assert not may_hold_float(value, rendering)


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [leaf for item in value.values() for leaf in _leaves(item)]
    if isinstance(value, list):
        return [leaf for item in value for leaf in _leaves(item)]
    return [value]


def _read(read: Any, raw: bytes) -> tuple[str, Any]:
    try:
        return "value", read(raw)
    except StrictJSONError as exc:
        return "refused", (str(exc), exc.where)


@settings(max_examples=400, deadline=None)
@given(values)
def test_loads_pretty_reads_and_refuses_as_loads_strict(value: Any) -> None:
    try:
        raw = dumps_pretty(value)
    except TypeError:  # an integer past 64 bits: orjson writes none
        raw = repr(value).encode()
    kind, got = _read(loads_pretty, raw)
    strict_kind, strict = _read(loads_strict, raw)
    assert kind == strict_kind
    if kind == "refused":
        assert got == strict
    else:
        doc, same = got
        assert strict_equals(doc, strict) and list(_keys(doc)) == list(_keys(strict))
        assert same == (dumps_pretty(strict) == raw)


def _keys(value: Any) -> Any:
    if isinstance(value, dict):
        for key, child in value.items():
            yield key
            yield from _keys(child)
    elif isinstance(value, list):
        for child in value:
            yield from _keys(child)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b'{\n  "a": 1,\n  "a": 2\n}\n', "duplicate key 'a'"),
        (b'{\n  "a": 1.5\n}\n', "1.5 is not a whole number"),
        (b"[\n  -2.0\n]\n", "-2.0 is not a whole number"),
        (b'{\n  "a": [\n    1e+20\n  ]\n}\n', "1e+20 is not a whole number"),
        (b"1.0\n", "1.0 is not a whole number"),
        (f"[\n  {INT_MAX + 1}\n]\n".encode(), "64-bit range"),
        (b'[\n  "\\ud800"\n]\n', "surrogate"),
        (b'{\n  "a": NaN\n}\n', "NaN is not JSON"),
        (b"\xef\xbb\xbf[]\n", "BOM"),
        (b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1), "nested deeper"),
    ],
)
def test_loads_pretty_refuses_in_the_baked_layout_too(raw: bytes, message: str) -> None:
    with pytest.raises(StrictJSONError, match=re.escape(message)):
        loads_pretty(raw)
    with pytest.raises(StrictJSONError, match=re.escape(message)):
        loads_strict(raw)


def test_loads_pretty_says_whether_the_bytes_are_the_layout() -> None:
    assert loads_pretty(b'{\n  "v": "CPython 3.11.7",\n  "t": "04:06:00.000Z"\n}\n') == (
        {"v": "CPython 3.11.7", "t": "04:06:00.000Z"},
        True,
    )
    assert loads_pretty(b'{"a": 1}') == ({"a": 1}, False)
    assert loads_pretty(b'{\n  "a": "x: 1.5"\n}\n') == ({"a": "x: 1.5"}, True)  # read strictly
    deepest = b"[" * MAX_DEPTH + b"]" * MAX_DEPTH  # readable, deeper than orjson writes
    assert loads_pretty(deepest) == (loads_strict(deepest), False)


@pytest.mark.parametrize(
    ("a", "b", "equal"),
    [
        ({"a": 1, "b": [True, None]}, {"b": [True, None], "a": 1}, True),  # key order: no matter
        ({"a": True}, {"a": 1}, False),
        ({"a": None}, {}, False),
        ([{"x": "y"}] * 500 + [{"x": "y"}], [{"x": "y"}] * 500 + [{"x": "z"}], False),
        ([1, 2], [1, 2, 3], False),
        ({"a": "\u00e9"}, {"a": "e\u0301"}, False),
        ({"a": 2**64 + 1}, {"a": 2**64 + 1}, True),  # past orjson: the walk decides
        ({"a": 2**64 + 1}, {"a": 2**64 + 2}, False),
    ],
)
def test_json_equals_is_strict_equals_for_json(a: Any, b: Any, equal: bool) -> None:
    assert json_equals(a, b) is equal is strict_equals(a, b)


def _findings(out: Path) -> list[tuple[str, bool, str]]:
    from compliance_bake.signing.secret import Secret
    from compliance_bake.verify.verifier import verify_out
    from tests.conftest import SECRET

    report = verify_out(out, Secret(SECRET, "test"))
    return [(f.file, f.ok, f.what) for f in report.findings]


def test_a_registry_copy_with_one_value_changed_fails(baked: Path) -> None:
    path = baked / layout.SHADOW_FILE
    copy_doc = loads_strict(path.read_bytes())
    row = copy_doc["rows"][-1]
    row["match"] = not row["match"]
    path.write_bytes(dumps_pretty(copy_doc))  # in the layout: only the value differs
    found = _findings(baked)
    assert (layout.SHADOW_FILE, True, "bytes are in the baked layout") in found
    assert (layout.SHADOW_FILE, False, "registry copy differs from the snapshot's shadow") in found
    result = invoke("verify", str(baked))
    assert result.exit_code == 1 and layout.SHADOW_FILE in result.output


def test_a_registry_copy_in_another_key_order_still_equals_its_block(baked: Path) -> None:
    path = baked / layout.SHADOW_FILE
    copy_doc = loads_strict(path.read_bytes())
    reordered = dict(reversed(list(copy_doc.items())))
    reordered["rows"] = [dict(reversed(list(r.items()))) for r in copy_doc["rows"]]
    path.write_bytes(dumps_pretty(reordered))
    found = _findings(baked)
    assert (layout.SHADOW_FILE, True, "registry copy equals the snapshot's shadow") in found
    assert (layout.SHADOW_FILE, True, "schema valid") in found


def test_a_registry_copy_breaking_its_schema_is_still_validated(baked: Path) -> None:
    path = baked / layout.SHADOW_FILE
    copy_doc = loads_strict(path.read_bytes())
    copy_doc["rows"][0]["state"] = 7
    path.write_bytes(dumps_pretty(copy_doc))
    found = _findings(baked)
    assert any(f == layout.SHADOW_FILE and not ok and "schema" in w for f, ok, w in found)


def _demo_snapshot(baked: Path) -> dict[str, Any]:
    doc: dict[str, Any] = loads_strict((baked / layout.API_FILE).read_bytes())
    return doc


def _expected_digests(snap: dict[str, Any]) -> tuple[Any, ...]:
    def attempt(compute: Any) -> Any:
        try:
            return compute()
        except (KeyError, TypeError, AttributeError, ValueError, RecursionError):
            return None

    board, shadow = snap.get("enhancements") or {}, snap.get("shadow") or {}
    return (
        attempt(lambda: proofs.board_signature(board)),
        attempt(lambda: proofs.shadow_digest(shadow)),
        attempt(lambda: proofs.integrity_digest(snap)),
    )


@pytest.mark.parametrize(
    "edit",
    [
        lambda s: None,
        lambda s: s["shadow"]["rows"][0].update(reason="other"),
        lambda s: s["shadow"]["proof"].update(bunVersion=2**60),  # canon cannot: no digest
        lambda s: s["shadow"].update(base="\ue000 high"),  # the rfc8785 path
        lambda s: s.update(shadow=[1]),
        lambda s: s.update(shadow={}),
        lambda s: s.pop("shadow"),
        lambda s: s.update(enhancements="x"),
    ],
    ids=["as-baked", "row", "big-int", "high-char", "list", "empty", "missing", "board-str"],
)
def test_the_digests_from_pieces_are_signing_proofs_digests(baked: Path, edit: Any) -> None:
    snap = _demo_snapshot(baked)
    edit(snap)
    got = snapshot_digests(snap)
    assert (got.board, got.shadow, got.integrity) == _expected_digests(snap)


# The shadow rules on columns against the same rules walking the rows, on rows with every kind
# of doubtful value (1 for True, "" for None, a list, a missing reason, states out of order).
_row_values = {
    "state": st.sampled_from(["MA", "NJ", "NY", 1, True]),
    "partner": st.sampled_from(["a", "b", "c", 1]),
    "licenseStatus": st.sampled_from(["active", None, "banana", 0, [], True]),
    "realAllowed": st.sampled_from([True, False, 1, 0, None]),
    "shadowAllowed": st.sampled_from([True, False, 1, 0]),
    "match": st.sampled_from([True, False, 1]),
    "reason": st.sampled_from(
        ["Partner not licensed in MA", "Partner not licensed in NJ", None, "", [], "1"]
    ),
}
_SHADOW_RULES = {rule.id for rule, _ in rules.RULES if rule.id.startswith(("shadow-", "geo-"))}


@st.composite
def _snapshots(draw: st.DrawFn, base: dict[str, Any]) -> dict[str, Any]:
    snap = copy.deepcopy(base)
    states = draw(st.lists(st.sampled_from(["MA", "NJ", "NY"]), min_size=1, max_size=3))
    pairs = [(s, p) for s in ["MA", "NJ", "NY"] for p in ["a", "b", "c"]]
    matrix = [(s, p) for s in dict.fromkeys(states) for p in ["a", "b", "c"]]  # as baked
    picked = draw(st.just(matrix) | st.lists(st.sampled_from(pairs), max_size=12))
    rows = []
    for state, partner in picked:
        row = {"state": state, "partner": partner, "licenseStatus": "active"}
        row.update(realAllowed=True, shadowAllowed=True, match=True)
        if draw(st.booleans()):
            row.update(licenseStatus=None, realAllowed=False, shadowAllowed=False)
            row["reason"] = f"Partner not licensed in {state}"
        for name, strategy in _row_values.items():
            if draw(st.integers(0, 15)) == 0:
                row[name] = draw(strategy)
        if row.get("reason") is None and draw(st.booleans()):
            row.pop("reason", None)
        rows.append(row)
    snap["shadow"]["rows"] = rows
    snap["shadow"]["summary"] = draw(
        st.sampled_from([snap["shadow"]["summary"], {"allow": 0, "block": 0, "mismatches": 0}])
    )
    health = next(r for r in snap["enhancements"]["rows"] if r["feature"] == "health.states")
    health["expectedState"]["states"] = states
    snap["geo"]["partners"] = [{**snap["geo"]["partners"][0], "nodeId": n} for n in "abc"]
    return snap


@pytest.fixture
def demo_snapshot(baked: Path) -> dict[str, Any]:
    return _demo_snapshot(baked)


def _results(snap: dict[str, Any], monkeypatch: pytest.MonkeyPatch, walk: bool) -> list[Any]:
    with monkeypatch.context() as patch:
        if walk:
            patch.setattr(rules, "shadow_columns", lambda snap: None)
        found = rules.check_rules(snap, RuleContext(hmac_ok=True))
    return [(f.rule, f.severity, f.what) for f in found if f.rule in _SHADOW_RULES]


def test_the_column_rules_give_the_row_by_row_findings(
    demo_snapshot: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    @settings(max_examples=300, deadline=None)
    @given(_snapshots(demo_snapshot))
    def check(snap: dict[str, Any]) -> None:
        assert _results(snap, monkeypatch, walk=False) == _results(snap, monkeypatch, walk=True)

    check()


def test_the_columns_show_a_baked_matrix_holds_and_a_one_value_edit_does_not(
    demo_snapshot: dict[str, Any],
) -> None:
    states = health_states(demo_snapshot)

    def holds(snap: dict[str, Any]) -> list[bool]:
        found = shadow_columns(snap)
        if found is None:  # a row off its type: the columns cannot show that any rule holds
            return [False] * 4
        return [
            columns.covers(states, found),
            columns.statuses_within(found, LICENCE_STATUSES),
            columns.licence_decides(found),
            all(map(reason_holds, found.kinds)),
        ]

    assert holds(demo_snapshot) == [True] * 4
    edits: list[tuple[int, Any]] = [
        (0, lambda rows: rows.append(dict(rows[0]))),
        (1, lambda rows: rows[2].update(licenseStatus="expired")),
        (2, lambda rows: rows[2].update(match=1)),  # equal to True, not True
        (2, lambda rows: rows[3].update(shadowAllowed=not rows[3]["shadowAllowed"])),
        (3, lambda rows: next(r for r in rows if not r["realAllowed"]).update(reason="")),
        (3, lambda rows: next(r for r in rows if r["realAllowed"]).update(reason="")),
    ]
    for which, edit in edits:
        snap = copy.deepcopy(demo_snapshot)
        edit(snap["shadow"]["rows"])
        assert holds(snap)[which] is False


def test_a_state_in_two_runs_is_counted_pair_by_pair(
    demo_snapshot: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    snap = copy.deepcopy(demo_snapshot)
    rows = snap["shadow"]["rows"]
    rows.append(rows.pop(0))  # the first state's first row now stands at the end: not a run
    assert _results(snap, monkeypatch, walk=False)[0][:2] == ("shadow-coverage", INFO)
    rows.append(copy.deepcopy(rows[1]))  # and a pair twice, in no run
    assert _results(snap, monkeypatch, walk=False)[0][1] == FAIL


def test_the_secret_search_by_renderings_finds_what_the_full_search_finds(baked: Path) -> None:
    from compliance_bake.verify.rules.shadow import _secret_absent

    snap = _demo_snapshot(baked)
    names = [*layout.JSON_FILES, layout.PORTAL_FILE]
    files = tuple((name, (baked / name).read_bytes()) for name in names)
    renderings = frozenset({layout.BOARD_FILE, layout.SHADOW_FILE})
    generator = random.Random(14)
    needles = ["0" * 40, "no such secret anywhere in it", "licenseStatus", "<!doctype", "MA"]
    for _, data in files:
        text = data.decode("utf-8")
        for _ in range(150):
            start = generator.randrange(len(text))
            needles.append(text[start : start + generator.randint(2, 40)])
    for needle in needles:
        full = RuleContext(hmac_ok=True, secret_value=needle, files=files)
        fast = replace(full, rendering=layout.API_FILE, block_renderings=renderings)
        assert _secret_absent(snap, fast) == _secret_absent(snap, full), needle


_profile_values = {
    "stateCode": st.sampled_from(["MA", "NJ", "MA\n", "ma", "M", "", 7, None]),
    "age": st.sampled_from([30, 0, True, "30", None, -1]),
    "location": st.sampled_from(["Boston", " ", "", "\t x", 5, None]),
    "zipCode": st.sampled_from(["02115", "2115", "02115\n", "0211a", 2115, None]),
}


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.fixed_dictionaries({}, optional=_profile_values) | st.sampled_from([[], "x", 3]),
        max_size=6,
    )
)
def test_profiles_discrete_is_every_profile_discrete(profiles: list[Any]) -> None:
    def outcome(check: Any) -> Any:
        try:
            return check()
        except (AttributeError, TypeError) as exc:
            return type(exc)

    one_by_one = outcome(lambda: all(profile_discrete(p) for p in profiles))
    assert outcome(lambda: profiles_discrete(profiles)) == one_by_one


@st.composite
def _layouts(draw: st.DrawFn) -> dict[str, Any]:
    """Rows in the bake's layout or off it: states repeated, odd values, a row inserted twice."""
    states = draw(st.lists(st.sampled_from(["MA", "NJ", "NY", 1, True]), min_size=1, max_size=4))
    partners = draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=3))
    rows = []
    for state in states:
        for partner in partners:
            real, match = draw(st.sampled_from([True, False, True, False, 1])), draw(st.booleans())
            rows.append({"state": state, "partner": partner, "licenseStatus": None,
                         "realAllowed": real, "shadowAllowed": False, "match": match})  # fmt: skip
    if draw(st.booleans()) and len(rows) > 1:
        rows.insert(draw(st.integers(0, len(rows))), copy.deepcopy(rows[0]))
    return {"shadow": {"rows": rows}}


@settings(max_examples=300, deadline=None)
@given(_layouts())
def test_the_kinds_on_columns_are_the_rows_kinds(snap: dict[str, Any]) -> None:
    """What verify counts the portal's totals and the rules on is the rows' own kinds, in the
    same order."""
    from compliance_bake.report.models import ShadowRow
    from compliance_bake.report.row_kinds import row_kinds

    found = shadow_columns(snap)
    if found is None:  # a row off its type (a state 1, a decision 1)
        with pytest.raises(msgspec.ValidationError):
            msgspec.convert(snap["shadow"]["rows"], list[ShadowRow])
        return
    rows = [ShadowRow(*(r[k] for k in list(r)[:6])) for r in snap["shadow"]["rows"]]
    assert list(found.kinds.items()) == list(row_kinds(rows).items())
