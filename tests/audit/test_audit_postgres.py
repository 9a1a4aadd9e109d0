"""`audit deep` inside PostgreSQL (engines/postgres.py) against DuckDB and Spark over the same
tables: the same report, field by field and play for play, the same digest, the same files.

Real parts: the run's throwaway PostgreSQL cluster (`pg_cluster`), the real CLI in this process
(the PostgreSQL engine is the default for a `postgresql://` source; `--engine duckdb` streams the
rows out as before), Spark on the run's shared local[1] session reading through JDBC.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from compliance_bake.audit import zip_window
from compliance_bake.audit.plays_source import COLUMNS
from tests._pg_helpers import Cluster
from tests._phase_lines import diagnostics
from tests._plays_helpers import play
from tests.audit.test_audit_databases import MAP, ROWS, TABLE, write_postgres
from tests.audit.test_audit_fast_path import FORMS, NEAR, _mutations
from tests.audit.test_audit_window import BOUNDARIES, VIOLATIONS
from tests.conftest import NOW, invoke

SPARK = pytest.mark.spark
ENGINES = {
    "postgres": ("--engine", "postgres"),
    "duckdb": ("--engine", "duckdb"),
    "spark": ("--engine", "spark", "--spark-master", "local[1]"),
}

# What the window and fast-path tests hold, and what only a table can: NULLs in every column,
# fractions past microseconds, year 0, leap days, offsets, texts that sort apart by collation.
EXTRA: list[dict[str, str | None]] = [
    play("null-everything", partner=None, state=None, zip=None, enriched_at=None),
    play("null-zip", zip=None),
    play("null-state", state=None),
    play("null-partner", partner=None),
    play("seven-digits", enriched_at="2026-11-20T10:00:00.1234567Z"),
    play("past-now-by-a-fraction", enriched_at="2026-11-22T04:06:00.0000009Z"),
    play("past-now-by-1us", enriched_at="2026-11-22T04:06:00.000001Z"),
    play("before-by-1us", enriched_at="2026-08-24T04:05:59.999999Z"),
    play("year-0", enriched_at="0000-02-29T00:00:00Z"),
    play("year-0-fast", enriched_at="0000-01-01T00:00:00.000Z"),
    play("leap-1900", enriched_at="1900-02-29T00:00:00.000Z"),
    play("leap-2000", enriched_at="2000-02-29T00:00:00.000Z"),
    play("leap-2024-in", enriched_at="2026-11-20T10:00:00.000+18:00"),
    play("april-31", enriched_at="2026-04-31T10:00:00.000Z"),
    play("month-13", enriched_at="2026-13-01T10:00:00.000Z"),
    play("day-00", enriched_at="2026-11-00T10:00:00.000Z"),
    play("sign-minus", enriched_at="2026-11-22T03:06:00.5-01:00"),
    play("é-accent", zip="00000"),
    play("Z-upper", zip="00000"),
    play("a-lower", zip="00000"),
    play("ß-sharp", zip="00000"),
    play("dup"), play("dup"),  # two identical plays: one group of two
    play("dup-bad", zip="00000"), play("dup-bad", zip="00000"),
    *({**play(f"fast-{i}"), "enriched_at": text} for i, text in enumerate((*FORMS, *NEAR))),
]  # fmt: skip


def _edge_rows() -> list[dict[str, str | None]]:
    return [c[0] for c in BOUNDARIES] + [row for row, _ in VIOLATIONS] + [play("clean")] + EXTRA


def _literal(value: str | None) -> str:
    return "NULL" if value is None else "'" + value.replace("'", "''") + "'"


@pytest.fixture(scope="module")
def tables(pg_cluster: Cluster) -> dict[str, str]:
    """The edge plays (schema `engines`, the plays' eight columns) and the seed rows."""
    values = ", ".join(
        "(" + ", ".join(_literal(row[c]) for c in COLUMNS) + ")" for row in _edge_rows()
    )
    pg_cluster.psql(
        "DROP SCHEMA IF EXISTS engines CASCADE; CREATE SCHEMA engines; "
        f"CREATE TABLE engines.edge ({', '.join(f'{c} TEXT' for c in COLUMNS)}); "
        f"INSERT INTO engines.edge VALUES {values}"
    )
    seed = write_postgres(pg_cluster, "engines_seed", [row for row, _ in ROWS])
    return {"edge": "engines.edge", "seed": seed}


def _run(url: str, out: Path, engine: str, *args: str) -> dict[str, Any]:
    result = invoke(
        "audit", "deep", "--plays", url, "--now", NOW, "--out", str(out), "--json",
        *ENGINES[engine], *args,
    )  # fmt: skip
    assert result.exit_code in (0, 1), result.output
    summary: dict[str, Any] = json.loads(result.output)
    assert summary["engine"] == engine
    return summary


def _cases(tables: dict[str, str]) -> dict[str, tuple[str, ...]]:
    query = f"SELECT * FROM {tables['edge']} WHERE play_id IS DISTINCT FROM 'clean'"
    return {
        "edge": ("--plays-table", tables["edge"]),
        "edge-as-a-query": ("--plays-query", query),
        "seed-with-map-and-prefixes": ("--plays-table", tables["seed"], "--plays-columns", MAP),
    }


def _same(runs: dict[str, tuple[dict[str, Any], Path]], against: str) -> None:
    """Every engine's summary (but its name and report path) and report bytes are DuckDB's."""
    base, base_out = runs["duckdb"]
    summary, out = runs[against]

    def fields(s: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in s.items() if k not in ("engine", "report")}

    assert fields(summary) == fields(base)
    mine = (out / "audit" / "zip-window.json").read_bytes()
    assert mine == (base_out / "audit" / "zip-window.json").read_bytes()


@pytest.mark.parametrize("bound", [None, 3], ids=["listed", "cut-with-digest"])
@pytest.mark.parametrize("case", ["edge", "edge-as-a-query", "seed-with-map-and-prefixes"])
def test_postgres_gives_duckdbs_report_field_by_field(
    case: str, bound: int | None, tables: dict[str, str], pg_cluster: Cluster,
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    if bound is not None:
        monkeypatch.setattr(zip_window, "VIOLATIONS_BOUND", bound)
    args = _cases(tables)[case]
    runs = {e: (_run(pg_cluster.url(), tmp_path / e, e, *args), tmp_path / e) for e in
            ("postgres", "duckdb")}  # fmt: skip
    _same(runs, "postgres")
    summary = runs["postgres"][0]
    assert summary["violations"] > 3
    if bound is not None:  # past the bound: the first plays and the digest of them all
        assert summary["violationsListed"] == 3
        assert re.fullmatch(r"md5-sum:\d+:\d+", summary["violationsDigest"])
    else:
        report = json.loads((tmp_path / "postgres" / "audit" / "zip-window.json").read_text())
        assert len(report["violations"]) == summary["violations"]
    if case == "seed-with-map-and-prefixes":
        assert summary["zipColumn"] == "zip_prefix"


def test_the_edge_plays_are_classified_as_the_window_tests_say(
    tables: dict[str, str], pg_cluster: Cluster, tmp_path: Path
) -> None:
    """Not only equal to DuckDB: right, where the window tests name the reason."""
    _run(pg_cluster.url(), tmp_path / "pg", "postgres", "--plays-table", tables["edge"])
    report = json.loads((tmp_path / "pg" / "audit" / "zip-window.json").read_text())
    found = {v["playId"]: v["reason"] for v in report["violations"]}
    for row, reason in VIOLATIONS:
        assert found[row["play_id"]] == reason, row
    for case in BOUNDARIES:
        assert found.get(case[0]["play_id"]) == case[2], case[0]
    assert found["past-now-by-1us"] == "enriched-in-future"
    assert "past-now-by-a-fraction" not in found  # cut to microseconds: exactly now
    assert found["leap-1900"] == found["april-31"] == found["month-13"] == "malformed-timestamp"
    assert "year-0" not in found and "year-0-fast" not in found  # 1 BC: long before the window
    assert report["notEnrichedPlays"] == 3  # `empty`, the NULL enriched_at, NEAR's ''


def test_the_violation_files_hold_the_same_plays(
    tables: dict[str, str], pg_cluster: Cluster, tmp_path: Path
) -> None:
    import duckdb

    written = []
    for engine in ("postgres", "duckdb"):
        folder = tmp_path / f"violations-{engine}"
        summary = _run(pg_cluster.url(), tmp_path / engine, engine, "--plays-table",
                       tables["edge"], "--violations-out", str(folder))  # fmt: skip
        con = duckdb.connect()
        described = con.execute(
            f"DESCRIBE SELECT * FROM read_parquet('{folder}/*.parquet')"
        ).fetchall()
        rows = con.execute(f"SELECT * FROM read_parquet('{folder}/*.parquet') ORDER BY ALL")
        written.append(([(r[0], r[1]) for r in described], rows.fetchall()))
        con.close()
        assert len(written[-1][1]) == summary["violations"]
    assert written[0] == written[1]


def test_the_parse_gives_duckdbs_instant_for_every_text(pg_cluster: Cluster) -> None:
    """The edge plays' texts (offsets, fractions), the fast path's and 20,000 mutations of
    them: PostgreSQL's parse (its cast after
    the checks, or the integer arithmetic) gives DuckDB's instant, or NULL where DuckDB does."""
    import duckdb

    from compliance_bake.audit.sql import DUCKDB, POSTGRES, audit_query

    edges = {row["enriched_at"] for row in _edge_rows() if row["enriched_at"] is not None}
    texts = sorted({*FORMS, *NEAR, *edges, *_mutations(20_000)})
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    query = audit_query(
        DUCKDB,
        "SELECT false AS malformed, unnest($texts) AS enriched_at",
        "SELECT enriched_at, enriched_us FROM parsed",
    )
    expected = dict(con.execute(query, {"texts": texts, "since_us": 0, "now_us": 0}).fetchall())
    array = "ARRAY[" + ", ".join(_literal(t) for t in texts) + "]::text[]"
    nulls = ", ".join(f"NULL::text AS {c}" for c in COLUMNS if c != "enriched_at")
    plays = (
        f"SELECT NULL::bigint AS line, {nulls}, NULL::text AS raw, false AS malformed, "
        f"unnest({array}) AS enriched_at"
    )
    final = (
        "SELECT encode(convert_to(enriched_at, 'UTF8'), 'hex'), "
        "(extract(epoch FROM enriched_us) * 1000000)::bigint FROM parsed"
    )
    none = "SELECT NULL::text AS {}, NULL::{} AS {} WHERE false"
    relations = (
        f"zips AS ({none.format('zip', 'text', 'state')}), "
        f"states AS ({none.format('state', 'boolean', 'regulated')}), "
        f"licences AS ({none.format('partner', 'text', 'state')}), "
    )
    pg = audit_query(POSTGRES, plays, final, relations=relations)
    sql = Path(pg_cluster.folder) / "parse.sql"
    sql.write_text(
        f"PREPARE parse(timestamptz, timestamptz) AS {pg};\nEXECUTE parse(now(), now());\n"
    )
    os.chmod(sql, 0o644)
    answer = subprocess.run(
        [str(pg_cluster.bin / "psql"), "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-h",
         "127.0.0.1", "-p", str(pg_cluster.port), "-U", "postgres", "-d", "plays", "-f", str(sql)],
        capture_output=True, text=True, check=False, timeout=300,
        env={**os.environ, "PGPASSWORD": pg_cluster.password},
    )  # fmt: skip
    assert answer.returncode == 0, answer.stderr
    found = {}
    for line in answer.stdout.splitlines():
        hexed, _, us = line.partition("|")
        found[bytes.fromhex(hexed).decode("utf-8")] = int(us) if us else None
    assert found.keys() == expected.keys()
    assert [(t, found[t], expected[t]) for t in texts if found[t] != expected[t]] == []
    assert sum(1 for t in texts if expected[t] is not None) > 500


@SPARK
@pytest.mark.parametrize("case", ["edge", "seed-with-map-and-prefixes"])
def test_every_engine_gives_the_same_report_over_the_same_table(
    case: str, tables: dict[str, str], pg_cluster: Cluster, tmp_path: Path,
    spark_session: object, monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """PostgreSQL, DuckDB and Spark over one table, the listing cut to 3 so that the digest is
    compared too: the same summary and the same report bytes."""
    monkeypatch.setattr(zip_window, "VIOLATIONS_BOUND", 3)
    args = _cases(tables)[case]
    runs = {e: (_run(pg_cluster.url(), tmp_path / e, e, *args), tmp_path / e) for e in ENGINES}
    _same(runs, "postgres")
    _same(runs, "spark")
    assert runs["spark"][0]["violationsDigest"] == runs["postgres"][0]["violationsDigest"]


def test_the_bake_deep_audit_block_is_byte_equal_to_duckdbs(
    tables: dict[str, str], pg_cluster: Cluster, tmp_path: Path
) -> None:
    blocks = []
    for engine in ("postgres", "duckdb"):
        out = tmp_path / engine
        result = invoke(
            "bake", "snapshot", "--out", str(out), "--now", NOW, "--deep-audit", pg_cluster.url(),
            "--plays-table", tables["seed"], "--plays-columns", MAP, *ENGINES[engine], "--json",
        )  # fmt: skip
        assert result.exit_code == 1, result.output  # the violations fail the bake, on both
        snapshot = json.loads((out / "api" / "compliance.json").read_text())
        block = json.dumps(snapshot["deepAudit"], sort_keys=True).encode()
        checks = {c["id"]: c for c in snapshot["integrity"]["checks"]}
        blocks.append((block, checks["zip-window"]))
    assert blocks[0] == blocks[1]
    assert json.loads(blocks[0][0])["zipWindow"]["totalPlays"] == len(ROWS)


def test_the_plan_can_run_in_parallel_workers(tables: dict[str, str], pg_cluster: Cluster) -> None:
    """EXPLAIN of the pushed-down statement, with parallel plans made cheap so that a small
    table gets one where the statement allows it: a Gather above the joins and the aggregate,
    which a step kept by OFFSET 0 (or anything parallel-restricted) would not allow."""
    from compliance_bake.audit.engines.postgres import statement

    select = (
        "SELECT NULL::BIGINT AS row_key, play_id, partner, state, zip, enriched_at, 0 AS nulls, "
        f"'' AS blobs FROM {tables['edge']}"
    )
    types = "timestamptz, timestamptz, text[], text[], text[], boolean[], text[], text[], bigint"
    args = "now(), now(), '{02108}', '{MA}', '{MA}', '{t}', '{node-bay-01}', '{MA}', 0"
    plan = pg_cluster.psql(
        "SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; "
        "SET min_parallel_table_scan_size = 0; SET max_parallel_workers_per_gather = 2; "
        f"PREPARE audit({types}) AS {statement(select, False)}; "
        f"EXPLAIN (COSTS OFF) EXECUTE audit({args})"
    )
    lines = plan.splitlines()
    gather = next(i for i, line in enumerate(lines) if "Gather" in line)
    below = "\n".join(lines[gather:])
    assert "Partial HashAggregate" in below or "Partial GroupAggregate" in below, plan
    assert "Parallel Seq Scan" in below and " Join" in below, plan


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if k != "PGPASSWORD"}
    return subprocess.run(
        [sys.executable, "-m", "compliance_bake", *args], capture_output=True, text=True,
        env={**full, **(env or {})}, timeout=300, check=False,
    )  # fmt: skip


def _one_line(run: subprocess.CompletedProcess[str], code: int) -> str:
    assert run.returncode == code, (run.returncode, run.stdout, run.stderr)
    assert "Traceback" not in run.stderr
    lines = diagnostics(run.stderr).splitlines()
    assert len(lines) == 1 and "(fix: " in lines[0], run.stderr
    return lines[0]


@pytest.fixture(scope="module")
def roles(pg_cluster: Cluster, tables: dict[str, str]) -> Iterator[dict[str, str]]:
    """`nosel`: no SELECT on the tables; `nomd5`: SELECT, but no right to md5(), which the
    pushed-down statement uses and a streamed read does not."""
    pg_cluster.psql(
        "DROP ROLE IF EXISTS nosel; DROP ROLE IF EXISTS nomd5; "
        "CREATE ROLE nosel LOGIN PASSWORD 'nosel-secret-1'; "
        "CREATE ROLE nomd5 LOGIN PASSWORD 'nomd5-secret-2'; "
        "GRANT USAGE ON SCHEMA engines TO nosel, nomd5; "
        "GRANT SELECT ON engines.edge TO nomd5; "
        "REVOKE EXECUTE ON FUNCTION md5(text) FROM PUBLIC; "
        "GRANT EXECUTE ON FUNCTION md5(text) TO postgres, auditor"
    )
    ours = f"auditor:{pg_cluster.password}@"
    yield {
        "nosel": pg_cluster.url().replace(ours, "nosel:nosel-secret-1@"),
        "nomd5": pg_cluster.url().replace(ours, "nomd5:nomd5-secret-2@"),
    }
    pg_cluster.psql("GRANT EXECUTE ON FUNCTION md5(text) TO PUBLIC")


def test_a_role_without_select_gets_one_line_and_exit_2(
    roles: dict[str, str], tables: dict[str, str], tmp_path: Path
) -> None:
    run = _cli("audit", "deep", "--plays", roles["nosel"], "--plays-table", tables["edge"],
               "--now", NOW, "--out", str(tmp_path / "out"))  # fmt: skip
    line = _one_line(run, 2)
    assert "permission denied" in line and "cannot read the table" in line, line
    assert "nosel-secret-1" not in run.stdout + run.stderr
    assert not (tmp_path / "out").exists()


def test_a_refused_statement_names_the_streamed_fallback_which_works(
    roles: dict[str, str], tables: dict[str, str], tmp_path: Path, pg_cluster: Cluster
) -> None:
    args = ("--plays-table", tables["edge"], "--now", NOW)
    run = _cli("audit", "deep", "--plays", roles["nomd5"], *args, "--engine", "postgres",
               "--out", str(tmp_path / "a"))  # fmt: skip
    line = _one_line(run, 2)
    assert "the audit's query failed in the server" in line and "md5" in line, line
    assert "--engine duckdb" in line.split("(fix: ")[1], line
    assert "nomd5-secret-2" not in run.stdout + run.stderr
    fallback = _cli("audit", "deep", "--plays", roles["nomd5"], *args, "--engine", "duckdb",
                    "--out", str(tmp_path / "b"), "--json")  # fmt: skip
    assert fallback.returncode == 1, fallback.stderr  # the edge plays violate
    assert json.loads(fallback.stdout)["zipWindow"]["totalPlays"] == len(_edge_rows())


def test_the_password_appears_in_no_output_of_the_pushed_down_audit(
    tables: dict[str, str], pg_cluster: Cluster, tmp_path: Path
) -> None:
    """From the URL and from PGPASSWORD; a good run, a failing query, --violations-out, a bake:
    stdout, stderr and every file written are searched."""
    secret = pg_cluster.password
    edge = ("--plays-table", tables["edge"], "--now", NOW)
    runs = [
        _cli("audit", "deep", "--plays", pg_cluster.url(), *edge, "--out", str(tmp_path / "a"),
             "--json", "--violations-out", str(tmp_path / "v")),
        _cli("audit", "deep", "--plays", pg_cluster.url(password=False), *edge,
             "--out", str(tmp_path / "b"), env={"PGPASSWORD": secret}),
        _cli("audit", "deep", "--plays", pg_cluster.url(), "--plays-query",
             f"SELECT *, 1/0 AS x FROM {tables['edge']}", "--now", NOW,
             "--out", str(tmp_path / "c")),
        _cli("bake", "snapshot", "--deep-audit", pg_cluster.url(), *edge,
             "--out", str(tmp_path / "d"), "--json"),
    ]  # fmt: skip
    assert [r.returncode for r in runs] == [1, 1, 2, 1], [r.stderr[-300:] for r in runs]
    assert "division by zero" in runs[2].stderr
    for run in runs:
        assert secret not in run.stdout and secret not in run.stderr, run
    written = "".join(
        p.read_bytes().decode("utf-8", "replace") for p in tmp_path.rglob("*") if p.is_file()
    )
    assert written and secret not in written


def test_engine_postgres_refuses_other_sources_in_one_line(tmp_path: Path) -> None:
    plays = tmp_path / "plays.csv"
    plays.write_text(",".join(COLUMNS) + "\n")
    for source in (str(plays), f"sqlite:{plays}"):
        run = _cli("audit", "deep", "--plays", source, "--engine", "postgres", "--plays-table",
                   TABLE, "--now", NOW, "--out", str(tmp_path / "out"))  # fmt: skip
        line = _one_line(run, 2)
        assert "--engine postgres audits plays inside their PostgreSQL server" in line, line


def test_sqlite_and_files_stay_on_duckdb(tmp_path: Path) -> None:
    from tests.audit.test_audit_databases import write_sqlite

    db = write_sqlite(tmp_path / "plays.db", [row for row, _ in ROWS])
    result = invoke("audit", "deep", "--plays", f"sqlite:{db}", "--plays-table", TABLE,
                    "--plays-columns", MAP, "--now", NOW, "--out", str(tmp_path / "a"),
                    "--json")  # fmt: skip
    assert result.exit_code == 1, result.output
    assert json.loads(result.output)["engine"] == "duckdb"
    plays = tmp_path / "plays.csv"
    plays.write_text(
        ",".join(COLUMNS) + "\n" + ",".join(play("a")[c] or "" for c in COLUMNS) + "\n"
    )
    result = invoke("audit", "deep", "--plays", str(plays), "--now", NOW, "--out",
                    str(tmp_path / "b"), "--json")  # fmt: skip
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["engine"] == "duckdb"
