"""The operator's database, read only: `sqlite:PATH` (opened read-only) and `postgresql://`.

The plays (audit/database.py) and the registry (inputs/registry_database.py) are read from it
through this connection: an ADBC (Arrow Database Connectivity) driver from PyPI
(`adbc-driver-sqlite`, `adbc-driver-postgresql`, which is libpq itself: `PGPASSWORD`,
`~/.pgpass`, `PGSERVICE` and the other libpq settings fill in what the URL leaves out), one
read-only transaction (PostgreSQL: repeatable read) whose login role may not write on the server,
and identifiers quoted as SQL quotes them (`quote_ident`, `quote_table`), for every engine.

The URL's password never leaves this module: `shown` is the URL without it, and every error
names the database by `shown` (driver messages are cut to their first line and scrubbed of the
password).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlsplit

from compliance_bake.errors import InputError, SourceError
from compliance_bake.inputs.redaction import redacted

SQLITE = "sqlite:"
POSTGRES = ("postgresql://", "postgres://")


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


def url_password(url: str) -> str | None:
    parts = urlsplit(url)
    given = parts.password or dict(parse_qsl(parts.query)).get("password")
    return unquote(given) if given else None


@dataclass(frozen=True, slots=True)
class Database:
    """A database as the operator names it."""

    text: str  # as given (may hold a password: never shown)
    kind: str  # "sqlite" or "postgresql"

    @property
    def shown(self) -> str:
        """The database as every message and the report name it: no password."""
        return self.text if self.kind == "sqlite" else redacted(self.text, database=True)

    @property
    def path(self) -> Path:
        return Path(self.text.removeprefix(SQLITE))

    def scrub(self, text: str) -> str:
        """A driver's message with the password (URL or PGPASSWORD) taken out, first line."""
        line = (text.strip().splitlines() or [""])[0][:300]
        secrets = (url_password(self.text), os.environ.get("PGPASSWORD"))
        forms = [f(s) for s in secrets if s for f in (str, quote, lambda s: quote(s, safe=""))]
        return redacted(line, forms, "***", database=True)


def database_at(text: str, where: str = "") -> Database:
    """The database `text` names, checked before any connection (`where`, such as
    `--registry `, starts the messages); bad input raises InputError."""
    kind = "sqlite" if text.startswith(SQLITE) else "postgresql"
    if kind == "postgresql":
        unambiguous_url(text)
    database = Database(text, kind)
    if kind == "sqlite":
        if not text.removeprefix(SQLITE):
            raise InputError(f"{where}{text}: no file after sqlite:", "write sqlite:PATH")
        if not database.path.is_file():
            raise InputError(
                f"{where}{text}: no such SQLite file", "give sqlite:PATH of an existing file"
            )
    return database


def quote_ident(name: str) -> str:
    """An identifier (a column, a table) quoted as SQL quotes one, for every engine."""
    return '"' + name.replace('"', '""') + '"'


def quote_table(name: str) -> str:
    """`schema.table` with each part quoted as an identifier."""
    return ".".join(quote_ident(part) for part in name.split("."))


def relation(table: str | None, query: str | None, alias: str) -> str:
    """The FROM item of a table (quoted) or of a query (a subquery named `alias`)."""
    if table is not None:
        return quote_table(table)
    return f"({query}) AS {alias}"


class Session:
    """One ADBC connection in one transaction, with a small DuckDB connection that reads the
    answers of the metadata queries (the low-level ADBC API hands each answer over as an Arrow
    stream; its DB-API layer would import pandas and pyarrow, which a command pays at start-up)."""

    def __init__(self, source: Database) -> None:
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


def _connect(source: Database) -> tuple[Any, Any]:
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


def _refused(source: Database, exc: Exception) -> InputError | SourceError:
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
def failing(source: Database, what: str, fix: str) -> Iterator[None]:
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


def begin_read_only(session: Session) -> str:
    """Start the session's read-only transaction (PostgreSQL: repeatable read, a login role
    that can write on the server refused) and name the server, as the report records it."""
    with failing(session.source, "cannot start a read-only transaction", "check the server"):
        if session.source.kind == "postgresql":
            session.run("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            refuse_server_writers(session)
            version = session.rows("SELECT current_setting('server_version')")[0][0]
            return f"PostgreSQL {version}"
        return f"SQLite {session.rows('SELECT sqlite_version()')[0][0]}"
