"""`compliance-bake diff OLD NEW`: what changed between two verified snapshots."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from compliance_bake.cli.options import (
    json_option,
    public_key_option,
    secret_file_option,
    timeout_option,
)
from compliance_bake.cli.reporters import diff_report_option
from compliance_bake.cli.shared import exit_codes

DIFF_EXIT_CODES = exit_codes(
    0,
    1,
    2,
    3,
    4,
    zero="no change beyond the classes --fail-on leaves out (default: cosmetic)",
    one="changes in a --fail-on class (the report names the classes)",
    two="bad usage or input: a side unreadable, not a snapshot, not authentic",
    three="a URL side failed to fetch (unreachable, timeout, redirect, too big)",
)

CLASSES = "decision,coverage,self-check,cosmetic"


def _fail_on(ctx: click.Context, param: click.Parameter, value: str) -> tuple[object, ...]:
    from compliance_bake.diff.model import ChangeClass

    try:
        return ChangeClass.parse_list(value)
    except ValueError as exc:
        raise click.BadParameter(f"unknown class {exc}; choose from {CLASSES}") from None


@click.command(
    epilog=DIFF_EXIT_CODES,
    short_help="What changed between two authenticated snapshots.",
)
@click.argument("old", metavar="OLD")
@click.argument("new", metavar="NEW")
@secret_file_option
@public_key_option(
    "--public-key",
    "public_key",
    help="Trusted Ed25519 public key (the .pub.pem of `signing-key mint`); repeat for rotation. "
    "Else $COMPLIANCE_PUBLIC_KEY_FILE. An out/ folder side is then authentic when its "
    "attestation verifies with one of them.",
)
@click.option(
    "--unauthenticated",
    is_flag=True,
    help="Compare even a side that is not authentic (no secret, or a wrong one); "
    "every output then says so.",
)
@click.option(
    "--fail-on",
    default="decision,coverage,self-check",
    show_default=True,
    callback=_fail_on,
    metavar="CLASSES",
    help=f"Comma-separated classes that make exit 1 ({CLASSES}); empty: never.",
)
@click.option(
    "--limit",
    type=click.IntRange(min=0),
    default=10,
    show_default=True,
    help="Changes shown per class in the terminal and Markdown reports (the rest are counted).",
)
@timeout_option("a URL side (fetched as `verify` fetches one)")
@diff_report_option
@json_option
@click.option(
    "--markdown",
    "as_markdown",
    is_flag=True,
    help="A short Markdown report (--report diff-markdown:-).",
)
def diff(
    old: str,
    new: str,
    secret_file: Path | None,
    public_key: tuple[Path, ...],
    unauthenticated: bool,
    fail_on: tuple[object, ...],
    limit: int,
    timeout: float,
    reports: tuple[tuple[str, str], ...],
    as_json: bool,
    as_markdown: bool,
) -> None:
    """What changed between two snapshots OLD and NEW, each a baked out/ folder, a snapshot
    file (out/api/compliance.json) or the http(s):// URL of a published /api/compliance
    (fetched as `verify` fetches one: timeouts, a size cap, no redirects).

    Both sides are authenticated first: with the report signing secret (as `verify` finds it),
    or with a trusted public key (--public-key) for an out/ folder's attestation. A side that
    is not authentic is refused (exit 2) unless --unauthenticated. Changes are
    matched by meaning (state and partner, self-check, check, node), not by position, and
    classified: decision (what a wager would get), coverage (states, partners, licences, geo
    profiles, audited plays), self-check (the self-checks, integrity checks, shadow agreement) and
    cosmetic (timestamps, runtime string, wording).

    \b
    Examples:
      compliance-bake diff yesterday/out out
      compliance-bake diff old.json out --json > changes.json
      compliance-bake diff https://registry.example/api/compliance out
      compliance-bake diff old/out out --markdown --fail-on decision
      compliance-bake diff old/out out --report diff-json:changes.json
      compliance-bake diff old/out out --public-key signing-key.pub.pem
      compliance-bake diff a.json b.json --unauthenticated
    """
    from compliance_bake.cli import outcome, reporters
    from compliance_bake.diff import render
    from compliance_bake.diff.run import run_diff
    from compliance_bake.report.escape import visible_lines
    from compliance_bake.signing.secret import resolve_secret
    from compliance_bake.signing.signing_key import public_keys_from

    if as_json and as_markdown:
        raise click.UsageError("--json and --markdown are exclusive: choose one")
    tables_to_stderr = reporters.check_stdout(reports, as_json or as_markdown)
    result = run_diff(
        old,
        new,
        secret=resolve_secret(secret_file),
        public_keys=public_keys_from(public_key),
        allow_unauthenticated=unauthenticated,
        fail_on=fail_on,  # type: ignore[arg-type]
        timeout=timeout,
    )
    # --json and --markdown: the diff's own formats on stdout, before any other report.
    alias = "diff-json" if as_json else "diff-markdown" if as_markdown else None
    if alias is None:
        with reporters.human_output(tables_to_stderr):
            click.echo(visible_lines(render.text_report(result, limit)), nl=False)
    reports = reports if alias is None else ((alias, "-"), *reports)
    reporters.write_reports(reports, outcome.of_diff(result, limit))
    sys.exit(result.exit_code)
