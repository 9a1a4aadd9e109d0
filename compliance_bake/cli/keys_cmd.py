"""`compliance-bake keys`: provision the agent keys that `serve` accepts."""

from __future__ import annotations

from pathlib import Path

import click

from compliance_bake.cli.options import json_option, keys_file_option
from compliance_bake.cli.shared import DONE, exit_codes


@click.group(short_help="Mint, list and revoke agent API keys.")
def keys() -> None:
    """Agent API keys for the service's check and status routes (hashes only are stored).

    \b
    Example:
      compliance-bake keys mint --label ci
    """


@keys.command(
    epilog=exit_codes(0, 2, 4, zero=DONE),
    short_help="Create an agent key; print it once, store its hash.",
)
@keys_file_option
@click.option("--label", default="", help="A note to tell keys apart, e.g. the agent's name.")
def mint(keys_file: Path, label: str) -> None:
    """Create an agent key, print it once on stdout, and store only its SHA3-256 hash.

    Give the key to the agent (e.g. as $COMPLIANCE_AGENT_KEY for `bake snapshot --target`); it
    cannot be shown again. A running `serve` re-reads the file when it changes: the key works
    from its next request, with no restart.

    \b
    Examples:
      compliance-bake keys mint --label ci
      export COMPLIANCE_AGENT_KEY=$(compliance-bake keys mint --label ci)
    """
    from compliance_bake.identity.keyfile import mint_key
    from compliance_bake.report.escape import visible

    key = mint_key(keys_file, label)
    click.echo(key)
    click.echo(
        f"compliance-bake: key {key[:5]} stored (hash only) in {visible(keys_file)}; a running "
        "`serve` with this --keys-file accepts it from its next request (no restart)",
        err=True,
    )


@keys.command(
    name="list",
    epilog=exit_codes(0, 2, 4, zero=DONE),
    short_help="List the stored keys: prefix, label, state.",
)
@keys_file_option
@json_option
def list_keys(keys_file: Path, as_json: bool) -> None:
    """List the prefixes, labels and states of the stored keys (never the keys).

    \b
    Example:
      compliance-bake keys list --json
    """
    from compliance_bake.identity.keyfile import load_keys
    from compliance_bake.report.escape import terminal_json, visible

    records = load_keys(keys_file).records()
    rows = [{"prefix": r.prefix, "label": r.label, "revoked": r.revoked} for r in records]
    if as_json:
        click.echo(terminal_json(rows))
        return
    if not rows:
        click.echo(f"no agent keys in {keys_file}", err=True)
    for row in rows:
        state = "revoked" if row["revoked"] else "active"
        click.echo(visible(f"{row['prefix']}  {state:<7}  {row['label']}"))


@keys.command(
    epilog=exit_codes(0, 2, 4, zero=DONE),
    short_help="Revoke a key by its prefix (a running serve refuses it at once).",
)
@keys_file_option
@click.argument("prefix")
def revoke(keys_file: Path, prefix: str) -> None:
    """Revoke the key whose 5-character prefix is PREFIX; a running `serve` re-reads the file
    when it changes and refuses the key from its next request.

    \b
    Example:
      compliance-bake keys revoke ab3de
    """
    from compliance_bake.identity.keyfile import revoke_key

    record = revoke_key(keys_file, prefix)
    click.echo(
        f"compliance-bake: key {record.prefix} revoked; a running `serve` with this "
        "--keys-file refuses it from its next request (no restart)",
        err=True,
    )
