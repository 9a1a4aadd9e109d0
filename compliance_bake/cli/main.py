"""`compliance-bake`: the group, where every command's errors become exit codes, and the commands.

Importing this module must stay cheap (`--help` is measured against `import click`): the commands
import the core, rich, jsonschema and Jinja2 inside their functions only.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from compliance_bake import __version__
from compliance_bake.cli.shared import EXIT_CODES, HelpFormatter
from compliance_bake.errors import EXIT_INTERNAL, BakeError

# Every command's help, the subcommands' included, wraps at spaces only: click builds each
# command's context from click.Context, so the formatter is set there, once.
click.Context.formatter_class = HelpFormatter
# The group's alone: click hands -h/--help and the help width down to every subcommand.
CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


class BakeGroup(click.Group):
    """Turns every BakeError into one line on stderr and its documented exit code."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise
        except BakeError as error:
            _explain(ctx, "error", error.message, error.hint, error.exit_code)
        except Exception as error:  # noqa: BLE001 - the last line of defence, by design
            _explain(
                ctx,
                "internal error",
                f"{type(error).__name__}",
                "run with -v for the traceback, and please report it",
                EXIT_INTERNAL,
            )
        return None


def json_error(
    ctx: click.Context | None, code: int, message: str, fix: str, argv: list[str] | None = None
) -> None:
    """Under --json, the error as one JSON object on stdout too: {code, message, fix}. A usage
    error can stop parsing before --json is seen: the console script passes its argv."""
    asked = ctx is not None and ctx.meta.get("compliance_bake.json")
    if not asked and "--json" not in (argv or []):
        return
    from compliance_bake.report.escape import terminal_json

    click.echo(terminal_json({"code": code, "message": message, "fix": fix}, indent=None))


def _visible(text: str) -> str:
    """The terminal escape (cli/terminal.py): a message may quote a path, a server's text or
    a fixture's key, none of which may reach the terminal raw."""
    from compliance_bake.report.escape import visible

    return visible(text)


def _explain(ctx: click.Context, kind: str, message: str, hint: str, code: int) -> None:
    if ctx.find_root().params.get("verbose"):
        import traceback

        traceback.print_exc(file=sys.stderr)
    json_error(ctx, code, " ".join(message.split()), " ".join(hint.split()))
    if kind == "internal error":
        line = f"{kind}: {message} ({hint.replace(', and please report it', '')})"
    else:
        line = f"{kind}: {BakeError(message, hint).one_line()}"
    click.echo(f"compliance-bake: {_visible(line)}", err=True)
    ctx.exit(code)


@click.group(cls=BakeGroup, context_settings=CONTEXT, epilog=EXIT_CODES)
@click.version_option(__version__, "-V", "--version", prog_name="compliance-bake")
@click.option("-v", "--verbose", is_flag=True, help="Show tracebacks of errors (for developers).")
def cli(verbose: bool) -> None:
    """Bake, sign and verify compliance snapshots of the licence service.

    \b
    Examples:
      compliance-bake demo init
      compliance-bake secret mint
      compliance-bake signing-key mint
      compliance-bake bake snapshot --now 2026-11-22T04:06:00Z --out yesterday
      compliance-bake bake snapshot --now 2026-11-23T04:06:00Z
      compliance-bake verify out --report junit:verify-junit.xml
      compliance-bake diff yesterday out
      compliance-bake audit deep --plays fixtures/plays.csv \\
        --now 2026-11-22T04:06:00Z
      compliance-bake check --partner node-bay-01 --state MA \\
        --wager-type basketball.totals
      compliance-bake docs target-profiles

    The manual: `compliance-bake docs` lists its pages.
    """


def _register() -> None:
    from compliance_bake.cli import (
        audit_cmd,
        bake_cmd,
        check_cmd,
        demo_cmd,
        diff_cmd,
        docs_cmd,
        keys_cmd,
        log_cmd,
        secret_cmd,
        serve_cmd,
        signing_key_cmd,
        target_cmd,
        verify_cmd,
        witness_cmd,
    )

    cli.add_command(bake_cmd.bake)
    cli.add_command(audit_cmd.audit)
    cli.add_command(verify_cmd.verify)
    cli.add_command(check_cmd.check)
    cli.add_command(diff_cmd.diff)
    cli.add_command(serve_cmd.serve)
    cli.add_command(keys_cmd.keys)
    cli.add_command(secret_cmd.secret)
    cli.add_command(signing_key_cmd.signing_key)
    cli.add_command(target_cmd.target)
    cli.add_command(log_cmd.log)
    cli.add_command(witness_cmd.witness)
    cli.add_command(witness_cmd.witness_key)
    cli.add_command(docs_cmd.docs)
    cli.add_command(demo_cmd.demo)


_register()


# click >= 8.2 raises this for a group called without a command; older clicks print help.
_NO_ARGS_IS_HELP: type[click.UsageError] = getattr(
    click.exceptions, "NoArgsIsHelpError", type("_NeverRaised", (click.UsageError,), {})
)


def main() -> None:
    """The console script: click's own error printing replaced by one line per error."""
    try:
        code = cli.main(prog_name="compliance-bake", standalone_mode=False)
    except _NO_ARGS_IS_HELP as error:  # a bare group: its help is the answer
        click.echo(error.format_message(), err=True)
        sys.exit(error.exit_code)
    except click.UsageError as error:
        where = error.ctx.command_path if error.ctx else "compliance-bake"
        fix = f"see `{where} --help`"
        json_error(error.ctx, error.exit_code, error.format_message(), fix, sys.argv[1:])
        shown = _visible(error.format_message())
        click.echo(f"compliance-bake: error: {shown} (fix: see `{where} --help`)", err=True)
        sys.exit(error.exit_code)
    except click.ClickException as error:
        click.echo(f"compliance-bake: error: {_visible(error.format_message())}", err=True)
        sys.exit(error.exit_code)
    except click.Abort:
        click.echo("compliance-bake: aborted", err=True)
        sys.exit(130)
    sys.exit(code if isinstance(code, int) else 0)
