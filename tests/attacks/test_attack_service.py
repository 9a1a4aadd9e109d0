"""Attacks on `compliance-bake serve`, over raw sockets on a loopback port.

Raw sockets, because the attacks are requests no well-behaved client library sends: an unknown
method, a NUL in a header, a megabyte of headers, a request that never finishes. Every read has a
socket timeout (seconds, generous), and every loop reads until the server closes or that timeout.
"""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from compliance_bake.identity.keyfile import mint_key
from tests.conftest import NOW, SECRET, invoke
from tests.support.live_service import LiveService

CLIENT_TIMEOUT = 2  # seconds; only the slow-client service uses it


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes
    closed: bool  # the server closed the connection after the answer


@dataclass
class Served:
    port: int
    key: str
    out: Path
    log: list[str]  # the server's stderr lines, read as they come

    def logged(self, text: str) -> bool:
        """Whether a line with `text` reaches the log within 30 s (the server writes it after
        answering, so the test waits a little for the line, never for a figure)."""
        for _ in range(300):
            if any(text in line for line in self.log):
                return True
            time.sleep(0.1)
        return False

    def raw(self, data: bytes, *, timeout: float = 30.0) -> Answer:
        """Send `data`, read until the server closes (or `timeout`), parse one answer."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=timeout) as sock:
            sock.sendall(data)
            return _read_answer(sock)

    def request(self, method: str, target: str, *headers: str) -> Answer:
        lines = [f"{method} {target} HTTP/1.1", "Host: 127.0.0.1", "Connection: close", *headers]
        return self.raw(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))


def _read_answer(sock: socket.socket) -> Answer:
    buffer = b""
    closed = False
    for _ in range(100_000):  # bounded; each recv waits at most the socket's timeout
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            break
        if not chunk:
            closed = True
            break
        buffer += chunk
    head, _, body = buffer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ")[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return Answer(status, headers, body, closed)


def _error_code(answer: Answer) -> str:
    assert answer.headers["content-type"] == "application/json; charset=utf-8"
    doc = json.loads(answer.body)
    assert set(doc) == {"error"} and set(doc["error"]) == {"code", "message"}
    return str(doc["error"]["code"])


def _serve(root: Path, *extra: str) -> Iterator[Served]:
    keys_file = root / "agent-keys.json"
    key = mint_key(keys_file, "attacks")
    out = root / "out"
    secret = {"REPORT_SIGNING_SECRET": SECRET}  # module scope: before the autouse env fixture
    baked = invoke("bake", "snapshot", "--out", str(out), "--now", NOW, env=secret)
    assert baked.exit_code == 0, baked.output
    with LiveService(keys_file=keys_file, out_dir=out, cwd=root, extra_args=extra) as live:
        yield Served(urlsplit(live.url).port or 0, key, out, live.log)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    yield from _serve(tmp_path_factory.mktemp("attacked"))


@pytest.fixture(scope="module")
def logging_access(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    yield from _serve(tmp_path_factory.mktemp("logged"), "--access-log")


@pytest.fixture(scope="module")
def impatient(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    yield from _serve(tmp_path_factory.mktemp("impatient"), "--client-timeout", str(CLIENT_TIMEOUT))


QUERY = {
    "/api/compliance/check": "?partner=node-bay-01&state=MA&wagerType=basketball.totals",
    "/api/compliance/status": "?state=MA&partner=node-bay-01",
}
GET_ROUTES = [
    "/health",
    "/openapi.json",
    "/api/compliance/check",
    "/api/compliance/status",
    "/api/compliance",
    "/registry/compliance-enhancements.json",
    "/registry/compliance-shadow.json",
    "/portal/compliance/",
]


@pytest.mark.parametrize("route", GET_ROUTES)
def test_head_answers_every_get_route_like_get_without_a_body(served: Served, route: str) -> None:
    target = route + QUERY.get(route, "")
    auth = f"Authorization: Bearer {served.key}"
    got = served.request("GET", target, auth)
    head = served.request("HEAD", target, auth)
    assert got.status == 200 and got.body
    assert head.status == 200 and head.body == b""
    assert head.headers["content-length"] == got.headers["content-length"]
    assert head.headers["content-type"] == got.headers["content-type"]


def test_head_keeps_the_refusals_of_get(served: Served) -> None:
    head = served.request("HEAD", "/api/compliance/check" + QUERY["/api/compliance/check"])
    assert head.status == 401 and head.body == b""
    assert served.request("HEAD", "/health?probe=1").status == 400


@pytest.mark.parametrize(
    ("request_bytes", "status", "code"),
    [
        (b"BREW /health HTTP/1.1\r\nHost: x\r\n\r\n", 400, "bad_request"),
        (b"GET /health HTTP/1.1\r\nHost: x\r\nX-Pot: tea\x00pot\r\n\r\n", 400, "bad_request"),
        (b"GET /health?q=" + b"a" * 100_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", 414, "uri_too_long"),
        (
            b"GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * (1 << 20) + b"\r\n\r\n",
            431,
            "headers_too_large",
        ),
        (
            b"GET /health HTTP/1.1\r\nHost: x\r\n" + b"X-Many: 0123456789\r\n" * 2000 + b"\r\n",
            431,
            "headers_too_large",
        ),
    ],
    ids=["unknown-method", "nul-in-header", "100kb-query", "1mb-header", "2000-headers"],
)
def test_what_the_http_layer_refuses_has_the_json_error_body(
    served: Served, request_bytes: bytes, status: int, code: str
) -> None:
    answer = served.raw(request_bytes)
    assert answer.status == status
    assert _error_code(answer) == code
    assert answer.closed


def test_a_slow_client_is_answered_408_and_closed(impatient: Served) -> None:
    # Half a request line, then nothing: the server, not the test, decides when it is over.
    answer = impatient.raw(b"GET /hea")
    assert answer.status == 408 and _error_code(answer) == "request_timeout"
    assert answer.closed


def test_a_silent_connection_is_closed(impatient: Served) -> None:
    answer = impatient.raw(b"")
    assert answer.status == 408 and answer.closed


def test_an_idle_keep_alive_connection_is_closed(impatient: Served) -> None:
    answer = impatient.raw(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")  # keep-alive by default
    assert answer.status == 200
    assert answer.closed  # closed by the server after the idle timeout, not by the test


def test_a_fifo_planted_in_out_errors_that_route_and_health_keeps_answering(
    served: Served,
) -> None:
    planted = served.out / "registry" / "compliance-shadow.json"
    saved = planted.read_bytes()
    planted.unlink()
    os.mkfifo(planted)
    try:
        for _ in range(3):
            answer = served.request("GET", "/registry/compliance-shadow.json")
            assert answer.status == 500 and _error_code(answer) == "unreadable_file"
            assert served.request("GET", "/health").status == 200
        assert served.request("GET", "/api/compliance").status == 200
    finally:
        planted.unlink()
        planted.write_bytes(saved)


TRAVERSALS = [
    "/api/compliance/../../../../etc/passwd",
    "/portal/compliance/..%2f..%2f..%2fetc%2fpasswd",
    "/portal/compliance/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
    "/registry/..%2f..%2f..%2fetc%2fpasswd",
    "/registry/%2e%2e%2f%2e%2e%2fetc%2fpasswd",
    "/portal/compliance/..%5c..%5c..%5cetc%5cpasswd",
    "//etc/passwd",
    "/registry/compliance-shadow.json/../../agent-keys.json",
    "/portal/compliance/%252e%252e/%252e%252e/etc/passwd",
    "/api/compliance.json/..;/..;/etc/passwd",
]


@pytest.mark.parametrize("target", TRAVERSALS)
def test_path_traversal_on_served_routes_is_404(served: Served, target: str) -> None:
    answer = served.request("GET", target)
    assert answer.status == 404
    assert b"root:" not in answer.body and b"sha3" not in answer.body


@pytest.mark.parametrize("link", ["file", "folder"])
def test_a_symlink_out_of_out_is_404_and_a_warning_in_the_log(
    served: Served, tmp_path: Path, link: str
) -> None:
    secret = tmp_path / "elsewhere" / "compliance-shadow.json"
    secret.parent.mkdir()
    secret.write_text('{"secret": "sha3-not-for-you"}')
    secret.chmod(0o600)
    planted = served.out / "registry" / ("compliance-shadow.json" if link == "file" else "")
    aside = planted.with_name(planted.name + ".aside")
    planted.rename(aside)
    planted.symlink_to(secret if link == "file" else secret.parent)
    try:
        answer = served.request("GET", "/registry/compliance-shadow.json")
        assert answer.status == 404 and _error_code(answer) == "not_found"
        assert b"not-for-you" not in answer.body
        assert served.logged("refused /registry/compliance-shadow.json")
        assert served.request("GET", "/api/compliance").status == 200
    finally:
        planted.unlink()
        aside.rename(planted)
    assert served.request("GET", "/registry/compliance-shadow.json").status == 200


def test_the_access_log_is_on_stderr_as_its_help_says(logging_access: Served) -> None:
    assert logging_access.request("GET", "/health?probe=access-log").status == 400
    assert logging_access.logged('"GET /health?probe=access-log HTTP/1.1" 400')


def test_pipelined_requests_and_a_body_pass_the_guard_in_order(served: Served) -> None:
    # Two requests in one write, the first with a body: each answered, in order.
    with socket.create_connection(("127.0.0.1", served.port), timeout=30) as sock:
        sock.sendall(
            b"POST /health HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"
            b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    assert data.startswith(b"HTTP/1.1 405 ")
    assert data.count(b"HTTP/1.1 200 ") == 1 and data.index(b" 405 ") < data.index(b" 200 ")


def test_a_head_sent_a_byte_at_a_time_is_answered(served: Served) -> None:
    request = b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    with socket.create_connection(("127.0.0.1", served.port), timeout=30) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for byte in request:
            sock.sendall(bytes([byte]))
        answer = _read_answer(sock)
    assert answer.status == 200 and json.loads(answer.body)["ok"] is True


def test_a_chunked_request_body_is_refused_with_the_json_error_body(served: Served) -> None:
    answer = served.raw(
        b"POST /health HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
    )
    assert answer.status == 400 and _error_code(answer) == "bad_request" and answer.closed
