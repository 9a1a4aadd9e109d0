"""What the help says is what the commands do: exit codes and where each stream goes."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import NOW, invoke, run_cli


def test_verify_help_lists_exit_3_for_a_url_source_that_fails() -> None:
    text = invoke("verify", "--help").output
    assert re.search(r"^\s+3\s+a URL SOURCE failed", text, re.M), text


def test_verify_of_an_unreachable_url_is_exit_3_as_its_help_says() -> None:
    # Port 9 on loopback: nothing listens (discard), the connection is refused at once.
    result = invoke("verify", "http://127.0.0.1:9/api/compliance.json", "--timeout", "5")
    assert result.exit_code == 3, result.output


def test_serve_help_says_stderr_for_the_access_log() -> None:
    # The behaviour itself: tests/attacks/test_attack_service.py reads the line from stderr.
    assert "Log every request on stderr" in invoke("serve", "--help").output


def test_bad_input_found_late_is_one_error_line_and_the_last(tmp_path: Path) -> None:
    """docs/terminal-output.md: the phase lines of finished phases may come before it."""
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    out = str(blocker / "out")  # only the write phase finds that it cannot be a folder
    loud = run_cli("bake", "snapshot", "--out", out, "--now", NOW)
    assert loud.returncode == 2
    lines = loud.stderr.splitlines()
    assert lines[-1].startswith("compliance-bake: error: cannot write ")
    assert all(re.fullmatch(r"compliance-bake: bake: \w+ [\d.]+ s", line) for line in lines[:-1])
    quiet = run_cli("bake", "snapshot", "--quiet", "--out", out, "--now", NOW)
    assert quiet.returncode == 2 and quiet.stderr.splitlines() == lines[-1:]
