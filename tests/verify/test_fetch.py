"""Fetching a published snapshot: one deadline over the whole exchange, a short body refused, and
no user name or password of the URL in any output.

The dripping server is a real loopback socket that sends its answer a byte at a time, slowly
enough that the whole answer takes far longer than the fetch's limit, while each byte comes well
before any per-read timeout: only one deadline over the whole exchange stops it.
"""

from __future__ import annotations

import json
import re
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from compliance_bake.errors import TargetError
from compliance_bake.targets.fetch import fetch_document, shown_url
from tests.conftest import invoke

BODY = b'{"ok": true, "padding": "' + b"x" * 40 + b'"}'
PLAIN = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(BODY) + BODY
CHUNKED = (
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n" % len(BODY)
    + BODY
    + b"\r\n0\r\n\r\n"
)
pytestmark = pytest.mark.service  # dripping peers on loopback ports

DRIP_SECONDS = 0.25  # per byte: any of these answers takes over 15 s to send whole


class _Server:
    """Answers each connection with `answer`: the first `fast` bytes at once, the rest one
    byte every DRIP_SECONDS; then closes. Stops when the client hangs up or `stop()`.
    `finished` is set once a whole answer has been sent."""

    def __init__(self, answer: bytes, fast: int) -> None:
        self.answer, self.fast = answer, fast
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.stopped = threading.Event()
        self.finished = threading.Event()
        self.requests: list[bytes] = []  # what each connection sent first: the request
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        self.listener.settimeout(0.2)
        while not self.stopped.is_set():
            try:
                conn, _ = self.listener.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(5)
                try:
                    self.requests.append(conn.recv(65536))  # the request
                    conn.sendall(self.answer[: self.fast])
                    for at in range(self.fast, len(self.answer)):
                        if self.stopped.wait(DRIP_SECONDS):
                            return
                        conn.sendall(self.answer[at : at + 1])
                    self.finished.set()
                except OSError:
                    continue  # the client hung up

    def stop(self) -> None:
        self.stopped.set()
        self.thread.join(timeout=10)
        self.listener.close()


@pytest.fixture
def serve() -> Iterator[list[_Server]]:
    servers: list[_Server] = []
    yield servers
    for server in servers:
        server.stop()


def _url(servers: list[_Server], answer: bytes, fast: int, auth: str = "") -> str:
    server = _Server(answer, fast)
    servers.append(server)
    return f"http://{auth}127.0.0.1:{server.port}/api/compliance"


@pytest.mark.parametrize(
    ("answer", "fast"),
    [
        (PLAIN, 0),  # the status line drips
        (PLAIN, PLAIN.index(b"Content-Length")),  # the headers drip
        (PLAIN, PLAIN.index(b"\r\n\r\n") + 4),  # the body drips
        (CHUNKED, CHUNKED.index(b"\r\n\r\n") + 4),  # a chunked body drips
    ],
    ids=["status-line", "headers", "body", "chunked-body"],
)
def test_a_dripping_peer_cannot_stretch_the_deadline(
    serve: list[_Server], answer: bytes, fast: int
) -> None:
    url = _url(serve, answer, fast)
    with pytest.raises(TargetError) as caught:
        fetch_document(url, timeout=1, max_bytes=1 << 20)
    message = caught.value.message
    assert caught.value.exit_code == 3 and url in message, message
    found = re.search(r"timed out after ([0-9.]+) s \(the limit is 1 s\)", message)
    assert found is not None, message
    assert float(found.group(1)) >= 1.0  # the real elapsed time, never less than the limit
    assert not serve[0].finished.is_set()  # the fetch gave up before the answer was whole


def test_the_whole_answer_at_once_is_read(serve: list[_Server]) -> None:
    assert fetch_document(_url(serve, PLAIN, len(PLAIN)), timeout=5, max_bytes=1 << 20) == BODY
    assert fetch_document(_url(serve, CHUNKED, len(CHUNKED)), timeout=5, max_bytes=1 << 20) == BODY


def test_verify_with_timeout_exits_3_on_a_dripping_body(serve: list[_Server]) -> None:
    url = _url(serve, PLAIN, PLAIN.index(b"\r\n\r\n") + 4)
    result = invoke("verify", url, "--timeout", "1", "--digests-only")
    assert result.exit_code == 3, result.output
    found = re.search(r"timed out after ([0-9.]+) s", result.stderr)
    assert found is not None and "Traceback" not in result.stderr, result.stderr
    assert float(found.group(1)) < len(BODY) * DRIP_SECONDS  # ended before the body did


def test_a_body_shorter_than_its_content_length_is_exit_3(serve: list[_Server]) -> None:
    cut = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % (len(BODY) + 100) + BODY
    url = _url(serve, cut, len(cut))
    with pytest.raises(TargetError, match=r"cut short"):
        fetch_document(url, timeout=5, max_bytes=1 << 20)
    result = invoke("verify", _url(serve, cut, len(cut)), "--digests-only")
    assert result.exit_code == 3 and "cut short" in result.stderr, result.output
    cut_chunked = CHUNKED[: CHUNKED.index(b"\r\n0\r\n")]  # no last chunk
    with pytest.raises(TargetError, match=r"cut short"):
        fetch_document(_url(serve, cut_chunked, len(cut_chunked)), timeout=5, max_bytes=1 << 20)


def test_shown_url_drops_user_password_query_and_fragment() -> None:
    assert shown_url("https://u:p@host:8443/api/compliance?token=t#x") == (
        "https://host:8443/api/compliance"
    )
    assert shown_url("http://u@[::1]:80x/api") == "http://[::1]:80x/api"
    assert shown_url("out/api/compliance.json") == "out/api/compliance.json"


def test_a_url_password_is_never_printed_or_reported(
    baked: Path, serve: list[_Server], tmp_path: Path
) -> None:
    body = (baked / "api" / "compliance.json").read_bytes()
    answer = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body

    def url() -> str:
        return _url(serve, answer, len(answer), auth="auditor:hunter2@")

    reports = [f"json:{tmp_path / 'v.json'}", f"junit:{tmp_path / 'v.xml'}"]
    shown = invoke("verify", url(), "--report", reports[0], "--report", reports[1])
    as_json = invoke("verify", url(), "--json")
    assert shown.exit_code == 0 and as_json.exit_code == 0, shown.output
    written = [(tmp_path / name).read_text() for name in ("v.json", "v.xml")]
    assert json.loads(as_json.stdout)["source"].startswith("http://127.0.0.1:")
    diffed = invoke("diff", url(), str(baked), "--json")
    assert diffed.exit_code == 0, diffed.output
    not_found = b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"
    failed = invoke("verify", _url(serve, not_found, len(not_found), "auditor:hunter2@"))
    assert failed.exit_code == 3 and "404" in failed.stderr, failed.output
    missing = invoke("diff", str(baked), _url(serve, not_found, len(not_found), "a:hunter2@"))
    assert missing.exit_code == 3 and "NEW http://127.0.0.1:" in missing.stderr
    outputs = (shown, as_json, diffed, failed, missing)
    for text in [*(r.stdout + r.stderr for r in outputs), *written]:
        assert "hunter2" not in text and "auditor" not in text


def test_a_url_user_and_password_are_never_sent(baked: Path, serve: list[_Server]) -> None:
    """docs/service-api.md: a URL's user name and password are dropped, never sent, as for
    --target: `verify` and `diff` send no HTTP Basic auth, which would carry them in clear."""
    body = (baked / "api" / "compliance.json").read_bytes()
    answer = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body
    verified = invoke("verify", _url(serve, answer, len(answer), auth="auditor:hunter2@"))
    diffed = invoke("diff", _url(serve, answer, len(answer), auth="auditor:hunter2@"), str(baked))
    assert verified.exit_code == 0 and diffed.exit_code == 0, verified.output + diffed.output
    sent = [request for server in serve for request in server.requests]
    assert len(sent) >= 2
    for request in sent:
        assert b"authorization" not in request.lower(), request
        assert b"hunter2" not in request and b"auditor" not in request, request
