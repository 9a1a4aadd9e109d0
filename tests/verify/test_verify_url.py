"""`verify URL`: a snapshot published over HTTP (loopback), fetched with the target's rules."""

from __future__ import annotations

import gzip
import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from compliance_bake.errors import TargetError
from compliance_bake.inputs.jsonio import loads_strict
from compliance_bake.targets.fetch import fetch_document
from tests._resign import resign
from tests.conftest import SECRET, invoke


class _Publisher(BaseHTTPRequestHandler):
    """Answers each path from `routes`: one answer, or a list of answers given in turn (the
    last one again once the others are used). `hits` counts the requests of each path."""

    routes: dict[str, Any] = {}
    hits: dict[str, int] = {}

    def do_GET(self) -> None:  # noqa: N802 (the stdlib's name)
        answer = self.routes.get(self.path, (404, {}, b"{}"))
        count = self.hits[self.path] = self.hits.get(self.path, 0) + 1
        if isinstance(answer, list):
            answer = answer[min(count, len(answer)) - 1]
        status, headers, body = answer
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: Any) -> None:
        pass


@pytest.fixture
def publisher() -> Iterator[tuple[str, dict[str, tuple[int, dict[str, str], bytes]]]]:
    routes: dict[str, tuple[int, dict[str, str], bytes]] = {}
    handler = type("Handler", (_Publisher,), {"routes": routes, "hits": {}})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", routes
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def _messy(doc: dict[str, Any]) -> bytes:
    return json.dumps(doc, sort_keys=True, separators=(" , ", " : ")).encode()


def test_a_published_re_serialised_snapshot_verifies_and_a_re_signed_edit_fails(
    baked: Path, publisher: tuple[str, dict[str, Any]]
) -> None:
    base, routes = publisher
    doc = loads_strict((baked / "api" / "compliance.json").read_bytes())
    routes["/api/compliance"] = (200, {"Content-Type": "application/json"}, _messy(doc))
    result = invoke("verify", f"{base}/api/compliance")
    assert result.exit_code == 0, result.output
    assert "verified" in result.output and "applied (url)" in result.output

    doc["shadow"]["rows"][0]["reason"] = "Partner not licensed in NJ"  # row 0 is allowed
    resign(doc, SECRET)
    routes["/api/compliance"] = (200, {}, _messy(doc))
    result = invoke("verify", f"{base}/api/compliance")
    assert result.exit_code == 1, result.output
    assert "rule shadow-reason:" in result.output


@pytest.mark.parametrize(
    ("route", "expected"),
    [
        ((302, {"Location": "/elsewhere"}, b""), "redirect, not followed"),
        ((404, {}, b"{}"), "answered 404"),
        ((200, {}, b"x" * 2048), "over the 1024-byte limit"),
    ],
    ids=["redirect", "not-found", "too-big"],
)
def test_a_fetch_failure_is_exit_3_naming_the_url(
    publisher: tuple[str, dict[str, Any]], route: tuple[int, dict[str, str], bytes], expected: str
) -> None:
    base, routes = publisher
    routes["/api/compliance"] = route
    url = f"{base}/api/compliance"
    with pytest.raises(TargetError) as caught:
        fetch_document(url, timeout=10, max_bytes=1024)
    assert url in caught.value.message and expected in caught.value.message
    if expected != "over the 1024-byte limit":
        result = invoke("verify", url)
        assert result.exit_code == 3
        assert url in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_a_fetch_retries_a_busy_server_within_its_one_deadline(
    publisher: tuple[str, dict[str, Any]],
) -> None:
    """A GET is retried as the HTTP target's are (targets/transport.py): a 503 then a 200 is
    the 200; a 503 every time fails after the attempts, counted; a 404 is asked once; and a
    Retry-After longer than the deadline does not stretch it."""
    base, routes = publisher
    hits = _hits(routes)
    routes["/flaky"] = [(503, {}, b"{}"), (200, {}, b'{"ok": true}')]
    assert fetch_document(f"{base}/flaky", timeout=10, max_bytes=1024) == b'{"ok": true}'
    assert hits["/flaky"] == 2

    routes["/down"] = (503, {}, b"{}")
    with pytest.raises(TargetError, match=r"/down: HTTP 503 \(after 4 attempts\)"):
        fetch_document(f"{base}/down", timeout=10, max_bytes=1024)
    assert hits["/down"] == 4

    with pytest.raises(TargetError, match="answered 404 Not Found"):
        fetch_document(f"{base}/absent", timeout=10, max_bytes=1024)
    assert hits["/absent"] == 1

    routes["/later"] = (503, {"Retry-After": "4"}, b"{}")
    with pytest.raises(TargetError, match=r"timed out after [0-9.]+ s \(the limit is 1 s\)"):
        fetch_document(f"{base}/later", timeout=1, max_bytes=1024)
    assert hits["/later"] == 1  # the wait for the second attempt outlasted the deadline


def test_a_compressed_answer_is_read_whole_and_capped_as_it_is_unpacked(
    publisher: tuple[str, dict[str, Any]],
) -> None:
    base, routes = publisher
    body = b'{"ok": true}'
    routes["/small"] = (200, {"Content-Encoding": "gzip"}, gzip.compress(body))
    assert fetch_document(f"{base}/small", timeout=10, max_bytes=1024) == body
    routes["/bomb"] = (200, {"Content-Encoding": "gzip"}, gzip.compress(b"0" * (1 << 20)))
    with pytest.raises(TargetError, match="over the 1024-byte limit"):
        fetch_document(f"{base}/bomb", timeout=10, max_bytes=1024)


def _hits(routes: dict[str, Any]) -> dict[str, int]:
    """The publisher's request counts (the handler class the fixture made holds both)."""
    for handler in _Publisher.__subclasses__():
        if handler.routes is routes:
            return handler.hits
    raise AssertionError("no publisher serves these routes")


def test_an_unreachable_or_malformed_url_is_exit_3() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    for url in (f"http://127.0.0.1:{port}/api/compliance", "http://127.0.0.1:80x/api"):
        result = invoke("verify", url)
        assert result.exit_code == 3, result.output
        assert url in result.stderr


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (b"", "it is empty"),
        (b"<html>hello</html>", "not JSON at line 1 column 1"),
        (b'{"hello": 1}', "the JSON object holds none of a snapshot's blocks"),
    ],
    ids=["empty", "html", "other-object"],
)
@pytest.mark.parametrize("with_key", [False, True], ids=["secret", "public-key"])
def test_a_url_whose_answer_is_not_a_snapshot_is_exit_3_with_no_verdict(
    publisher: tuple[str, dict[str, Any]], tmp_path: Path, body: bytes, words: str, with_key: bool
) -> None:
    """A fetched source that answered malformed data: one line naming the URL, exit 3."""
    from tests._attest_helpers import mint

    base, routes = publisher
    routes["/api/compliance.json"] = (200, {"Content-Type": "application/json"}, body)
    url = f"{base}/api/compliance.json"
    extra = ["--public-key", str(mint(tmp_path).public)] if with_key else []
    result = invoke("verify", url, *extra)
    assert result.exit_code == 3, result.output
    assert result.stdout == "", result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert f"{url}: the answer is not a snapshot: {words}" in lines[0]
