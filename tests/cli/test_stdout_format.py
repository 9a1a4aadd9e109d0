"""stdout carries one format: a report on `-` takes stdout whole (the tables go to stderr), two
reports on `-` or one with --json are refused before anything runs (exit 2, the fix named)."""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree

import pytest

from tests.conftest import NOW, run_cli

DEMO_PLAYS = Path(__file__).resolve().parents[2] / "fixtures" / "plays.csv"


@pytest.mark.parametrize(
    "args",
    [
        ("bake", "snapshot", "--now", NOW, "--report", "junit:-", "--report", "github:-"),
        ("audit", "deep", "--plays", str(DEMO_PLAYS), "--now", NOW,
         "--report", "json:-", "--report", "markdown:-"),
        ("verify", "out", "--report", "github:-", "--report", "github:-"),
    ],
    ids=["bake", "audit", "verify"],
)  # fmt: skip
def test_two_reports_on_stdout_are_refused(args: tuple[str, ...]) -> None:
    result = run_cli(*args)
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert "both write to stdout, which carries one format" in line
    assert "(fix: write all but one to a file, e.g. --report " in line
    assert not Path("out").exists()  # refused before anything ran


@pytest.mark.parametrize("command", [("bake", "snapshot", "--now", NOW), ("verify", "out")])
def test_a_report_on_stdout_with_json_is_refused(command: tuple[str, ...]) -> None:
    result = run_cli(*command, "--json", "--report", "junit:-")
    assert result.returncode == 2
    error = json.loads(result.stdout)  # --json's error object, alone on stdout
    assert (
        error["code"] == 2
        and "--json and --report junit:- both write to stdout" in (error["message"])
    )
    assert "--report junit:PATH" in error["fix"]
    assert not Path("out").exists()


def test_junit_on_stdout_is_the_whole_stdout(tmp_path: Path) -> None:
    out = str(tmp_path / "out")
    result = run_cli("bake", "snapshot", "--out", out, "--now", NOW, "--report", "junit:-")
    assert result.returncode == 0, result.stderr
    root = ElementTree.fromstring(result.stdout)  # nothing before or after the document
    assert root.tag == "testsuites" and root.get("failures") == "0"
    assert "Self-checks " in result.stderr and "PASS: every check holds" in result.stderr

    verified = run_cli("verify", out, "--report", "json:-")
    assert verified.returncode == 0, verified.stderr
    assert json.loads(verified.stdout)["verdict"] == "PASS: verified"
    assert "checks hold" in verified.stderr


def test_markdown_on_stdout_from_the_audit(tmp_path: Path) -> None:
    result = run_cli("audit", "deep", "--plays", str(DEMO_PLAYS), "--now", NOW,
                     "--out", str(tmp_path / "out"), "--report", "markdown:-")  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("## ✅ compliance-bake audit deep\n")
    assert "Violations by reason" in result.stderr and "Violations" not in result.stdout


def test_without_a_report_on_stdout_the_tables_stay_there(tmp_path: Path) -> None:
    result = run_cli("bake", "snapshot", "--out", str(tmp_path / "out"), "--now", NOW,
                     "--report", f"junit:{tmp_path / 'junit.xml'}")  # fmt: skip
    assert result.returncode == 0
    assert "Self-checks " in result.stdout and "Self-checks " not in result.stderr
