"""What the group and every command share: click's context settings and the exit-code footers.

Its own module so that the commands and the group (which registers them) both import it, and
neither imports the other. Help wraps to the terminal ($COLUMNS, at most 100 columns); the
`\\b` blocks (examples, footers) are kept under 78 columns so they never wrap mid-token at 80.
Each command's footer lists only the exit codes it can give: `exit_codes(0, 2, 3)`.
"""

from __future__ import annotations

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}

_MEANINGS = {
    0: "done, every check holds",
    1: "done, and a check failed",
    2: "bad usage or bad input: nothing written",
    3: "the target failed (unreachable, timed out, malformed): nothing written",
    4: "internal error (a bug: please report it with the -v output)",
    5: "nothing audited: no play in the window (--allow-empty-window accepts it)",
}


def exit_codes(*codes: int, zero: str = "", one: str = "", two: str = "", three: str = "") -> str:
    """The footer for a command that can exit with codes; `zero`..`three` refine what they mean."""
    refined = {code: text for code, text in enumerate((zero, one, two, three)) if text}
    meanings = _MEANINGS | refined
    lines = [f"  {code}  {meanings[code]}" for code in codes]
    return "\b\nExit codes:\n" + "\n".join(lines)


# Every code, for the group's own help.
EXIT_CODES = exit_codes(
    0,
    1,
    2,
    3,
    4,
    one="done, and a check failed (board, shadow, integrity, ZIP window, verify)",
    two="bad usage or bad input (option, fixture, secret): nothing written",
)
