"""What help, footers and the README's exit-code table say is what the commands do: a default
names what the option takes, `--timeout` names what each command fetches, every footer lists
the crash code the CLI's one handler gives, the README's table puts a snapshot that does not
verify where `verify` puts it, a count agrees with its noun, and a Markdown date reads as one."""

from __future__ import annotations

import json
import re
from pathlib import Path

import click
import pytest

from compliance_bake.cli.main import cli
from tests.conftest import NOW, invoke

ROOT = Path(__file__).resolve().parents[2]


def _leaves(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found: list[tuple[str, ...]] = []
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            found += _leaves(command, (*prefix, name))
        else:
            found.append((*prefix, name))
    return found


def _help(*path: str) -> str:
    """The help as one line of words, whatever the wrapping."""
    return " ".join(invoke(*path, "--help", env={"COLUMNS": "200"}).output.split())


def _option_help(path: tuple[str, ...], option: str) -> str:
    """What --help prints for `option` of the command at `path`: its name and its text."""
    command: click.Command = cli
    for name in path:
        assert isinstance(command, click.Group)
        command = command.commands[name]
    with click.Context(command, info_name=path[-1]) as ctx:
        (record,) = [
            p.get_help_record(ctx) for p in command.params if option in getattr(p, "opts", ())
        ]
    assert record is not None
    return " ".join(" ".join(record).split())


def test_the_agent_key_file_default_is_not_a_variable_holding_a_file() -> None:
    """$COMPLIANCE_AGENT_KEY holds the key itself: the help says so, not that it is the file's
    default."""
    for path in (("bake", "snapshot"), ("check",)):
        text = _option_help(path, "--agent-key-file")
        assert "[default: $COMPLIANCE_AGENT_KEY]" not in text, text
        assert "$COMPLIANCE_AGENT_KEY" in text and "the key itself" in text, text


# What each command fetches with --timeout, and what it never fetches.
TIMEOUT_WORDS = {
    ("verify",): ("URL", ("--target", "OpenAPI")),
    ("diff",): ("URL", ("--target", "OpenAPI", "log file")),
    ("log", "show"): ("log", ("--target", "OpenAPI", "snapshot")),
    ("log", "verify"): ("log", ("--target", "OpenAPI", "snapshot")),
    ("witness",): ("log", ("--target", "OpenAPI", "snapshot")),
    ("target", "profile", "init"): ("OpenAPI", ("--target", "snapshot", "log")),
    ("check",): ("--target", ("OpenAPI", "snapshot", "log")),
    ("bake", "snapshot"): ("--target", ("OpenAPI",)),
}


@pytest.mark.parametrize("path", list(TIMEOUT_WORDS), ids=" ".join)
def test_timeout_help_names_what_this_command_fetches(path: tuple[str, ...]) -> None:
    said, never = TIMEOUT_WORDS[path]
    text = _option_help(path, "--timeout")
    assert said in text, text
    assert not [word for word in never if word in text], text


def test_every_command_that_has_a_timeout_is_listed_above() -> None:
    with_timeout = {p for p in _leaves(cli) if " --timeout SECONDS " in _help(*p)}
    assert with_timeout == set(TIMEOUT_WORDS)


@pytest.mark.parametrize("path", _leaves(cli), ids=" ".join)
def test_every_footer_lists_the_internal_error_code(path: tuple[str, ...]) -> None:
    """cli/main.py turns any crash of any command into exit 4: every footer says so."""
    footer = invoke(*path, "--help", env={"COLUMNS": "80"}).output.split("Exit codes:")[1]
    assert re.search(r"^ +4  internal error", footer, re.M), footer


def _readme_exit_rows() -> dict[int, str]:
    text = (ROOT / "README.md").read_text("utf-8").split("## Exit codes")[1].split("\n## ")[0]
    return {int(m[1]): m[2] for m in re.finditer(r"^\| ([0-9]) \| (.*) \|$", text, re.M)}


def test_readme_puts_a_snapshot_that_is_not_authentic_where_verify_puts_it(
    baked: Path,
) -> None:
    snapshot = baked / "api" / "compliance.json"
    doc = json.loads(snapshot.read_text("utf-8"))
    doc["generatedAt"] = "2026-11-22T04:07:00.000Z"  # a changed byte: the digests differ
    snapshot.write_text(json.dumps(doc), "utf-8")
    result = invoke("verify", str(baked))
    assert "authentic: NO" in result.output, result.output
    rows = _readme_exit_rows()
    assert "`verify`" in rows[result.exit_code] and "not authentic" in rows[result.exit_code]
    others = [code for code, row in rows.items() if code != result.exit_code]
    assert not [code for code in others if "a snapshot that is not authentic" in rows[code]]


def test_one_violation_is_one_violation(tmp_path: Path) -> None:
    plays = tmp_path / "plays.csv"
    lines = (ROOT / "fixtures" / "plays.csv").read_text("utf-8").splitlines()[:2]
    lines.append("pl-x,node-bay-01,MA,99999,2026-11-21T22:14:05Z,2026-11-21T22:14:06Z,x.y,5")
    plays.write_text("\n".join(lines) + "\n", "utf-8")
    result = invoke("audit", "deep", "--plays", str(plays), "--now", NOW, "--out", str(tmp_path))
    assert result.exit_code == 1
    assert result.output.rstrip().endswith("FAIL: zip-window, 1 violation"), result.output


def test_a_markdown_diff_shows_dates_as_written(tmp_path: Path) -> None:
    for name, now in (("old", NOW), ("new", "2026-11-23T05:07:08Z")):
        out = str(tmp_path / name)
        assert invoke("bake", "snapshot", "--out", out, "--now", now).exit_code == 0
    result = invoke("diff", str(tmp_path / "old"), str(tmp_path / "new"), "--markdown")
    assert result.exit_code == 0, result.output
    assert "generated 2026-11-22T04:06:00.000Z" in result.output, result.output
    assert "generated 2026-11-23T05:07:08.000Z" in result.output, result.output
