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
Both checks scan the serialised bytes at memory speed (a large matrix is tens of megabytes,
where the regex alone would be slow): the character check with `bytes.isascii` (and a byte
search otherwise); the float check on the bytes with every character that cannot occur in a float
token or around it deleted (`_FLOAT_TOKEN` matches there whenever it matches the whole text:
deleting other characters cannot break a match, only make more, which cost the slow path and
never a wrong answer), with a search for "digit, then `.`/`e`/`E`" and `_FLOAT_TOKEN` tried only
where such a pair ends a digit run, which is where a match must start.
NaN and the infinities are not JSON: orjson writes them as null where rfc8785 raises, so a value
holding one must not reach `canon` (reports are built from integers, and `loads_strict` refuses
them at the door). String escaping is identical; tests/signing/test_canon.py proves the fast
path equals `rfc8785` under property tests.

Two faster ways in, for the bake's own data and the strict parser's:
- `canon_floatless(value)` takes a `FloatFree` value: a type that cannot hold a float (mypy
  strict refuses one at the call site: `float` is not an `int`), so the float scan is skipped;
  the key-order check stays. tests/signing/test_canon.py holds it to `rfc8785` under property tests.
- `canon_parts(members)` assembles an object from the canonical bytes of its members. RFC 8785
  is compositional (an object is its members' canonical forms, keys sorted by UTF-16 code units,
  joined), so a block canonicalised once can be spliced into every larger form that holds it
  instead of being serialised again.
"""

from __future__ import annotations

import hashlib
import hmac as _hmac
import re
from collections.abc import Mapping, Sequence
from typing import Any, TypeAlias

import orjson
import rfc8785

_FLOAT_TOKEN = re.compile(rb"[\[,:]-?[0-9]+(?:\.[0-9]+(?:[eE][-+]?[0-9]+)?|[eE][-+]?[0-9]+)[,}\]]")
# The lead bytes of UTF-8 sequences for U+E000 and above.
_HIGH_BYTES = tuple(bytes((lead,)) for lead in range(0xEE, 0xF5))
# Digits become b"0", the characters that may follow the integer part of a float become b".",
# everything else b" ".
_MARKS = bytes(
    0x30 if 0x30 <= byte <= 0x39 else 0x2E if byte in b".eE" else 0x20 for byte in range(256)
)
_DIGIT_THEN_MARK = b"0."
# Every character that is neither part of a float token nor one that may stand around it
# (the structural characters of `_FLOAT_TOKEN`, and `"` so that no match spans a string's end).
_NOT_NEAR_FLOAT = bytes(byte for byte in range(256) if byte not in b'0123456789.eE+-[,:]}"')
_DIGIT = 0x30
_MINUS = 0x2D
# Past this many candidate pairs, one regex search over the rest is cheaper than the walk.
_MAX_CANDIDATES = 1_000


# JSON built from these types holds no float: `float` is not assignable to `int` under mypy.
FloatFree: TypeAlias = "str | int | bool | None | Sequence[FloatFree] | Mapping[str, FloatFree]"


def canon(value: Any) -> bytes:
    try:
        fast = orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_STRICT_INTEGER)
    except orjson.JSONEncodeError:
        return rfc8785.dumps(value)
    if type(value) is float or _has_float_token(fast) or _has_high_char(fast):
        return rfc8785.dumps(value)
    return fast


def canon_floatless(value: FloatFree) -> bytes:
    """`canon(value)` for a value whose type cannot hold a float: no float scan."""
    try:
        fast = orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_STRICT_INTEGER)
    except orjson.JSONEncodeError:
        return rfc8785.dumps(value)
    if _has_high_char(fast):
        return rfc8785.dumps(value)
    return fast


def _utf16_order(key: str) -> bytes:
    return key.encode("utf-16-be", "surrogatepass")


def canon_parts(members: Mapping[str, Sequence[bytes]]) -> list[bytes]:
    """The canonical bytes of an object, as pieces to hash or join (nothing large is copied),
    from the pieces of its members' canonical bytes."""
    parts = [b"{"]
    for position, key in enumerate(sorted(members, key=_utf16_order)):
        parts.append((b"," if position else b"") + canon(key) + b":")
        parts.extend(members[key])
    parts.append(b"}")
    return parts


def _has_high_char(data: bytes) -> bool:
    """`re.search(rb"[\\xee-\\xf4]", data)`, at memory speed."""
    return not data.isascii() and any(lead in data for lead in _HIGH_BYTES)


def _has_float_token(data: bytes) -> bool:
    """True whenever `_FLOAT_TOKEN.search(data)` matches (and, rarely, when only the reduced
    bytes match: a string such as `"x:1y.5,"`)."""
    return _find_float_token(data.translate(None, _NOT_NEAR_FLOAT))


def _find_float_token(data: bytes) -> bool:
    """Whether `_FLOAT_TOKEN.search(data)` finds a match, without running the regex over it all.

    A match is a structural character, an optional minus, a digit run, then `.`, `e` or `E`: so
    it contains a digit followed by such a mark, where the digit ends a maximal digit run; and it
    can only start just before that run (or before its minus). Try the regex there and nowhere
    else.
    """
    marks = data.translate(_MARKS)
    at = marks.find(_DIGIT_THEN_MARK)
    tried = 0
    while at >= 0:
        start = at
        while start > 0 and marks[start - 1] == _DIGIT:
            start -= 1
        begin = start - 2 if start >= 2 and data[start - 1] == _MINUS else start - 1
        if begin >= 0 and _FLOAT_TOKEN.match(data, begin):
            return True
        tried += 1
        if tried > _MAX_CANDIDATES:
            return _FLOAT_TOKEN.search(data, at) is not None
        at = marks.find(_DIGIT_THEN_MARK, at + 1)
    return False


def digest(data: bytes) -> str:
    """H(b): lowercase hex SHA3-256."""
    return hashlib.sha3_256(data).hexdigest()


def digest_parts(parts: Sequence[bytes]) -> str:
    """H of the parts joined, without joining them."""
    hasher = hashlib.sha3_256()
    for part in parts:
        hasher.update(part)
    return hasher.hexdigest()


def mac(data: bytes, secret: str) -> str:
    """M(b): lowercase hex HMAC-SHA3-256 keyed with the UTF-8 bytes of the secret."""
    return _hmac.new(secret.encode("utf-8"), data, hashlib.sha3_256).hexdigest()


def same_mac(a: str, b: str) -> bool:
    return _hmac.compare_digest(a.encode("ascii", "replace"), b.encode("ascii", "replace"))
