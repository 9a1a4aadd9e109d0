"""Strict JSON: the on-disk layout round trips (a property); what JSON must not hold is refused."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compliance_bake.inputs.jsonio import StrictJSONError, dumps_pretty, loads_strict

text = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53) + 1, 2**53 - 1) | text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(text, inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_the_on_disk_layout_round_trips(value: Any) -> None:
    raw = dumps_pretty(value)
    assert loads_strict(raw) == value
    assert dumps_pretty(loads_strict(raw)) == raw  # what verify relies on


@pytest.mark.parametrize(
    "text", ['{"a": 1, "a": 2}', '{"a": NaN}', "[Infinity]", '["\\ud800"]', '{"\\udfff": 1}', "{"]
)
def test_strict_json_refuses(text: str) -> None:
    with pytest.raises(StrictJSONError):
        loads_strict(text)


def test_fractions_are_read_as_the_decimals_they_spell_only_when_asked() -> None:
    from decimal import Decimal

    assert loads_strict('{"min": 0.49}', fractions=True) == {"min": Decimal("0.49")}
    with pytest.raises(StrictJSONError):
        loads_strict('{"min": 0.49}')
    with pytest.raises(StrictJSONError):
        loads_strict('{"min": NaN}', fractions=True)
