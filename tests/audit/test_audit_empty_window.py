"""Nothing audited is no pass: with no play in the window (and none violating), `audit deep` and
`bake snapshot --deep-audit` end with exit 5 and say so, unless --allow-empty-window; the report
and the snapshot still hold the honest counts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compliance_bake.resources import demo_fixtures_dir
from tests._plays_helpers import play, write_plays
from tests.conftest import NOW, run_cli

LATER = "2027-11-22T04:06:00Z"  # a year after the demo plays: none in a 90-day window
PLAYS = str(demo_fixtures_dir() / "plays.csv")


def test_audit_of_plays_all_older_than_the_window_is_exit_5(tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = run_cli("audit", "deep", "--plays", PLAYS, "--now", LATER, "--out", str(out), "--json")
    assert done.returncode == 5, done.stderr
    summary = json.loads(done.stdout)
    assert summary["exitCode"] == 5 and summary["violations"] == 0
    assert summary["zipWindow"]["inWindowPlays"] == 0 and summary["zipWindow"]["totalPlays"] == 20
    assert "nothing audited" in done.stderr and "--allow-empty-window" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    written = json.loads((out / "audit" / "zip-window.json").read_text())
    assert written["deepAudit"]["zipWindow"]["totalPlays"] == 20


def test_a_header_only_plays_file_is_exit_5_and_allowed_is_exit_0(tmp_path: Path) -> None:
    plays = tmp_path / "plays.csv"
    plays.write_text("play_id,partner,state,zip,placed_at,enriched_at,wager_type,stake\n")
    base = ("audit", "deep", "--plays", str(plays), "--now", NOW, "--out", str(tmp_path / "o"))
    assert run_cli(*base).returncode == 5
    allowed = run_cli(*base, "--allow-empty-window")
    assert allowed.returncode == 0, allowed.stderr
    assert "nothing audited" not in allowed.stderr


def test_a_violation_outside_the_window_is_still_exit_1(tmp_path: Path) -> None:
    plays = write_plays(tmp_path, [play("p-1", zip="2108")], "csv")
    done = run_cli("audit", "deep", "--plays", str(plays), "--now", LATER,
                   "--out", str(tmp_path / "o"))  # fmt: skip
    assert done.returncode == 1, done.stderr


@pytest.mark.parametrize("allow", [False, True])
def test_bake_deep_audit_with_nothing_in_the_window(tmp_path: Path, allow: bool) -> None:
    out = tmp_path / "out"
    args = ["bake", "snapshot", "--deep-audit", PLAYS, "--now", LATER, "--out", str(out), "-q"]
    done = run_cli(*args, *(["--allow-empty-window"] if allow else []))
    assert done.returncode == (0 if allow else 5), done.stderr
    assert ("nothing audited" in done.stderr) is not allow
    snapshot = json.loads((out / "api" / "compliance.json").read_text())
    assert snapshot["deepAudit"]["zipWindow"]["inWindowPlays"] == 0
    assert snapshot["deepAudit"]["zipWindow"]["totalPlays"] == 20
