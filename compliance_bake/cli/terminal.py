"""Text for the terminal: control characters shown as escapes, numbers with separators, widths.

Fixtures and targets are not trusted: a partner id or a runtime string with ESC or an OSC
sequence must never reach the terminal raw, so every value printed goes through
`report.escape.visible`, or `safe`, which also escapes rich markup.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from compliance_bake.report.escape import visible

if TYPE_CHECKING:
    from compliance_bake.report.portal_previous import PreviousRecord


def safe(value: object) -> str:
    """visible(excerpt(value)), escaped for rich markup: every value the terminal shows."""
    from rich.markup import escape

    return escape(visible(excerpt(value)))


VALUE_CHARS = 1_000  # of one value the terminal shows: a service's reason can be megabytes


def excerpt(value: object, limit: int = VALUE_CHARS) -> str:
    """The value as text, cut after `limit` characters with a mark that says how long it is:
    what reaches the terminal is bounded, while the snapshot and every report file hold the
    value whole (they are written from the values, never from this)."""
    text = value if isinstance(value, str) else str(value)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [cut: {len(text):,} characters; the files hold it whole]"


def count(n: int) -> str:
    """A count for people: thousands separators (1,234,567)."""
    return f"{n:,}"


def counted(n: int, noun: str) -> str:
    """A count with its noun, singular for one: `1 violation`, `2 violations`."""
    return f"{count(n)} {noun}" if n == 1 else f"{count(n)} {noun}s"


def width() -> int:
    """The terminal width: $COLUMNS, else the terminal's, else 80."""
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        import shutil

        columns = shutil.get_terminal_size((80, 24)).columns
    return max(40, columns)


def previous_lines(record: PreviousRecord) -> list[str]:
    """`--previous`: the changes per class (decisions in red when any), then what was compared
    against and whether it was authenticated."""
    counts = record.counts
    decisions = f"{count(counts['decision'])} decision"
    if counts["decision"]:
        decisions = f"[bold red]{decisions}[/bold red]"
    rest = ", ".join(f"{count(counts[c])} {c}" for c in ("coverage", "self-check"))
    trust = (
        f"authenticated by {safe(record.checked)}"
        if record.authenticated
        else "[bold red]NOT AUTHENTICATED[/bold red]"
    )
    return [
        f"Since the previous snapshot: {decisions}, {rest} changes",
        f"  (listed on the portal page) previous of {safe(record.generated_at)}, {trust}",
    ]
