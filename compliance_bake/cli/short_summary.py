"""The short summary that ends a failing run, as pytest's "short test summary info" does.

After the details, one line per failed case (at most SUMMARY_SHOWN a suite) with its first
ITEMS_SHOWN items (the pairs, plays or fields to fix, with `file:line` where a file holds one)
and how many more, then the verdict: the last screen of a failing run names what to fix.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from compliance_bake.cli.terminal import count, counted, excerpt, safe, width
from compliance_bake.report.escape import visible

if TYPE_CHECKING:
    from compliance_bake.cli.outcome import Case, Outcome

SUMMARY_SHOWN = 10
ITEMS_SHOWN = 3  # of a failed case


def failure_summary(outcome: Outcome, console: Any) -> None:
    """Print the short summary (when anything failed) and the verdict line on `console`."""
    from rich.markup import escape

    failed = outcome.failed()
    if failed:
        console.print(summary_rule(len(failed)))
        shown: dict[str, int] = {}
        for suite, case in failed:
            shown[suite] = shown.get(suite, 0) + 1
            if shown[suite] > SUMMARY_SHOWN:
                continue
            console.print(
                f"[red]FAILED[/red] {safe(suite)} {safe(case.name)}: {safe(case.message)}",
                soft_wrap=False,
            )
            for line in _item_lines(case):
                console.print(escape(line), soft_wrap=True)
        for suite, n in shown.items():
            if n > SUMMARY_SHOWN:
                console.print(f"… and {counted(n - SUMMARY_SHOWN, f'more {safe(suite)} failure')}")
    style = "green" if outcome.ok else "bold red"
    # Wrapped at the terminal's width: a verdict naming several disagreement kinds is long.
    console.print(f"[{style}]{safe(outcome.verdict)}[/{style}]", soft_wrap=False)


def summary_rule(failed: int) -> str:
    """The rule that opens a short summary, pytest's `==== short test summary info ====`."""
    rule = "=" * 8
    return f"[bold red]{rule} short summary: {count(failed)} failed {rule}[/]"


def _item_lines(case: Case) -> list[str]:
    """A failed case's first items, then how many more: wrapped at spaces only, each wrapped
    line indented under its bullet, so a path is never split and stays readable at 80 columns."""
    import textwrap

    texts = [f"{i.text} at {i.where()}" if i.where() else i.text for i in case.items[:ITEMS_SHOWN]]
    lines = []
    for text in texts:
        lines += textwrap.wrap(
            visible(excerpt(text)),
            width=width(),
            initial_indent="  - ",
            subsequent_indent="    ",
            break_long_words=False,
            break_on_hyphens=False,
        )
    if case.item_count > ITEMS_SHOWN:
        lines.append(f"  … and {count(case.item_count - ITEMS_SHOWN)} more")
    return lines
