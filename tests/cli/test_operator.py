"""The operator's view: the failure summary, 80 columns, phases, reporters, JSON errors."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import click
import jsonschema
import pytest
from junitparser import Failure, JUnitXml

from compliance_bake.cli.main import cli
from compliance_bake.inputs.models import Decision
from compliance_bake.resources import schemas_dir
from compliance_bake.targets.engine import Engine
from tests.conftest import NOW, invoke, run_cli

DEMO_PLAYS = Path(__file__).resolve().parents[2] / "fixtures" / "plays.csv"
PYTHON_REPRS = re.compile(r"\b(True|False|None)\b")


def _unlicensed_allowed(self: Engine, partner: str, state: str, wager_type: str) -> Decision:
    return Decision(True, 200)


def _commands(group: click.Command, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = [path]
    if isinstance(group, click.Group):
        for name, command in group.commands.items():
            found += _commands(command, (*path, name))
    return found


def _long_lines(text: str, limit: int = 80) -> list[str]:
    return [line for line in text.splitlines() if len(line) > limit]


@pytest.mark.parametrize("path", _commands(cli), ids=lambda p: " ".join(p) or "group")
def test_every_help_fits_80_columns(path: tuple[str, ...]) -> None:
    result = invoke(*path, "--help", env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert _long_lines(result.output) == []
    command = cli
    for name in path:
        command = command.commands[name]  # type: ignore[attr-defined]
    if not isinstance(command, click.Group) or not path:  # the commands and the group
        assert "Exit codes" in result.output
    assert PYTHON_REPRS.search(result.output) is None


def test_the_walk_finds_every_command() -> None:
    names = {" ".join(p) for p in _commands(cli)}
    assert {"bake snapshot", "audit deep", "verify", "check", "serve", "secret mint"} <= names


def test_footers_list_only_the_codes_a_command_gives() -> None:
    check = invoke("check", "--help", env={"COLUMNS": "80"}).output
    assert "  1  " not in check.split("Exit codes")[1]
    assert "  3  " in check.split("Exit codes")[1]
    for path in (("secret", "mint"), ("signing-key", "mint"), ("keys", "list"), ("serve",)):
        footer = invoke(*path, "--help", env={"COLUMNS": "80"}).output.split("Exit codes")[1]
        assert "  1  " not in footer and "  3  " not in footer, path
    bake = invoke("bake", "snapshot", "--help", env={"COLUMNS": "80"}).output
    assert "  1  " in bake.split("Exit codes")[1]


def test_audit_help_names_its_own_out_and_clock() -> None:
    text = " ".join(invoke("audit", "deep", "--help", env={"COLUMNS": "80"}).output.split())
    assert "audit report" in text and "audit's clock" in text
    assert "portal page" not in text and "bake's clock" not in text


def test_demo_bake_fits_80_columns() -> None:
    """`make demo`'s bake, run (as it is) from a checkout with relative paths."""
    Path("fixtures").mkdir()
    shutil.copy(DEMO_PLAYS, "fixtures/plays.csv")
    args = ("bake", "snapshot", "--now", NOW, "--deep-audit", "fixtures/plays.csv")
    result = invoke(*args, env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    # a command is the one line that may pass 80 columns: wrapped, it breaks when pasted
    commands = [line for line in result.output.splitlines() if "compliance-bake audit" in line]
    assert len(commands) == 1 and "--days 90" in commands[0]
    assert _long_lines(result.output.replace(commands[0], "")) == []
    assert result.output.rstrip().endswith("PASS: every check holds")
    assert "short summary" not in result.output
    assert PYTHON_REPRS.search(result.output) is None


def test_a_failing_bake_ends_with_a_short_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(Engine, "check", _unlicensed_allowed)
    result = invoke("bake", "snapshot", "--out", str(tmp_path / "out"), "--now", NOW)
    assert result.exit_code == 1
    summary = " ".join(result.output.split("short summary")[1].split())
    assert "FAILED board check.nj_unlicensed_block: 2 fields differ" in summary
    assert "- $.allowed: expected false, actual true - $.status: expected 403" in summary
    assert "FAILED shadow MA: 2 disagreeing" in summary
    assert (
        "- allowed without an active licence: "
        "MA node-shore-02: real allow, shadow block (licence none) at "
    ) in summary
    assert "FAILED integrity shadow: Shadow mismatches 4" in summary
    last = result.output.rstrip().splitlines()[-1]
    assert last == "FAIL: enhancements, shadow, allowed without an active licence"
    assert PYTHON_REPRS.search(result.output) is None
    # A row whose expected and actual agree shows its state once.
    assert result.output.count("expected {") == 1  # only the failing row shows both


def test_a_failing_deep_audit_lists_violations_by_reason(tmp_path: Path) -> None:
    plays = tmp_path / "plays.csv"
    plays.write_text(
        "play_id,partner,state,zip,placed_at,enriched_at,wager_type,stake\n"
        "p1,node-bay-01,MA,07102,2026-11-01T00:00:00Z,2026-11-01T00:00:00Z,x,1\n"
    )
    out = str(tmp_path / "out")
    baked = invoke("bake", "snapshot", "--out", out, "--now", NOW, "--deep-audit", str(plays))
    assert baked.exit_code == 1
    assert "FAILED zip-window zip-in-other-state: 1 play" in baked.output
    assert "zip-window" in baked.output.splitlines()[-1]
    audited = invoke("audit", "deep", "--plays", str(plays), "--now", NOW, "--out", out)
    assert audited.exit_code == 1
    assert "FAILED zip-window zip-in-other-state: 1 play" in audited.output
    assert audited.output.rstrip().splitlines()[-1] == "FAIL: zip-window, 1 violations"


def test_a_failing_verify_ends_with_a_short_summary(baked: Path) -> None:
    (baked / "portal" / "compliance" / "index.html").write_text("<p>edited</p>")
    result = invoke("verify", str(baked))
    assert result.exit_code == 1
    summary = result.output.split("short summary: 1 failed")[1]
    assert "FAIL portal/compliance/index.html: portal page differs" in summary
    assert result.output.count("portal page differs") == 1  # each failure once
    assert result.output.rstrip().splitlines()[-1].startswith("FAIL: not authentic: 1 of ")


def test_phase_lines_without_a_terminal(tmp_path: Path) -> None:
    out = str(tmp_path / "out")
    baked = run_cli("bake", "snapshot", "--out", out, "--now", NOW)
    assert baked.returncode == 0, baked.stderr
    phases = re.findall(r"^compliance-bake: bake: (\w+) [\d,.]+ s$", baked.stderr, re.M)
    assert phases == ["load", "matrix", "sign", "validate", "write"]
    assert re.search(r"^compliance-bake: bake: done in [\d,.]+ s$", baked.stderr, re.M)
    verified = run_cli("verify", out)
    found = re.findall(r"^compliance-bake: verify: (\w+) [\d,.]+ s$", verified.stderr, re.M)
    assert found == ["read", "digests", "rules"]
    quiet = run_cli("bake", "snapshot", "--out", out, "--now", NOW, "--quiet")
    assert quiet.returncode == 0 and quiet.stderr == ""
    as_json = run_cli("verify", out, "--json")
    assert as_json.stderr == ""


def test_thousands_separators() -> None:
    from compliance_bake.cli.terminal import count

    assert count(500000) == "500,000" and count(12) == "12"


def test_json_and_junit_and_github_reports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Engine, "check", _unlicensed_allowed)
    summary, junit = tmp_path / "r" / "summary.json", tmp_path / "r" / "junit.xml"
    result = invoke(
        "bake", "snapshot", "--out", str(tmp_path / "out"), "--now", NOW,
        "--deep-audit", str(DEMO_PLAYS),
        "--report", f"json:{summary}", "--report", f"junit:{junit}", "--report", "github:-",
    )  # fmt: skip
    assert result.exit_code == 1
    document = json.loads(summary.read_text())
    schema = json.loads((schemas_dir() / "run-summary.schema.json").read_text())
    jsonschema.validate(document, schema)
    assert document["schemaVersion"] == 1 and document["tool"]["name"] == "compliance-bake"
    assert document["ok"] is False and document["exitCode"] == 1

    xml = JUnitXml.fromfile(str(junit))
    suites = {suite.name: suite for suite in xml}
    assert set(suites) == {"board", "integrity", "policy", "shadow", "zip-window"}
    assert suites["board"].tests == 8 and suites["board"].failures == 1
    failed = {
        case.name for case in suites["board"] if any(isinstance(r, Failure) for r in case.result)
    }
    assert failed == {"check.nj_unlicensed_block"}
    assert {case.name for case in suites["shadow"]} == {"MA", "NJ"}
    assert suites["shadow"].failures == 2
    assert suites["zip-window"].tests == 9 and suites["zip-window"].failures == 0
    assert suites["integrity"].failures == 2

    board = "::error title=board%3A check.nj_unlicensed_block::2 fields differ%0A- $.allowed"
    assert board in result.stdout
    assert "::error title=compliance-bake bake snapshot::FAIL" in result.stdout
    # github:- holds stdout: the tables went to stderr, and stdout is workflow commands only.
    assert "Self-check board" in result.stderr
    assert all(line.startswith("::") for line in result.stdout.splitlines())


def test_a_passing_verify_reports_to_junit_and_schema(baked: Path, tmp_path: Path) -> None:
    junit, summary = tmp_path / "v.xml", tmp_path / "v.json"
    reports = ("--report", f"junit:{junit}", "--report", f"json:{summary}")
    result = invoke("verify", str(baked), *reports)
    assert result.exit_code == 0
    (suite,) = list(JUnitXml.fromfile(str(junit)))
    assert suite.name == "verify" and suite.failures == 0 and suite.tests > 10
    schema = json.loads((schemas_dir() / "run-summary.schema.json").read_text())
    jsonschema.validate(json.loads(summary.read_text()), schema)


def test_a_bad_report_spec_is_usage() -> None:
    result = run_cli("verify", "--report", "xml:x")
    assert result.returncode == 2 and "FORMAT:PATH" in result.stderr


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (("bake", "snapshot", "--now", "yesterday", "--json"), 2),
        (("verify", "no-such-folder", "--json"), 2),
        (("check", "--json", "--partner", "p", "--state", "ZZ", "--wager-type", "w"), 2),
        (("bake", "snapshot", "--json", "--target", "http://127.0.0.1:9", "--retries", "0"), 3),
        (("bake", "snapshot", "--json", "--console-depth", "99"), 2),
        (("bake", "snapshot", "--no-such-option", "--json"), 2),
    ],
)
def test_json_errors_are_an_object_on_stdout(args: tuple[str, ...], code: int) -> None:
    result = run_cli(*args, env=None)
    assert result.returncode == code
    error = json.loads(result.stdout)
    assert set(error) == {"code", "message", "fix"} and error["code"] == code
    assert error["message"] and error["fix"]
    assert result.stderr.startswith("compliance-bake: error: ")


def test_control_characters_are_escaped(fixtures_copy: Path) -> None:
    result = invoke("check", "--partner", "\x1b]0;pwned\x07x", "--state", "MA",
                    "--wager-type", "a\x1b[31mb", "--fixtures", str(fixtures_copy))  # fmt: skip
    assert "\x1b" not in result.output and "\x07" not in result.output
    assert "\\x1b]0;pwned\\x07x" in result.output


def test_check_flags_a_partner_not_in_the_fixtures() -> None:
    result = run_cli("check", "--partner", "node-nobody", "--state", "MA", "--wager-type", "x")
    assert result.returncode == 0
    assert "not in the fixtures" in result.stderr
    known = run_cli("check", "--partner", "node-bay-01", "--state", "MA", "--wager-type", "x")
    assert "not in the fixtures" not in known.stderr
    as_json = run_cli("check", "--json", "--partner", "node-nobody", "--state", "MA",
                      "--wager-type", "x")  # fmt: skip
    assert json.loads(as_json.stdout)["knownPartner"] is False


def test_the_missing_secret_error_names_where_it_looked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("REPORT_SIGNING_SECRET")
    result = invoke("bake", "snapshot", "--out", str(tmp_path / "out"), "--now", NOW)
    assert result.exit_code == 2
    line = " ".join(result.output.split())
    assert "$REPORT_SIGNING_SECRET (unset)" in line and "--secret-file (not given)" in line
    assert str(Path.cwd() / ".compliance-bake" / "report-signing.secret") in line
    minted = invoke("secret", "mint")
    assert f"find it when run in {Path.cwd()}" in " ".join(minted.output.split())


def test_a_long_phase_says_it_is_still_running(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import time

    from compliance_bake.cli import phases as phase_lines

    monkeypatch.setattr(phase_lines, "HEARTBEAT", 0.05)
    lines = phase_lines.PhaseLines("verify", enabled=True)
    lines("digests")
    seen = ""
    deadline = time.monotonic() + 30  # generous: only waits for the first heartbeat
    while "still running" not in seen and time.monotonic() < deadline:
        time.sleep(0.05)
        seen += capsys.readouterr().err
    lines.done()
    seen += capsys.readouterr().err
    assert re.search(r"^compliance-bake: verify: digests still running, [\d,]+ s$", seen, re.M)
    assert re.search(r"^compliance-bake: verify: digests [\d,.]+ s$", seen, re.M)
    assert seen.rstrip().splitlines()[-1].startswith("compliance-bake: verify: done in ")


def test_a_terminal_shows_one_bar_the_running_phase_counts_in_its_own_row() -> None:
    """On a terminal the matrix's count fills the phase's own row: one bar, never a finished bar
    beside a live spinner."""
    import io

    from rich.console import Console
    from rich.progress import Progress

    from compliance_bake.cli import phases as phase_lines

    console = Console(file=io.StringIO(), force_terminal=True, width=80)
    with Progress(console=console, transient=True) as live:
        lines = phase_lines.PhaseLines("bake", enabled=True, console=live.console, live=live)
        lines("load")
        lines("matrix")
        lines.begin("matrix", 10)
        lines.advance(10)
        lines.end()
        lines("sign")
        lines.done()
        assert len(live.tasks) == 1
        assert live.tasks[0].description == "sign" and live.tasks[0].total is None


def test_tables_end_a_cell_in_an_ellipsis_never_split_a_token(tmp_path: Path) -> None:
    """At 60 columns a reason or a play id too wide for its cell ends in …; no line holds a
    piece of a token that the next line finishes."""
    plays = tmp_path / "plays.csv"
    plays.write_text(
        "play_id,partner,state,zip,placed_at,enriched_at,wager_type,stake\n"
        "play-with-a-rather-long-identifier-0001,node-offshore-04,NJ,07102,"
        "2026-11-01T00:00:00Z,2026-11-01T00:00:00Z,x,1\n"
    )
    out = str(tmp_path / "out")
    audited = invoke(
        "audit", "deep", "--plays", str(plays), "--now", NOW, "--out", out, env={"COLUMNS": "60"}
    )
    table = audited.output.split("First violations")[1].split("Wrote")[0]
    rows = [line for line in table.splitlines() if line.startswith("│")]
    cells = [cell.strip() for row in rows for cell in row.strip("│").split("│")]
    assert cells, table
    whole = {
        "partner-not-licensed",
        "play-with-a-rather-long-identifier-0001",
        "node-offshore-04",
        "NJ",
        "07102",
        "2026-11-01T00:00:00Z",
        "",
    }
    assert [cell for cell in cells if cell not in whole and not cell.endswith("…")] == [], table
