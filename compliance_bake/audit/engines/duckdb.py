"""The audit on embedded DuckDB, in this process: the default engine.

The plays file is read by DuckDB's own readers (audit/plays.py); lines its CSV reader rejects
land in a rejects table and are classified by the same query as malformed rows. Every record of
the input is accounted for (audit/intake.py, records.py, accounting.py): the records are counted
in a side thread while DuckDB counts, a record past the reader's limit is never handed to DuckDB,
and each record DuckDB did not read is a `malformed-row` play with its line. A file holding a NUL
byte is counted again with every value searched for one.
"""

from __future__ import annotations

import hashlib
from contextlib import ExitStack, contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from compliance_bake.audit.accounting import unread_plays
from compliance_bake.audit.engines.interface import (
    Relations,
    Window,
    digest_text,
    violating_play,
)
from compliance_bake.audit.intake import STDIN, PlaysInput, counting, plays_input
from compliance_bake.audit.plays import (
    PlaysFormat,
    PlaysSource,
    drop_rejects,
    open_plays,
    parquet_rows,
    plays_relation,
    rejected_relation,
)
from compliance_bake.audit.reading import reporting
from compliance_bake.audit.records import RecordCount, has_long_line
from compliance_bake.audit.sources import is_glob, is_uri, resolve_plays
from compliance_bake.audit.sql import (
    COUNTS_SQL,
    DUCKDB,
    VIOLATION_ORDER,
    VIOLATIONS_OUT_SQL,
    VIOLATIONS_SQL,
    audit_query,
    digest_sql,
)
from compliance_bake.audit.violations import ViolatingPlay, Violation
from compliance_bake.errors import InputError
from compliance_bake.progress import ProgressSink

UNREAD_TABLE = "unread_plays"


class _Reader:
    """The plays relation(s) over one file `path` (the input, or its copy within the limit)."""

    def __init__(self, con: Any, source: PlaysSource) -> None:
        self.con, self.source = con, source
        self.nul_check = False

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

    def run(self, relation: str, final: str, window: Window) -> list[tuple[Any, ...]]:
        # fetchall, not fetchone: the reader's rejects table exists only once it is consumed.
        rows: list[tuple[Any, ...]] = self.con.execute(
            audit_query(DUCKDB, relation, final), window.params
        ).fetchall()
        return rows

    def counts(self, window: Window) -> list[int]:
        counts = [0] * (3 + len(Violation))
        for relation in self.relations():
            row = self.run(relation, COUNTS_SQL, window)[0]
            counts = [a + int(b) for a, b in zip(counts, row, strict=True)]
        return counts


def _row_hash(play: ViolatingPlay) -> int:
    """A play's part of the digest, as sql.digest_sql computes it in the engine."""
    code = list(Violation).index(play.reason) + 1
    fields = (play.play_id, play.partner, play.state, play.zip, play.enriched_at)
    text = "\x1f".join([str(code), *("" if f is None else f for f in fields)])
    return int(hashlib.md5(text.encode(), usedforsecurity=False).hexdigest()[:8], 16)


class DuckDBEngine:
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
        # (3 GiB instead of 0.35 GiB on the benchmark, and slower).
        self.con.execute("SET disabled_optimizers = 'join_order,build_side_probe_side'")
        self._stack = ExitStack()
        self._input: PlaysInput | None = None
        self._reader: _Reader | None = None
        self._unread: list[ViolatingPlay] = []

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

    def make_plays(self, plays: str, fmt: PlaysFormat | None = None) -> str:
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
            source_input.path, source_input.format, source_input.label, source_input.limit
        )
        self._reader = _Reader(self.con, source)
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
        """The counts, with every record of the input accounted for."""
        plays, reader = self._parts
        with self._reading():
            if plays.format is not PlaysFormat.PARQUET and has_long_line(plays.path, plays.limit):
                plays.record_count()  # first: DuckDB holds a whole line in memory past its limit
            if plays.count is not None:
                reader.reread(plays.readable(), nul_check=plays.count.nul)
            failure: Exception | None = None
            counts: list[int] = []
            with reporting(self.con, plays.path, progress), counting(plays) as counted:
                try:
                    counts = reader.counts(window)
                except self._error as exc:
                    failure = exc  # perhaps a record past the limit: the count below says
            record = counted()
            readable = plays.readable()
            if record is not None and (
                readable != reader.source.path or record.nul and not reader.nul_check
            ):
                reader.reread(readable, nul_check=record.nul)  # past the limit, or a NUL byte
                counts = reader.counts(window)  # errors here are the file's own
            elif failure is not None:
                raise failure
            if record is None:  # Parquet: the footer's count
                record = RecordCount(parquet_rows(self.con, readable), (), 0, False)
        self._unread = unread_plays(plays.path, record, counts[0], plays.limit)
        counts[0] += len(self._unread)
        counts[3 + list(Violation).index(Violation.MALFORMED_ROW)] += len(self._unread)
        return counts

    def violations(self, window: Window, limit: int | None) -> list[ViolatingPlay]:
        _, reader = self._parts
        final = VIOLATIONS_SQL if limit is None else f"{VIOLATIONS_SQL}{VIOLATION_ORDER}"
        if limit is not None:
            final += f" LIMIT {int(limit)}"
        found: list[ViolatingPlay] = []
        with self._reading():
            # A second scan rejects the same lines again; the rejected relation groups them.
            for relation in reader.relations():
                found += [violating_play(row) for row in reader.run(relation, final, window)]
        return found + self._unread

    def digest(self, window: Window) -> str:
        _, reader = self._parts
        count, total = len(self._unread), sum(_row_hash(p) for p in self._unread)
        with self._reading():
            for relation in reader.relations():
                n, s = reader.run(relation, digest_sql(DUCKDB), window)[0]
                count, total = count + int(n), total + int(s)
        return digest_text(count, total)

    def write_violations(self, window: Window, folder: str) -> None:
        _, reader = self._parts
        reasons = list(Violation)
        rows = [
            [reasons.index(p.reason) + 1, p.play_id, p.line, p.partner, p.state, p.zip]
            + [p.enriched_at, p.raw]
            for p in self._unread
        ]
        self.con.execute(
            f"CREATE OR REPLACE TEMP TABLE {UNREAD_TABLE} (reason INTEGER, play_id VARCHAR, "
            "line BIGINT, partner VARCHAR, state VARCHAR, zip VARCHAR, enriched_at VARCHAR, "
            "raw VARCHAR)"
        )
        if rows:
            self.con.executemany(
                f"INSERT INTO {UNREAD_TABLE} VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows
            )
        unread = VIOLATIONS_OUT_SQL.replace("FROM classified", f"FROM {UNREAD_TABLE}")
        parts = [f"({audit_query(DUCKDB, r, VIOLATIONS_OUT_SQL)})" for r in reader.relations()]
        Path(folder).mkdir(parents=True, exist_ok=True)
        target = str(Path(folder) / "violations.parquet").replace("'", "''")
        with self._reading():
            self.con.execute(
                f"COPY ({' UNION ALL '.join([*parts, f'({unread})'])}) TO '{target}' "
                "(FORMAT parquet)",
                window.params,
            )

    def close(self) -> None:
        try:
            self.con.close()
        finally:
            self._stack.close()
