"""Plays in a database: `sqlite:PATH` (opened read-only) and `postgresql://` (libpq's rules).

A database source names a table (`--plays-table`, schema-qualified allowed, each part quoted as
an identifier) or a query (`--plays-query`, one SELECT, run as a subquery inside a read-only
transaction): exactly one. The rows are read through ADBC (Arrow Database Connectivity) drivers
from PyPI (`adbc-driver-sqlite`, `adbc-driver-postgresql`, which is libpq itself: `PGPASSWORD`,
`~/.pgpass`, `PGSERVICE` and the other libpq settings fill in what the URL leaves out), as an
Arrow stream that DuckDB scans without a copy (docs/design.md says why these readers).

Every row counts: each audited column arrives as text, whatever its type (a number as its text,
an instant as ISO 8601 in UTC), a NULL as NULL; a SQLite BLOB in an audited column makes the row
a malformed-row play. The row count is taken in the same read-only transaction as the rows
(PostgreSQL: repeatable read) and checked against the plays the audit counted. A row is named by
its play id and, for a SQLite table, its `rowid` (`row_key`).

The URL's password never leaves this module: `shown` is the URL without it, and every error
names the source by `shown` (driver messages are cut to their first line and scrubbed of the
password).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

from compliance_bake.audit.columns import AUDITED, ColumnMap
from compliance_bake.errors import InputError, SourceError
from compliance_bake.inputs.files import CREDENTIAL_MAX_BYTES, read_regular_file

SQLITE = "sqlite:"
POSTGRES = ("postgresql://", "postgres://")
KINDS = ("sqlite", "postgresql")
ROW_KEY = "row_key"
_FIX_ONE = "give --plays-table NAME or --plays-query SQL (exactly one) with a database source"


def is_database(text: str) -> bool:
    return text.startswith(SQLITE) or text.startswith(POSTGRES)


def without_password(url: str) -> str:
    """The URL without a password, in its user part or its query (`?password=`)."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        user, host = netloc.rsplit("@", 1)
        netloc = user.split(":", 1)[0] + "@" + host
    query = urlencode([(k, v) for k, v in parse_qsl(parts.query) if k != "password"])
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


_HEX = frozenset("0123456789abcdefABCDEF")


def _raw_in_user_part(url: str) -> str | None:
    """The first character that makes the URL's user part read two ways, or None.

    libpq ends the user part at the first `@` or `/`, the URL standard (and so `shown`) at the
    first `/`, `?` or `#`: with a raw `#`, `/`, `?` or a second `@` before the host, one reader
    takes part of the password for a host, a port, a path or a fragment, which is then shown.
    A `%` that starts no escape is refused too (libpq names the token in its error). Everything
    up to the last `@` is taken as the user part, so nothing of a password is missed.
    """
    rest = url.partition("://")[2]
    if "#" in rest:  # libpq knows no fragment: a `#` anywhere is part of a value, read two ways
        return "#"
    userinfo = rest[: rest.rfind("@")] if "@" in rest else ""
    for i, char in enumerate(userinfo):
        if char in "#/?@":
            return char
        if char == "%" and not (len(userinfo) > i + 2 and set(userinfo[i + 1 : i + 3]) <= _HEX):
            return char
    return None


def _shown_refused(url: str) -> str:
    """An ambiguous URL as a message names it: the scheme, the user name up to its first mark,
    and what follows the last `@` without its query or fragment."""
    scheme, _, rest = url.partition("://")
    at = rest.rfind("@")
    user = rest[:at]
    for mark in ":#/?@%":
        user = user.partition(mark)[0]
    host = rest[at + 1 :].partition("?")[0].partition("#")[0]
    return f"{scheme}://{user}@{host}"


def unambiguous_url(url: str) -> None:
    """InputError (exit 2) when a PostgreSQL URL's user part holds a raw `#`, `/`, `?`, `@` or a
    stray `%`, before any connection: such a URL reads two ways, so the password could be shown."""
    char = _raw_in_user_part(url)
    if char is not None:
        code = "%25" if char == "%" else quote(char, safe="")
        raise InputError(
            f"{_shown_refused(url)}: the URL holds a raw {char!r} in its user name, password or "
            "values, which a PostgreSQL URL reads two ways",
            f"percent-encode it as {code} (urllib.parse.quote(password, safe=''))",
        )


def _password(url: str) -> str | None:
    parts = urlsplit(url)
    given = parts.password or dict(parse_qsl(parts.query)).get("password")
    return unquote(given) if given else None


@dataclass(frozen=True, slots=True)
class DatabaseSource:
    """A `--plays` database source and what to read from it."""

    text: str  # as given (may hold a password: never shown)
    kind: str  # "sqlite" or "postgresql"
    table: str | None
    query: str | None

    @property
    def shown(self) -> str:
        """The source as every message and the report name it: no password."""
        return self.text if self.kind == "sqlite" else without_password(self.text)

    @property
    def path(self) -> Path:
        return Path(self.text.removeprefix(SQLITE))

    @property
    def relation(self) -> str:
        """The FROM item: the quoted table, or the query as a subquery."""
        if self.table is not None:
            return quote_table(self.table)
        assert self.query is not None
        return f"({self.query}) AS plays_query"

    @property
    def selected(self) -> str:
        """What was read, for the report: the table, or the query's SHA-256."""
        if self.table is not None:
            return f"table {self.table}"
        assert self.query is not None
        return "query sha256:" + hashlib.sha256(self.query.encode("utf-8")).hexdigest()

    def scrub(self, text: str) -> str:
        """A driver's message with the password (URL or PGPASSWORD) taken out, first line."""
        line = (text.strip().splitlines() or [""])[0][:300]
        for secret in (_password(self.text), os.environ.get("PGPASSWORD")):
            if secret:
                for form in (secret, quote(secret), quote(secret, safe="")):
                    line = line.replace(form, "***")
        return line.replace(self.text, self.shown)


def quote_table(name: str) -> str:
    """`schema.table` with each part quoted as an identifier."""
    return ".".join('"' + part.replace('"', '""') + '"' for part in name.split("."))


def database_source(text: str, table: str | None, query: str | None) -> DatabaseSource:
    """Check a database `--plays` with its table or query; bad input raises InputError."""
    kind = "sqlite" if text.startswith(SQLITE) else "postgresql"
    if kind == "postgresql":
        unambiguous_url(text)
    shown = text if kind == "sqlite" else without_password(text)
    if (table is None) == (query is None):
        raise InputError(f"{shown}: a database source needs a table or a query", _FIX_ONE)
    if table is not None and not all(part for part in table.split(".")):
        raise InputError(f"--plays-table {table!r}: not a table name", "give NAME or SCHEMA.NAME")
    if query is not None and not query.strip():
        raise InputError("--plays-query: the query is empty", "give one SELECT")
    if query is not None:
        query = query.strip().rstrip(";").strip()
    source = DatabaseSource(text, kind, table, query)
    if kind == "sqlite":
        path = source.path
        if not str(path):
            raise InputError(f"{text}: no file after sqlite:", "write sqlite:PATH")
        if not path.is_file():
            raise InputError(f"{text}: no such SQLite file", "give sqlite:PATH of an existing file")
    return source


def no_database_options(table: str | None, query: str | None) -> None:
    if table is not None or query is not None:
        raise InputError(
            "--plays-table and --plays-query read a database source only",
            "give --plays sqlite:PATH or --plays postgresql://..., or drop them",
        )


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where the plays came from, as the report records it (no password)."""

    source: str
    selected: str
    server: str

    def as_json(self) -> dict[str, str]:
        return {"source": self.source, "read": self.selected, "server": self.server}


@dataclass
class DatabaseRead:
    """An open read: the Arrow stream of the plays, the row count taken in the same
    transaction, and the provenance. `close` ends the transaction and the connection."""

    stream: Any  # None when `open_read` was asked for no stream (Spark reads through JDBC)
    rows: int | None  # None when not counted (the PostgreSQL engine's count is its answer's)
    provenance: Provenance
    row_keys: bool
    select: str  # the SELECT the stream reads (`_select`)
    _session: Any  # kept open: the stream is its statement's (database.Session)

    def close(self) -> None:
        self._session.close()


class Session:
    """One ADBC connection in one transaction, with a small DuckDB connection that reads the
    answers of the metadata queries (the low-level ADBC API hands each answer over as an Arrow
    stream; its DB-API layer would import pandas and pyarrow, which a command pays at start-up)."""

    def __init__(self, source: DatabaseSource) -> None:
        import duckdb

        self.source = source
        self.statements: list[Any] = []
        self.database, self.connection = _connect(source)
        self.duck = duckdb.connect()

    def stream(self, sql: str, params: Any = None) -> Any:
        """The answer of `sql` as an Arrow stream (kept open until `close`); `params`, an Arrow
        stream of one row, binds `$1`, `$2`, ... in column order."""
        import adbc_driver_manager as adbc

        statement = adbc.AdbcStatement(self.connection)
        self.statements.append(statement)
        statement.set_sql_query(sql)
        if params is not None:
            statement.bind_stream(params)
        handle, _ = statement.execute_query()
        return handle

    def run(self, sql: str) -> None:
        """A statement that answers no rows."""
        import adbc_driver_manager as adbc

        statement = adbc.AdbcStatement(self.connection)
        try:
            statement.set_sql_query(sql)
            statement.execute_update()
        finally:
            statement.close()

    def rows(self, sql: str, params: Any = None) -> list[tuple[Any, ...]]:
        self.duck.register("adbc_answer", self.stream(sql, params))
        try:
            found: list[tuple[Any, ...]] = self.duck.execute("SELECT * FROM adbc_answer").fetchall()
        finally:
            self.duck.unregister("adbc_answer")
        return found

    def columns(self, sql: str) -> dict[str, str]:
        """The names and (DuckDB) types of the answer's columns."""
        self.duck.register("adbc_answer", self.stream(sql))
        try:
            described = self.duck.execute("DESCRIBE SELECT * FROM adbc_answer").fetchall()
        finally:
            self.duck.unregister("adbc_answer")
        return {str(row[0]): str(row[1]) for row in described}

    def close(self) -> None:
        """End the read. Each step is tried whatever the one before did, and none raises: the
        transaction is read-only, so a rollback only ends it, and on a connection that broke
        off (a restart, a terminated backend) the server has ended it already. The failure
        that broke the read, raised as it is, is then the one the operator sees (exit 3), not
        the driver's error from closing what is gone."""
        steps = [*(statement.close for statement in self.statements), self.connection.rollback]
        steps += [self.connection.close, self.database.close, self.duck.close]
        for step in steps:
            with suppress(Exception):  # the drivers' own error types
                step()


def _connect(source: DatabaseSource) -> tuple[Any, Any]:
    try:
        import adbc_driver_manager as adbc

        if source.kind == "sqlite":
            import adbc_driver_sqlite as sqlite

            uri = "file:" + quote(str(source.path.resolve())) + "?mode=ro"
            database = sqlite.connect(uri)
        else:
            import adbc_driver_postgresql as postgresql

            database = postgresql.connect(source.text)
    except ImportError:
        raise InputError(
            f"{source.shown}: the {source.kind} reader is not installed",
            "pip install compliance-bake (adbc-driver-sqlite, adbc-driver-postgresql)",
        ) from None
    except Exception as exc:  # the driver's own error types
        raise _refused(source, exc) from None
    try:
        connection = adbc.AdbcConnection(database)
        connection.set_options(**{"adbc.connection.autocommit": "false"})
    except Exception as exc:
        database.close()
        raise _refused(source, exc) from None
    return database, connection


def _refused(source: DatabaseSource, exc: Exception) -> InputError | SourceError:
    message = source.scrub(str(exc))
    if "password" in message or "authentication" in message:
        return InputError(
            f"{source.shown}: the server refused the login: {message}",
            "give the right user and password (in the URL, PGPASSWORD or ~/.pgpass)",
        )
    return SourceError(
        f"{source.shown}: cannot connect: {message}",
        "check the host, port, database, user and password (PGPASSWORD, ~/.pgpass)",
    )


@contextmanager
def failing(source: DatabaseSource, what: str, fix: str) -> Iterator[None]:
    try:
        yield
    except (InputError, SourceError):
        raise
    except Exception as exc:
        message = source.scrub(str(exc))
        # A table or query the server refused (missing, not a SELECT, writing, failing) is the
        # operator's input; a connection that broke off is the source's failure.
        lost = any(
            mark in message.lower()
            for mark in ("connection", "server closed", "terminating", "sqlstate: 08")
        )
        error = SourceError if lost else InputError
        raise error(f"{source.shown}: {what}: {message}", fix) from None


def _text(kind: str, column: str, arrow_type: str) -> str:  # arrow_type: DuckDB's name
    """A column as text: an instant as ISO 8601 in UTC, anything else its own text."""
    ident = '"' + column.replace('"', '""') + '"'
    if kind == "postgresql":
        if arrow_type == "TIMESTAMP WITH TIME ZONE":
            return f"to_char({ident} AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')"
        return f"CAST({ident} AS TEXT)"
    return f"CASE WHEN typeof({ident}) = 'blob' THEN NULL ELSE CAST({ident} AS TEXT) END"


def _select(source: DatabaseSource, columns: ColumnMap, types: dict[str, str], key: bool) -> str:
    """The SELECT that reads the audited columns as text, and the row's key and flags.

    SQLite's reader takes a column's type from its first rows, so a column whose first rows are
    NULL would stop the read at its first text: there every value is read as text with NULL as
    '' and a bit per column of `nulls` says which were NULL (restored by `plays_sql`)."""
    fields = [(f, columns.source(f)) for f in AUDITED]
    rel = source.relation
    if source.kind == "postgresql":
        values = ", ".join(f"{_text('postgresql', c, types[c])} AS {f}" for f, c in fields)
        return f"SELECT NULL::BIGINT AS {ROW_KEY}, {values}, 0 AS nulls, '' AS blobs FROM {rel}"
    values = ", ".join(f"ifnull({_text('sqlite', c, types[c])}, '') AS {f}" for f, c in fields)
    ident = ['"' + c.replace('"', '""') + '"' for _, c in fields]
    nulls = " | ".join(
        f"(({i} IS NULL OR typeof({i}) = 'blob') << {n})" for n, i in enumerate(ident)
    )
    blobs = " || ".join(
        f"CASE WHEN typeof({i}) = 'blob' THEN '{f} ' ELSE '' END"
        for (f, _), i in zip(fields, ident, strict=True)
    )
    row_key = "rowid" if key else "0"
    return f"SELECT {row_key} AS {ROW_KEY}, {values}, {nulls} AS nulls, {blobs} AS blobs FROM {rel}"


def plays_sql(view: str, row_keys: bool, spark: bool = False) -> str:
    """The `plays` relation over the rows of `_select` as the view `view` (DuckDB: the Arrow
    stream; Spark: the JDBC read): the NULLs restored, a BLOB's row malformed."""
    fields = []
    for n, f in enumerate(AUDITED):
        bit = f"shiftright(nulls, {n}) & 1" if spark else f"(nulls >> {n}) & 1"
        fields.append(f"CASE WHEN {bit} = 1 THEN NULL ELSE {f} END AS {f}")
    by_name = dict(zip(AUDITED, fields, strict=True))
    line = f"CAST({ROW_KEY} AS BIGINT)" if row_keys else "CAST(NULL AS BIGINT)"
    text = "STRING" if spark else "VARCHAR"
    return f"""
        SELECT {line} AS line, {by_name["play_id"]}, {by_name["partner"]}, {by_name["state"]},
               {by_name["zip"]}, CAST(NULL AS {text}) AS placed_at, {by_name["enriched_at"]},
               CAST(NULL AS {text}) AS wager_type, CAST(NULL AS {text}) AS stake,
               blobs <> '' AS malformed,
               CASE WHEN blobs <> '' THEN 'a BLOB, not text, in ' || trim(blobs) END AS raw
        FROM {view}
    """


# What can write on a PostgreSQL server from inside a read-only transaction: a read-only
# transaction refuses writes to tables, not a file written by lo_export or pg_file_write, a
# statement sent on through dblink, or set_config('role', ...) taking back a superuser's role.
# The login role, and every role it is a member of, may hold none of these powers.
_SERVER_WRITERS = ("pg_write_server_files", "pg_execute_server_program")
_WRITING_FUNCTIONS = (
    "lo_export(oid, text)",
    "pg_file_write(text, text, boolean)",
    "dblink(text, text)",
    "dblink_exec(text, text)",
    "dblink_connect_u(text, text)",
)
_POWERS_SQL = (
    "SELECT r.rolname, r.rolsuper, r.rolname IN ("
    + ", ".join(f"'{name}'" for name in _SERVER_WRITERS)
    + "), ARRAY(SELECT f FROM unnest(ARRAY["
    + ", ".join(f"'{f}'" for f in _WRITING_FUNCTIONS)
    + "]) AS f WHERE to_regprocedure(f) IS NOT NULL"
    " AND has_function_privilege(r.oid, to_regprocedure(f), 'EXECUTE'))::text"
    " FROM pg_roles r WHERE pg_has_role(session_user, r.oid, 'MEMBER') ORDER BY r.rolname"
)
_READER_FIX = (
    "log in as a role that can only read, e.g. CREATE ROLE auditor LOGIN; "
    "GRANT pg_read_all_data TO auditor (`compliance-bake docs plays`)"
)


def refuse_server_writers(session: Session) -> None:
    """InputError (exit 2) when the login role can write on the server, before any query of
    the operator's runs: the read is read-only on the server too, whatever the role."""
    for role, is_super, is_writer, functions in session.rows(_POWERS_SQL):
        first = functions.strip("{}").split(",")[0].strip('"') if functions else ""
        power = (
            f"the role {role} is a superuser"
            if is_super
            else f"the login role is a member of {role}"
            if is_writer
            else f"the role {role} may run {first}"
            if first
            else None
        )
        if power is not None:
            raise InputError(
                f"{session.source.shown}: {power}, so it can write on the server "
                "(a file through lo_export, say) inside a read-only transaction",
                _READER_FIX,
            )


def open_read(
    source: DatabaseSource, columns: ColumnMap, stream: bool = True, count: bool = True
) -> DatabaseRead:
    """Connect, check the columns, count the rows (unless `count` is false) and open the stream
    of the plays (unless `stream` is false), all in one read-only transaction. Bad input raises
    InputError; a source that fails, SourceError."""
    session = Session(source)
    try:
        with failing(source, "cannot start a read-only transaction", "check the server"):
            if source.kind == "postgresql":
                session.run("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                refuse_server_writers(session)
                version = session.rows("SELECT current_setting('server_version')")[0][0]
                server = f"PostgreSQL {version}"
            else:
                server = f"SQLite {session.rows('SELECT sqlite_version()')[0][0]}"
        what = "cannot read the table" if source.table else "the query failed"
        fix = (
            "check the table's name and schema (--plays-table SCHEMA.NAME)"
            if source.table
            else "give one read-only SELECT that runs on its own (--plays-query)"
        )
        with failing(source, what, fix):
            types = session.columns(f"SELECT * FROM {source.relation} LIMIT 0")
        columns.missing(f"{source.shown} ({source.selected})", list(types))
        key = source.kind == "sqlite" and source.table is not None and _has_rowid(session)
        with failing(source, what, fix):
            rows = (
                int(session.rows(f"SELECT count(*) FROM {source.relation}")[0][0])
                if count
                else None
            )
            select = _select(source, columns, types, key)
            plays = session.stream(select) if stream else None
        provenance = Provenance(source.shown, source.selected, server)
        return DatabaseRead(plays, rows, provenance, key, select, session)
    except BaseException:
        session.close()
        raise


def _has_rowid(session: Session) -> bool:
    """Whether the SQLite table has a rowid (not a view, not WITHOUT ROWID)."""
    try:
        session.columns(f"SELECT rowid FROM {session.source.relation} LIMIT 0")
    except Exception:
        return False
    return True


def check_count(read: DatabaseRead, counted: int) -> None:
    """The audit counted every row the source has, or the run fails (exit 3)."""
    if counted != read.rows:
        raise SourceError(
            f"{read.provenance.source}: the audit counted {counted:,} plays but the "
            f"{read.provenance.selected} holds {read.rows:,} rows",
            "rerun the audit; report it if it happens again",
        )


# Debian's JDBC drivers (libpostgresql-jdbc-java, libxerial-sqlite-jdbc-java; `make tools`).
JDBC_JARS = ("/usr/share/java/postgresql.jar", "/usr/share/java/sqlite-jdbc.jar")
JDBC_SCHEMA = (
    f"{ROW_KEY} BIGINT, " + ", ".join(f"{f} STRING" for f in AUDITED) + ", nulls BIGINT, "
    "blobs STRING"
)


def jdbc_jars() -> list[str]:
    """The JDBC drivers installed here, for a local Spark session's `spark.jars`."""
    return [jar for jar in JDBC_JARS if Path(jar).is_file()]


def jdbc_options(source: DatabaseSource) -> dict[str, str]:
    """Spark's JDBC reader options for the source (the password as a property, never in the
    URL). JDBC does not read libpq's files: the password is the URL's, else `PGPASSWORD`, else
    the matching line of `~/.pgpass` (`PGPASSFILE`); `PGSERVICE` is not read here."""
    if source.kind == "sqlite":
        return {
            "url": "jdbc:sqlite:" + str(source.path.resolve()),
            "driver": "org.sqlite.JDBC",
            "open_mode": "1",  # SQLITE_OPEN_READONLY
        }
    parts = urlsplit(source.text)
    user = unquote(parts.username or "") or os.environ.get("PGUSER") or _os_user()
    host = parts.hostname or os.environ.get("PGHOST") or "localhost"
    port = str(parts.port or os.environ.get("PGPORT") or 5432)
    database = unquote(parts.path.lstrip("/")) or os.environ.get("PGDATABASE") or user
    password = _password(source.text) or os.environ.get("PGPASSWORD") or None
    if password is None:
        password = _pgpass(host, port, database, user)
    options = {
        "url": f"jdbc:postgresql://{host}:{port}/{quote(database)}",
        "driver": "org.postgresql.Driver",
        "user": user,
        "readOnly": "true",
    }
    if password is not None:
        options["password"] = password
    return options


def _os_user() -> str:
    import getpass

    return getpass.getuser()


def _pgpass(host: str, port: str, database: str, user: str) -> str | None:
    """The password of the first matching `host:port:database:user:password` line."""
    path = Path(os.environ.get("PGPASSFILE") or Path.home() / ".pgpass")
    try:
        raw = read_regular_file(path, max_bytes=CREDENTIAL_MAX_BYTES, what="password file")
    except (FileNotFoundError, NotADirectoryError):
        return None
    lines = raw.decode("utf-8", "replace").splitlines()
    for line in lines:
        if not line.strip() or line.startswith("#"):
            continue
        fields = [f.replace("\\:", ":").replace("\\\\", "\\") for f in _split_pgpass(line)]
        if len(fields) != 5:
            continue
        if all(
            f in ("*", v) for f, v in zip(fields[:4], (host, port, database, user), strict=True)
        ):
            return fields[4]
    return None


def _split_pgpass(line: str) -> list[str]:
    fields: list[str] = []
    current, escaped = "", False
    for char in line:
        if escaped:
            current, escaped = current + "\\" + char, False
        elif char == "\\":
            escaped = True
        elif char == ":" and len(fields) < 4:
            fields.append(current)
            current = ""
        else:
            current += char
    return [*fields, current]
