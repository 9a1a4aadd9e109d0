"""A play's timing (audit/sql.py `_timing`) is decided in one CASE on `enriched_us`; before, a
`windowed` step computed `in_window` and the CASE read it and `nullif(enriched_at, '')`. The
one CASE is cheaper (0.1 s of CPU on 10,000,000 plays); this pins it to the former spelling on
every combination of `malformed` (NULL included) and `enriched_at` around the window's edges.
"""

from __future__ import annotations

import itertools

import duckdb

from compliance_bake.audit.sql import DUCKDB, audit_query

SINCE_US = 1_787_544_360_000_000  # 2026-08-24T04:06:00Z
NOW_US = 1_795_320_360_000_000  # 2026-11-22T04:06:00Z
TEXTS = (
    None,
    "",
    "not a time",
    "2026-11-20T24:00:00.000Z",  # hour 24: malformed
    "2026-08-24T04:05:59.999Z",  # just before the window
    "2026-08-24T04:06:00.000Z",  # its first instant
    "2026-08-24T04:06:00.001Z",
    "2026-10-01T00:00:00.000Z",
    "2026-11-22T04:05:59.999Z",
    "2026-11-22T04:06:00.000Z",  # its last instant
    "2026-11-22T05:06:00+01:00",  # the same, with an offset (the regex path)
    "2026-11-22T04:06:00.000001Z",  # a microsecond after it: in the future
    "2026-11-22T04:06:00.001Z",
    "1970-01-01T00:00:00Z",
    "9999-12-31T23:59:59.999Z",
)
# The former spelling, on top of the audit's own `parsed` step.
FORMER = """
SELECT malformed, enriched_at, CASE
    WHEN malformed THEN 1
    WHEN enriched_text IS NOT NULL AND enriched_us IS NULL THEN 2
    WHEN enriched_us > $now_us THEN 3
    WHEN in_window THEN 4
    WHEN enriched_text IS NULL THEN 5
    ELSE 0
  END AS timing
FROM (
  SELECT *, nullif(enriched_at, '') AS enriched_text,
         coalesce(NOT malformed AND enriched_us BETWEEN $since_us AND $now_us, false) AS in_window
  FROM parsed
)
"""


def test_the_timing_is_the_former_spellings_on_every_edge() -> None:
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    cases = list(itertools.product((True, False, None), TEXTS))
    con.execute(
        "CREATE TABLE cases AS SELECT unnest($1::BOOLEAN[]) AS malformed, "
        "unnest($2::VARCHAR[]) AS enriched_at",
        [[m for m, _ in cases], [t for _, t in cases]],
    )
    plays = "SELECT malformed, enriched_at FROM cases"
    params = {"since_us": SINCE_US, "now_us": NOW_US}
    now = audit_query(DUCKDB, plays, "SELECT malformed, enriched_at, timing FROM timed")
    former = audit_query(DUCKDB, plays, FORMER)
    got = sorted(con.execute(now, params).fetchall(), key=repr)
    want = sorted(con.execute(former, params).fetchall(), key=repr)
    assert len(got) == len(cases)
    assert got == want
    # Every timing is reached, so the comparison is not vacuous.
    assert {row[2] for row in got} == {0, 1, 2, 3, 4, 5}
