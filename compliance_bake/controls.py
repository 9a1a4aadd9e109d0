"""The characters a terminal acts on rather than shows, and the one JSON writer that escapes them.

Kept in the kernel, apart from report/escape.py (which needs markupsafe for HTML): every `--json`
prints through `terminal_json`, and `audit deep --json` imports nothing it does not use
(tests/cli/test_audit_startup.py).
"""

from __future__ import annotations

import json
import re
from typing import Any

# C0 and C1 control characters and DEL; the Unicode line and paragraph separators and the
# bidirectional embeddings, overrides and isolates, which reorder or split a line.
INVISIBLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _json_escape(match: re.Match[str]) -> str:
    char = match.group()
    return char if char == "\n" else f"\\u{ord(char):04x}"


def terminal_json(value: Any, indent: int | None = 2) -> str:
    """The one JSON text the tool prints or writes where a terminal may show it: every
    `--json`, `--report json` and the one-line JSON error (`indent=None`). UTF-8 as it is, with
    every character `INVISIBLE` names escaped as `\\uNNNN`: JSON escapes C0 itself (the raw
    line breaks left are the indentation); DEL, C1 and the bidirectional controls are escaped
    too, the same value once parsed, so an ESC or an override in a play, a snapshot or a
    server's text never reaches a terminal raw."""
    text = json.dumps(value, indent=indent, ensure_ascii=False)
    return INVISIBLE.sub(_json_escape, text)
