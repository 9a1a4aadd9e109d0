"""Spark's JDBC read of a database's plays: the drivers, the reader's options and the schema.

JDBC does not read libpq's files, so the password is looked up here as libpq would (the URL's,
else `PGPASSWORD`, else the matching line of `~/.pgpass`); it goes to the reader as a property,
never in the URL.
"""

from __future__ import annotations

import getpass
import os
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

from compliance_bake.audit.columns import AUDITED
from compliance_bake.audit.database import DatabaseSource
from compliance_bake.audit.engines.database_read import ROW_KEY
from compliance_bake.inputs.database import url_password
from compliance_bake.inputs.files import CREDENTIAL_MAX_BYTES, read_if_present

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
    user = unquote(parts.username or "") or os.environ.get("PGUSER") or getpass.getuser()
    host = parts.hostname or os.environ.get("PGHOST") or "localhost"
    port = str(parts.port or os.environ.get("PGPORT") or 5432)
    database = unquote(parts.path.lstrip("/")) or os.environ.get("PGDATABASE") or user
    password = url_password(source.text) or os.environ.get("PGPASSWORD") or None
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


def _pgpass(host: str, port: str, database: str, user: str) -> str | None:
    """The password of the first matching `host:port:database:user:password` line."""
    path = Path(os.environ.get("PGPASSFILE") or Path.home() / ".pgpass")
    raw = read_if_present(path, max_bytes=CREDENTIAL_MAX_BYTES, what="password file")
    if raw is None:
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
