"""`audit deep` over plays in SQLite and PostgreSQL: the seed-shaped table, column maps, ZIP
prefixes, every row counted, provenance, the password kept out, and bad input in one line.

Real parts: SQLite files written here, and the run's one throwaway PostgreSQL cluster (the
`pg_cluster` fixture: Debian's server on a free loopback port, password authentication). The
DuckDB runs go through the real CLI in this process; the Spark runs share the run's local
session and read through Debian's JDBC drivers.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from compliance_bake.audit.database import Provenance, database_source
from compliance_bake.audit.engines.database_read import DatabaseRead, check_count
from compliance_bake.audit.engines.spark_jdbc import jdbc_options
from compliance_bake.errors import SourceError
from compliance_bake.inputs.redaction import redacted
from tests._pg_helpers import Cluster
from tests._phase_lines import diagnostics
from tests._plays_helpers import engine_args
from tests.conftest import NOW, invoke

SPARK = pytest.mark.spark
TABLE = "play_zip_enrichment"
SEED_COLUMNS = (
    "play_id", "node_id", "country_code", "sport_id", "market_id", "state_code", "zip_prefix",
    "enriched_at",
)  # fmt: skip
MAP = (
    "play_id=play_id,partner=node_id,state=state_code,zip_prefix=zip_prefix,enriched_at=enriched_at"
)
IN = "2026-11-20T10:00:00.000Z"


def _seed(play_id: str | None, partner: str, state: str | None, prefix: str | None,
          enriched: str | None) -> tuple[str | None, ...]:  # fmt: skip
    return (play_id, partner, "US", "basketball", "m-1", state, prefix, enriched)


# The seed-shaped rows (the spec's `play_zip_enrichment`), and the reason each play gets.
ROWS: list[tuple[tuple[str | None, ...], str | None]] = [
    (_seed("ok-nj", "node-shore-02", "NJ", "070", IN), None),
    (_seed("ok-ma", "node-bay-01", "MA", "021", IN), None),
    (_seed("other-state", "node-shore-02", "NJ", "021", IN), "zip-in-other-state"),
    (_seed("not-real", "node-shore-02", "NJ", "000", IN), "zip-not-real"),
    (_seed("two-digits", "node-shore-02", "NJ", "07", IN), "malformed-zip"),
    (_seed("five-digits", "node-shore-02", "NJ", "07030", IN), "malformed-zip"),
    (_seed("no-prefix", "node-shore-02", "NJ", None, IN), "malformed-zip"),
    (_seed("never", "node-shore-02", "NJ", "070", None), None),  # never enriched
    (_seed("bad-time", "node-shore-02", "NJ", "070", "yesterday"), "malformed-timestamp"),
    (
        _seed("future", "node-shore-02", "NJ", "070", "2027-01-01T00:00:00.000Z"),
        "enriched-in-future",
    ),  # fmt: skip
    (_seed("no-state", "node-shore-02", None, "070", IN), "unknown-state"),
    (_seed("unlicensed", "node-offshore-04", "NJ", "070", IN), "partner-not-licensed"),
    (_seed(None, "node-offshore-04", "MA", "021", IN), "partner-not-licensed"),  # NULL id
]


def _create_sql() -> str:
    return f"CREATE TABLE {TABLE} ({', '.join(f'{c} TEXT' for c in SEED_COLUMNS)})"


def write_sqlite(path: Path, rows: list[tuple[Any, ...]]) -> Path:
    with sqlite3.connect(path) as con:
        con.execute(_create_sql())
        con.executemany(f"INSERT INTO {TABLE} VALUES ({', '.join('?' * 8)})", rows)
    con.close()
    return path


def _literal(value: Any) -> str:
    return "NULL" if value is None else "'" + str(value).replace("'", "''") + "'"


def write_postgres(cluster: Cluster, schema: str, rows: list[tuple[Any, ...]]) -> str:
    values = ", ".join("(" + ", ".join(_literal(v) for v in row) + ")" for row in rows)
    cluster.psql(
        f"DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}; "
        f"{_create_sql().replace(TABLE, f'{schema}.{TABLE}')}; "
        f"INSERT INTO {schema}.{TABLE} VALUES {values}"
    )
    return f"{schema}.{TABLE}"


@pytest.fixture(scope="module")
def seeded(pg_cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The seed rows in a SQLite file and in PostgreSQL (schema `seed`)."""
    rows = [row for row, _ in ROWS]
    db = write_sqlite(tmp_path_factory.mktemp("seed") / "plays.db", rows)
    table = write_postgres(pg_cluster, "seed", rows)
    return {"sqlite": f"sqlite:{db}", "pg_table": table}


def _audit(plays: str, out: Path, *extra: str, engine: str = "duckdb",
           env: dict[str, str] | None = None) -> dict[str, Any]:  # fmt: skip
    result = invoke(
        "audit", "deep", "--plays", plays, "--now", NOW, "--out", str(out), "--json",
        *engine_args(engine), *extra, env=env,
    )  # fmt: skip
    assert result.exit_code in (0, 1), result.output
    summary: dict[str, Any] = json.loads(result.output)
    return summary


def _report(out: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((out / "audit" / "zip-window.json").read_text())
    return document


def _listed(out: Path) -> list[tuple[str, str | None, str | None]]:
    return [(v["reason"], v["playId"], v["zip"]) for v in _report(out)["violations"]]


def _expected() -> dict[str, int]:
    found: dict[str, int] = {}
    for _, reason in ROWS:
        if reason is not None:
            found[reason] = found.get(reason, 0) + 1
    return found


def _check_seed(summary: dict[str, Any], out: Path) -> None:
    assert summary["zipWindow"]["totalPlays"] == len(ROWS)
    assert summary["notEnrichedPlays"] == 1  # the NULL enriched_at: a never-enriched play
    assert {k: v for k, v in summary["byReason"].items() if v} == _expected()
    by_id = {v["playId"]: v["reason"] for v in _report(out)["violations"]}
    assert by_id["other-state"] == "zip-in-other-state"  # 021 is Massachusetts'
    assert by_id["not-real"] == "zip-not-real"  # no real ZIP begins with 000
    assert by_id["two-digits"] == "malformed-zip"
    assert by_id[None] == "partner-not-licensed"  # a NULL play id is counted and listed
    assert _report(out)["zipColumn"] == "zip_prefix"


def test_the_seed_table_in_sqlite_and_postgresql_gives_the_same_audit(
    seeded: dict[str, str], pg_cluster: Cluster, tmp_path: Path
) -> None:
    lite = _audit(seeded["sqlite"], tmp_path / "lite", "--plays-table", TABLE,
                  "--plays-columns", MAP)  # fmt: skip
    pg = _audit(pg_cluster.url(), tmp_path / "pg", "--plays-table", seeded["pg_table"],
                "--plays-columns", MAP)  # fmt: skip
    _check_seed(lite, tmp_path / "lite")
    _check_seed(pg, tmp_path / "pg")
    for key in ("zipWindow", "notEnrichedPlays", "violations", "byReason"):
        assert lite[key] == pg[key], key
    assert _listed(tmp_path / "lite") == _listed(tmp_path / "pg")
    # A SQLite table names each listed play by its rowid too; PostgreSQL's rows have no key.
    keys = {v["playId"]: v.get("rowKey") for v in _report(tmp_path / "lite")["violations"]}
    assert keys["other-state"] == 3 and keys[None] == len(ROWS)
    assert all("rowKey" not in v for v in _report(tmp_path / "pg")["violations"])
    source = _report(tmp_path / "pg")["source"]
    assert source["read"] == "table seed.play_zip_enrichment"
    assert source["server"].startswith("PostgreSQL 1")
    assert source["source"] == pg_cluster.url(password=False)


def test_a_query_reads_the_same_plays_and_records_its_digest(
    seeded: dict[str, str], pg_cluster: Cluster, tmp_path: Path
) -> None:
    query = f"SELECT * FROM {seeded['pg_table']} WHERE zip_prefix IS DISTINCT FROM '000'"
    pg = _audit(pg_cluster.url(), tmp_path / "q", "--plays-query", query,
                "--plays-columns", MAP)  # fmt: skip
    assert pg["zipWindow"]["totalPlays"] == len(ROWS) - 1
    assert pg["byReason"]["zip-not-real"] == 0
    read = _report(tmp_path / "q")["source"]["read"]
    assert read.startswith("query sha256:") and query not in read


def test_sqlite_values_of_other_types_are_counted_and_classified(tmp_path: Path) -> None:
    """An integer prefix (a lost leading zero), a number as enriched_at, a BLOB: each row counts
    under a reason, none is dropped."""
    db = tmp_path / "typed.db"
    with sqlite3.connect(db) as con:
        con.execute(_create_sql())
        rows = [
            _seed("int-prefix", "node-shore-02", "NJ", "070", IN),
            _seed("number-time", "node-shore-02", "NJ", "070", IN),
            _seed("blob", "node-shore-02", "NJ", "070", IN),
        ]
        # NULL first in every column: the reader types a column from its first rows.
        con.execute(f"INSERT INTO {TABLE} VALUES (NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)")
        con.executemany(f"INSERT INTO {TABLE} VALUES ({', '.join('?' * 8)})", rows)
        con.execute(f"UPDATE {TABLE} SET zip_prefix = 70 WHERE play_id = 'int-prefix'")
        con.execute(f"UPDATE {TABLE} SET enriched_at = 1732000000 WHERE play_id = 'number-time'")
        con.execute(f"UPDATE {TABLE} SET zip_prefix = x'303730' WHERE play_id = 'blob'")
    con.close()
    summary = _audit(f"sqlite:{db}", tmp_path / "out", "--plays-table", TABLE,
                     "--plays-columns", MAP)  # fmt: skip
    assert summary["zipWindow"]["totalPlays"] == 4
    by_id = {v["playId"]: v for v in _report(tmp_path / "out")["violations"]}
    assert by_id["int-prefix"]["reason"] == "malformed-zip" and by_id["int-prefix"]["zip"] == "70"
    assert by_id["number-time"]["reason"] == "malformed-timestamp"
    assert by_id["blob"]["reason"] == "malformed-row" and "zip" in by_id["blob"]["raw"]
    assert by_id[None]["reason"] == "malformed-zip"  # the all-NULL row: no ZIP prefix
    assert by_id[None]["rowKey"] == 1


def test_the_row_count_check_fails_when_a_row_went_missing() -> None:
    read = DatabaseRead(None, 5, Provenance("sqlite:x.db", "table t", "SQLite"), True, "", None)
    check_count(read, 5)
    with pytest.raises(SourceError, match="counted 4 plays but the table t holds 5 rows"):
        check_count(read, 4)


def test_libpq_finds_the_password_in_pgpassword_pgpass_and_pg_service(
    seeded: dict[str, str], pg_cluster: Cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    args = ("--plays-table", seeded["pg_table"], "--plays-columns", MAP)
    bare = pg_cluster.url(password=False)
    env = {"PGPASSWORD": pg_cluster.password}
    assert _audit(bare, tmp_path / "a", *args, env=env)["zipWindow"]["totalPlays"] == len(ROWS)
    pgpass = tmp_path / "pgpass"
    pgpass.write_text(f"127.0.0.1:{pg_cluster.port}:*:auditor:{pg_cluster.password}\n")
    pgpass.chmod(0o600)
    env = {"PGPASSFILE": str(pgpass), "PGPASSWORD": ""}
    assert _audit(bare, tmp_path / "b", *args, env=env)["zipWindow"]["totalPlays"] == len(ROWS)
    # JDBC (Spark) reads the same file.
    monkeypatch.setenv("PGPASSFILE", str(pgpass))
    monkeypatch.delenv("PGPASSWORD", raising=False)
    assert jdbc_options(database_source(bare, "t", None))["password"] == pg_cluster.password
    services = tmp_path / "services"
    services.write_text(
        f"[plays]\nhost=127.0.0.1\nport={pg_cluster.port}\ndbname=plays\nuser=auditor\n"
        f"password={pg_cluster.password}\n"
    )
    env = {"PGSERVICEFILE": str(services), "PGSERVICE": "plays", "PGPASSWORD": ""}
    summary = _audit("postgresql://", tmp_path / "c", *args, env=env)
    assert summary["zipWindow"]["totalPlays"] == len(ROWS)


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, **(env or {})}
    full.pop("PGPASSWORD", None) if env is None or "PGPASSWORD" not in env else None
    return subprocess.run(
        [sys.executable, "-m", "compliance_bake", *args],
        capture_output=True, text=True, env=full, timeout=300, check=False,
    )  # fmt: skip


def _files_text(root: Path) -> str:
    return "".join(
        p.read_bytes().decode("utf-8", "replace") for p in root.rglob("*") if p.is_file()
    )


def test_the_password_appears_in_no_output_and_no_file(
    seeded: dict[str, str], pg_cluster: Cluster, tmp_path: Path
) -> None:
    """From the URL and from PGPASSWORD, through an audit, a bake with --deep-audit and a
    failing table: stdout, stderr and every file written are searched."""
    secret = pg_cluster.password
    table = ("--plays-table", seeded["pg_table"], "--plays-columns", MAP)
    runs = [
        _cli("audit", "deep", "--plays", pg_cluster.url(), *table, "--now", NOW,
             "--out", str(tmp_path / "a"), "--json"),
        _cli("audit", "deep", "--plays", pg_cluster.url(password=False), *table, "--now", NOW,
             "--out", str(tmp_path / "b"), env={"PGPASSWORD": secret}),
        _cli("bake", "snapshot", "--deep-audit", pg_cluster.url(), *table, "--now", NOW,
             "--out", str(tmp_path / "c"), "--json"),
        _cli("audit", "deep", "--plays", pg_cluster.url(), "--plays-table", "no_such_table",
             "--now", NOW, "--out", str(tmp_path / "d")),
        _cli("audit", "deep", "--plays", pg_cluster.url(password=False).replace(
             "auditor@", "nobody@"), "--plays-table", "t", "--now", NOW,
             "--out", str(tmp_path / "e"), env={"PGPASSWORD": secret}),
    ]  # fmt: skip
    assert [r.returncode for r in runs] == [1, 1, 1, 2, 2], [r.stderr for r in runs]
    snapshot = json.loads((tmp_path / "c" / "api" / "compliance.json").read_text())
    command = snapshot["deepAudit"]["command"]  # the database source reruns from the snapshot
    assert f"--plays-table {seeded['pg_table']}" in command
    assert pg_cluster.url(password=False) in command
    for run in runs:
        assert secret not in run.stdout and secret not in run.stderr, run
    written = _files_text(tmp_path)
    assert written and secret not in written
    assert pg_cluster.url(password=False) in _files_text(tmp_path / "a")


def _refused(run: subprocess.CompletedProcess[str], code: int, out: Path) -> str:
    assert run.returncode == code, (run.returncode, run.stdout, run.stderr)
    assert "Traceback" not in run.stderr
    lines = diagnostics(run.stderr).splitlines()
    assert len(lines) == 1, run.stderr
    assert "(fix: " in lines[0], lines[0]
    assert not out.exists()  # nothing written
    return lines[0]


def test_each_bad_database_input_is_one_line_with_its_exit_code(
    seeded: dict[str, str], pg_cluster: Cluster, tmp_path: Path
) -> None:
    url, table = pg_cluster.url(), seeded["pg_table"]
    wrong = url.replace(pg_cluster.password, "wrong-password")
    closed = f"postgresql://postgres:x@127.0.0.1:{_closed_port()}/plays"
    cases: list[tuple[list[str], int, str]] = [
        (["--plays", closed, "--plays-table", table], 3, "cannot connect"),
        (["--plays", wrong, "--plays-table", table], 2, "refused the login"),
        (["--plays", url, "--plays-table", "seed.missing"], 2, "cannot read the table"),
        (["--plays", url, "--plays-query", f"DELETE FROM {table} RETURNING *"], 2,
         "the query failed"),
        (["--plays", url, "--plays-query", "SELECT nextval('s')::text AS play_id, node_id AS "
          f"partner, state_code AS state, zip_prefix, enriched_at FROM {table}",
          "--plays-columns", "zip_prefix=zip_prefix"], 2, "read-only transaction"),
        (["--plays", url, "--plays-query", "SELECT 1/0 AS play_id"], 2, "the query failed"),
        (["--plays", url, "--plays-table", table, "--plays-query", "SELECT 1"], 2,
         "a table or a query"),
        (["--plays", url], 2, "a table or a query"),
        (["--plays", url, "--plays-table", table, "--plays-columns", "partner=partner_id"], 2,
         "no column partner_id"),
        (["--plays", f"sqlite:{tmp_path / 'none.db'}", "--plays-table", TABLE], 2,
         "no such SQLite file"),
        (["--plays", seeded["sqlite"], "--plays-table", TABLE, "--plays-columns", "zip=z,x=y"],
         2, "unknown field"),
    ]  # fmt: skip
    pg_cluster.psql("CREATE SEQUENCE IF NOT EXISTS s; GRANT USAGE ON SEQUENCE s TO auditor")
    for i, (args, code, words) in enumerate(cases):
        out = tmp_path / f"out-{i}"
        run = _cli("audit", "deep", *args, "--now", NOW, "--out", str(out))
        line = _refused(run, code, out)
        assert words in line, line
        assert pg_cluster.password not in line
    # The missing column names the columns the source has.
    assert "the source has play_id, node_id, country_code" in _refused(
        _cli("audit", "deep", *cases[8][0], "--now", NOW, "--out", str(tmp_path / "x")),
        2, tmp_path / "x",
    )  # fmt: skip
    # The query that wrote wrote nothing.
    assert pg_cluster.psql(f"SELECT count(*) FROM {table}").strip() == str(len(ROWS))


def _closed_port() -> int:
    from tests._pg_helpers import free_port

    return free_port()  # nothing listens there once the probe socket is closed


def test_a_database_url_keeps_the_rest_of_the_url() -> None:
    assert redacted("postgresql://u:p%40ss@h:5/db?sslmode=require&password=x", database=True) == (
        "postgresql://u@h:5/db?sslmode=require"
    )
    assert redacted("see postgresql://u:p@h/db?password=x.", database=True) == (
        "see postgresql://u@h/db"
    )


@SPARK
@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_spark_reads_the_seed_table_through_jdbc_as_duckdb_does(
    kind: str, seeded: dict[str, str], pg_cluster: Cluster, tmp_path: Path,
    spark_session: object,
) -> None:  # fmt: skip
    plays = seeded["sqlite"] if kind == "sqlite" else pg_cluster.url()
    table = TABLE if kind == "sqlite" else seeded["pg_table"]
    runs = {}
    for engine in ("duckdb", "spark"):
        summary = _audit(plays, tmp_path / engine, "--plays-table", table, "--plays-columns", MAP,
                         engine=engine)  # fmt: skip
        runs[engine] = summary
        _check_seed(summary, tmp_path / engine)
    for key in ("zipWindow", "notEnrichedPlays", "violations", "byReason", "firstViolations"):
        assert runs["spark"][key] == runs["duckdb"][key], key
    assert _report(tmp_path / "spark")["violations"] == _report(tmp_path / "duckdb")["violations"]


def test_a_connection_killed_mid_read_is_exit_3_not_a_crash(
    seeded: dict[str, str], pg_cluster: Cluster, tmp_path: Path
) -> None:
    """The server ends the backend while the plays stream (pg_terminate_backend, as a restart
    or an administrator would): the read fails as the source's failure, exit 3, one line; the
    rollback on the dead connection does not replace it with the driver's OperationalError."""
    import threading
    import time

    marker = "kill-me-mid-read"
    query = (f"SELECT t.* FROM {seeded['pg_table']} t "  # /* marker */ is in every statement
             f"WHERE (SELECT true FROM pg_sleep(2)) /* {marker} */")  # fmt: skip
    killed: list[str] = []
    done = threading.Event()

    def kill_the_stream() -> None:
        deadline = time.monotonic() + 60
        while not done.is_set() and time.monotonic() < deadline:
            found = pg_cluster.psql(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE state = 'active' "
                f"AND query LIKE '%{marker}%' AND query LIKE '%AS TEXT%' "
                "AND pid <> pg_backend_pid()"
            ).split()
            if "t" in found:
                killed.append("t")
                return
            time.sleep(0.1)

    killer = threading.Thread(target=kill_the_stream)
    killer.start()
    try:
        result = invoke(
            "audit", "deep", "--plays", pg_cluster.url(), "--plays-query", query,
            "--plays-columns", MAP, "--now", NOW, "--out", str(tmp_path / "out"),
        )  # fmt: skip
    finally:
        done.set()
        killer.join(timeout=60)
    assert killed, "the stream's statement was never seen running"
    assert result.exit_code == 3, result.output
    lines = result.stderr.strip().splitlines()
    assert "reading the plays failed" in lines[-1] and "OperationalError" not in result.output
    assert pg_cluster.password not in result.output
