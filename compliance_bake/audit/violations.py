"""Why a play breaks the ZIP-window audit, and a violating play as the report names it."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

from compliance_bake.report.escape import json_line

CELL_CHARS = 64  # of one field of a play as a report line or a table cell shows it


class Violation(Enum):
    """Why a play breaks the audit, in order of precedence (a play counts under the first)."""

    MALFORMED_ROW = "malformed-row"
    MALFORMED_TIMESTAMP = "malformed-timestamp"
    ENRICHED_IN_FUTURE = "enriched-in-future"
    MALFORMED_ZIP = "malformed-zip"
    UNKNOWN_STATE = "unknown-state"
    ZIP_NOT_REAL = "zip-not-real"
    ZIP_IN_OTHER_STATE = "zip-in-other-state"
    STATE_NOT_REGULATED = "state-not-regulated"
    PARTNER_NOT_LICENSED = "partner-not-licensed"

    @property
    def explanation(self) -> str:
        return _EXPLANATIONS[self]


_EXPLANATIONS = {
    Violation.MALFORMED_ROW: "the row cannot be read as a play: wrong column count, a row of "
    "empty fields, a NUL byte, "
    "an unterminated quote, a JSON line that is not an object with the eight keys (each once), a "
    "record past "
    "the reader's limit (64 MiB), or a record the reader did not return",
    Violation.MALFORMED_TIMESTAMP: "enriched_at is neither empty nor an ISO 8601 date-time with "
    "seconds and a UTC offset or Z",
    Violation.ENRICHED_IN_FUTURE: "enriched_at is after the audit's now",
    Violation.MALFORMED_ZIP: "zip is not exactly five digits (four digits: a lost leading zero); "
    "a zip_prefix column: not exactly three digits",
    Violation.UNKNOWN_STATE: "state is not a US jurisdiction code of the ZIP database",
    Violation.ZIP_NOT_REAL: "in the window, and zip is not a real ZIP code (a zip_prefix: no "
    "real ZIP begins with it)",
    Violation.ZIP_IN_OTHER_STATE: "in the window, and zip is a real ZIP of another state (a "
    "zip_prefix: only ZIPs of other states begin with it)",
    Violation.STATE_NOT_REGULATED: "in the window, and the state is not regulated "
    "(not in licences.json)",
    Violation.PARTNER_NOT_LICENSED: "in the window, and the partner holds no active licence in "
    "the state",
}


@dataclass(frozen=True, slots=True)
class ViolatingPlay:
    reason: Violation
    play_id: str | None
    line: int | None
    partner: str | None
    state: str | None
    zip: str | None
    enriched_at: str | None
    raw: str | None

    def as_json(self, line_name: str = "line") -> dict[str, Any]:
        """The play as the report lists it; `line_name` names its place (a file's `line`, a
        table's `rowKey`)."""
        out: dict[str, Any] = {"reason": self.reason.value, "playId": self.play_id}
        if self.line is not None:
            out[line_name] = self.line
        out.update(
            partner=self.partner, state=self.state, zip=self.zip, enrichedAt=self.enriched_at
        )
        if self.raw is not None:
            out["raw"] = self.raw[:500]
        return out

    def words(self) -> str:
        """The play as the operator looks it up: its id (or its raw text when it has none), then
        who, where and which ZIP, each field cut (the report file keeps them whole)."""
        if self.play_id is None:
            return f"row {json_line(cut(self.raw or ''))}"
        facts = [f"{name} {cut(value)}" for name, value in (
            ("partner", self.partner), ("state", self.state), ("zip", self.zip)
        ) if value is not None]  # fmt: skip
        return f"play {cut(self.play_id)}" + (f" ({', '.join(facts)})" if facts else "")

    def sort_key(self) -> tuple[object, ...]:
        """Reason, play id, line, then every field: a total order, the engines' own
        (`sql.VIOLATION_ORDER`), by which a listing past the bound is cut. The report then lists
        the plays of each reason that have a file line first, in file order (play_lines).
        Spelled out field by field: a dirty file sorts one key per violating play."""
        return (
            _RANK[self.reason],
            self.play_id or "",
            self.line or 0,
            self.partner or "",
            self.state or "",
            self.zip or "",
            self.enriched_at or "",
            self.raw or "",
        )


_RANK = {reason: i for i, reason in enumerate(Violation)}


def cut(value: object, limit: int = CELL_CHARS) -> str:
    """The value cut after `limit` characters with how many it has (the report file keeps the
    value whole): a 50 MB play id must not fill the operator's terminal."""
    text = "" if value is None else str(value)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text):,} characters; whole in the report)"
