"""Canonical bytes (RFC 8785, JCS), SHA3-256 digests and HMAC-SHA3-256.

`canon(x)` is RFC 8785. The reference is the `rfc8785` package; it is pure Python and takes
seconds on a 500,000-row matrix, so `canon` first serialises with orjson (sorted keys, compact)
and keeps that only where the two are provably the same bytes:
- no float anywhere (JCS formats floats with ECMAScript rules; orjson does not). In compact output
  a number token stands between a structural character (`[`, `,`, `:`, or the start) and another
  (`,`, `}`, `]`, or the end), and a float token has a fraction or an exponent, so every float
  matches _FLOAT_TOKEN. A string that merely looks like one (`"x:1.5,"`) only sends us to the
  slow path, never to a wrong answer; timestamps such as `04:06:00.000Z` do not match.
- no character at or above U+E000 (JCS sorts keys by UTF-16 code units, orjson by code points;
  the two orders agree below U+E000);
- integers within 2**53 (OPT_STRICT_INTEGER raises otherwise).
String escaping is identical; tests/test_canon.py proves the fast path equals `rfc8785` under
property tests.
"""

from __future__ import annotations

import hashlib
import hmac as _hmac
import re
from typing import Any

import orjson
import rfc8785

_FLOAT_TOKEN = re.compile(rb"[\[,:]-?[0-9]+(?:\.[0-9]+(?:[eE][-+]?[0-9]+)?|[eE][-+]?[0-9]+)[,}\]]")
_HIGH_CHAR = re.compile(rb"[\xee-\xf4]")


def canon(value: Any) -> bytes:
    try:
        fast = orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_STRICT_INTEGER)
    except orjson.JSONEncodeError:
        return rfc8785.dumps(value)
    if type(value) is float or _FLOAT_TOKEN.search(fast) or _HIGH_CHAR.search(fast):
        return rfc8785.dumps(value)
    return fast


def canon_reference(value: Any) -> bytes:
    """The slow reference implementation, for tests and benchmarks."""
    return rfc8785.dumps(value)


def digest(data: bytes) -> str:
    """H(b): lowercase hex SHA3-256."""
    return hashlib.sha3_256(data).hexdigest()


def mac(data: bytes, secret: str) -> str:
    """M(b): lowercase hex HMAC-SHA3-256 keyed with the UTF-8 bytes of the secret."""
    return _hmac.new(secret.encode("utf-8"), data, hashlib.sha3_256).hexdigest()


def same_mac(a: str, b: str) -> bool:
    return _hmac.compare_digest(a.encode("ascii", "replace"), b.encode("ascii", "replace"))
