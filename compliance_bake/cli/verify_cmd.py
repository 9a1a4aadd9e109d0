"""`compliance-bake verify [SOURCE]`: an out/ folder, a snapshot file, or an http(s):// URL."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from compliance_bake.cli.options import (
    json_option,
    public_key_option,
    quiet_option,
    secret_file_option,
    timeout_option,
)
from compliance_bake.cli.reporters import report_option
from compliance_bake.cli.shared import exit_codes


@click.command(
    epilog=exit_codes(
        0,
        1,
        2,
        3,
        4,
        one="done, and a check failed: it does not verify",
        three="a URL SOURCE failed (unreachable, timed out, cut short, over the cap)",
    ),
    short_help="Re-check a snapshot offline: authentic and compliant.",
)
@click.argument("source", metavar="[SOURCE]", default="out")
@secret_file_option
@public_key_option(
    "--public-key",
    "public_keys",
    metavar=None,
    help="Ed25519 public key (PEM, from `signing-key mint`) to check "
    "out/attestation/compliance.intoto.json with (for a URL: fetched from beside the "
    "snapshot, with every file it names); repeat it for key rotation.  "
    "[default: $COMPLIANCE_PUBLIC_KEY_FILE, several separated by ':']",
)
@click.option(
    "--digests-only",
    is_flag=True,
    help="Without any key: check digests, rules and recorded checks, and say NOT authenticated.",
)
@click.option(
    "--allow-recorded-failures",
    is_flag=True,
    help="Accept an authentic snapshot that records failed checks (to inspect a failed bake); "
    "a broken rule still fails.",
)
@timeout_option("a URL SOURCE (the snapshot and the files checked beside it) and a --log URL")
@click.option(
    "--log",
    "log_location",
    metavar="DIR|URL",
    help="Also check that the transparency log's latest checkpoint extends the one OUT/log/ "
    "proves the snapshot in (a consistency proof from the log's tiles).",
)
@public_key_option(
    "--witness-key",
    "witness_keys",
    help="A witness's Ed25519 public key (from `witness-key mint`); repeatable.",
)
@click.option(
    "--witness-threshold",
    type=click.IntRange(min=1),
    help="How many of the --witness-key witnesses must have cosigned a checkpoint that holds "
    "the snapshot.  [default: all of them]",
)
@json_option
@quiet_option
@report_option
def verify(
    source: str,
    secret_file: Path | None,
    public_keys: tuple[Path, ...],
    witness_keys: tuple[Path, ...],
    as_json: bool,
    quiet: bool,
    reports: tuple[tuple[str, str], ...],
    **params: Any,
) -> None:
    """Re-check a snapshot offline: SOURCE is an out/ folder (default: out), a snapshot file,
    or the http(s):// URL of a published /api/compliance.

    Gives two verdicts. AUTHENTIC: every digest is recomputed and a key says who signed it
    (HMAC-SHA3-256 with REPORT_SIGNING_SECRET, or the Ed25519 attestation with --public-key).
    COMPLIANT: every rule of the specification that follows from the content holds (coverage
    of the shadow matrix, licence rules, the 8 self-checks and their expected values, geo
    profiles, the 90-day window, timestamps, runtime, the secret nowhere in a file) and every
    check the snapshot records holds. Exit 0 only when both hold. An attestation that is
    there but not checked (no --public-key) is named, never called verified.

    For an out/ folder it also checks the byte layout, the registry copies, the portal page,
    and that out/ holds no file the tool does not write. For a URL with --public-key, the
    attestation is fetched from beside the snapshot (attestation/compliance.intoto.json), with
    every file it names (and, with --log, the snapshot's log/ proof), and checked as a folder;
    a missing attestation is named. A folder or file that holds no snapshot (not JSON, or
    none of a snapshot's blocks) is exit 2 with no verdict; a URL that answers one, exit 3.
    JSON whitespace and key order do not matter for a file or a URL. With no key at all it
    refuses (exit 2) unless --digests-only.

    \b
    Examples:
      compliance-bake verify out
      compliance-bake verify out --report junit:verify.xml --report github:-
      REPORT_SIGNING_SECRET_FILE=/run/secrets/report-signing \\
        compliance-bake verify out --json
      compliance-bake verify snapshot.json \\
        --secret-file report-signing.secret
      compliance-bake verify https://compliance.example/api/compliance
      compliance-bake verify https://compliance.example/api/compliance.json \\
        --public-key signing-key.pub.pem
      compliance-bake verify out --public-key signing-key.pub.pem
      compliance-bake verify out --digests-only
      compliance-bake verify out --allow-recorded-failures
      compliance-bake verify out --public-key signing-key.pub.pem --log log \\
        --witness-key regulator.pub.pem

    With OUT/log/ present (a bake with --log) it also checks the inclusion proof and the
    checkpoint's signature with --public-key; --log DIR|URL checks that the log's latest
    checkpoint extends it; --witness-key requires cosignatures (`compliance-bake docs
    transparency-log`).
    """
    from compliance_bake.cli import outcome, render, reporters
    from compliance_bake.cli.phases import reporting
    from compliance_bake.errors import EXIT_CHECK_FAILED, EXIT_OK
    from compliance_bake.report.escape import terminal_json
    from compliance_bake.signing.secret import resolve_secret
    from compliance_bake.signing.signing_key import public_keys_from, read_public_key
    from compliance_bake.verify.verifier import KeyMaterial, VerifyOptions, verify_source

    tables_to_stderr = reporters.check_stdout(reports, as_json)
    keys = KeyMaterial(resolve_secret(secret_file), tuple(public_keys_from(public_keys)))
    witnesses = tuple(read_public_key(path, "--witness-key") for path in witness_keys)
    # The other options are VerifyOptions' fields, name for name.
    with reporting("verify", enabled=not (as_json or quiet)) as (_progress, phases):
        options = VerifyOptions(phases=phases, witness_keys=witnesses, **params)
        report = verify_source(source, keys, options)
    code = EXIT_OK if report.ok else EXIT_CHECK_FAILED
    result = outcome.of_verify(report, code, report.summary())
    if as_json:
        click.echo(terminal_json(report.summary()))
    else:
        with reporters.human_output(tables_to_stderr):
            render.verify_report(report, result)
    reporters.write_reports(reports, result)
    sys.exit(code)
