"""The waiver file: each refusal one line naming the file, the line of its [[waiver]] and the
fix; and the pure matching of waivers to failing items at a clock."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from compliance_bake.errors import InputError
from compliance_bake.waivers.apply import (
    APPLIED,
    EXPIRED,
    POLICY,
    SHADOW,
    UNUSED,
    Item,
    apply,
)
from compliance_bake.waivers.read import read_waivers

CLOCK = datetime(2026, 11, 22, 4, 6, tzinfo=UTC)
STATES = ("MA", "NJ")
GOOD = """\
# a comment
[[waiver]]
state = "NJ"
partner = "node-shore-02"
justification = "identity re-verification pending, ticket KYC-118"
expires = 2026-12-31
approvedBy = "j.doe (compliance officer)"
"""


def _drop(text: str, key: str) -> str:
    return "".join(line for line in text.splitlines(True) if not line.startswith(f"{key} ="))


def _read(tmp_path: Path, text: str) -> object:
    path = tmp_path / "waivers.toml"
    path.write_text(text)
    return read_waivers(path, CLOCK, STATES)


def test_a_good_file_is_read_with_its_lines_and_digest(tmp_path: Path) -> None:
    second = GOOD.replace('"NJ"', '"MA"').replace("node-shore-02", "node-bay-01")
    read = _read(tmp_path, GOOD + "\n" + second + 'kind = "identity"\namount = 5000.01\n')
    waivers = read.waivers  # type: ignore[attr-defined]
    assert [w.line for w in waivers] == [2, 10]
    assert waivers[0].expires == date(2026, 12, 31)
    assert waivers[1].kind == "identity" and dict(waivers[1].question) == {"amount": "5000.01"}
    assert len(read.sha3) == 64  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("edit", "said", "fix"),
    [
        (lambda t: _drop(t, "expires"), ":2: [[waiver]]: no expires", "TOML date"),
        (
            lambda t: t.replace("2026-12-31", "2027-12-27"),
            "more than 365 days",
            "2027-11-22 or earlier",
        ),
        (lambda t: t.replace("2026-12-31", '"2026-12-31"'), "not a TOML date", "unquoted"),
        (lambda t: t + 'kind = "nonsense"\n', "unknown kind 'nonsense'", "identityNotEnforced"),
        (lambda t: t.replace('"NJ"', '"NY"'), "unknown state 'NY'", "MA, NJ"),
        (
            lambda t: t + "\n" + t.split("\n", 1)[1],
            ":9: [[waiver]] repeats the waiver at line 2",
            "one waiver",
        ),
        (lambda t: _drop(t, "justification"), "no justification", "required"),
        (lambda t: _drop(t, "approvedBy"), "no approvedBy", "required"),
        (lambda t: t + "colour = 1\n", "unknown key 'colour'", "justification"),
        (lambda t: t + "[[", "not TOML", "syntax"),
        (lambda t: 'waiver = [{state = "NJ"}]\n', "inline array", "[[waiver]] table"),
    ],
)
def test_bad_input_is_one_line_naming_file_line_and_fix(
    tmp_path: Path, edit: object, said: str, fix: str
) -> None:
    with pytest.raises(InputError) as caught:
        _read(tmp_path, edit(GOOD))  # type: ignore[operator]
    assert str(tmp_path / "waivers.toml") in caught.value.message
    assert said in caught.value.message
    assert fix in caught.value.hint
    assert "\n" not in caught.value.message


def test_a_fifo_is_refused_through_the_one_opener(tmp_path: Path) -> None:
    import os

    fifo = tmp_path / "waivers.toml"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="not a regular file"):
        read_waivers(fifo, CLOCK, STATES)


def test_matching_waives_only_unexpired_waivers_of_the_pair_and_kind(tmp_path: Path) -> None:
    text = (
        GOOD
        + "\n"
        + GOOD.replace("node-shore-02", "node-nowhere")
        + "\n"
        + GOOD.replace("2026-12-31", "2026-11-21").replace(
            "[[waiver]]", '[[waiver]]\nkind = "realShadowDiffer"'
        )
    )
    waivers = _read(tmp_path, text).waivers  # type: ignore[attr-defined]
    row = Item(SHADOW, 3, "NJ", "node-shore-02", "otherBlockWithLicence")
    differ = Item(SHADOW, 3, "NJ", "node-shore-02", "realShadowDiffer")
    other = Item(SHADOW, 4, "MA", "node-corridor-03", "otherBlockWithLicence")
    question = Item(
        POLICY, 0, "NJ", "node-shore-02", "blockedWithinPolicy", "none", (("amount", "1.00"),)
    )
    applied = apply(waivers, [row, differ, other, question], CLOCK.date())
    assert [m.status for m in applied.matched] == [APPLIED, UNUSED, EXPIRED]
    assert applied.matched[2].items == (differ,)  # named, and waives nothing
    assert set(applied.waived) == {row, differ, question}  # the first covers every kind
    assert applied.unwaived == (other,)
    assert applied.verdict() == "PASS with 1 waiver (until 2026-12-31)"
    # The expiry day itself still holds; the day after, nothing is waived.
    assert not apply(waivers, [row], date(2027, 1, 1)).waived
    assert apply(waivers, [row], date(2026, 12, 31)).waived == (row,)


def test_a_kind_or_question_field_narrows_a_waiver(tmp_path: Path) -> None:
    text = GOOD.replace("[[waiver]]", '[[waiver]]\nkind = "max-wager"\namount = "5000.01"')
    waivers = _read(tmp_path, text).waivers  # type: ignore[attr-defined]
    over = Item(
        POLICY,
        1,
        "NJ",
        "node-shore-02",
        "maxWagerNotEnforced",
        "max-wager",
        (("amount", "5000.01"),),
    )
    at = Item(
        POLICY,
        2,
        "NJ",
        "node-shore-02",
        "maxWagerNotEnforced",
        "max-wager",
        (("amount", "5000.00"),),
    )
    row = Item(SHADOW, 3, "NJ", "node-shore-02", "otherBlockWithLicence")
    applied = apply(waivers, [over, at, row], CLOCK.date())
    assert applied.waived == (over,)


def test_a_missing_file_is_named_with_the_fix(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        read_waivers(tmp_path / "nope.toml", CLOCK, STATES)
    assert caught.value.message == f"{tmp_path / 'nope.toml'}: no such waiver file"
    assert "--waivers" in caught.value.hint


def test_a_path_through_a_file_is_missing_too(tmp_path: Path) -> None:
    """ENOTDIR (a file stands where a folder of the path should be) names no file either: the
    same words, not an OSError."""
    (tmp_path / "file").write_text("x", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_waivers(tmp_path / "file" / "w.toml", CLOCK, STATES)
    assert caught.value.message == f"{tmp_path / 'file' / 'w.toml'}: no such waiver file"
