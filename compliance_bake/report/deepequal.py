"""Strict and loose deep equality, as a test framework's `toStrictEqual` and `toEqual` differ.

strict_equals: the same type at every level (so `True` is not `1`, `1` is not `1.0`, a list is not a
tuple, a class instance is not a plain dict, nor an instance of another class), the same keys
(a missing key is not a key holding `None`), and a HOLE in a sequence only equals a HOLE.

loose_equals: numbers by value, keys holding `None` count as missing, a HOLE counts as `None`,
lists and tuples compare element-wise, and objects compare by their fields whatever their class.

HOLE stands for the missing slot of a sparse array (`[, 1]` in JavaScript), which Python lacks.

json_equals: strict_equals for two values read from JSON, at C speed (`verify` compares a large
registry copy with its snapshot's block, where a walk in Python would cost most of the run).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import orjson

from compliance_bake.report.escape import json_line


class _Hole:
    __slots__ = ()

    def __repr__(self) -> str:
        return "HOLE"


HOLE: Any = _Hole()


def strict_equals(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(strict_equals(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(strict_equals(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float):
        return a == b or (a != a and b != b)  # NaN equals NaN, as Object.is says
    if dataclasses.is_dataclass(a) or hasattr(a, "__dict__"):
        return strict_equals(_fields(a), _fields(b))
    return bool(a == b)


_SORTED = orjson.OPT_SORT_KEYS | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_SUBCLASS


def json_equals(a: Any, b: Any) -> bool:
    """strict_equals(a, b) for two values read by the strict JSON readers (dicts, lists,
    strings, integers within 64 bits, booleans, None), by their serialisations with sorted keys:
    for such values the serialisation is one-to-one (`true` is not `1`, a missing key is not a
    `null`, key order is not compared). Not for other values: orjson writes a tuple as a list
    and NaN as null. A dataclass, a subclass or a larger integer is handed to strict_equals."""
    try:
        return orjson.dumps(a, option=_SORTED) == orjson.dumps(b, option=_SORTED)
    except TypeError:
        return strict_equals(a, b)


def _fields(obj: object) -> dict[str, object]:
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
    return dict(vars(obj))


def _loose_form(value: Any) -> Any:
    if value is HOLE:
        return None
    if isinstance(value, bool | int | float):
        return value
    if isinstance(value, dict):
        return {k: _loose_form(v) for k, v in value.items() if v is not None and v is not HOLE}
    if isinstance(value, list | tuple):
        return [_loose_form(v) for v in value]
    if dataclasses.is_dataclass(value) or hasattr(value, "__dict__"):
        return _loose_form(_fields(value))
    return value


def loose_equals(a: Any, b: Any) -> bool:
    return bool(_loose_form(a) == _loose_form(b))


@dataclasses.dataclass
class _Point:
    x: int
    y: int


@dataclasses.dataclass
class _Pair:
    x: int
    y: int


# The docs matrix: six pairs that are loosely equal and strictly unequal, two for each category
# of the specification (undefined properties, sparse arrays, class instance versus plain object).
DOCS_MATRIX: tuple[tuple[str, Any, Any], ...] = (
    ("undefined property: a key holding None vs a missing key", {"a": 1, "b": None}, {"a": 1}),
    ("undefined property, nested", [{"k": {"v": None}}], [{"k": {}}]),
    ("sparse array: a hole vs None", [HOLE, 1], [None, 1]),
    ("sparse array: a trailing hole vs None", [1, 2, HOLE], [1, 2, None]),
    ("class instance vs plain object", _Point(1, 2), {"x": 1, "y": 2}),
    ("instances of two classes with the same fields", _Point(1, 2), _Pair(1, 2)),
)

# The strict-vs-loose probe: the same pair, equal loosely, unequal strictly (True vs 1).
STRICT_VS_LOOSE_PAIR: tuple[Any, Any] = (
    {"allowed": True, "status": 200},
    {"allowed": 1, "status": 200},
)


def differences(expected: Any, actual: Any, path: str = "$") -> list[str]:
    """Where expected and actual differ, as `path: expected X, actual Y` (JSON values): the
    fields a failed self-check names."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        found: list[str] = []
        for key in [*expected, *(k for k in actual if k not in expected)]:
            where = f"{path}.{key}"
            if key not in actual:
                found.append(f"{where}: expected {json_line(expected[key])}, actual missing")
            elif key not in expected:
                found.append(f"{where}: not expected, actual {json_line(actual[key])}")
            else:
                found += differences(expected[key], actual[key], where)
        return found
    if isinstance(expected, list) and isinstance(actual, list) and len(expected) == len(actual):
        found = []
        for index, (e, a) in enumerate(zip(expected, actual, strict=True)):
            found += differences(e, a, f"{path}[{index}]")
        return found
    same = type(expected) is type(actual) and expected == actual
    return [] if same else [f"{path}: expected {json_line(expected)}, actual {json_line(actual)}"]
