"""Attacks by the service under test: a target that redirects, hangs, or answers JSON
past the strict reader's limits. Each is exit 3, one line naming the route, `out/` untouched.

The target is tests/targets/fault_server.py, a real HTTP server on 127.0.0.1 that misbehaves
on purpose.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from compliance_bake.errors import EXIT_TARGET_FAILED
from compliance_bake.inputs.jsonio import MAX_DEPTH
from tests.conftest import NOW, diagnostics, invoke, run_cli, snapshot_tree
from tests.targets.fault_server import AGENT_KEY, FaultServer

CHECK = "/api/compliance/check"
KEY_ENV = {"COMPLIANCE_AGENT_KEY": AGENT_KEY}
FAST = ("--timeout", "10", "--retries", "1")


@pytest.fixture
def server() -> Iterator[FaultServer]:
    with FaultServer() as running:
        yield running


@pytest.fixture
def out(tmp_path: Path) -> Path:
    folder = tmp_path / "out"
    assert invoke("bake", "snapshot", "--out", str(folder), "--now", NOW).exit_code == 0
    return folder


def _line(stderr: str) -> str:
    lines = diagnostics(stderr).splitlines()
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    return lines[0]


DEEP = b"[" * 10_000 + b"]" * 10_000
ANSWERS = {
    "deep-array": (DEEP, f"deeper than {MAX_DEPTH} levels"),
    "deep-object": (b'{"a":' * 600 + b"1" + b"}" * 600, f"deeper than {MAX_DEPTH} levels"),
    "5000-digits": (b'{"allowed": true, "status": ' + b"9" * 5000 + b"}", "4,300 digits"),
    "past-64-bits": (b'{"allowed": true, "status": ' + b"9" * 40 + b"}", "64-bit range"),
}


@pytest.mark.parametrize("route", [CHECK, "/health"])
@pytest.mark.parametrize("name", list(ANSWERS))
def test_an_answer_past_the_parser_limits_is_exit_3_naming_the_route(
    server: FaultServer, out: Path, name: str, route: str
) -> None:
    body, expected = ANSWERS[name]
    server.fault(route, "raw", body=body)
    before = snapshot_tree(out)
    args = ("bake", "snapshot", "--target", server.url, "--out", str(out), *FAST)
    result = invoke(*args, env=KEY_ENV)
    line = _line(result.stderr)
    assert result.exit_code == EXIT_TARGET_FAILED
    if name == "past-64-bits":
        # A number past 64 bits is refused where a field reads it: the check's
        # `status`, naming the expression; /health reads no `status`, and fails on what it reads.
        expected = {
            CHECK: "`body.status` yielded what is not strict JSON (an integer outside the 64-bit",
            "/health": "`ok` is missing from the answer (`body.ok` yielded nothing)",
        }[route]
    assert f"GET {route}: " in line and expected in line
    assert snapshot_tree(out) == before


def test_a_redirecting_target_never_receives_the_key_elsewhere(
    server: FaultServer, out: Path
) -> None:
    before = snapshot_tree(out)
    with FaultServer(key=None) as elsewhere:
        server.fault(CHECK, "redirect", location=f"http://localhost:{elsewhere.port}{CHECK}")
        args = ("bake", "snapshot", "--target", server.url, "--out", str(out), *FAST)
        result = invoke(*args, env=KEY_ENV)
        assert result.exit_code == EXIT_TARGET_FAILED
        assert "agent key was not sent" in _line(result.stderr)
        assert elsewhere.seen == []
    assert snapshot_tree(out) == before


def test_a_hung_target_is_abandoned_after_a_bounded_number_of_attempts(
    server: FaultServer, out: Path
) -> None:
    """The bound is the client's: one deadline of --timeout per request, every attempt
    inside it, so a hung request is not asked again; the test's only clock is run_cli's
    generous process timeout, which a hang without a bound would exceed."""
    server.fault(CHECK, "hang")
    args = ("bake", "snapshot", "--target", server.url, "--out", str(out))
    result = run_cli(*args, "--timeout", "1", "--retries", "1", env={**os.environ, **KEY_ENV})
    assert result.returncode == EXIT_TARGET_FAILED
    line = _line(result.stderr)
    assert f"GET {CHECK}: " in line and "a timeout is not retried" in line
    assert len(server.requests_to(CHECK)) == 1
