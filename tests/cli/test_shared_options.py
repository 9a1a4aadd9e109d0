"""Options every command shares are declared once (cli/options.py) and behave the same in each:
`--timeout` is a positive number of seconds wherever a command talks to a URL; `--out` and `--now`
have one name, type and default wherever they appear, and only their help says what they are for
in that command."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest

from compliance_bake.cli import options
from compliance_bake.cli.main import cli
from tests.conftest import invoke

PACKAGE = Path(__file__).resolve().parents[2] / "compliance_bake"

WITH_TIMEOUT = [
    ("bake", "snapshot"),
    ("check", "--partner", "p", "--state", "NJ"),
    ("target", "profile", "init", "--from-openapi", "x.json"),
    ("verify", "out"),
    ("log", "verify", "log", "--public-key", "k.pem"),
    ("witness", "log", "--log-key", "k.pem", "--state", "s.json"),
    ("diff", "a", "b"),
]


@pytest.mark.parametrize("command", WITH_TIMEOUT, ids=lambda c: " ".join(c[:2]))
@pytest.mark.parametrize("value", ["0", "-1", "soon"])
def test_timeout_is_a_positive_number_everywhere(command: tuple[str, ...], value: str) -> None:
    result = invoke(*command, "--timeout", value)
    assert result.exit_code == 2, result.output
    assert "--timeout" in result.output and "Traceback" not in result.output


# Each shared option, the commands that take it, and its one declaration (help aside).
SHARED = {
    "--timeout": (
        {
            "bake snapshot",
            "check",
            "target profile init",
            "verify",
            "log verify",
            "log show",
            "witness",
            "diff",
        },
        options.timeout_option(""),
    ),
    "--out": ({"bake snapshot", "audit deep", "serve"}, options.out_option("")),
    "--now": ({"bake snapshot", "audit deep", "witness"}, options.now_option("")),
}


def _leaves(group: click.Group, prefix: str = "") -> Iterator[tuple[str, click.Command]]:
    for name, command in group.commands.items():
        path = f"{prefix} {name}".strip()
        if isinstance(command, click.Group):
            yield from _leaves(command, path)
        else:
            yield path, command


def _shape(option: click.Parameter) -> dict[str, Any]:
    """Everything click knows of an option but its help."""
    info = option.to_info_dict()
    info.pop("help", None)
    return info | {"metavar": option.metavar, "show_default": getattr(option, "show_default", None)}


def _declared(decorator: Any) -> click.Parameter:
    command: click.Command = click.command()(decorator(lambda **_: None))
    return command.params[0]


@pytest.mark.parametrize("flag", sorted(SHARED))
def test_a_shared_option_is_the_one_declaration_in_every_command(flag: str) -> None:
    expected, decorator = SHARED[flag]
    one = _shape(_declared(decorator))
    found = {
        path: _shape(param)
        for path, command in _leaves(cli)
        for param in command.params
        if flag in param.opts
    }
    assert set(found) == expected
    assert {path: shape for path, shape in found.items() if shape != one} == {}


@pytest.mark.parametrize("flag", sorted(SHARED))
def test_a_shared_option_is_declared_once(flag: str) -> None:
    name = re.escape(flag)
    declared = [
        (path.relative_to(PACKAGE), line)
        for path in PACKAGE.rglob("*.py")
        for line in path.read_text("utf-8").splitlines()
        if re.search(rf"""^\s*["']{name}["'],?\s*$""", line)
        or re.search(rf"""(click\.option|Option)\(\s*\[?["']{name}["']""", line)
    ]
    assert [str(path) for path, _ in declared] == ["cli/options.py"], declared


WITH_REPORT = [
    ("bake", "snapshot"),
    ("audit", "deep"),
    ("verify",),
    ("diff",),
    ("log", "verify"),
    ("witness",),
]


@pytest.mark.parametrize("path", WITH_REPORT, ids=" ".join)
def test_every_command_that_checks_takes_the_one_report_option(path: tuple[str, ...]) -> None:
    """The same `--report` (one declaration, cli/reporters.report_option) on every command
    that gives a verdict; a bad FORMAT is refused the same way by each (exit 2)."""
    from compliance_bake.cli.main import cli
    from compliance_bake.cli.reporters import ReportSpec

    command = cli
    for name in path:
        command = command.commands[name]  # type: ignore[attr-defined]
    [option] = [p for p in command.params if "--report" in p.opts]
    assert isinstance(option.type, ReportSpec) and option.multiple
    result = invoke(*path, "--report", "yaml:-")
    assert result.exit_code == 2 and "is not FORMAT:PATH" in result.output, result.output
