"""`compliance-bake serve`: the reference compliance service."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from compliance_bake.cli.options import (
    fixtures_option,
    keys_file_option,
    out_option,
)
from compliance_bake.cli.shared import DONE, exit_codes


@click.command(
    epilog=exit_codes(0, 2, 4, zero=DONE),
    short_help="Run the compliance service (and the baked files, read-only).",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8080,
    show_default=True,
    help="Port to listen on; 0 picks a free one (the first stderr line says which).",
)
@fixtures_option
@out_option("Baked folder whose snapshot, registry files and portal page are served read-only.")
@keys_file_option
@click.option(
    "--log",
    "log_dir",
    type=click.Path(path_type=Path, file_okay=False),
    help="A transparency log folder (`bake snapshot --log DIR`) served read-only under /log/.",
)
@click.option("--access-log", is_flag=True, help="Log every request on stderr.")
@click.option(
    "--client-timeout",
    type=click.IntRange(1, 3600),
    default=10,
    show_default=True,
    metavar="SECONDS",
    help="A request must arrive whole within this time, and an idle keep-alive connection is "
    "closed after it (`compliance-bake docs service-api`, Limits).",
)
def serve(**params: Any) -> None:
    """Serve decisions over the fixtures, and the snapshot baked in OUT, until Ctrl-C.

    GET /health, /api/compliance/check and /api/compliance/status (these two need an agent key:
    Authorization: Bearer <key>, from `compliance-bake keys mint`), the read-only snapshot routes
    /api/compliance, /registry/*.json and /portal/compliance/, and /openapi.json. The contract is
    `compliance-bake docs service-api`.

    \b
    Examples:
      compliance-bake keys mint --label ci
      compliance-bake serve --port 8080
      compliance-bake serve --host 127.0.0.1 --port 0 --out out
      compliance-bake serve --out out --log log
    """
    from compliance_bake.report.escape import visible
    from compliance_bake.service.runner import Listening, ServeSettings
    from compliance_bake.service.runner import serve as run

    settings = ServeSettings(**params)  # the options are its fields, name for name
    out_dir = settings.out_dir

    def announce(where: Listening) -> None:
        states = ", ".join(where.states) if len(where.states) <= 8 else f"{len(where.states)}"
        click.echo(
            f"compliance-bake serve: listening on {where.url} "
            f"(states {states}; {where.keys} agent key(s) from {visible(settings.keys_file)}; "
            f"snapshot from {visible(out_dir)}/)",
            err=True,
        )
        if where.keys == 0:
            click.echo(
                "compliance-bake serve: warning: no agent keys, so every check and status "
                "request is refused (fix: run `compliance-bake keys mint`)",
                err=True,
            )
        from compliance_bake.report.layout import API_FILE

        if not (out_dir / API_FILE).is_file():
            click.echo(
                f"compliance-bake serve: warning: {visible(out_dir)}/ holds no bake ({API_FILE} is "
                "missing), so the snapshot routes answer 404 (fix: run `compliance-bake bake "
                f"snapshot --out {visible(out_dir)}`, or pass --out FOLDER of a bake)",
                err=True,
            )

    run(settings, announce)
