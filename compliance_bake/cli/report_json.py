"""`--report json:PATH`: the run summary, per schemas/run-summary.schema.json.

The schema's version, the tool's version, the command, the verdict and exit code, every suite
with its cases (a failed case with its first items and where a file holds them), and the
command's own `--json` summary as `details`. Outside text stays as given: JSON escapes it.
"""

from __future__ import annotations

from compliance_bake import __version__
from compliance_bake.cli.outcome import Case, Outcome
from compliance_bake.report.escape import terminal_json
from compliance_bake.report.models import JsonObject

SUMMARY_SCHEMA_VERSION = 1
JSON_ITEMS = 20  # items of a failed case in the JSON summary


def json_bytes(outcome: Outcome) -> bytes:
    return (terminal_json(summary_document(outcome)) + "\n").encode("utf-8")


def _items_json(case: Case, limit: int) -> JsonObject:
    if case.ok or not case.item_count:
        return {}
    items = []
    for item in case.items[:limit]:
        entry: JsonObject = {"text": item.text}
        if item.file is not None:
            entry["file"] = item.file
        if item.line is not None:
            entry["line"] = item.line
        items.append(entry)
    return {"items": items, "moreItems": case.item_count - len(items)}


def summary_document(outcome: Outcome) -> JsonObject:
    """The run summary (`--report json:PATH`), per schemas/: JSON out."""
    return {
        "schemaVersion": SUMMARY_SCHEMA_VERSION,
        "tool": {"name": "compliance-bake", "version": __version__},
        "command": outcome.command,
        "ok": outcome.ok,
        "exitCode": outcome.exit_code,
        "verdict": outcome.verdict,
        "suites": [
            {
                "name": suite,
                "tests": len(cases),
                "failures": sum(not c.ok for c in cases),
                "cases": [
                    {
                        "name": c.name,
                        "ok": c.ok,
                        "message": c.message,
                        **({"skipped": True} if c.skipped else {}),
                        **_items_json(c, JSON_ITEMS),
                    }
                    for c in cases
                ],
            }
            for suite, cases in outcome.suites.items()
        ],
        "details": outcome.details,
    }
