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
    # The slow path's parse of a text INSTANT matched (None: `try_cast(x AS instant)`).
    parse_slow: Callable[[str], str] | None = None
    instr: Callable[[str, str], str] = lambda text, part: f"instr({text}, {part})"
    to_text: Callable[[str], str] = lambda x: f"try_cast({x} AS STRING)"
    collate: str = ""  # after a text the violations are ordered by: code point order
    fence: Callable[[str], str] = lambda step: ""  # after a step's columns (POSTGRES)


def spark_literal(text: str) -> str:
    """A Spark SQL string literal: backslashes and quotes are escapes there."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


_END = "\\z"


def _rlike(x: str, regex: str) -> str:
    return f"{x} RLIKE {spark_literal('^(?:' + regex + ')' + _END)}"


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


def _pg_int(x: str, start: int, size: int) -> str:
    return f"CAST(substr({x}, {start}, {size}) AS INTEGER)"


def _pg_epoch_us(x: str, fraction_us: str, offset_s: str) -> str:
    """Microseconds since the epoch of a text whose first 19 characters are
    `YYYY-MM-DDTHH:MM:SS` in digits, NULL when the date or the time is not one (30 February,
    hour 24, second 60), computed in integers: PostgreSQL's own parse raises an error (no
    try_cast) and knows no year 0, which DuckDB and Spark read as 1 BC (proleptic Gregorian).
    The day number is the Julian day's (Fliegel and Van Flandern), positive from year 0 on."""
    y, m, d = _pg_int(x, 1, 4), _pg_int(x, 6, 2), _pg_int(x, 9, 2)
    h, mi, s = _pg_int(x, 12, 2), _pg_int(x, 15, 2), _pg_int(x, 18, 2)
    a = f"((14 - {m}) / 12)"
    yy, mm = f"({y} + 4800 - {a})", f"({m} + 12 * {a} - 3)"
    days = (
        f"({d} + (153 * {mm} + 2) / 5 + 365 * {yy} + {yy} / 4 - {yy} / 100 + {yy} / 400 - 2472633)"
    )
    leap = f"CASE WHEN {_pg_leap(y)} THEN 1 ELSE 0 END"
    month_days = f"CASE WHEN {m} = 2 THEN 28 + {leap} ELSE 30 + ({m} + {m} / 8) % 2 END"
    return (
        f"CASE WHEN {m} BETWEEN 1 AND 12 AND {d} >= 1 AND ({d} <= 28 OR {d} <= {month_days}) "
        f"AND {h} < 24 AND {mi} < 60 AND {s} < 60 THEN "
        f"(CAST({days} AS BIGINT) * 86400 + {h} * 3600 + {mi} * 60 + {s} - {offset_s}) "
        f"* 1000000 + {fraction_us} END"
    )


def _pg_instant(us: str) -> str:
    """A TIMESTAMPTZ from microseconds since the epoch, exactly (each factor below 2**53)."""
    return (
        f"(TIMESTAMPTZ 'epoch' + ({us}) / 1000000 * INTERVAL '1 second' "
        f"+ ({us}) % 1000000 * INTERVAL '1 microsecond')"
    )


def _pg_fast(x: str) -> str:
    """The exact form `2026-11-20T10:00:01.250Z`, its digits checked by `fast_shape`: the
    server's own cast, once the text comparisons below say it cannot fail (a real month and
    day, hour, minute and second in range; year 0, which the server refuses, takes the slow
    path). Text comparisons and the one cast cost a third of the integer parse."""

    def part(start: int, size: int) -> str:
        return f'substr({x}, {start}, {size}) COLLATE "C"'

    month, day = part(6, 2), part(9, 2)
    leap = _pg_leap(_pg_int(x, 1, 4))
    last = (
        f"CASE WHEN {month} IN ('04', '06', '09', '11') THEN '30' WHEN {month} <> '02' THEN '31' "
        f"WHEN {leap} THEN '29' ELSE '28' END"
    )
    return (
        f"CASE WHEN {month} BETWEEN '01' AND '12' AND {day} >= '01' "
        f"AND ({day} <= '28' OR {day} <= {last}) AND {part(12, 2)} < '24' "
        f"AND {part(15, 2)} < '60' AND {part(18, 2)} < '60' AND {part(1, 4)} <> '0000' "
        f"THEN CAST({x} AS TIMESTAMPTZ) END"
    )


def _pg_leap(y: str) -> str:
    return f"({y} % 4 = 0 AND ({y} % 100 <> 0 OR {y} % 400 = 0))"


def _pg_slow(x: str) -> str:
    """Any text INSTANT matched: the fraction's first six digits (DuckDB and Spark cut the
    rest), and the offset, read from the end (`Z` or `+HH:MM`)."""
    fraction = f"regexp_replace({x}, '^.{{19}}(?:[.]([0-9]{{1,9}}))?.*$', '\\1')"
    us = f"CAST(rpad(left({fraction}, 6), 6, '0') AS INTEGER)"
    sign = f"CASE WHEN substr({x}, length({x}) - 5, 1) = '-' THEN -1 ELSE 1 END"
    minutes = f"{_pg_int(f'right({x}, 5)', 1, 2)} * 60 + {_pg_int(f'right({x}, 5)', 4, 2)}"
    offset = f"CASE WHEN right({x}, 1) = 'Z' THEN 0 ELSE {sign} * ({minutes}) * 60 END"
    return _pg_instant(_pg_epoch_us(x, us, offset))


_PG_PARAMS = {"since_us": 1, "now_us": 2}
# The audit inside a PostgreSQL server (engines/postgres.py), which has no try_cast: no value may
# raise an error, so the server's cast reads only a text checked first to be a real instant
# (`_pg_fast`), and any other text INSTANT matched is read in integer arithmetic (`_pg_slow`);
# the instants are TIMESTAMPTZ, and so are the window's edges, bound as parameters. Each step
# ends in a one-row set-returning column (`fence`): the planner would otherwise inline a step into
# the next and compute it again at each mention (`enriched_us` inside every branch of `timing`'s
# CASE); a step so kept is still run by parallel workers (OFFSET 0 would keep it in the leader,
# and a volatile column, though cheaper, makes the server materialise the step, in the leader).
POSTGRES = Dialect(
    name="postgres",
    materialized="AS NOT MATERIALIZED",
    epoch_us=lambda x: x,  # the parses below give TIMESTAMPTZ
    parse_fast=_pg_fast,
    # Exactly 24 bytes, digits where the form has digits (LIKE first: it costs nothing).
    fast_shape=lambda x: (
        f"{x} LIKE '____-__-__T__:__:__.___Z' AND octet_length({x}) = 24 "
        f"AND translate({x}, '0123456789', '') = '--T::.Z'"
    ),
    full_match=lambda x, regex: f"{x} ~ '^(?:{regex})$'",
    param=lambda name: f"CAST(${_PG_PARAMS[name]} AS TIMESTAMPTZ)",
    instant="TIMESTAMPTZ",
    hex_to_int=lambda x: f"CAST(CAST('x' || {x} AS BIT(32)) AS BIGINT)",
    parse_slow=_pg_slow,
    instr=lambda text, part: f"strpos({text}, {part})",
    to_text=lambda x: f"CAST({x} AS TEXT)",
    collate=' COLLATE "C"',
    fence=lambda step: f", generate_series(1, 1) AS {step}_once",
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
    listed = d.instr("z.state", "'|' || p.state || '|'")
    other = f"{listed} = 0" if prefix else "z.state <> p.state"
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


# The common form, `2026-11-20T10:00:01.250Z`, takes a faster path first (the regex is the
# costliest part of the parse: docs/benchmarks.md): a parse with exactly that format. A parse alone
# is lenient about leading blanks and field widths (`2026-1-2T1:0:0.000Z`), so it is asked only
# of strings of the form's length that start with a digit and end in `Z`, as the engine's
# parser needs (`Dialect.fast_shape`):
# - DuckDB's strptime skips leading and trailing blanks, reads 1 to 4 digits for %Y, 1 to 3 for
#   %g and 1 or 2 for the others, and matches each literal exactly (case included): so a
#   string of 24 bytes (as long as the form, whose 24 characters are ASCII) that starts with a
#   digit (no blank, no `infinity`/`epoch`) and ends in `Z` (no trailing blank) is accepted only
#   when every field has its full width: exactly the form. The check reads the string's size and
#   its first and last bytes (cheaper than counting characters and taking substrings).
# - Spark's formatter ignores case and is lenient otherwise, and java.time's parse is a large
#   part of the tasks' time (docs/benchmarks.md). There the exact form is
#   checked with a regex (`EXACT_FORM`, which admits only texts INSTANT admits) and cast as the
#   slow path casts: the fast path gives what the slow one gives, only sooner (the regex is
#   cheaper there than DuckDB's character checks would be).
# Anything else, or what the parse refuses (hour 24, second 60, 30 February), goes to the regex
# and the cast.
def _audit_sql(d: Dialect, prefix: bool = False) -> str:
    m, f = d.materialized, d.fence
    slow = (d.parse_slow or (lambda x: f"try_cast({x} AS {d.instant})"))("enriched_at")
    return f"""
parsed {m} (
  SELECT *,
    coalesce(
      CASE WHEN {d.fast_shape("enriched_at")}
           THEN {d.epoch_us(d.parse_fast("enriched_at"))} END,
      CASE WHEN {d.full_match("enriched_at", INSTANT)}
           THEN {d.epoch_us(slow)} END
    ) AS enriched_us{f("parsed")}
  FROM plays
), timed {m} (
  SELECT *, {_timing(d)} AS timing{f("timed")}
  FROM parsed
), zoned {m} (
  SELECT p.*, {_zip_check(d, prefix)} AS zip_check{f("zoned")}
  FROM timed p LEFT JOIN zips z ON z.zip = p.zip
), classified {m} (
  SELECT p.line, p.play_id, p.partner, p.state, p.zip, p.enriched_at, p.raw,
         p.timing = {TIMING["window"]} AS in_window,
         p.timing = {TIMING["not-enriched"]} AS not_enriched,
         {_reason_case()} AS reason{f("classified")}
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
_BY_REASON = ", ".join(
    f"coalesce(sum(n) FILTER (WHERE reason = {code(m.name)}), 0)" for m in Violation
)
_TOTALS = f"""coalesce(sum(n), 0) AS total,
       coalesce(sum(n) FILTER (WHERE in_window), 0) AS in_window,
       coalesce(sum(n) FILTER (WHERE not_enriched), 0) AS not_enriched,
       {_BY_REASON}"""
TOTALS_SQL = f"""
SELECT {_TOTALS}
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


def violation_order(dialect: Dialect) -> str:
    """The same order as ViolatingPlay.sort_key: text by code point (DuckDB and Spark do; a
    PostgreSQL database's collation may not, so its dialect names "C"); the engines' defaults
    for NULLs differ, so it is spelled out, though no key can be NULL."""
    keys = (
        k if k.startswith(("reason", "coalesce(line")) else k + dialect.collate for k in _ORDER_KEYS
    )
    return "\nORDER BY " + ", ".join(f"{k} ASC NULLS LAST" for k in keys) + "\n"


VIOLATION_ORDER = violation_order(DUCKDB)  # DuckDB's and Spark's spelling

# Every violating play with its reason named, one row per play: what --violations-out writes.
VIOLATIONS_OUT_SQL = f"""
SELECT CASE reason {" ".join(f"WHEN {code(m.name)} THEN '{m.value}'" for m in Violation)} END
         AS reason, play_id, line, partner, state, zip, enriched_at, raw
FROM {GROUPS} g JOIN {COPIES} c ON c.k <= g.n
WHERE reason IS NOT NULL
"""
# The largest number of plays in one group: the size `COPIES` needs.
LARGEST_GROUP_SQL = f"SELECT coalesce(max(n), 0) FROM {GROUPS} WHERE reason IS NOT NULL"


def _row_text(dialect: Dialect) -> str:
    """The fields of a violating play that every engine reads alike (not `line`, not `raw`)."""
    return " || chr(31) || ".join(
        [dialect.to_text("reason")]
        + [f"coalesce({c}, '')" for c in ("play_id", "partner", "state", "zip", "enriched_at")]
    )


def _hashed(dialect: Dialect) -> str:
    """A violating play's part of the digest: the first 32 bits of its fields' MD5."""
    return dialect.hex_to_int(f"substr(md5({_row_text(dialect)}), 1, 8)")


def digest_sql(dialect: Dialect) -> str:
    """The violations' digest: how many, and the sum of the first 32 bits of each one's MD5.

    Order-free, so the engine computes it where the groups are, without sorting or collecting.
    """
    return (
        f"SELECT coalesce(sum(n), 0), coalesce(sum({_hashed(dialect)} * n), 0) FROM {GROUPS} "
        "WHERE reason IS NOT NULL"
    )


def totals_and_digest_sql(dialect: Dialect) -> str:
    """TOTALS_SQL's counts and digest_sql's two sums in one row, from the plays grouped by
    their flags and reason alone (a few groups, each with its violating plays' sum of hashes):
    what an engine that cannot keep the groups asks first (engines/postgres.py)."""
    hashed = f"sum({_hashed(dialect)}) FILTER (WHERE reason IS NOT NULL)"
    return f"""
SELECT {_TOTALS},
       coalesce(sum(n) FILTER (WHERE reason IS NOT NULL), 0), coalesce(sum(hashes), 0)
FROM (
  SELECT in_window, not_enriched, reason, count(*) AS n, {hashed} AS hashes
  FROM classified GROUP BY in_window, not_enriched, reason
) {GROUPS}
"""


def audit_query(
    dialect: Dialect,
    plays: str,
    final: str = COUNTS_SQL,
    prefix: bool = False,
    relations: str = "",
) -> str:
    """The audit in one dialect, `plays` bound to a SELECT (inlined, so it is scanned once);
    with `prefix`, the `zip` column holds 3-digit ZIP prefixes (`_zip_check`). `relations`,
    when given, defines `zips`, `states` and `licences` in the statement itself (`name AS
    (...), ` each), for an engine that cannot create them (PostgreSQL's read-only transaction)."""
    return (
        f"WITH {relations}plays {dialect.materialized} ({plays}),\n"
        f"{_audit_sql(dialect, prefix)}\n{final}"
    )
