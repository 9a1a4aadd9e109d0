"""`compliance-bake target profile show|init`: the target profiles that describe a service."""

from __future__ import annotations

import click

from compliance_bake.cli.options import timeout_option
from compliance_bake.cli.shared import DONE, exit_codes

# An OpenAPI document is small; this leaves room for a generous one.
_OPENAPI_MAX_BYTES = 16 * 1024 * 1024


@click.group(short_help="Target profiles: how a live service is asked.")
def target() -> None:
    """Describe the live compliance service that --target asks.

    \b
    Example:
      compliance-bake target profile show > my-service.toml
    """


@target.group(short_help="Show or draft a target profile.")
def profile() -> None:
    """A target profile (TOML) says how to ask a service the three questions (health, check,
    status) and where each answer field is (`compliance-bake docs target-profiles`).

    \b
    Examples:
      compliance-bake target profile show
      compliance-bake target profile init \\
        --from-openapi http://127.0.0.1:3000/openapi.json
    """


@profile.command(
    epilog=exit_codes(0, 4, zero=DONE),
    short_help="Print the built-in profile (the reference service's).",
)
def show() -> None:
    """Print the built-in profile: the reference service's (`compliance-bake docs service-api`).

    Copy it and change what your service does differently, then pass the copy with
    `--target-profile FILE` to `bake snapshot` and `check`.

    \b
    Example:
      compliance-bake target profile show > my-service.toml
    """
    from compliance_bake.targets.profile_file import builtin_text

    click.echo(builtin_text(), nl=False)


@profile.command(
    epilog=exit_codes(0, 2, 3, 4, two="bad usage or bad input (a file that is not OpenAPI JSON)"),
)
@click.option(
    "--from-openapi",
    "source",
    required=True,
    metavar="URL|FILE",
    help="The service's OpenAPI document (JSON), as a URL or a file.",
)
@timeout_option("the OpenAPI document at a --from-openapi URL")
def init(source: str, timeout: float) -> None:
    """Draft a profile from the service's OpenAPI document and print it.

    Takes the operations whose path or operationId names health, check or status, their
    parameters and answer schemas; where it had to guess, the line says `# TODO`. Check the
    draft with `compliance-bake check --target URL --target-profile FILE --explain`.

    \b
    Examples:
      compliance-bake target profile init \\
        --from-openapi http://127.0.0.1:8000/openapi.json > serve.toml
      compliance-bake target profile init --from-openapi openapi.json
    """
    from compliance_bake.errors import InputError
    from compliance_bake.inputs.files import read_regular_file
    from compliance_bake.inputs.jsonio import StrictJSONError, loads_strict
    from compliance_bake.targets.draft import draft_profile
    from compliance_bake.targets.fetch import fetch_document, is_url, shown_url

    shown = shown_url(source)  # never the URL's password or query, in a message or the draft
    if is_url(source):
        raw = fetch_document(source, timeout=timeout, max_bytes=_OPENAPI_MAX_BYTES)
    else:
        missing = InputError(
            f"--from-openapi {shown}: no such file",
            "give the OpenAPI document's URL or a JSON file",
        )
        raw = read_regular_file(
            source, max_bytes=_OPENAPI_MAX_BYTES, what="OpenAPI document (JSON)", missing=missing
        )
    try:
        document = loads_strict(raw)
    except StrictJSONError as exc:
        raise InputError(
            f"--from-openapi {shown}: not JSON ({exc} at {exc.where})",
            "give the OpenAPI document in JSON (YAML: convert it first)",
        ) from None
    if not isinstance(document, dict) or not isinstance(document.get("paths"), dict):
        raise InputError(
            f"--from-openapi {shown}: not an OpenAPI document (no `paths`)",
            "give the service's OpenAPI document, e.g. /openapi.json",
        )
    click.echo(draft_profile(document, shown), nl=False)
