"""`compliance-bake signing-key mint`."""

from __future__ import annotations

from pathlib import Path

import click

from compliance_bake.cli.options import key_file_option
from compliance_bake.cli.shared import DONE, exit_codes


@click.group("signing-key", short_help="Mint the Ed25519 attestation key pair.")
def signing_key() -> None:
    """Manage the Ed25519 key pair that signs the public attestation.

    \b
    Example:
      compliance-bake signing-key mint
    """


@signing_key.command(epilog=exit_codes(0, 2, 4, zero=DONE))
@key_file_option(".compliance-bake/signing-key.pem")
@click.option(
    "--force",
    is_flag=True,
    help="Replace an existing key pair (snapshots it signed then verify only with the old "
    "public key).",
)
def mint(key_file: Path | None, force: bool) -> None:
    """Create an Ed25519 key pair for the attestation and print its key id.

    Writes the private key (PKCS#8 PEM, mode 0600, never printed) and the public key beside it
    (SubjectPublicKeyInfo PEM, mode 0644: hand it to whoever checks your snapshots). The key id
    printed on stdout is the SHA-256 of the public key's DER. `bake snapshot` signs with the
    default file when it exists; keep the folder out of version control (this repository's
    .gitignore does). An existing key is never replaced without --force (exit 2).

    \b
    Examples:
      compliance-bake signing-key mint
      compliance-bake signing-key mint --key-file keys/2026-11.pem
    """
    from compliance_bake.signing.signing_key import LOCAL_FILE

    mint_key_pair(key_file or LOCAL_FILE, force, "an Ed25519 signing key")


def mint_key_pair(private: Path, force: bool, what: str) -> None:
    """Write a key pair (signing.signing_key), say on stderr where its halves are, and print
    only the key id on stdout, so that a script can capture it."""
    from compliance_bake.signing.signing_key import mint_signing_key

    public, key_id = mint_signing_key(private, force=force)
    click.echo(
        f"minted {what} in {private} (mode 0600; not shown), public key in {public}", err=True
    )
    click.echo(key_id)
