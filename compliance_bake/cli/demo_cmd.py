"""`compliance-bake demo init [FOLDER]`: the demo fixtures where README's examples name them."""

from __future__ import annotations

from pathlib import Path

import click

from compliance_bake.cli.shared import DONE, exit_codes


@click.group(short_help="Put the demo's files in place.")
def demo() -> None:
    """The bundled demo: its fixtures, copied where the examples expect them.

    \b
    Example:
      compliance-bake demo init
    """


@demo.command(
    short_help="Copy the demo fixtures into FOLDER (default: fixtures).",
    epilog=exit_codes(0, 2, 4, zero=DONE, two="bad usage: FOLDER already holds a demo file"),
)
@click.argument(
    "folder", type=click.Path(path_type=Path, file_okay=False), default=Path("fixtures")
)
def init(folder: Path) -> None:
    """Copy the demo fixtures into FOLDER (default: fixtures, as README and `--help` name
    them): licences.json and geo.json (the registry), plays.csv (the plays of the ZIP-window
    audit) and drifted/licences.json (a service that drifted from the registry, for
    --service-fixtures). Never replaces a file: a FOLDER that holds one of these names exits 2
    and nothing is written.

    \b
    Examples:
      compliance-bake demo init
      compliance-bake bake snapshot --deep-audit fixtures/plays.csv
      compliance-bake demo init my-fixtures
    """
    from compliance_bake.inputs.demo_files import copy_demo_files
    from compliance_bake.report.escape import visible

    written = copy_demo_files(folder)
    click.echo(f"Wrote {len(written)} demo files to {visible(folder)}: {', '.join(written)}")
