"""The service as a real process on a loopback port: routes, errors, agent keys, read-only files."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode, urlsplit

import pytest

from compliance_bake.identity.keyfile import load_keys, mint_key, revoke_key
from tests.conftest import invoke
from tests.support.live_service import LiveService

CHECK = "/api/compliance/check"
STATUS = "/api/compliance/status"
ALLOWED = {"partner": "node-bay-01", "state": "MA", "wagerType": "basketball.totals"}
BLOCKED = {"partner": "node-bay-01", "state": "NJ", "wagerType": "basketball.totals"}


class Service:
    def __init__(self, live: LiveService, key: str, revoked: str) -> None:
        self.live, self.key, self.revoked = live, key, revoked
        parts = urlsplit(live.url)
        self.host, self.port = parts.hostname or "", parts.port or 0

    def get(
        self, path: str, headers: dict[str, str | bytes] | None = None, method: str = "GET"
    ) -> tuple[int, dict[str, str], bytes]:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=10)
        try:
            conn.putrequest(method, path)
            for name, value in (headers or {}).items():
                conn.putheader(name, value)
            conn.endheaders()
            answer = conn.getresponse()
            return answer.status, {k.lower(): v for k, v in answer.getheaders()}, answer.read()
        finally:
            conn.close()

    def authed(self, path: str, params: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        return self.get(f"{path}?{urlencode(params)}", {"Authorization": f"Bearer {self.key}"})


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    root = tmp_path_factory.mktemp("service")
    keys_file = root / "agent-keys.json"
    key = mint_key(keys_file, "test")
    revoked = mint_key(keys_file, "old")
    revoke_key(keys_file, revoked[:5])
    with LiveService(keys_file=keys_file, out_dir=root / "out", cwd=root) as live:
        yield Service(live, key, revoked)


def test_health_is_public_and_names_the_runtime(service: Service) -> None:
    status, headers, body = service.get("/health")
    assert status == 200 and headers["content-type"] == "application/json; charset=utf-8"
    doc = json.loads(body)
    assert doc["ok"] is True and doc["states"] == ["MA", "NJ"]
    assert doc["runtime"].startswith("CPython ")


def test_check_allowed_and_blocked_echo_the_question(service: Service) -> None:
    status, headers, body = service.authed(CHECK, ALLOWED)
    assert status == 200 and headers["cache-control"] == "no-store"
    assert json.loads(body) == {"allowed": True, "status": 200, **ALLOWED}
    status, _, body = service.authed(CHECK, BLOCKED)
    assert status == 403
    assert json.loads(body) == {
        "allowed": False,
        "status": 403,
        "reason": "Partner not licensed in NJ",
        **BLOCKED,
    }


QUESTION = {**ALLOWED, "sport": "basketball", "market": "totals", "betType": "straight"}


@pytest.mark.parametrize(
    ("sent", "reason"),
    [
        ({"amount": "5000"}, None),
        ({"amount": "5000.01"}, "Exceeds max wager $5000"),
        ({"amount": "1"}, None),
        ({"amount": "0.99"}, "Below min wager $1"),
        ({"amount": "100", "betType": "teaser"}, "Bet type 'teaser' not allowed in MA"),
        ({"amount": "100", "age": "21"}, None),
        ({"amount": "100", "age": "20"}, "Minimum age 21 required in MA (got 20)"),
    ],
)
def test_a_check_with_the_question_s_fields_is_that_whole_question_echoed(
    service: Service, sent: dict[str, str], reason: str | None
) -> None:
    """The demo registry's MA basketball.totals row (5000 to 1, straight or parlay, 21)
    decides; the spec's three parameters alone allow every one of these."""
    asked = {**QUESTION, **sent}
    status, headers, body = service.authed(CHECK, asked)
    expected = {"allowed": reason is None, "status": status, **asked}
    assert status == (200 if reason is None else 403) and headers["cache-control"] == "no-store"
    assert json.loads(body) == expected | ({} if reason is None else {"reason": reason})


@pytest.mark.parametrize(
    ("query", "says"),
    [
        ("amount=12.345", "amount must be a number of whole cents"),
        ("amount=-1", "amount must be a number of whole cents"),
        ("amount=1e3", "amount must be a number of whole cents"),
        ("amount=1&amount=2", "amount is repeated"),
        ("age=twenty", "age must be a whole number of years"),
        ("age=21.5", "age must be a whole number of years"),
        ("zipCode=7030", "zipCode must be 5 digits"),
        ("betType=", "betType must be 1 to 128"),
        ("Amount=1", "unknown query parameter Amount"),
    ],
)
def test_a_bad_question_field_is_400_naming_it(service: Service, query: str, says: str) -> None:
    path = f"{CHECK}?{urlencode(ALLOWED)}&{query}"
    status, _, body = service.get(path, {"Authorization": f"Bearer {service.key}"})
    assert status == 400
    error = json.loads(body)["error"]
    assert error["code"] == "bad_request" and says in error["message"], error


def test_unregulated_state_is_a_block_not_an_error(service: Service) -> None:
    status, _, body = service.authed(CHECK, {**ALLOWED, "state": "TX"})
    assert status == 403 and json.loads(body)["reason"] == "Partner not licensed in TX"


def test_status_panel(service: Service) -> None:
    status, _, body = service.authed(STATUS, {"state": "MA", "partner": "node-bay-01"})
    assert status == 200
    assert json.loads(body) == {
        "ok": True,
        "state": "MA",
        "licenseStatus": "active",
        "hasLimits": True,
    }


@pytest.mark.parametrize(
    ("query", "names"),
    [
        ("state=MA&wagerType=x", "partner is missing"),
        ("partner=a&partner=b&state=MA&wagerType=x", "partner is repeated"),
        ("partner=&state=MA&wagerType=x", "partner must be 1 to 128"),
        (f"partner={'p' * 129}&state=MA&wagerType=x", "partner must be 1 to 128"),
    ],
)
def test_bad_parameters_are_400_with_the_error_shape(
    service: Service, query: str, names: str
) -> None:
    status, _, body = service.get(f"{CHECK}?{query}", {"Authorization": f"Bearer {service.key}"})
    assert status == 400
    error = json.loads(body)["error"]
    assert error["code"] == "bad_request" and names in error["message"]


def test_unknown_route_and_wrong_method(service: Service) -> None:
    status, _, body = service.get("/nope")
    assert (status, json.loads(body)["error"]["code"]) == (404, "not_found")
    status, _, body = service.get("/health", method="POST")
    assert (status, json.loads(body)["error"]["code"]) == (405, "method_not_allowed")


def _bad_keys(key: str, revoked: str) -> dict[str, dict[str, str | bytes]]:
    """Every way to present a bad key, as request headers."""
    prefix, rest = key[:5], key[6:]
    wrong_rest = rest[:-1] + ("A" if rest[-1] != "A" else "B")
    unknown_prefix = ("zzzzz" if prefix != "zzzzz" else "yyyyy") + key[5:]
    bearer = "Bearer "
    return {
        "missing": {},
        "malformed": {"Authorization": bearer + "not-a-key"},
        "empty": {"Authorization": bearer},
        "empty header": {"Authorization": ""},
        "prefix only": {"Authorization": bearer + prefix},
        "prefix and dot": {"Authorization": bearer + prefix + "."},
        "unknown prefix": {"Authorization": bearer + unknown_prefix},
        "wrong rest": {"Authorization": bearer + prefix + "." + wrong_rest},
        "revoked": {"Authorization": bearer + revoked},
        "wrong case": {"Authorization": bearer + key.upper()},
        "non-ASCII": {"Authorization": (bearer + key[:-2] + "é").encode("utf-8")},  # same length
        "leading space": {"Authorization": bearer + " " + key},
        "trailing space key": {"Authorization": bearer + key + " x"},
        "other scheme": {"Authorization": "Basic " + key},
        "no scheme": {"Authorization": key},
        "other header": {"X-Api-Key": key},
        "key plus one": {"Authorization": bearer + key + "A"},
    }


@pytest.mark.parametrize("path", [f"{CHECK}?{urlencode(ALLOWED)}", f"{STATUS}?state=MA&partner=x"])
def test_every_bad_key_gets_the_same_401(service: Service, path: str) -> None:
    bodies = {}
    for name, headers in _bad_keys(service.key, service.revoked).items():
        status, answer_headers, body = service.get(path, headers)
        assert status == 401, name
        assert answer_headers["www-authenticate"] == 'Bearer realm="compliance-bake"', name
        bodies[name] = body
    assert len(set(bodies.values())) == 1, bodies
    assert json.loads(next(iter(bodies.values())))["error"]["code"] == "unauthorized"
    # The good key passes on the same route: the refusals above are about the key alone.
    status, _, _ = service.get(path, {"Authorization": f"Bearer {service.key}"})
    assert status in (200, 403)


def test_bad_key_refused_before_parameters_are_read(service: Service) -> None:
    status, _, _ = service.get(f"{CHECK}?partner=a&partner=b", {"Authorization": "Bearer x"})
    assert status == 401


def test_scheme_name_is_case_insensitive(service: Service) -> None:
    status, _, _ = service.get(
        f"{CHECK}?{urlencode(ALLOWED)}", {"Authorization": f"bearer {service.key}"}
    )
    assert status == 200


@pytest.mark.parametrize(
    "path",
    [
        "/api/compliance",
        "/registry/compliance-enhancements.json",
        "/registry/compliance-shadow.json",
        "/portal/compliance/",
    ],
)
def test_snapshot_routes_404_with_a_clear_body_before_a_bake(service: Service, path: str) -> None:
    status, _, body = service.get(path)
    assert status == 404
    error = json.loads(body)["error"]
    assert error["code"] == "not_baked" and "bake snapshot" in error["message"]


def test_snapshot_routes_serve_the_baked_bytes(service: Service) -> None:
    out = service.live.out_dir
    assert invoke("bake", "snapshot", "--out", str(out)).exit_code == 0
    for path, relative in [
        ("/api/compliance", "api/compliance.json"),
        ("/registry/compliance-enhancements.json", "registry/compliance-enhancements.json"),
        ("/registry/compliance-shadow.json", "registry/compliance-shadow.json"),
        ("/portal/compliance/", "portal/compliance/index.html"),
    ]:
        status, headers, body = service.get(path)
        assert status == 200 and body == (out / relative).read_bytes(), path
        if path.startswith("/portal"):
            assert headers["content-type"] == "text/html; charset=utf-8"
            assert "default-src 'none'" in headers["content-security-policy"]
        status, _, body = service.get(path, method="HEAD")
        assert status == 200 and body == b""
    status, _, _ = service.get("/api/compliance", method="PUT")
    assert status == 405


def test_key_never_in_the_service_log(service: Service) -> None:
    service.authed(CHECK, ALLOWED)
    assert service.live.log, "the service logged nothing, not even its address"
    assert not any(service.key in line or service.key[6:] in line for line in service.live.log)


def test_openapi_documents_the_contract(service: Service) -> None:
    status, _, body = service.get("/openapi.json")
    doc = json.loads(body)
    assert status == 200 and doc["openapi"].startswith("3.")
    check = doc["paths"][CHECK]["get"]
    named = {p["name"]: p["required"] for p in check["parameters"]}
    assert named == {"partner": True, "state": True, "wagerType": True} | dict.fromkeys(
        ("sport", "market", "amount", "betType", "age", "zipCode"), False
    )
    assert set(doc["components"]["schemas"]["CheckAnswer"]["properties"]) >= set(named)
    assert set(check["responses"]) >= {"200", "400", "401", "403"}
    assert check["security"] == [{"agentKey": []}]
    assert doc["components"]["securitySchemes"]["agentKey"]["scheme"] == "bearer"
    assert "security" not in doc["paths"]["/health"]["get"]


def test_keys_file_stores_hashes_only(tmp_path: Path) -> None:
    keys_file = tmp_path / "keys.json"
    result = invoke("keys", "mint", "--keys-file", str(keys_file), "--label", "ci")
    assert result.exit_code == 0
    key = result.stdout.strip()
    text = keys_file.read_text()
    assert key not in text and key[6:] not in text and key[:5] in text
    assert keys_file.stat().st_mode & 0o777 == 0o600
    assert load_keys(keys_file).lookup(key) is not None
    listing = invoke("keys", "list", "--keys-file", str(keys_file), "--json")
    assert json.loads(listing.stdout) == [{"prefix": key[:5], "label": "ci", "revoked": False}]
    assert invoke("keys", "revoke", "--keys-file", str(keys_file), key[:5]).exit_code == 0
    assert load_keys(keys_file).lookup(key) is None


def test_keys_revoke_unknown_prefix_is_one_line_exit_2(tmp_path: Path) -> None:
    result = invoke("keys", "revoke", "--keys-file", str(tmp_path / "k.json"), "abcde")
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and "keys list" in result.stderr


def test_keys_file_writable_by_others_is_refused(tmp_path: Path) -> None:
    keys_file = tmp_path / "keys.json"
    mint_key(keys_file)
    keys_file.chmod(0o666)
    result = invoke("serve", "--keys-file", str(keys_file), "--port", "0")
    assert result.exit_code == 2 and "chmod 600" in result.stderr


def test_port_in_use_is_one_line_exit_2(service: Service) -> None:
    result = invoke("serve", "--port", str(service.port))
    assert result.exit_code == 2
    assert "cannot listen" in result.stderr and result.stderr.count("\n") == 1


def test_serve_warns_when_out_holds_no_bake(service: Service) -> None:
    import time

    deadline = time.monotonic() + 30  # generous: the line follows the address line at start-up
    while not any("holds no bake" in line for line in service.live.log):
        assert time.monotonic() < deadline, service.live.log
        time.sleep(0.05)
    (line,) = [line for line in service.live.log if "holds no bake" in line]
    assert "warning" in line and "bake snapshot --out" in line


def test_fetching_the_openapi_document_prints_nothing(tmp_path: Path) -> None:
    """`target profile init` fetches /openapi.json, so every newcomer's `serve` would print
    whatever building it warns: the document is built with no warning, every route included
    (the log route too), and every operation has an id of its own."""
    keys_file = tmp_path / "agent-keys.json"
    mint_key(keys_file, "test")
    (tmp_path / "log").mkdir()
    live = LiveService(
        keys_file=keys_file,
        out_dir=tmp_path / "out",
        cwd=tmp_path,
        extra_args=("--log", str(tmp_path / "log")),
    )
    with live:
        parts = urlsplit(live.url)
        conn = http.client.HTTPConnection(parts.hostname or "", parts.port or 0, timeout=10)
        try:
            conn.request("GET", "/openapi.json")
            answer = conn.getresponse()
            status, body = answer.status, answer.read()
        finally:
            conn.close()
    assert status == 200
    # stop() has read stderr to its end; the two start-up lines are all it holds.
    said = [line for line in live.log if "listening on" not in line]
    assert len(said) == 1 and "holds no bake" in said[0], said
    doc = json.loads(body)
    ids = [op["operationId"] for ops in doc["paths"].values() for op in ops.values()]
    assert len(ids) == len(set(ids)) and "/log/{path}" in doc["paths"]
