"""Strict JSON: the on-disk layout round trips (a property); what JSON must not hold is refused."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compliance_bake.inputs.jsonio import (
    StrictJSONError,
    dumps_pretty,
    loads_compact_flat,
    loads_strict,
    loads_unambiguous,
    strict_problem,
)

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


# JSON texts strict JSON may refuse: a fraction, a constant, a large integer, a lone surrogate in
# a string or a key, each at any depth (a key twice is refused by both parsers alike).
doubtful = st.recursive(
    st.sampled_from(["1.5", "NaN", "-Infinity", str(2**64), '"\\ud800"', "7", '"x"', "null"]),
    lambda inner: (
        st.lists(inner, max_size=3).map(lambda items: f"[{', '.join(items)}]")
        | st.lists(st.tuples(st.sampled_from(['"k"', '"\\udc00"', '"j"']), inner), max_size=2).map(
            lambda pairs: "{" + ", ".join(f"{k}: {v}" for k, v in dict(pairs).items()) + "}"
        )
    ),
    max_leaves=8,
)


@settings(max_examples=300, deadline=None)
@given(doubtful)
def test_the_one_strictness_predicate_judges_as_the_strict_parser(raw: str) -> None:
    """`strict_problem` over the lenient reading refuses exactly what `loads_strict` refuses,
    keys and values alike."""
    try:
        loads_strict(raw)
    except StrictJSONError:
        refused = True
    else:
        refused = False
    assert (strict_problem(loads_unambiguous(raw.encode())) is not None) == refused


def test_a_lone_surrogate_in_a_key_is_a_strictness_problem() -> None:
    # The one predicate walks keys as well as values.
    assert strict_problem({"ok": {"\ud800": 1}}) == "a lone surrogate in a key at .ok"
    assert strict_problem([{"a": 1.5}]) == "1.5 is not a whole number at [0].a"
    assert strict_problem({"a": ["x", None, 2**63]}) is None


compact = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**65), 2**65) | st.floats() | text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=12,
)


@settings(max_examples=400, deadline=None)
@given(compact, st.sampled_from(["as is", "a key twice", "spaced"]))
def test_the_compact_answer_fast_path_reads_only_what_the_strict_parser_reads(
    value: Any, change: str
) -> None:
    """`loads_compact_flat` gives the strict reading or nothing, never another value."""
    import json

    raw = json.dumps({"k": value, "n": 1}, separators=(",", ":"), ensure_ascii=False)
    if change == "a key twice":
        raw = raw[:-1] + ',"n":2}'
    elif change == "spaced":
        raw = raw.replace(",", ", ", 1)
    try:
        strict: Any = loads_strict(raw)
    except StrictJSONError:
        strict = StrictJSONError
    fast = loads_compact_flat(raw.encode("utf-8", "surrogatepass"))
    assert fast is None or fast == strict


@pytest.mark.parametrize(
    ("raw", "fast"),
    [
        (b'{"allowed":false,"status":403,"reason":"suspended","x":[null,{"y":"z"}]}', True),
        (b'{"allowed":true,"status":200.0}', False),  # a fraction
        (b'{"allowed":true,"allowed":false}', False),  # a key twice
        (b'{"n":18446744073709551616}', False),  # past 64 bits
        (b'{"allowed": true}', False),  # not orjson's compact text
        (b'[{"allowed":true}]', False),  # not an object
    ],
)
def test_the_compact_answer_fast_path_takes_only_plain_compact_objects(
    raw: bytes, fast: bool
) -> None:
    assert (loads_compact_flat(raw) is not None) is fast
