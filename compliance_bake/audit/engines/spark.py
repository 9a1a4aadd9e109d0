"""The audit on Apache Spark: `local[N]` in this process's JVM, or a cluster via Spark Connect.

`--spark-master local[N]` (default `local[*]`) starts Spark here (Java 17+); `sc://HOST:PORT`
talks to a Spark Connect server, which reads the plays where they are (s3a://, hdfs://,
abfss://). The session runs in UTC with partition values kept as text; `--spark-conf` settings
come last and win. The plays become the temporary view `plays`; the reference relations are
small temporary views the joins broadcast. The plays are read once: the audit's groups (the
counts, and one per violating play) are cached in the session, and rows come back to this
process only for the counts, at most VIOLATIONS_BOUND violating plays and the digest;
`--violations-out` is written by Spark from the cache.
"""

from __future__ import annotations

import json
import os
import shutil
from contextlib import ExitStack
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

from compliance_bake.audit.database import is_database, no_database_options
from compliance_bake.audit.engines.interface import (
    NO_OPTIONS,
    EngineOptions,
    GroupsInSession,
    PlaysOptions,
    Relations,
    Window,
    first_line,
)
from compliance_bake.audit.engines.spark_jdbc import jdbc_jars
from compliance_bake.audit.engines.spark_progress import stage_progress
from compliance_bake.audit.plays_input import plays_input
from compliance_bake.audit.plays_source import (
    STDIN,
    PlaysFormat,
    PlaysSpec,
    open_plays,
    resolve_plays,
)
from compliance_bake.audit.sql import (
    COPIES,
    GROUPS,
    SPARK,
    VIOLATIONS_OUT_SQL,
    audit_query,
)
from compliance_bake.errors import InputError
from compliance_bake.progress import ProgressSink

INSTALL = "pip install 'compliance-bake[spark]' (and Java 17+ for local[N])"
PLAYS_VIEW = "plays_source"
# Settings the audit's results depend on; --spark-conf may add others (and override these).
SESSION_CONF = {
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.sources.partitionColumnTypeInference.enabled": "false",
    "spark.sql.ansi.enabled": "true",
}
LOG_CONFIG = Path(__file__).with_name("spark-log4j2.properties")
# The local driver's JVM: errors-only logging (Spark's INFO lines would reach the terminal), and
# the optimising compiler (C2) waiting for ten times its default counts: the driver's own code
# (SQL parser, planner, code generator) runs warm, not hot, and compiling it costs seconds of
# CPU beside the tasks, while the scan's loops run millions of times and still reach C2 at once.
DRIVER_JAVA_OPTIONS = " ".join(
    (
        f"-Dlog4j2.configurationFile={LOG_CONFIG.as_uri()}",
        "-XX:Tier4InvocationThreshold=50000",
        "-XX:Tier4MinInvocationThreshold=6000",
        "-XX:Tier4CompileThreshold=60000",
        "-XX:Tier4BackEdgeThreshold=400000",
    )
)
LOCAL_CONF = {
    "spark.ui.showConsoleProgress": "false",  # our own progress goes to stderr
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.driver.host": "127.0.0.1",
}


def java_executable() -> str | None:
    """The java pyspark launches: `$JAVA_HOME/bin/java`, else java on PATH."""
    if "JAVA_HOME" in os.environ:
        candidate = os.path.join(os.environ["JAVA_HOME"], "bin", "java")
        return candidate if os.path.exists(candidate) else None
    return shutil.which("java")


def _require_java() -> None:
    java = java_executable()
    if not java or not os.path.exists(java):
        raise InputError(
            "--engine spark with a local master needs Java 17 or later, and no java was found",
            "install a JDK 17+ (Debian: apt-get install openjdk-17-jre-headless) or set "
            "JAVA_HOME, or pass --spark-master sc://HOST:PORT",
        )


def _start(session: Any, master: str, wanted: dict[str, str]) -> Any:
    """A session for the master with the settings (a local driver's JVM options first; the
    user's `spark.driver.extraJavaOptions`, if given, replaces them)."""
    if master.startswith("sc://"):
        builder = session.builder.remote(master)
    else:
        builder = session.builder.master(master).appName("compliance-bake audit")
        local = {**LOCAL_CONF, "spark.driver.extraJavaOptions": DRIVER_JAVA_OPTIONS}
        if jdbc_jars():  # the JDBC drivers for database plays sources (spark_jdbc.py)
            local["spark.jars"] = ",".join(jdbc_jars())
        for key, value in local.items():
            builder = builder.config(key, value)
    for key, value in wanted.items():  # static settings (memory, jars) take effect only here
        builder = builder.config(key, value)
    return builder.getOrCreate()


class SparkEngine(GroupsInSession):
    """One Spark session; it is stopped at the end only when this engine started it."""

    dialect = SPARK

    def __init__(self, spark: Any, owned: bool, remote: bool) -> None:
        self.spark = spark
        self.owned = owned
        self.remote = remote
        self._label = ""
        self._stack = ExitStack()
        self._prefix = False
        self._database = None
        self._scrub: Any = None

    @classmethod
    def open(cls, options: EngineOptions) -> SparkEngine:
        master = options.spark_master
        remote = master.startswith("sc://")
        # The URL first: it is wrong whether or not pyspark is installed here.
        if not remote and not master.startswith(("local", "spark://", "yarn", "k8s://")):
            raise InputError(
                f"--spark-master {master}: not a Spark master URL",
                "pass local[N], local[*], sc://HOST:PORT (Spark Connect), spark://, yarn or k8s://",
            )
        try:
            import pyspark  # noqa: F401
        except ImportError:
            raise InputError(
                "--engine spark needs pyspark, which is not installed", INSTALL
            ) from None
        from pyspark.sql import SparkSession

        wanted = {**SESSION_CONF, **dict(options.spark_conf)}
        active = None if remote else SparkSession.getActiveSession()
        if not remote:
            _require_java()
            # local[N] needs no network: keep the driver on loopback.
            os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        try:
            spark = _start(SparkSession, master, wanted)
        except Exception as exc:  # Py4J, gRPC: whatever the cause, one line and exit 2
            raise InputError(
                f"--spark-master {master}: cannot start a Spark session: {first_line(exc)}",
                "check the master URL (a Connect server listening there) and Java 17+",
            ) from None
        for key, value in wanted.items():  # a session that was already running takes them here
            try:
                spark.conf.set(key, value)
            except Exception:  # a static setting: fine if the running session already has it
                if spark.conf.get(key, None) != value:
                    raise InputError(
                        f"--spark-conf {key}={value}: the running Spark session cannot change it",
                        "set it where the session starts (spark-defaults.conf, the cluster)",
                    ) from None
        return cls(spark, owned=active is None, remote=remote)

    def load_relations(self, relations: Relations) -> None:
        """The three reference relations, each marked for broadcast: a frame made from local
        rows has no size Spark can plan with, so without the mark each join would shuffle every
        play (a sort-merge join), and the joins on `state` would gather the plays of a state in
        one task whatever the number of cores. A local session reads them from JSON Lines files
        in a private temporary folder (rows from this process would need Python workers, one per
        task, started before the first play is read); a cluster gets them as rows."""
        from pyspark.sql.functions import broadcast

        tables: dict[str, tuple[tuple[str, str], tuple[list[Any], list[Any]]]] = {
            "zips": (("zip", "state"), (relations.zips, relations.zip_states)),
            "states": (("state", "regulated"), (relations.states, relations.regulated)),
            "licences": (
                ("partner", "state"),
                (relations.licence_partners, relations.licence_states),
            ),
        }
        local = not self.remote and str(self.spark.sparkContext.master).startswith("local")
        folder = Path(self._stack.enter_context(TemporaryDirectory())) if local else None
        for view, (names, columns) in tables.items():
            schema = ", ".join(f"{n} {'BOOLEAN' if n == 'regulated' else 'STRING'}" for n in names)
            rows = zip(*columns, strict=True)
            if folder is None:
                frame = self.spark.createDataFrame(list(rows), schema)
            else:
                path = folder / f"{view}.jsonl"
                with path.open("w", encoding="utf-8") as handle:
                    for row in rows:
                        handle.write(json.dumps(dict(zip(names, row, strict=True))) + "\n")
                frame = self.spark.read.schema(schema).json(str(path))
            broadcast(frame).createOrReplaceTempView(view)

    def make_plays(
        self, plays: str, fmt: PlaysFormat | None = None, options: PlaysOptions = NO_OPTIONS
    ) -> str:
        from compliance_bake.audit.engines.spark_plays import plays_frame

        self._prefix = options.columns.prefix
        if is_database(plays):
            return self._database_plays(plays, options)
        no_database_options(options.table, options.query)
        self._label = plays
        if plays == STDIN or fmt is not None:
            # Standard input is spooled to a private file first (local[N] reads it; a cluster
            # would not see it); a given format names one local file.
            given = self._stack.enter_context(plays_input(Path(plays), fmt))
            source = open_plays(given.path, given.format, given.label, given.limit, options.columns)
            spec = PlaysSpec(
                plays, given.format, (given.path,), None, source.header, options.columns
            )
        else:
            spec = resolve_plays(plays, allow_uri=True, columns=options.columns)
        try:
            plays_frame(self.spark, spec).createOrReplaceTempView(PLAYS_VIEW)
        except InputError:
            raise
        except Exception as exc:
            raise self._input_error(exc) from None
        return spec.format.value

    def _database_plays(self, plays: str, options: PlaysOptions) -> str:
        """A database's plays through Spark's JDBC reader: the columns and the row count are
        checked first on the driver (database_read.open_read, no stream), then Spark reads the
        same SELECT through JDBC, and the `plays` view is DuckDB's (database_read.plays_sql)."""
        from compliance_bake.audit.database import database_source
        from compliance_bake.audit.engines.database_read import open_read, plays_sql
        from compliance_bake.audit.engines.spark_jdbc import JDBC_SCHEMA, jdbc_options

        source = database_source(plays, options.table, options.query)
        self._label, self._scrub = source.shown, source.scrub
        read = open_read(source, options.columns, stream=False)
        read.close()
        self._database = read
        jdbc = jdbc_options(source)
        try:
            frame = (
                self.spark.read.format("jdbc")
                .options(**jdbc)
                .option("query", read.select)
                .option("customSchema", JDBC_SCHEMA)
                .option("fetchsize", "10000")
                .load()
            )
            frame.createOrReplaceTempView("plays_database")
            self.spark.sql(
                plays_sql("plays_database", read.row_keys, spark=True)
            ).createOrReplaceTempView(PLAYS_VIEW)
        except Exception as exc:
            raise self._input_error(exc, source.scrub) from None
        return source.kind

    def _input_error(self, exc: Exception, scrub: Any = None) -> InputError:
        first = first_line(exc)
        if scrub is not None or self._scrub is not None:
            first = (scrub or self._scrub)(first)
        return InputError(
            f"{self._label}: Spark cannot read the plays: {first}",
            "check the path or URI, the format and the encoding (UTF-8)",
        )

    def _rows(self, query: str) -> list[Any]:
        try:
            rows: list[Any] = self.spark.sql(query).collect()
        except Exception as exc:
            raise self._input_error(exc) from None
        return rows

    def counts(self, window: Window, progress: ProgressSink) -> list[int]:
        """The one pass: the groups are cached where Spark runs, and the counts' query fills
        the cache; the methods below read the cache, never the plays again."""
        query = audit_query(SPARK, f"SELECT * FROM {PLAYS_VIEW}", prefix=self._prefix)
        try:
            self.spark.sql(query, args=window.params).cache().createOrReplaceTempView(GROUPS)
        except Exception as exc:
            raise self._input_error(exc) from None
        with stage_progress(self.spark, progress, self.remote):
            totals = self._totals()
        if self._database is not None:
            from compliance_bake.audit.engines.database_read import check_count

            check_count(self._database, totals[0])
        return totals

    def write_violations(self, window: Window, folder: str) -> None:
        self.spark.range(1, self._largest_group() + 1).toDF("k").createOrReplaceTempView(COPIES)
        try:
            self.spark.sql(VIOLATIONS_OUT_SQL).write.mode("overwrite").parquet(folder)
        except Exception as exc:
            raise InputError(
                f"--violations-out {folder}: Spark cannot write there: {first_line(exc)}",
                "pass a folder (or URI) the Spark cluster can write",
            ) from None

    def close(self) -> None:
        try:
            if self.spark.catalog.tableExists(GROUPS):
                self.spark.table(GROUPS).unpersist()
            for view in (PLAYS_VIEW, GROUPS, COPIES, "zips", "states", "licences"):
                self.spark.catalog.dropTempView(view)
            if self.owned:
                self.spark.stop()
        finally:
            self._stack.close()
