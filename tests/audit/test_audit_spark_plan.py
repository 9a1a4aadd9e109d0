"""The audit's plan on Spark: the reference relations are broadcast, the plays never shuffled.

A frame made from local rows has no size the planner can use, so without a broadcast mark every
join is a sort-merge join that shuffles all the plays, and the joins on `state` put the plays of
one state in one task whatever the number of cores: the audit would not scale out. These tests
read the physical plan of the real counts query on the run's shared local[1] session.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from compliance_bake.audit.engines.interface import EngineOptions
from compliance_bake.audit.engines.spark import PLAYS_VIEW, SparkEngine
from compliance_bake.audit.relations import reference_relations
from compliance_bake.audit.sql import COUNTS_SQL, SPARK, audit_query
from compliance_bake.inputs.fixtures import load_fixtures
from compliance_bake.resources import demo_fixtures_dir
from tests._plays_helpers import play, write_plays
from tests.conftest import NOW, run_cli

pytestmark = pytest.mark.spark

WINDOW = {"since_us": 0, "now_us": 1}


def _plan(engine: SparkEngine, capsys: pytest.CaptureFixture[str]) -> str:
    query = audit_query(SPARK, f"SELECT * FROM {PLAYS_VIEW}", COUNTS_SQL)
    capsys.readouterr()
    engine.spark.sql(query, args=WINDOW).explain(mode="simple")
    return capsys.readouterr().out


def _engine(tmp_path: Path) -> SparkEngine:
    plays = write_plays(tmp_path, [play("p-1")], "parquet")
    engine = SparkEngine.open(EngineOptions("spark", "local[1]"))
    engine.make_plays(str(plays))
    return engine


def test_every_join_of_the_audit_is_a_broadcast_join(
    tmp_path: Path, spark_session: object, capsys: pytest.CaptureFixture[str]
) -> None:
    engine = _engine(tmp_path)
    try:
        engine.load_relations(reference_relations(load_fixtures(demo_fixtures_dir()).registry))
        plan = _plan(engine, capsys)
    finally:
        engine.close()
    assert plan.count("BroadcastHashJoin") == 3, plan
    assert "SortMergeJoin" not in plan, plan


def test_without_the_broadcast_mark_the_plan_shuffles_the_plays(
    tmp_path: Path, spark_session: object, capsys: pytest.CaptureFixture[str]
) -> None:
    """The check above can fail: the same views made without the mark give sort-merge joins."""
    spark: Any = spark_session
    engine = _engine(tmp_path)
    try:
        engine.load_relations(reference_relations(load_fixtures(demo_fixtures_dir()).registry))
        for view in ("zips", "states", "licences"):
            rows = [tuple(r) for r in spark.table(view).collect()]
            spark.createDataFrame(rows, spark.table(view).schema).createOrReplaceTempView(view)
        plan = _plan(engine, capsys)
    finally:
        engine.close()
    assert "SortMergeJoin" in plan, plan


def test_a_local_spark_audit_keeps_stderr_to_its_own_lines(tmp_path: Path) -> None:
    """The real CLI in a process of its own (its own JVM): Spark's banner and start-up warnings
    stay out of stderr; a --spark-conf spark.driver.extraJavaOptions of the user's brings
    Spark's default logging back (the same check, seen to fail)."""
    from tests._spark_helpers import why_no_spark

    reason = why_no_spark()
    if reason:
        pytest.skip(reason)
    noise = ("log4j", "Setting default log level", "NativeCodeLoader")
    base = ("audit", "deep", "--plays", str(demo_fixtures_dir() / "plays.csv"), "--now", NOW)
    spark = ("--engine", "spark", "--spark-master", "local[1]")
    # A cache folder of its own: whatever the JVM might leave in the user's cache stays here.
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    quiet = run_cli(*base, "--out", str(tmp_path / "a"), *spark, env=env, timeout=900)
    assert quiet.returncode == 0, quiet.stderr
    assert not [line for line in quiet.stderr.splitlines() if any(n in line for n in noise)]
    own = run_cli(
        *base, "--out", str(tmp_path / "b"), *spark,
        "--spark-conf", "spark.driver.extraJavaOptions=-Dcompliance.bake.test=1", env=env,
        timeout=900,
    )  # fmt: skip
    assert own.returncode == 0, own.stderr
    assert [line for line in own.stderr.splitlines() if any(n in line for n in noise)]
