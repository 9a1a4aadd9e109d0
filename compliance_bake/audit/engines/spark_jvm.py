"""The local Spark driver's JVM options: errors-only logging, the JIT's thresholds, and a
class-data archive of Spark.

A `local[N]` audit starts a JVM that loads and verifies some 20,000 classes of Spark, Hadoop and
Scala before it reads the first play: several seconds of CPU, on the driver's thread, that no
number of cores shortens. Java's class-data sharing (CDS) keeps those classes parsed and verified
in an archive the next JVM maps instead. The archive lives in the user's cache folder
(`$XDG_CACHE_HOME/compliance-bake`, else `~/.cache/compliance-bake`), one per pyspark and Java
installation (about 180 MB):
- The first local run on a machine asks its JVM to write one when it exits
  (`-XX:ArchiveClassesAtExit`): the audit itself is unchanged, and the JVM takes some seconds
  more to exit, after the audit's output is written.
- Later runs map it (`-XX:SharedArchiveFile`). It changes what the JVM loads, never what it
  computes: the results are the same with or without it.

Safety. A damaged archive can crash a JVM that maps it, so none is mapped unchecked:
- The JVM writes an archive's header last: a file that starts with the archive magic was written
  whole. Such a file is then promoted, with its SHA-256 written beside it.
- An unfinished file (a JVM killed while writing) is removed once it is old; a young one may
  still be being written, and no other run writes beside it.
- Each run hashes the archive (about 0.2 s) and maps it only when the hash matches; a mismatch
  removes it. Should the JVM still fail to start with it, the engine removes it and starts once
  more without (`SparkEngine.open`).

Messages about the archive are turned off (the JVM would print them on standard output), and
a JVM that crashes writes its report in the cache folder, not the working one. Nothing here
applies when `--spark-conf spark.driver.extraJavaOptions=...` is given: the user's options
replace these.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from compliance_bake.resources import user_cache_dir

LOG_CONFIG = Path(__file__).with_name("spark-log4j2.properties")
MAGIC = bytes.fromhex("a8ab0bf0")  # CDS_DYNAMIC_ARCHIVE_MAGIC 0xf00baba8, little-endian
STALE_SECONDS = 15 * 60  # an unfinished archive older than this was abandoned
_QUIET = ("-Xshare:auto", "-Xlog:cds=off", "-Xlog:cds+dynamic=off")
# The optimising compiler (C2) waits for ten times its default counts: the driver's own code
# (SQL parser, planner, code generator, closure cleaner) runs warm, not hot, and compiling it
# took 6 s of CPU per audit beside the tasks; the scan's loops run millions of times and still
# reach C2 at once. Measured on 10,000,000 Parquet plays, idle: C2 CPU 6.1 s -> 3.0 s, local[2]
# 16.0 s -> 14.7 s, local[1] 20.1 s -> 19.7 s, the tasks' own CPU unchanged.
LUKEWARM = (
    "-XX:Tier4InvocationThreshold=50000",
    "-XX:Tier4MinInvocationThreshold=6000",
    "-XX:Tier4CompileThreshold=60000",
    "-XX:Tier4BackEdgeThreshold=400000",
)
_PREFIX = "spark-classes-"


@dataclass(frozen=True, slots=True)
class DriverJvm:
    """`spark.driver.extraJavaOptions` for a local driver, and the archive it maps (if any)."""

    options: str
    archive: Path | None = None


def java_executable() -> str | None:
    """The java pyspark launches: `$JAVA_HOME/bin/java`, else java on PATH."""
    if "JAVA_HOME" in os.environ:
        candidate = os.path.join(os.environ["JAVA_HOME"], "bin", "java")
        return candidate if os.path.exists(candidate) else None
    return shutil.which("java")


def _key() -> str | None:
    """One archive per pyspark and Java installation: the JVM checks the class path and the
    JDK itself, and maps nothing that does not match."""
    java = java_executable()
    if java is None:
        return None
    try:
        import pyspark

        jars = Path(pyspark.__file__).parent / "jars"
        real = os.path.realpath(java)
        found = os.stat(real)
        identity = [pyspark.__version__, str(jars), str(os.stat(jars).st_mtime_ns)]
        identity += [real, str(found.st_size), str(found.st_mtime_ns)]
    except (ImportError, OSError):
        return None
    return hashlib.sha256("\n".join(identity).encode()).hexdigest()[:16]


def _whole(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return handle.read(4) == MAGIC
    except OSError:
        return False


def _digest(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _intact(final: Path) -> bool:
    """The archive holds the bytes it held when it was promoted, whole (its SHA-256 beside it)."""
    try:
        recorded = final.with_suffix(".sha256").read_text(encoding="ascii").strip()
        return _digest(final) == recorded
    except OSError:
        return False


def _promote(part: Path, final: Path) -> None:
    final.with_suffix(".sha256").write_text(_digest(part) + "\n", encoding="ascii")
    os.replace(part, final)


def _settle(folder: Path, key: str) -> tuple[Path | None, bool]:
    """The intact archive for this key (promoting a finished one), and whether one is being
    written now. Spare, abandoned and damaged pieces are removed."""
    final = folder / f"{_PREFIX}{key}.jsa"
    intact = _intact(final)
    writing = False
    for part in sorted(folder.glob(f"{_PREFIX}{key}.*.part")):
        try:
            if _whole(part):
                if intact:
                    part.unlink()  # two first runs each wrote one
                else:
                    _promote(part, final)
                    intact = True
            elif time.time() - part.stat().st_mtime > STALE_SECONDS:
                part.unlink()
            else:
                writing = True
        except OSError:
            continue
    if intact:
        return final, False
    try:  # a damaged archive, or none
        final.unlink(missing_ok=True)
        final.with_suffix(".sha256").unlink(missing_ok=True)
    except OSError:
        return None, True  # cannot clear it: make no archive beside it
    return None, writing


def driver_jvm(class_archive: bool = True) -> DriverJvm:
    """The options for a local driver: the log configuration, the JIT's thresholds, and the
    class-data archive (mapped when there is a whole one, else written at exit when none is
    being written)."""
    base = " ".join((f"-Dlog4j2.configurationFile={LOG_CONFIG.as_uri()}", *LUKEWARM))
    key = _key() if class_archive else None
    if key is None:
        return DriverJvm(base)
    folder = user_cache_dir()
    if any(c.isspace() or c in "\"'\\" for c in str(folder)):
        return DriverJvm(base)  # the options are split on spaces: keep to plain paths
    try:
        folder.mkdir(parents=True, exist_ok=True)
        archive, writing = _settle(folder, key)
    except OSError:
        return DriverJvm(base)
    if archive is not None:
        mapped = (f"-XX:SharedArchiveFile={archive}", f"-XX:ErrorFile={folder}/hs_err_pid%p.log")
        return DriverJvm(" ".join((base, *mapped, *_QUIET)), archive)
    if writing or not os.access(folder, os.W_OK):
        return DriverJvm(base)
    part = folder / f"{_PREFIX}{key}.{uuid.uuid4().hex}.part"
    return DriverJvm(" ".join((base, f"-XX:ArchiveClassesAtExit={part}", *_QUIET)))


def drop_archive(archive: Path) -> None:
    """Remove an archive the JVM could not start with."""
    with contextlib.suppress(OSError):
        archive.unlink()
        archive.with_suffix(".sha256").unlink()
