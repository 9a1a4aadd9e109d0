"""`compliance-bake bake snapshot`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from compliance_bake.cli.options import (
    TargetArgs,
    audit_engine_options,
    concurrency_option,
    fixtures_option,
    json_option,
    key_option,
    now_option,
    out_option,
    plays_source_options,
    public_key_option,
    quiet_option,
    secret_file_option,
    target_options,
    waivers_option,
)
from compliance_bake.cli.reporters import report_option
from compliance_bake.cli.shared import exit_codes, finish

if TYPE_CHECKING:
    from compliance_bake.audit.engines.interface import EngineOptions, PlaysOptions
    from compliance_bake.bake import BakeResult
    from compliance_bake.cli.outcome import Outcome


@click.group()
def bake() -> None:
    """Bake artefacts from the fixtures.

    \b
    Example:
      compliance-bake bake snapshot --out out
    """


@bake.command(
    epilog=exit_codes(0, 1, 2, 3, 4, 5),
    short_help="Check the service, sign, and write out/.",
)
@fixtures_option
@click.option(
    "--service-fixtures",
    "service_fixtures_dir",
    metavar="DIR",
    type=click.Path(path_type=Path, file_okay=False),
    help="The in-process engine (the service under test) answers from DIR/licences.json while "
    "the shadow keeps reading --fixtures (the regulator's registry): a licence that differs "
    "shows as mismatches, as a live service's drifted database would. Not with --target.",
)
@out_option("Folder to write the snapshot, registry files and portal page into.")
@now_option("The bake's clock")
@secret_file_option
@click.option(
    "--console-depth",
    type=click.IntRange(1, 8),
    default=2,
    show_default=True,
    help="Depth to which the terminal report prints nested state objects "
    "(recorded as enhancements.consoleDepth).",
)
@click.option(
    "--deep-audit",
    "deep_audit",
    metavar="PLAYS",
    help="Also run the 90-day ZIP-window audit over PLAYS (a .csv, .jsonl or .parquet file; - "
    "reads a CSV from standard input; sqlite:PATH or postgresql://... with --plays-table or "
    "--plays-query; with --engine spark also a folder, a glob or a URI) on the "
    "bake's clock: adds deepAudit and the zip-window check. No play in the window: exit 5.",
)
@click.option(
    "--allow-empty-window",
    is_flag=True,
    help="With --deep-audit: exit 0 when no play falls in the window (else exit 5).",
)
@key_option(
    "--signing-key",
    "signing_key_file",
    "Ed25519 private key (PEM, mode 0600) that signs OUT/attestation/compliance.intoto.json. "
    "Else $COMPLIANCE_SIGNING_KEY_FILE, then .compliance-bake/signing-key.pem when it exists; "
    "none: no attestation (and an earlier one is removed).",
    metavar="PATH",
)
@click.option(
    "--previous",
    metavar="OLD",
    help="Show on the portal what changed since OLD (an out/ folder, a snapshot file or the "
    "http(s):// URL of a published /api/compliance), authenticated as `diff` authenticates a "
    "side (the report signing secret; or --previous-public-key for a folder) and refused (exit "
    "2) when it is not authentic. Needs an Ed25519 signing key: the record of the comparison "
    "goes in the signed attestation's predicate (`previous`), from which `verify` re-renders "
    "the section. The snapshot's fields do not change.",
)
@public_key_option(
    "--previous-public-key",
    "previous_public_key",
    help="Trusted Ed25519 public key for an OLD out/ folder's attestation (repeatable; else "
    "$COMPLIANCE_PUBLIC_KEY_FILE).",
)
@click.option(
    "--previous-unauthenticated",
    is_flag=True,
    help="Compare with OLD even when it is not authentic; the portal then says so.",
)
@click.option(
    "--log",
    "log_dir",
    metavar="DIR",
    envvar="COMPLIANCE_LOG_DIR",
    type=click.Path(path_type=Path, file_okay=False),
    help="Append the published snapshot to the transparency log in DIR (C2SP tlog-tiles files; "
    "needs the signing key) and write its inclusion proof into OUT/log/.  [env: "
    "COMPLIANCE_LOG_DIR]",
)
@click.option(
    "--log-origin",
    metavar="ORIGIN",
    envvar="COMPLIANCE_LOG_ORIGIN",
    help="The origin that names a new log in its checkpoints (e.g. "
    "compliance.example.com/registry); an existing log keeps its own.",
)
@waivers_option
@audit_engine_options
@plays_source_options
@target_options("--target (each request) and a --previous URL")
@concurrency_option
@json_option
@quiet_option
@report_option
def snapshot(**params: Any) -> None:
    """Run the self-checks and the shadow matrix, sign, validate and write OUT.

    Loads the licence and geo fixtures, runs the eight self-checks and the state x partner
    shadow matrix against the in-process engine, or with --target URL against a live compliance
    service (health, check and status over HTTP; `compliance-bake docs service-api`), and with
    --deep-audit the ZIP-window audit over a plays file; signs the report (SHA3-256 digests and
    HMAC-SHA3-256 proofs keyed by REPORT_SIGNING_SECRET), validates it against the bundled JSON
    Schemas and only then writes OUT/api/compliance.json, OUT/registry/*.json and
    OUT/portal/compliance/index.html, atomically. With an Ed25519 signing key (`signing-key
    mint`) it also writes OUT/attestation/compliance.intoto.json: a DSSE envelope holding an
    in-toto Statement whose subjects are those files with their SHA-256, which anyone holding
    the public key can check (`compliance-bake docs signing`). A target that fails (unreachable, too
    slow, malformed answers after the retries) exits 3 and writes nothing; a missing or bad key file
    exits 2 and writes nothing. A service that answers with only the spec's fields is a valid
    target (without a runtime on /health, bunVersion reads "unknown (the service did not report
    its runtime)"); the key-store self-check is always measured in this process. A service with
    other routes, auth header or answer envelopes is described by --target-profile FILE
    (`compliance-bake docs target-profiles`); a bad profile exits 2 before any request.

    Shows the phases (load, matrix, sign, validate, write) on stderr: a bar on a terminal, one
    line per phase elsewhere (none under --quiet or --json). A run that fails ends with a short
    summary of what failed. --report adds JSON, JUnit or GitHub reports beside the tables.

    With --previous OLD the portal also shows a "since the previous snapshot" section: the
    decision changes (the first 200, the rest counted) and the changes per class, as `diff
    OLD OUT` finds them. OLD is read and authenticated before anything else (not authentic:
    exit 2; a URL that fails to fetch: exit 3). The section is rendered from a record in the
    signed attestation (predicate.previous: OLD's digest, how it was authenticated, the
    counts and the decisions shown, and an HMAC with the signing secret), so `verify`
    re-renders and checks it with either key; without a signing key --previous is refused.

    \b
    Examples:
      compliance-bake bake snapshot
      compliance-bake bake snapshot --fixtures fixtures --out out \\
        --now 2026-11-22T04:06:00Z
      compliance-bake bake snapshot --deep-audit fixtures/plays.csv \\
        --now 2026-11-22T04:06:00Z --report junit:reports/junit.xml
      compliance-bake bake snapshot --service-fixtures fixtures/drifted \\
        --out out-fail --now 2026-11-22T04:06:00Z
      compliance-bake bake snapshot --signing-key \\
        .compliance-bake/signing-key.pem
      compliance-bake bake snapshot --signing-key key.pem --log log \\
        --log-origin compliance.example.com/registry
      compliance-bake bake snapshot --signing-key key.pem --previous yesterday/out
      compliance-bake bake snapshot --signing-key key.pem \\
        --previous https://registry.example/api/compliance
      compliance-bake bake snapshot --deep-audit plays/ --engine spark \\
        --spark-master 'local[2]'
      SOURCE_DATE_EPOCH=1795000000 compliance-bake bake snapshot --json
      COMPLIANCE_AGENT_KEY=... compliance-bake bake snapshot \\
        --target http://127.0.0.1:8000
      compliance-bake bake snapshot --target https://compliance.example \\
        --agent-key-file key --timeout 5 --concurrency 64
      compliance-bake bake snapshot --target https://compliance.example \\
        --target-profile my-service.toml --explain
    """
    _bake(_Snapshot(**params))


@dataclass(frozen=True, slots=True)
class _Snapshot:
    """The command line of `bake snapshot`, as click parses it: one field per parameter."""

    fixtures_dir: str | Path
    service_fixtures_dir: Path | None
    out_dir: Path
    now: str | None
    secret_file: Path | None
    console_depth: int
    deep_audit: str | None
    allow_empty_window: bool
    signing_key_file: Path | None
    previous: str | None
    previous_public_key: tuple[Path, ...]
    previous_unauthenticated: bool
    log_dir: Path | None
    log_origin: str | None
    waivers_file: Path | None
    engine: EngineOptions
    plays_options: PlaysOptions
    target: TargetArgs
    concurrency: int
    as_json: bool
    quiet: bool
    reports: tuple[tuple[str, str], ...]


def _previous(args: _Snapshot) -> Any:  # PreviousSnapshot; diff/ is imported only when asked
    """With --previous OLD, the comparison the bake reads and authenticates first, else None."""
    if args.previous is None:
        return None
    from compliance_bake.diff.previous import PreviousSnapshot
    from compliance_bake.signing.secret import resolve_secret
    from compliance_bake.signing.signing_key import public_keys_from

    return PreviousSnapshot(
        args.previous,
        resolve_secret(args.secret_file),
        public_keys_from(args.previous_public_key),
        args.previous_unauthenticated,
        timeout=args.target.timeout,
    )


def _bake(args: _Snapshot) -> None:
    """Bake with the command line's collaborators (the target, --previous, the progress), then
    show the result, write the reports and exit with the bake's code."""
    from compliance_bake.bake import run_bake
    from compliance_bake.cli import outcome, reporters
    from compliance_bake.cli.phases import reporting
    from compliance_bake.inputs.fixtures import partner_lines
    from compliance_bake.inputs.registry_source import folder_of
    from compliance_bake.log.append import LogTarget

    tables_to_stderr = reporters.check_stdout(args.reports, args.as_json)
    target = args.target.http_target(args.concurrency)
    comparison = _previous(args)
    log = None if args.log_dir is None else LogTarget(args.log_dir, args.log_origin)
    try:
        with reporting("bake", enabled=not (args.as_json or args.quiet)) as (progress, phases):
            result = run_bake(
                fixtures_dir=args.fixtures_dir,
                out_dir=args.out_dir,
                now=args.now,
                secret_file=args.secret_file,
                console_depth=args.console_depth,
                progress=progress,
                target=target,
                deep_audit=args.deep_audit,
                signing_key_file=args.signing_key_file,
                phases=phases,
                engine=args.engine,
                previous=comparison,
                log=log,
                service_fixtures_dir=args.service_fixtures_dir,
                allow_empty_window=args.allow_empty_window,
                plays_options=args.plays_options,
                waivers=args.waivers_file,
            )
    finally:
        if target is not None:
            target.close()
    # A mismatch points at the licence to fix: in a rehearsal, the service's own file.
    folder = args.service_fixtures_dir or folder_of(args.fixtures_dir)
    found = outcome.of_bake(result, None if folder is None else partner_lines(folder))
    _show(args, result, found, tables_to_stderr)
    reporters.write_reports(args.reports, found)
    finish(result.exit_code, result.nothing_audited)


def _show(args: _Snapshot, result: BakeResult, found: Outcome, tables_to_stderr: bool) -> None:
    """The bake's tables (or its --json summary), where the log entry went, the files in OUT
    the bake did not write, and the waivers that matched nothing."""
    from compliance_bake.cli import render, reporters
    from compliance_bake.report.escape import terminal_json

    if args.as_json:
        click.echo(terminal_json(result.summary()))
    else:
        with reporters.human_output(tables_to_stderr):
            render.bake_report(result, args.console_depth, found)
        if result.log is not None:
            click.echo(
                f"logged: entry {result.log.index} of {result.log.directory} "
                f"(size {result.log.size}); proof in {args.out_dir}/log/",
                err=True,
            )
    if not args.quiet:
        render.foreign_files_warning(result.out_dir)
    if result.waivers is not None:
        from compliance_bake.cli.waiver_cases import unused_warnings

        for line in unused_warnings(result.waivers, args.waivers_file):
            click.echo(line, err=True)
