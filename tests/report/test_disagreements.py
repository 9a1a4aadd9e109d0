"""The target's own reasons, its own shadow, and the disagreements by kind.

No code path writes a reason the target did not give: a target whose reasons are unusual text,
and one that gives none, are baked through the real CLI (the in-process engine, its `check`
replaced); each row holds what the target said, and the bake and `verify` report the same kind
(reported, not failed: the decisions agree with the registry). A target with its own shadow that
departs from its real decision is *real and shadow differ*, which fails both, even where the
registry agrees with the real decision.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from compliance_bake import bake
from compliance_bake.inputs.fixtures import load_fixtures
from compliance_bake.inputs.models import STATUS_BLOCKED, Decision
from compliance_bake.policy.model import Question
from compliance_bake.report import disagreements
from compliance_bake.report.disagreements import KINDS, RowKind, classify_row
from compliance_bake.report.models import ShadowRow
from compliance_bake.report.row_kinds import row_kinds
from compliance_bake.resources import demo_fixtures_dir
from compliance_bake.targets.engine import Engine
from compliance_bake.targets.inprocess import InProcessTarget
from compliance_bake.targets.interface import CheckRequest, Progress
from tests.conftest import NOW, SECRET, invoke

ODD = 'Nope: <b>"blocked"</b> & \u202egoodbye'  # markup, quotes and a bidi override


def _engine_saying(reason: str | None) -> Any:
    original = Engine.check

    def check(self: Engine, partner: str, state: str, wager_type: str) -> Decision:
        decision = original(self, partner, state, wager_type)
        return decision if decision.allowed else Decision(False, STATUS_BLOCKED, reason)

    return check


def _bake(out: Path) -> Any:
    return invoke("bake", "snapshot", "--out", str(out), "--now", NOW)


def _rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = json.loads((out / "api" / "compliance.json").read_text())[
        "shadow"
    ]["rows"]
    return rows


@pytest.mark.parametrize(
    ("reason", "kind"),
    [(ODD, "reason not in the specification's form"), (None, "blocked without a reason")],
)
def test_a_target_s_own_reason_or_none_is_what_the_row_holds(
    reason: str | None, kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(Engine, "check", _engine_saying(reason))
    out = tmp_path / "out"
    result = _bake(out)
    assert result.exit_code == 0, result.output
    blocked = [row for row in _rows(out) if not row["realAllowed"]]
    assert len(blocked) == 4
    for row in blocked:
        assert row.get("reason") == reason  # as given; absent when none was given
        assert ("reason" in row) is (reason is not None)
    assert f"reported: 4 {kind}" in result.output
    assert "Partner not licensed" not in (out / "api" / "compliance.json").read_text()
    verified = invoke("verify", str(out))
    assert verified.exit_code == 0, verified.output
    assert f"note: reported {kind}: 4 rows" in verified.stderr
    assert "\u202e" not in verified.stderr + result.output  # escaped for the terminal


class _SecondOpinion(InProcessTarget):
    """A target with its own shadow decision: the engine's, except that it blocks one pair."""

    def __init__(self, engine: Engine, blocked: tuple[str, str]) -> None:
        super().__init__(engine)
        self._blocked = blocked

    @property
    def has_shadow(self) -> bool:
        return True

    reason = "shadow says no"

    def _blocking(
        self, requests: Iterable[CheckRequest], progress: Progress | None
    ) -> Iterator[Decision]:
        """The engine's decisions, but `reason`'s block for the one pair."""
        for request in requests:
            if (request.state, request.partner) == self._blocked:
                yield Decision(False, STATUS_BLOCKED, self.reason)
            else:
                yield self.check(request.partner, request.state, request.wager_type)
        if progress is not None:
            progress(0)

    def shadow_many(
        self, requests: Iterable[CheckRequest], progress: Progress | None = None
    ) -> Iterator[Decision]:
        return self._blocking(requests, progress)

    def shadow_ask_many(
        self, questions: Sequence[Question], progress: Progress | None = None
    ) -> Iterator[Decision]:
        """The policy's questions: its shadow agrees with the engine there."""
        return self.ask_many(questions, progress)


def test_real_and_shadow_differ_fails_though_the_registry_agrees_with_real(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fixtures = demo_fixtures_dir()
    registry = load_fixtures(fixtures).policy  # the engine enforces the demo's limits too
    out = tmp_path / "out"
    result = bake.run_bake(
        fixtures_dir=fixtures,
        out_dir=out,
        now=NOW,
        secret_file=None,
        console_depth=2,
        target=_SecondOpinion(Engine(registry), ("MA", "node-bay-01")),
    )
    assert result.exit_code == 1
    shadow = result.snapshot.shadow
    assert dict(shadow.disagreements or {})["realShadowDiffer"] == 1
    assert sum(dict(shadow.disagreements or {}).values()) == 1  # real agrees with the registry
    assert (shadow.sources or {})["shadowAllowed"] == "target shadow check"
    row = next(r for r in shadow.rows if (r.state, r.partner) == ("MA", "node-bay-01"))
    assert (row.real_allowed, row.shadow_allowed, row.match) == (True, False, False)
    verified = invoke("verify", str(out))
    assert verified.exit_code == 1, verified.output
    assert "recorded disagreement real and shadow differ: 1 row: MA node-bay-01" in verified.output


def test_each_kind_is_classified_from_the_row_alone() -> None:
    spec = "Partner not licensed in MA"
    cases = {
        ("MA", None, True, True, None, False): ("allowedWithoutLicence",),
        ("MA", "active", False, False, spec, False): ("licenceBlockWithLicence",),
        ("MA", "active", False, False, "Identity", False): (
            "otherBlockWithLicence",
            "reasonNotInSpecForm",
        ),
        ("MA", "active", False, False, None, False): (
            "otherBlockWithLicence",
            "blockWithoutReason",
        ),
        ("MA", "active", True, False, None, True): ("realShadowDiffer",),
        ("MA", "active", True, False, None, False): (),  # a registry shadow: match says it
        ("MA", None, False, False, "Partner not licensed in NJ", False): ("reasonNotInSpecForm",),
        ("MA", None, False, False, spec, True): (),
    }
    for (state, licence, real, shadow, reason, from_target), kinds in cases.items():
        row = ShadowRow(state, "node-x", licence, real, shadow, real is shadow, reason)
        (kind,) = row_kinds([row])  # a row and its kind are classified alike, by name
        assert kind.license_status == licence and kind.reason == reason
        assert classify_row(row, from_target) == classify_row(kind, from_target) == kinds
    assert set(KINDS) == {kind for kinds in cases.values() for kind in kinds}
    counted = disagreements.count([(RowKind("MA", None, True, True, True, None), 3)], False)
    assert counted["allowedWithoutLicence"] == 3 and sum(counted.values()) == 3


def test_a_recorded_count_that_hides_a_disagreement_breaks_a_rule(baked: Path) -> None:
    from tests._resign import resign

    path = baked / "api" / "compliance.json"
    doc = json.loads(path.read_text())
    row = next(r for r in doc["shadow"]["rows"] if r["licenseStatus"] == "active")
    row.update(realAllowed=False, match=False, reason="Identity verification required in MA")
    doc["shadow"]["summary"].update(allow=3, block=5, mismatches=1)
    resign(doc, "test-secret-0123456789abcdef0123456789abcdef")
    single = baked.parent / "single.json"
    single.write_text(json.dumps(doc))
    result = invoke("verify", str(single))
    assert result.exit_code == 1, result.output
    assert "rule shadow-disagreements" in result.output
    assert "otherBlockWithLicence counted 1, recorded 0" in result.output


def test_a_snapshot_without_the_records_is_diffed_but_not_verified_as_holding(
    baked: Path, tmp_path: Path
) -> None:
    """A snapshot baked before `sources` and `disagreements` were recorded (here: taken out
    and re-signed) can still be compared; `verify` says the disagreements were not recorded."""
    from tests._resign import resign

    doc = json.loads((baked / "api" / "compliance.json").read_text())
    del doc["shadow"]["sources"], doc["shadow"]["disagreements"]
    resign(doc, "test-secret-0123456789abcdef0123456789abcdef")
    old = tmp_path / "old.json"
    old.write_text(json.dumps(doc))
    diffed = invoke("diff", str(old), str(baked / "api" / "compliance.json"))
    assert diffed.exit_code == 0, diffed.output  # the counts appear: 0 of each, no failing kind
    verified = invoke("verify", str(old))
    assert verified.exit_code == 1, verified.output
    assert "rule shadow-disagreements" in verified.output and "not recorded" in verified.output


class _OwnMind(_SecondOpinion):
    """A target with its own shadow, which always agrees with its real decision; its real
    decision blocks one licensed pair for a reason of its own (an identity block)."""

    reason = "Identity check failed"

    def check_many(
        self, requests: Iterable[CheckRequest], progress: Progress | None = None
    ) -> Iterator[Decision]:
        return self._blocking(requests, progress)


def test_a_failing_kind_without_a_mismatch_fails_in_the_log_entry_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real and the shadow decisions agree (no mismatch, every integrity check holds), but
    the service blocks a licensed pair for another reason: the bake fails (exit 1), and the log
    entry it appends says so, as the portal and `verify` do."""
    from compliance_bake.log.append import LogTarget
    from tests.log._log_helpers import ORIGIN, mint

    monkeypatch.setenv("REPORT_SIGNING_SECRET", SECRET)
    private, public = mint(tmp_path, "operator")
    fixtures = demo_fixtures_dir()
    registry = load_fixtures(fixtures).policy  # the engine enforces the demo's limits too
    licensed = next(
        (state, partner.node_id)
        for partner in registry.licences.partners
        for state, status in partner.licences.items()
        if status == "active"
    )
    out = tmp_path / "out"
    result = bake.run_bake(
        fixtures_dir=fixtures,
        out_dir=out,
        now=NOW,
        secret_file=None,
        console_depth=2,
        target=_OwnMind(Engine(registry), licensed),
        signing_key_file=private,
        log=LogTarget(tmp_path / "log", ORIGIN),
    )
    assert result.exit_code == 1
    snap = result.snapshot
    assert snap.shadow.summary.mismatches == 0 and snap.integrity.holds
    assert dict(snap.shadow.disagreements or {})["otherBlockWithLicence"] == 1
    entry = json.loads((out / "log" / "inclusion.json").read_text())["entry"]
    assert entry["verdict"]["ok"] is False, entry["verdict"]
    assert entry["verdict"]["shadowDisagreements"] == {"otherBlockWithLicence": 1}
    verified = invoke("verify", str(out), "--public-key", str(public), "--json")
    assert verified.exit_code == 1, verified.output  # not compliant; the logged entry is out/'s
    summary = json.loads(verified.stdout)
    assert summary["authentic"]["ok"] and not summary["compliant"]["ok"], summary
    assert not [f for f in summary["failures"] if "log/" in f["file"]], summary["failures"]
