"""Canonical bytes (RFC 8785, JCS), SHA3-256 digests and HMAC-SHA3-256.

`canon(x)` is RFC 8785. The reference is the `rfc8785` package; it is pure Python and takes
seconds on a 500,000-row matrix, so `canon` first serialises with orjson (sorted keys, compact)
and keeps that only where the two are provably the same bytes:
- no float anywhere (JCS formats floats with ECMAScript rules; orjson does not): the float scan
  the strict reader uses too (inputs/jsonio.py `may_hold_float`) over the compact text, which a
  string that merely looks like a float only sends to the slow path, never to a wrong answer;
- no character at or above U+E000 (JCS sorts keys by UTF-16 code units, orjson by code points;
  the two orders agree below U+E000), found with `bytes.isascii` (and a byte search otherwise);
- integers within 2**53 (OPT_STRICT_INTEGER raises otherwise).
Both checks scan the serialised bytes at memory speed (a 500,000-row matrix is about 75 MB).
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
from collections.abc import Mapping, Sequence
from typing import Any, TypeAlias

import orjson
import rfc8785

from compliance_bake.inputs.jsonio import may_hold_float

# The lead bytes of UTF-8 sequences for U+E000 and above.
_HIGH_BYTES = tuple(bytes((lead,)) for lead in range(0xEE, 0xF5))


# JSON built from these types holds no float: `float` is not assignable to `int` under mypy.
FloatFree: TypeAlias = "str | int | bool | None | Sequence[FloatFree] | Mapping[str, FloatFree]"


def canon(value: Any) -> bytes:
    try:
        fast = orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_STRICT_INTEGER)
    except orjson.JSONEncodeError:
        return rfc8785.dumps(value)
    if may_hold_float(value, fast) or _has_high_char(fast):
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
