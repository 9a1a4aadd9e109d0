"""`--report github:PATH` and `--report markdown:PATH`: what GitHub Actions reads.

`github_bytes` writes workflow commands: an `::error` per failed case, at the `file=`/`line=`
of its first item that a file holds (a fixture, a plays file), then one per further placed item,
then the verdict. `markdown_bytes` writes a step summary for `$GITHUB_STEP_SUMMARY`: the verdict,
the suites in a table, the failed cases with their first items. Text from fixtures, plays and
targets is untrusted: control characters become escapes, and in Markdown every mark that could
start markup or HTML is backslash-escaped.
"""

from __future__ import annotations

from compliance_bake.cli.outcome import Outcome
from compliance_bake.report.escape import markdown as _md
from compliance_bake.report.escape import visible, workflow_data, workflow_property

GITHUB_ITEMS = 5  # annotations and listed items of a failed case (GitHub shows 10 a step)
MARKDOWN_ITEMS = 5
MARKDOWN_CASES = 50  # failed cases listed in the step summary (its limit is 1 MiB)


def _annotation(title: str, message: str, file: str | None = None, line: int | None = None) -> str:
    props = []
    if file is not None:
        props.append(f"file={workflow_property(file)}")
        if line is not None:
            props.append(f"line={line}")
    props.append(f"title={workflow_property(title)}")
    return f"::error {','.join(props)}::{workflow_data(message)}"


def github_bytes(outcome: Outcome) -> bytes:
    """One `::error` per failed case (at the first item's file and line when it has one, its
    first items in the message), one more per further item with a place (up to GITHUB_ITEMS),
    then the verdict."""
    lines = []
    for suite, case in outcome.failed():
        title = visible(f"{suite}: {case.name}")
        placed = [item for item in case.items[:GITHUB_ITEMS] if item.file is not None]
        first = placed[0] if placed else None
        message = "\n".join(visible(x) for x in [case.message, *case.item_lines(GITHUB_ITEMS)])
        lines.append(_annotation(title, message, *((first.file, first.line) if first else ())))
        lines += [
            _annotation(title, visible(item.text), item.file, item.line) for item in placed[1:]
        ]
    level = "notice" if outcome.ok else "error"
    lines.append(
        f"::{level} title={workflow_property('compliance-bake ' + outcome.command)}::"
        f"{workflow_data(visible(outcome.verdict))}"
    )
    return ("\n".join(lines) + "\n").encode("utf-8")


def markdown_bytes(outcome: Outcome) -> bytes:
    """A GitHub step summary: the verdict, the suites in a table, then each failed case with
    its first items (at most MARKDOWN_CASES cases, the rest counted)."""
    mark = "✅" if outcome.ok else "❌"
    lines = [
        f"## {mark} compliance-bake {_md(outcome.command)}",
        "",
        f"**{_md(outcome.verdict)}** (exit {outcome.exit_code})",
        "",
        "| suite | checks | failed |",
        "| --- | ---: | ---: |",
    ]
    for suite, cases in outcome.suites.items():
        lines.append(f"| {_md(suite)} | {len(cases):,} | {sum(not c.ok for c in cases):,} |")
    failed = outcome.failed()
    if failed:
        lines += ["", f"### What failed ({len(failed):,})", ""]
        for suite, case in failed[:MARKDOWN_CASES]:
            lines.append(f"- **{_md(suite)} {_md(case.name)}**: {_md(case.message)}")
            for item in case.items[:MARKDOWN_ITEMS]:
                where = f" at {_md(item.where())}" if item.where() else ""
                lines.append(f"  - {_md(item.text)}{where}")
            if case.item_count > MARKDOWN_ITEMS:
                lines.append(f"  - … and {case.item_count - MARKDOWN_ITEMS:,} more")
        if len(failed) > MARKDOWN_CASES:
            lines.append(f"- … and {len(failed) - MARKDOWN_CASES:,} more failed cases")
    return ("\n".join(lines) + "\n").encode("utf-8")
