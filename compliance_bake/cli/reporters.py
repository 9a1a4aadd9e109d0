"""`--report FORMAT:PATH`: machine-readable reports beside the human output, as InSpec does.

Formats: `json` (the run summary: schemaVersion, the tool's version, the verdict, every case and
the command's own --json summary; schemas/run-summary.schema.json), `junit` (JUnit XML: one
test suite per suite of the outcome, one test case per case, a failure per failed case whose
body holds the full evidence and the items to fix), `github` (GitHub Actions workflow commands:
an `::error` annotation per failed case, pointing with `file=`/`line=` at the fixture or plays
line when there is one, and a `::notice` with the verdict) and `markdown` (a step summary for
`$GITHUB_STEP_SUMMARY`: the verdict, a table of the suites, the failed cases with their first
items); `diff` adds its own two, `diff-json` and `diff-markdown` (what its `--json` and
`--markdown`, their aliases, print). PATH `-` is stdout. Each file is written whole or not at all.

stdout carries one format: at most one report goes to `-`, and not with `--json`
(`check_stdout` refuses both, exit 2); with a report on `-` the human tables go to stderr.

A report never replaces a node that is not a regular file. A regular file or an absent PATH is
written whole or not at all (a temporary file beside it, renamed over it), mode 0644 like `out/`;
a FIFO or a character device (`/dev/null`, a terminal) and `-` are written into as a stream, so a
reader at the other end gets the report and the device stays a device. A symlink is followed only
when it ends at a FIFO or a character device (`/dev/stdout` on a pipe or a terminal): renaming over
it would replace the link, and writing through it would not be atomic. Anything else (a folder, a
socket, a block device) is bad input naming the path. The path is checked when the option is read,
before the command runs, and again when the report is written.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from compliance_bake.cli.outcome import Outcome


@dataclass(frozen=True, slots=True)
class Format:
    """One report format: its name in `--report NAME:PATH`, a file suffix for hints, and what
    makes the bytes of an outcome (each escapes outside text for its own language; its module is
    imported only when such a report is written)."""

    name: str
    suffix: str
    make: Callable[[Outcome], bytes]


def _json(outcome: Outcome) -> bytes:
    from compliance_bake.cli.report_json import json_bytes

    return json_bytes(outcome)


def _junit(outcome: Outcome) -> bytes:
    import socket

    from compliance_bake.cli.report_junit import junit_bytes

    started, seconds = run_clock()
    return junit_bytes(outcome, started, seconds, socket.gethostname())


def _github(outcome: Outcome) -> bytes:
    from compliance_bake.cli.report_github import github_bytes

    return github_bytes(outcome)


def _markdown(outcome: Outcome) -> bytes:
    from compliance_bake.cli.report_github import markdown_bytes

    return markdown_bytes(outcome)


def _diff_json(outcome: Outcome) -> bytes:
    """`diff`'s own JSON (schemas/diff.schema.json), what `diff --json` prints."""
    from compliance_bake.report.escape import terminal_json

    return (terminal_json(outcome.details) + "\n").encode("utf-8")


def _diff_markdown(outcome: Outcome) -> bytes:
    """`diff`'s short Markdown report, what `diff --markdown` prints."""
    from compliance_bake.report.escape import visible_lines

    return visible_lines(outcome.markdown or "").encode("utf-8")


_ALL = (
    Format("json", "json", _json),
    Format("junit", "xml", _junit),
    Format("github", "txt", _github),
    Format("markdown", "md", _markdown),
    Format("diff-json", "json", _diff_json),
    Format("diff-markdown", "md", _diff_markdown),
)
DIFF_FORMATS: dict[str, Format] = {f.name: f for f in _ALL}
FORMATS = {name: f for name, f in DIFF_FORMATS.items() if not name.startswith("diff-")}


class ReportSpec(click.ParamType):  # type: ignore[type-arg]
    name = "FORMAT:PATH"

    def __init__(self, formats: dict[str, Format] = FORMATS) -> None:
        self.formats = formats

    def convert(self, value: Any, param: Any, ctx: Any) -> tuple[str, str]:
        if isinstance(value, tuple):
            return value
        kind, sep, path = str(value).partition(":")
        if not sep or kind not in self.formats or not path:
            self.fail(
                f"{value!r} is not FORMAT:PATH with FORMAT one of {', '.join(self.formats)} "
                "(e.g. junit:reports/junit.xml, or github:- for stdout)",
                param,
                ctx,
            )
        problem = _unwritable(path)
        if problem:
            self.fail(problem, param, ctx)
        return kind, path


def _started(ctx: click.Context, _param: Any, value: Any) -> Any:
    """Note when the run started (the option is read before the command runs), for the JUnit
    suite's timestamp and time."""
    ctx.meta.setdefault("compliance_bake.started", (datetime.now(UTC), _monotonic()))
    return value


def _monotonic() -> float:
    import time

    return time.monotonic()


def check_stdout(reports: tuple[tuple[str, str], ...], as_json: bool) -> bool:
    """Refuse two formats on stdout (exit 2, before anything runs); True when a report takes
    stdout, and the human tables must then go to stderr (`human_output`)."""
    from compliance_bake.errors import InputError

    on_stdout = [kind for kind, where in reports if where == "-"]
    if len(on_stdout) > 1:
        raise InputError(
            f"--report {on_stdout[0]}:- and --report {on_stdout[1]}:- both write to stdout, "
            "which carries one format",
            f"write all but one to a file, e.g. --report {on_stdout[1]}:reports/"
            f"compliance.{DIFF_FORMATS[on_stdout[1]].suffix}",
        )
    if on_stdout and as_json:
        raise InputError(
            f"--json and --report {on_stdout[0]}:- both write to stdout, which carries one format",
            f"write the report to a file (--report {on_stdout[0]}:PATH), or drop --json",
        )
    return bool(on_stdout)


def human_output(to_stderr: bool) -> contextlib.AbstractContextManager[Any]:
    """Where the human tables go: stdout, or stderr when a report holds stdout."""
    if to_stderr:
        return contextlib.redirect_stdout(sys.stderr)
    return contextlib.nullcontext()


_STREAM = "stream"
_FILE = "file"


def _kind_of(path: str) -> str:
    """`_FILE` (write atomically), `_STREAM` (write into), or raise ValueError saying why not."""
    if path == "-":
        return _STREAM
    try:
        link = os.lstat(path)
    except FileNotFoundError:
        return _FILE
    except OSError as exc:
        raise ValueError(f"cannot inspect {path}: {exc.strerror}") from None
    if stat.S_ISREG(link.st_mode):
        return _FILE
    if stat.S_ISFIFO(link.st_mode) or stat.S_ISCHR(link.st_mode):
        return _STREAM
    if stat.S_ISLNK(link.st_mode):
        try:
            target = os.stat(path).st_mode
        except OSError:
            target = 0
        if stat.S_ISFIFO(target) or stat.S_ISCHR(target):
            return _STREAM
        raise ValueError(
            f"{path} is a symlink to something other than a FIFO or a character device; a "
            "report is not written through it (pass the real path, or - for stdout)"
        )
    raise ValueError(
        f"{path} is not a regular file, a FIFO or a character device; pass a file path, or - "
        "for stdout"
    )


def _unwritable(path: str) -> str:
    try:
        _kind_of(path)
    except ValueError as exc:
        return str(exc)
    return ""


_REPORT_HELP = (
    "Also write a report: json (the run summary), junit (JUnit XML), github (workflow "
    "annotations) or markdown (a step summary){more}; PATH - is stdout (one report at most, "
    "not with --json; the tables then go to stderr). Repeatable."
)
report_option = click.option(
    "--report",
    "reports",
    type=ReportSpec(),
    multiple=True,
    metavar="FORMAT:PATH",
    callback=_started,
    help=_REPORT_HELP.format(more=""),
)
diff_report_option = click.option(
    "--report",
    "reports",
    type=ReportSpec(DIFF_FORMATS),
    multiple=True,
    metavar="FORMAT:PATH",
    callback=_started,
    help=_REPORT_HELP.format(
        more=", diff-json (the changes, as --json prints them) or diff-markdown (as --markdown)"
    ),
)


def run_clock() -> tuple[datetime, float]:
    """When the run started and how long it took, from the note `--report` took."""
    ctx = click.get_current_context(silent=True)
    started = ctx.meta.get("compliance_bake.started") if ctx is not None else None
    if started is None:
        return datetime.now(UTC), 0.0
    at, monotonic = started
    return at, max(0.0, _monotonic() - monotonic)


def _write_stream(path: str, data: bytes) -> None:
    # No O_CREAT: the node exists; O_NOFOLLOW is not set because a symlink here was checked to
    # end at a FIFO or a character device, which cannot be renamed over by accident.
    fd = os.open(path, os.O_WRONLY | getattr(os, "O_NOCTTY", 0))
    with os.fdopen(fd, "wb") as handle:
        mode = os.fstat(handle.fileno()).st_mode
        if not (stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)):
            raise ValueError(f"{path} changed while the command ran and is no longer a stream")
        handle.write(data)


def write_reports(reports: tuple[tuple[str, str], ...], outcome: Outcome) -> None:
    from compliance_bake.errors import InputError
    from compliance_bake.inputs.atomic_write import write_whole

    for kind, where in reports:
        data = DIFF_FORMATS[kind].make(outcome)
        if where == "-":
            sys.stdout.flush()
            click.echo(data.decode("utf-8"), nl=False)
            continue
        try:
            if _kind_of(where) == _STREAM:
                _write_stream(where, data)
            else:
                path = Path(where)
                path.parent.mkdir(parents=True, exist_ok=True)
                write_whole(path, data)
        except ValueError as exc:
            raise InputError(
                f"--report: {exc}", "pass a regular file path, or - for stdout"
            ) from None
        except OSError as exc:
            raise InputError(
                f"--report: cannot write {where}: {exc.strerror}", "pass a writable PATH"
            ) from None
