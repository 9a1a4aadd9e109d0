"""`compliance-bake verify [OUT]`."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from compliance_bake.cli.options import json_option, secret_file_option
from compliance_bake.cli.shared import CONTEXT, EXIT_CODES


@click.command(context_settings=CONTEXT, epilog=EXIT_CODES)
@click.argument("out_dir", metavar="[OUT]", type=click.Path(path_type=Path), default=Path("out"))
@secret_file_option
@json_option
def verify(out_dir: Path, secret_file: Path | None, as_json: bool) -> None:
    """Re-check a baked OUT folder offline (default: out).

    Checks each JSON file against its schema and the baked byte layout, that the registry copies
    equal the snapshot's blocks, every digest, every HMAC (when a secret is available; without one
    it checks digests only and says so), that the integrity checks follow from the content, and
    that the portal page renders the snapshot. Each failure names the file and what failed.

    \b
    Examples:
      compliance-bake verify out
      REPORT_SIGNING_SECRET_FILE=/run/secrets/report-signing compliance-bake verify out --json
    """
    import json

    from compliance_bake.cli import render
    from compliance_bake.errors import EXIT_CHECK_FAILED, EXIT_OK
    from compliance_bake.signing.secret import resolve_secret
    from compliance_bake.verify.verifier import verify_out

    report = verify_out(out_dir, resolve_secret(secret_file))
    if as_json:
        click.echo(
            json.dumps(
                {
                    "ok": report.ok,
                    "out": report.out_dir,
                    "hmacChecked": report.hmac_checked,
                    "failures": [{"file": f.file, "what": f.what} for f in report.failures],
                    "checks": len(report.findings),
                },
                indent=2,
            )
        )
    else:
        render.verify_report(report)
    sys.exit(EXIT_OK if report.ok else EXIT_CHECK_FAILED)
