"""`compliance-bake witness` and `witness-key mint`: what a regulator runs against a log."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from compliance_bake.cli.options import key_file_option, key_option, now_option, timeout_option
from compliance_bake.cli.reporters import report_option
from compliance_bake.cli.shared import DONE, exit_codes

WITNESS_KEY_FILE = Path(".compliance-bake") / "witness-key.pem"


@click.command(
    epilog=exit_codes(0, 1, 2, 3, 4, one="done, and the log's history does not hold: not cosigned"),
    short_help="Check a log grew honestly since last seen, and cosign it.",
)
@click.argument("location", metavar="DIR|URL")
@key_option(
    "--log-key",
    "log_key",
    "The log's Ed25519 public key (the operator's signing-key .pub.pem).",
    required=True,
)
@key_option(
    "--witness-key",
    "witness_key",
    "This witness's private key (mode 0600).  [default: .compliance-bake/witness-key.pem]",
)
@click.option(
    "--state",
    "state",
    required=True,
    metavar="FILE",
    type=click.Path(path_type=Path, dir_okay=False),
    help="The witness's state: the last checkpoint it cosigned (created on the first "
    "run, replaced only when a run holds).",
)
@click.option(
    "--name",
    "name",
    metavar="NAME",
    help="The witness's name in its cosignatures.  [default: compliance-bake-witness/<key id>]",
)
@timeout_option("a log at a URL (its checkpoint and tiles)")
@now_option("The witness's clock, the time in its cosignature")
@report_option
def witness(
    location: str,
    log_key: Path,
    witness_key: Path | None,
    state: Path,
    name: str | None,
    timeout: float,
    now: str | None,
    reports: tuple[tuple[str, str], ...],
) -> None:
    """Check the log's new checkpoint against the last one seen, and cosign it.

    Verifies the checkpoint's signature with --log-key, that it extends the checkpoint in
    --state (not smaller, not another tree of the same size, a consistency proof from the
    tiles that verifies), and the tiles of the new entries; then adds a C2SP cosignature/v1
    (with the time) to the state file and prints the cosigned checkpoint on stdout. Anything
    that does not hold exits 1, names the two checkpoints that cannot both be true, and leaves
    the state as it was.

    \b
    Examples:
      compliance-bake witness https://registry.example/log \\
        --log-key operator.pub.pem --state witness-state.json
      compliance-bake witness log --log-key signing-key.pub.pem \\
        --witness-key regulator.pem --state state.json \\
        --report junit:reports/witness.xml
    """
    from compliance_bake.cli import outcome, reporters
    from compliance_bake.clock import resolve_now
    from compliance_bake.errors import EXIT_CHECK_FAILED, EXIT_OK, InputError
    from compliance_bake.log.note import valid_name
    from compliance_bake.log.source import open_source
    from compliance_bake.log.witness import default_name, run_witness
    from compliance_bake.signing.signing_key import (
        load_signing_key,
        parse_public_key,
        read_public_key,
    )
    from compliance_bake.targets.fetch import shown_url

    tables_to_stderr = reporters.check_stdout(reports, False)
    log_public = parse_public_key(read_public_key(log_key, "--log-key"))
    key = load_signing_key(witness_key or WITNESS_KEY_FILE, "--witness-key")
    name = name or default_name(key)
    if not valid_name(name):
        raise InputError(
            f"--name {name!r}: not printable ASCII without spaces or +",
            "name the witness like a URL without its scheme",
        )
    moment = int(resolve_now(now).timestamp())
    run = run_witness(open_source(location, timeout), log_public, key, name, state, moment)
    code = EXIT_OK if run.ok else EXIT_CHECK_FAILED
    if run.ok and run.cosigned is not None:
        seen = "first checkpoint" if run.previous is None else f"extends {run.previous.describe()}"
        click.echo(f"cosigned {run.current.describe() if run.current else ''} ({seen})", err=True)
        with reporters.human_output(tables_to_stderr):
            click.echo(run.cosigned.decode(), nl=False)
    else:
        for failure in run.failures:
            click.echo(f"FAILED: {failure.line}", err=True)
        click.echo(f"not cosigned; {state} still holds the last checkpoint that held", err=True)
    reporters.write_reports(reports, outcome.of_witness(run, shown_url(location), code))
    sys.exit(code)


@click.group("witness-key", short_help="Mint a witness key pair.")
def witness_key() -> None:
    """Manage the Ed25519 key pair a witness cosigns checkpoints with.

    \b
    Example:
      compliance-bake witness-key mint
    """


@witness_key.command(epilog=exit_codes(0, 2, 4, zero=DONE))
@key_file_option(WITNESS_KEY_FILE.as_posix())
@click.option("--force", is_flag=True, help="Replace an existing key pair.")
def mint(key_file: Path | None, force: bool) -> None:
    """Create the witness's Ed25519 key pair and print its key id.

    The private key (PKCS#8 PEM, mode 0600) stays with the witness; hand the public key
    (.pub.pem) to whoever runs `verify --witness-key`.

    \b
    Examples:
      compliance-bake witness-key mint
      compliance-bake witness-key mint --key-file keys/regulator.pem
    """
    from compliance_bake.cli.signing_key_cmd import mint_key_pair

    mint_key_pair(key_file or WITNESS_KEY_FILE, force, "a witness key")
