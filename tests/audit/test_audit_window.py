"""`audit deep`: the window's edges, violations by reason, the three formats, the demo plays.

Every test runs the real CLI on real files with real DuckDB; those taking the `engine` fixture
run again on Spark (local[1], the `spark` marker) and must give the same results.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from compliance_bake.audit.violations import Violation
from compliance_bake.resources import demo_fixtures_dir
from tests._plays_helpers import (
    FORMATS,
    LOWER,
    UPPER,
    ProgressRecorder,
    audit,
    play,
    reasons_by_play,
    report,
    write_csv,
    write_plays,
)
from tests.conftest import NOW, invoke

DEMO_PLAYS = demo_fixtures_dir() / "plays.csv"

# (play, in the window?, violation reason or None, not enriched?)
BOUNDARIES = [
    (play("upper-edge", enriched_at=UPPER), True, None, False),
    (play("lower-edge", enriched_at=LOWER), True, None, False),
    (
        play("1ms-after-now", enriched_at="2026-11-22T04:06:00.001Z"),
        False,
        "enriched-in-future",
        False,
    ),
    (play("1ms-before-window", enriched_at="2026-08-24T04:05:59.999Z"), False, None, False),
    (play("1ms-inside-lower", enriched_at="2026-08-24T04:06:00.001Z"), True, None, False),
    (play("1ms-inside-upper", enriched_at="2026-11-22T04:05:59.999Z"), True, None, False),
    # The same instants written with other offsets.
    (play("upper-edge-plus1", enriched_at="2026-11-22T05:06:00.000+01:00"), True, None, False),
    (
        play("after-now-plus1", enriched_at="2026-11-22T05:06:00.001+01:00"),
        False,
        "enriched-in-future",
        False,
    ),
    (play("lower-edge-minus4", enriched_at="2026-08-24T00:06:00.000-04:00"), True, None, False),
    (play("before-window-minus4", enriched_at="2026-08-24T00:05:59.999-04:00"), False, None, False),
    (play("upper-edge-minus0530", enriched_at="2026-11-21T22:36:00-05:30"), True, None, False),
    (play("far-future", enriched_at="2027-01-01T00:00:00Z"), False, "enriched-in-future", False),
    (play("empty", enriched_at=""), False, None, True),
    # placed_at plays no part: inside with enriched_at outside, and the reverse.
    (
        play(
            "placed-in-enriched-out",
            placed_at="2026-11-20T00:00:00Z",
            enriched_at="2026-05-01T00:00:00Z",
        ),
        False,
        None,
        False,
    ),
    (
        play(
            "placed-out-enriched-in",
            placed_at="2026-01-01T00:00:00Z",
            enriched_at="2026-11-01T00:00:00Z",
        ),
        True,
        None,
        False,
    ),
    (play("placed-not-a-time", placed_at="whenever"), True, None, False),
    # Offsets up to +-18:00 (java.time's bound, made the rule on every engine: sql.py).
    (play("offset-plus18", enriched_at="2026-11-20T10:00:00+18:00"), True, None, False),
    (play("offset-minus18", enriched_at="2026-11-20T10:00:00.5-18:00"), True, None, False),
]


def _summary_counts(summary: dict[str, object]) -> dict[str, object]:
    return {
        "zipWindow": summary["zipWindow"],
        "notEnrichedPlays": summary["notEnrichedPlays"],
        "violations": summary["violations"],
        "byReason": summary["byReason"],
    }


@pytest.mark.parametrize("fmt", FORMATS)
def test_window_edges_offsets_future_empty_and_placed_at(
    tmp_path: Path, fmt: str, engine: str
) -> None:
    rows = [case[0] for case in BOUNDARIES]
    plays = write_plays(tmp_path, rows, fmt)
    result, summary = audit(plays, tmp_path / "out", engine=engine)
    inside = [c[0]["play_id"] for c in BOUNDARIES if c[1]]
    expected_reasons = {c[0]["play_id"]: c[2] for c in BOUNDARIES if c[2]}
    assert summary["zipWindow"]["totalPlays"] == len(rows)
    assert summary["zipWindow"]["inWindowPlays"] == len(inside)
    assert summary["notEnrichedPlays"] == sum(1 for c in BOUNDARIES if c[3])
    assert reasons_by_play(tmp_path / "out") == expected_reasons
    assert summary["ok"] is False and result.exit_code == 1  # the future plays
    assert summary["zipWindow"]["label"] == (
        f"ZIP 90d window via enriched_at ({len(inside)}/{len(rows)} plays)"
    )


@pytest.mark.parametrize("case", BOUNDARIES, ids=lambda c: str(c[0]["play_id"]))
def test_each_boundary_alone(tmp_path: Path, case: tuple[dict[str, str], bool, str, bool]) -> None:
    row, inside, reason, not_enriched = case
    plays = write_csv(tmp_path / "plays.csv", [row])
    # One play alone, outside the window, audits nothing: accepted here, the case is its reason.
    result, summary = audit(plays, tmp_path / "out", "--allow-empty-window")
    assert summary["zipWindow"]["inWindowPlays"] == int(inside)
    assert summary["notEnrichedPlays"] == int(not_enriched)
    assert result.exit_code == (1 if reason else 0)
    assert reasons_by_play(tmp_path / "out") == ({row["play_id"]: reason} if reason else {})


def test_the_days_option_moves_the_lower_edge(tmp_path: Path) -> None:
    rows = [
        play("edge-30d", enriched_at="2026-10-23T04:06:00Z"),
        play("past-30d", enriched_at="2026-10-23T04:05:59.999Z"),
    ]
    plays = write_csv(tmp_path / "plays.csv", rows)
    _, summary = audit(plays, tmp_path / "out", "--days", "30")
    assert summary["zipWindow"]["days"] == 30
    assert summary["zipWindow"]["label"] == "ZIP 30d window via enriched_at (1/2 plays)"


VIOLATIONS = [
    (play("zip-of-nj", zip="07102"), "zip-in-other-state"),
    (play("zip-unreal", zip="00000"), "zip-not-real"),
    (play("zip-lost-zero", zip="2108"), "malformed-zip"),
    (play("zip-letters", zip="021O8"), "malformed-zip"),
    (play("zip-plus4", zip="02108-1234"), "malformed-zip"),
    (play("offshore-in-ma", partner="node-offshore-04"), "partner-not-licensed"),
    (play("bay-in-nj", state="NJ", zip="07102"), "partner-not-licensed"),
    (play("unknown-partner", partner="node-nobody"), "partner-not-licensed"),
    (play("bay-in-ct", state="CT", zip="06103"), "state-not-regulated"),
    (play("state-xx", state="XX"), "unknown-state"),
    (play("state-lower", state="ma"), "unknown-state"),
    (play("naive-time", enriched_at="2026-11-20T10:00:00"), "malformed-timestamp"),
    (play("space-time", enriched_at="2026-11-20 10:00:00Z"), "malformed-timestamp"),
    (play("date-only", enriched_at="2026-11-20"), "malformed-timestamp"),
    (play("feb-30", enriched_at="2026-02-30T10:00:00Z"), "malformed-timestamp"),
    (play("hour-24", enriched_at="2026-11-20T24:00:00Z"), "malformed-timestamp"),
    (play("word-time", enriched_at="epoch"), "malformed-timestamp"),
    (play("blank-time", enriched_at="   "), "malformed-timestamp"),
    (play("in-future", enriched_at="2026-11-23T00:00:00Z"), "enriched-in-future"),
    # 24 characters, near the fast path's form (zip_window._INSTANT's comment).
    (play("fast-blank-year", enriched_at=" 026-11-20T10:00:00.000Z"), "malformed-timestamp"),
    (play("fast-short-month", enriched_at="12026-1-20T10:00:00.000Z"), "malformed-timestamp"),
    (play("fast-hour-24", enriched_at="2026-11-20T24:00:00.000Z"), "malformed-timestamp"),
    (play("fast-second-60", enriched_at="2026-11-20T10:00:60.000Z"), "malformed-timestamp"),
    (play("fast-feb-30", enriched_at="2026-02-30T10:00:00.000Z"), "malformed-timestamp"),
    (play("fast-blank-millis", enriched_at="2026-11-20T10:00:00.00 Z"), "malformed-timestamp"),
    (play("fast-lower-z", enriched_at="2026-11-20T10:00:00.000z"), "malformed-timestamp"),
    (play("fast-space-t", enriched_at="2026-11-20 10:00:00.000Z"), "malformed-timestamp"),
    (play("fast-lower-t", enriched_at="2026-11-20t10:00:00.000Z"), "malformed-timestamp"),
    # Beyond +-18:00: malformed on every engine (DuckDB would read them, java.time would not).
    (play("offset-plus1801", enriched_at="2026-11-20T10:00:00+18:01"), "malformed-timestamp"),
    (play("offset-minus2359", enriched_at="2026-11-20T10:00:00-23:59"), "malformed-timestamp"),
    (play("offset-plus19", enriched_at="2026-11-20T10:00:00.000+19:00"), "malformed-timestamp"),
]


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_violation_is_named_in_the_report(tmp_path: Path, fmt: str, engine: str) -> None:
    rows = [play("clean")] + [row for row, _ in VIOLATIONS]
    plays = write_plays(tmp_path, rows, fmt)
    out = tmp_path / "out"
    result, summary = audit(plays, out, engine=engine)
    assert result.exit_code == 1 and summary["ok"] is False
    assert reasons_by_play(out) == {row["play_id"]: reason for row, reason in VIOLATIONS}
    assert summary["violations"] == len(VIOLATIONS) == report(out)["violationCount"]
    assert sum(summary["byReason"].values()) == len(VIOLATIONS)
    named = {v["playId"]: v for v in report(out)["violations"]}
    assert named["zip-lost-zero"]["zip"] == "2108"  # the value as written, never coerced


@pytest.mark.parametrize(
    ("row", "reason"), VIOLATIONS[:10], ids=lambda x: x if isinstance(x, str) else x["play_id"]
)
def test_one_bad_play_fails_the_audit_and_the_bake(
    tmp_path: Path, row: dict[str, str], reason: str
) -> None:
    plays = write_csv(tmp_path / "plays.csv", [play("clean"), row])
    result, summary = audit(plays, tmp_path / "out")
    assert result.exit_code == 1 and summary["ok"] is False
    assert summary["byReason"][reason] == 1 == summary["violations"]
    assert reasons_by_play(tmp_path / "out") == {row["play_id"]: reason}
    baked = invoke(
        "bake",
        "snapshot",
        "--out",
        str(tmp_path / "bake"),
        "--now",
        NOW,
        "--deep-audit",
        str(plays),
        "--json",
    )
    assert baked.exit_code == 1
    checks = {c["id"]: c for c in json.loads(baked.output)["integrity"]}
    assert checks["zip-window"]["ok"] is False
    assert checks["zip-window"]["label"] == "ZIP 90d window via enriched_at (2/2 plays)"


def test_relational_checks_apply_in_the_window_only(tmp_path: Path, engine: str) -> None:
    old = "2026-01-01T00:00:00Z"
    rows = [
        play("old-offshore", partner="node-offshore-04", enriched_at=old),
        play("old-zip-of-nj", zip="07102", enriched_at=old),
        play("old-unreal", zip="00000", enriched_at=old),
        play("old-ct", state="CT", zip="06103", enriched_at=old),
        play("unenriched-offshore", partner="node-offshore-04", enriched_at=""),
        # Malformed values are violations wherever the play falls.
        play("old-lost-zero", zip="2108", enriched_at=old),
        play("unenriched-xx", state="XX", enriched_at=""),
    ]
    plays = write_csv(tmp_path / "plays.csv", rows)
    result, _ = audit(plays, tmp_path / "out", engine=engine)
    assert result.exit_code == 1
    assert reasons_by_play(tmp_path / "out") == {
        "old-lost-zero": "malformed-zip",
        "unenriched-xx": "unknown-state",
    }


def test_malformed_rows_are_counted_never_dropped(tmp_path: Path, engine: str) -> None:
    plays = write_csv(tmp_path / "plays.csv", [play("a"), play("b")])
    with plays.open("a", encoding="utf-8", newline="") as handle:
        handle.write("too-few,node-bay-01,MA,02108\n")
        handle.write("too-many,node-bay-01,MA,02108,x,2026-11-20T10:00:01Z,b.t,1,extra\n")
        handle.write("nul\x00byte,node-bay-01,MA,02108,x,2026-11-20T10:00:01Z,b.t,1\n")
        handle.write('quoted,"node,bay",MA,02108,x,2026-11-20T10:00:01Z,b.t,1\n')
        handle.write('open-quote,node-bay-01,MA,02108,x,2026-11-20T10:00:01Z,b.t,"1\n')
    out = tmp_path / "out"
    result, summary = audit(plays, out, engine=engine)
    assert result.exit_code == 1
    assert summary["zipWindow"]["totalPlays"] == 7
    assert summary["byReason"]["malformed-row"] == 4
    # A quoted comma is a value, not a column: that play is read, and is unlicensed.
    assert summary["byReason"]["partner-not-licensed"] == 1
    rows = [v for v in report(out)["violations"] if v["reason"] == "malformed-row"]
    # Spark's readers give no line numbers (docs/engines.md): the audit finds them in the file
    # (audit/play_lines.py), by the row's text, but for the unterminated quote's, whose text
    # Spark rewrites. The one row-level pin.
    lines = [4, 5, 6, 8] if engine == "duckdb" else [0, 4, 5, 6]
    assert sorted(v.get("line", 0) for v in rows) == lines
    assert any(v["playId"] == "nul\x00byte" for v in rows)
    assert any("too-few" in v.get("raw", "") for v in rows)


def test_malformed_json_lines_are_counted(tmp_path: Path, engine: str) -> None:
    plays = tmp_path / "plays.jsonl"
    good = json.dumps(play("good"))
    plays.write_text(
        "\n".join(
            [
                good,
                "not json",
                "[1, 2]",
                json.dumps({"play_id": "few-keys"}),
                json.dumps(play("zip-as-number", zip=2108)),  # type: ignore[arg-type]
                json.dumps(play("null-enriched", enriched_at=None)),
                good.replace("node-bay-01", "node-bay\x0001"),
                "",  # a blank line is no row
            ]
        )
        + "\n"
    )
    result, summary = audit(plays, tmp_path / "out", engine=engine)
    assert result.exit_code == 1
    assert summary["zipWindow"]["totalPlays"] == 7
    assert summary["byReason"]["malformed-row"] == 4
    assert summary["byReason"]["malformed-zip"] == 1
    assert summary["notEnrichedPlays"] == 1


def _mixed_rows() -> list[dict[str, str | None]]:
    return [c[0] for c in BOUNDARIES] + [row for row, _ in VIOLATIONS] + [play("clean")]


def test_csv_jsonl_and_parquet_give_identical_counts(tmp_path: Path, engine: str) -> None:
    rows = _mixed_rows()
    summaries, reports = [], []
    for fmt in FORMATS:
        plays = write_plays(tmp_path / fmt, rows, fmt)
        _, summary = audit(plays, tmp_path / fmt / "out", engine=engine)
        summaries.append(_summary_counts(summary))
        reports.append(report(tmp_path / fmt / "out")["violations"])
    assert summaries[0] == summaries[1] == summaries[2]

    def unplaced(plays: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{k: v for k, v in p.items() if k != "line"} for p in plays]

    csv_plays, jsonl_plays, parquet_plays = reports
    # the same plays; CSV and JSON Lines name their lines (the CSV header is line 1) and list
    # them in file order within a reason, Parquet has no lines (audit/play_lines.py)
    assert unplaced(csv_plays) == unplaced(jsonl_plays)
    assert [p["line"] - 1 for p in csv_plays] == [p["line"] for p in jsonl_plays]
    assert parquet_plays == sorted(unplaced(csv_plays), key=lambda p: (
        list(Violation).index(Violation(p["reason"])), p["playId"]))  # fmt: skip
    assert summaries[0]["zipWindow"]["totalPlays"] == len(rows)  # type: ignore[index]


def test_the_demo_plays_in_every_format_audit_clean(tmp_path: Path, engine: str) -> None:
    import csv

    with DEMO_PLAYS.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    for fmt in FORMATS:
        plays = DEMO_PLAYS if fmt == "csv" else write_plays(tmp_path, rows, fmt)
        result, summary = audit(plays, tmp_path / fmt, engine=engine)
        assert result.exit_code == 0, result.output
        assert summary["ok"] is True and summary["violations"] == 0
        assert summary["zipWindow"]["label"] == "ZIP 90d window via enriched_at (16/20 plays)"
        assert summary["notEnrichedPlays"] == 2


def test_the_demo_plays_stay_clean_on_the_system_clock(tmp_path: Path) -> None:
    # No --now: the window moves with the clock; plays only ever leave it, so no violation.
    result = invoke("audit", "deep", "--plays", str(DEMO_PLAYS), "--out", str(tmp_path), "--json")
    assert result.exit_code == 0, result.output


def test_suspending_a_licence_breaks_the_demo_audit(tmp_path: Path, fixtures_copy: Path) -> None:
    licences = json.loads((fixtures_copy / "licences.json").read_text())
    for partner in licences["partners"]:
        if partner["nodeId"] == "node-bay-01":
            partner["licences"][0]["status"] = "suspended"
    (fixtures_copy / "licences.json").write_text(json.dumps(licences))
    out = tmp_path / "out"
    result, summary = audit(DEMO_PLAYS, out, "--fixtures", str(fixtures_copy))
    assert result.exit_code == 1 and summary["ok"] is False
    named = reasons_by_play(out)
    # node-bay-01's in-window MA plays; pl-0016 is older than the window.
    assert named == {f"pl-{n:04d}": "partner-not-licensed" for n in (1, 2, 3, 4, 5, 20)}
    assert str(fixtures_copy) in summary["command"]


def test_the_report_is_complete_deterministic_and_0644(tmp_path: Path) -> None:
    rows = [play(f"bad-{n:03d}", zip="00000") for n in range(60)] + [play("ok")]
    plays = write_csv(tmp_path / "plays.csv", rows)
    out = tmp_path / "out"
    _, summary = audit(plays, out)
    first = (out / "audit" / "zip-window.json").read_bytes()
    assert len(summary["firstViolations"]) == 20
    assert len(report(out)["violations"]) == 60
    assert report(out)["reasons"] == {v.value: v.explanation for v in Violation}
    audit(plays, out)
    assert (out / "audit" / "zip-window.json").read_bytes() == first
    assert (out / "audit" / "zip-window.json").stat().st_mode & 0o777 == 0o644
    assert [p.name for p in (out / "audit").iterdir()] == ["zip-window.json"]


def test_the_terminal_summary_names_reasons_and_plays(tmp_path: Path) -> None:
    plays = write_csv(tmp_path / "plays.csv", [play("zip-of-nj", zip="07102")])
    result = invoke(
        "audit", "deep", "--plays", str(plays), "--now", NOW, "--out", str(tmp_path / "out")
    )
    assert result.exit_code == 1
    assert "zip-in-other-state" in result.output and "zip-of-nj" in result.output
    assert "1 of 1 plays in the 90-day ZIP window" in result.output


def test_help_lists_every_violation_reason() -> None:
    text = invoke("audit", "deep", "--help").output
    for reason in Violation:
        assert reason.value in text


def test_the_command_in_the_report_reproduces_the_audit(tmp_path: Path) -> None:
    import shlex

    plays = write_csv(tmp_path / "plays.csv", [play("a"), play("b", zip="2108")])
    _, summary = audit(plays, tmp_path / "out")
    words = shlex.split(summary["command"])
    assert words[:3] == ["compliance-bake", "audit", "deep"]
    again = invoke(*words[1:], "--out", str(tmp_path / "again"), "--json")
    assert _summary_counts(json.loads(again.output)) == _summary_counts(summary)


def test_progress_reaches_the_sink(tmp_path: Path) -> None:
    from compliance_bake.audit.zip_window import run_zip_window
    from compliance_bake.clock import parse_instant
    from compliance_bake.inputs.fixtures import load_fixtures

    sink = ProgressRecorder()
    registry = load_fixtures(demo_fixtures_dir()).registry
    result = run_zip_window(DEMO_PLAYS, registry, parse_instant(NOW, source="test"), 90, sink)
    assert result.ok
    assert sink.calls[0].endswith(" 100") and sink.calls[-1] == "end"


def test_demo_plays_ship_with_the_fixtures() -> None:
    assert DEMO_PLAYS.is_file()
    shutil.copy(DEMO_PLAYS, "plays.csv")  # the working folder is a fresh temporary one
    result = invoke("audit", "deep", "--plays", "plays.csv", "--now", NOW, "--json")
    assert result.exit_code == 0
    assert Path("out/audit/zip-window.json").is_file()
