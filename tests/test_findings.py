"""The one result shape: a finding's severity decides what it does to a verdict, and a kind of
disagreement fails a bake exactly when its severity is FAIL."""

from __future__ import annotations

from typing import Any

import pytest

from compliance_bake.findings import FAIL, INFO, RULE, WARN, Finding, Refusal
from compliance_bake.report import disagreements
from compliance_bake.verify import source
from compliance_bake.verify.findings import VerifyReport


def _report(*findings: Finding) -> VerifyReport:
    report = VerifyReport("out", "folder", hmac_checked=True, signers=["HMAC"])
    report.findings.extend(findings)
    return report


def test_a_fail_finding_fails_the_verdict_and_a_warn_does_not() -> None:
    held = Finding("api/compliance.json", INFO, "schema valid", RULE, "schema")
    warned = Finding("api/compliance.json", WARN, "a reason not in the spec's form", RULE)
    failed = Finding("api/compliance.json", FAIL, "a rule broken", RULE, "board")
    assert _report(held, warned).ok and _report(held, warned).failures == []
    assert warned.ok and not failed.ok
    broken = _report(held, warned, failed)
    assert not broken.ok and not broken.compliant and broken.failures == [failed]


def test_the_collector_gives_a_check_that_held_info_and_one_that_did_not_fail() -> None:
    report = _report()
    assert report.add("a", True, "held") and not report.add("b", False, "broken")
    assert [f.severity for f in report.findings] == [INFO, FAIL]


def test_a_disagreement_fails_exactly_when_its_severity_is_fail() -> None:
    assert set(disagreements.SEVERITY) == set(disagreements.KINDS)
    for kind, severity in disagreements.SEVERITY.items():
        assert disagreements.fails((kind,)) is (severity == FAIL)
        assert (kind in disagreements.FAILING) is (severity == FAIL)
    assert disagreements.SEVERITY[disagreements.BLOCK_WITHOUT_REASON] == WARN
    assert disagreements.SEVERITY[disagreements.REASON_NOT_SPEC_FORM] == WARN
    assert disagreements.failing({disagreements.BLOCK_WITHOUT_REASON: 3}) == []
    assert disagreements.failing({disagreements.ALLOWED_WITHOUT_LICENCE: 1}) == [
        disagreements.KINDS[disagreements.ALLOWED_WITHOUT_LICENCE]
    ]


def test_a_validator_that_stops_is_a_refusal_not_a_string(monkeypatch: pytest.MonkeyPatch) -> None:
    def stops(name: str, document: Any) -> None:
        raise RecursionError

    monkeypatch.setattr(source.schemas, "first_violation", stops)
    got = source.schema_outcome("board", {})
    assert got == Refusal("board", "RecursionError")
    report = _report()
    from compliance_bake.verify.files import schema_finding

    assert not schema_finding("board.json", got, report)
    assert report.failures[0].what == "schema: cannot validate (RecursionError)"


def _logged(counts: dict[str, int]) -> Any:
    from compliance_bake.log.entry import entry_of

    document = {
        "generatedAt": "2026-11-01T04:06:00Z",
        "integrity": {"checks": [{"id": "c", "ok": True}], "proof": {"digest": "d"}},
        "enhancements": {"passed": 1, "total": 1},
        "shadow": {"disagreements": counts, "summary": {"mismatches": 0}, "base": "t"},
    }
    return entry_of(document, "sha", "key")["verdict"]


def test_the_log_entry_fails_by_a_kinds_severity(monkeypatch: pytest.MonkeyPatch) -> None:
    warned = {disagreements.REASON_NOT_SPEC_FORM: 2, disagreements.REAL_SHADOW_DIFFER: 0}
    assert _logged(warned)["ok"] and "shadowDisagreements" not in _logged(warned)
    monkeypatch.setitem(disagreements.SEVERITY, disagreements.REASON_NOT_SPEC_FORM, FAIL)
    assert _logged(warned) == {
        "ok": False,
        "board": {"passed": 1, "total": 1},
        "shadowMismatches": 0,
        "shadowDisagreements": {disagreements.REASON_NOT_SPEC_FORM: 2},
    }


def test_a_policy_kind_is_waivable_and_counted_by_its_severity(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from compliance_bake.report import policy, portal_waivers
    from compliance_bake.waivers.apply import policy_items

    question = {
        "state": "NJ",
        "partner": "p",
        "kind": "k",
        "question": {},
        "expected": {"rule": "r"},
    }
    record = {"questions": [{**question, "disagreements": [policy.OTHER_REASON]}]}
    assert policy.SEVERITY[policy.OTHER_REASON] == WARN
    assert policy_items(record) == [] and portal_waivers.failing_items({}, record) == 0
    monkeypatch.setitem(policy.SEVERITY, policy.OTHER_REASON, FAIL)
    assert [item.kind for item in policy_items(record)] == [policy.OTHER_REASON]
    assert portal_waivers.failing_items({}, record) == 1


def test_each_rule_is_a_finding_of_its_file_failing_with_its_places() -> None:
    from compliance_bake.verify.rules import RULES, RuleContext, check_rules

    found = check_rules({}, RuleContext(hmac_ok=True), "api/compliance.json")
    assert [f.rule for f in found] == [r.id for r, _ in RULES]
    assert all(f.file == "api/compliance.json" and f.kind == RULE for f in found)
    assert any("could not run on this document" in f.what for f in found)
    for finding, (spec_rule, _) in zip(found, RULES, strict=True):
        bare = f"rule {spec_rule.id}: {spec_rule.message}"
        assert (finding.severity == FAIL) is (finding.what != bare), finding
