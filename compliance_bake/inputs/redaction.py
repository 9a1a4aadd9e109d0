"""Removing secrets from text before it reaches a file, a draft, a report or the terminal.

Text from outside (a service's answers, a URL the operator typed, a document's fields) may hold a
credential: the agent key a service echoes back, a URL's user name and password, a token in its
query. `redacted` removes them wherever such text is written or shown, so one rule says what is
a credential: every copy of a secret the process holds is replaced by a marker naming what stood
there, and every URL in the text keeps its scheme, host, port and path only (the user name,
password, query and fragment may each carry a credential, and which of them do cannot be told
from outside). A database URL (`database=True`, a plays source) keeps its user name, connection
options and fragment, as docs/plays.md records it: it names the role the audit reads as, and only
the password, in the user part or the query (`?password=`), is a credential there.

Pure and cheap on text with neither a secret nor `://` in it (one substring search each): the
HTTP target runs every answer's texts through it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

SECRET_SHOWN = "<secret>"
# A URL as it sits in text: a scheme, `://`, then up to the first character that ends a URL in
# prose, JSON or HTML (white space, a quote, an angle bracket, a backslash).
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]{0,31}://[^\s\"'<>\\`]*")


def _bare_url(match: re.Match[str]) -> str:
    scheme, _, rest = match.group().partition("://")
    end = len(rest)
    for mark in "/?#":
        found = rest.find(mark)
        if found != -1:
            end = min(end, found)
    host = rest[:end].rpartition("@")[2]  # no user name, no password
    path = rest[end:]
    for mark in "?#":  # no query, no fragment
        path = path.partition(mark)[0]
    return f"{scheme}://{host}{path}"


def _database_url(match: re.Match[str]) -> str:
    parts = urlsplit(match.group())
    user, at, host = parts.netloc.rpartition("@")
    query = urlencode([(k, v) for k, v in parse_qsl(parts.query) if k != "password"])
    netloc = user.partition(":")[0] + at + host
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def redacted(
    text: str,
    secrets: Iterable[str | None] = (),
    marker: str = SECRET_SHOWN,
    *,
    database: bool = False,
) -> str:
    """`text` with every copy of each secret as `marker`, and every URL without its user name,
    password, query and fragment (with `database`, without its password only)."""
    for secret in secrets:
        if secret and secret in text:
            text = text.replace(secret, marker)
    if "://" not in text:
        return text
    return _URL.sub(_database_url if database else _bare_url, text)
