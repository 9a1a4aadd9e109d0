"""The HTTP target's address: `--target` parsed, and server-sent values shortened for messages.

Where each question is asked under that address is the target profile's (`profile.py`). Pure
functions, no sockets. The messages never quote the URL's credentials.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from compliance_bake.errors import InputError

_SHOWN = 60  # characters of a server-sent value quoted in a message


def shown(value: object, quoted: bool = True) -> str:
    """A server-sent value, short and on one line, for a message."""
    text = repr(value) if quoted else str(value)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


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
        named = repr(scheme[:_SHOWN]) if scheme else "none"
        raise InputError(f"--target: the URL's scheme must be http or https, not {named}", fix)
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
