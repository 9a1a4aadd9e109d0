"""Reading a document `verify` is given: the strict parse and the schema, as findings.

A document that cannot be read or parsed (including the strict parser's limits: depth, integer
size) is a failure naming the file, never a crash; so is a schema the validator cannot run.
"""

from __future__ import annotations

from typing import Any

from compliance_bake.inputs import schemas
from compliance_bake.inputs.jsonio import StrictJSONError, loads_pretty
from compliance_bake.inputs.schemas import SchemaViolation
from compliance_bake.verify.findings import RULE, VerifyReport


def parse_document(name: str, raw: bytes, report: VerifyReport) -> Any | None:
    """The strictly parsed document, or None after a finding naming `name`."""
    parsed = parse_pretty(name, raw, report)
    return None if parsed is None else parsed[0]


def parse_pretty(name: str, raw: bytes, report: VerifyReport) -> tuple[Any, bool] | None:
    """The strictly parsed document and whether `raw` is in the baked layout (`loads_pretty`),
    or None after a finding naming `name`."""
    try:
        return loads_pretty(raw)
    except StrictJSONError as exc:
        report.add(name, False, f"not strict JSON at {exc.where}: {exc}")
    except RecursionError:
        report.add(name, False, "not readable JSON: nested deeper than the parser's limit")
    except ValueError as exc:  # e.g. an integer longer than Python's digit limit
        report.add(name, False, f"not readable JSON: {exc}")
    return None


SchemaOutcome = SchemaViolation | str | None  # str: the exception that stopped the validator


def schema_outcome(schema: str, doc: Any) -> SchemaOutcome:
    try:
        return schemas.first_violation(schema, doc)
    except (RecursionError, ValueError) as exc:  # jsonschema-rs on a pathological document
        return type(exc).__name__


def schema_valid(  # a schema is a rule of meaning: its findings count for *compliant*
    name: str, schema: str, doc: Any, report: VerifyReport
) -> bool:
    return schema_finding(name, schema_outcome(schema, doc), report)


def schema_finding(name: str, problem: SchemaOutcome, report: VerifyReport) -> bool:
    if isinstance(problem, str):
        return report.add(name, False, f"schema: cannot validate ({problem})", RULE)
    if problem is not None:
        what = f"schema: {problem.path}: {problem.message}"
        return report.add(name, False, what, RULE, "schema")
    return report.add(name, True, "schema valid", RULE, "schema")
