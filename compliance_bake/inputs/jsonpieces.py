"""`orjson.loads(raw)` of a large pretty-printed document, parsed in pieces to bound its peak.

orjson parses into an intermediate tree before it builds Python objects, and that tree is the
peak: reading a 117 MB, 500,000-row snapshot peaks at about 600 MiB, for 130 MiB of objects
in the end. Parsed in pieces of about `PIECE_BYTES`, the peak is the objects plus one piece's
tree. `loads_in_pieces` returns exactly what `orjson.loads(raw)` returns, or raises exactly
what it raises, because whenever the shape below is not proven it is `orjson.loads(raw)`.

The shape: one large array, the value of a member named `key`, in the layout `dumps_pretty`
writes (`"rows": [`, a newline, then elements, each closing at the indent below the key's,
followed by a comma and a newline). The document is cut in three:

- A, up to and including the newline after `[`; B, from the newline before the closing `]`;
- X between them, cut into pieces at elements' closing `},` lines.

Why the pieces give the same value. A raw newline (0x0A) never stands inside a JSON string, so
every cut, made at a newline or after one with only spaces and `}` before the comma, falls
between tokens. The document is parsed as A, a fresh random string N, B: N must be found as
the only element of an array there, so A and B are that array's surroundings and nothing
else (N is unguessable, so it is not part of the input). Each piece is parsed as an array at
the same nesting depth the elements have in the document (orjson's depth limit applies the
same), and must hold at least one element: a cut inside an element would leave its brackets
unbalanced and the piece would not parse. So X is a list of values separated by commas, and
the document is A, that list, B: the array holds the pieces' elements, in order. Duplicate keys,
numbers, strings and UTF-8 are each read within one piece, as the whole parse reads them.
"""

from __future__ import annotations

import os
from typing import Any

import orjson

PIECE_BYTES = 8 * 1024 * 1024
MIN_BYTES = 4 * PIECE_BYTES  # below this, one parse: its peak is small anyway
# Brackets looked at in the search for the array before giving up (one parse then): the pretty
# snapshot has a few dozen; a document made of brackets must not make the search quadratic.
MAX_BRACKETS = 10_000
MAX_ARRAYS = 16  # arrays of `key` measured (each a search for its `]`, MAX_BRACKETS at most)


def loads_in_pieces(
    raw: bytes, key: bytes = b"rows", piece_bytes: int | None = None, min_bytes: int | None = None
) -> Any:
    """`orjson.loads(raw)`, parsed in pieces of about `piece_bytes` (PIECE_BYTES) when `raw`,
    of `min_bytes` (MIN_BYTES) or more, holds a large array of `key` in the pretty layout (see
    the module's docstring); otherwise in one parse."""
    piece_bytes = piece_bytes or PIECE_BYTES  # read at each call: the tests set both small
    min_bytes = MIN_BYTES if min_bytes is None else min_bytes
    if len(raw) >= max(min_bytes, 2 * piece_bytes):
        found = _in_pieces(raw, key, piece_bytes)
        if found is not None:
            return found[0]
    return orjson.loads(raw)


def _largest_array(raw: bytes, key: bytes) -> tuple[int, int, bytes] | None:
    """(start, end, indent) of the largest `"key": [` array's elements in the pretty layout:
    raw[start:end] runs from after the newline that follows `[` to before the newline that
    precedes the closing `]`, at the indent of the key's line. A guess: _in_pieces proves it."""
    marker = b'"' + key + b'": '
    best: tuple[int, int, bytes] | None = None
    at = raw.find(b"[")  # memchr, then checked: a longer needle is searched far slower
    arrays = 0
    for _ in range(MAX_BRACKETS):
        if at < 0:
            return best
        if raw.startswith(marker, at - len(marker)) and raw.startswith(b"\n", at + 1):
            arrays += 1
            if arrays > MAX_ARRAYS:
                return None
            line = raw.rfind(b"\n", 0, at) + 1
            indent = raw[line : at - len(marker)]
            start = at + 2
            end = _closing(raw, start, b"\n" + indent) if not indent.strip(b" ") else -1
            if end > start and (best is None or end - start > best[1] - best[0]):
                best = (start, end, indent)
        at = raw.find(b"[", at + 1)
    return None  # too many to look at


def _closing(raw: bytes, start: int, newline_indent: bytes) -> int:
    """Where the first `]` after `start` that starts a line at the indent stands, less the
    newline and indent; -1 if none. (`]` is found by memchr: a search for the newline first
    would stop at every line.)"""
    at = raw.find(b"]", start)
    for _ in range(MAX_BRACKETS):
        if at < 0:
            break
        if raw.startswith(newline_indent, at - len(newline_indent)):
            return at - len(newline_indent)
        at = raw.find(b"]", at + 1)
    return -1


def _cuts(raw: bytes, start: int, end: int, closing: bytes, piece_bytes: int) -> list[int]:
    """Positions of the commas where X is cut: after an element's closing line, about every
    `piece_bytes`."""
    cuts: list[int] = []
    at = start + piece_bytes
    while at < end - piece_bytes // 2:
        found = raw.find(closing, at, end)
        if found < 0:
            break
        comma = found + len(closing) - 1
        cuts.append(comma)
        at = comma + piece_bytes
    return cuts


def _holder(document: Any, mark: str) -> tuple[list[Any], int] | None:
    """The array holding `mark` as its only element, and its depth (the document's is 1), or
    None. Walked with a stack of its own: the document may nest as deep as orjson reads (1,024
    levels), past Python's recursion limit."""
    stack: list[tuple[Any, int]] = [(document, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, list):
            if len(value) == 1 and type(value[0]) is str and value[0] == mark:
                return value, depth
            items: Any = value
        else:
            items = value.values()
        stack.extend((item, depth + 1) for item in items if isinstance(item, list | dict))
    return None


def _in_pieces(raw: bytes, key: bytes, piece_bytes: int) -> tuple[Any] | None:
    """(the value,) when the pieces prove it equal to the whole parse; None to parse whole."""
    span = _largest_array(raw, key)
    if span is None:
        return None
    start, end, indent = span
    mark = os.urandom(16).hex()
    try:
        document = orjson.loads(b'%b"%b"%b' % (raw[:start], mark.encode(), raw[end:]))
    except orjson.JSONDecodeError:
        return None
    held = _holder(document, mark)
    if held is None:
        return None
    array, depth = held
    opening, closing = b"[" * depth, b"]" * depth
    elements: list[Any] = []
    begin, view = start, memoryview(raw)
    cuts = _cuts(raw, start, end, b"\n" + indent + b"  },", piece_bytes)
    if not cuts:
        return None  # one piece would only copy the array: one parse is cheaper
    for cut in [*cuts, end]:
        try:
            piece = orjson.loads(b"".join((opening, view[begin:cut], closing)))
        except orjson.JSONDecodeError:
            return None
        for _ in range(depth - 1):  # the wrapping arrays, each holding one array
            if not (isinstance(piece, list) and len(piece) == 1):
                return None
            piece = piece[0]
        if not isinstance(piece, list) or not piece:
            return None
        elements += piece
        begin = cut + 1
    array[:] = elements
    return (document,)
