"""The fast canonical form equals RFC 8785 (the `rfc8785` reference) byte for byte."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from compliance_bake.inputs import jsonio
from compliance_bake.inputs.jsonio import loads_strict
from compliance_bake.signing import canon as canon_module
from compliance_bake.signing.canon import canon, canon_floatless, canon_parts, digest, mac

# Strings without lone surrogates (not JSON-encodable as UTF-8), over the whole of Unicode,
# with extra weight on the ranges where JCS and code-point order disagree.
text = st.one_of(
    st.text(st.characters(exclude_categories=("Cs",))),
    st.text(
        st.sampled_from(
            [
                "a",
                "\x00",
                "\x1f",
                "\x7f",
                '"',
                "\\",
                "/",
                "\ue000",
                "\uffff",
                "\U0001f600",
                "é",
                "\u2028",
            ]
        )
    ),
)
ints = st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1)
scalars = st.one_of(
    st.none(), st.booleans(), ints, text, st.floats(allow_nan=False, allow_infinity=False)
)
json_values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=5), st.dictionaries(text, children, max_size=5)
    ),
    max_leaves=25,
)


@settings(max_examples=400, deadline=None)
@given(json_values)
def test_canon_equals_rfc8785(value: Any) -> None:
    assert canon(value) == rfc8785.dumps(value)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(text, st.one_of(ints, text, st.booleans(), st.none()), max_size=8))
def test_canon_equals_rfc8785_on_report_shaped_data(value: dict[str, Any]) -> None:
    assert canon({"rows": [value, value], "n": 1}) == rfc8785.dumps(
        {"rows": [value, value], "n": 1}
    )


def test_a_baked_snapshot_takes_the_fast_path(baked: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    snapshot = loads_strict((baked / "api" / "compliance.json").read_bytes())
    expected = rfc8785.dumps(snapshot)

    def refuse(value: Any) -> bytes:
        raise AssertionError("fell back to the slow reference")

    monkeypatch.setattr(canon_module.rfc8785, "dumps", refuse)
    assert canon(snapshot) == expected


def test_digest_and_mac_are_sha3_256() -> None:
    assert digest(b"") == "a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a"
    assert len(mac(b"x", "k" * 32)) == 64 and mac(b"x", "k" * 32) != mac(b"x", "j" * 32)


@settings(max_examples=2000, deadline=None)
@given(
    st.binary(max_size=60)
    | st.text(alphabet='0123456789.eE+-[]{},:"x ', max_size=60).map(str.encode)
)
def test_the_fast_float_check_never_misses_what_the_regex_finds(data: bytes) -> None:
    # The fast check may say "float" more often (that only costs the slow path), never less.
    if jsonio._FLOAT_TOKEN.search(data):
        assert jsonio.may_hold_float(None, data)


@pytest.mark.parametrize("value", [[1.5], {"a": -2.5e-7}, {"a": [1, 2.0]}, {"k": 1e300}, 3.0])
def test_floats_take_the_reference_path(value: Any) -> None:
    # [1, 2.0] and 3.0 are where orjson ("2.0") and JCS ("2") differ.
    assert canon(value) == rfc8785.dumps(value)


float_free_scalars = st.one_of(st.none(), st.booleans(), ints, text)
float_free_values = st.recursive(
    float_free_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=5), st.dictionaries(text, children, max_size=5)
    ),
    max_leaves=25,
)


@settings(max_examples=400, deadline=None)
@given(float_free_values)
def test_canon_floatless_equals_rfc8785(value: Any) -> None:
    assert canon_floatless(value) == rfc8785.dumps(value)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(text, json_values, max_size=6))
def test_an_object_assembled_from_its_members_bytes_equals_rfc8785(value: dict[str, Any]) -> None:
    members = {key: (rfc8785.dumps(child),) for key, child in value.items()}
    assert b"".join(canon_parts(members)) == rfc8785.dumps(value)
