"""The diff as text people read: the terminal (80 columns), Markdown, and its changes as the
findings the CLI's reports read. JSON is `DiffResult.as_json`. Renderers return strings; the CLI
prints them. In Markdown every text from a snapshot (its source, its time, each change's values)
goes through `report/escape.markdown`, as in every Markdown report.

Decisions come first, then coverage, self-check and cosmetic changes; each class shows its
first `limit` changes and counts the rest. An unauthenticated comparison says so on its first
and last lines.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Mapping
from typing import Any

from compliance_bake.diff.model import (
    CLASS_ORDER,
    UNAUTHENTICATED_WARNING,
    Change,
    DiffResult,
    SideInfo,
)
from compliance_bake.findings import DIFF, FAIL, WARN, Finding
from compliance_bake.report.disagreements import KINDS
from compliance_bake.report.escape import json_line
from compliance_bake.report.escape import markdown as _md
from compliance_bake.report.models import JsonValue

Shown = Callable[[object], str]
WIDTH = 80
DEFAULT_LIMIT = 10
_PAIR_WORDS = {
    "realAllowed": "real",
    "shadowAllowed": "shadow",
    "licenseStatus": "licence",
    "match": "match",
}


def _value(value: object) -> str:
    if value is True:
        return "allow"
    if value is False:
        return "block"
    if value is None:
        return "none"
    if isinstance(value, str):
        return value
    return json_line(value, compact=True)


def _flag(value: object) -> str:
    return "yes" if value is True else "no" if value is False else _value(value)


def _pair_text(
    before: Mapping[str, JsonValue] | None, after: Mapping[str, JsonValue] | None
) -> str:
    if before is None or after is None:
        row = after if before is None else before
        assert row is not None
        return f"real {_value(row['realAllowed'])}, licence {_value(row['licenseStatus'])}"
    parts = []
    for name, word in _PAIR_WORDS.items():
        if name in before and before.get(name) != after.get(name):
            show = _flag if name == "match" else _value
            parts.append(f"{word} {show(before[name])} -> {show(after[name])}")
    if "reason" in before:
        parts.append(f"reason {_value(before['reason'])} -> {_value(after['reason'])}")
    return ", ".join(parts)


def describe(change: Change) -> str:
    """One line (before truncation) saying what changed."""
    from compliance_bake.diff.policy import describe_policy

    policy = describe_policy(change)
    if policy is not None:
        return policy
    c, kind = change.concerns, change.kind
    # Read by kind: each kind's values have the shape compare.py and pairs.py give them.
    before: Any = change.before
    after: Any = change.after
    if kind.startswith("pair-"):
        verb = {"pair-added": " added:", "pair-removed": " removed:"}.get(kind, "")
        return f"{c['state']} {c['partner']}{verb} {_pair_text(before, after)}"
    if kind in ("state-added", "state-removed", "partner-added", "partner-removed"):
        what, verb = kind.split("-")
        counts = after if before is None else before
        return f"{what} {c[what]} {verb} ({counts['pairs']} pairs, {counts['allowed']} allowed)"
    if kind.startswith("board-row"):
        return _record(f"self-check {c['feature']}", kind, before, after, "; ", _flag)
    if kind.startswith("check-"):
        if kind == "check-changed":
            return f"check {c['check']}: ok {_flag(before['ok'])} -> {_flag(after['ok'])}" + (
                f" ({after['label']})"
            )
        if kind == "check-label":
            return f"check {c['check']} label: {before} -> {after}"
        return f"check {c['check']} {kind.split('-')[1]}"
    if kind.startswith("geo-"):
        return _record(f"geo {c['nodeId']}", kind, before, after, ", ", _value)
    if kind == "deep-audit-counts":
        delta = after["delta"]
        return (
            f"deepAudit in window {before['inWindowPlays']} -> {after['inWindowPlays']} "
            f"({delta['inWindowPlays']:+d}), total {before['totalPlays']} -> "
            f"{after['totalPlays']} ({delta['totalPlays']:+d})"
        )
    if kind == "deep-audit-verdict":
        return f"deepAudit zip window ok {_flag(before)} -> {_flag(after)}"
    if kind in ("deep-audit-added", "deep-audit-removed"):
        return f"deepAudit {kind.rsplit('-', 1)[1]}"
    if kind.startswith("waiver-"):
        return _waiver_text(kind, c["waiver"], before, after)
    if kind == "disagreement":
        name = c["field"].rsplit(".", 1)[-1]
        return f"{KINDS.get(name, name)}: {_value(before)} -> {_value(after)} rows"
    return f"{c.get('field', kind)}: {_value(before)} -> {_value(after)}"


def findings(result: DiffResult, per_class: int | None = None) -> list[Finding]:
    """The changes as the diff reports them, each worded by `describe`: a failure where its
    class is one of fail_on, else a warning (reported, and the diff holds), the class as the
    rule. `per_class`: only the first that many of each class."""
    return [
        Finding("", FAIL if cls in result.fail_on else WARN, describe(change), DIFF, cls.value)
        for cls in CLASS_ORDER
        for change in result.of_class(cls)[:per_class]
    ]


def _record(what: str, kind: str, before: Any, after: Any, sep: str, show: Shown) -> str:
    """A keyed record (a board row, a geo profile): each changed field `before -> after`, or
    that it was added, removed or had its notes changed."""
    if kind.endswith("-changed"):
        return f"{what}: " + sep.join(f"{k} {show(before[k])} -> {show(after[k])}" for k in before)
    return f"{what} {kind.rsplit('-', 1)[1]}"


def _waiver_text(kind: str, name: str, before: Any, after: Any) -> str:
    """`waiver added: NJ node-x until 2026-12-31 (applied, 1 item): justification`, and the
    like for removed, expired, renewed and changed."""
    verb = kind.split("-", 1)[1]
    shown = after if after is not None else before
    said = (
        f"until {shown['expires']} ({shown['status']}, {shown['matched']} items): "
        f"{shown['justification']} (approved by {shown['approvedBy']})"
    )
    if kind == "waiver-renewed":
        said = f"expires {before['expires']} -> {after['expires']}: {shown['justification']}"
    if kind == "waiver-expired":
        said = f"expired on {after['expires']}, waives nothing now: {shown['justification']}"
    return f"waiver {verb}: {name} {said}"


def _fit(text: str, width: int) -> str:
    """A path or value kept to one line: its tail, which names the file, survives."""
    return text if len(text) <= width else "..." + text[len(text) - width + 3 :]


def _item(text: str) -> list[str]:
    """One change: wrapped to the width, continuation lines indented under it."""
    return textwrap.wrap(
        text, WIDTH, initial_indent="  ", subsequent_indent="      ", break_on_hyphens=False
    ) or ["  "]


def _counts(result: DiffResult) -> str:
    return ", ".join(f"{cls.value} {result.counts[cls]}" for cls in CLASS_ORDER)


def verdict(result: DiffResult) -> str:
    failed = [c.value for c in result.failed_classes]
    if failed:
        return f"changed: {', '.join(failed)} (exit 1)"
    others = [c.value for c in CLASS_ORDER if result.counts[c]]
    tail = f" ({', '.join(others)} only)" if others else ""
    return f"no change that fails{tail} (exit 0)"


def _side_line(name: str, side: SideInfo) -> list[str]:
    held = side.authenticity
    state = "authentic" if held.authentic else "NOT AUTHENTICATED"
    return [
        name + "  " + _fit(side.source, WIDTH - len(name) - 2),
        *textwrap.wrap(
            f"generated {side.generated_at}, {side.pairs} pairs, {state}: {held.checked}",
            WIDTH,
            initial_indent="     ",
            subsequent_indent="     ",
        ),
    ]


def text_report(result: DiffResult, limit: int = DEFAULT_LIMIT) -> str:
    lines: list[str] = []
    banner = "!! " + UNAUTHENTICATED_WARNING
    if not result.authenticated:
        lines += [_fit(part, WIDTH) for part in _wrap(banner)]
    lines += _side_line("old", result.old) + _side_line("new", result.new)
    lines.append(f"changes: {_counts(result)}")
    for cls in CLASS_ORDER:
        changes = result.of_class(cls)
        if not changes:
            continue
        lines += ["", f"{cls.value} ({len(changes)})"]
        for change in changes[:limit]:
            lines += _item(describe(change))
        if len(changes) > limit:
            lines.append(f"  ... and {len(changes) - limit} more (--limit, or --json for all)")
    lines += ["", f"verdict: {verdict(result)}"]
    if not result.authenticated:
        lines += [_fit(part, WIDTH) for part in _wrap(banner)]
    return "\n".join(lines) + "\n"


def _wrap(text: str) -> list[str]:
    return textwrap.wrap(text, WIDTH, subsequent_indent="   ")


def markdown_report(result: DiffResult, limit: int = DEFAULT_LIMIT) -> str:
    lines: list[str] = []
    if not result.authenticated:
        lines += [f"> **{UNAUTHENTICATED_WARNING}**", ""]
    lines += [
        "### Compliance snapshot diff",
        "",
        f"- old: {_md(result.old.source)} generated {_md(result.old.generated_at)}"
        f" ({'authentic' if result.old.authenticity.authentic else 'not authenticated'})",
        f"- new: {_md(result.new.source)} generated {_md(result.new.generated_at)}"
        f" ({'authentic' if result.new.authenticity.authentic else 'not authenticated'})",
        f"- verdict: **{verdict(result)}**",
        "",
        "| class | changes |",
        "|---|---:|",
        *(f"| {cls.value} | {result.counts[cls]} |" for cls in CLASS_ORDER),
    ]
    for cls in CLASS_ORDER:
        changes = result.of_class(cls)
        if not changes:
            continue
        lines += ["", f"**{cls.value}** ({len(changes)})", ""]
        lines += [f"- {_md(describe(c))}" for c in changes[:limit]]
        if len(changes) > limit:
            lines.append(f"- ... and {len(changes) - limit} more")
    if not result.authenticated:
        lines += ["", f"> **{UNAUTHENTICATED_WARNING}**"]
    return "\n".join(lines) + "\n"
