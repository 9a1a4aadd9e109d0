"""Strict deep equality, which the board uses, against the loose equality it must not be."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from compliance_bake.report.deepequal import DOCS_MATRIX, HOLE, loose_equals, strict_equals


@dataclass
class _Box:
    v: int


@pytest.mark.parametrize(
    ("left", "right"),
    [
        (True, 1),
        (1, 1.0),
        ({"a": None}, {}),
        ([1, 2], (1, 2)),
        (_Box(1), {"v": 1}),
        ([HOLE], [None]),
        ({"a": [True]}, {"a": [1]}),
    ],
)
def test_strict_tells_apart_what_loose_merges(left: object, right: object) -> None:
    assert loose_equals(left, right)
    assert not strict_equals(left, right)


@pytest.mark.parametrize(
    "value", [None, True, 0, 1.5, "x", [1, {"a": [None]}], {"k": (1, 2)}, _Box(3)]
)
def test_strict_equality_is_reflexive(value: object) -> None:
    assert strict_equals(value, value)


def test_docs_matrix_has_six_cases_all_strictly_unequal() -> None:
    assert len(DOCS_MATRIX) == 6
    for _name, left, right in DOCS_MATRIX:
        assert loose_equals(left, right) and not strict_equals(left, right)


def test_nan_equals_nan_strictly() -> None:
    assert strict_equals(float("nan"), float("nan"))
