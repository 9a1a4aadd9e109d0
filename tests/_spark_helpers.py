"""Spark for the audit tests: why it cannot run here (if so), and the shared local[1] session.

The session is started once per test run (about 10 s of JVM start-up) and kept tiny: one core,
one shuffle partition, no UI. Every `--engine spark` audit in the run reuses it (the engine
leaves a session it did not start running).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from typing import Any

SPARK_MASTER = "local[1]"
SESSION_CONF = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "1",
    "spark.default.parallelism": "1",
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.driver.host": "127.0.0.1",
    "spark.sql.adaptive.enabled": "false",
    "spark.sql.codegen.wholeStage": "false",
}


def java_major() -> int | None:
    """The major version of `java` (JAVA_HOME first), or None when there is none."""
    home = os.environ.get("JAVA_HOME")
    java = os.path.join(home, "bin", "java") if home else shutil.which("java")
    if not java or not os.path.exists(java):
        return None
    try:
        shown = subprocess.run(
            [java, "-version"], capture_output=True, text=True, timeout=60
        ).stderr
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.search(r'version "(\d+)(?:\.(\d+))?', shown)
    if not found:
        return None
    major = int(found.group(1))
    return int(found.group(2) or 0) if major == 1 else major


def why_no_spark() -> str | None:
    """A clear reason to skip the Spark tests, or None when they can run."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return "pyspark is not installed (pip install -e '.[test,spark]'; make test does)"
    major = java_major()
    if major is None:
        return "no Java found: the Spark tests need Java 17+ (java on PATH or JAVA_HOME)"
    if major < 17:
        return f"Java {major} found: the Spark tests need Java 17+"
    return None


def start_session() -> Any:
    from pyspark.sql import SparkSession

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from compliance_bake.audit.engines.spark_jdbc import jdbc_jars

    builder = SparkSession.builder.master(SPARK_MASTER).appName("compliance-bake tests")
    conf = dict(SESSION_CONF)
    if jdbc_jars():  # Debian's JDBC drivers: the database-source parity tests read through them
        conf["spark.jars"] = ",".join(jdbc_jars())
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark
