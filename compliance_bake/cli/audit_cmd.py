"""`compliance-bake audit deep`."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from compliance_bake.cli.options import (
    audit_now_option,
    audit_out_option,
    fixtures_option,
    fixtures_path,
    json_option,
    quiet_option,
)
from compliance_bake.cli.reporters import report_option
from compliance_bake.cli.shared import CONTEXT, exit_codes

REASONS = """\b
Violation reasons (a play counts under the first that applies):
  malformed-row         wrong column count, NUL byte, unterminated
                        quote, bad JSON line, a record over 64 MiB
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


FOOTER = exit_codes(0, 1, 2, 4, one="done, and a play violates the window")


@click.group(context_settings=CONTEXT)
def audit() -> None:
    """Audits over play logs.

    \b
    Example:
      compliance-bake audit deep --plays fixtures/plays.csv \\
        --now 2026-11-22T04:06:00Z
    """


@audit.command(context_settings=CONTEXT, epilog=REASONS + "\n\n" + FOOTER)
@click.option(
    "--plays",
    type=click.Path(path_type=Path, allow_dash=True),
    required=True,
    help="Plays file: .csv, .jsonl/.ndjson or .parquet with the columns play_id, partner, "
    "state, zip, placed_at, enriched_at, wager_type, stake; a regular file, or - to read "
    "standard input (CSV unless --format says otherwise).",
)
@click.option(
    "--format",
    "plays_format",
    type=click.Choice(["csv", "jsonl", "parquet"]),
    default=None,
    help="The plays' format, when the file name does not say it (standard input: csv).",
)
@click.option(
    "--days",
    type=click.IntRange(min=1, max=36500),
    default=90,
    show_default=True,
    help="Window length: a play is in the window when now - days <= enriched_at <= now.",
)
@audit_now_option
@fixtures_option
@audit_out_option
@json_option
@quiet_option
@report_option
def deep(
    plays: Path,
    plays_format: str | None,
    days: int,
    now: str | None,
    fixtures_dir: Path | None,
    out_dir: Path,
    as_json: bool,
    quiet: bool,
    reports: tuple[tuple[str, str], ...],
) -> None:
    """The ZIP window: every recent play from a real ZIP of a state where its partner is licensed.

    Runs one SQL query (embedded DuckDB) over the plays file and the ZIP database. A play is in
    the window when now - days <= enriched_at <= now (both edges included, offsets honoured;
    placed_at plays no part). Each in-window play must come from a real ZIP of its own state, a
    regulated state, and a partner with an active licence there (licences.json of --fixtures).
    Prints counts by reason and the first violations, and writes every violation to
    OUT/audit/zip-window.json (atomically).

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
    """
    import json

    from compliance_bake.audit.run import run_audit
    from compliance_bake.cli import outcome, render, reporters
    from compliance_bake.cli.phases import reporting

    with reporting("audit", enabled=not (as_json or quiet)) as (progress, phases):
        result = run_audit(
            plays=plays,
            fixtures_dir=fixtures_path(fixtures_dir),
            out_dir=out_dir,
            now=now,
            days=days,
            progress=progress,
            plays_format=plays_format,
            phases=phases,
        )
    if as_json:
        click.echo(json.dumps(result.summary(), indent=2, ensure_ascii=False))
    else:
        render.audit_report(result)
    reporters.write_reports(reports, outcome.of_audit(result))
    sys.exit(result.exit_code)
