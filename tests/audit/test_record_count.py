"""The engine-neutral record count (`audit/record_count.py`) against DuckDB's reader and a line
count, and the accounting of records an engine did not read (`audit/accounting.py`)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from compliance_bake.audit import record_count
from compliance_bake.audit.accounting import unread_plays
from compliance_bake.audit.plays_input import has_long_line, without_oversized
from compliance_bake.audit.plays_source import COLUMNS
from compliance_bake.audit.record_count import (
    RecordCount,
    count_records,
    count_stream,
)
from tests._plays_helpers import audit, play, write_parquet

HEADER = ",".join(COLUMNS)
ROW = "a,node-bay-01,MA,02108,x,y,z,1"
# (text after the header, plays as DuckDB counts them: rows plus rejected lines)
CASES = {
    "plain": (f"{ROW}\n{ROW}\n", 2),
    "no final line feed": (f"{ROW}\n{ROW}", 2),
    "blank lines": (f"{ROW}\n\n\n{ROW}\n\n", 2),
    "crlf and a blank": (f"{ROW}\r\n\r\n{ROW}\r\n", 2),
    "a line of spaces": (f"{ROW}\n   \n{ROW}\n", 3),
    "quoted line feed": (f'"a\nb",node-bay-01,MA,02108,x,y,z,1\n{ROW}\nbad,row\n', 3),
    "stray quote mid-field": (f'a"b,node-bay-01,MA,02108,x,y,z,1\n{ROW}\n{ROW}\n', 3),
    "text after a closing quote": (f'ab,node-bay-01,MA,02108,x,y,z,"1"x\n{ROW}\n', 2),
    "only commas": (f"{ROW}\n,,,,,,,\n{ROW}\n", 3),
    "escaped quotes": (f'"a""\n""b",x\n{ROW}\n', 2),
    "escaped quote at the end": (f'"a""",x\n{ROW}\n', 2),
    "unterminated quote": (f'{ROW}\n"abc,\n{ROW}\n{ROW}\n', 2),
    "header only": ("", 0),
}


def _with_header(text: str) -> bytes:
    """The header ends its line as the rows do (DuckDB refuses a mix)."""
    return (HEADER + ("\r\n" if "\r\n" in text else "\n") + text).encode()


def _duckdb_plays(path: Path) -> int:
    """Rows and rejected lines of DuckDB's CSV reader, as the audit reads the file."""
    import duckdb

    columns = "{" + ", ".join(f"'{c}': 'VARCHAR'" for c in COLUMNS) + "}"
    con = duckdb.connect()
    rows = con.execute(
        f"SELECT count(*) FROM read_csv('{path}', header = true, columns = {columns}, "
        "auto_detect = false, delim = ',', quote = '\"', escape = '\"', store_rejects = true, "
        "rejects_table = 'r', rejects_scan = 'rs')"
    ).fetchall()[0][0]
    rejected = con.execute("SELECT count(DISTINCT line) FROM r").fetchall()[0][0]
    con.close()
    return int(rows) + int(rejected)


@pytest.mark.parametrize("name", list(CASES))
def test_the_count_matches_duckdbs_reader(tmp_path: Path, name: str) -> None:
    text, expected = CASES[name]
    path = tmp_path / "plays.csv"
    path.write_bytes(_with_header(text))
    assert count_records(path, quoting=True, header=True).records == expected
    assert _duckdb_plays(path) == expected


@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 64])
def test_the_count_does_not_depend_on_chunk_edges(
    monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    monkeypatch.setattr(record_count, "CHUNK", chunk)
    for name, (text, expected) in CASES.items():
        data = _with_header(text)
        counted = count_stream(io.BytesIO(data), quoting=True, header=True)
        assert counted.records == expected, name


def test_the_count_of_plain_lines_is_the_line_count_less_the_header(tmp_path: Path) -> None:
    path = tmp_path / "plays.csv"
    path.write_text(HEADER + "\n" + "".join(f"p{n},{ROW[2:]}\n" for n in range(10_000)))
    counted = count_records(path, quoting=True, header=True)
    assert counted.records == path.read_bytes().count(b"\n") - 1 == 10_000
    assert counted.lines == 10_001 and counted.oversized == () and not counted.nul


def test_json_lines_are_counted_without_quoting() -> None:
    data = b'{"a": "x\\"y"}\n\n{"b": "\\""}\n"\n'
    counted = count_stream(io.BytesIO(data), quoting=False, header=False)
    assert counted.records == 3  # a lone quote is a line like any other


def test_oversized_records_are_listed_with_line_and_range(tmp_path: Path) -> None:
    long_plain = "y" * 300
    long_quoted = '"' + "q\n" * 150 + '"'  # short lines, one long record
    text = f"{HEADER}\n{ROW}\n{long_plain}\n{ROW}\n{long_quoted},x\n{ROW}\n"
    path = tmp_path / "plays.csv"
    path.write_text(text)
    counted = count_records(path, quoting=True, header=True, limit=100)
    assert counted.records == 5
    assert [(o.line, o.lines) for o in counted.oversized] == [(3, 1), (5, 151)]
    data = path.read_bytes()
    first, second = counted.oversized
    assert data[first.start : first.end] == (long_plain + "\n").encode()
    assert data[second.start : second.end] == (long_quoted + ",x\n").encode()
    assert has_long_line(path, 100) and not has_long_line(path, 400)
    blanked = tmp_path / "blanked.csv"
    without_oversized(path, blanked, counted.oversized)
    kept = blanked.read_text()
    assert kept.count("\n") == text.count("\n")  # every line keeps its number
    assert long_plain not in kept and "q" not in kept and kept.count(ROW) == 3


def test_a_nul_byte_is_noticed() -> None:
    counted = count_stream(io.BytesIO(b"h\na\x00b\n"), quoting=True, header=True)
    assert counted.nul and counted.records == 1


def test_records_an_engine_did_not_return_are_malformed_rows(tmp_path: Path) -> None:
    path = tmp_path / "plays.csv"
    path.write_text(HEADER + "\n")
    count = RecordCount(records=5, oversized=(), lines=6, nul=False)
    unread = unread_plays(path, count, read=3, limit=100)
    assert [v.reason.value for v in unread] == ["malformed-row"] * 2
    assert all(v.line is None and "did not return" in (v.raw or "") for v in unread)
    assert unread_plays(path, count, read=7, limit=100) == []  # more read: the count is a floor


def test_parquet_counts_every_row_of_every_row_group(tmp_path: Path) -> None:
    import duckdb

    rows = [play(f"p{n}") for n in range(50)]
    source = write_parquet(tmp_path / "one.parquet", rows)
    plays = tmp_path / "groups.parquet"
    con = duckdb.connect()
    con.execute(
        f"COPY (SELECT * FROM read_parquet('{source}')) TO '{plays}' "
        "(FORMAT parquet, ROW_GROUP_SIZE 8)"
    )
    con.close()
    result, summary = audit(plays, tmp_path / "out")
    assert result.exit_code == 0
    assert summary["zipWindow"]["totalPlays"] == 50


@pytest.mark.parametrize("block", [1, 2, 3, 7, 64, record_count.FEED_BLOCK])
def test_line_feeds_counts_and_finds_blank_lines_across_blocks(block: int) -> None:
    """Against bytes.count and a regex, at every block size (a blank line across two blocks)."""
    import random
    import re

    rng = random.Random(block)
    blank_line = re.compile(rb"\n\r?\n")
    for _ in range(300):
        data = bytes(rng.choice(b"ab\r\n\n") for _ in range(rng.randint(0, 40)))
        begin = rng.randint(0, len(data))
        end = rng.randint(begin, len(data))
        expected = None if blank_line.search(data, begin, end) else data.count(b"\n", begin, end)
        assert record_count.line_feeds(data, begin, end, block) == expected, (data, begin, end)


def test_bytes_that_are_not_utf8_are_found_and_repaired_in_the_copy(tmp_path: Path) -> None:
    """A character split across two chunks is UTF-8; a stray byte is not, and the copy an engine
    reads holds U+FFFD in its place (CSV only: a JSON line with one is malformed)."""
    split = "h\n" + "a" * (record_count.CHUNK - 3) + "é,x\n"
    whole = count_stream(io.BytesIO(split.encode()), quoting=True, header=True)
    assert whole.records == 1 and not whole.not_utf8
    bad = b"h\nbad\xffutf,x\n"
    found = count_stream(io.BytesIO(bad), quoting=True, header=True)
    assert found.not_utf8
    assert not count_stream(io.BytesIO(bad), quoting=False, header=False).not_utf8
    source, copy = tmp_path / "plays.csv", tmp_path / "copy.csv"
    source.write_bytes(bad)
    without_oversized(source, copy, (), repair_utf8=True)
    assert copy.read_text(encoding="utf-8") == "h\nbad\ufffdutf,x\n"


@pytest.mark.parametrize("size", [40, record_count.FEED_BLOCK * 3])
def test_fields_match_finds_any_line_with_another_count_of_commas(size: int) -> None:
    """Against a count line by line, in the bytes path and the numpy path (a line one comma
    over beside one comma under keeps the total: still found)."""
    import random

    rng = random.Random(size)
    for _ in range(10):
        lines, total = [], 0
        while total < size:
            commas = 3 if rng.random() < 0.9999 else rng.choice([2, 4])
            lines.append(b",".join(b"x" * rng.randint(0, 5) for _ in range(commas + 1)) + b"\n")
            total += len(lines[-1])
        data = b"".join(lines)
        expected = all(line.count(b",") == 3 for line in lines)
        assert record_count.fields_match(data, 0, len(data), 3) == expected
    assert not record_count.fields_match(b"a,b\n,a,b,\na,b\n" * 30_000, 0, 30_000 * 14, 1)


def test_records_with_another_count_of_fields_are_listed_in_every_chunk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Plain lines (in bulk), a quoted field, a quoted line feed: each record whose count of
    fields is not the header's is listed with its line and byte range, but for a plain line
    that ends in no comma (too few fields, or a value too many), which the reader rejects."""
    monkeypatch.setattr(record_count, "CHUNK", 4096)
    rows = [ROW] * 3000
    bad = {
        10: ROW + ",,",
        700: ROW[:-2],  # left to the reader
        1500: '"q,1",' + ROW[2:] + ',""',
        2200: '"q\n2",' + ROW[2:] + ",",
        2900: '"q,3",' + ROW[2:],  # quoted, and right
    }
    for at, row in bad.items():
        rows[at] = row
    text = HEADER + "\n" + "".join(row + "\n" for row in rows)
    path = tmp_path / "plays.csv"
    path.write_text(text)
    counted = count_records(path, quoting=True, header=True)
    assert counted.records == 3000
    assert [m.line for m in counted.misfits] == [2 + at for at in (10, 1500, 2200)]
    assert [m.fields for m in counted.misfits] == [10, 9, 9]
    data = path.read_bytes()
    for misfit, at in zip(counted.misfits, (10, 1500, 2200), strict=True):
        assert data[misfit.start : misfit.end] == (bad[at] + "\n").encode()
    # Beside a line that ends in a comma, a line a field short is listed too.
    rows[11] = ROW[:-2]
    path.write_text(HEADER + "\n" + "".join(row + "\n" for row in rows))
    assert [m.line for m in count_records(path, quoting=True, header=True).misfits][:2] == [12, 13]


@pytest.mark.parametrize("given", [None, "2"])
def test_numpy_is_imported_with_one_openblas_thread_unless_the_user_chose(
    tmp_path: Path, given: str | None
) -> None:
    """The count compares bytes only: numpy's OpenBLAS pool is started at one thread (its
    threads cost CPU at import), and a value the user set is kept."""
    import os
    import subprocess
    import sys

    plays = tmp_path / "plays.csv"
    plays.write_text(HEADER + "\n" + (ROW + "\n") * 20_000)  # past one block: the numpy path
    script = (
        "import os, sys; from pathlib import Path\n"
        "from compliance_bake.audit.record_count import count_records\n"
        "assert 'numpy' not in sys.modules\n"
        "print(count_records(Path(sys.argv[1]), quoting=True, header=True).records,\n"
        "      'numpy' in sys.modules, os.environ.get('OPENBLAS_NUM_THREADS'))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if given is not None:
        env["OPENBLAS_NUM_THREADS"] = given
    done = subprocess.run(
        [sys.executable, "-c", script, str(plays)], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["20000", "True", given or "1"]
