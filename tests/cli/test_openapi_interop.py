"""`serve` as API tools read it: openapi-spec-validator accepts /openapi.json, every operation has
its own operationId, HEAD is documented wherever GET is, `Allow` names every method that works,
and every JSON answer says `charset=utf-8` as docs/service-api.md documents."""

from __future__ import annotations

import http.client
import json
import socket
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
from openapi_spec_validator import validate

from compliance_bake.identity.keyfile import mint_key
from tests.conftest import NOW, SECRET, invoke
from tests.support.live_service import LiveService

JSON_UTF8 = "application/json; charset=utf-8"
CHECK = "/api/compliance/check"


class Live:
    def __init__(self, url: str, key: str) -> None:
        parts = urlsplit(url)
        self.host, self.port, self.key = parts.hostname or "", parts.port or 0, key

    def ask(self, method: str, path: str, key: bool = False) -> tuple[int, dict[str, str], bytes]:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=10)
        try:
            headers = {"Authorization": f"Bearer {self.key}"} if key else {}
            conn.request(method, path, headers=headers)
            answer = conn.getresponse()
            return answer.status, {k.lower(): v for k, v in answer.getheaders()}, answer.read()
        finally:
            conn.close()

    def raw(self, request: bytes) -> bytes:
        with socket.create_connection((self.host, self.port), timeout=10) as conn:
            conn.sendall(request)
            received = b""
            while chunk := conn.recv(65536):
                received += chunk
        return received


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    root = tmp_path_factory.mktemp("interop")
    keys_file = root / "agent-keys.json"
    key = mint_key(keys_file, "interop")
    out = root / "out"
    baked = invoke("bake", "snapshot", "--out", str(out), "--now", NOW,
                   env={"REPORT_SIGNING_SECRET": SECRET})  # fmt: skip
    assert baked.exit_code == 0
    with LiveService(keys_file=keys_file, out_dir=out, cwd=root) as service:
        yield Live(service.url, key)


def _document(live: Live) -> dict[str, object]:
    status, headers, body = live.ask("GET", "/openapi.json")
    assert status == 200 and headers["content-type"] == JSON_UTF8
    doc: dict[str, object] = json.loads(body)
    return doc


def test_openapi_spec_validator_accepts_the_document(live: Live) -> None:
    validate(_document(live))  # raises on a duplicate operationId, among others


def test_the_validator_refuses_a_duplicate_operation_id(live: Live) -> None:
    """The check above can fail: the document as it was (HEAD sharing GET's id) is refused."""
    doc = _document(live)
    paths = doc["paths"]
    assert isinstance(paths, dict)
    file_route = paths["/api/compliance"]
    file_route["head"]["operationId"] = file_route["get"]["operationId"]
    with pytest.raises(Exception, match="not unique"):
        validate(doc)


def test_every_get_has_a_head_of_its_own(live: Live) -> None:
    paths = _document(live)["paths"]
    assert isinstance(paths, dict)
    ids = [op["operationId"] for ops in paths.values() for op in ops.values()]
    assert len(ids) == len(set(ids))
    for path, operations in paths.items():
        assert set(operations) == {"get", "head"}, path
        head = operations["head"]
        assert head.get("parameters") == operations["get"].get("parameters"), path
        assert all("content" not in answer for answer in head["responses"].values()), path


@pytest.mark.parametrize(
    ("method", "path"),
    [("POST", "/health"), ("PUT", "/api/compliance"), ("DELETE", "/api/compliance/check")],
)
def test_allow_names_every_method_that_works(live: Live, method: str, path: str) -> None:
    status, headers, body = live.ask(method, path)
    assert status == 405 and headers["content-type"] == JSON_UTF8
    allowed = [m.strip() for m in headers["allow"].split(",")]
    assert allowed == ["GET", "HEAD"]
    assert json.loads(body)["error"]["message"] == "method not allowed; use GET or HEAD"
    for works in allowed:
        assert live.ask(works, path, key=True)[0] != 405, works


@pytest.mark.parametrize(
    ("method", "path", "key", "status"),
    [
        ("GET", "/health", False, 200),
        ("HEAD", "/health", False, 200),
        ("GET", f"{CHECK}?partner=node-bay-01&state=MA&wagerType=basketball.totals", True, 200),
        ("GET", "/api/compliance/check?partner=node-bay-01&state=NJ&wagerType=x", True, 403),
        ("GET", "/api/compliance/status?state=MA&partner=node-bay-01", True, 200),
        ("GET", "/api/compliance/check?partner=p", True, 400),
        ("GET", "/api/compliance/check?partner=p&state=MA&wagerType=x", False, 401),
        ("GET", "/api/compliance", False, 200),
        ("GET", "/registry/compliance-shadow.json", False, 200),
        ("GET", "/no-such-route", False, 404),
    ],
)
def test_every_json_answer_says_its_charset(
    live: Live, method: str, path: str, key: bool, status: int
) -> None:
    got, headers, _ = live.ask(method, path, key=key)
    assert got == status
    assert headers["content-type"] == JSON_UTF8


def test_the_parser_refusal_says_its_charset_too(live: Live) -> None:
    answer = live.raw(b"BREW /health HTTP/1.1\r\nHost: x\r\n\r\n")
    head = answer.split(b"\r\n\r\n", 1)[0].decode("latin-1").lower().splitlines()
    assert head[0].startswith("http/1.1 400")
    assert f"content-type: {JSON_UTF8}" in head


def test_the_portal_stays_html(live: Live) -> None:
    status, headers, _ = live.ask("GET", "/portal/compliance/")
    assert status == 200 and headers["content-type"] == "text/html; charset=utf-8"
