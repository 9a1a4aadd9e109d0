"""The command line: help with examples everywhere, a light start-up, check, the exit codes."""

from __future__ import annotations

import json
import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from compliance_bake import __version__
from compliance_bake.cli.main import cli
from tests.conftest import diagnostics, invoke, run_cli


def _commands(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found: list[tuple[str, ...]] = [prefix]
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            found += _commands(command, (*prefix, name))
        else:
            found.append((*prefix, name))
    return found


ALL_COMMANDS = _commands(cli)


def test_the_documented_commands_exist() -> None:
    assert {("bake", "snapshot"), ("verify",), ("check",), ("secret", "mint")} <= set(ALL_COMMANDS)


@pytest.mark.parametrize("path", ALL_COMMANDS, ids=lambda p: " ".join(p) or "main")
@pytest.mark.parametrize("flag", ["-h", "--help"])
def test_every_command_has_help_with_an_example(path: tuple[str, ...], flag: str) -> None:
    result = invoke(*path, flag)
    assert result.exit_code == 0
    assert "Example" in result.output
    assert "compliance-bake " in result.output


@pytest.mark.parametrize("path", [p for p in ALL_COMMANDS if p and p[0] != "secret" and len(p) > 0])
def test_leaf_commands_document_exit_codes(path: tuple[str, ...]) -> None:
    command = cli
    for name in path:
        command = command.commands[name]  # type: ignore[attr-defined]
    if isinstance(command, click.Group):
        return
    assert "Exit codes" in invoke(*path, "--help").output


def test_version() -> None:
    result = invoke("--version")
    assert result.exit_code == 0 and __version__ in result.output


def test_help_imports_nothing_heavy() -> None:
    probe = (
        "import sys\n"
        "from compliance_bake.cli.main import main\n"
        "sys.argv = ['compliance-bake', '--help']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy = ['jsonschema', 'jsonschema_rs', 'jinja2', 'rich', 'zipcodes', 'rfc8785',"
        " 'orjson', 'duckdb', 'httpx', 'aiohttp']\n"
        "print(sorted(m for m in heavy if m in sys.modules), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.stderr.strip().splitlines()[-1] == "[]"


def test_check_allowed_and_blocked() -> None:
    allowed = invoke(
        "check",
        "--partner",
        "node-bay-01",
        "--state",
        "MA",
        "--wager-type",
        "basketball.totals",
        "--json",
    )
    assert allowed.exit_code == 0
    assert json.loads(allowed.stdout)["allowed"] is True
    assert json.loads(allowed.stdout)["status"] == 200
    blocked = invoke(
        "check",
        "--partner",
        "node-offshore-04",
        "--state",
        "nj",
        "--wager-type",
        "soccer.moneyline",
    )
    assert blocked.exit_code == 0
    assert "BLOCKED (403)" in blocked.stdout and "Partner not licensed in NJ" in blocked.stdout


def test_check_unknown_state_is_bad_input() -> None:
    result = invoke("check", "--partner", "node-bay-01", "--state", "ZZ", "--wager-type", "x.y")
    assert result.exit_code == 2
    assert (
        result.stderr.count("\n") == 1
        and "--state" in result.stderr
        and "Traceback" not in result.output
    )


def test_bake_json_summary(tmp_path: object) -> None:
    result = invoke(
        "bake", "snapshot", "--out", f"{tmp_path}/out", "--now", "2026-11-22T04:06:00Z", "--json"
    )
    summary = json.loads(result.stdout)
    assert result.exit_code == 0 and summary["ok"] is True and summary["exitCode"] == 0
    assert summary["enhancements"] == {"passed": 8, "total": 8, "failed": []}
    shadow = summary["shadow"]
    assert {k: shadow[k] for k in ("rows", "allow", "block", "mismatches")} == {
        "rows": 8,
        "allow": 4,
        "block": 4,
        "mismatches": 0,
    }
    assert shadow["sources"]["shadowAllowed"] == "licence registry"
    assert set(shadow["disagreements"].values()) == {0} and len(shadow["disagreements"]) == 6


def test_console_depth_is_recorded_and_limits_the_report(tmp_path: object) -> None:
    result = invoke("bake", "snapshot", "--out", f"{tmp_path}/out", "--console-depth", "1")
    assert result.exit_code == 0
    assert '"states": "…"' in result.stdout
    with open(f"{tmp_path}/out/api/compliance.json") as handle:
        snap = json.load(handle)
    assert snap["enhancements"]["consoleDepth"] == 1


def test_unexpected_errors_are_one_line_exit_4(
    monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    from compliance_bake.report import board

    def explode(*args: object) -> object:
        raise RuntimeError("boom")

    monkeypatch.setattr(board, "FEATURES", (explode,))
    result = invoke("bake", "snapshot", "--out", f"{tmp_path}/out")
    assert result.exit_code == 4
    assert diagnostics(result.stderr).count("\n") == 1 and "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["bake", "snapshot", "--console-depth", "0"], "--console-depth"),
        (["bake", "snapshot", "--no-such-option"], "--no-such-option"),
        (["frobnicate"], "frobnicate"),
        (["check", "--partner", "p", "--state", "MA"], "--wager-type"),
    ],
)
def test_usage_errors_are_one_line_through_the_console_script(
    args: list[str], fragment: str
) -> None:
    done = run_cli(*args)
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and fragment in lines[0] and "--help" in lines[0]


@pytest.mark.parametrize("path", ALL_COMMANDS, ids=lambda p: " ".join(p) or "main")
def test_help_wraps_at_spaces_only_and_summaries_fit(path: tuple[str, ...]) -> None:
    """Help at 80 columns never breaks a word at a hyphen and never truncates a command's summary:
    readers copy paths, option names and commands out of it."""
    text = CliRunner().invoke(cli, [*path, "--help"], terminal_width=80).output
    lines = text.splitlines()
    for line, following in zip(lines, lines[1:], strict=False):
        broken = line.rstrip().endswith("-") and line.rstrip()[-2:-1].isalnum()
        assert not (broken and following.strip()), f"hyphen break: {line!r} / {following!r}"
    if "Commands:" in text:
        listing = text.split("Commands:")[1].split("\n\n")[0]
        assert not [row for row in listing.splitlines() if row.endswith("...")], listing


def test_commands_that_check_nothing_do_not_promise_checks() -> None:
    for path in [
        ("keys", "mint"),
        ("keys", "list"),
        ("keys", "revoke"),
        ("secret", "mint"),
        ("serve",),
        ("signing-key", "mint"),
    ]:
        footer = invoke(*path, "--help").output.split("Exit codes:")[1]
        assert "0  done\n" in footer and "every check holds" not in footer, path


def test_check_asks_one_question_and_offers_no_concurrency() -> None:
    assert "--concurrency" not in invoke("check", "--help").output
    assert "--concurrency" in invoke("bake", "snapshot", "--help").output
