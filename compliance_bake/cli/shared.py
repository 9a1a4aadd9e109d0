"""What the group and every command share: the help formatter, the exit-code footers, and the
end of a run that may have audited nothing.

Its own module so that the commands and the group (which registers them) both import it, and
neither imports the other. Help wraps to the terminal ($COLUMNS, at most 100 columns); the
`\\b` blocks (examples, footers) are kept under 78 columns so they never wrap mid-token at 80.
Each command's footer lists only the exit codes it can give: `exit_codes(0, 2, 3)`.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any, NoReturn

import click
from click import _textwrap

_MEANINGS = {
    0: "done, every check holds",
    1: "done, and a check failed",
    2: "bad usage or bad input: nothing written",
    3: "the target failed (unreachable, timed out, malformed): nothing written",
    4: "internal error (a bug: please report it with the -v output)",
    5: "nothing audited: no play in the window (--allow-empty-window accepts it)",
}


class _SpacesOnlyWrapper(_textwrap.TextWrapper):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.update(break_on_hyphens=False, break_long_words=False)
        super().__init__(*args, **kwargs)


@contextmanager
def _spaces_only() -> Iterator[None]:
    """Click wraps help with a TextWrapper that breaks words at hyphens and splits words longer
    than a line, cutting paths and option names that readers copy. `click.formatting.wrap_text`
    looks the wrapper class up in `click._textwrap` on each call and takes no switch, so the
    class is swapped for one that wraps at spaces only while help is written."""
    saved = _textwrap.TextWrapper
    _textwrap.TextWrapper = _SpacesOnlyWrapper  # type: ignore[misc]
    try:
        yield
    finally:
        _textwrap.TextWrapper = saved  # type: ignore[misc]


class HelpFormatter(click.HelpFormatter):
    """Click's help formatter, wrapping at spaces only, so every token in help can be copied."""

    def write_text(self, text: str) -> None:
        with _spaces_only():
            super().write_text(text)

    def write_dl(
        self, rows: Iterable[tuple[str, str]], col_max: int = 30, col_spacing: int = 2
    ) -> None:
        with _spaces_only():
            super().write_dl(rows, col_max, col_spacing)


def exit_codes(*codes: int, zero: str = "", one: str = "", two: str = "", three: str = "") -> str:
    """The footer for a command that can exit with codes; `zero`..`three` refine what they mean."""
    refined = {code: text for code, text in enumerate((zero, one, two, three)) if text}
    meanings = _MEANINGS | refined
    lines = [f"  {code}  {meanings[code]}" for code in codes]
    return "\b\nExit codes:\n" + "\n".join(lines)


def finish(exit_code: int, nothing_audited: str | None) -> NoReturn:
    """Ends `bake snapshot` and `audit deep`: when no play fell in the window, why (on stderr,
    escaped for the terminal: it names the operator's plays source), then the exit code."""
    if nothing_audited is not None:
        from compliance_bake.report.escape import visible

        click.echo(f"compliance-bake: {visible(nothing_audited)}", err=True)
    sys.exit(exit_code)


# What a command that checks nothing (mint, list, revoke, serve) means by 0.
DONE = "done"

# Every code, for the group's own help.
EXIT_CODES = exit_codes(
    0,
    1,
    2,
    3,
    4,
    5,
    one="a check failed (self-checks, shadow, integrity, ZIP window, verify)",
    two="bad usage or bad input (option, fixture, secret): nothing written",
)
