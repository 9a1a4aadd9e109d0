"""The local Spark driver's class-data archive: made once, checked before each use, never trusted
blind. The first tests pin the choice of JVM options on files made here (no JVM); the last runs
real JVMs through the CLI and the engine, in processes of their own, on a cache folder of its
own: the archive is written at exit, mapped by the next run (read from /proc), and a damaged one
is removed without changing a count."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from compliance_bake.audit.engines import spark_jvm
from compliance_bake.resources import demo_fixtures_dir
from tests.conftest import run_cli

KEY = "0123456789abcdef"
NOW = "2026-11-22T04:06:00Z"
JVM_SECONDS = 900  # a JVM that writes a 180 MB archive on a loaded machine takes minutes


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr(spark_jvm, "_key", lambda: KEY)
    return tmp_path / "xdg" / "compliance-bake"


def _archive_bytes(size: int = 4096) -> bytes:
    return spark_jvm.MAGIC + os.urandom(size - 4)


def _part(cache: Path, data: bytes, age: float = 0.0) -> Path:
    cache.mkdir(parents=True, exist_ok=True)
    part = cache / f"spark-classes-{KEY}.{os.urandom(4).hex()}.part"
    part.write_bytes(data)
    if age:
        os.utime(part, (time.time() - age, time.time() - age))
    return part


def _final(cache: Path) -> Path:
    return cache / f"spark-classes-{KEY}.jsa"


def test_with_no_archive_the_jvm_is_asked_to_write_one_at_exit(cache: Path) -> None:
    jvm = spark_jvm.driver_jvm()
    assert jvm.archive is None
    assert f"-Dlog4j2.configurationFile={spark_jvm.LOG_CONFIG.as_uri()}" in jvm.options
    assert f"-XX:ArchiveClassesAtExit={cache}/spark-classes-{KEY}." in jvm.options
    assert "SharedArchiveFile" not in jvm.options
    assert "-Xlog:cds=off" in jvm.options


def test_a_finished_archive_is_promoted_with_its_hash_and_mapped(cache: Path) -> None:
    data = _archive_bytes()
    part = _part(cache, data)
    jvm = spark_jvm.driver_jvm()
    final = _final(cache)
    assert jvm.archive == final
    assert f"-XX:SharedArchiveFile={final}" in jvm.options
    assert "ArchiveClassesAtExit" not in jvm.options
    assert not part.exists() and final.read_bytes() == data
    recorded = final.with_suffix(".sha256").read_text().strip()
    assert recorded == hashlib.sha256(data).hexdigest()


def test_a_second_finished_archive_is_removed(cache: Path) -> None:
    _part(cache, _archive_bytes())
    assert spark_jvm.driver_jvm().archive == _final(cache)
    spare = _part(cache, _archive_bytes())
    assert spark_jvm.driver_jvm().archive == _final(cache)
    assert not spare.exists()


def test_an_archive_changed_since_promotion_is_removed_not_mapped(cache: Path) -> None:
    _part(cache, _archive_bytes())
    final = spark_jvm.driver_jvm().archive
    assert final is not None
    damaged = bytearray(final.read_bytes())
    damaged[2000] ^= 0xFF  # the magic still there: only the hash can tell
    final.write_bytes(bytes(damaged))
    jvm = spark_jvm.driver_jvm()
    assert jvm.archive is None and "SharedArchiveFile" not in jvm.options
    assert not final.exists() and not final.with_suffix(".sha256").exists()
    assert "ArchiveClassesAtExit" in jvm.options  # a new one is made at exit


def test_an_unfinished_archive_blocks_a_second_writer_until_it_is_stale(cache: Path) -> None:
    young = _part(cache, bytes(4096))  # no magic: the header is written last
    jvm = spark_jvm.driver_jvm()
    assert "ArchiveClassesAtExit" not in jvm.options and "SharedArchiveFile" not in jvm.options
    assert young.exists()
    os.utime(young, (time.time() - 2 * spark_jvm.STALE_SECONDS,) * 2)
    jvm = spark_jvm.driver_jvm()
    assert not young.exists() and "ArchiveClassesAtExit" in jvm.options


@pytest.mark.parametrize("where", ["a file", "a space"])
def test_an_unusable_cache_folder_leaves_only_the_log_configuration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    monkeypatch.setattr(spark_jvm, "_key", lambda: KEY)
    base = tmp_path / ("cache file" if where == "a space" else "cache-file")
    if where == "a file":
        base.write_text("not a folder")
    monkeypatch.setenv("XDG_CACHE_HOME", str(base))
    jvm = spark_jvm.driver_jvm()
    assert jvm.archive is None
    assert jvm.options.split() == [
        f"-Dlog4j2.configurationFile={spark_jvm.LOG_CONFIG.as_uri()}",
        *spark_jvm.LUKEWARM,
    ]


def test_no_archive_when_asked_for_none(cache: Path) -> None:
    _part(cache, _archive_bytes())
    jvm = spark_jvm.driver_jvm(class_archive=False)
    assert jvm.archive is None and "Archive" not in jvm.options


PROBE = """
import json, os, sys
from compliance_bake.audit.engines.interface import EngineOptions
from compliance_bake.audit.engines.spark import SparkEngine
from compliance_bake.audit.zip_window import run_zip_window
from compliance_bake.clock import parse_instant
from compliance_bake.inputs.fixtures import load_fixtures
from compliance_bake.resources import demo_fixtures_dir

engine = SparkEngine.open(EngineOptions("spark", "local[1]"))
java = [p for p in os.listdir("/proc") if p.isdigit() and os.path.exists(f"/proc/{p}/stat")
        and open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()[1] == str(os.getpid())
        and b"java" in open(f"/proc/{p}/cmdline", "rb").read()]
maps = "".join(open(f"/proc/{p}/maps").read() for p in java)
fixtures = demo_fixtures_dir()
audit = run_zip_window(fixtures / "plays.csv", load_fixtures(fixtures).registry,
                       parse_instant(sys.argv[1], source="test"), 90,
                       engine=EngineOptions("spark", "local[1]"))
print(json.dumps({"mapped": "spark-classes-" in maps, "java": len(java),
                  "counts": [audit.total_plays, audit.in_window_plays, audit.violation_count]}))
"""


def _probe(env: dict[str, str], cwd: Path) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, NOW], capture_output=True, text=True, env=env, cwd=cwd,
        timeout=JVM_SECONDS,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["java"] == 1
    return result


def test_a_real_jvm_writes_the_archive_maps_it_next_time_and_survives_damage(
    tmp_path: Path,
) -> None:
    from tests._spark_helpers import why_no_spark

    reason = why_no_spark()
    if reason:
        pytest.skip(reason)
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg"), "PYTHONPATH": os.getcwd()}
    cache = tmp_path / "xdg" / "compliance-bake"
    plays = str(demo_fixtures_dir() / "plays.csv")
    first = run_cli(
        "audit", "deep", "--plays", plays, "--now", NOW, "--engine", "spark",
        "--spark-master", "local[1]", "--json", "--out", str(tmp_path / "out"), env=env,
        cwd=tmp_path, timeout=JVM_SECONDS,
    )  # fmt: skip
    # run_cli returns when the pipes close: after the JVM has written the archive and exited.
    assert first.returncode in (0, 1), first.stderr
    assert not [line for line in first.stderr.splitlines() if "cds" in line.lower()]
    report = json.loads(first.stdout)
    parts = list(cache.glob("spark-classes-*.part"))
    assert len(parts) == 1 and parts[0].read_bytes()[:4] == spark_jvm.MAGIC

    second = _probe(env, tmp_path)
    assert second["mapped"] is True
    archive = next(cache.glob("spark-classes-*.jsa"))
    total, in_window, violations = second["counts"]  # type: ignore[misc]
    window = report["zipWindow"]
    assert (total, in_window, violations) == (
        window["totalPlays"],
        window["inWindowPlays"],
        report["violations"],
    )

    # Damaged where only the hash can tell: removed before the JVM starts, counts unchanged.
    data = bytearray(archive.read_bytes())
    data[len(data) // 2] ^= 0xFF
    archive.write_bytes(bytes(data))
    third = _probe(env, tmp_path)
    assert third["mapped"] is False and third["counts"] == second["counts"]
    assert not archive.exists()

    # Damaged and re-hashed (the hash cannot tell): the JVM cannot start on the truncated
    # archive; the engine removes it and starts once more without it.
    written = next(cache.glob("spark-classes-*.part"))  # the third run wrote a new one at exit
    written.rename(archive)
    truncated = archive.read_bytes()[: 1 << 20]
    archive.write_bytes(truncated)
    archive.with_suffix(".sha256").write_text(hashlib.sha256(truncated).hexdigest())
    fourth = _probe(env, tmp_path)
    assert fourth["mapped"] is False and fourth["counts"] == second["counts"]
    assert not archive.exists()
    assert not list(tmp_path.glob("hs_err*")), "a crash report landed in the working folder"
