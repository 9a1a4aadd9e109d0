"""`--report junit:PATH`: JUnit XML as Jenkins' junit-10.xsd has it.

One test suite per suite of the outcome, one test case per case, named uniquely within the run;
a failed case's `<failure>` holds its message, its full evidence and its items. The suite has
the run's `timestamp` (UTC, when the command started), `hostname` and `time`. The checks of a
run are made together, not one by one, so each suite carries the run's time and each case 0.
Every text passes `report.escape.xml_text`: a file name with a control character cannot make
the document malformed.
"""

from __future__ import annotations

from datetime import UTC, datetime

from compliance_bake.cli.outcome import Case, Outcome
from compliance_bake.report.escape import xml_text

JUNIT_ITEMS = 1000  # in a failure body


def failure_body(case: Case) -> str:
    """A failed case in full: the message, the evidence, every item (up to JUNIT_ITEMS)."""
    parts = [case.message]
    if case.detail:
        parts.append(case.detail)
    parts += case.item_lines(JUNIT_ITEMS)
    return "\n".join(parts)


def _seconds(value: float) -> str:
    return f"{value:.3f}"


def junit_bytes(outcome: Outcome, started: datetime, seconds: float, hostname: str) -> bytes:
    """The JUnit document of a run that started at `started` and took `seconds`."""
    from xml.etree import ElementTree  # here: every command's --help imports this module

    x = xml_text
    root = ElementTree.Element(
        "testsuites", name=x(f"compliance-bake {outcome.command}"), time=_seconds(seconds)
    )
    total = failures = 0
    stamp = started.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S")
    for suite, cases in outcome.suites.items():
        failed = sum(not c.ok for c in cases)
        total += len(cases)
        failures += failed
        node = ElementTree.SubElement(
            root,
            "testsuite",
            name=x(suite),
            tests=str(len(cases)),
            failures=str(failed),
            errors="0",
            skipped=str(sum(c.skipped for c in cases)),
            time=_seconds(seconds),
            timestamp=stamp,
            hostname=x(hostname),
        )
        for case in cases:
            test = ElementTree.SubElement(
                node,
                "testcase",
                name=x(case.name),
                classname=x(case.classname or f"compliance-bake.{suite}"),
                time="0",
            )
            if case.skipped:
                ElementTree.SubElement(test, "skipped", message=x(case.message))
            elif not case.ok:
                failure = ElementTree.SubElement(test, "failure", message=x(case.message))
                failure.text = x(failure_body(case))
    root.set("tests", str(total))
    root.set("failures", str(failures))
    root.set("errors", "0")
    ElementTree.indent(root)
    document: bytes = ElementTree.tostring(root, encoding="utf-8", xml_declaration=True)
    return document + b"\n"
