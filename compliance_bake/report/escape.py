"""Escaping of text the tool did not write, one function per language it lands in: a terminal
or a log (`visible`, `visible_lines`), HTML (`escape_html`, `html_cell`), Markdown (`markdown`), XML
(`xml_text`), GitHub workflow commands (`workflow_data`, `workflow_property`), JSON where
a terminal may show it (`terminal_json`) and a JSON value in a line of text (`json_line`).
Every `--json` prints through `terminal_json`, and `audit deep --json` imports nothing it does
not use (tests/cli/test_audit_startup.py), so this module imports markupsafe only when the
portal's HTML asks for it.

`html_cell` is what the portal template applies to every cell: `visible`, then `escape_html`.
The board's `runtime.escapeHTML` feature calls `escape_html`, looked up at call time, so
replacing or breaking it shows in the board and in the page alike.

`visible` escapes every terminal string that did not come from the tool itself
(server texts, bodies, fixture keys, partner ids, labels, paths): fixtures, targets and command
lines are not trusted, and an ESC, an OSC sequence or a carriage return must never reach a
terminal or a log raw, where it could recolour, retitle or overwrite what the operator reads.
C0 and C1 control characters and DEL are shown as `\\xNN`; the Unicode line and paragraph
separators and the bidirectional overrides as `\\uNNNN`, since they reorder or split a line too.
It lives here, below the CLI, because the service logs such strings as well. What counts as a
control character is `INVISIBLE`, shared with the JSON writer `terminal_json`.

`markdown` escapes text for Markdown (the `--report markdown` step summary and
`diff --markdown`, read as a pull-request comment): `visible` first, so the text stays on its
line, then every punctuation mark that could start markup, a link or HTML backslash-escaped, so
a service's runtime reads as the literal text it is, never as a heading, an image or a link; a
`-`, `.` or `:` between two digits starts nothing and stays, so a date reads as one.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from markupsafe import Markup

# C0 and C1 control characters and DEL; the Unicode line and paragraph separators and the
# bidirectional embeddings, overrides and isolates, which reorder or split a line.
INVISIBLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _shown(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(value: object) -> str:
    """The text of value with every control character as a visible escape."""
    text = "" if value is None else str(value)
    return INVISIBLE.sub(_shown, text)


MARKDOWN_SPECIAL = frozenset("\\`*_{}[]<>()#+-.!|~&:@")
# Marks that start nothing between two digits (a date, a time, a version): `2026-11-22T04:06`
# and `3.11.7` stay as written. Each starts markup only at a line's start (`-`, `1.`) or in a
# link (`http:`, `www.`), where a letter or a space is beside it.
_BETWEEN_DIGITS = re.compile(r"(?<=[0-9])[-.:](?=[0-9])")


def markdown(value: object) -> str:
    """The text of value as literal Markdown on one line (see the module's docstring)."""
    text = visible(value)
    kept = {m.start() for m in _BETWEEN_DIGITS.finditer(text)}
    return "".join(
        f"\\{ch}" if ch in MARKDOWN_SPECIAL and i not in kept else ch for i, ch in enumerate(text)
    )


def visible_lines(text: str) -> str:
    """A rendered report with each of its lines through `visible`: the line breaks the renderer
    put there stay, every other control character a value carried is shown."""
    return "\n".join(visible(line) for line in text.split("\n"))


_XML_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_text(text: str) -> str:
    """Text XML 1.0 can hold and a terminal shows as it is: each line through `visible` (JUnit
    is read in CI logs and terminals too), then a character XML forbids that is left (a lone
    surrogate, U+FFFE, U+FFFF) shown as an escape, so a hostile file name keeps the document
    well-formed. The XML writer escapes `<`, `&` and quotes itself."""
    return _XML_FORBIDDEN.sub(lambda m: f"\\x{ord(m.group()):02x}", visible_lines(text))


def workflow_data(text: str) -> str:
    """The message of a GitHub workflow command: `%`, CR and LF percent-encoded (the runner's
    own rule), so a value cannot end the command and start another on a new line."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def workflow_property(text: str) -> str:
    """A property of a workflow command (`file=`, `title=`): `workflow_data`, and `:` and `,`
    encoded too, so a value cannot end the properties or add one."""
    return workflow_data(text).replace(":", "%3A").replace(",", "%2C")


def escape_html(value: object) -> Markup:
    """Escape &, <, >, " and ' of the text form of value."""
    from markupsafe import escape

    return escape("" if value is None else str(value))


def html_cell(value: object) -> Markup:
    """The text of value as the portal shows it in a cell or an attribute: `visible` first, so
    that no control character hides text and no bidirectional override reorders what an
    officer reads (U+202E in a partner id would print it backwards), then `escape_html`."""
    return escape_html(visible(value))


def _json_escape(match: re.Match[str]) -> str:
    char = match.group()
    return char if char == "\n" else f"\\u{ord(char):04x}"


def terminal_json(value: Any, indent: int | None = 2) -> str:
    """JSON text the tool prints or writes where a terminal may show it, one writer for every
    `--json`, `--report json` and the one-line JSON error (`indent=None`). UTF-8 as it is, with
    every character `INVISIBLE` names escaped as `\\uNNNN`: JSON escapes C0 itself (the raw
    line breaks left are the indentation); DEL, C1 and the bidirectional controls are escaped
    too, the same value once parsed, so an ESC or an override in a play, a snapshot or a
    server's text never reaches a terminal raw."""
    text = json.dumps(value, indent=indent, ensure_ascii=False)
    return INVISIBLE.sub(_json_escape, text)


def json_line(value: Any, limit: int | None = None, *, compact: bool = False) -> str:
    """A value as the JSON text a reader of the document sees (true, null, "x"), never a Python
    repr, on one line (`, ` and `: ` between items; none with `compact`, as the diff's 80
    columns want): every finding, message and portal cell puts a value into its text so, and
    spells it alike. Cut with … past `limit` characters."""
    separators = (",", ":") if compact else (", ", ": ")
    text = json.dumps(value, ensure_ascii=False, separators=separators, default=str)
    return text if limit is None or len(text) <= limit else text[: limit - 1] + "…"


def not_an_option(path: str) -> str:
    """`path` as a word of a command line the tool prints for copying: `./` before a relative
    path that starts with `-` (a file or folder called `--help.csv` or
    `--allow-recorded-failures`), which the command's parser would read as an option. `-` (the
    standard input) stays."""
    return f"./{path}" if path.startswith("-") and path != "-" else path
