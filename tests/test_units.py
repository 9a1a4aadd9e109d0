"""The small parts on their own: strict deep equality, agent keys, the engine, the clock, JSON."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import pytest

from compliance_bake.clock import iso_millis, resolve_now
from compliance_bake.errors import InputError
from compliance_bake.identity import keys
from compliance_bake.inputs.jsonio import StrictJSONError, loads_strict
from compliance_bake.inputs.models import LicenceRegistry, Partner, StateRules
from compliance_bake.report.deepequal import DOCS_MATRIX, HOLE, loose_equals, strict_equals
from compliance_bake.targets.engine import Engine


@dataclass
class _Box:
    v: int


@pytest.mark.parametrize(
    ("left", "right"),
    [
        (True, 1),
        (1, 1.0),
        ({"a": None}, {}),
        ([1, 2], (1, 2)),
        (_Box(1), {"v": 1}),
        ([HOLE], [None]),
        ({"a": [True]}, {"a": [1]}),
    ],
)
def test_strict_tells_apart_what_loose_merges(left: object, right: object) -> None:
    assert loose_equals(left, right)
    assert not strict_equals(left, right)


@pytest.mark.parametrize(
    "value", [None, True, 0, 1.5, "x", [1, {"a": [None]}], {"k": (1, 2)}, _Box(3)]
)
def test_strict_equality_is_reflexive(value: object) -> None:
    assert strict_equals(value, value)


def test_docs_matrix_has_six_cases_all_strictly_unequal() -> None:
    assert len(DOCS_MATRIX) == 6
    for _name, left, right in DOCS_MATRIX:
        assert loose_equals(left, right) and not strict_equals(left, right)


def test_nan_equals_nan_strictly() -> None:
    assert strict_equals(float("nan"), float("nan"))


def test_key_store_stores_only_hashes_and_finds_by_prefix() -> None:
    store = keys.KeyStore()
    key = store.mint("ci")
    assert len(key) == keys.KEY_LEN and key[5] == "."
    record = store.lookup(key)
    assert record is not None and record.label == "ci"
    assert key not in repr(store._index) and key.encode() not in record.key_hash


@pytest.mark.parametrize(
    "mangle",
    [
        lambda k: "",
        lambda k: k[:5],
        lambda k: " " + k,
        lambda k: k.upper(),
        lambda k: k[:-1] + ("a" if k[-1] != "a" else "b"),
        lambda k: "zzzzz" + k[5:] if not k.startswith("zzzzz") else "yyyyy" + k[5:],
        lambda k: k[:-1] + "é",
        lambda k: k + "x",
    ],
)
def test_bad_keys_are_refused(mangle: object) -> None:
    store = keys.KeyStore()
    key = store.mint()
    assert store.lookup(mangle(key)) is None  # type: ignore[operator]


def test_revoked_key_is_refused() -> None:
    store = keys.KeyStore()
    key = store.mint()
    store.revoke(key[:5])
    assert store.lookup(key) is None


def _registry() -> LicenceRegistry:
    return LicenceRegistry(
        states=(
            StateRules("MA", "Massachusetts", ("basketball.totals",), {"maxStakeUsd": 1}),
            StateRules("NJ", "New Jersey", ("soccer.moneyline",), {}),
        ),
        partners=(Partner("p1", {"MA": "active", "NJ": "suspended"}), Partner("p2", {})),
    )


def test_engine_decisions() -> None:
    engine = Engine(_registry())
    assert engine.check("p1", "MA", "basketball.totals").as_json() == {
        "allowed": True,
        "status": 200,
    }
    assert engine.check("p1", "NJ", "soccer.moneyline").as_json() == {
        "allowed": False,
        "status": 403,
        "reason": "Partner not licensed in NJ",
    }
    assert engine.check("p2", "MA", "basketball.totals").status == 403
    assert (
        engine.check("p1", "MA", "soccer.moneyline").reason
        == "Wager type soccer.moneyline not permitted in MA"
    )
    assert engine.check("p1", "NY", "basketball.totals").status == 403
    assert engine.health().states == ("MA", "NJ")
    panel = engine.status("NJ", "p2")
    assert (panel.ok, panel.license_status, panel.has_limits) == (True, "unlicensed", False)


def test_clock() -> None:
    assert (
        iso_millis(datetime(2026, 11, 22, 4, 6, 0, 123456, tzinfo=UTC))
        == "2026-11-22T04:06:00.123Z"
    )
    assert iso_millis(resolve_now("2026-11-22T05:06:00+01:00")) == "2026-11-22T04:06:00.000Z"
    assert iso_millis(resolve_now(None, {"SOURCE_DATE_EPOCH": "0"})) == "1970-01-01T00:00:00.000Z"
    with pytest.raises(InputError):
        resolve_now("2026-11-22T04:06:00")  # no offset: ambiguous


@pytest.mark.parametrize(
    "text", ['{"a": 1, "a": 2}', '{"a": NaN}', "[Infinity]", '["\\ud800"]', '{"\\udfff": 1}', "{"]
)
def test_strict_json_refuses(text: str) -> None:
    with pytest.raises(StrictJSONError):
        loads_strict(text)
