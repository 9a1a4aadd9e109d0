"""`compliance-bake audit deep`."""

from __future__ import annotations

from typing import Any

import click

from compliance_bake.cli.options import (
    audit_engine_options,
    fixtures_option,
    json_option,
    now_option,
    out_option,
    plays_source_options,
    quiet_option,
)
from compliance_bake.cli.reporters import report_option
from compliance_bake.cli.shared import exit_codes, finish

REASONS = """\b
Violation reasons (a play counts under the first that applies):
  malformed-row         wrong column count, a row of empty fields,
                        NUL byte, unterminated quote, bad JSON line
                        (a key twice), a record over 64 MiB
  malformed-timestamp   enriched_at not empty and not ISO 8601 with
                        seconds and Z/offset
  enriched-in-future    enriched_at after now
  malformed-zip         zip not five digits (four: a lost leading zero)
  unknown-state         state not a US jurisdiction code
  zip-not-real          in the window, zip not a real ZIP
  zip-in-other-state    in the window, zip of another state
  state-not-regulated   in the window, state not in licences.json
  partner-not-licensed  in the window, no active licence of the
                        partner in the state"""


FOOTER = exit_codes(
    0, 1, 2, 3, 4, 5, one="done, and a play violates the window", three="a database source failed"
)


@click.group()
def audit() -> None:
    """Audits over play logs.

    \b
    Example:
      compliance-bake audit deep --plays fixtures/plays.csv \\
        --now 2026-11-22T04:06:00Z
    """


@audit.command(
    epilog=REASONS + "\n\n" + FOOTER,
    short_help="The 90-day ZIP window over a plays file.",
)
@click.option(
    "--plays",
    metavar="PATH",
    required=True,
    help="Plays: a .csv, .jsonl/.ndjson or .parquet file with the columns play_id, partner, "
    "state, zip, placed_at, enriched_at, wager_type, stake; - to read standard input (CSV "
    "unless --format says otherwise); sqlite:PATH or postgresql://[user@]host[:port]/db "
    "with --plays-table or --plays-query; with --engine spark also a folder, a glob, a "
    "hive-partitioned Parquet folder, or an s3a://, hdfs://, abfss:// URI.",
)
@click.option(
    "--format",
    "plays_format",
    type=click.Choice(["csv", "jsonl", "parquet"]),
    help="The plays' format, when the file name does not say it (standard input: csv).",
)
@click.option(
    "--days",
    type=click.IntRange(min=1, max=36500),
    default=90,
    show_default=True,
    help="Window length: a play is in the window when now - days <= enriched_at <= now.",
)
@now_option("The audit's clock, the window's end")
@fixtures_option
@out_option("Folder to write the audit report into (OUT/audit/zip-window.json).")
@audit_engine_options
@click.option(
    "--violations-out",
    metavar="DIR",
    help="Also write every violating play as a Parquet dataset into DIR, from the engine itself "
    "(a local folder, or with Spark any URI the cluster can write).",
)
@click.option(
    "--allow-empty-window",
    is_flag=True,
    help="Exit 0 when no play falls in the window (else exit 5: nothing was audited).",
)
@plays_source_options
@json_option
@quiet_option
@report_option
def deep(
    as_json: bool,
    quiet: bool,
    reports: tuple[tuple[str, str], ...],
    **params: Any,
) -> None:
    """The ZIP window: every recent play from a real ZIP of a state where its partner is licensed.

    Runs one SQL query over the plays and the ZIP database, on embedded DuckDB (the default),
    inside the PostgreSQL server that holds the plays (--engine postgres), or on
    Apache Spark (--engine spark: local[N] here, or a cluster through Spark Connect). A play
    is in the window when now - days <= enriched_at <= now (both edges included, offsets
    honoured; placed_at plays no part). Each in-window play must come from a real ZIP of its
    own state, a regulated state, and a partner with an active licence there (licences.json of
    --fixtures).
    Prints counts by reason and the first violations, and writes every violation to
    OUT/audit/zip-window.json (atomically). Past 100,000 violations the report lists the
    first 100,000 and a digest of all; --violations-out DIR writes them all as Parquet.

    When no play falls in the window and none violates it, nothing was audited: the report
    still records the counts, and the run ends with exit 5 unless --allow-empty-window.

    Every record of the file counts in totalPlays: a row the reader cannot take, a record over
    64 MiB included, is a malformed-row violation with its line. --plays - reads standard input
    (copied to a private temporary folder first), so a compressed file can be piped in.

    \b
    Examples:
      compliance-bake audit deep --plays fixtures/plays.csv \\
        --now 2026-11-22T04:06:00Z
      compliance-bake audit deep --plays plays.parquet --days 90 --json
      compliance-bake audit deep --plays plays.jsonl --fixtures my-fixtures \\
        --out out --report junit:reports/audit-junit.xml
      zcat plays.csv.gz | compliance-bake audit deep --plays -
      compliance-bake audit deep --plays 'plays/*.csv' --engine spark \\
        --spark-master 'local[2]'
      compliance-bake audit deep --plays sqlite:plays.db \\
        --plays-table play_zip_enrichment --plays-columns \\
        partner=node_id,state=state_code,zip_prefix=zip_prefix
      compliance-bake audit deep --plays s3a://book/plays/ --engine spark \\
        --spark-master sc://spark.internal:15002 \\
        --violations-out s3a://book/violations/
    """
    from compliance_bake.audit.run import run_audit
    from compliance_bake.cli import reporters
    from compliance_bake.cli.phases import reporting
    from compliance_bake.report.escape import terminal_json

    tables_to_stderr = reporters.check_stdout(reports, as_json)
    # The other options are run_audit's arguments, name for name.
    with reporting("audit", enabled=not (as_json or quiet)) as (progress, phases):
        result = run_audit(progress=progress, phases=phases, **params)
    if as_json:
        click.echo(terminal_json(result.summary()))
    else:
        from compliance_bake.cli import render

        with reporters.human_output(tables_to_stderr):
            render.audit_report(result)
    if reports:  # the outcome (every case, its items) is built only for a report to hold
        from compliance_bake.cli.outcome import of_audit

        reporters.write_reports(reports, of_audit(result))
    finish(result.exit_code, result.nothing_audited)
