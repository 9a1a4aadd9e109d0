"""Attacks by a service's texts on the places they are shown: `--explain` on a terminal, and
`diff --markdown` in a pull-request comment. Every text from outside goes through the escaper of
its output language (report/escape.py: `visible` for a terminal, `markdown` for Markdown, the
one Markdown escaper `--report markdown` uses too). Each attack has a control that shows the same
text does reach the output.

The service is a real HTTP server on 127.0.0.1 (tests/targets/fault_server.py).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from compliance_bake.cli import report_github
from compliance_bake.diff import render
from compliance_bake.report import escape
from tests.conftest import NOW, invoke
from tests.targets.fault_server import AGENT_KEY, FaultServer

KEY_ENV = {"COMPLIANCE_AGENT_KEY": AGENT_KEY}
CHECK = "/api/compliance/check"
QUESTION = ("--partner", "node-bay-01", "--state", "MA", "--wager-type", "basketball.totals")
FAST = ("--timeout", "10", "--retries", "0")
OSC_TITLE = "\x1b]0;PWNED\x07"
OSC_LINK = "\x1b]8;;https://evil.example/\x07click\x1b]8;;\x07"


@pytest.fixture
def server() -> Iterator[FaultServer]:
    with FaultServer() as running:
        yield running


def _explain(server: FaultServer) -> tuple[int, str]:
    args = ("check", "--target", server.url, "--explain", *FAST, *QUESTION)
    result = invoke(*args, env=KEY_ENV)
    return result.exit_code, result.stderr


def test_explain_shows_a_hostile_answer_s_headers_and_body_escaped(server: FaultServer) -> None:
    """`X-Note: ESC]0;PWNED BEL` and the body's OSC 8 link reach stderr escaped, never raw."""
    # Raw control characters make the body invalid JSON: the answer fails (exit 3) after
    # --explain has shown it.
    body = '{"allowed": true, "status": 200, "note": "' + OSC_LINK + '"}'
    server.fault(CHECK, "raw", body=body.encode(), headers={"X-Note": OSC_TITLE})
    code, stderr = _explain(server)
    assert code == 3, stderr
    for char in ("\x1b", "\x07"):
        assert char not in stderr
    assert "X-Note: \\x1b]0;PWNED\\x07" in stderr
    assert "\\x1b]8;;https://evil.example/\\x07click" in stderr


def test_control_explain_shows_a_plain_answer_as_it_came(server: FaultServer) -> None:
    body = json.dumps({"allowed": True, "status": 200, "note": "plain"})
    server.fault(CHECK, "raw", body=body.encode(), headers={"X-Note": "hello"})
    code, stderr = _explain(server)
    assert code == 0, stderr
    assert "X-Note: hello" in stderr and '"note": "plain"' in stderr
    assert "--- check: fields" in stderr and "allowed: body.allowed -> true" in stderr


HOSTILE_RUNTIME = (
    "FaultServer 1.0\n- verdict: **no change that fails (exit 0)**\n# Approved\n"
    "<img src=x onerror=alert(1)> [click here](https://evil.example/) ![i](https://evil.example/i)"
)


def _bake(server: FaultServer, out: Path, runtime: str | None = None) -> None:
    if runtime is not None:
        states = list(server.engine.health().states)
        body = json.dumps({"ok": True, "states": states, "runtime": runtime}).encode()
        server.fault("/health", "raw", body=body)
    args = ("bake", "snapshot", "--target", server.url, "--out", str(out), "--now", NOW)
    result = invoke(*args, *FAST, env=KEY_ENV)
    assert result.exit_code == 0, result.stderr


def _diff_markdown(server: FaultServer, tmp_path: Path, runtime: str) -> str:
    _bake(server, tmp_path / "old")
    _bake(server, tmp_path / "new", runtime)
    result = invoke("diff", str(tmp_path / "old"), str(tmp_path / "new"), "--markdown")
    assert result.exit_code == 0, result.stderr
    return result.stdout


def test_diff_markdown_shows_a_hostile_runtime_as_literal_text(
    server: FaultServer, tmp_path: Path
) -> None:
    """The runtime adds no second verdict line, heading, raw <img>, live link or image to the
    Markdown."""
    markdown = _diff_markdown(server, tmp_path, HOSTILE_RUNTIME)
    lines = markdown.splitlines()
    assert len([line for line in lines if line.startswith("- verdict:")]) == 1
    assert [line for line in lines if line.startswith("#")] == ["### Compliance snapshot diff"]
    # Markup starts only at a mark no backslash escapes.
    assert re.search(r"(?<!\\)<", markdown) is None
    assert re.search(r"(?<!\\)\]\(", markdown) is None
    assert "\\<img src=x onerror=alert\\(1\\)\\>" in markdown  # shown, as text
    assert "\\\\x0a\\- verdict\\: \\*\\*no change" in markdown


def test_control_diff_markdown_shows_a_changed_runtime(server: FaultServer, tmp_path: Path) -> None:
    markdown = _diff_markdown(server, tmp_path, "FaultServer 2.0")
    changed = [line for line in markdown.splitlines() if line.startswith("- runtime")]
    assert len(changed) == 1 and "FaultServer 2" in changed[0]


def test_one_markdown_escaper_serves_both_reports() -> None:
    """The step summary (--report markdown) and diff --markdown escape with one function."""
    assert report_github._md is escape.markdown and render._md is escape.markdown
    assert escape.markdown("[a](b)\n# c") == "\\[a\\]\\(b\\)\\\\x0a\\# c"
    assert escape.markdown("plain words") == "plain words"  # control: nothing to escape
