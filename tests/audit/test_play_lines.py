"""The file line of violating plays (audit/play_lines.py), held to a plain walk of the file.

Crafted files hold what moves lines: a byte order mark, CRLF line ends, quoted fields holding
line feeds, blank lines, two rows with one play id (one clean, one violating), identical
violating rows, and for JSON Lines spacing and key order variants. The audit runs for real (on
DuckDB, and on Spark with the `spark` marker); every line it reports must be the first physical
line of a record that reads as that play, found by the csv module enumerating every record of
the file, and the crafted lines are also spelled out.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from compliance_bake.audit.engines import EngineOptions
from compliance_bake.audit.play_lines import with_lines
from compliance_bake.audit.plays_source import COLUMNS
from compliance_bake.audit.violations import ViolatingPlay, Violation
from compliance_bake.audit.zip_window import run_zip_window
from compliance_bake.inputs.fixtures import load_fixtures
from compliance_bake.resources import demo_fixtures_dir
from tests._plays_helpers import audit, play, report, write_csv
from tests._spark_helpers import SPARK_MASTER
from tests.conftest import run_cli

NOW = datetime(2026, 11, 22, 4, 6, tzinfo=UTC)
HEADER = ",".join(COLUMNS)
IN = "2026-11-20T10:00:01.000Z"


def _row(play_id: str, partner: str = "node-bay-01", state: str = "MA", zip_code: str = "02108",
         wager: str = "basketball.totals", enriched: str = IN) -> str:  # fmt: skip
    return ",".join([play_id, partner, state, zip_code, "2026-11-20T10:00:00.000Z", enriched,
                     wager, "10.00"])  # fmt: skip


def _audit(path: Path, engine: str = "duckdb", bound: int | None = None) -> list[ViolatingPlay]:
    registry = load_fixtures(demo_fixtures_dir()).registry
    options = EngineOptions(engine, SPARK_MASTER) if engine == "spark" else EngineOptions()
    return run_zip_window(path, registry, NOW, engine=options, bound=bound).violations


def _records(path: Path) -> dict[int, list[str]]:
    """Every record of a CSV file by its first physical line: the csv module over the whole
    text, no budget, no lookup."""
    text = path.read_bytes().decode("utf-8-sig")
    reader = csv.reader(io.StringIO(text, newline=""))
    found, start = {}, 1
    for record in reader:
        found[start] = record
        start = reader.line_num + 1
    return found


def _held_to_the_plain_walk(path: Path, plays: list[ViolatingPlay]) -> None:
    records = _records(path)
    names = records.pop(1)
    for p in plays:
        if p.line is None or p.reason is Violation.MALFORMED_ROW and p.play_id is None:
            continue
        values = dict(zip(names, records[p.line], strict=True))
        assert [values[c] or None for c in ("play_id", "partner", "state", "zip", "enriched_at")] \
            == [p.play_id, p.partner, p.state, p.zip, p.enriched_at], p  # fmt: skip


# The crafted CSV: (text, play id violating there or None); lines follow from the text.
CRAFTED = [
    ("\ufeff" + HEADER + "\r\n", None),  # 1: BOM and CRLF
    (_row("clean-1") + "\r\n", None),  # 2
    ("\r\n", None),  # 3: a blank CRLF line
    (_row("dup") + "\n", None),  # 4: one id, clean here ...
    (_row("spans", wager='"two\nlines"', state="XX") + "\n", "spans"),  # 5-6
    ("\n", None),  # 7: blank
    (_row("dup", partner="node-offshore-04") + "\n", "dup"),  # 8: ... and violating here
    (_row("clean-2", wager='"a\r\nb\nc"') + "\n", None),  # 9-11: quoted CRLF and LF
    (_row("twin", zip_code="99999") + "\n", "twin"),  # 12
    (_row("zz-first", zip_code="0210") + "\n", "zz-first"),  # 13
    (_row("twin", zip_code="99999") + "\n", "twin"),  # 14: the same row again
    (_row("aa-last", zip_code="021") + "\r\n", "aa-last"),  # 15
    (_row("two-ways", zip_code="0210") + "\n", "two-ways"),  # 16: one id, two reasons
    (_row("two-ways", state="XX") + "\n", "two-ways"),  # 17
    (_row("", zip_code="0210") + "\n", ""),  # 18: no play id
]
EXPECTED = {"spans": [5], "dup": [8], "twin": [12, 14], "zz-first": [13], "aa-last": [15],
            "two-ways": [16, 17], "": [18]}  # fmt: skip


def _crafted_csv(path: Path, engine: str = "duckdb") -> Path:
    """The crafted file; for Spark with line feeds only, for Spark reads a CSV whose lines end
    both ways as one malformed row (the lines stay where they are)."""
    text = "".join(text for text, _ in CRAFTED)
    if engine == "spark":
        text = text.replace("\r\n", "\n")
    path.write_bytes(text.encode("utf-8"))
    return path


def _lines(plays: list[ViolatingPlay]) -> dict[str, list[int | None]]:
    found: dict[str, list[int | None]] = {}
    for p in plays:
        found.setdefault(p.play_id or "", []).append(p.line)
    return found


def test_csv_lines_are_the_first_physical_line_of_the_violating_record(
    tmp_path: Path, engine: str
) -> None:
    path = _crafted_csv(tmp_path / "plays.csv", engine)
    plays = _audit(path, engine)
    assert _lines(plays) == EXPECTED
    _held_to_the_plain_walk(path, plays)
    # the report's order: within a reason, file order (zz-first before aa-last)
    malformed_zip = [p.play_id for p in plays if p.reason is Violation.MALFORMED_ZIP]
    assert malformed_zip == ["zz-first", "aa-last", "two-ways", None]


def test_jsonl_lines_with_spacing_variants(tmp_path: Path, engine: str) -> None:
    def line(play_id: str, spacing: str = "", **fields: str) -> str:
        row = play(play_id, **fields)
        if spacing == "loose":
            return "{ " + " , ".join(f'"{k}" :\t{json.dumps(v)}' for k, v in row.items()) + " }"
        if spacing == "reversed":
            return json.dumps(dict(reversed(list(row.items()))), separators=(",", ":"))
        return json.dumps(row)

    twice = json.dumps(play("key-twice")).replace('"zip": "02108"', '"zip": "02108", "zip": "1"')
    lines = [
        line("clean-1"),  # 1
        "",  # 2
        line("loose", "loose", state="XX"),  # 3
        line("dup"),  # 4: clean
        line("dup", "reversed", partner="node-offshore-04") + "\r",  # 5: violating, CRLF
        "  ",  # 6: blanks only: a malformed row, which the engine numbers or not
        line("tight", "reversed", zip="0210"),  # 7
        twice,  # 8: a key twice: malformed, found by its text
    ]
    path = tmp_path / "plays.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    found = _lines(_audit(path, engine))
    assert {k: v for k, v in found.items() if k} == {"loose": [3], "dup": [5], "tight": [7]}
    by_line = sorted(n for n in found[""] if n is not None)
    assert 8 in by_line  # the key twice: its malformed row named by its line


def test_a_violating_json_play_nested_past_the_parser_s_depth_is_audited_without_a_crash(
    tmp_path: Path,
) -> None:
    """A violating play that also holds an array nested 200,000 deep: the engine reads and
    counts it, and the walk that looks for its line reads it through inputs/jsonio, which
    refuses the nesting in one error (a plain json.loads raises RecursionError: exit 4). The
    play is reported, without a line; the clean play's line is not taken by it."""
    row = json.dumps(play("deep", partner="node-offshore-04"))
    deep = row[:-1] + ', "x": ' + "[" * 200_000 + "]" * 200_000 + "}"
    path = tmp_path / "plays.jsonl"
    path.write_text("\n".join([json.dumps(play("clean")), deep]) + "\n", encoding="utf-8")
    assert _lines(_audit(path)) == {"deep": [None]}
    out = tmp_path / "out"
    done = run_cli(
        "audit", "deep", "--plays", str(path), "--out", str(out), "--now", NOW.isoformat()
    )
    assert done.returncode == 1, done.stderr
    assert "internal error" not in done.stderr


def test_a_row_the_engine_rejects_lends_its_line_to_no_play(tmp_path: Path) -> None:
    """Text after a closing quote: the csv module reads `"node-offshore-04"x` as the value of
    the next row, which DuckDB reads; DuckDB rejects this one, so the play is the next row's."""
    path = tmp_path / "plays.csv"
    rejected = _row("p", partner='"node-offshore-04"x')
    path.write_text("\n".join([HEADER, rejected, _row("p", partner="node-offshore-04x")]) + "\n")
    assert _lines(_audit(path)) == {"": [2], "p": [3]}


def test_columns_in_another_order_and_the_id_last(tmp_path: Path) -> None:
    names = [*COLUMNS[1:], "note", "play_id"]

    def row(play_id: str, **fields: str) -> str:
        values = {**play(play_id, **fields), "note": "n"}
        return ",".join(str(values[n]) for n in names) + "\r\n"

    path = tmp_path / "plays.csv"
    path.write_text(",".join(names) + "\r\n" + row("a") + row("b", state="XX") + "\r\n"
                    + row("c", zip="0210"), encoding="utf-8", newline="")  # fmt: skip
    assert _lines(_audit(path)) == {"c": [5], "b": [3]}


def test_the_walk_stops_at_its_budget_and_after_the_first_of_each_reason(
    tmp_path: Path,
) -> None:
    rows = [play(f"c{n:05}") for n in range(3000)]
    rows[0] = play("early", state="XX")
    rows[1] = play("early-2", state="XX")
    rows[2998] = play("late", state="XX")
    path = write_csv(tmp_path / "plays.csv", rows)
    plays = _audit(path)
    assert _lines(plays) == {"early": [2], "early-2": [3], "late": [3000]}
    unlocated = [replace(p, line=None) for p in plays]
    # a budget spent before the last play: it keeps no line, and nothing else changes
    small = with_lines(path, "csv", unlocated, budget=1)
    assert _lines(small) == {"early": [2], "early-2": [3], "late": [None]}
    # the first of each reason: the walk stops once it has it
    first = with_lines(path, "csv", unlocated, first=1)
    assert _lines(first) == {"early": [2], "early-2": [None], "late": [None]}


def test_no_lines_for_parquet_standard_input_or_a_missing_file(tmp_path: Path) -> None:
    path = _crafted_csv(tmp_path / "plays.csv")
    unlocated = sorted((replace(p, line=None) for p in _audit(path)), key=ViolatingPlay.sort_key)
    for where, fmt in ((path, "parquet"), ("-", "csv"), (tmp_path / "gone.csv", "csv")):
        assert with_lines(where, fmt, unlocated) == unlocated


def test_past_the_bound_the_listed_plays_get_their_lines(tmp_path: Path) -> None:
    path = _crafted_csv(tmp_path / "plays.csv")
    plays = _audit(path, bound=3)  # the first three in the engine's order: by reason, then id
    assert _lines(plays) == {"": [18], "aa-last": [15], "two-ways": [16]}


def test_the_report_names_lines_and_stays_byte_identical(tmp_path: Path) -> None:
    path = _crafted_csv(tmp_path / "plays.csv")
    first, summary = audit(path, tmp_path / "a")
    again, _ = audit(path, tmp_path / "b")
    assert first.exit_code == again.exit_code == 1
    a = (tmp_path / "a" / "audit" / "zip-window.json").read_bytes()
    assert a == (tmp_path / "b" / "audit" / "zip-window.json").read_bytes()
    assert [(v["playId"], v.get("line")) for v in report(tmp_path / "a")["violations"]] == [
        ("zz-first", 13), ("aa-last", 15), ("two-ways", 16), (None, 18), ("spans", 5),
        ("two-ways", 17), ("twin", 12), ("twin", 14), ("dup", 8)
    ]  # fmt: skip
    assert summary["firstViolations"][0] == {**report(tmp_path / "a")["violations"][0]}


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_lines_survive_an_unreadable_tail(tmp_path: Path, fmt: str) -> None:
    """A record the walk cannot follow (a quoted field past the csv module's limit) ends the
    walk: the lines before it stand, none after it is guessed. A long line without a quote is
    split at its commas, with no such limit."""
    huge = "x" * (csv.field_size_limit() + 10)
    rows = [
        play("before", state="XX"),
        play("long", wager_type=huge),
        play("quoted", wager_type="a," + huge),  # a comma: the csv writer quotes it
        play("after", state="XX"),
    ]
    if fmt == "csv":
        path = write_csv(tmp_path / "plays.csv", rows)
        expected = {"before": [2], "after": [None]}
    else:
        path = tmp_path / "plays.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        expected = {"before": [1], "after": [4]}  # JSON lines have no such limit
    plays = _audit(path)
    assert _lines(plays) == expected
    if fmt == "csv":  # without the quoted one, the walk reads on past the long line
        rows.pop(2)
        assert _lines(_audit(write_csv(tmp_path / "plays.csv", rows))) == {
            "before": [2], "after": [4]
        }  # fmt: skip


def test_every_output_lists_no_more_plays_with_their_place_than_are_located() -> None:
    """The first FIRST_LOCATED plays of each reason have their line: as many as any output
    lists of a case (JUnit lists more, the first of them with lines)."""
    from compliance_bake.audit.play_lines import FIRST_LOCATED
    from compliance_bake.audit.report import FIRST_SHOWN
    from compliance_bake.cli.report_github import GITHUB_ITEMS, MARKDOWN_ITEMS
    from compliance_bake.cli.report_json import JSON_ITEMS
    from compliance_bake.cli.short_summary import ITEMS_SHOWN
    from compliance_bake.report.portal import SAMPLE_LIMIT

    shown = (FIRST_SHOWN, GITHUB_ITEMS, MARKDOWN_ITEMS, JSON_ITEMS, ITEMS_SHOWN, SAMPLE_LIMIT)
    assert max(shown) == FIRST_LOCATED
