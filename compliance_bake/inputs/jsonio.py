"""Strict JSON in, deterministic JSON out.

In: duplicate keys, NaN/Infinity, fractions and lone surrogates are refused at the door, because
a signed document that two parsers read differently is not a signed document. The parser's limits
are refusals too, never crashes (docs/limits.md): nesting deeper than MAX_DEPTH, an integer
outside the 64-bit range (one of more than Python's int digit limit, 4,300 digits by default,
is refused by the parser itself), a document too large for memory. Every refusal is a
StrictJSONError; each caller turns it into its own exit code and names its file or route.
Out: the layout every file in `out/` uses (2-space indent, keys in the order built, UTF-8, a final
newline). `verify` re-renders with the same function and compares bytes.
Every reader of JSON goes through this module, so one set of rules says what is strict. The
plain parsers are `loads_strict` and, for a service's answer, `loads_unambiguous`; `problem` is
the strictness predicate of both (keys and values), and of the parts of an answer a profile
reads (`strict_problem`), so none of them can disagree. Three fast paths read at C speed where
`make bench` or `make bench-target` would show the plain parser (docs/benchmarks.md), each
beside its proof, a pure function that is tested against the plain path
(tests/inputs/test_jsonio.py, tests/verify/test_fast_paths.py, tests/verify/test_document.py):
`loads_typed` (a snapshot with its rows typed), `loads_pretty` (a file of `out/`: `renders_as`
and `may_hold_float`, the float scan signing/canon.py uses too) and `loads_compact_flat` (a
service's compact answer).
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Callable
from decimal import Decimal
from typing import Any, TypeVar

import orjson

MAX_DEPTH = 255  # nested arrays/objects; orjson writes no deeper, so no file of ours is
T = TypeVar("T")
INT_MIN, INT_MAX = -(2**63), 2**64 - 1  # what orjson reads and writes; I-JSON asks for less


class StrictJSONError(ValueError):
    """The text is not strict JSON; `where` says which key or position. `syntax`: it is not
    JSON at all (bad UTF-8, bad syntax, nothing), as against JSON that is doubtful (a key
    twice, a fraction, NaN, a lone surrogate, past a limit)."""

    def __init__(self, message: str, where: str, *, syntax: bool = False) -> None:
        super().__init__(message)
        self.where = where
        self.syntax = syntax


class _Refused:
    """Left in the tree by the parser's hooks, which do not know where they are; the walk
    that follows does, and raises with the JSON path."""

    __slots__ = ("message",)

    def __init__(self, message: str) -> None:
        self.message = message


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        out[key] = _Refused(f"duplicate key {key!r}") if key in out else value
    return out


def _constant(name: str) -> Any:
    return _Refused(f"{name} is not JSON")


def _fraction(text: str) -> Any:
    # Every number of these formats is a whole number; 41.0 or 1e3 is a mistake, refused here
    # rather than accepted as an integer by a lenient validator.
    return _Refused(f"{text} is not a whole number")


def _check_tree(value: Any, path: str, *, values: bool = True) -> None:
    """Raise, with the JSON path, on the first thing `problem` finds."""
    found = problem(value, path, values=values)
    if found is not None:
        raise StrictJSONError(*found)


def problem(value: Any, path: str = "$", *, values: bool = True) -> tuple[str, str] | None:
    """The strictness predicate of both parsers and of a service's answer, so none of them can
    disagree: what strict JSON refuses in `value` and where, or None. Always: what the parser's
    hooks left refused (a duplicate key; with `values`, a fraction or a constant too) and
    nesting past MAX_DEPTH; with `values`, also a float, an integer outside 64 bits and a lone
    surrogate in a string or a key."""
    stack: list[tuple[Any, str, int]] = [(value, path, 0)]
    while stack:
        item, where, depth = stack.pop()
        kind = type(item)
        if kind is _Refused:
            return item.message, where
        if (kind is dict or kind is list) and depth >= MAX_DEPTH:
            shown = where if len(where) <= 40 else f"{where[:40]}..."
            return f"nested deeper than {MAX_DEPTH} levels", shown
        words = _value_problem(item, kind) if values else None
        if words is not None:
            return words, where
        if kind is dict:
            stack.extend((child, f"{where}.{key}", depth + 1) for key, child in item.items())
        elif kind is list:
            stack.extend((child, f"{where}[{i}]", depth + 1) for i, child in enumerate(item))
    return None


def _value_problem(item: Any, kind: type) -> str | None:
    if kind is float:
        return f"{item!r} is not {'a whole number' if math.isfinite(item) else 'JSON'}"
    if kind is int and not INT_MIN <= item <= INT_MAX:
        return "an integer outside the 64-bit range"
    if kind is str and not _utf8(item):
        return "a lone surrogate in a string"
    if kind is dict and not all(_utf8(key) for key in item):
        return "a lone surrogate in a key"
    return None


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def loads_strict(text: str | bytes, *, fractions: bool = False) -> Any:
    """Parse strictly; raise StrictJSONError with a place on anything doubtful. With
    `fractions`, a number with a fraction or an exponent is read as the exact Decimal it spells
    (the amounts of limits.json, 0.5), never as a binary float."""
    value = _parse(text, parse_constant=_constant, parse_float=Decimal if fractions else _fraction)
    if not _plainly_clean(value):
        _check_tree(value, "$")
    return value


def loads_unambiguous(text: str | bytes, *, constants: bool = True) -> Any:
    """Parse a service's answer: refuse only what makes the whole ambiguous or unreadable (a key
    twice anywhere, bad UTF-8, nesting past MAX_DEPTH); fractions, NaN and large integers are
    read as they are, for `strict_problem` to judge in the values a caller reads. Without
    `constants`, NaN and Infinity are refused too, as the audit's engines refuse a JSON play
    holding one."""
    value = _parse(text) if constants else _parse(text, parse_constant=_constant)
    if not _plainly_clean(value):
        _check_tree(value, "$", values=False)
    return value


def _parse(text: str | bytes, **hooks: Any) -> Any:
    """The parser's own refusals, each as one StrictJSONError with a place: bad UTF-8, bad
    syntax, nesting, an integer past the interpreter's digit limit, a document past memory."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise StrictJSONError("not UTF-8", f"byte {exc.start}", syntax=True) from None
    try:
        return json.loads(text, object_pairs_hook=_pairs, **hooks)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno} column {exc.colno}"
        raise StrictJSONError(exc.msg, where, syntax=True) from None
    except RecursionError:
        raise StrictJSONError(f"nested deeper than {MAX_DEPTH} levels", "$") from None
    except ValueError:
        # The only other ValueError of the parser: int() past sys.get_int_max_str_digits().
        limit = sys.get_int_max_str_digits()
        raise StrictJSONError(f"an integer of more than {limit:,} digits", "$") from None
    except MemoryError:
        raise StrictJSONError("the document is too large to parse in memory", "$") from None


def strict_problem(value: Any) -> str | None:
    """What `loads_strict` would refuse in `value` (a parsed part of an answer), with its place
    under it (`at [1].min_wager`), or None: `problem`'s words for a message."""
    found = problem(value, "")
    if found is None:
        return None
    words, where = found
    return words + (f" at {where}" if where else "")


def _plainly_clean(value: Any) -> bool:
    """True when `_check_tree` would find nothing, decided at C speed
    (the walk is a Python loop): orjson refuses a `_Refused` (not serialisable), a lone
    surrogate in a string or key, an integer past 64 bits and nesting past 254 levels (within
    MAX_DEPTH). False (walk, then) when orjson refuses anything at all.
    """
    try:
        orjson.dumps(value)
    except TypeError:
        return False
    return True


def loads_pretty(raw: bytes) -> tuple[Any, bool]:
    """`loads_strict(raw)`, and whether `raw` is exactly `dumps_pretty` of the value (the layout
    of every file in `out/`); raises StrictJSONError as `loads_strict` does.

    When the layout holds, one orjson parse is the strict reading, at C speed: orjson itself
    refuses NaN/Infinity, a BOM, bad UTF-8 and lone surrogates; a duplicate key (orjson keeps the
    last), an integer past 64 bits (orjson reads a float) or any byte out of the layout makes
    the rendering differ from `raw`; nesting past 254 levels makes it refuse to render. A float
    renders back as it was read, so the bytes are searched for one (`may_hold_float`). Anything
    doubtful is read again by `loads_strict`, which refuses with the place.
    """
    try:
        value = orjson.loads(raw)
    except (orjson.JSONDecodeError, TypeError, MemoryError):
        pass
    else:
        if plainly_pretty(value, raw):
            return value, True
    value = loads_strict(raw)
    try:
        same = dumps_pretty(value) == raw
    except TypeError:  # orjson renders no deeper than 254 levels: not the layout
        same = False
    return value, same


def loads_typed(
    raw: bytes, layout: type[T], floatless: Callable[[Any], Any]
) -> tuple[T, Any] | None:
    """msgspec's reading of `raw` into `layout` and its JSON values, when those are the strict
    reading of `raw`: the fast path of a document whose bulk has a type that holds no number
    (a snapshot's shadow rows, verify/document.py). None leaves it to `loads_pretty`.

    The proof, at C speed: `raw` is exactly the values' rendering (`renders_as`), and what
    `floatless` leaves of them (the typed parts taken out) holds no float (`may_hold_float`)."""
    import msgspec

    try:
        read = msgspec.json.decode(raw, type=layout)
    except (ValueError, MemoryError, RecursionError):  # msgspec's errors are ValueErrors
        return None
    document = msgspec.to_builtins(read)
    if renders_as(document, raw) and not may_hold_float(floatless(document)):
        return read, document
    return None


def plainly_pretty(value: Any, raw: bytes) -> bool:
    """Whether `value`, orjson's reading of `raw`, is the strict reading and `raw` its
    `dumps_pretty` rendering, shown at C speed (`loads_pretty`'s fast path): `raw` is that
    rendering and holds no float. False leaves the question to `loads_strict`."""
    return renders_as(value, raw) and not may_hold_float(value, raw)


def renders_as(value: Any, raw: bytes) -> bool:
    """Whether `raw` is exactly `dumps_pretty(value)`.

    With a `value` that holds no float, that makes `value` the strict reading of `raw`, however
    `value` was read: a rendering holds no key twice (a dict has none), no lone surrogate and no
    integer past 64 bits (orjson refuses to write them), no NaN, and no nesting past 254 levels."""
    try:
        return dumps_pretty(value) == raw
    except (TypeError, MemoryError):  # orjson renders no deeper than 254 levels
        return False


def loads_compact_flat(raw: bytes) -> Any:
    """The strict reading of `raw`, at C speed, when `raw` is exactly orjson's compact text of an
    object whose leaves are strings, booleans, integers and nulls (what a FastAPI service or
    JavaScript's JSON.stringify sends); None leaves it to the plain parsers, which have the
    messages (the fast path of a service's answer, targets/answers.py).

    The proof, as for `renders_as`: orjson refuses NaN, Infinity, bad UTF-8 and lone surrogates;
    text equal to the rendering of its reading holds no key twice (it would be longer) and no
    integer past 64 bits (orjson reads a float); the leaves' types hold no fraction, and 16
    levels are within MAX_DEPTH.
    """
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    if type(value) is dict and _flat(value, 0) and orjson.dumps(value) == raw:
        return value
    return None


_FLAT = frozenset((str, bool, int, type(None)))


def _flat(value: Any, depth: int) -> bool:
    if depth > 16:
        return False
    for item in value.values() if type(value) is dict else value:
        kind = type(item)
        if kind not in _FLAT and (
            (kind is not dict and kind is not list) or not _flat(item, depth + 1)
        ):
            return False
    return True


def may_hold_float(value: Any, rendering: bytes | None = None) -> bool:
    """True whenever `value` holds a float (and, rarely, when only a string looks like one, such
    as `"x:1.5,"`: a slow path then decides, never a wrong answer). `rendering` is orjson's text
    of `value`, compact or indented (rendered here when not given). `loads_pretty` scans a
    file's bytes with it, and `canon` its compact text, so both prove the same thing alike.

    In orjson's text, with white space taken out, a number token stands between a structural
    character (`[`, `,`, `:`) and another (`,`, `}`, `]`), and a float token has a fraction or an
    exponent, so every float matches _FLOAT_TOKEN; a timestamp (`04:06:00.000Z`) or a version
    inside a string ends at a `"`, and does not. The scan runs at memory speed: every character
    that cannot occur in a float token or around it is deleted (`_FLOAT_TOKEN` matches there
    whenever it matches the whole text: deleting cannot break a match, only make more), then
    `_FLOAT_TOKEN` is tried only where a digit run ends in `.`, `e` or `E`, where a match must
    start.
    """
    if type(value) is float:
        return True
    if rendering is None:
        try:
            rendering = orjson.dumps(value)
        except (TypeError, MemoryError):
            return True
    return _find_float_token(rendering.translate(None, _NOT_NEAR_FLOAT))


_FLOAT_TOKEN = re.compile(rb"[\[,:]-?[0-9]+(?:\.[0-9]+(?:[eE][-+]?[0-9]+)?|[eE][-+]?[0-9]+)[,}\]]")
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


def _find_float_token(data: bytes) -> bool:
    """Whether `_FLOAT_TOKEN.search(data)` finds a match, without running the regex over it all:
    a match holds a digit that ends a digit run followed by `.`, `e` or `E`, and starts just
    before that run (or its minus)."""
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


def dumps_pretty(value: Any) -> bytes:
    """The layout of every file in `out/`, which `verify` renders again to compare bytes: 2-space
    indent, insertion order, UTF-8, trailing newline."""
    return orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)
