"""`compliance-bake secret mint`."""

from __future__ import annotations

from pathlib import Path

import click

from compliance_bake.cli.shared import DONE, exit_codes


@click.group(short_help="Mint the local report signing secret.")
def secret() -> None:
    """Manage the local report signing secret (development only; production reads a vault).

    \b
    Example:
      compliance-bake secret mint
    """


@secret.command(epilog=exit_codes(0, 2, 4, zero=DONE))
@click.option(
    "--path",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Where to write it.  [default: .compliance-bake/report-signing.secret]",
)
@click.option(
    "--force", is_flag=True, help="Replace an existing secret (old snapshots stop verifying)."
)
def mint(path: Path | None, force: bool) -> None:
    """Create a 256-bit REPORT_SIGNING_SECRET in a local file with mode 0600.

    The value is written to the file only, never printed. `bake snapshot` and `verify` find it
    when neither --secret-file, $REPORT_SIGNING_SECRET nor $REPORT_SIGNING_SECRET_FILE is set.
    Keep the folder out of version control (this repository's .gitignore does).

    \b
    Examples:
      compliance-bake secret mint
      compliance-bake secret mint --path /tmp/dev-secret --force
    """
    from compliance_bake.signing.secret import LOCAL_FILE, mint_secret

    written = mint_secret(path or LOCAL_FILE, force=force)
    where = written.resolve()
    found_by = (
        f"bake and verify find it when run in {where.parent.parent}"
        if path is None
        else f"pass --secret-file {written} or set REPORT_SIGNING_SECRET_FILE to use it"
    )
    click.echo(
        f"minted a report signing secret in {where} (mode 0600; its value is not shown); "
        f"{found_by}",
        err=True,
    )
