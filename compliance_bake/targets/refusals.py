"""The HTTP target's words for answers that are not answers: a redirect, a 401, another status,
and how long a busy service asks to be left alone (Retry-After).

Pure functions, no sockets. No message quotes a credential or the agent key.
"""

from __future__ import annotations

import time
from email.utils import parsedate_to_datetime
from urllib.parse import urljoin, urlsplit

from compliance_bake.errors import TargetError
from compliance_bake.targets.answers import Answer, error_detail
from compliance_bake.targets.routes import shown

_DEFAULT_PORTS = {"http": 80, "https": 443}


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
        f"give --target as the service's base URL ({answer.contract})",
    )


# On the built-in profile, a 401, 404 or 405 most often means a service that chose other
# routes or another auth header than docs/service-api.md: say how to describe it.
_PROFILE_HINT = (
    "; if the service has other routes or another auth header, describe it with "
    "--target-profile FILE (`compliance-bake docs target-profiles`)"
)


def unauthorized(answer: Answer, has_key: bool, header: str) -> TargetError:
    what = "refused the agent key" if has_key else "needs an agent key and none was given"
    return TargetError(
        f"{answer.label}: HTTP 401: the service {what}",
        "pass --agent-key-file PATH or set COMPLIANCE_AGENT_KEY to a key from "
        f"`compliance-bake keys mint` on the service (sent in {header})"
        + (_PROFILE_HINT if answer.builtin else ""),
    )


def unexpected(answer: Answer, status: int, raw: bytes, base: str) -> TargetError:
    hint = f"is {base} the base URL of a compliance service ({answer.contract})?"
    if answer.builtin and status in (404, 405):
        hint += _PROFILE_HINT
    return TargetError(f"{answer.label}: unexpected HTTP {status}{error_detail(raw)}", hint)
