"""The ZIP window's SQL, written once for every engine, and the dialect table of its spellings.

`audit_query` classifies every play (`classified`) and ends in `COUNTS_SQL`, the one pass over
the plays: its rows (`GROUPS`) hold the counts and every violating play, and the other queries
here (`TOTALS_SQL`, `VIOLATIONS_SQL`, `digest_sql`, `VIOLATIONS_OUT_SQL`) read only them.
It names only the relations `plays(line, play_id, partner, state, zip, placed_at, enriched_at,
wager_type, stake, malformed, raw)`, `zips(zip, state)`, `states(state, regulated)` and
`licences(partner, state)` (active licences only), in plain SQL but for the few spellings of
`Dialect`; `audit_query` writes it for one engine. The listed spellings are all that differ:
tests/audit/test_audit_dialects.py parses both with sqlglot and compares the trees.

Two behaviours of the engines differ and are made portable here:
- the fast path is each engine's own (`Dialect.fast_shape` and `parse_fast`, above
  `_audit_sql`): DuckDB parses the exact form with strptime after a cheap shape check; Spark
  checks the exact form with a regex and casts (its formatter ignores case, so `...000z` and
  `...t...` would pass a format there, and java.time's parse cost 40 % of a task's time);
- an offset must lie within +-18:00 (java.time refuses more; DuckDB would accept up to 23:59):
  beyond that the timestamp is malformed on every engine (docs/engines.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from compliance_bake.audit.violations import Violation


@dataclass(frozen=True, slots=True)
class Dialect:
    """How one engine spells the parts of the audit's SQL that are not common to all."""

    name: str
    materialized: str  # how a CTE is declared (DuckDB: inline it, never materialise)
    epoch_us: Callable[[str], str]  # microseconds since the epoch of an instant
    parse_fast: Callable[[str], str]  # `2026-11-20T10:00:01.250Z` exactly, else NULL
    fast_shape: Callable[[str], str]  # when parse_fast's answer is the exact form's (_audit_sql)
    full_match: Callable[[str, str], str]  # the whole text matches the regex (no anchors in it)
    param: Callable[[str], str]  # a named query parameter
    instant: str  # the type of an instant (sqlglot reads both as TIMESTAMPTZ)
    hex_to_int: Callable[[str], str]  # a string of hex digits as a BIGINT (the digest)


def _spark_literal(text: str) -> str:
    """A Spark SQL string literal: backslashes and quotes are escapes there."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


_END = "\\z"


def _rlike(x: str, regex: str) -> str:
    return f"{x} RLIKE {_spark_literal('^(?:' + regex + ')' + _END)}"


DUCKDB = Dialect(
    name="duckdb",
    materialized="AS NOT MATERIALIZED",
    epoch_us=lambda x: f"epoch_us({x})",
    parse_fast=lambda x: f"try_strptime({x}, '%Y-%m-%dT%H:%M:%S.%gZ')",
    fast_shape=lambda x: f"strlen({x}) = 24 AND {x} >= '0' AND {x} < ':' AND suffix({x}, 'Z')",
    full_match=lambda x, regex: f"regexp_full_match({x}, '{regex}')",
    param=lambda name: f"${name}",
    instant="TIMESTAMPTZ",
    hex_to_int=lambda x: f"CAST('0x' || {x} AS BIGINT)",
)
SPARK = Dialect(
    name="spark",
    materialized="AS",
    epoch_us=lambda x: f"unix_micros({x})",
    # The session's time zone is UTC; the regex below admits only texts whose cast is exact.
    parse_fast=lambda x: f"try_cast({x} AS TIMESTAMP)",
    fast_shape=lambda x: _rlike(x, EXACT_FORM),
    # Java's `$` also matches before a final newline: `\z` is the true end of the text.
    full_match=_rlike,
    param=lambda name: f":{name}",
    instant="TIMESTAMP",
    hex_to_int=lambda x: f"CAST(conv({x}, 16, 10) AS BIGINT)",
)

# ISO 8601 date-time with seconds and an offset within +-18:00; an engine's own cast is lenient
# (naive times, dates, `epoch`, hour 24), so the shape is checked first and the cast then checks
# the calendar. No backslash: the regex is written the same in every dialect's string literal.
INSTANT = (
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]([.][0-9]{1,9})?"
    r"(Z|[+-]((0[0-9]|1[0-7]):[0-5][0-9]|18:00))"
)
# The common form exactly (`2026-11-20T10:00:01.250Z`): every text it matches, INSTANT matches.
# Spark's fast path is this regex and the cast INSTANT's path makes too, so it gives what the
# slow path gives, only sooner (tests/audit/test_audit_fast_path.py holds the inclusion).
EXACT_FORM = r"[0-9]{4}-[0-9]{2}-[0-9]{2}T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9][.][0-9]{3}Z"


def code(name: str) -> int:
    """A reason's number in the query: its place in `Violation`, from 1 (integers compare fast)."""
    return list(Violation.__members__).index(name) + 1


# A play's reason is decided from two small numbers and two joins: `timing` (when it was
# enriched) and `zip_check` (its ZIP against the ZIP database), each decided once per play, and
# the `states` and `licences` rows of its state and partner.
TIMING = {"malformed": 1, "malformed-timestamp": 2, "future": 3, "window": 4, "not-enriched": 5}
ZIP_CHECK = {"malformed": 1, "not-real": 2, "other-state": 3}  # 0: a real ZIP of its state


def _timing(d: Dialect) -> str:
    """Of a play with `enriched_us` (NULL when `enriched_at` is empty, absent or malformed).

    One CASE on `enriched_us`, not a separate `in_window` column: one expression per play is the
    cheapest spelling on both engines. `AND NOT malformed` keeps a NULL `malformed` out of the
    window (tests/audit/test_audit_timing.py pins it to that spelling).
    """
    t = TIMING
    return f"""CASE
        WHEN malformed THEN {t["malformed"]}
        WHEN enriched_us IS NULL THEN
          CASE WHEN enriched_at <> '' THEN {t["malformed-timestamp"]} ELSE {t["not-enriched"]} END
        WHEN enriched_us > {d.param("now_us")} THEN {t["future"]}
        WHEN enriched_us >= {d.param("since_us")} AND NOT malformed THEN {t["window"]}
        ELSE 0
      END"""


def _zip_check(d: Dialect, prefix: bool = False) -> str:
    """Of a play `p` joined with its ZIP `z`. With `prefix`, `p.zip` is a 3-digit ZIP prefix
    and `z.state` lists every state with a real ZIP that begins with it, as `|MA|NH|`
    (relations.py): a prefix is real in a state when that state is in the list."""
    k = ZIP_CHECK
    digits = "[0-9]{3}" if prefix else "[0-9]{5}"
    other = "instr(z.state, '|' || p.state || '|') = 0" if prefix else "z.state <> p.state"
    return f"""CASE
        WHEN z.zip IS NULL AND NOT {d.full_match("coalesce(p.zip, '')", digits)}
          THEN {k["malformed"]}
        WHEN z.zip IS NULL THEN {k["not-real"]}
        WHEN {other} THEN {k["other-state"]}
        ELSE 0
      END"""


def _reason_case() -> str:
    """A play's reason (NULL: none) from `p.timing`, `p.zip_check`, `s` and `l`."""
    c, t, k = code, TIMING, ZIP_CHECK
    return f"""CASE
        WHEN p.timing = {t["malformed"]} THEN {c("MALFORMED_ROW")}
        WHEN p.timing = {t["malformed-timestamp"]} THEN {c("MALFORMED_TIMESTAMP")}
        WHEN p.timing = {t["future"]} THEN {c("ENRICHED_IN_FUTURE")}
        WHEN p.zip_check = {k["malformed"]} THEN {c("MALFORMED_ZIP")}
        WHEN s.state IS NULL THEN {c("UNKNOWN_STATE")}
        WHEN p.timing <> {t["window"]} THEN NULL
        WHEN p.zip_check = {k["not-real"]} THEN {c("ZIP_NOT_REAL")}
        WHEN p.zip_check = {k["other-state"]} THEN {c("ZIP_IN_OTHER_STATE")}
        WHEN NOT s.regulated THEN {c("STATE_NOT_REGULATED")}
        WHEN l.partner IS NULL THEN {c("PARTNER_NOT_LICENSED")}
      END"""


_JOINS = """
  LEFT JOIN states s ON s.state = p.state
  LEFT JOIN licences l ON l.partner = p.partner AND l.state = p.state"""


# The common form, `2026-11-20T10:00:01.250Z`, takes a faster path first (the regex costs about
# 1.5 s of CPU on 10,000,000 plays on DuckDB): a parse with exactly that format. A parse alone
# is lenient about leading blanks and field widths (`2026-1-2T1:0:0.000Z`), so it is asked only
# of strings of the form's length that start with a digit and end in `Z`, as the engine's
# parser needs (`Dialect.fast_shape`):
# - DuckDB's strptime skips leading and trailing blanks, reads 1 to 4 digits for %Y, 1 to 3 for
#   %g and 1 or 2 for the others, and matches each literal exactly (case included): so a
#   string of 24 bytes (as long as the form, whose 24 characters are ASCII) that starts with a
#   digit (no blank, no `infinity`/`epoch`) and ends in `Z` (no trailing blank) is accepted only
#   when every field has its full width: exactly the form. The check reads the string's size and
#   its first and last bytes (0.4 s of CPU on 10,000,000 plays; counting characters and taking
#   substrings took 1 s).
# - Spark's formatter ignores case and is lenient otherwise, and java.time's parse took about
#   40 % of the tasks' time (sampled stacks, 10,000,000 Parquet plays). There the exact form is
#   checked with a regex (`EXACT_FORM`, which admits only texts INSTANT admits) and cast as the
#   slow path casts: the fast path gives what the slow one gives, only sooner (4.4 s against
#   2.7 s for the parse of 10,000,000 plays on local[2]; the character checks alone had cost
#   1.7 s there).
# Anything else, or what the parse refuses (hour 24, second 60, 30 February), goes to the regex
# and the cast.
def _audit_sql(d: Dialect, prefix: bool = False) -> str:
    m = d.materialized
    return f"""
parsed {m} (
  SELECT *,
    coalesce(
      CASE WHEN {d.fast_shape("enriched_at")}
           THEN {d.epoch_us(d.parse_fast("enriched_at"))} END,
      CASE WHEN {d.full_match("enriched_at", INSTANT)}
           THEN {d.epoch_us(f"try_cast(enriched_at AS {d.instant})")} END
    ) AS enriched_us
  FROM plays
), timed {m} (
  SELECT *, {_timing(d)} AS timing
  FROM parsed
), zoned {m} (
  SELECT p.*, {_zip_check(d, prefix)} AS zip_check
  FROM timed p LEFT JOIN zips z ON z.zip = p.zip
), classified {m} (
  SELECT p.line, p.play_id, p.partner, p.state, p.zip, p.enriched_at, p.raw,
         p.timing = {TIMING["window"]} AS in_window,
         p.timing = {TIMING["not-enriched"]} AS not_enriched,
         {_reason_case()} AS reason
  FROM zoned p{_JOINS}
)"""


# The one pass over the plays: every play classified once, and grouped. The plays that pass fall
# into a few groups (in window or not, enriched or not); each violating play keeps its fields in
# the group key, so it is a group of its own (identical rows share one, with their number in
# `n`). The engine keeps the result as the relation `GROUPS`; the counts, the violating plays,
# their digest and --violations-out are read from it, never from the plays again. A clean file
# holds no play in it, and the groups are as many as the violating plays, plus three. Grouping
# by the three flags alone, with the violating plays gathered in a list aggregate, is cheaper on
# a clean file, but that list is one value held in memory whole: on a file where every play
# violates it takes longer and twice the memory of these groups, which the engines can spill.
GROUPS = "audit_groups"
# `COPIES(k)`, k = 1 .. the largest `n`: joined on `k <= n`, it gives a group's plays one by one.
COPIES = "audit_copies"
_FIELDS = ("play_id", "line", "partner", "state", "zip", "enriched_at", "raw")
COUNTS_SQL = f"""
SELECT in_window, not_enriched, reason, {", ".join(_FIELDS)}, count(*) AS n
FROM (
  SELECT in_window, not_enriched, reason,
         {", ".join(f"CASE WHEN reason IS NOT NULL THEN {c} END AS {c}" for c in _FIELDS)}
  FROM classified
) kept
GROUP BY in_window, not_enriched, reason, {", ".join(_FIELDS)}
"""
# The counts from the groups: one row (total, in window, not enriched, then one per reason).
TOTALS_SQL = f"""
SELECT coalesce(sum(n), 0) AS total,
       coalesce(sum(n) FILTER (WHERE in_window), 0) AS in_window,
       coalesce(sum(n) FILTER (WHERE not_enriched), 0) AS not_enriched,
       {", ".join(f"coalesce(sum(n) FILTER (WHERE reason = {code(m.name)}), 0)" for m in Violation)}
FROM {GROUPS}
"""
# Every violating play, as a group and its number of plays.
VIOLATIONS_SQL = f"""
SELECT reason, play_id, line, partner, state, zip, enriched_at, raw, n
FROM {GROUPS} WHERE reason IS NOT NULL
"""
_ORDER_KEYS = (
    "reason",
    "coalesce(play_id, '')",
    "coalesce(line, 0)",
    *(f"coalesce({c}, '')" for c in ("partner", "state", "zip", "enriched_at", "raw")),
)
# The same order as ViolatingPlay.sort_key (both engines compare text by code point; the engines'
# defaults for NULLs differ, so it is spelled out, though no key can be NULL).
VIOLATION_ORDER = "\nORDER BY " + ", ".join(f"{k} ASC NULLS LAST" for k in _ORDER_KEYS) + "\n"

# Every violating play with its reason named, one row per play: what --violations-out writes.
VIOLATIONS_OUT_SQL = f"""
SELECT CASE reason {" ".join(f"WHEN {code(m.name)} THEN '{m.value}'" for m in Violation)} END
         AS reason, play_id, line, partner, state, zip, enriched_at, raw
FROM {GROUPS} g JOIN {COPIES} c ON c.k <= g.n
WHERE reason IS NOT NULL
"""
# The largest number of plays in one group: the size `COPIES` needs.
LARGEST_GROUP_SQL = f"SELECT coalesce(max(n), 0) FROM {GROUPS} WHERE reason IS NOT NULL"
# The fields of a violating play that every engine reads alike (not `line`, not `raw`).
_ROW_TEXT = " || chr(31) || ".join(
    ["try_cast(reason AS STRING)"]
    + [f"coalesce({c}, '')" for c in ("play_id", "partner", "state", "zip", "enriched_at")]
)


def digest_sql(dialect: Dialect) -> str:
    """The violations' digest: how many, and the sum of the first 32 bits of each one's MD5.

    Order-free, so the engine computes it where the groups are, without sorting or collecting.
    """
    part = dialect.hex_to_int(f"substr(md5({_ROW_TEXT}), 1, 8)")
    return (
        f"SELECT coalesce(sum(n), 0), coalesce(sum({part} * n), 0) FROM {GROUPS} "
        "WHERE reason IS NOT NULL"
    )


def audit_query(dialect: Dialect, plays: str, final: str = COUNTS_SQL, prefix: bool = False) -> str:
    """The audit in one dialect, `plays` bound to a SELECT (inlined, so it is scanned once);
    with `prefix`, the `zip` column holds 3-digit ZIP prefixes (`_zip_check`)."""
    return f"WITH plays {dialect.materialized} ({plays}),\n{_audit_sql(dialect, prefix)}\n{final}"
