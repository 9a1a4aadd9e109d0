"""Every rule of verify/rules/: a baked snapshot edited and correctly re-signed with the right
secret (digests, integrity checks, both HMACs) still fails `verify`, exit 1, naming the rule.

The re-signing itself is shown to be correct: an untouched snapshot re-signed the same way, and
re-serialised with other whitespace and key order, verifies.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from compliance_bake.inputs.jsonio import loads_strict
from compliance_bake.report import layout
from compliance_bake.verify.rules import RULES
from tests._resign import resign
from tests.conftest import SECRET, bake_deep_demo, invoke

Edit = Callable[[dict[str, Any]], None]


@pytest.fixture(scope="module")
def deep_snapshot(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A demo bake with the ZIP-window audit (module-wide: every test edits a copy)."""
    out = bake_deep_demo(tmp_path_factory.mktemp("deep") / "out")
    doc: dict[str, Any] = loads_strict((out / layout.API_FILE).read_bytes())
    return doc


def _write_messy(snap: dict[str, Any], path: Path) -> Path:
    """Other whitespace, other key order: what another publisher might serve."""
    path.write_text(json.dumps(snap, sort_keys=True, separators=(" ,", ":  ")), encoding="utf-8")
    return path


def _verify(path: Path, *extra: str) -> tuple[int, str]:
    run = invoke("verify", str(path), *extra)
    return run.exit_code, run.output


def _rows(snap: dict[str, Any]) -> list[dict[str, Any]]:
    return snap["shadow"]["rows"]  # type: ignore[no-any-return]


def _recount(snap: dict[str, Any]) -> None:
    rows = _rows(snap)
    allow = sum(r["realAllowed"] for r in rows)
    mismatches = sum(not r["match"] for r in rows)
    snap["shadow"]["summary"] = {
        "allow": allow,
        "block": len(rows) - allow,
        "mismatches": mismatches,
    }


def _set_row(index: int, **fields: Any) -> Edit:
    def edit(snap: dict[str, Any]) -> None:
        row = _rows(snap)[index]
        row.update(fields)
        row.pop("reason", None)
        if not row["realAllowed"]:
            row["reason"] = f"Partner not licensed in {row['state']}"
        row["match"] = row["realAllowed"] is row["shadowAllowed"]
        _recount(snap)

    return edit


def _drop_row(snap: dict[str, Any]) -> None:
    del _rows(snap)[-1]
    _recount(snap)


def _dup_row(snap: dict[str, Any]) -> None:
    _rows(snap).append(copy.deepcopy(_rows(snap)[0]))
    _recount(snap)


def _feature(name: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def find(snap: dict[str, Any]) -> dict[str, Any]:
        rows = snap["enhancements"]["rows"]
        return next(r for r in rows if r["feature"] == name)  # type: ignore[no-any-return]

    return find


def _both_states(feature: str, **fields: Any) -> Edit:
    """expectedState rewritten to match a (broken) actual: the row still says match true."""

    def edit(snap: dict[str, Any]) -> None:
        row = _feature(feature)(snap)
        row["expectedState"].update(fields)
        row["actualState"].update(fields)

    return edit


def _drop_feature(snap: dict[str, Any]) -> None:
    board = snap["enhancements"]
    board["rows"].pop()
    board["passed"] = board["total"] = len(board["rows"])


def _dup_feature(snap: dict[str, Any]) -> None:
    board = snap["enhancements"]
    board["rows"][-1] = copy.deepcopy(board["rows"][0])


def _geo(change: Callable[[list[dict[str, Any]]], None]) -> Edit:
    return lambda snap: change(snap["geo"]["partners"])


def _stranger(profiles: list[dict[str, Any]]) -> None:
    profiles.append({**profiles[0], "nodeId": "node-stranger-99"})


def _window(snap: dict[str, Any]) -> None:
    window = snap["deepAudit"]["zipWindow"]
    window["days"] = 30
    window["label"] = window["label"].replace("90d", "30d")
    snap["deepAudit"]["command"] = snap["deepAudit"]["command"].replace("90", "30")
    snap["links"]["deepAudit"] = snap["deepAudit"]["command"]


def _timestamp(snap: dict[str, Any]) -> None:
    snap["generatedAt"] = "2026-13-45T29:61:61.000Z"


def _blank_runtime(snap: dict[str, Any]) -> None:
    snap["shadow"]["proof"]["bunVersion"] = snap["integrity"]["proof"]["bunVersion"] = " "


def _secret_in_proton(snap: dict[str, Any]) -> None:
    snap["proton"]["reportSigning"] += f" (it is {SECRET})"


def _shrink_health(snap: dict[str, Any]) -> None:
    row = _feature("health.states")(snap)
    row["expectedState"]["states"] = row["actualState"]["states"] = ["MA"]


def _passed_wrong(snap: dict[str, Any]) -> None:
    snap["enhancements"]["passed"] = 7


def _match_wrong(snap: dict[str, Any]) -> None:
    _rows(snap)[0]["match"] = False  # real and shadow agree, yet the row claims a mismatch
    _recount(snap)


def _summary_wrong(snap: dict[str, Any]) -> None:
    snap["shadow"]["summary"]["allow"] += 1


def _board_match_wrong(snap: dict[str, Any]) -> None:
    _feature("runtime.escapeHTML")(snap)["actualState"]["rawUnsafe"] = True


def _links_wrong(snap: dict[str, Any]) -> None:
    snap["links"]["deepAudit"] = "compliance-bake audit deep --plays elsewhere.csv --days 90"


def _not_ok(snap: dict[str, Any]) -> None:
    snap["ok"] = False


# (rule id, case name, edit, re-derive the integrity checks when re-signing)
CASES: list[tuple[str, str, Edit, bool]] = [
    ("shadow-coverage", "row-removed", _drop_row, True),
    ("shadow-coverage", "row-duplicated", _dup_row, True),
    ("shadow-coverage", "row-for-unregulated-state", _set_row(0, state="CT"), True),
    ("shadow-coverage", "health-states-shrunk", _shrink_health, True),
    (
        "shadow-roles",
        "no-partner-in-neither",
        _set_row(3, licenseStatus="active", realAllowed=True, shadowAllowed=True),
        True,
    ),
    (
        "shadow-licence-decides",
        "active-both-false",
        _set_row(0, realAllowed=False, shadowAllowed=False),
        True,
    ),
    (
        "shadow-licence-decides",
        "null-both-true",
        _set_row(1, realAllowed=True, shadowAllowed=True),
        True,
    ),
    ("shadow-licence-status", "banana", _set_row(1, licenseStatus="banana"), True),
    (
        "shadow-disagreements",
        "other-state",
        lambda s: _rows(s)[1].update(reason="Partner not licensed in NJ"),
        True,
    ),
    ("shadow-reason", "allowed-with-reason", lambda s: _rows(s)[0].update(reason="x"), True),
    ("shadow-summary", "recount-wrong", _summary_wrong, False),
    ("shadow-licence-decides", "match-wrong", _match_wrong, True),
    ("board-features", "row-removed", _drop_feature, True),
    ("board-features", "feature-duplicated", _dup_feature, True),
    (
        "board-expected",
        "unlicensed-expects-allowed",
        _both_states("check.nj_unlicensed_block", allowed=True, status=200),
        True,
    ),
    (
        "board-expected",
        "prefix-len-4",
        _both_states("identity.agent_key_prefix", prefixLen=4),
        True,
    ),
    (
        "board-expected",
        "timing-varies",
        _both_states("identity.agent_key_prefix", timing="varies"),
        True,
    ),
    ("board-match", "match-claimed", _board_match_wrong, True),
    ("board-count", "passed-wrong", _passed_wrong, False),
    ("geo-profiles", "three-profiles", _geo(lambda p: p.pop()), True),
    ("geo-profiles", "duplicated", _geo(lambda p: p.append(dict(p[0]))), True),
    ("geo-profiles", "stranger", _geo(_stranger), True),
    ("deep-audit-window", "thirty-days", _window, True),
    ("links-deep-audit", "other-command", _links_wrong, True),
    ("timestamps", "month-13", _timestamp, True),
    ("snapshot-ok", "ok-false", _not_ok, True),
    ("runtime", "blank", _blank_runtime, True),
    ("secret-absent", "in-proton", _secret_in_proton, True),
    (
        "integrity-checks",
        "label-wrong",
        lambda s: s["integrity"]["checks"][0].update(label="Enhancements 8/9"),
        False,
    ),
]


def test_every_rule_has_a_case() -> None:
    assert {rule.id for rule, _ in RULES} == {case[0] for case in CASES}


def test_the_re_signing_is_correct(deep_snapshot: dict[str, Any], tmp_path: Path) -> None:
    snap = resign(copy.deepcopy(deep_snapshot), SECRET)
    assert snap == deep_snapshot
    code, output = _verify(_write_messy(snap, tmp_path / "snapshot.json"))
    assert code == 0, output
    assert "verified" in output and "authentic: yes" in output and "compliant: yes" in output


@pytest.mark.parametrize(
    ("rule_id", "edit", "recheck"), [pytest.param(r, e, c, id=f"{r}-{n}") for r, n, e, c in CASES]
)
def test_a_re_signed_edit_fails_naming_the_rule(
    deep_snapshot: dict[str, Any], tmp_path: Path, rule_id: str, edit: Edit, recheck: bool
) -> None:
    snap = copy.deepcopy(deep_snapshot)
    edit(snap)
    resign(snap, SECRET, recheck=recheck)
    code, output = _verify(_write_messy(snap, tmp_path / "snapshot.json"))
    assert code == 1, output
    assert f"rule {rule_id}:" in output
    assert "authentic: yes" in output  # the forgery is authentic; its meaning is not
    assert "verified" not in output.replace("verification failed", "")


def test_a_re_signed_edit_of_a_whole_out_folder_fails(baked: Path) -> None:
    snap = loads_strict((baked / layout.API_FILE).read_bytes())
    _set_row(0, realAllowed=False, shadowAllowed=False)(snap)
    resign(snap, SECRET)
    policy = loads_strict((baked / layout.POLICY_FILE).read_bytes())
    for name, data in layout.render_files(snap, policy=policy).items():
        (baked / name).write_bytes(data)
    code, output = _verify(baked)
    assert code == 1, output
    assert "rule shadow-licence-decides:" in output and "FAIL portal" not in output


def test_any_hmac_label_naming_the_secret_is_accepted(
    deep_snapshot: dict[str, Any], tmp_path: Path
) -> None:
    snap = copy.deepcopy(deep_snapshot)
    check = next(c for c in snap["integrity"]["checks"] if c["id"] == "hmac")
    check["label"] = "HMAC (sha3-256) with REPORT_SIGNING_SECRET, v2 wording"
    resign(snap, SECRET, recheck=False)
    code, output = _verify(_write_messy(snap, tmp_path / "snapshot.json"))
    assert code == 0, output
