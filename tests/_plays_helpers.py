"""Plays files for the audit tests: one play as a dict, written as CSV, JSON Lines or Parquet."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from click.testing import Result

from compliance_bake.audit.plays_source import COLUMNS
from tests.conftest import NOW, invoke

FORMATS = ("csv", "jsonl", "parquet")
# The audit's window at NOW (2026-11-22T04:06:00Z) with 90 days: both edges are in it.
UPPER = "2026-11-22T04:06:00.000Z"
LOWER = "2026-08-24T04:06:00.000Z"


def play(play_id: str, **fields: str | None) -> dict[str, str | None]:
    """A clean in-window play of node-bay-01 in MA (Boston), with the given fields changed."""
    row: dict[str, str | None] = {
        "play_id": play_id,
        "partner": "node-bay-01",
        "state": "MA",
        "zip": "02108",
        "placed_at": "2026-11-20T10:00:00.000Z",
        "enriched_at": "2026-11-20T10:00:01.000Z",
        "wager_type": "basketball.totals",
        "stake": "10.00",
    }
    row.update(fields)
    return row


def write_csv(path: Path, rows: list[dict[str, Any]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(COLUMNS)
        for row in rows:
            writer.writerow(["" if row[c] is None else row[c] for c in COLUMNS])
    return path


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def write_parquet(path: Path, rows: list[dict[str, Any]]) -> Path:
    """Written by DuckDB itself (pyarrow is only a benchmark dependency), every column a string."""
    import duckdb

    source = write_jsonl(path.with_suffix(".src.jsonl"), rows)
    columns = "{" + ", ".join(f"'{c}': 'VARCHAR'" for c in COLUMNS) + "}"
    con = duckdb.connect()
    con.execute(
        f"COPY (SELECT * FROM read_json('{source}', columns = {columns}, "
        f"format = 'newline_delimited')) TO '{path}' (FORMAT parquet)"
    )
    con.close()
    source.unlink()
    return path


def write_plays(folder: Path, rows: list[dict[str, Any]], fmt: str, name: str = "plays") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    writer = {"csv": write_csv, "jsonl": write_jsonl, "parquet": write_parquet}[fmt]
    return writer(folder / f"{name}.{fmt}", rows)


def engine_args(engine: str) -> tuple[str, ...]:
    """The options that run an audit on the engine (Spark: the run's shared local[1] session).
    DuckDB is named: a `postgresql://` source's default is the PostgreSQL engine."""
    if engine == "duckdb":
        return ("--engine", "duckdb")
    return ("--engine", "spark", "--spark-master", "local[1]")


def audit(
    plays: Path, out: Path, *extra: str, engine: str = "duckdb"
) -> tuple[Result, dict[str, Any]]:
    """`audit deep --json` through the real CLI; returns the result and the parsed summary."""
    result = invoke(
        "audit", "deep", "--plays", str(plays), "--now", NOW, "--out", str(out), "--json",
        *engine_args(engine), *extra,
    )  # fmt: skip
    summary = json.loads(result.output) if result.exit_code in (0, 1) else {}
    return result, summary


def report(out: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((out / "audit" / "zip-window.json").read_text())
    return document


def reasons_by_play(out: Path) -> dict[str, str]:
    return {v["playId"]: v["reason"] for v in report(out)["violations"] if v["playId"]}


class ProgressRecorder:
    """A progress sink that records its calls: `begin <label> <total>`, `advance`, `end`."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def begin(self, label: str, total: int) -> None:
        self.calls.append(f"begin {label} {total}")

    def advance(self, amount: int) -> None:
        self.calls.append("advance")

    def end(self) -> None:
        self.calls.append("end")
