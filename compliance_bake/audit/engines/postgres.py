"""The audit inside the PostgreSQL server that holds the plays: the default for `postgresql://`.

The plays never leave the server. The shared query of audit/sql.py, spelled for PostgreSQL
(`sql.POSTGRES`), runs as one statement in the read's own read-only transaction
(database_read.open_read): the window, the ZIP checks, the never-enriched count, the reasons, the
digest's sums and the first violating plays in the report's order come back as one small
answer. A read-only transaction creates nothing, so the reference relations travel as the
statement's parameters, arrays that the statement unnests (`_RELATIONS`), and the groups are a
common table expression of the statement, not a table. The server plans the statement as any
other: with parallel workers where its settings allow (docs/engines.md shows the plan); this
process opens no other connection and starts no thread.

A second statement, in the same transaction and snapshot, runs only when the first one's answer
is not enough: more violating plays listed than the first one brought (past
`zip_window.VIOLATIONS_BOUND` groups), and `--violations-out`, whose plays are read back once
and written here as Parquet. A statement the server refuses (a server too old for the query, a
role without the rights to its functions) is one line whose fix names `--engine duckdb`, which
reads the rows out and audits them in this process.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compliance_bake.audit.database import DatabaseSource, Provenance, database_source
from compliance_bake.audit.engines.database_read import DatabaseRead, open_read, plays_sql
from compliance_bake.audit.engines.interface import (
    NO_OPTIONS,
    PlaysOptions,
    Relations,
    Window,
    digest_text,
    violating_plays,
)
from compliance_bake.audit.plays_source import PlaysFormat
from compliance_bake.audit.sql import (
    COPIES,
    COUNTS_SQL,
    GROUPS,
    LARGEST_GROUP_SQL,
    POSTGRES,
    VIOLATIONS_OUT_SQL,
    VIOLATIONS_SQL,
    audit_query,
    totals_and_digest_sql,
    violation_order,
)
from compliance_bake.audit.violations import ViolatingPlay, Violation
from compliance_bake.errors import InputError
from compliance_bake.inputs.database import POSTGRES as POSTGRES_URLS
from compliance_bake.inputs.database import failing
from compliance_bake.inputs.redaction import redacted
from compliance_bake.progress import ProgressSink

# $1 and $2 are the window's edges, instants (sql._PG_PARAMS); $3 .. $8 the reference relations
# as arrays;
# $9 how many violating groups the answer lists.
_RELATIONS = (
    "zips AS NOT MATERIALIZED (SELECT DISTINCT ON (zip) zip, state "
    "FROM unnest(CAST($3 AS TEXT[]), CAST($4 AS TEXT[])) AS r(zip, state)),\n"
    "states AS NOT MATERIALIZED (SELECT * FROM unnest(CAST($5 AS TEXT[]), "
    "CAST($6 AS BOOLEAN[])) AS r(state, regulated)),\n"
    "licences AS NOT MATERIALIZED (SELECT * FROM unnest(CAST($7 AS TEXT[]), "
    "CAST($8 AS TEXT[])) AS r(partner, state)),\n"
)
_LISTED = "CAST($9 AS BIGINT)"
_COUNTS = 3 + len(Violation)  # total, in window, not enriched, one per reason
# The counts and the digest's sums: one aggregate over the plays.
_TOTALS = f"\n{totals_and_digest_sql(POSTGRES)}"
_GROUPS = f",\n{GROUPS} AS NOT MATERIALIZED ({COUNTS_SQL})"
# The first violating groups in the report's order: a second pass, only when a play violates.
_LISTING = f"{_GROUPS}\n{VIOLATIONS_SQL}{violation_order(POSTGRES)}LIMIT {_LISTED}"
# Every violating play, one row each (what --violations-out writes).
_VIOLATIONS_OUT = f"""{_GROUPS.replace("NOT MATERIALIZED", "MATERIALIZED")},
{COPIES} AS (SELECT generate_series(1, ({LARGEST_GROUP_SQL})) AS k)
{VIOLATIONS_OUT_SQL}"""
FALLBACK = (
    "grant the role what the query uses, or rerun with --engine duckdb, which reads the plays "
    "out and audits them here"
)


@dataclass(frozen=True, slots=True)
class _Answer:
    """The first statement's answer: the counts and the digest."""

    counts: list[int]
    digest: str


def statement(read_select: str, prefix: bool, final: str = _TOTALS) -> str:
    """The audit as one PostgreSQL statement over the plays of `read_select`
    (database_read._select), the reference relations and the window its parameters."""
    plays = plays_sql(f"({read_select}) AS plays_database", row_keys=False)
    return audit_query(POSTGRES, plays, final, prefix=prefix, relations=_RELATIONS)


class PostgresEngine:
    """The plays' own server, through the read's one connection and transaction."""

    dialect = POSTGRES

    def __init__(self) -> None:
        self._read: DatabaseRead | None = None
        self._source: DatabaseSource | None = None
        self._relations: Relations | None = None
        self._prefix = False
        self._answer: _Answer | None = None

    def load_relations(self, relations: Relations) -> None:
        self._relations = relations

    def make_plays(
        self, plays: str, fmt: PlaysFormat | None = None, options: PlaysOptions = NO_OPTIONS
    ) -> str:
        if not plays.startswith(POSTGRES_URLS):
            shown = redacted(plays, database=True)
            raise InputError(
                f"{shown}: --engine postgres audits plays inside their PostgreSQL server",
                "give --plays postgresql://..., or --engine duckdb for this source",
            )
        self._prefix = options.columns.prefix
        self._source = database_source(plays, options.table, options.query)
        # No count: the statement counts the plays it classifies, in the same snapshot.
        self._read = open_read(self._source, options.columns, stream=False, count=False)
        # LLVM would compile the statement's many expressions in every worker, most of a run's
        # time (docs/benchmarks.md). The setting ends with the transaction.
        with failing(self._source, "cannot set up the audit's query", FALLBACK):
            self._read._session.run("SET LOCAL jit = off")
        return self._source.kind

    def _parts(self) -> tuple[DatabaseRead, DatabaseSource, Relations]:
        if self._read is None or self._source is None or self._relations is None:
            raise RuntimeError("make_plays and load_relations first")
        return self._read, self._source, self._relations

    def _params(self, window: Window, listed: int) -> Any:
        """The statement's parameters as a one-row Arrow stream (a DuckDB relation): the
        window's edges as instants (made from their microseconds in UTC, exactly), the
        reference relations as arrays, the listing's size."""
        import duckdb

        relations = self._parts()[2]
        con = duckdb.connect()
        con.execute("SET TimeZone = 'UTC'")
        values: dict[str, object] = {
            "since_us": window.since_us,
            "now_us": window.now_us,
            "zips": relations.zips,
            "zip_states": relations.zip_states,
            "states": relations.states,
            "regulated": relations.regulated,
            "partners": relations.licence_partners,
            "licence_states": relations.licence_states,
            "listed": listed,
        }
        kinds = ["VARCHAR[]"] * 3 + ["BOOLEAN[]"] + ["VARCHAR[]"] * 2
        columns = [f"make_timestamp(${edge}::BIGINT)::TIMESTAMPTZ" for edge in list(values)[:2]]
        columns += [f"${name}::{kind}" for name, kind in zip(list(values)[2:8], kinds, strict=True)]
        columns.append("$listed::BIGINT")
        return con.sql(f"SELECT {', '.join(columns)}", params=values)

    def _rows(self, final: str, window: Window, listed: int) -> list[tuple[Any, ...]]:
        read, source, _ = self._parts()
        sql = statement(read.select, self._prefix, final)
        with failing(source, "the audit's query failed in the server", FALLBACK):
            found: list[tuple[Any, ...]] = read._session.rows(sql, self._params(window, listed))
        return found

    def counts(self, window: Window, progress: ProgressSink) -> list[int]:
        """The first statement: the counts and the digest, one row."""
        row = self._rows(_TOTALS, window, 0)[0]
        counts = [int(n) for n in row[:_COUNTS]]
        self._answer = _Answer(counts, digest_text(int(row[_COUNTS]), int(row[_COUNTS + 1])))
        return counts

    def violations(self, window: Window, limit: int | None) -> list[ViolatingPlay]:
        """The second statement: the violating groups, the first `limit` in the report's order
        (no limit: all, at most one per violating play)."""
        assert self._answer is not None, "counts first"
        violating = sum(self._answer.counts[3:])
        listed = violating if limit is None else min(limit, violating)
        return violating_plays(self._rows(_LISTING, window, listed))

    def digest(self, window: Window) -> str:
        assert self._answer is not None, "counts first"
        return self._answer.digest

    def write_violations(self, window: Window, folder: str) -> None:
        """Every violating play, read back from the server and written here as Parquet (the
        file DuckDB writes: the same columns and types)."""
        import duckdb

        read, source, _ = self._parts()
        sql = statement(read.select, self._prefix, _VIOLATIONS_OUT)
        Path(folder).mkdir(parents=True, exist_ok=True)
        target = str(Path(folder) / "violations.parquet").replace("'", "''")
        con = duckdb.connect()
        try:
            with failing(source, "the audit's query failed in the server", FALLBACK):
                con.register("violations_out", read._session.stream(sql, self._params(window, 0)))
                con.execute(f"COPY (SELECT * FROM violations_out) TO '{target}' (FORMAT parquet)")
        finally:
            con.close()

    @property
    def provenance(self) -> Provenance | None:
        return None if self._read is None else self._read.provenance

    def close(self) -> None:
        if self._read is not None:
            self._read.close()
