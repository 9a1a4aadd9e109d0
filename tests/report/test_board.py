"""Every feature of the board measures the running code: break what it checks and its row fails.

Each case breaks one thing the way a real regression would, bakes through the real CLI, and
expects that row's `match: false`, `passed < total`, the `enhancements` integrity check not ok
and exit code 1 -- with every other row still passing.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from markupsafe import Markup

from compliance_bake import bake
from compliance_bake.identity import keys
from compliance_bake.inputs.fixtures import load_fixtures
from compliance_bake.inputs.jsonio import loads_strict
from compliance_bake.inputs.models import (
    Decision,
    Fixtures,
    Health,
    LicenceRegistry,
    StatusPanel,
)
from compliance_bake.policy.model import PolicyRegistry
from compliance_bake.report import deepequal, escape
from compliance_bake.targets.engine import Engine
from tests.conftest import NOW, invoke


def _bake(tmp_path: Path) -> tuple[int, dict[str, Any]]:
    out = tmp_path / "out"
    result = invoke("bake", "snapshot", "--out", str(out), "--now", NOW)
    snapshot = loads_strict((out / "api" / "compliance.json").read_bytes())
    return result.exit_code, snapshot


def _unlicensed_allowed(self: Engine, partner: str, state: str, wager_type: str) -> Decision:
    return Decision(True, 200)


def _licensed_blocked(self: Engine, partner: str, state: str, wager_type: str) -> Decision:
    return Decision(False, 403, f"Partner not licensed in {state}")


def _health_drops_state(self: Engine) -> Health:
    return Health(ok=True, states=self.registry.regulated_states[:1])


def _status_without_limits(self: Engine, state: str, partner: str) -> StatusPanel:
    return StatusPanel(ok=True, state=state, license_status="active", has_limits=False)


def _scanning_lookup(self: keys.KeyStore, presented: str) -> keys.KeyRecord | None:
    found = None
    for prefix in self._index:  # the regression: every key is read on every lookup
        if presented.startswith(prefix):
            found = self._index.get(prefix)
    return found


def _lookup_comparing_with_eq(self: keys.KeyStore, presented: str) -> keys.KeyRecord | None:
    if not keys.well_formed(presented):
        return None
    record = self._index.get(presented[: keys.PREFIX_LEN])
    expected = keys._DUMMY_HASH if record is None else record.key_hash
    # the regression: `==` stops at the first differing byte
    if record is None or keys._hash(presented) != expected or record.revoked:
        return None
    return record


def _lookup_returning_early(self: keys.KeyStore, presented: str) -> keys.KeyRecord | None:
    if not keys.well_formed(presented):
        return None
    record = self._index.get(presented[: keys.PREFIX_LEN])
    if record is None:  # the regression: an unknown prefix answers at once, no dummy compare
        return None
    if not self.compare(keys._hash(presented), record.key_hash) or record.revoked:
        return None
    return record


def _states_reversed(folder: Path | str, wager_types: Sequence[str] = ()) -> Fixtures:
    """A loader regression: the states come out in another order than the file's."""
    loaded = load_fixtures(Path(folder))
    registry = LicenceRegistry(loaded.registry.states[::-1], loaded.registry.partners)
    policy = PolicyRegistry(registry, loaded.policy.limits, loaded.policy.facts)
    return replace(loaded, policy=policy)


def _bool_is_int(a: Any, b: Any) -> bool:
    if isinstance(a, bool | int) and isinstance(b, bool | int):
        return bool(a == b)
    return ORIGINAL_STRICT(a, b)


def _none_is_missing(a: Any, b: Any) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        a = {k: v for k, v in a.items() if v is not None}
        b = {k: v for k, v in b.items() if v is not None}
    return ORIGINAL_STRICT(a, b)


def _quote_left_raw(value: object) -> Markup:
    return Markup(str(ORIGINAL_ESCAPE(value)).replace("&#34;", '"'))


ORIGINAL_STRICT = deepequal.strict_equals
ORIGINAL_ESCAPE = escape.escape_html

Break = Callable[[pytest.MonkeyPatch], None]
BREAKS: dict[str, tuple[str, Break]] = {
    "health drops a regulated state": (
        "health.states",
        lambda mp: mp.setattr(Engine, "health", _health_drops_state),
    ),
    "engine blocks a licensed partner": (
        "check.ma_licensed_nba_totals",
        lambda mp: mp.setattr(Engine, "check", _licensed_blocked),
    ),
    "engine allows an unlicensed partner": (
        "check.nj_unlicensed_block",
        lambda mp: mp.setattr(Engine, "check", _unlicensed_allowed),
    ),
    "status panel loses its limits": (
        "status.ma_licensed_shape",
        lambda mp: mp.setattr(Engine, "status", _status_without_limits),
    ),
    "a 4-character key prefix": (
        "identity.agent_key_prefix",
        lambda mp: mp.setattr(keys, "PREFIX_LEN", 4),
    ),
    "a lookup that scans all keys": (
        "identity.agent_key_prefix",
        lambda mp: mp.setattr(keys.KeyStore, "lookup", _scanning_lookup),
    ),
    "the loader reorders the states, for engine and board alike": (
        "health.states",
        lambda mp: mp.setattr(bake, "read_registry", _states_reversed),
    ),
    "hashes compared with == in the lookup": (
        "identity.agent_key_prefix",
        lambda mp: mp.setattr(keys.KeyStore, "lookup", _lookup_comparing_with_eq),
    ),
    "the store's comparison seam defaults to ==": (
        "identity.agent_key_prefix",
        lambda mp: mp.setattr(keys.KeyStore.__init__, "__defaults__", (None, operator.eq)),
    ),
    "an unknown prefix returns early, no dummy comparison": (
        "identity.agent_key_prefix",
        lambda mp: mp.setattr(keys.KeyStore, "lookup", _lookup_returning_early),
    ),
    "the comparator treats True as 1": (
        "runtime.deepEquals.strict_vs_loose",
        lambda mp: mp.setattr(deepequal, "strict_equals", _bool_is_int),
    ),
    "the comparator treats None as missing": (
        "runtime.deepEquals.docs_matrix",
        lambda mp: mp.setattr(deepequal, "strict_equals", _none_is_missing),
    ),
    "the escape leaves a quote raw": (
        "runtime.escapeHTML",
        lambda mp: mp.setattr(escape, "escape_html", _quote_left_raw),
    ),
}


def test_demo_board_passes_eight_of_eight(tmp_path: Path) -> None:
    code, snapshot = _bake(tmp_path)
    board = snapshot["enhancements"]
    assert code == 0
    assert (board["passed"], board["total"]) == (8, 8)
    assert [r["feature"] for r in board["rows"]] == [
        "health.states",
        "check.ma_licensed_nba_totals",
        "check.nj_unlicensed_block",
        "status.ma_licensed_shape",
        "identity.agent_key_prefix",
        "runtime.deepEquals.strict_vs_loose",
        "runtime.deepEquals.docs_matrix",
        "runtime.escapeHTML",
    ]
    assert all(r["match"] for r in board["rows"])


@pytest.mark.parametrize("name", list(BREAKS))
def test_breaking_a_feature_fails_its_row(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    feature, apply = BREAKS[name]
    apply(monkeypatch)
    code, snapshot = _bake(tmp_path)
    rows = {r["feature"]: r for r in snapshot["enhancements"]["rows"]}
    assert rows[feature]["match"] is False
    assert rows[feature]["actualState"] != rows[feature]["expectedState"]
    board = snapshot["enhancements"]
    assert board["passed"] < board["total"]
    checks = {c["id"]: c for c in snapshot["integrity"]["checks"]}
    assert checks["enhancements"]["ok"] is False
    assert checks["enhancements"]["label"] == f"Enhancements {board['passed']}/{board['total']}"
    assert code == 1


def test_unlicensed_allowed_also_shows_in_the_shadow_matrix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(Engine, "check", _unlicensed_allowed)
    code, snapshot = _bake(tmp_path)
    shadow = snapshot["shadow"]
    assert shadow["summary"]["mismatches"] == 4
    assert {(r["state"], r["partner"]) for r in shadow["rows"] if not r["match"]} == {
        (r["state"], r["partner"]) for r in shadow["rows"] if r["licenseStatus"] is None
    }
    checks = {c["id"]: c for c in snapshot["integrity"]["checks"]}
    assert checks["shadow"] == {"id": "shadow", "ok": False, "label": "Shadow mismatches 4"}
    assert code == 1
