"""No play hides from the audit: every record of a plays file counts in totalPlays, an oversized
one included, read from a file or from standard input; a FIFO is refused, not waited on.

Real CLI, real DuckDB, real files: the 50 MB rows are written in 1 MiB chunks into tmp_path.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from compliance_bake.audit import record_count
from compliance_bake.audit.plays_source import COLUMNS
from tests._plays_helpers import audit, play, report, write_csv, write_jsonl
from tests.conftest import NOW, diagnostics

MIB = 1 << 20
BIG = 50  # MiB: past the size DuckDB 2.0 silently drops with its default max_line_size


def physical_lines(path: Path) -> int:
    """The file's line count, as `wc -l` gives it (every file here ends in a line feed)."""
    with path.open("rb") as handle:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(MIB), b""))


def _csv_line(row: dict[str, str | None]) -> str:
    return ",".join("" if row[c] is None else str(row[c]) for c in COLUMNS) + "\n"


def write_with_big_row(path: Path, field: str, last: bool, mib: int = BIG) -> Path:
    """Two clean plays and an unlicensed one whose `field` holds `mib` MiB, in the middle or
    last; written in chunks, so the test never holds the row in memory."""
    big = play("big", partner="node-offshore-04")
    big[field] = "\0"
    before, after = _csv_line(big).split("\0")
    with path.open("w", encoding="utf-8", newline="") as handle:
        handle.write(",".join(COLUMNS) + "\n")
        handle.write(_csv_line(play("first")))
        if last:
            handle.write(_csv_line(play("second")))
        handle.write(before)
        for _ in range(mib):
            handle.write("9" * MIB)
        handle.write(after)
        if not last:
            handle.write(_csv_line(play("second")))
    return path


@pytest.mark.product  # scale: 50 MB rows (make test-fast leaves them to make test)
@pytest.mark.parametrize("last", [False, True], ids=["middle", "last-line"])
@pytest.mark.parametrize("field", ["stake", "play_id"])
def test_a_50_mb_field_is_read_and_its_unlicensed_play_fails_the_audit(
    tmp_path: Path, field: str, last: bool
) -> None:
    plays = write_with_big_row(tmp_path / "plays.csv", field, last)
    result, summary = audit(plays, tmp_path / "out")
    assert summary["zipWindow"]["totalPlays"] == physical_lines(plays) - 1 == 3
    assert result.exit_code == 1
    assert summary["byReason"]["partner-not-licensed"] == 1 == summary["violations"]
    (found,) = report(tmp_path / "out")["violations"]
    assert found["partner"] == "node-offshore-04"
    if field == "play_id":
        assert len(found["playId"]) == BIG * MIB


@pytest.mark.product  # scale
def test_a_header_and_one_50_mb_line_is_one_malformed_play(tmp_path: Path) -> None:
    plays = tmp_path / "plays.csv"
    with plays.open("w", encoding="utf-8") as handle:
        handle.write(",".join(COLUMNS) + "\n")
        for _ in range(BIG):
            handle.write("x" * MIB)  # one column where eight are needed
        handle.write("\n")
    result, summary = audit(plays, tmp_path / "out")
    assert result.exit_code == 1
    assert summary["zipWindow"]["totalPlays"] == 1 == physical_lines(plays) - 1
    assert summary["byReason"]["malformed-row"] == 1 == summary["violations"]
    assert [v["line"] for v in report(tmp_path / "out")["violations"]] == [2]


@pytest.fixture
def small_limit(monkeypatch: pytest.MonkeyPatch) -> int:
    """The reader's limit at 1 MiB, so that a 3 MiB record is past it (64 MiB in use)."""
    monkeypatch.setattr(record_count, "RECORD_LIMIT", MIB)
    return MIB


def test_records_near_the_limit_across_the_readers_buffers_are_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reader's buffer is as long as its limit (audit/engines/duckdb_plays.py): three records of
    15 MiB under a 16 MiB limit cross the buffers' edges at 16 and 32 MiB, and each is read."""
    monkeypatch.setattr(record_count, "RECORD_LIMIT", 16 * MIB)
    plays = tmp_path / "plays.csv"
    with plays.open("w", encoding="utf-8", newline="") as handle:
        handle.write(",".join(COLUMNS) + "\n")
        for n in range(3):
            big = play(f"big-{n}", partner="node-offshore-04")
            big["stake"] = "\0"
            before, after = _csv_line(big).split("\0")
            handle.write(before)
            for _ in range(15):
                handle.write("9" * MIB)
            handle.write(after)
            handle.write(_csv_line(play(f"clean-{n}")))
    result, summary = audit(plays, tmp_path / "out")
    assert summary["zipWindow"]["totalPlays"] == physical_lines(plays) - 1 == 6
    assert summary["byReason"]["partner-not-licensed"] == 3 == summary["violations"]
    assert result.exit_code == 1
    ids = sorted(v["playId"] for v in report(tmp_path / "out")["violations"])
    assert ids == ["big-0", "big-1", "big-2"]


@pytest.mark.parametrize("last", [False, True], ids=["middle", "last-line"])
def test_a_record_past_the_readers_limit_is_a_malformed_row_with_its_line(
    tmp_path: Path, small_limit: int, last: bool
) -> None:
    plays = write_with_big_row(tmp_path / "plays.csv", "stake", last, mib=3)
    with plays.open("a", encoding="utf-8") as handle:
        handle.write("too,few,columns\n")  # a reject after the blanked record keeps its line
    result, summary = audit(plays, tmp_path / "out")
    assert result.exit_code == 1  # the unlicensed play is not lost: it is malformed-row
    assert summary["zipWindow"]["totalPlays"] == physical_lines(plays) - 1 == 4
    assert summary["byReason"]["malformed-row"] == 2 == summary["violations"]
    found = {v["line"]: v for v in report(tmp_path / "out")["violations"]}
    big_line = 4 if last else 3
    assert set(found) == {big_line, 5}
    assert "a record of 3,1" in found[big_line]["raw"]
    assert "over the reader's limit of 1,048,576 bytes" in found[big_line]["raw"]
    assert "node-offshore-04" in found[big_line]["raw"]  # its first bytes


def test_a_json_line_past_the_limit_is_a_malformed_row(tmp_path: Path, small_limit: int) -> None:
    plays = write_jsonl(tmp_path / "plays.jsonl", [play("a"), play("b")])
    with plays.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(play("big", partner="node-offshore-04", stake="9" * 3 * MIB)))
        handle.write("\n" + json.dumps(play("c")) + "\n")
    result, summary = audit(plays, tmp_path / "out")
    assert result.exit_code == 1
    assert summary["zipWindow"]["totalPlays"] == physical_lines(plays) == 4
    assert [(v["reason"], v["line"]) for v in report(tmp_path / "out")["violations"]] == [
        ("malformed-row", 3)
    ]


@pytest.mark.product  # scale
def test_a_50_mb_json_line_is_read(tmp_path: Path) -> None:
    plays = write_jsonl(tmp_path / "plays.jsonl", [play("a")])
    before, after = json.dumps(play("big", partner="node-offshore-04", stake="\0")).split("\\u0000")
    with plays.open("a", encoding="utf-8") as handle:
        handle.write(before)
        for _ in range(BIG):
            handle.write("9" * MIB)
        handle.write(after + "\n")
    result, summary = audit(plays, tmp_path / "out")
    assert summary["zipWindow"]["totalPlays"] == physical_lines(plays) == 2
    assert summary["byReason"]["partner-not-licensed"] == 1 and result.exit_code == 1


def _counts(summary: dict[str, Any]) -> dict[str, Any]:
    return {k: summary[k] for k in ("zipWindow", "notEnrichedPlays", "violations", "byReason")}


def _stdin_audit(plays: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[bytes]:
    with plays.open("rb") as stdin:
        return subprocess.run(
            [sys.executable, "-m", "compliance_bake", "audit", "deep", "--plays", "-", "--now",
             NOW, "--out", str(out), "--json", *extra],
            stdin=stdin, capture_output=True, timeout=120, check=False,
        )  # fmt: skip


def test_standard_input_gives_the_counts_and_report_of_the_file(tmp_path: Path) -> None:
    rows = [play("a"), play("b", zip="2108"), play("c", partner="node-offshore-04")]
    plays = write_csv(tmp_path / "plays.csv", rows)
    with plays.open("a", encoding="utf-8") as handle:
        handle.write('"multi\nline",too-few\n\n')  # a quoted line feed and a blank line
    _, from_file = audit(plays, tmp_path / "file")
    piped = _stdin_audit(plays, tmp_path / "stdin")
    assert piped.returncode == 1, piped.stderr
    from_stdin = json.loads(piped.stdout)
    assert _counts(from_stdin) == _counts(from_file)
    assert from_stdin["zipWindow"]["totalPlays"] == 4
    assert from_stdin["plays"] == "-" and "--plays -" in from_stdin["command"]
    file_report, stdin_report = report(tmp_path / "file"), report(tmp_path / "stdin")
    # the file's report also names the lines of the plays read (audit/play_lines.py); standard
    # input's spooled copy is gone by then, so its report names only the malformed rows' lines
    read = [{k: v for k, v in p.items() if k != "line" or p["playId"] is None}
            for p in file_report["violations"]]  # fmt: skip
    assert read != file_report["violations"]
    assert stdin_report["violations"] == read
    assert stdin_report["deepAudit"]["zipWindow"] == file_report["deepAudit"]["zipWindow"]


def test_standard_input_takes_json_lines_with_format(tmp_path: Path) -> None:
    plays = write_jsonl(tmp_path / "plays.jsonl", [play("a"), play("b", zip="00000")])
    piped = _stdin_audit(plays, tmp_path / "out", "--format", "jsonl")
    summary = json.loads(piped.stdout)
    assert summary["format"] == "jsonl" and summary["zipWindow"]["totalPlays"] == 2
    assert summary["byReason"]["zip-not-real"] == 1
    assert "--plays - --format jsonl" in summary["command"]


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_fifo_or_a_device_as_plays_is_refused_at_once(tmp_path: Path, kind: str) -> None:
    plays = tmp_path / "plays.csv"
    if kind == "fifo":
        os.mkfifo(plays)  # no writer: opening it to read would wait for ever
    else:
        plays.symlink_to("/dev/zero")
    done = subprocess.run(
        [sys.executable, "-m", "compliance_bake", "audit", "deep", "--plays", str(plays),
         "--out", str(tmp_path / "out")],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    lines = diagnostics(done.stderr).strip().splitlines()
    assert len(lines) == 1 and "not a regular file" in lines[0] and str(plays) in lines[0]
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("engine", "form"),
    [
        ("duckdb", "path"),
        ("duckdb", "file:"),
        ("duckdb", "-"),
        pytest.param("spark", "path", marks=pytest.mark.spark),
        pytest.param("spark", "file:", marks=pytest.mark.spark),
        pytest.param("spark", "-", marks=pytest.mark.spark),
    ],
)
def test_a_fifo_plays_path_is_refused_on_every_engine_and_form(
    tmp_path: Path, engine: str, form: str
) -> None:
    """A FIFO as plays waits for a writer for ever if opened as a file (`path.open`): every
    reader of a plays file, on every engine and form, opens it through the one opener
    (inputs/files.open_regular), which refuses it at once. A named FIFO redirected in as `-`
    (the shell's `< fifo`, a writer holding it open) is refused as its path is."""
    fifo = tmp_path / "plays.csv"
    os.mkfifo(fifo)
    given = {"path": str(fifo), "file:": f"file://{fifo}"}.get(form, "-")
    engine_args = () if engine == "duckdb" else ("--engine", "spark", "--spark-master", "local[1]")
    writer = os.open(fifo, os.O_RDWR) if form == "-" else None
    with open(fifo, "rb") if writer is not None else open(os.devnull, "rb") as stdin:
        done = subprocess.run(
            [sys.executable, "-m", "compliance_bake", "audit", "deep", "--plays", given,
             *engine_args, "--now", NOW, "--out", str(tmp_path / "out")],
            stdin=stdin, capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
    if writer is not None:
        os.close(writer)
    assert done.returncode == 2, done.stderr
    # The JVM's own start-up notice (`WARNING: Using incubator modules`) is not ours.
    lines = diagnostics(done.stderr).strip().splitlines()
    (line,) = [text for text in lines if text.startswith("compliance-bake")]
    assert ("a named FIFO" if form == "-" else "not a regular file (a FIFO)") in line, line
    assert str(fifo) in line, line
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("engine", ["duckdb", pytest.param("spark", marks=pytest.mark.spark)])
def test_plays_piped_in_as_standard_input_are_audited(tmp_path: Path, engine: str) -> None:
    """`zcat plays.csv.gz | compliance-bake audit deep --plays -`: a pipe is the stream `-` is
    for, and is audited as the same file given by its path is."""
    plays = write_csv(tmp_path / "plays.csv", [play("p1"), play("p2")])
    engine_args = () if engine == "duckdb" else ("--engine", "spark", "--spark-master", "local[1]")
    done = subprocess.run(
        [sys.executable, "-m", "compliance_bake", "audit", "deep", "--plays", "-", "--json",
         *engine_args, "--now", NOW, "--out", str(tmp_path / "out")],
        input=plays.read_text(), capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["zipWindow"]["totalPlays"] == 2, done.stdout


def test_a_long_play_id_is_clipped_on_the_terminal_and_whole_in_the_report(
    tmp_path: Path,
) -> None:
    """The terminal shows the start of a long value and how long it is (the table's cell ends
    in …, the short summary gives the length); the report file keeps the value whole."""
    long_id = "p" + "7" * 299_999
    plays = write_csv(
        tmp_path / "plays.csv", [play("short"), play(long_id, partner="node-offshore-04")]
    )
    from tests.conftest import invoke

    result = invoke(
        "audit", "deep", "--plays", str(plays), "--now", NOW, "--out", str(tmp_path / "out")
    )
    assert result.exit_code == 1
    cells = "".join(ch for ch in result.output if not ch.isspace() and ch != "│")
    assert "…(300,000characters;wholeinthereport)" in cells  # the summary gives its length
    assert len(result.output) < 5_000  # not 300,000 characters folded over 3,750 lines
    (found,) = report(tmp_path / "out")["violations"]
    assert found["playId"] == long_id
