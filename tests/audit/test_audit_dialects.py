"""One SQL source of truth: the DuckDB and Spark spellings of the audit differ only where the
dialect table says. No JVM: sqlglot parses both texts and the two trees are walked side by side.

Where the trees differ, the pair of nodes must be one of the listed spellings (and then their
insides are not compared further, but for the arguments they share); every listed spelling that
changes a tree must be met; everything else must be the same node with the same values.
"""

from __future__ import annotations

from typing import Any

import pytest
import sqlglot
from sqlglot import exp

from compliance_bake.audit.sql import (
    COUNTS_SQL,
    DUCKDB,
    EXACT_FORM,
    SPARK,
    VIOLATION_ORDER,
    VIOLATIONS_OUT_SQL,
    VIOLATIONS_SQL,
    audit_query,
    digest_sql,
)

PLAYS = "SELECT * FROM plays_source"


def _name(node: exp.Expression) -> str:
    if isinstance(node, exp.Anonymous):
        return str(node.this).lower()
    return type(node).__name__


_SHAPES = (
    sqlglot.parse_one(DUCKDB.fast_shape("enriched_at"), read="duckdb"),
    sqlglot.parse_one(SPARK.fast_shape("enriched_at"), read="spark"),
)


def _spelling(duck: exp.Expression, spark: exp.Expression) -> str | None:
    """Which listed spelling a differing pair of nodes is, or None."""
    if (duck, spark) == _SHAPES:
        return "the fast path's shape check"
    pair = (_name(duck), _name(spark))
    if pair == ("epoch_us", "UnixMicros"):
        return "epoch_us -> unix_micros"
    if pair == ("try_strptime", "TryCast"):
        assert duck.expressions[1].this == "%Y-%m-%dT%H:%M:%S.%gZ"
        slow = sqlglot.parse_one(f"try_cast(x AS {SPARK.instant})", read="spark")
        assert spark.to == slow.to  # the slow path's own cast
        return "try_strptime -> try_cast AS TIMESTAMP (after the exact form's regex)"
    if pair == ("RegexpFullMatch", "RegexpLike"):
        regex, anchored = duck.expression.this, spark.expression.this
        assert anchored == "^(?:" + regex + ")\\z", anchored
        return "regexp_full_match -> RLIKE anchored with \\z"
    if pair == ("Cast", "TryCast") and (_name(duck.this), _name(spark.this)) == ("DPipe", "conv"):
        # '0x' || hex cast to BIGINT, against conv(hex, 16, 10) cast to BIGINT.
        assert duck.this.this.this == "0x" and [e.name for e in spark.this.expressions[1:]] == [
            "16",
            "10",
        ]
        _walk(duck.this.expression, spark.this.expressions[0], "hex", set())
        return "hex to BIGINT (digest)"
    return None


def _walk(duck: Any, spark: Any, path: str, met: set[str]) -> None:
    if isinstance(duck, exp.Expression) and isinstance(spark, exp.Expression):
        if isinstance(duck, exp.CTE):
            if duck.args.get("materialized") is False:
                met.add("AS NOT MATERIALIZED dropped")
            assert spark.args.get("materialized") is None, path
        found = _spelling(duck, spark)
        if found is not None:
            met.add(found)
            if found.startswith(("epoch_us", "try_strptime")):
                # The same argument inside: the column, or the cast/parse of it.
                inner_d = duck.expressions[0] if isinstance(duck, exp.Anonymous) else duck.this
                inner_s = spark.this
                _walk(inner_d, inner_s, path + "/arg", met)
            return
        assert type(duck) is type(spark), f"{path}: {_name(duck)} != {_name(spark)}"
        keys = set(duck.args) | set(spark.args)
        for key in sorted(keys - {"materialized"}):
            _walk(duck.args.get(key), spark.args.get(key), f"{path}/{key}", met)
    elif isinstance(duck, list) and isinstance(spark, list):
        assert len(duck) == len(spark), path
        for i, (d, s) in enumerate(zip(duck, spark, strict=True)):
            _walk(d, s, f"{path}[{i}]", met)
    else:
        assert duck == spark, f"{path}: {duck!r} != {spark!r}"


LISTED = {
    "AS NOT MATERIALIZED dropped",
    "the fast path's shape check",
    "epoch_us -> unix_micros",
    "try_strptime -> try_cast AS TIMESTAMP (after the exact form's regex)",
    "regexp_full_match -> RLIKE anchored with \\z",
}


@pytest.mark.parametrize(
    "final",
    [COUNTS_SQL, VIOLATIONS_SQL, VIOLATIONS_SQL + VIOLATION_ORDER + " LIMIT 5", VIOLATIONS_OUT_SQL],
    ids=["counts", "violations", "first-violations", "violations-out"],
)
def test_the_two_spellings_differ_only_in_the_dialect_table(final: str) -> None:
    duck = sqlglot.parse_one(audit_query(DUCKDB, PLAYS, final), read="duckdb")
    spark = sqlglot.parse_one(audit_query(SPARK, PLAYS, final), read="spark")
    met: set[str] = set()
    _walk(duck, spark, "", met)
    assert met == LISTED


def test_the_digest_differs_only_in_its_hex_spelling() -> None:
    duck = sqlglot.parse_one(audit_query(DUCKDB, PLAYS, digest_sql(DUCKDB)), read="duckdb")
    spark = sqlglot.parse_one(audit_query(SPARK, PLAYS, digest_sql(SPARK)), read="spark")
    met: set[str] = set()
    _walk(duck, spark, "", met)
    assert met == LISTED | {"hex to BIGINT (digest)"}


def test_the_walk_catches_a_forked_query() -> None:
    """The check is not vacuous: one changed operator in one spelling fails it."""
    original = audit_query(SPARK, PLAYS)
    forked = original.replace("enriched_us >= ", "enriched_us > ", 1)
    assert forked != original
    duck = sqlglot.parse_one(audit_query(DUCKDB, PLAYS), read="duckdb")
    with pytest.raises(AssertionError):
        _walk(duck, sqlglot.parse_one(forked, read="spark"), "", set())


def test_the_portable_rules_are_in_the_shared_text() -> None:
    for dialect in (DUCKDB, SPARK):
        text = audit_query(dialect, PLAYS)
        assert "18:00" in text and "2[0-3]):[0-5][0-9]))" not in text  # offsets within +-18:00
    # Spark's fast path is the exact form's regex (case included: `T` and `Z`), then the cast.
    spark = audit_query(SPARK, PLAYS)
    assert f"enriched_at RLIKE '^(?:{EXACT_FORM})\\\\z'" in spark
    assert "try_cast(enriched_at AS TIMESTAMP)" in spark
