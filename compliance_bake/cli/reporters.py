"""`--report FORMAT:PATH`: machine-readable reports beside the human output, as InSpec does.

Formats: `json` (the run summary: schemaVersion, the tool's version, the verdict, every case and
the command's own --json summary; schemas/run-summary.schema.json), `junit` (JUnit XML: one
test suite per suite of the outcome, one test case per case, a failure per failed case) and
`github` (GitHub Actions workflow commands: one `::error` annotation per failed case, a
`::notice` with the verdict). PATH `-` is stdout.

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
import re
import stat
import sys
from pathlib import Path
from typing import Any

import click

from compliance_bake import __version__
from compliance_bake.cli.outcome import Outcome
from compliance_bake.cli.terminal import plain
from compliance_bake.report.escape import INVISIBLE

FORMATS = ("json", "junit", "github")
SUMMARY_SCHEMA_VERSION = 1


class ReportSpec(click.ParamType):
    name = "FORMAT:PATH"

    def convert(self, value: Any, param: Any, ctx: Any) -> tuple[str, str]:
        if isinstance(value, tuple):
            return value
        kind, sep, path = str(value).partition(":")
        if not sep or kind not in FORMATS or not path:
            self.fail(
                f"{value!r} is not FORMAT:PATH with FORMAT one of {', '.join(FORMATS)} "
                "(e.g. junit:reports/junit.xml, or github:- for stdout)",
                param,
                ctx,
            )
        problem = _unwritable(path)
        if problem:
            self.fail(problem, param, ctx)
        return kind, path


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


report_option = click.option(
    "--report",
    "reports",
    type=ReportSpec(),
    multiple=True,
    metavar="FORMAT:PATH",
    help="Also write a report: json (the run summary), junit (JUnit XML) or github (workflow "
    "annotations); PATH - is stdout. Repeatable.",
)


def summary_document(outcome: Outcome) -> dict[str, Any]:
    return {
        "schemaVersion": SUMMARY_SCHEMA_VERSION,
        "tool": {"name": "compliance-bake", "version": __version__},
        "command": outcome.command,
        "ok": outcome.ok,
        "exitCode": outcome.exit_code,
        "verdict": outcome.verdict,
        "suites": [
            {
                "name": suite,
                "tests": len(cases),
                "failures": sum(not c.ok for c in cases),
                "cases": [{"name": c.name, "ok": c.ok, "message": c.message} for c in cases],
            }
            for suite, cases in outcome.suites.items()
        ],
        "details": outcome.details,
    }


def junit_bytes(outcome: Outcome) -> bytes:
    from xml.etree import ElementTree  # here: every command's --help imports this module

    root = ElementTree.Element("testsuites", name=f"compliance-bake {outcome.command}")
    total = failures = 0
    for suite, cases in outcome.suites.items():
        failed = sum(not c.ok for c in cases)
        total += len(cases)
        failures += failed
        node = ElementTree.SubElement(
            root, "testsuite", name=suite, tests=str(len(cases)), failures=str(failed), errors="0"
        )
        for case in cases:
            # XML 1.0 cannot carry most control characters: they are shown as escapes.
            name, message = plain(case.name), plain(case.message)
            test = ElementTree.SubElement(
                node, "testcase", name=name, classname=f"compliance-bake.{plain(suite)}"
            )
            if not case.ok:
                failure = ElementTree.SubElement(test, "failure", message=message)
                failure.text = message
    root.set("tests", str(total))
    root.set("failures", str(failures))
    ElementTree.indent(root)
    return ElementTree.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"


def _escape_data(text: str) -> str:
    # GitHub's own encoding first (a line break stays one), then the terminal escape: the
    # workflow log is a terminal that honours ANSI sequences.
    return plain(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_bytes(outcome: Outcome) -> bytes:
    lines = [
        f"::error title={_escape_property(f'{suite}: {case.name}')}::{_escape_data(case.message)}"
        for suite, case in outcome.failed()
    ]
    level = "notice" if outcome.ok else "error"
    lines.append(
        f"::{level} title={_escape_property('compliance-bake ' + outcome.command)}::"
        f"{_escape_data(outcome.verdict)}"
    )
    return ("\n".join(lines) + "\n").encode("utf-8")


def _json_escape(match: re.Match[str]) -> str:
    char = match.group()
    return char if char == "\n" else f"\\u{ord(char):04x}"


def _render(kind: str, outcome: Outcome) -> bytes:
    if kind == "json":
        import json

        text = json.dumps(summary_document(outcome), indent=2, ensure_ascii=False) + "\n"
        # JSON escapes C0 itself (the raw line breaks are the indentation); DEL, C1 and the
        # bidirectional controls are escaped too (the same value once parsed), as the report
        # may be written to a terminal.
        return INVISIBLE.sub(_json_escape, text).encode("utf-8")
    if kind == "junit":
        return junit_bytes(outcome)
    return github_bytes(outcome)


def _write_atomically(path: Path, data: bytes) -> None:
    import tempfile

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


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

    for kind, where in reports:
        data = _render(kind, outcome)
        if where == "-":
            sys.stdout.flush()
            click.echo(data.decode("utf-8"), nl=False)
            continue
        try:
            if _kind_of(where) == _STREAM:
                _write_stream(where, data)
            else:
                _write_atomically(Path(where), data)
        except ValueError as exc:
            raise InputError(
                f"--report: {exc}", "pass a regular file path, or - for stdout"
            ) from None
        except OSError as exc:
            raise InputError(
                f"--report: cannot write {where}: {exc.strerror}", "pass a writable PATH"
            ) from None
