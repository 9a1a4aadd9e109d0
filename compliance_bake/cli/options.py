"""Options shared by several commands, as named decorators."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])

fixtures_option = click.option(
    "--fixtures",
    "fixtures_dir",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Folder with licences.json and geo.json.  [default: the bundled demo fixtures]",
)
out_option = click.option(
    "--out",
    "out_dir",
    type=click.Path(path_type=Path, file_okay=False),
    default=Path("out"),
    show_default=True,
    help="Folder to write the snapshot, registry files and portal page into.",
)
now_option = click.option(
    "--now",
    metavar="ISO8601",
    default=None,
    help="The bake's clock, e.g. 2026-11-22T04:06:00Z.  [default: $SOURCE_DATE_EPOCH, else now]",
)
secret_file_option = click.option(
    "--secret-file",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="File holding REPORT_SIGNING_SECRET (mode 0600). Else $REPORT_SIGNING_SECRET, "
    "$REPORT_SIGNING_SECRET_FILE, then the file `secret mint` made.",
)
json_option = click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print machine-readable JSON on stdout instead of tables.",
)


def fixtures_path(value: Path | None) -> Path:
    from compliance_bake.resources import demo_fixtures_dir

    return value if value is not None else demo_fixtures_dir()


keys_file_option = click.option(
    "--keys-file",
    type=click.Path(path_type=Path, dir_okay=False),
    default=Path(".compliance-bake") / "agent-keys.json",
    show_default=True,
    envvar="COMPLIANCE_AGENT_KEYS_FILE",
    help="The agent-key file (hashes only, mode 0600). Env: COMPLIANCE_AGENT_KEYS_FILE.",
)
