"""Plays as a Spark DataFrame of the `plays` relation's columns, read as DuckDB reads them.

- CSV: RFC 4180 with quoted newlines (`multiLine`), every value text. A row with the wrong
  column count is kept with `malformed` true and its text in `raw` (Spark's corrupt-record
  column), as DuckDB's rejects table keeps it. A file whose quotes do not pair up ends in an
  unterminated quote, which Spark's reader accepts: its last row is made malformed here.
- JSON Lines: each line read whole and parsed strictly (no single quotes, no NaN); a blank line
  is no row; a line that is not an object with the eight keys, or names a key twice, is
  malformed.
- Parquet: every column cast to text; an instant written as `2026-11-20T10:00:01.000000Z`.
- Every format: a value holding a NUL byte makes its row malformed, as on DuckDB. Bytes that
  are not UTF-8 make a JSON line malformed (as DuckDB's reader rejects it); in a CSV value they
  are read, as DuckDB reads them, but Spark's reader shows them as U+FFFD (docs/engines.md
  lists what still differs: that text, and line numbers).
"""

from __future__ import annotations

from typing import Any

from compliance_bake.audit.plays_source import COLUMNS, FIX_COLUMNS, PlaysFormat, PlaysSpec
from compliance_bake.audit.sql import spark_literal
from compliance_bake.errors import InputError

CORRUPT = "_malformed_record"


def _q(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _paths(spec: PlaysSpec) -> list[str]:
    if spec.remote:
        return [spec.text]
    # Absolute: a Spark Connect server resolves a relative path against its own folder.
    if spec.folder is not None:
        return [str(spec.folder.resolve())]
    return [str(p.resolve()) for p in spec.files]


NUL = "\x00"


def _holding(char: str, columns: tuple[str, ...] = COLUMNS) -> Any:
    """Some value of the row holds the character."""
    from functools import reduce

    from pyspark.sql import functions as F  # noqa: N812

    found = [F.coalesce(_q_col(c).contains(char), F.lit(False)) for c in columns]
    return reduce(lambda a, b: a | b, found)


def _csv(spark: Any, spec: PlaysSpec) -> Any:
    from pyspark.sql import functions as F  # noqa: N812

    schema = ", ".join(f"{_q(c)} STRING" for c in spec.header) + f", {_q(CORRUPT)} STRING"
    unpaired, quoted_newlines = _quotes(spark, spec)
    frame = (
        spark.read.options(
            header="true",
            # Only a file with a quoted line end needs multiLine, which reads each file whole in
            # one task; without, the files split into tasks across the cores.
            multiLine=str(quoted_newlines).lower(),
            mode="PERMISSIVE",
            columnNameOfCorruptRecord=CORRUPT,
            quote='"',
            escape='"',
            encoding="UTF-8",
            enforceSchema="true",
        )
        .schema(schema)
        .csv(_paths(spec))
    )
    frame = frame.withColumn("_file", F.input_file_name()).withColumn(
        "_seq", F.monotonically_increasing_id()
    )
    last = F.lit(False)
    if unpaired:
        from pyspark.sql import Window

        by_file = Window.partitionBy("_file")
        last = F.col("_file").isin(unpaired) & (F.col("_seq") == F.max("_seq").over(by_file))
    # Rejected as DuckDB's reader rejects them: the values are dropped, the text kept.
    bad = F.col(CORRUPT).isNotNull() | last
    present = tuple(spec.columns.present(COLUMNS))
    return frame.select(
        F.lit(None).cast("bigint").alias("line"),
        *[_field(c, s, lambda s: F.when(~bad, _q_col(s))) for c, s in spec.columns.read(COLUMNS)],
        # A row of empty fields holds no play, as on DuckDB.
        (bad | _holding(NUL, present) | F.coalesce(*[_q_col(c) for c in present]).isNull()).alias(
            "malformed"
        ),
        F.when(
            bad, F.coalesce(F.col(CORRUPT), F.concat_ws(",", *[_q_col(c) for c in present]))
        ).alias("raw"),
    )


def _q_col(name: str) -> Any:
    from pyspark.sql import functions as F  # noqa: N812

    return F.col(_q(name))


def _field(name: str, source: str | None, value: Any) -> Any:
    """The plays-relation column `name`, read from `source` (None: absent, a NULL string)."""
    from pyspark.sql import functions as F  # noqa: N812

    if source is None:
        return F.lit(None).cast("string").alias(name)
    return value(source).alias(name)


def _quotes(spark: Any, spec: PlaysSpec) -> tuple[list[str], bool]:
    """One pass over the lines: the files whose count of `"` is odd (each ends inside a quoted
    value), and whether any line holds an odd count (a quoted line end may follow it)."""
    from pyspark.sql import functions as F  # noqa: N812

    lines = spark.read.text(_paths(spec)).withColumn("_file", F.input_file_name())
    # `replace` is a plain substring replacement: a regex replacement cost Spark about 40% of
    # the whole audit's CPU on a 10,000,000-play CSV.
    quotes = F.length("value") - F.length(F.replace("value", F.lit('"'), F.lit("")))
    per_file = lines.groupBy("_file").agg(
        F.sum(quotes).alias("q"), F.max(quotes % 2).alias("odd_line")
    )
    rows = per_file.where("q % 2 = 1 OR odd_line = 1").collect()
    unpaired = [row["_file"] for row in rows if row["q"] % 2 == 1]
    return unpaired, bool(rows)


def _jsonl(spark: Any, spec: PlaysSpec) -> Any:
    from pyspark.sql import functions as F  # noqa: N812

    options = {"allowSingleQuotes": "false", "allowNonNumericNumbers": "false"}
    lines = spark.read.text(_paths(spec)).where("value <> ''")  # a blank line is no row
    parsed = lines.select("value", F.from_json("value", "MAP<STRING,STRING>", options).alias("m"))
    has_all = " AND ".join(
        f"map_contains_key(m, {spark_literal(c)})" for c in spec.columns.present(COLUMNS)
    )
    bad = F.expr(f"m IS NULL OR NOT ({has_all})") | _holding(NUL, ("value",))
    bad = bad | ~F.expr("is_valid_utf8(value)")  # the text reader keeps the bytes as they are
    # a key twice: readers disagree on which value is the play's (the map keeps one of them)
    bad = bad | F.expr(
        "size(json_object_keys(value)) <> size(array_distinct(json_object_keys(value)))"
    )
    return parsed.select(
        F.lit(None).cast("bigint").alias("line"),
        *[
            _field(c, s, lambda s: F.when(~bad, F.col("m").getItem(s)))
            for c, s in spec.columns.read(COLUMNS)
        ],
        bad.alias("malformed"),
        F.when(bad, F.col("value")).alias("raw"),
    )


def _parquet(spark: Any, spec: PlaysSpec) -> Any:
    from pyspark.sql import functions as F  # noqa: N812

    frame = spark.read.parquet(*_paths(spec))
    kinds = dict(frame.dtypes)
    if spec.columns.given:
        spec.columns.missing(f"{spec.text}: the Parquet schema", list(kinds))
    missing = [c for c in spec.columns.required(COLUMNS) if c not in kinds]
    if missing:
        raise InputError(
            f"{spec.text}: the Parquet schema lacks the column"
            f"{'s' if len(missing) > 1 else ''} {', '.join(missing)}",
            FIX_COLUMNS,
        )

    def text(column: str) -> Any:
        if kinds[column] == "timestamp":  # an instant: the text a CSV would hold (UTC)
            return F.date_format(_q_col(column), "yyyy-MM-dd'T'HH:mm:ss.SSSSSS'Z'")
        return _q_col(column).cast("string")

    return frame.select(
        F.lit(None).cast("bigint").alias("line"),
        *[_field(c, s, text) for c, s in spec.columns.read(COLUMNS)],
        F.lit(False).alias("malformed"),
        F.lit(None).cast("string").alias("raw"),
    )


def plays_frame(spark: Any, spec: PlaysSpec) -> Any:
    """The `plays` relation of the source as a DataFrame."""
    if spec.format is PlaysFormat.CSV:
        return _csv(spark, spec)
    if spec.format is PlaysFormat.JSONL:
        return _jsonl(spark, spec)
    return _parquet(spark, spec)
