"""Escaping of text the tool did not write: HTML for the portal's cells, visible escapes for a
terminal or a log.

`escape_html` is the function the portal template applies to every cell. The board's
`runtime.escapeHTML` feature calls this same function through `escape_html`, looked up at call time,
so replacing or breaking it shows in the board and in the page alike.

`visible` is the one escape for every terminal string that did not come from the tool itself
(server texts, bodies, fixture keys, partner ids, labels, paths): fixtures, targets and command
lines are not trusted, and an ESC, an OSC sequence or a carriage return must never reach a
terminal or a log raw, where it could recolour, retitle or overwrite what the operator reads.
C0 and C1 control characters and DEL are shown as `\\xNN`; the Unicode line and paragraph
separators and the bidirectional overrides as `\\uNNNN`, since they reorder or split a line too.
It lives here, below the CLI, because the service logs such strings as well. What counts as a
control character is `controls.INVISIBLE`, shared with the JSON writer `controls.terminal_json`.

`markdown` is the one escape for Markdown (the `--report markdown` step summary and
`diff --markdown`, read as a pull-request comment): `visible` first, so the text stays on its
line, then every punctuation mark that could start markup, a link or HTML backslash-escaped, so
a service's runtime reads as the literal text it is, never as a heading, an image or a link.
"""

from __future__ import annotations

import re

from markupsafe import Markup, escape

from compliance_bake.controls import INVISIBLE


def _shown(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(value: object) -> str:
    """The text of value with every control character as a visible escape."""
    text = "" if value is None else str(value)
    return INVISIBLE.sub(_shown, text)


MARKDOWN_SPECIAL = frozenset("\\`*_{}[]<>()#+-.!|~&:")


def markdown(value: object) -> str:
    """The text of value as literal Markdown on one line (see the module's docstring)."""
    return "".join(f"\\{ch}" if ch in MARKDOWN_SPECIAL else ch for ch in visible(value))


def escape_html(value: object) -> Markup:
    """Escape &, <, >, " and ' of the text form of value."""
    return escape("" if value is None else str(value))
