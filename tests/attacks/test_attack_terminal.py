"""Raw escape sequences never reach the terminal: every string the tool did not write (a server's
reason phrase, a target's error body, a fixture's key, a partner id, a key label, a path from the
command line) is shown with its control characters as visible escapes, on stdout and stderr, in
the text and the Markdown report alike.

The payloads are those a hostile source would send: an OSC that retitles the terminal, a CSI that
recolours or clears it, a carriage return that overwrites the line, a bidirectional override.
"""

from __future__ import annotations

import json
import re
import shutil
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from compliance_bake.identity.keyfile import mint_key
from compliance_bake.resources import demo_fixtures_dir
from tests.conftest import NOW, invoke, run_cli

OSC = "\x1b]0;owned\x07"
CSI = "\x1b[2J\x1b[31m"
RAW = ("\x1b", "\x07", "\x9b", "\r", "\u202e")


def assert_no_raw_control(text: str) -> None:
    found = [c for c in RAW if c in text]
    assert not found, f"raw control characters {found!r} in {text!r}"


@pytest.fixture
def canned() -> Iterator[tuple[str, list[bytes]]]:
    """A loopback server that answers every connection with the bytes the test puts in
    `answers[0]`: a status line and a body no real service would send."""
    answers: list[bytes] = [b""]
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(60)

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(10)
                try:
                    conn.recv(65536)
                    conn.sendall(answers[0])
                except OSError:
                    pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}", answers
    finally:
        listener.close()
        thread.join(timeout=10)


def _answer(status_line: str, body: bytes, content_type: str = "application/json") -> bytes:
    head = f"{status_line}\r\nContent-Type: {content_type}\r\nContent-Length: {len(body)}\r\n"
    return head.encode("latin-1") + b"Connection: close\r\n\r\n" + body


@pytest.mark.parametrize(
    ("status", "said"),
    [(503, "HTTP 503 (after 4 attempts)"), (418, "answered 418 I'm a Teapot")],
    ids=["retried", "final"],
)
def test_a_url_servers_reason_phrase_never_reaches_the_terminal(
    canned: tuple[str, list[bytes]], status: int, said: str
) -> None:
    """The message names the status in the tool's own words (the standard phrase), never the
    server's reason phrase, which is outside text."""
    url, answers = canned
    answers[0] = _answer(f"HTTP/1.1 {status} {OSC}Busy{CSI}", b"")
    result = invoke("verify", f"{url}/api/compliance.json", "--timeout", "10")
    assert result.exit_code == 3, result.output
    assert_no_raw_control(result.output)
    assert said in result.output and "owned" not in result.output and "Busy" not in result.output


def test_a_targets_error_body_is_escaped(canned: tuple[str, list[bytes]]) -> None:
    url, answers = canned
    body = json.dumps({"error": {"code": "x", "message": f"{OSC}down\r{CSI}"}}).encode()
    answers[0] = _answer("HTTP/1.1 500 Internal Server Error", body)
    result = invoke(
        "check", "--target", url, "--partner", "p", "--state", "MA", "--wager-type", "w"
    )
    assert result.exit_code == 3, result.output
    assert_no_raw_control(result.output)


def test_a_fixtures_duplicate_key_is_escaped_in_its_json_path(tmp_path: Path) -> None:
    fixtures = tmp_path / "fixtures"
    shutil.copytree(demo_fixtures_dir(), fixtures)
    target = next(p for p in sorted(fixtures.glob("*.json")))
    text = target.read_text()
    brace = text.index("{")
    key = json.dumps(f"k{OSC}\u202e")
    target.write_text(text[: brace + 1] + f"{key}: 1, {key}: 2," + text[brace + 1 :])
    result = invoke("bake", "snapshot", "--fixtures", str(fixtures), "--now", NOW)
    assert result.exit_code == 2, result.output
    assert "duplicate" in result.output.lower()
    assert_no_raw_control(result.output)
    assert "\\u202e" in result.output


def test_a_path_from_the_command_line_is_escaped_in_the_error_line(tmp_path: Path) -> None:
    path = tmp_path / f"no{OSC}such{CSI}\r"
    result = run_cli("verify", str(path))
    assert result.returncode == 2, result.stderr
    assert_no_raw_control(result.stderr)
    assert "\\x1b]0;owned" in result.stderr
    usage = run_cli("bake", "snapshot", "--fixtures", str(path))  # click's own usage error
    assert usage.returncode == 2, usage.stderr
    assert_no_raw_control(usage.stderr)


def test_key_labels_are_escaped_in_keys_list(tmp_path: Path) -> None:
    keys_file = tmp_path / "agent-keys.json"
    mint_key(keys_file, "ci")
    doc = json.loads(keys_file.read_text())
    doc["keys"][0]["label"] = f"ci{OSC}{CSI}\r\u202e"
    keys_file.write_text(json.dumps(doc))
    result = invoke("keys", "list", "--keys-file", str(keys_file))
    assert result.exit_code == 0, result.output
    assert_no_raw_control(result.output)
    assert "ci\\x1b]0;owned" in result.output


@pytest.mark.parametrize("form", ["text", "markdown"])
def test_partner_ids_of_an_unauthenticated_diff_side_are_escaped(
    baked: Path, tmp_path: Path, form: str
) -> None:
    forged = tmp_path / "forged.json"
    doc = json.loads((baked / "api" / "compliance.json").read_text())
    for row in doc["shadow"]["rows"]:
        row["partner"] = f"{row['partner']}{OSC}\r{CSI}"
        row["shadowAllowed"] = not row["shadowAllowed"]
    forged.write_text(json.dumps(doc))
    args = ["diff", str(baked), str(forged), "--unauthenticated", "--fail-on", ""]
    result = invoke(*args, *(["--markdown"] if form == "markdown" else []))
    assert result.exit_code == 0, result.output
    # Markdown also backslash-escapes its marks (report/escape.markdown).
    shown = "node\\-bay\\-01\\\\x1b\\]0;owned" if form == "markdown" else "node-bay-01\\x1b]0;owned"
    assert shown in result.output
    assert_no_raw_control(result.output)


def test_junit_and_github_reports_carry_no_raw_control_characters() -> None:
    from datetime import UTC, datetime
    from xml.etree import ElementTree

    from compliance_bake.cli.outcome import Case, Outcome
    from compliance_bake.cli.report_github import github_bytes
    from compliance_bake.cli.report_junit import junit_bytes

    hostile = f"partner{OSC}\r\n{CSI}\u202e"
    outcome = Outcome(
        "bake", False, 1, "FAIL: board", {"board": [Case(hostile, False, f"says {hostile}")]}
    )
    github = github_bytes(outcome).decode()
    assert_no_raw_control(github.replace("\n", ""))
    assert "\\x0d\\x0a" in github  # the break in a value is shown, never obeyed
    junit = junit_bytes(outcome, datetime.now(UTC), 0.0, "ci-host")
    assert_no_raw_control(junit.decode())
    failure = ElementTree.fromstring(junit).find(".//failure")
    assert failure is not None and "\\x1b]0;owned" in (failure.text or "")


def test_the_json_report_escapes_what_json_itself_leaves_raw() -> None:
    from compliance_bake.cli.outcome import Case, Outcome
    from compliance_bake.cli.reporters import FORMATS

    hostile = f"partner{OSC}\x9b31m\u202e\u2028"
    outcome = Outcome("bake", False, 1, "FAIL", {"board": [Case(hostile, False, hostile)]})
    text = FORMATS["json"].make(outcome).decode("utf-8")
    assert_no_raw_control(text.replace("\n", ""))
    assert "\u2028" not in text
    assert json.loads(text)["suites"][0]["cases"][0]["name"] == hostile


HOSTILE = f"{OSC}\x9b31m\u202e\u2066"


def _assert_escaped_json(stdout: str) -> Any:
    """No raw ESC, C1 or bidi control in a `--json` output, and the value is still there once
    parsed (the escapes are JSON's own)."""
    assert_no_raw_control(stdout)
    assert "\u2066" not in stdout
    return json.loads(stdout)


def test_audit_deep_json_escapes_a_plays_control_characters(tmp_path: Path) -> None:
    from tests._plays_helpers import play, write_plays

    plays = write_plays(
        tmp_path, [play(f"pl-1{HOSTILE}", partner=f"node{HOSTILE}", zip="99999")], "jsonl"
    )
    out = tmp_path / "out"
    result = run_cli(
        "audit", "deep", "--plays", str(plays), "--now", NOW, "--out", str(out), "--json"
    )
    assert result.returncode == 1, result.stderr
    summary = _assert_escaped_json(result.stdout)
    assert summary["firstViolations"][0]["partner"] == f"node{HOSTILE}"
    assert summary["firstViolations"][0]["playId"] == f"pl-1{HOSTILE}"


def test_diff_json_escapes_a_snapshots_control_characters(baked: Path, tmp_path: Path) -> None:
    forged = tmp_path / "forged.json"
    doc = json.loads((baked / "api" / "compliance.json").read_text())
    for row in doc["shadow"]["rows"]:
        row["partner"] = f"{row['partner']}{HOSTILE}"
        row["shadowAllowed"] = not row["shadowAllowed"]
    forged.write_text(json.dumps(doc))
    args = ["diff", str(baked), str(forged), "--unauthenticated", "--fail-on", "", "--json"]
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    summary = _assert_escaped_json(result.stdout)
    partners = {change["concerns"].get("partner") for change in summary["changes"]}
    assert f"node-bay-01{HOSTILE}" in partners


def test_a_million_character_reason_reaches_the_terminal_as_a_marked_excerpt(
    tmp_path: Path,
) -> None:
    """A service blocks every check with a 1,000,000-character reason: `bake`, `check` and
    `verify` print a bounded excerpt marked with the reason's length; the snapshot and the
    JSON report hold it whole."""
    import os

    from tests.targets.fault_server import AGENT_KEY, FaultServer

    reason = "R" * 999_991 + "-the-end!"  # 1,000,000 characters
    mark = re.compile(r"… \[cut: [0-9,]{9,} characters; the files hold it whole\]")
    env = {**os.environ, "COMPLIANCE_AGENT_KEY": AGENT_KEY}
    out, report = tmp_path / "out", tmp_path / "bake.json"
    with FaultServer() as server:
        server.fault("/api/compliance/check", "blocked_because", reason=reason)
        baked = run_cli("bake", "snapshot", "--target", server.url, "--out", str(out),
                        "--now", NOW, "--report", f"json:{report}", env=env)  # fmt: skip
        checked = run_cli(
            "check", "--target", server.url, "--partner", "node-bay-01", "--state", "MA",
            "--wager-type", "basketball.totals", env=env,
        )  # fmt: skip
    verified = run_cli("verify", str(out), env=env)
    assert baked.returncode == 1 and verified.returncode == 1, baked.stderr + verified.stderr
    assert checked.returncode == 0, checked.stderr  # blocked is an answer
    for done in (baked, checked, verified):
        shown = done.stdout + done.stderr
        assert len(shown) < 64_000 and mark.search(shown), len(shown)
        assert "-the-end!" not in shown
    snapshot = json.loads((out / "api" / "compliance.json").read_text(encoding="utf-8"))
    assert {row.get("reason") for row in snapshot["shadow"]["rows"]} == {reason}
    assert reason in report.read_text(encoding="utf-8")
