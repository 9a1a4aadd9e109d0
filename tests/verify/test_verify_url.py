"""`verify URL`: a snapshot published over HTTP (loopback), fetched with the target's rules."""

from __future__ import annotations

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
    routes: dict[str, tuple[int, dict[str, str], bytes]] = {}

    def do_GET(self) -> None:  # noqa: N802 (the stdlib's name)
        status, headers, body = self.routes.get(self.path, (404, {}, b"{}"))
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
    handler = type("Handler", (_Publisher,), {"routes": routes})
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
        ((200, {}, b"x" * 2048), "over the cap"),
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
    if expected != "over the cap":
        result = invoke("verify", url)
        assert result.exit_code == 3
        assert url in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_an_unreachable_or_malformed_url_is_exit_3() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    for url in (f"http://127.0.0.1:{port}/api/compliance", "http://127.0.0.1:80x/api"):
        result = invoke("verify", url)
        assert result.exit_code == 3, result.output
        assert url in result.stderr
