"""The HTTP target's wire format: the target URL, Retry-After, and strict decoding of answers."""

from __future__ import annotations

import json
import re
from email.utils import formatdate
from typing import Any

import pytest

from compliance_bake.errors import InputError, TargetError
from compliance_bake.inputs.models import Decision, Health
from compliance_bake.targets import contract
from compliance_bake.targets.answers import (
    Answer,
    decode_check,
    decode_health,
    decode_status,
    error_detail,
)
from compliance_bake.targets.interface import CheckRequest
from compliance_bake.targets.profile_file import builtin_profile
from compliance_bake.targets.refusals import parse_retry_after, redirected
from compliance_bake.targets.routes import parse_target_url


def _answer(operation: str, base: str = "http://127.0.0.1:1") -> Answer:
    profile = builtin_profile()
    return Answer(getattr(profile, operation), base, profile)


@pytest.mark.parametrize(
    ("url", "base"),
    [
        ("http://127.0.0.1:8000", "http://127.0.0.1:8000"),
        ("http://127.0.0.1:8000/", "http://127.0.0.1:8000"),
        ("HTTPS://Compliance.Example.COM/pre/fix/", "https://compliance.example.com/pre/fix"),
        ("http://usr:pw-Sekrit@127.0.0.1:8000/x", "http://127.0.0.1:8000/x"),
        ("http://[::1]:9000", "http://[::1]:9000"),
        ("  http://localhost  ", "http://localhost"),
    ],
)
def test_the_base_is_the_url_without_credentials(url: str, base: str) -> None:
    parsed = parse_target_url(url)
    assert parsed.base == base
    assert parsed.url("/health") == base + "/health"


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("ftp://usr:pw-Sekrit@h/", "scheme must be http or https, not 'ftp'"),
        ("127.0.0.1:8000", "scheme must be http or https"),
        ("http://", "no host"),
        ("http://usr:pw-Sekrit@", "no host"),
        ("http://usr:pw-Sekrit@h:99999", "bad host or port"),
        ("http://h/?partner=x", "query or fragment"),
        ("http://h/#top", "query or fragment"),
        ("", "scheme must be http or https, not none"),
    ],
)
def test_a_bad_url_is_bad_usage_and_never_echoed(url: str, says: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_target_url(url)
    line = caught.value.one_line()
    assert line.startswith("--target: ") and says in line
    assert "pw-Sekrit" not in line and "usr" not in line


def test_queries_are_percent_encoded() -> None:
    profile = builtin_profile()
    query = profile.check.target({"partner": "node a&b=c", "state": "MA", "wagerType": "x/y"})
    assert query == "/api/compliance/check?partner=node%20a%26b%3Dc&state=MA&wagerType=x%2Fy"
    status = profile.status.target({"state": "MA", "partner": "p?"})
    assert status == "/api/compliance/status?state=MA&partner=p%3F"


def test_retry_after_in_seconds_or_as_an_http_date() -> None:
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after(" 0 ") == 0.0
    now = 1_800_000_000.0
    assert parse_retry_after(formatdate(now + 10, usegmt=True), now) == pytest.approx(10)
    assert parse_retry_after(formatdate(now - 60, usegmt=True), now) == 0.0
    for unusable in (None, "", "-1", "soon", "1.5", "Mon, 99 Foo 2026"):
        assert parse_retry_after(unusable, now) is None


ASKED = CheckRequest("node-bay-01", "NJ", "soccer.moneyline")
ECHO = {"partner": "node-bay-01", "state": "NJ", "wagerType": "soccer.moneyline"}
BLOCKED = {"allowed": False, "status": 403, "reason": "Partner not licensed in NJ", **ECHO}
ALLOWED = {"allowed": True, "status": 200, **ECHO}


def _decode(status: int, body: Any, compact: bool = True) -> Decision:
    if isinstance(body, bytes):
        raw = body
    else:
        separators = (",", ":") if compact else (", ", ": ")
        raw = json.dumps(body, separators=separators).encode()
    return decode_check(_answer("check"), status, {}, raw, ASKED)


@pytest.mark.parametrize("compact", [True, False], ids=["compact", "spaced"])
def test_good_answers_decode(compact: bool) -> None:
    assert _decode(403, BLOCKED, compact) == Decision(False, 403, "Partner not licensed in NJ")
    assert _decode(200, ALLOWED, compact) == Decision(True, 200)


@pytest.mark.parametrize(
    ("status", "body", "decision"),
    [
        (200, {"allowed": True, "status": 200}, Decision(True, 200)),
        (403, {"allowed": False, "status": 403}, Decision(False, 403)),
        (403, {k: v for k, v in BLOCKED.items() if k != "reason"}, Decision(False, 403)),
        (
            403,
            {k: v for k, v in BLOCKED.items() if k != "wagerType"},
            Decision(False, 403, "Partner not licensed in NJ"),
        ),
        (200, {**ALLOWED, "servedBy": "edge-7", "latencyMs": 3}, Decision(True, 200)),
    ],
    ids=["spec-allowed", "spec-blocked", "no-reason", "partial-echo", "extra-fields"],
)
def test_the_spec_shape_is_enough_and_extra_fields_are_ignored(
    status: int, body: dict[str, Any], decision: Decision
) -> None:
    assert _decode(status, body) == decision


@pytest.mark.parametrize(
    ("status", "body", "says"),
    [
        (200, b"<html>oops</html>", "not strict JSON"),
        (200, b"", "not strict JSON"),
        (200, b'{"allowed": NaN}', "not strict JSON"),
        (200, b"\xff\xfe", "not strict JSON (not UTF-8"),
        (200, b'["allowed"]', "an array, not a JSON object"),
        (200, {**ALLOWED, "allowed": "true"}, "`allowed` is a string, not a boolean"),
        (200, {**ALLOWED, "allowed": 1}, "`allowed` is an integer, not a boolean"),
        (200, {**ALLOWED, "status": True}, "`status` is a boolean, not an integer"),
        (200, {**ALLOWED, "status": "200"}, "`status` is a string, not an integer"),
        (200, json.dumps({**ALLOWED, "status": 200.0}).encode(), "not a whole number"),
        (200, {k: v for k, v in ALLOWED.items() if k != "allowed"}, "`allowed` is missing"),
        (403, {**BLOCKED, "allowed": True}, "an HTTP 403 with allowed: true"),
        (200, {**ALLOWED, "allowed": False}, "an HTTP 200 with allowed: false"),
        (200, BLOCKED, "`status` 403 disagrees with the HTTP status 200"),
        (403, ALLOWED, "`status` 200 disagrees with the HTTP status 403"),
        (200, {**ALLOWED, "reason": "x"}, "an allowed check carries a `reason`"),
        (403, {**BLOCKED, "reason": ""}, "`reason` is empty"),
        (403, {**BLOCKED, "reason": None}, "`reason` is null, not a string"),
        (403, {**BLOCKED, "partner": "node-shore-02"}, "answered another question"),
        (403, {**BLOCKED, "state": "MA"}, "asked state='NJ', got 'MA'"),
        (403, {**BLOCKED, "wagerType": None}, "`wagerType` is null, not a string"),
        (403, {**BLOCKED, "partner": 7}, "`partner` is an integer, not a string"),
        (200, {"allowed": True}, "`status` is missing"),
        (
            200,
            b'{"allowed":false,"allowed":true,"status":200,"partner":"node-bay-01",'
            b'"state":"NJ","wagerType":"soccer.moneyline"}',
            "duplicate key 'allowed'",
        ),
        (200, b'{"allowed":true,"status":200,"partner":"\\ud800"}', "not strict JSON"),
    ],
)
def test_doubtful_answers_are_target_errors_naming_the_route(
    status: int, body: Any, says: str
) -> None:
    with pytest.raises(TargetError) as caught:
        _decode(status, body)
    line = caught.value.one_line()
    assert line.startswith("GET /api/compliance/check: ") and says in line, line
    assert "`compliance-bake docs service-api`" in line


def test_health_and_status_answers() -> None:
    answer = _answer("health", "http://h")
    health, runtime = decode_health(
        answer, 200, {}, b'{"ok": true, "states": ["MA", "NJ"], "runtime": "CPython 3.11.7"}'
    )
    assert health.states == ("MA", "NJ") and runtime == "CPython 3.11.7"
    spec_only = decode_health(answer, 200, {}, b'{"ok": true, "states": ["MA"]}')
    assert spec_only == (Health(ok=True, states=("MA",)), contract.RUNTIME_UNKNOWN)
    for raw, says in [
        (b'{"ok": true, "states": ["MA", 1], "runtime": "x"}', "`states[1]` is an integer"),
        (b'{"ok": true, "states": [], "runtime": " "}', "`runtime` is empty"),
        (b'{"ok": "yes", "states": [], "runtime": "x"}', "`ok` is a string"),
        (b'{"ok": true, "states": [], "runtime": null}', "`runtime` is null, not a string"),
        (b'{"ok": true, "states": "MA"}', "`states` is a string, not an array"),
        (b'{"states": []}', "`ok` is missing"),
    ]:
        with pytest.raises(TargetError, match="^GET /health: " + re.escape(says)):
            decode_health(answer, 200, {}, raw)
    status = _answer("status", "http://h")
    panel = b'{"ok": true, "state": "NJ", "licenseStatus": "active", "hasLimits": true}'
    with pytest.raises(TargetError, match="answered another question"):
        decode_status(status, 200, {}, panel, "MA")
    with pytest.raises(TargetError, match="`hasLimits` is missing"):
        decode_status(status, 200, {}, b'{"ok": true, "state": "MA", "licenseStatus": "x"}', "MA")


def test_error_details_are_short_and_never_raise() -> None:
    raw = b'{"error": {"code": "not_found", "message": "no such route"}}'
    assert error_detail(raw) == " (not_found: no such route)"
    for odd in (b"", b"[]", b'{"error": 1}', b'{"error": {"code": 1}}', b"\xff"):
        assert error_detail(odd) == ""
    long = json.dumps({"error": {"code": "x", "message": "y" * 500}}).encode()
    assert len(error_detail(long)) < 100


@pytest.mark.parametrize(
    ("location", "says"),
    [
        ("http://localhost:8000/x", "to another host (http://localhost:8000); not followed, and"),
        ("https://127.0.0.1:8000/x", "to another host (https://127.0.0.1:8000)"),
        ("http://127.0.0.1:8001/x", "to another host (http://127.0.0.1:8001)"),
        ("http://usr:pw-Sekrit@evil.example/", "to another host (http://evil.example:80)"),
        ("//evil.example/x", "to another host (http://evil.example:80)"),
        ("/elsewhere", "to /elsewhere; redirects are not followed"),
        ("http://127.0.0.1:8000/other", "to /other; redirects are not followed"),
        (None, "without a usable Location"),
        ("http://[bad", "without a usable Location"),
    ],
)
def test_redirects_are_refused_and_name_where_they_went(location: str | None, says: str) -> None:
    answer = _answer("health", "http://127.0.0.1:8000")
    line = redirected(answer, "http://127.0.0.1:8000/health", 302, location).one_line()
    assert line.startswith("GET /health: redirected (HTTP 302) ") and says in line, line
    assert "pw-Sekrit" not in line and "usr" not in line
