"""Nothing audited is no pass: with no play in the window (and none violating), `audit deep` and
`bake snapshot --deep-audit` end with exit 5 and say so, unless --allow-empty-window; the report
and the snapshot still hold the honest counts."""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree

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


COMMANDS = {
    "audit": ["audit", "deep", "--plays", PLAYS],
    "bake": ["bake", "snapshot", "--deep-audit", PLAYS],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_report_of_an_empty_window_says_exit_5_and_no_pass(
    tmp_path: Path, command: str
) -> None:
    """The exit-5 decision is made once, before anything is written: `--json` and every
    `--report` format say it, none of them a pass (a bake wrote PASS reports and exitCode 0)."""
    out, reports = tmp_path / "out", tmp_path / "reports"
    reports.mkdir()
    kinds = {"json": "r.json", "junit": "r.xml", "github": "r.txt", "markdown": "r.md"}
    args = [*COMMANDS[command], "--now", LATER, "--out", str(out), "--json"]
    args += [a for kind, name in kinds.items() for a in ("--report", f"{kind}:{reports / name}")]
    done = run_cli(*args)
    assert done.returncode == 5, done.stderr
    summary = json.loads(done.stdout)
    assert summary["exitCode"] == 5 and summary["ok"] is False
    report = json.loads((reports / "r.json").read_text())
    assert report["exitCode"] == 5 and report["ok"] is False
    failed = [c["name"] for s in report["suites"] for c in s["cases"] if not c["ok"]]
    assert failed == ["plays-in-window"]
    junit = ElementTree.parse(reports / "r.xml").getroot()
    assert junit.get("failures") == "1"
    failure = junit.find(".//testcase[@name='plays-in-window']/failure")
    assert failure is not None and "nothing audited" in failure.get("message", "")
    github = (reports / "r.txt").read_text()
    assert "::notice" not in github and "::error" in github and "NOTHING AUDITED (exit 5)" in github
    markdown = (reports / "r.md").read_text()
    assert "✅" not in markdown and "(exit 5)" in markdown


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_an_allowed_empty_window_reports_a_pass(tmp_path: Path, command: str) -> None:
    report = tmp_path / "r.json"
    args = [*COMMANDS[command], "--now", LATER, "--out", str(tmp_path / "out"), "--json"]
    done = run_cli(*args, "--allow-empty-window", "--report", f"json:{report}")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["ok"] is True
    assert json.loads(report.read_text())["exitCode"] == 0


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_the_nothing_audited_line_escapes_the_plays_source(tmp_path: Path, command: str) -> None:
    """The line names the plays source as the operator gave it: a control sequence in its name
    (here an OSC that retitles a terminal) is shown escaped, never sent to the terminal."""
    plays = tmp_path / "plays\x1b]0;owned\x07.csv"
    plays.write_bytes(Path(PLAYS).read_bytes())
    args = [c if c != PLAYS else str(plays) for c in COMMANDS[command]]
    done = run_cli(*args, "--now", LATER, "--out", str(tmp_path / "out"), "-q")
    assert done.returncode == 5, done.stderr
    assert "nothing audited" in done.stderr and "\\x1b]0;owned\\x07" in done.stderr
    assert "\x1b" not in done.stderr and "\x07" not in done.stderr
