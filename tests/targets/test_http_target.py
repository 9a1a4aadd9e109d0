"""The HTTP target through the real CLI against a real, deliberately misbehaving loopback server.

Every fault ends in exit 3 with one stderr line naming the route and `out/` as it was; a passing
fault (500 then 200, 429 with Retry-After) is retried and the bake succeeds; a wrong decision is
a mismatch in the signed report (exit 1), which `verify` accepts as authentic.
"""

from __future__ import annotations

import contextlib
import json
import os
import pty
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from compliance_bake.errors import EXIT_BAD_INPUT, EXIT_CHECK_FAILED, EXIT_TARGET_FAILED
from tests.conftest import NOW, board_without_where, diagnostics, invoke, run_cli, snapshot_tree
from tests.targets.fault_server import AGENT_KEY, RUNTIME, FaultServer, free_port

CHECK = "/api/compliance/check"
# Generous timeouts: a busy machine must never turn a prompt answer into a timeout. Only the
# "hang" case waits out its timeout, which the server makes certain by never answering.
FAST = ("--timeout", "10", "--retries", "1")
HANG = ("--timeout", "2", "--retries", "1")
KEY_ENV = {"COMPLIANCE_AGENT_KEY": AGENT_KEY}


@pytest.fixture
def server() -> Iterator[FaultServer]:
    with FaultServer() as running:
        yield running


@pytest.fixture
def prebaked(tmp_path: Path) -> tuple[Path, dict[str, tuple[int, bytes]]]:
    """An out/ baked in-process, and its bytes, to show that a failed bake leaves it alone."""
    out = tmp_path / "out"
    assert invoke("bake", "snapshot", "--out", str(out), "--now", NOW).exit_code == 0
    return out, snapshot_tree(out)


def _bake(url: str, out: Path, *extra: str, env: dict[str, str] | None = None) -> object:
    args = ("bake", "snapshot", "--target", url, "--out", str(out), "--now", NOW, *extra)
    return invoke(*args, env=KEY_ENV if env is None else env)


def _one_line(stderr: str) -> str:
    lines = diagnostics(stderr).splitlines()
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


def _report(out: Path) -> dict[str, object]:
    return json.loads((out / "api" / "compliance.json").read_text())


def _policy(out: Path) -> dict[str, Any]:
    policy: dict[str, Any] = json.loads((out / "registry" / "compliance-policy.json").read_text())
    return policy


def test_a_bake_over_http_matches_the_in_process_bake(
    server: FaultServer, tmp_path: Path, prebaked: tuple[Path, object]
) -> None:
    local = _report(prebaked[0])
    out = tmp_path / "remote"
    url = server.url.replace("http://", "http://usr7q:pw-Sekrit-9@")
    result = _bake(url, out, "--json")
    assert result.exit_code == 0, result.stderr  # type: ignore[attr-defined]
    remote = _report(out)
    rows = remote["enhancements"]["rows"]  # type: ignore[index]
    assert board_without_where(rows) == local["enhancements"]["rows"]  # type: ignore[index]
    for key in ("rows", "summary"):
        assert remote["shadow"][key] == local["shadow"][key]  # type: ignore[index]
    assert remote["shadow"]["base"] == server.url  # type: ignore[index]
    assert remote["shadow"]["proof"]["bunVersion"] == RUNTIME  # type: ignore[index]
    assert remote["integrity"]["proof"]["bunVersion"] == RUNTIME  # type: ignore[index]
    checks = server.requests_to(CHECK)
    headline = [seen for seen in checks if "sport" not in seen.query]
    assert len(headline) == 2 + 8  # two board checks, the 2 x 4 matrix
    # and the policy's questions, each once, recorded as the in-process bake records them
    questions = _policy(prebaked[0])["questions"]
    assert len(checks) - len(headline) == len(questions) > 0
    assert _policy(out)["questions"] == questions
    assert {seen.headers.get("authorization") for seen in checks} == {f"Bearer {AGENT_KEY}"}
    # Neither the URL's password nor the agent key is printed or written anywhere.
    written = b"".join(data for _, data in snapshot_tree(out).values())
    for secret in ("pw-Sekrit-9", "usr7q", AGENT_KEY):
        assert secret not in result.output and secret not in result.stderr  # type: ignore[attr-defined]
        assert secret.encode() not in written
    verified = invoke("verify", str(out))
    assert verified.exit_code == 0, verified.output


def _refused_url(_server: FaultServer) -> str:
    return f"http://127.0.0.1:{free_port()}"


FAULTS = {
    "refused": ("/health", None, {}),
    "hang": (CHECK, "hang", {}),
    "non_json": (CHECK, "non_json", {}),
    "allowed_string": (CHECK, "allowed_string", {}),
    "403_allowed_true": (CHECK, "forbidden_allowed", {}),
    "truncated": (CHECK, "truncated", {}),
    "reset": (CHECK, "reset", {}),
    "oversize": (CHECK, "oversize", {"size": 2 << 20}),
    "oversize_unframed": (CHECK, "oversize_unframed", {"size": 2 << 20}),
    "500_always": (CHECK, "status", {"code": 500}),
    "same_host_redirect": (CHECK, "redirect", {"location": "/elsewhere"}),
    "status_non_json": ("/api/compliance/status", "non_json", {}),
    "health_non_json": ("/health", "non_json", {}),
}


@pytest.mark.parametrize("name", list(FAULTS))
def test_a_faulty_target_exits_3_with_one_line_naming_the_route_and_writes_nothing(
    name: str, server: FaultServer, prebaked: tuple[Path, dict[str, tuple[int, bytes]]]
) -> None:
    route, kind, params = FAULTS[name]
    url = server.url
    if kind is None:
        url = _refused_url(server)
    else:
        server.fault(route, kind, **params)
    out, before = prebaked
    result = _bake(url, out, *(HANG if kind == "hang" else FAST))
    assert result.exit_code == EXIT_TARGET_FAILED, result.output  # type: ignore[attr-defined]
    line = _one_line(result.stderr)  # type: ignore[attr-defined]
    assert f"GET {route}: " in line
    assert result.stdout == ""  # type: ignore[attr-defined]
    assert snapshot_tree(out) == before


def test_a_redirect_to_another_host_is_not_followed_and_the_key_not_sent(
    server: FaultServer, prebaked: tuple[Path, dict[str, tuple[int, bytes]]]
) -> None:
    out, before = prebaked
    with FaultServer(key=None) as elsewhere:
        # Another origin by name ("localhost", not "127.0.0.1") and by port.
        server.fault(CHECK, "redirect", location=f"http://localhost:{elsewhere.port}{CHECK}")
        result = _bake(server.url, out, *FAST)
        line = _one_line(result.stderr)  # type: ignore[attr-defined]
        assert result.exit_code == EXIT_TARGET_FAILED
        assert f"GET {CHECK}: redirected" in line and "another host" in line
        assert "agent key was not sent" in line
        assert elsewhere.seen == []
        assert not any("authorization" in seen.headers for seen in elsewhere.seen)
    assert snapshot_tree(out) == before


def test_a_wrong_key_is_a_target_error_that_says_where_the_key_comes_from(
    server: FaultServer, tmp_path: Path
) -> None:
    result = _bake(server.url, tmp_path / "out", env={"COMPLIANCE_AGENT_KEY": "tstky.wrong"})
    line = _one_line(result.stderr)  # type: ignore[attr-defined]
    assert result.exit_code == EXIT_TARGET_FAILED
    assert f"GET {CHECK}: HTTP 401: the service refused the agent key" in line
    assert "--agent-key-file" in line and "COMPLIANCE_AGENT_KEY" in line
    assert "tstky.wrong" not in line
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("value", ["", "  ", "tstky.with space", "tstky.ké"])
def test_an_unusable_key_in_the_environment_is_bad_usage(
    value: str, server: FaultServer, tmp_path: Path
) -> None:
    result = _bake(server.url, tmp_path / "out", env={"COMPLIANCE_AGENT_KEY": value})
    line = _one_line(result.stderr)  # type: ignore[attr-defined]
    assert result.exit_code == EXIT_BAD_INPUT and "$COMPLIANCE_AGENT_KEY" in line
    assert value.strip() == "" or value not in line
    assert server.seen == []


def test_no_key_at_all_reaches_the_service_as_a_401(
    server: FaultServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("COMPLIANCE_AGENT_KEY", raising=False)
    result = invoke("bake", "snapshot", "--target", server.url, "--out", str(tmp_path / "o"))
    line = _one_line(result.stderr)
    assert result.exit_code == EXIT_TARGET_FAILED
    assert f"GET {CHECK}: HTTP 401: the service needs an agent key and none was given" in line


def test_500_then_200_is_retried_and_the_bake_succeeds(server: FaultServer, tmp_path: Path) -> None:
    server.fault(CHECK, "status", times=2, code=500)
    result = _bake(server.url, tmp_path / "out", "--retries", "3")
    assert result.exit_code == 0, result.stderr  # type: ignore[attr-defined]
    headline = [seen for seen in server.requests_to(CHECK) if "sport" not in seen.query]
    assert len(headline) == 10 + 2


def test_429_with_retry_after_is_honoured(server: FaultServer, tmp_path: Path) -> None:
    server.fault(CHECK, "status", times=1, code=429, retry_after="1")
    result = _bake(server.url, tmp_path / "out")
    assert result.exit_code == 0, result.stderr  # type: ignore[attr-defined]
    first, second = server.requests_to(CHECK)[:2]
    assert second.at - first.at >= 0.95


def test_a_wrong_decision_is_a_mismatch_in_the_signed_report(
    server: FaultServer, tmp_path: Path
) -> None:
    server.fault(CHECK, "wrong_decision")  # every check allowed, the unlicensed too
    out = tmp_path / "out"
    result = _bake(server.url, out)
    assert result.exit_code == EXIT_CHECK_FAILED, result.stderr  # type: ignore[attr-defined]
    report = _report(out)
    rows = {row["feature"]: row for row in report["enhancements"]["rows"]}  # type: ignore[index]
    assert rows["check.nj_unlicensed_block"]["match"] is False
    assert rows["check.nj_unlicensed_block"]["actualState"] == {"allowed": True, "status": 200}
    shadow = json.loads((out / "registry" / "compliance-shadow.json").read_text())
    assert shadow["summary"]["mismatches"] == 4
    wrong = [row for row in shadow["rows"] if not row["match"]]
    assert {(r["realAllowed"], r["shadowAllowed"]) for r in wrong} == {(True, False)}
    assert invoke("verify", str(out)).exit_code == 1  # authentic, and records the mismatches
    assert invoke("verify", str(out), "--allow-recorded-failures").exit_code == 0


@pytest.mark.parametrize(
    "url",
    ["ftp://127.0.0.1/", "http://", "localhost:8000", "http://127.0.0.1:99999", "http://h/?q=1"],
)
def test_a_bad_target_url_is_bad_usage(url: str, tmp_path: Path) -> None:
    result = invoke("bake", "snapshot", "--target", url, "--out", str(tmp_path / "out"))
    assert result.exit_code == EXIT_BAD_INPUT
    assert "--target" in _one_line(result.stderr)
    assert not (tmp_path / "out").exists()


def test_check_over_http_names_the_target(server: FaultServer) -> None:
    args = ("check", "--target", server.url, "--partner", "node-offshore-04", "--state", "NJ")
    shown = invoke(*args, "--wager-type", "soccer.moneyline", env=KEY_ENV)
    assert shown.exit_code == 0, shown.stderr
    assert "BLOCKED (403)" in shown.stdout and server.url in shown.stdout
    as_json = json.loads(invoke(*args, "--wager-type", "x.y", "--json", env=KEY_ENV).stdout)
    assert as_json["target"] == server.url and as_json["allowed"] is False


def test_check_against_a_faulty_target_exits_3(server: FaultServer) -> None:
    server.fault(CHECK, "allowed_string")
    args = ("check", "--target", server.url, "--partner", "node-bay-01", "--state", "MA")
    result = invoke(*args, "--wager-type", "basketball.totals", env=KEY_ENV)
    assert result.exit_code == EXIT_TARGET_FAILED
    assert _one_line(result.stderr).startswith(f"compliance-bake: error: GET {CHECK}: `allowed`")


def test_the_agent_key_file(server: FaultServer, tmp_path: Path) -> None:
    key_file = tmp_path / "agent.key"
    key_file.write_text(AGENT_KEY + "\n")
    key_file.chmod(0o644)
    args = ("check", "--target", server.url, "--agent-key-file", str(key_file))
    args += ("--partner", "node-bay-01", "--state", "MA", "--wager-type", "basketball.totals")
    exposed = invoke(*args, env={"COMPLIANCE_AGENT_KEY": "tstky.wrong"})
    assert exposed.exit_code == EXIT_BAD_INPUT and "chmod 600" in _one_line(exposed.stderr)
    key_file.chmod(0o600)
    used = invoke(*args, env={"COMPLIANCE_AGENT_KEY": "tstky.wrong"})  # the file wins
    assert used.exit_code == 0 and "ALLOWED" in used.stdout
    assert AGENT_KEY not in used.output + used.stderr


def test_through_the_console_script_a_refused_target_is_one_line(tmp_path: Path) -> None:
    url = f"http://usr7q:pw-Sekrit-9@127.0.0.1:{free_port()}"
    env = dict(os.environ, COMPLIANCE_AGENT_KEY=AGENT_KEY)
    done = run_cli("bake", "snapshot", "--target", url, "--out", str(tmp_path / "o"), env=env)
    assert done.returncode == EXIT_TARGET_FAILED and done.stdout == ""
    line = _one_line(done.stderr)
    assert line.startswith("compliance-bake: error: GET /health: cannot connect to 127.0.0.1:")
    assert "connection refused" in line and "(after 4 attempts)" in line
    for secret in ("pw-Sekrit-9", "usr7q", AGENT_KEY):
        assert secret not in done.stderr
    assert not (tmp_path / "o").exists()


def _bake_on_a_terminal(url: str, out: Path, *extra: str) -> tuple[int, str]:
    """Run the console script with stderr on a pseudo-terminal; (exit code, what it showed)."""
    parent, child = pty.openpty()
    env = dict(os.environ, COMPLIANCE_AGENT_KEY=AGENT_KEY, COLUMNS="100", TERM="xterm")
    args = [sys.executable, "-m", "compliance_bake", "bake", "snapshot", "--target", url]
    process = subprocess.Popen(
        [*args, "--out", str(out), "--now", NOW, *extra],
        stdout=subprocess.DEVNULL,
        stderr=child,
        env=env,
    )
    os.close(child)
    shown = b""
    with contextlib.suppress(OSError):  # EIO once the child has closed its end
        while chunk := os.read(parent, 65536):
            shown += chunk
    os.close(parent)
    return process.wait(timeout=60), shown.decode("utf-8", "replace")


def test_a_progress_bar_on_a_terminal_and_none_under_json(
    server: FaultServer, tmp_path: Path
) -> None:
    code, shown = _bake_on_a_terminal(server.url, tmp_path / "a")
    assert code == 0 and "shadow matrix" in shown
    code, shown = _bake_on_a_terminal(server.url, tmp_path / "b", "--json")
    assert code == 0 and shown == ""


def test_a_service_that_accepts_and_never_answers_ends_the_bake_at_the_timeout(
    tmp_path: Path,
) -> None:
    """A listener that accepts every connection and never answers (nor reads): the default
    --retries (3) does not ask again at full length. The bake ends in exit 3 at the timeout,
    one line naming /health, well before four attempts' 4 x timeout."""
    import socket
    import threading
    import time

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            with contextlib.suppress(OSError):
                accepted.append(listener.accept()[0])

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        began = time.monotonic()
        done = run_cli("bake", "snapshot", "--target", url, "--out", str(tmp_path / "out"),
                       "--now", NOW, "--timeout", "3", env={**os.environ, **KEY_ENV})  # fmt: skip
        took = time.monotonic() - began
    finally:
        stop.set()
        thread.join(timeout=5)
        for connection in accepted:
            connection.close()
        listener.close()
    assert done.returncode == EXIT_TARGET_FAILED, done.stderr
    line = _one_line(done.stderr)
    assert "GET /health: no complete answer within 3 s (a timeout is not retried)" in line
    assert len(accepted) == 1 and took < 2 * 3 + 5, (len(accepted), took)  # a start-up's slack
    assert not (tmp_path / "out").exists()
