"""`--report FORMAT:PATH`: machine-readable reports beside the human output, as InSpec does.

Formats: `json` (the run summary: schemaVersion, the tool's version, the verdict, every case and
the command's own --json summary; schemas/run-summary.schema.json), `junit` (JUnit XML: one
test suite per suite of the outcome, one test case per case, a failure per failed case) and
`github` (GitHub Actions workflow commands: one `::error` annotation per failed case, a
`::notice` with the verdict). PATH `-` is stdout. Each file is written whole or not at all.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import click

from compliance_bake import __version__
from compliance_bake.cli.outcome import Outcome

FORMATS = ("json", "junit", "github")
SUMMARY_SCHEMA_VERSION = 1


class ReportSpec(click.ParamType):  # type: ignore[type-arg]
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
        return kind, path


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
            test = ElementTree.SubElement(
                node, "testcase", name=case.name, classname=f"compliance-bake.{suite}"
            )
            if not case.ok:
                failure = ElementTree.SubElement(test, "failure", message=case.message)
                failure.text = case.message
    root.set("tests", str(total))
    root.set("failures", str(failures))
    ElementTree.indent(root)
    document: bytes = ElementTree.tostring(root, encoding="utf-8", xml_declaration=True)
    return document + b"\n"


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


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


def _render(kind: str, outcome: Outcome) -> bytes:
    if kind == "json":
        import json

        text = json.dumps(summary_document(outcome), indent=2, ensure_ascii=False) + "\n"
        return text.encode("utf-8")
    if kind == "junit":
        return junit_bytes(outcome)
    return github_bytes(outcome)


def _write_atomically(path: Path, data: bytes) -> None:
    import tempfile

    from compliance_bake.errors import InputError

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except OSError as exc:
        raise InputError(
            f"--report: cannot write {path}: {exc.strerror}", "pass a writable PATH"
        ) from None


def write_reports(reports: tuple[tuple[str, str], ...], outcome: Outcome) -> None:
    for kind, where in reports:
        data = _render(kind, outcome)
        if where == "-":
            sys.stdout.flush()
            click.echo(data.decode("utf-8"), nl=False)
        else:
            _write_atomically(Path(where), data)
