"""What an audit engine does, and what it is given: the seam between the audit and its engines.

An engine loads the reference relations (`zips`, `states`, `licences`), makes the `plays`
relation from a plays source (a file, a folder, a glob, or with Spark a cluster URI), and runs
the shared query of audit/sql.py, spelled in its dialect, with the window as parameters. It
returns plain rows; the audit (audit/zip_window.py) turns them into its result.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from compliance_bake.audit.columns import DEFAULT, ColumnMap
from compliance_bake.audit.database import Provenance
from compliance_bake.audit.plays_source import PlaysFormat
from compliance_bake.audit.sql import (
    LARGEST_GROUP_SQL,
    TOTALS_SQL,
    VIOLATION_ORDER,
    VIOLATIONS_SQL,
    Dialect,
    digest_sql,
)
from compliance_bake.audit.violations import ViolatingPlay, Violation
from compliance_bake.progress import ProgressSink

if TYPE_CHECKING:
    from compliance_bake.audit.engines.database_read import DatabaseRead

DEFAULT_SPARK_MASTER = "local[*]"


@dataclass(frozen=True, slots=True)
class EngineOptions:
    """The engine the audit runs on, as the command line chose it. DuckDB is the default for
    every source, a `postgresql://` one included: the pushed-down PostgreSQL engine is chosen by
    name, because it is slower than streaming the rows out wherever the server has no cores to
    spare (`compliance-bake docs engines`)."""

    engine: str = "duckdb"
    spark_master: str = DEFAULT_SPARK_MASTER
    spark_conf: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class PlaysOptions:
    """How to read the plays source: its column map, and for a database the table or the
    query (exactly one: audit/database.py checks it)."""

    columns: ColumnMap = DEFAULT
    table: str | None = None
    query: str | None = None


NO_OPTIONS = PlaysOptions()


@dataclass(frozen=True, slots=True)
class Relations:
    """The reference relations as columns: the ZIP database, the states, the active licences."""

    zips: list[str]
    zip_states: list[str]
    states: list[str]
    regulated: list[bool]
    licence_partners: list[str]
    licence_states: list[str]


@dataclass(frozen=True, slots=True)
class Window:
    """The query's parameters: the window's edges in microseconds since the epoch (UTC)."""

    since_us: int
    now_us: int
    params: dict[str, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", {"since_us": self.since_us, "now_us": self.now_us})


class AuditEngine(Protocol):
    """One engine with one open session; `close` ends it."""

    dialect: Dialect

    def load_relations(self, relations: Relations) -> None:
        """Create the `zips`, `states` and `licences` relations."""

    def make_plays(
        self, plays: str, fmt: PlaysFormat | None = None, options: PlaysOptions = NO_OPTIONS
    ) -> str:
        """Check the source (bad input: InputError) and make the `plays` relation; its format.
        `fmt` overrides the name's suffix; `-` is standard input; `options` maps the columns
        and names a database's table or query."""

    def counts(self, window: Window, progress: ProgressSink) -> list[int]:
        """The one pass over the plays (COUNTS_SQL into `GROUPS`), and from it the counts:
        total, in window, not enriched, then one per reason. The methods below read `GROUPS`."""

    def violations(self, window: Window, limit: int | None) -> list[ViolatingPlay]:
        """The violating plays; with a limit, at least the first `limit` in the report's order."""

    def digest(self, window: Window) -> str:
        """A digest of every violating play, the same on every engine (sql.digest_sql)."""

    def write_violations(self, window: Window, folder: str) -> None:
        """Write every violating play as a Parquet dataset into `folder`, from the engine."""

    @property
    def provenance(self) -> Provenance | None:
        """Where a database source's plays came from, once read (None for files)."""

    def close(self) -> None:
        """End the session (an engine leaves a session it did not start running)."""


REASONS = list(Violation)


def violating_plays(rows: list[tuple[Any, ...]]) -> list[ViolatingPlay]:
    """Rows of VIOLATIONS_SQL (reason code first, the group's number of plays last) as the
    violating plays, each group as many times as it holds plays."""
    plays: list[ViolatingPlay] = []
    for code, play_id, line, partner, state, zip_code, enriched_at, raw, n in rows:
        # Positional: a frozen dataclass takes keywords at 1.4 times the cost, once per play.
        play = ViolatingPlay(
            REASONS[int(code) - 1],
            play_id,
            None if line is None else int(line),
            partner,
            state,
            zip_code,
            enriched_at,
            raw,
        )
        plays += [play] * int(n)
    return plays


def digest_text(count: int, total: int) -> str:
    """The digest's text from the number of violating plays and the sum of their row hashes."""
    return f"md5-sum:{count}:{total}"


def first_line(exc: BaseException) -> str:
    """An engine's error as one line for a diagnostic: its first line, else its type's name, at
    most 300 characters (a JVM's or a server's message can run to pages)."""
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]


class GroupsInSession:
    """What an engine that keeps `GROUPS` in its own session (DuckDB, Spark) reads from it: each
    is one query of audit/sql.py, run by the engine's `_rows`, so the engines cannot differ;
    and a database's plays, when they were read, their `_database` read."""

    dialect: Dialect
    _database: DatabaseRead | None

    @property
    def provenance(self) -> Provenance | None:
        """Where a database's plays came from (None for a file)."""
        return None if self._database is None else self._database.provenance

    def _rows(self, query: str) -> list[Any]:
        raise NotImplementedError

    def _totals(self) -> list[int]:
        return [int(n) for n in self._rows(TOTALS_SQL)[0]]

    def _largest_group(self) -> int:
        return int(self._rows(LARGEST_GROUP_SQL)[0][0])

    def violations(self, window: Window, limit: int | None) -> list[ViolatingPlay]:
        final = VIOLATIONS_SQL
        if limit is not None:  # the first groups: at least as many plays
            final += f"{VIOLATION_ORDER} LIMIT {int(limit)}"
        return violating_plays(self._rows(final))

    def digest(self, window: Window) -> str:
        count, total = self._rows(digest_sql(self.dialect))[0]
        return digest_text(int(count), int(total))
