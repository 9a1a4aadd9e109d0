"""The fast path of the `enriched_at` parse (audit/sql.py) is only a shortcut: on DuckDB and on
Spark, for every text, the audit's instant is the one the strict regex and the cast give alone.

The texts are the exact form and derandomised mutations of it (a character replaced, inserted
or deleted, from an alphabet of digits, blanks, separators, other letters' cases and a
non-ASCII letter), plus the near misses the shape check was written against.
"""

from __future__ import annotations

import random
import re
from typing import Any

import duckdb
import pytest

from compliance_bake.audit.sql import DUCKDB, EXACT_FORM, INSTANT, SPARK, audit_query

FORMS = (
    "2026-11-20T10:00:01.250Z",
    "2024-02-29T23:59:59.999Z",
    "0001-01-01T00:00:00.000Z",
    "9999-12-31T23:59:59.999Z",
)
NEAR = (
    " 026-11-20T10:00:00.000Z",  # a leading blank: strptime skips it
    "2026-1-20T10:00:00.000Z ",  # a trailing blank: strptime skips it too
    "12026-1-20T10:00:00.000Z",  # a five-digit year
    "2026-11-2T10:00:00.0000Z",  # a short day, long milliseconds
    "2026-11-20T10:00:00.00 Z",
    "2026-11-20T10:00:0é.000Z",  # 24 characters, 25 bytes
    "2026-11-20T1é:00:00.00Z",  # 23 characters, 24 bytes
    "2026-11-20T24:00:00.000Z",
    "2026-11-20T10:00:60.000Z",
    "2026-02-30T10:00:00.000Z",
    "2026-11-20t10:00:00.000Z",
    "2026-11-20T10:00:00.000z",
    "infinity0000000000000Z",
    "epoch                  Z",
    "-infinity",
    "",
)
ALPHABET = "0123456789 -T:.Zzt+\t\né"


def _mutations(count: int) -> list[str]:
    rng = random.Random(14)
    texts = []
    for _ in range(count):
        text = list(rng.choice(FORMS))
        for _ in range(rng.randint(1, 3)):
            at, op = rng.randrange(len(text) + 1), rng.random()
            if op < 0.5 and at < len(text):
                text[at] = rng.choice(ALPHABET)
            elif op < 0.75:
                text.insert(at, rng.choice(ALPHABET))
            elif at < len(text):
                del text[at]
        texts.append("".join(text))
    return texts


def test_the_fast_path_gives_what_the_regex_and_the_cast_give() -> None:
    texts = [*FORMS, *NEAR, *_mutations(50_000)]
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.execute("CREATE TABLE texts AS SELECT unnest($1::VARCHAR[]) AS enriched_at", [texts])
    plays = "SELECT false AS malformed, enriched_at FROM texts"
    query = audit_query(DUCKDB, plays, "SELECT enriched_at, enriched_us FROM parsed")
    slow = (
        f"CASE WHEN regexp_full_match(enriched_at, '{INSTANT}') "
        "THEN epoch_us(try_cast(enriched_at AS TIMESTAMPTZ)) END"
    )
    rows = con.execute(
        f"SELECT p.enriched_at, p.enriched_us, {slow} AS slow FROM ({query}) p",
        {"since_us": 0, "now_us": 0},  # the window's, unused here
    ).fetchall()
    assert len(rows) == len(texts)
    differ = [(text, fast, slow) for text, fast, slow in rows if fast != slow]
    assert differ == []
    parsed = {text for text, fast, _ in rows if fast is not None}
    assert set(FORMS) <= parsed  # the forms parse
    assert len(parsed) > 1_000  # and the mutations reach valid instants, not only refusals
    assert parsed.isdisjoint(NEAR[:7])  # no near miss is read as an instant


def test_the_exact_form_admits_only_what_the_strict_regex_admits() -> None:
    """Spark's fast path is EXACT_FORM then the slow path's own cast: it gives what the slow
    path gives only if every text EXACT_FORM matches, INSTANT matches too."""
    texts = [*FORMS, *NEAR, *_mutations(50_000)]
    exact = [t for t in texts if re.fullmatch(EXACT_FORM, t)]
    assert set(FORMS) <= set(exact) and len(exact) > 1_000
    assert [t for t in exact if not re.fullmatch(INSTANT, t)] == []
    for near in (
        "2026-11-20T10:00:00.000z",
        "2026-11-20t10:00:00.000Z",
        "2026-11-20T24:00:00.000Z",
    ):
        assert re.fullmatch(EXACT_FORM, near) is None


EMPTY_RELATIONS = {
    "zips": "CAST(NULL AS STRING) AS zip, CAST(NULL AS STRING) AS state",
    "states": "CAST(NULL AS STRING) AS state, CAST(NULL AS BOOLEAN) AS regulated",
    "licences": "CAST(NULL AS STRING) AS partner, CAST(NULL AS STRING) AS state",
}


def _spark_rows(spark: Any, texts: list[str]) -> list[Any]:
    nulls = ", ".join(
        f"CAST(NULL AS STRING) AS {c}"
        for c in ("play_id", "partner", "state", "zip", "placed_at", "wager_type", "stake", "raw")
    )
    plays = (
        f"SELECT CAST(NULL AS BIGINT) AS line, {nulls}, false AS malformed, enriched_at "
        "FROM fast_path_texts"
    )
    query = audit_query(SPARK, plays, "SELECT enriched_at, enriched_us FROM parsed")
    slow = (
        f"CASE WHEN {SPARK.full_match('enriched_at', INSTANT)} "
        "THEN unix_micros(try_cast(enriched_at AS TIMESTAMP)) END"
    )
    rows: list[Any] = spark.sql(
        f"SELECT p.enriched_at, p.enriched_us, {slow} AS slow FROM ({query}) p",
        args={"since_us": 0, "now_us": 0},
    ).collect()
    return rows


@pytest.mark.spark
def test_on_spark_the_fast_path_gives_what_the_regex_and_the_cast_give(
    spark_session: Any,
) -> None:
    texts = [*FORMS, *NEAR, *_mutations(5_000)]
    frame = spark_session.createDataFrame([(t,) for t in texts], "enriched_at STRING")
    frame.createOrReplaceTempView("fast_path_texts")
    # Spark resolves every CTE of the query, used or not: the reference relations, empty.
    for view, columns in EMPTY_RELATIONS.items():
        spark_session.sql(f"SELECT {columns} WHERE false").createOrReplaceTempView(view)
    try:
        rows = _spark_rows(spark_session, texts)
    finally:
        for view in ("fast_path_texts", *EMPTY_RELATIONS):
            spark_session.catalog.dropTempView(view)
    assert len(rows) == len(texts)
    assert [tuple(r) for r in rows if r[1] != r[2]] == []
    parsed = {r[0] for r in rows if r[1] is not None}
    assert set(FORMS) <= parsed and len(parsed) > 100
    assert parsed.isdisjoint(NEAR[:7])
    duck = duckdb.connect()
    duck.execute("SET TimeZone = 'UTC'")
    query = audit_query(
        DUCKDB,
        "SELECT false AS malformed, unnest($texts) AS enriched_at",
        "SELECT enriched_at, enriched_us FROM parsed",
    )
    on_duckdb = dict(duck.execute(query, {"texts": texts, "since_us": 0, "now_us": 0}).fetchall())
    assert {r[0]: r[1] for r in rows} == on_duckdb  # the same instants on both engines
