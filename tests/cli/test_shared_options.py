"""Options every command shares are declared once (cli/options.py) and behave the same in each:
`--timeout` is a positive number of seconds wherever a command talks to a URL."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

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


def test_timeout_is_declared_once() -> None:
    declared = [
        (path.relative_to(PACKAGE), line)
        for path in PACKAGE.rglob("*.py")
        for line in path.read_text("utf-8").splitlines()
        if re.search(r"""^\s*["']--timeout["'],?\s*$""", line)
        or re.search(r"""click\.option\(\s*["']--timeout["']""", line)
    ]
    assert len(declared) == 1, declared


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
