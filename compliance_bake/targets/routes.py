"""The HTTP target's address: `--target` parsed, and server-sent values shortened for messages.

Where each question is asked under that address is the target profile's (`profile.py`). Pure
functions, no sockets. The messages never quote the URL's credentials.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from urllib.parse import urlsplit

from compliance_bake.errors import InputError

_SHOWN = 60  # characters of a server-sent value quoted in a message
# Seconds a request may take, connect to last byte: `--timeout`'s default, for a target's
# request and a fetch's whole exchange alike.
DEFAULT_TIMEOUT = 30.0


def shown(value: object, quoted: bool = True) -> str:
    """A server-sent value, short and on one line, for a message (Python's repr, or the text
    itself when not `quoted`)."""
    if isinstance(value, str) and not quoted:
        return _cut(value[: _SHOWN + 1])
    return _cut(_head(value, repr))


def shown_json(value: object) -> str:
    """A JSON value as compact JSON, short, for a message."""
    return _cut(_head(value, _json_scalar, ":", ","))


def _cut(text: str) -> str:
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


def _json_scalar(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, default=repr)


class _Mark(str):
    """Punctuation the rendering adds (a bracket, a comma), told apart from a value's text."""


def _parts(value: object, colon: str, comma: str) -> Iterator[object]:
    """The marks and the values one level down of a list or an object."""
    if isinstance(value, dict):
        yield _Mark("{")
        for index, (key, item) in enumerate(value.items()):
            if index:
                yield _Mark(comma)
            yield from (key, _Mark(colon), item)
        yield _Mark("}")
    else:
        assert isinstance(value, list | tuple)
        yield _Mark("[")
        for index, item in enumerate(value):
            if index:
                yield _Mark(comma)
            yield item
        yield _Mark("]")


def _head(
    value: object, scalar: Callable[[object], str], colon: str = ": ", comma: str = ", "
) -> str:
    """The first _SHOWN + 1 characters of `value` rendered, built no further: a value of a
    million items, or one that nests a list in itself a hundred times over (which a JMESPath
    `[@, @]` makes), costs what the characters shown cost. Without recursion."""
    out: list[str] = []
    size = 0
    stack: list[Iterator[object]] = [iter((value,))]
    while stack and size <= _SHOWN:
        item = next(stack[-1], _END)
        if item is _END:
            stack.pop()
            continue
        if isinstance(item, _Mark):
            text = str(item)
        elif isinstance(item, dict | list | tuple):
            stack.append(_parts(item, colon, comma))
            continue
        elif isinstance(item, str):
            text = scalar(item[: _SHOWN + 1])
        else:
            text = scalar(item)
        out.append(text)
        size += len(text)
    return "".join(out)


_END = object()


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
