"""A run's outcome as suites of cases: what the failure summary and the reporters read.

One shape for `bake snapshot`, `audit deep` and `verify`: suites (board, integrity, shadow,
zip-window, verify), each a list of cases with a name, ok and a one-line message. The JUnit
reporter writes one test case per case, the GitHub reporter one annotation per failed case, the
JSON summary all of them; the terminal's failure summary shows the failed ones.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from compliance_bake.cli.terminal import count, json_text

if TYPE_CHECKING:
    from compliance_bake.audit.run import AuditResult
    from compliance_bake.bake import BakeResult
    from compliance_bake.verify.verifier import VerifyReport

DIFFS_SHOWN = 1
PAIRS_SHOWN = 5


@dataclass(frozen=True, slots=True)
class Case:
    name: str
    ok: bool
    message: str


@dataclass(slots=True)
class Outcome:
    command: str
    ok: bool
    exit_code: int
    verdict: str  # one line: what held or what failed
    suites: dict[str, list[Case]] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)  # the command's --json summary

    def failed(self) -> list[tuple[str, Case]]:
        return [(suite, c) for suite, cases in self.suites.items() for c in cases if not c.ok]


def _differences(expected: Any, actual: Any, path: str = "$") -> list[str]:
    """Where expected and actual differ, as `path: expected X, actual Y` (JSON values)."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        found: list[str] = []
        for key in [*expected, *(k for k in actual if k not in expected)]:
            where = f"{path}.{key}"
            if key not in actual:
                found.append(f"{where}: expected {json_text(expected[key])}, actual missing")
            elif key not in expected:
                found.append(f"{where}: not expected, actual {json_text(actual[key])}")
            else:
                found += _differences(expected[key], actual[key], where)
        return found
    if isinstance(expected, list) and isinstance(actual, list) and len(expected) == len(actual):
        found = []
        for index, (e, a) in enumerate(zip(expected, actual, strict=True)):
            found += _differences(e, a, f"{path}[{index}]")
        return found
    same = type(expected) is type(actual) and expected == actual
    return [] if same else [f"{path}: expected {json_text(expected)}, actual {json_text(actual)}"]


def board_difference(row: dict[str, Any]) -> str:
    """One compact difference of a board row (and how many more there are)."""
    found = _differences(row["expectedState"], row["actualState"])
    if not found:  # strict equality can still fail on types json_text shows the same
        return "expected and actual differ in type"
    more = len(found) - DIFFS_SHOWN
    return "; ".join(found[:DIFFS_SHOWN]) + (f" (+{more} more)" if more > 0 else "")


def _word(allowed: bool) -> str:
    return "allow" if allowed else "block"


def pair_text(row: dict[str, Any]) -> str:
    """A mismatched shadow pair: who, where, real and shadow decisions, the licence."""
    licence = row["licenseStatus"] or "none"
    return (
        f"{row['state']} {row['partner']}: real {_word(row['realAllowed'])}, "
        f"shadow {_word(row['shadowAllowed'])} (licence {licence})"
    )


def _shadow_cases(rows: list[dict[str, Any]]) -> list[Case]:
    by_state: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_state.setdefault(row["state"], [])
        if not row["match"]:
            by_state[row["state"]].append(row)
    cases = []
    for state, wrong in by_state.items():
        shown = "; ".join(pair_text(r) for r in wrong[:PAIRS_SHOWN])
        more = f" (+{count(len(wrong) - PAIRS_SHOWN)} more)" if len(wrong) > PAIRS_SHOWN else ""
        message = f"{count(len(wrong))} mismatched: {shown}{more}" if wrong else "no mismatches"
        cases.append(Case(state, not wrong, message))
    return cases


def _reason_cases(by_reason: dict[str, int]) -> list[Case]:
    return [
        Case(reason, n == 0, f"{count(n)} play{'s' if n != 1 else ''}")
        for reason, n in by_reason.items()
    ]


def of_bake(result: BakeResult) -> Outcome:
    snap = result.snapshot
    suites = {
        "board": [
            Case(r["feature"], r["match"], "holds" if r["match"] else board_difference(r))
            for r in snap["enhancements"]["rows"]
        ],
        "integrity": [Case(c["id"], c["ok"], c["label"]) for c in snap["integrity"]["checks"]],
        "shadow": _shadow_cases(snap["shadow"]["rows"]),
    }
    if result.violations_by_reason is not None:
        suites["zip-window"] = _reason_cases(result.violations_by_reason)
    failed = [c.name for c in suites["integrity"] if not c.ok]
    verdict = "PASS: every check holds" if result.ok else "FAIL: " + ", ".join(failed)
    return Outcome("bake snapshot", result.ok, result.exit_code, verdict, suites, result.summary())


def of_audit(result: AuditResult) -> Outcome:
    audit = result.audit
    by_reason = {reason.value: n for reason, n in audit.by_reason.items()}
    if result.nothing_audited is not None:
        verdict = f"NOTHING AUDITED (exit 5): {audit.label}"
    elif audit.ok:
        verdict = f"PASS: {audit.label}"
    else:
        verdict = f"FAIL: zip-window, {count(audit.violation_count)} violations"
    suites = {"zip-window": _reason_cases(by_reason)}
    return Outcome("audit deep", audit.ok, result.exit_code, verdict, suites, result.summary())


def of_verify(report: VerifyReport, exit_code: int, details: dict[str, Any]) -> Outcome:
    cases = [Case(f.file, f.ok, f.what) for f in report.findings]
    failures = len(report.failures)
    if not report.ok:
        verdict = f"FAIL: {count(failures)} of {count(len(cases))} checks"
    elif not report.authentic:
        verdict = "PASS: digests consistent, NOT authenticated"  # never "verified" unchecked
    elif not report.compliant:
        verdict = "PASS: authentic; recorded failures accepted (--allow-recorded-failures)"
    else:
        verdict = "PASS: verified"
    return Outcome("verify", report.ok, exit_code, verdict, {"verify": cases}, details)
