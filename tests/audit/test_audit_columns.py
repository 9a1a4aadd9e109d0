"""`--plays-columns` on plays files, and 3-digit ZIP prefixes (`zip_prefix=`), on both engines.

A file whose columns have other names, audited with a map, gives what the same plays under the
usual names give; a column the map names and the file lacks is exit 2 naming it and the file's
columns. A prefix is real in a state when a real ZIP of that state begins with it.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from compliance_bake.audit.columns import parse_columns
from compliance_bake.audit.relations import zip_prefixes
from compliance_bake.errors import InputError
from tests._plays_helpers import FORMATS, audit, play, report, write_plays
from tests.audit.test_audit_window import VIOLATIONS

RENAMED = {"play_id": "id", "partner": "node_id", "state": "state_code", "zip": "zip5",
           "enriched_at": "enriched"}  # fmt: skip
MAP = ",".join(f"{k}={v}" for k, v in RENAMED.items())


def _renamed(rows: list[dict[str, Any]], names: dict[str, str]) -> list[dict[str, Any]]:
    """The rows with the audited columns renamed and the three others left out."""
    return [{names[k]: v for k, v in row.items() if k in names} for row in rows]


def _write(folder: Path, rows: list[dict[str, Any]], fmt: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"mapped.{fmt}"
    names = list(rows[0])
    if fmt == "csv":
        with path.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle, lineterminator="\n")
            writer.writerow(names)
            writer.writerows([["" if r[c] is None else r[c] for c in names] for r in rows])
        return path
    lines = "".join(json.dumps(r) + "\n" for r in rows)
    if fmt == "jsonl":
        path.write_text(lines, encoding="utf-8")
        return path
    import duckdb

    source = folder / "mapped.src.jsonl"
    source.write_text(lines, encoding="utf-8")
    columns = "{" + ", ".join(f"'{c}': 'VARCHAR'" for c in names) + "}"
    con = duckdb.connect()
    con.execute(
        f"COPY (SELECT * FROM read_json('{source}', columns = {columns}, "
        f"format = 'newline_delimited')) TO '{path}' (FORMAT parquet)"
    )
    con.close()
    return path


def _plays() -> list[dict[str, Any]]:
    return [row for row, _ in VIOLATIONS if row.get("play_id")] + [play("clean")]


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_mapped_file_audits_as_the_same_plays_under_the_usual_names(
    tmp_path: Path, fmt: str, engine: str
) -> None:
    rows = [r for r in _plays() if all(isinstance(v, str | None) for v in r.values())]
    usual = write_plays(tmp_path / "usual", rows, fmt)
    mapped = _write(tmp_path / "mapped", _renamed(rows, RENAMED), fmt)
    _, plain = audit(usual, tmp_path / "out-usual", engine=engine)
    _, summary = audit(mapped, tmp_path / "out-mapped", "--plays-columns", MAP, engine=engine)
    for key in ("zipWindow", "notEnrichedPlays", "violations", "byReason"):
        assert summary[key] == plain[key], key
    assert summary["violations"] > 0
    # Each violating play with its file line where the usual file's has one (play_lines reads
    # the mapped columns), in the same order.
    assert (
        report(tmp_path / "out-mapped")["violations"]
        == report(tmp_path / "out-usual")["violations"]
    )
    assert "--plays-columns" in summary["command"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_column_the_map_names_and_the_file_lacks_is_exit_2_naming_both(
    tmp_path: Path, fmt: str
) -> None:
    mapped = _write(tmp_path, _renamed([play("p")], RENAMED), fmt)
    wrong = MAP.replace("=node_id", "=partner_code")
    result, _ = audit(mapped, tmp_path / "out", "--plays-columns", wrong)
    assert result.exit_code == 2, result.output
    assert "no column partner_code;" in result.output
    assert "node_id" in result.output  # the columns the file has
    assert not (tmp_path / "out").exists()


PREFIX_MAP = "zip_prefix=zip3"


@pytest.mark.parametrize(
    ("prefix", "state", "reason"),
    [
        ("021", "MA", None),  # Boston's
        ("070", "NJ", None),  # Newark's
        ("070", "MA", "zip-in-other-state"),
        ("000", "MA", "zip-not-real"),
        ("07", "NJ", "malformed-zip"),
        ("02108", "MA", "malformed-zip"),  # five digits in a prefix column
        ("", "MA", "malformed-zip"),
    ],
)
def test_zip_prefixes_against_the_zip_index(
    tmp_path: Path, prefix: str, state: str, reason: str | None, engine: str
) -> None:
    partner = "node-corridor-03"  # licensed in MA and NJ
    rows = [{**play("p", partner=partner, state=state), "zip": prefix}]
    names = {**{c: c for c in ("play_id", "partner", "state", "enriched_at")}, "zip": "zip3"}
    plays = _write(tmp_path, _renamed(rows, names), "csv")
    result, summary = audit(plays, tmp_path / "out", "--plays-columns", PREFIX_MAP, engine=engine)
    assert result.exit_code == (0 if reason is None else 1), result.output
    listed = report(tmp_path / "out")["violations"]
    assert [v["reason"] for v in listed] == ([] if reason is None else [reason])
    assert [v.get("line") for v in listed] == ([] if reason is None else [2])  # mapped, found
    assert report(tmp_path / "out")["zipColumn"] == "zip_prefix"
    assert summary["zipColumn"] == "zip_prefix"


def test_a_prefix_lists_every_state_with_a_zip_beginning_with_it() -> None:
    prefixes, states = zip_prefixes(["02108", "02109", "03901", "03902", "07030"],
                                    ["MA", "MA", "ME", "NH", "NJ"])  # fmt: skip
    assert dict(zip(prefixes, states, strict=True)) == {
        "021": "|MA|", "039": "|ME|NH|", "070": "|NJ|",
    }  # fmt: skip


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("zip=a,zip_prefix=b", "not both"),
        ("zip=a,zip=b", "given twice"),
        ("stake=a", "unknown field"),
        ("zip", "not field=COLUMN"),
        ("zip=", "not field=COLUMN"),
    ],
)
def test_a_bad_map_is_bad_input(text: str, words: str) -> None:
    with pytest.raises(InputError, match=words):
        parse_columns(text)


def test_a_table_or_query_with_a_plays_file_is_bad_input(tmp_path: Path) -> None:
    plays = write_plays(tmp_path, [play("p")], "csv")
    for option in ("--plays-table", "--plays-query"):
        result, _ = audit(plays, tmp_path / "out", option, "x")
        assert result.exit_code == 2, result.output
        assert "read a database source only" in result.output
        assert not (tmp_path / "out").exists()
