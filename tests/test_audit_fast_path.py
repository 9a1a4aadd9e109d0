"""The fast path of the `enriched_at` parse (audit/sql.py) is only a shortcut: on DuckDB, for
every text, the audit's instant is the one the strict regex and the cast give alone.

The texts are the exact form and derandomised mutations of it (a character replaced, inserted
or deleted, from an alphabet of digits, blanks, separators, other letters' cases and a
non-ASCII letter), plus the near misses the shape check was written against.
"""

from __future__ import annotations

import random

import duckdb

from compliance_bake.audit.sql import DUCKDB, INSTANT, audit_query

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
