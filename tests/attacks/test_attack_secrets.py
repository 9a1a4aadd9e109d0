"""Attacks that try to get a secret into what compliance-bake writes or shows: a service that
echoes the agent key (and a URL with a password and a token) in /health, and an OpenAPI URL
with a password and a query. One function removes them (`inputs/redaction.redacted`); each
attack is paired with a control that shows the same text does reach the output without them.

The services are real HTTP servers on 127.0.0.1 (tests/targets/fault_server.py, and a
one-document server here), stopped by the test.
"""

from __future__ import annotations

import json
import threading
import tomllib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from compliance_bake.inputs.redaction import redacted
from tests.conftest import NOW, invoke
from tests.targets.fault_server import AGENT_KEY, RUNTIME, FaultServer

KEY_ENV = {"COMPLIANCE_AGENT_KEY": AGENT_KEY}
PASSWORD = "hunter2-url-password"
TOKEN = "tok-query-token-0123"
REPORTS = ("json", "junit", "github", "markdown")
ECHO = f"echo {AGENT_KEY} via https://operator:{PASSWORD}@evil.example/x?token={TOKEN}#frag"


def _written(root: Path) -> dict[str, bytes]:
    return {str(path): path.read_bytes() for path in root.rglob("*") if path.is_file()}


def _bake(server: FaultServer, out: Path, *extra: str) -> tuple[int, str]:
    args = ("bake", "snapshot", "--target", server.url, "--out", str(out), "--now", NOW)
    result = invoke(*args, *extra, "--timeout", "10", "--retries", "1", env=KEY_ENV)
    return result.exit_code, result.stdout + result.stderr


def _health_echoing(server: FaultServer, runtime: str) -> None:
    states = list(server.engine.health().states)
    body = json.dumps({"ok": True, "states": states, "runtime": runtime}).encode()
    server.fault("/health", "raw", body=body)


@pytest.mark.parametrize("extra", [(), ("--explain",)])
def test_a_key_echoed_in_health_reaches_no_written_file_and_no_output(
    tmp_path: Path, extra: tuple[str, ...]
) -> None:
    """No file holds the key: not api/compliance.json, the registry copy or the portal page.
    Every file the bake writes is searched: out/ and the four reports."""
    reports = [f"--report={kind}:{tmp_path / 'reports' / kind}" for kind in REPORTS]
    with FaultServer() as server:
        _health_echoing(server, ECHO)
        code, output = _bake(server, tmp_path / "out", *extra, *reports)
    assert code == 0, output
    files = _written(tmp_path)  # out/ and the four reports
    assert len(files) >= 3 + len(REPORTS)
    for secret in (AGENT_KEY, PASSWORD, TOKEN, "frag"):
        assert secret not in output
        leaked = [name for name, data in files.items() if secret.encode() in data]
        assert leaked == [], (secret, leaked)
    # What is left of the runtime is what the service said, the secrets marked.
    snapshot = json.loads((tmp_path / "out" / "api/compliance.json").read_text())
    said = snapshot["integrity"]["proof"]["bunVersion"]
    assert said == "echo <agent key> via https://evil.example/x"


def test_control_an_honest_runtime_reaches_every_published_copy(tmp_path: Path) -> None:
    """The grep above can find what /health says: the runtime is in the files."""
    with FaultServer() as server:
        code, output = _bake(server, tmp_path / "out")
    assert code == 0, output
    files = _written(tmp_path / "out")
    holding = [name for name, data in files.items() if RUNTIME.encode() in data]
    assert len(holding) >= 3, holding


def test_the_one_function_removes_keys_userinfo_queries_and_fragments() -> None:
    text = redacted(ECHO, (AGENT_KEY,), "<k>")
    assert text == "echo <k> via https://evil.example/x"
    # Control: text with no secret and no URL is returned as it is.
    honest = "FaultServer 1.0 (CPython 3.12)"
    assert redacted(honest, (AGENT_KEY,)) == honest


DOCUMENT = {
    "openapi": "3.1.0",
    "paths": {
        "/health": {"get": {"responses": {}}},
        "/check": {"get": {"parameters": [{"in": "query", "name": "partner"}]}},
    },
}


class _OneDocument(BaseHTTPRequestHandler):
    body = json.dumps(DOCUMENT).encode()

    def do_GET(self) -> None:  # noqa: N802 - the http.server name
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def document_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _OneDocument)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def test_a_draft_from_a_url_with_password_and_query_prints_neither(document_server: str) -> None:
    """The draft's first line names the URL without `operator:hunter2...@` or `?token=...`."""
    url = f"http://operator:{PASSWORD}@{document_server}/openapi.json?token={TOKEN}"
    result = invoke("target", "profile", "init", "--from-openapi", url)
    assert result.exit_code == 0, result.stderr
    for secret in (PASSWORD, TOKEN, "operator"):
        assert secret not in result.stdout + result.stderr
    assert f"drafted from http://{document_server}/openapi.json by" in result.stdout
    tomllib.loads(result.stdout)


def test_a_failing_url_with_password_and_query_names_neither(document_server: str) -> None:
    host = document_server.rpartition(":")[0]
    url = f"http://operator:{PASSWORD}@{host}:1/openapi.json?token={TOKEN}"  # nothing listens
    result = invoke("target", "profile", "init", "--from-openapi", url, "--timeout", "5")
    assert result.exit_code == 3
    assert PASSWORD not in result.stderr and TOKEN not in result.stderr
    assert f"http://{host}:1/openapi.json" in result.stderr


def test_control_a_draft_from_a_plain_url_names_it(document_server: str) -> None:
    url = f"http://{document_server}/openapi.json"
    result = invoke("target", "profile", "init", "--from-openapi", url)
    assert result.exit_code == 0, result.stderr
    assert f"drafted from {url} by" in result.stdout
