"""`compliance-bake log verify` and `log show`: audit the transparency log, read one entry."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from compliance_bake.cli.options import json_option, public_key_option, timeout_option
from compliance_bake.cli.reporters import report_option
from compliance_bake.cli.shared import exit_codes
from compliance_bake.report.escape import terminal_json

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    from compliance_bake.log.audit import LogAudit

_LOG_EXCHANGES = "a log at a URL (its checkpoint, tiles and entries)"
_LOG_KEY_HELP = (
    "The log's Ed25519 public key (the signing key's .pub.pem); repeatable for rotation.  "
    "[default: $COMPLIANCE_PUBLIC_KEY_FILE]"
)


def log_keys(paths: tuple[Path, ...]) -> list[Ed25519PublicKey]:
    """The trusted log keys, parsed; InputError (exit 2) for none or a bad file."""
    from compliance_bake.errors import InputError
    from compliance_bake.signing.signing_key import parse_public_key, public_keys_from

    pems = public_keys_from(paths)
    if not pems:
        raise InputError(
            "no public key: nothing can say who signed the log's checkpoint",
            "pass --public-key signing-key.pub.pem",
        )
    return [parse_public_key(pem) for pem in pems]


@click.group("log", short_help="Audit the transparency log.")
def log() -> None:
    """Read and audit the transparency log that `bake snapshot --log DIR` appends to.

    \b
    Example:
      compliance-bake log verify log --public-key signing-key.pub.pem
    """


@log.command(
    "verify",
    epilog=exit_codes(0, 1, 2, 3, 4, one="done, and the log does not verify"),
    short_help="Recompute the whole log and check its checkpoint.",
)
@click.argument("location", metavar="DIR|URL")
@public_key_option("--public-key", "public_keys", help=_LOG_KEY_HELP)
@timeout_option(_LOG_EXCHANGES)
@json_option
@report_option
def verify_log(
    location: str,
    public_keys: tuple[Path, ...],
    timeout: float,
    as_json: bool,
    reports: tuple[tuple[str, str], ...],
) -> None:
    """Recompute the whole log: every tile from the entries, the root from the tiles, and the
    checkpoint's signature; then list the entries (date, verdict, target).

    A log that holds together can still be a rebuilt one: a witness (`compliance-bake witness`)
    or `verify OUT --log` compares it with a checkpoint seen earlier.

    \b
    Examples:
      compliance-bake log verify log --public-key signing-key.pub.pem
      compliance-bake log verify https://registry.example/log \\
        --public-key signing-key.pub.pem --json
      compliance-bake log verify log --public-key signing-key.pub.pem \\
        --report junit:reports/log.xml
    """
    from compliance_bake.cli import outcome, reporters
    from compliance_bake.errors import EXIT_CHECK_FAILED, EXIT_OK
    from compliance_bake.log.audit import audit_log
    from compliance_bake.log.source import open_source

    tables_to_stderr = reporters.check_stdout(reports, as_json)
    keys = log_keys(public_keys)
    result = audit_log(location, open_source(location, timeout), keys)
    code = EXIT_OK if result.ok else EXIT_CHECK_FAILED
    if as_json:
        click.echo(terminal_json(result.summary()))
    else:
        with reporters.human_output(tables_to_stderr):
            _entry_lines(result)
    reporters.write_reports(reports, outcome.of_log_audit(result, code))
    sys.exit(code)


def _entry_lines(result: LogAudit) -> None:
    """Each entry on stdout (its fields are the log's text, escaped for the terminal), then what
    failed and the verdict on stderr."""
    from compliance_bake.log.entry import verdict_finding
    from compliance_bake.report.escape import visible

    for entry in result.entries:
        recorded = verdict_finding(entry)
        click.echo(
            f"{entry['index']:>6}  {visible(entry.get('generatedAt', '?'))}  "
            f"{'ok    ' if recorded.ok else 'FAILED'}  {recorded.what}  "
            f"{visible(entry.get('target', '?'))}"
        )
    for failure in result.failures:
        click.echo(f"FAILED: {visible(failure.line)}", err=True)
    if result.ok and result.checkpoint:
        click.echo(
            f"log verified: {result.checkpoint.describe()}, every tile recomputed "
            "from the entries, checkpoint signed by the given key",
            err=True,
        )
    else:
        click.echo(f"log NOT verified: {result.location}", err=True)


@log.command(
    "show",
    epilog=exit_codes(0, 1, 2, 3, 4),
    short_help="Print one entry, after proving its inclusion.",
)
@click.argument("location", metavar="DIR|URL")
@click.argument("index", type=click.IntRange(min=0))
@public_key_option("--public-key", "public_keys", help=_LOG_KEY_HELP)
@timeout_option(_LOG_EXCHANGES)
def show(location: str, index: int, public_keys: tuple[Path, ...], timeout: float) -> None:
    """Print entry INDEX of the log as JSON, after checking that the signed checkpoint
    includes it.

    \b
    Example:
      compliance-bake log show log 0 --public-key signing-key.pub.pem
    """
    from compliance_bake.log.audit import show_entry
    from compliance_bake.log.source import open_source

    keys = log_keys(public_keys)
    entry = show_entry(open_source(location, timeout), keys, index)
    click.echo(terminal_json(entry))
