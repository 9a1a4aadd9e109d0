"""The audit on embedded DuckDB, in this process: the default engine.

The plays file is read by DuckDB's own readers (audit/engines/duckdb_plays.py); lines its CSV reader
rejects land in a rejects table and are classified by the same query as malformed rows. Every record
of the input is accounted for (audit/plays_input.py, record_count.py, accounting.py): the records
are counted in a side thread while DuckDB counts, a record past the reader's limit is never handed
to DuckDB, and each record DuckDB did not read is a `malformed-row` play with its line. A file
holding a NUL byte is counted again with every value searched for one.
"""

from __future__ import annotations

from contextlib import ExitStack, contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from compliance_bake.audit.accounting import unread_plays
from compliance_bake.audit.database import (
    database_source,
    is_database,
    no_database_options,
)
from compliance_bake.audit.engines.database_read import (
    DatabaseRead,
    check_count,
    open_read,
    plays_sql,
)
from compliance_bake.audit.engines.duckdb_plays import (
    drop_rejects,
    parquet_rows,
    plays_relation,
    rejected_relation,
)
from compliance_bake.audit.engines.duckdb_progress import read_progress
from compliance_bake.audit.engines.interface import (
    NO_OPTIONS,
    GroupsInSession,
    PlaysOptions,
    Relations,
    Window,
    first_line,
)
from compliance_bake.audit.plays_input import (
    PlaysInput,
    counting,
    has_long_line,
    plays_input,
)
from compliance_bake.audit.plays_source import (
    STDIN,
    PlaysFile,
    PlaysFormat,
    is_glob,
    is_uri,
    open_plays,
    resolve_plays,
)
from compliance_bake.audit.record_count import RecordCount
from compliance_bake.audit.sql import (
    COPIES,
    DUCKDB,
    GROUPS,
    VIOLATIONS_OUT_SQL,
    audit_query,
)
from compliance_bake.audit.violations import ViolatingPlay, Violation
from compliance_bake.errors import InputError, SourceError
from compliance_bake.progress import ProgressSink


class _Reader:
    """The plays relation(s) over one file `path` (the input, or its copy within the limit)."""

    def __init__(self, con: Any, source: PlaysFile, prefix: bool = False) -> None:
        self.con, self.source = con, source
        self.nul_check = False
        self.prefix = prefix

    def reread(self, path: Path, nul_check: bool) -> None:
        if path != self.source.path:
            drop_rejects(self.con)  # lines the first file's scan rejected
        self.source = replace(self.source, path=path)
        self.nul_check = nul_check

    def relations(self) -> list[str]:
        main = plays_relation(self.con, self.source, nul_check=self.nul_check)
        if self.source.format is PlaysFormat.PARQUET:
            return [main]
        # Lines the reader rejected (CSV, JSON Lines): the same query classifies them.
        return [main, rejected_relation()]

    def groups(self, window: Window) -> None:
        """The one pass: every play classified into `GROUPS` (sql.COUNTS_SQL), the plays first,
        then the lines the reader rejected (their table exists once the plays were read)."""
        main, *rest = self.relations()
        query = audit_query(DUCKDB, main, prefix=self.prefix)
        self.con.execute(f"CREATE OR REPLACE TEMP TABLE {GROUPS} AS {query}", window.params)
        for relation in rest:
            self.con.execute(
                f"INSERT INTO {GROUPS} {audit_query(DUCKDB, relation, prefix=self.prefix)}",
                window.params,
            )


class DuckDBEngine(GroupsInSession):
    """An in-memory DuckDB connection holding the reference relations and the plays relation."""

    dialect = DUCKDB

    def __init__(self) -> None:
        import duckdb

        self._error = duckdb.Error
        self.con: Any = duckdb.connect(":memory:")
        self.con.execute("SET TimeZone = 'UTC'")
        # DuckDB's own bar would print on stdout (into --json output); ours goes to a sink.
        self.con.execute("SET enable_progress_bar = false")
        # Keep the joins as written: the small relations (zips, states, licences) are the hash
        # tables and the plays stream past them. A CSV's row count is unknown when the plan is
        # made, and the optimiser may otherwise build the hash table from 10,000,000 plays
        # (several times the memory, and slower: docs/benchmarks.md).
        self.con.execute("SET disabled_optimizers = 'join_order,build_side_probe_side'")
        self._stack = ExitStack()
        self._input: PlaysInput | None = None
        self._reader: _Reader | None = None
        self._database: DatabaseRead | None = None
        self._prefix = False

    def load_relations(self, relations: Relations) -> None:
        con = self.con
        con.execute(
            "CREATE TEMP TABLE zips AS SELECT unnest($zips::VARCHAR[]) AS zip, "
            "unnest($states::VARCHAR[]) AS state",
            {"zips": relations.zips, "states": relations.zip_states},
        )
        con.execute(
            "CREATE TEMP TABLE states AS SELECT unnest($codes::VARCHAR[]) AS state, "
            "unnest($flags::BOOLEAN[]) AS regulated",
            {"codes": relations.states, "flags": relations.regulated},
        )
        con.execute(
            "CREATE TEMP TABLE licences AS SELECT unnest($partners::VARCHAR[]) AS partner, "
            "unnest($states::VARCHAR[]) AS state",
            {"partners": relations.licence_partners, "states": relations.licence_states},
        )

    def make_plays(
        self, plays: str, fmt: PlaysFormat | None = None, options: PlaysOptions = NO_OPTIONS
    ) -> str:
        self._prefix = options.columns.prefix
        if is_database(plays):
            database = database_source(plays, options.table, options.query)
            self._database = open_read(database, options.columns)
            self._stack.callback(self._database.close)
            return database.kind
        no_database_options(options.table, options.query)
        if plays != STDIN and (is_uri(plays) or Path(plays).is_dir() or is_glob(plays)):
            spec = resolve_plays(plays, allow_uri=False)  # the URI's, folder's or glob's error
            if len(spec.files) != 1 or spec.folder is not None:
                raise InputError(
                    f"{plays}: DuckDB audits one plays file; this names {len(spec.files)} files",
                    "pass one file, or --engine spark for a folder, a glob or partitioned Parquet",
                )
            plays = str(spec.files[0])
        source_input = self._stack.enter_context(plays_input(Path(plays), fmt))
        self._input = source_input
        source = open_plays(
            source_input.path,
            source_input.format,
            source_input.label,
            source_input.limit,
            options.columns,
        )
        self._reader = _Reader(self.con, source, self._prefix)
        return source_input.format.value

    @property
    def _parts(self) -> tuple[PlaysInput, _Reader]:
        if self._input is None or self._reader is None:
            raise RuntimeError("make_plays first")
        return self._input, self._reader

    @contextmanager
    def _reading(self) -> Any:
        plays, _ = self._parts
        try:
            yield
        except self._error as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise InputError(
                f"{plays.label}: cannot read as {plays.format.value}: {first}",
                "check the file's format and encoding (UTF-8)",
            ) from None

    def counts(self, window: Window, progress: ProgressSink) -> list[int]:
        """The one pass over the plays, with every record of the input accounted for: the
        counts, and the violating plays kept for what follows."""
        if self._database is not None:
            return self._database_counts(window)
        plays, reader = self._parts
        with self._reading():
            if plays.format is not PlaysFormat.PARQUET and has_long_line(plays.path, plays.limit):
                plays.record_count()  # first: DuckDB holds a whole line in memory past its limit
            if plays.count is not None:
                reader.reread(plays.readable(), nul_check=plays.count.nul)
            failure: Exception | None = None
            with read_progress(self.con, plays.path, progress), counting(plays) as counted:
                try:
                    reader.groups(window)
                except self._error as exc:
                    failure = exc  # perhaps a record past the limit: the count below says
            record = counted()
            if failure is not None:
                # Perhaps lines ending both ways (CRLF and LF, or a lone CR): the copy read next
                # ends them all in a line feed.
                plays.line_feeds_only()
            readable = plays.readable()
            if record is not None and (
                readable != reader.source.path or record.nul and not reader.nul_check
            ):
                # Records set aside (past the limit, the wrong count of fields), line ends made
                # one, or a NUL byte: errors here are the file's own.
                reader.reread(readable, nul_check=record.nul)
                reader.groups(window)
            elif failure is not None:
                raise failure
            if record is None:  # Parquet: the footer's count
                record = RecordCount(parquet_rows(self.con, readable), (), 0, False)
        self._add(unread_plays(plays.path, record, self._totals()[0], plays.limit))
        return self._totals()

    def _database_counts(self, window: Window) -> list[int]:
        """The one pass over a database's Arrow stream, and its row count checked."""
        read = self._database
        assert read is not None
        self.con.register("plays_database", read.stream)
        query = audit_query(DUCKDB, plays_sql("plays_database", read.row_keys), prefix=self._prefix)
        try:
            self.con.execute(f"CREATE OR REPLACE TEMP TABLE {GROUPS} AS {query}", window.params)
        except self._error as exc:
            raise SourceError(
                f"{read.provenance.source}: reading the plays failed: {first_line(exc)}",
                "check the server and rerun",
            ) from None
        finally:
            self.con.unregister("plays_database")
        totals = self._totals()
        check_count(read, totals[0])
        return totals

    def _rows(self, query: str) -> list[Any]:
        rows: list[Any] = self.con.execute(query).fetchall()
        return rows

    def _add(self, plays: list[ViolatingPlay]) -> None:
        """Records DuckDB did not read, each a group of one violating play."""
        if not plays:
            return
        codes = {reason: i + 1 for i, reason in enumerate(Violation)}
        # One statement over lists: a row at a time (executemany) pays DuckDB's per-statement
        # cost for every play (docs/benchmarks.md).
        self.con.execute(
            f"INSERT INTO {GROUPS} (in_window, not_enriched, reason, play_id, line, partner, "
            "state, zip, enriched_at, raw, n) SELECT false, false, unnest($reason::INTEGER[]), "
            "unnest($play_id::VARCHAR[]), unnest($line::BIGINT[]), unnest($partner::VARCHAR[]), "
            "unnest($state::VARCHAR[]), unnest($zip::VARCHAR[]), "
            "unnest($enriched_at::VARCHAR[]), unnest($raw::VARCHAR[]), 1",
            {
                "reason": [codes[p.reason] for p in plays],
                "play_id": [p.play_id for p in plays],
                "line": [p.line for p in plays],
                "partner": [p.partner for p in plays],
                "state": [p.state for p in plays],
                "zip": [p.zip for p in plays],
                "enriched_at": [p.enriched_at for p in plays],
                "raw": [p.raw for p in plays],
            },
        )

    def write_violations(self, window: Window, folder: str) -> None:
        self.con.execute(
            f"CREATE OR REPLACE TEMP TABLE {COPIES} AS SELECT range + 1 AS k FROM range($n)",
            {"n": self._largest_group()},
        )
        Path(folder).mkdir(parents=True, exist_ok=True)
        target = str(Path(folder) / "violations.parquet").replace("'", "''")
        self.con.execute(f"COPY ({VIOLATIONS_OUT_SQL}) TO '{target}' (FORMAT parquet)")

    def close(self) -> None:
        try:
            self.con.close()
        finally:
            self._stack.close()
