"""Attacks on the plays file: plays are read as the rest of the world reads them, or refused.

Each case writes a real file and runs the real CLI (`audit deep --json`); a play the audit
cannot read as every reader would is a `malformed-row`, never a clean play nor a whole-file
failure.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests._plays_helpers import audit, play, write_csv

LINE = b"pl-%d,node-bay-01,MA,02108,2026-11-20T10:00:00.000Z,2026-11-20T10:00:01.000Z,x,1.00"
HEADER = b"play_id,partner,state,zip,placed_at,enriched_at,wager_type,stake"


def _play_json(play_id: str, **extra: str) -> str:
    return json.dumps(play(play_id))[:-1] + "".join(f', "{k}": "{v}"' for k, v in extra.items())


def test_a_json_line_with_a_duplicate_key_is_a_malformed_row(tmp_path: Path, engine: str) -> None:
    """First-wins would audit `MA`; Python and jq read the last value, `XX`: refused instead,
    on both engines."""
    plays = tmp_path / "plays.jsonl"
    plays.write_text(
        json.dumps(play("pl-1")) + "\n" + _play_json("pl-2", state="XX") + "}\n",
        encoding="utf-8",
    )
    result, summary = audit(plays, tmp_path / "out", engine=engine)
    assert result.exit_code == 1, result.output
    assert summary["zipWindow"]["totalPlays"] == 2
    assert summary["byReason"]["malformed-row"] == 1 and summary["violations"] == 1
    (bad,) = summary["firstViolations"]
    assert bad["reason"] == "malformed-row" and '"XX"' in bad["raw"]


def test_a_first_json_line_with_a_duplicate_key_is_a_play_not_a_refused_file(
    tmp_path: Path,
) -> None:
    """Line 1 plays the header's part, but it is a play too: a key twice there is that play's
    malformed-row, not "not a JSON object"."""
    plays = tmp_path / "plays.jsonl"
    plays.write_text(
        _play_json("pl-1", state="XX") + "}\n" + json.dumps(play("pl-2")) + "\n",
        encoding="utf-8",
    )
    result, summary = audit(plays, tmp_path / "out")
    assert result.exit_code == 1, result.output
    assert summary["zipWindow"]["totalPlays"] == 2
    assert summary["byReason"]["malformed-row"] == 1 and summary["violations"] == 1


def _lines_ending(tmp_path: Path, ends: list[bytes]) -> Path:
    plays = tmp_path / "plays.csv"
    body = HEADER + ends[0]
    for i, end in enumerate(ends[1:], start=1):
        body += LINE % i + end
    plays.write_bytes(body)
    return plays


def test_one_crlf_in_an_lf_file_is_read_not_a_whole_file_failure(tmp_path: Path) -> None:
    plays = _lines_ending(tmp_path, [b"\n", b"\r\n", b"\n", b"\n"])
    result, summary = audit(plays, tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert summary["zipWindow"]["totalPlays"] == 3 == summary["zipWindow"]["inWindowPlays"]


def test_an_lf_line_in_a_crlf_file_is_read(tmp_path: Path) -> None:
    plays = _lines_ending(tmp_path, [b"\r\n", b"\r\n", b"\n", b"\r\n"])
    result, summary = audit(plays, tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert summary["zipWindow"]["totalPlays"] == 3


def test_a_lone_cr_ends_a_line_as_some_writers_mean_it(tmp_path: Path) -> None:
    plays = _lines_ending(tmp_path, [b"\n", b"\r", b"\n", b"\n"])
    result, summary = audit(plays, tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert summary["zipWindow"]["totalPlays"] == 3 == summary["zipWindow"]["inWindowPlays"]


def test_a_crlf_file_alone_is_read_in_place(tmp_path: Path) -> None:
    plays = _lines_ending(tmp_path, [b"\r\n", b"\r\n", b"\r\n"])
    result, summary = audit(plays, tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert summary["zipWindow"]["totalPlays"] == 2


def test_the_cr_fix_keeps_a_bad_line_bad(tmp_path: Path) -> None:
    """Read after the line ends are made one, a row with too many values is still malformed."""
    plays = _lines_ending(tmp_path, [b"\n", b"\r\n", b",extra\n"])
    result, summary = audit(plays, tmp_path / "out")
    assert result.exit_code == 1, result.output
    assert summary["byReason"]["malformed-row"] == 1
    assert [v["line"] for v in summary["firstViolations"]] == [3]


def test_a_clean_file_still_passes(tmp_path: Path) -> None:
    result, summary = audit(write_csv(tmp_path / "plays.csv", [play("p-1")]), tmp_path / "out")
    assert result.exit_code == 0 and summary["violations"] == 0


@pytest.mark.parametrize("commas", [7, 5_000_000], ids=["eight-empty-fields", "5-MB-of-commas"])
def test_a_line_of_commas_is_a_malformed_row_not_a_malformed_zip(
    tmp_path: Path, commas: int
) -> None:
    plays = tmp_path / "plays.csv"
    plays.write_bytes(HEADER + b"\n" + b"," * commas + b"\n" + LINE % 1 + b"\n")
    result, summary = audit(plays, tmp_path / "out")
    assert result.exit_code == 1, result.output
    assert summary["zipWindow"]["totalPlays"] == 2
    assert summary["byReason"]["malformed-row"] == 1
    assert summary["byReason"]["malformed-zip"] == 0


@pytest.mark.parametrize(
    "row",
    [
        LINE % 2 + b"," * 40,  # the eight values and 40 empty fields
        LINE % 2 + b',""',  # an empty quoted field too many
        b'"pl-2",node-bay-01,MA,"02108\n",x,2026-11-20T10:00:01.000Z,x,1.00,,',  # spans 2 lines
        b"pl-2,node-bay-01,MA,02108,x,2026-11-20T10:00:01.000Z,x",  # a field short
    ],
    ids=["forty-empty-fields", "empty-quoted-field", "quoted-line-feed", "one-field-short"],
)
def test_a_row_with_the_wrong_number_of_fields_is_a_malformed_row_with_its_line(
    tmp_path: Path, row: bytes, engine: str
) -> None:
    """DuckDB's reader passes extra empty fields as a clean play: each such row is refused, on
    both engines, with its physical line on DuckDB (Spark's readers give no line)."""
    plays = tmp_path / "plays.csv"
    plays.write_bytes(
        HEADER + b"\n" + LINE % 1 + b"\n" + row + b"\n" + LINE % 3 + b"\n"
        + b'"pl-4","node-bay-01",MA,"02108","a,b\nc",2026-11-20T10:00:01.000Z,x,1.00\n'
    )  # fmt: skip
    result, summary = audit(plays, tmp_path / "out", engine=engine)
    assert result.exit_code == 1, result.output
    assert summary["zipWindow"]["totalPlays"] == 4
    assert summary["byReason"]["malformed-row"] == 1 and summary["violations"] == 1
    (bad,) = summary["firstViolations"]
    assert bad["reason"] == "malformed-row"
    if engine == "duckdb":
        assert bad["line"] == 3 and bad["raw"] == row.decode()
