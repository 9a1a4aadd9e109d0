"""The HTTP target's wire format (docs/service-api.md): the target URL, the routes, and the
strict decoding of every answer.

Pure functions, no sockets: `http.py` moves the bytes, this module decides whether they are an
answer. Everything doubtful is a `TargetError` whose message starts with the method and route
(`GET /api/compliance/check: ...`) and never quotes the URL's credentials or the agent key.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from functools import lru_cache
from typing import Any
from urllib.parse import quote, urljoin, urlsplit

import orjson

from compliance_bake.errors import InputError, TargetError
from compliance_bake.inputs.jsonio import StrictJSONError, loads_strict
from compliance_bake.inputs.models import (
    STATUS_ALLOWED,
    STATUS_BLOCKED,
    Decision,
    Health,
    StatusPanel,
)
from compliance_bake.targets.interface import CheckRequest

ROUTE_HEALTH = "/health"
ROUTE_CHECK = "/api/compliance/check"
ROUTE_STATUS = "/api/compliance/status"
CONTRACT = "docs/service-api.md"
_SHOWN = 60  # characters of a server-sent value quoted in a message


@dataclass(frozen=True, slots=True)
class TargetUrl:
    """A parsed `--target`: origin and path prefix, credentials already dropped."""

    scheme: str
    host: str  # lowercase; an IPv6 address without brackets
    port: int
    prefix: str  # "" or "/some/prefix", no trailing slash
    explicit_port: bool

    @property
    def origin(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        netloc = f"{host}:{self.port}" if self.explicit_port else host
        return f"{self.scheme}://{netloc}"

    @property
    def base(self) -> str:
        """What `shadow.base` records and messages show: never a user name or password."""
        return self.origin + self.prefix

    def url(self, route: str, query: str = "") -> str:
        return f"{self.base}{route}?{query}" if query else f"{self.base}{route}"


def parse_target_url(text: str) -> TargetUrl:
    """Parse `--target`; refuse, as bad usage (exit 2), anything that is not an http(s) base URL.

    The messages never echo the URL: it may carry a password.
    """
    fix = "give the service's base URL, e.g. --target http://127.0.0.1:8000"
    try:
        parts = urlsplit(text.strip())
        port = parts.port
    except ValueError:
        raise InputError("--target: not a valid URL (bad host or port)", fix) from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        shown = repr(scheme[:_SHOWN]) if scheme else "none"
        raise InputError(f"--target: the URL's scheme must be http or https, not {shown}", fix)
    if not parts.hostname:
        raise InputError("--target: the URL has no host", fix)
    if parts.query or parts.fragment:
        raise InputError("--target: the URL must not have a query or fragment", fix)
    return TargetUrl(
        scheme=scheme,
        host=parts.hostname.lower(),
        port=port if port is not None else (443 if scheme == "https" else 80),
        prefix=parts.path.rstrip("/"),
        explicit_port=port is not None,
    )


@lru_cache(maxsize=1 << 16)
def _q(value: str) -> str:
    # A matrix asks about each partner once per state: quoting each value once saves ~2 us/check.
    return quote(value, safe="")


def check_query(request: CheckRequest) -> str:
    partner, state, wager_type = request
    return f"partner={_q(partner)}&state={_q(state)}&wagerType={_q(wager_type)}"


def status_query(state: str, partner: str) -> str:
    return f"state={_q(state)}&partner={_q(partner)}"


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP-date), or None."""
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # an HTTP-date is GMT; a date without a zone is read the same way
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def shown(value: object, quoted: bool = True) -> str:
    """A server-sent value, short and on one line, for a message."""
    text = repr(value) if quoted else str(value)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


def _kind(value: object) -> str:
    if value is None:
        return "null"
    return {
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "an array",
        dict: "an object",
    }.get(type(value), type(value).__name__)


class Answer:
    """Decodes one JSON answer for one route; every refusal names the route."""

    __slots__ = ("hint", "label")

    def __init__(self, label: str, base: str) -> None:
        self.label = label
        self.hint = f"the service at {base} does not answer as {CONTRACT} says; check its version"

    def fail(self, problem: str) -> TargetError:
        return TargetError(f"{self.label}: {problem}", self.hint)

    def body(self, raw: bytes) -> dict[str, Any]:
        fast = _compact_flat_object(raw)
        if fast is not None:
            return fast
        try:
            value = loads_strict(raw)
        except StrictJSONError as exc:
            raise self.fail(f"the answer is not strict JSON ({exc} at {exc.where})") from None
        if not isinstance(value, dict):
            raise self.fail(f"the answer is {_kind(value)}, not a JSON object")
        return value

    def field(self, body: dict[str, Any], name: str, kind: type) -> Any:
        if name not in body:
            raise self.fail(f"`{name}` is missing from the answer")
        value = body[name]
        if type(value) is not kind:
            raise self.fail(f"`{name}` is {_kind(value)}, not {_kind(kind())}")
        return value

    def echo(self, body: dict[str, Any], name: str, asked: str) -> None:
        got = self.field(body, name, str)
        if got != asked:
            raise self.fail(
                f"answered another question: asked {name}={shown(asked)}, got {shown(got)}"
            )


def _compact_flat_object(raw: bytes) -> dict[str, Any] | None:
    """The object in `raw` when `raw` is exactly orjson's compact text of a flat object of
    strings, booleans and integers (what a FastAPI service sends), else None.

    orjson refuses NaN, Infinity, bad UTF-8 and lone surrogates but keeps the last of duplicate
    keys; text that equals the serialisation of the parsed object has no duplicate (it would be
    longer) and no fraction (orjson writes 1.0 back, refused below). Four times faster than
    `loads_strict`, which decides every other case and gives the precise message.
    """
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    if type(value) is not dict or not all(type(v) in _FLAT for v in value.values()):
        return None
    return value if orjson.dumps(value) == raw else None


_FLAT = frozenset((str, bool, int))
_DECISIONS: dict[tuple[bool, int, str | None], Decision] = {}


def decode_check(answer: Answer, http_status: int, raw: bytes, request: CheckRequest) -> Decision:
    body = answer.body(raw)
    allowed = answer.field(body, "allowed", bool)
    status = answer.field(body, "status", int)
    if status != http_status:
        raise answer.fail(f"`status` {status} disagrees with the HTTP status {http_status}")
    if allowed != (status == STATUS_ALLOWED):
        raise answer.fail(f"an HTTP {status} with allowed: {'true' if allowed else 'false'}")
    reason: str | None = None
    if allowed:
        if "reason" in body:
            raise answer.fail("an allowed check carries a `reason`")
    else:
        reason = answer.field(body, "reason", str)
        if not reason:
            raise answer.fail("a blocked check has an empty `reason`")
    answer.echo(body, "partner", request.partner)
    answer.echo(body, "state", request.state)
    answer.echo(body, "wagerType", request.wager_type)
    key = (allowed, status, reason)
    # Decisions repeat (one reason per state); share them, as the engine does, to keep a
    # 500,000-row matrix small.
    decision = _DECISIONS.get(key)
    if decision is None:
        decision = Decision(allowed, status, reason)
        if len(_DECISIONS) < 4096:
            _DECISIONS[key] = decision
    return decision


def decode_health(answer: Answer, raw: bytes) -> tuple[Health, str]:
    body = answer.body(raw)
    ok = answer.field(body, "ok", bool)
    states = answer.field(body, "states", list)
    for index, code in enumerate(states):
        if type(code) is not str:
            raise answer.fail(f"`states[{index}]` is {_kind(code)}, not a string")
    runtime = answer.field(body, "runtime", str)
    if not runtime.strip():
        raise answer.fail("`runtime` is empty")
    return Health(ok=ok, states=tuple(states)), runtime


def decode_status(answer: Answer, raw: bytes, state: str) -> StatusPanel:
    body = answer.body(raw)
    panel = StatusPanel(
        ok=answer.field(body, "ok", bool),
        state=answer.field(body, "state", str),
        license_status=answer.field(body, "licenseStatus", str),
        has_limits=answer.field(body, "hasLimits", bool),
    )
    if panel.state != state:
        raise answer.fail(
            f"answered another question: asked state={shown(state)}, got {shown(panel.state)}"
        )
    return panel


def error_detail(raw: bytes) -> str:
    """`code: message` of an error body of the contract's shape, or "" (never raises)."""
    try:
        error = loads_strict(raw).get("error")
        code, message = error.get("code"), error.get("message")
    except (StrictJSONError, AttributeError):
        return ""
    if not isinstance(code, str) or not isinstance(message, str):
        return ""
    return f" ({shown(code, False)}: {shown(message, False)})"


CHECK_STATUSES = frozenset((STATUS_ALLOWED, STATUS_BLOCKED))
_DEFAULT_PORTS = {"http": 80, "https": 443}


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or ""), parts.port or _DEFAULT_PORTS.get(scheme)


def redirected(answer: Answer, url: str, status: int, location: str | None) -> TargetError:
    """A 3xx: never followed. Another origin gets its own words: the key was not sent there."""
    try:
        where = _origin(urljoin(url, location)) if location else None
    except ValueError:
        where = None
    if where is None or not where[1]:
        return answer.fail(f"redirected (HTTP {status}) without a usable Location; not followed")
    if where != _origin(url):
        scheme, host, port = where
        return TargetError(
            f"{answer.label}: redirected (HTTP {status}) to another host "
            f"({shown(f'{scheme}://{host}:{port}', False)}); not followed, and the agent key "
            "was not sent there",
            "point --target at the compliance service itself",
        )
    path = urlsplit(urljoin(url, location)).path
    return TargetError(
        f"{answer.label}: redirected (HTTP {status}) to {shown(path, False)}; "
        "redirects are not followed",
        f"give --target as the service's base URL ({CONTRACT})",
    )


def unauthorized(answer: Answer, has_key: bool) -> TargetError:
    what = "refused the agent key" if has_key else "needs an agent key and none was given"
    return TargetError(
        f"{answer.label}: HTTP 401: the service {what}",
        "pass --agent-key-file PATH or set COMPLIANCE_AGENT_KEY to a key from "
        "`compliance-bake keys mint` on the service",
    )


def unexpected(answer: Answer, status: int, raw: bytes, base: str) -> TargetError:
    return TargetError(
        f"{answer.label}: unexpected HTTP {status}{error_detail(raw)}",
        f"is {base} the base URL of a compliance service ({CONTRACT})?",
    )
