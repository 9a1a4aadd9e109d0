"""Generated fixtures of many states and partners bake, verify and render; a short-counting
target is a target failure, not a silent gap in the matrix."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from compliance_bake.errors import TargetError
from compliance_bake.inputs.fixtures import load_fixtures
from compliance_bake.inputs.jsonio import loads_strict
from compliance_bake.inputs.models import Decision, LicenceRegistry, Partner, StateRules
from compliance_bake.report.shadow import run_shadow
from compliance_bake.targets.engine import Engine
from compliance_bake.targets.inprocess import InProcessTarget
from compliance_bake.targets.interface import CheckRequest, Progress
from tests.conftest import NOW, invoke
from tests.support.gen_fixtures import generate, write_fixtures


@pytest.mark.parametrize(("states", "partners"), [(5, 40), (12, 500)])
def test_generated_fixtures_bake_verify_and_match_the_registry(
    tmp_path: Path, states: int, partners: int
) -> None:
    fixtures = tmp_path / "fixtures"
    write_fixtures(fixtures, *generate(states, partners, seed=7))
    out = tmp_path / "out"
    result = invoke(
        "bake", "snapshot", "--fixtures", str(fixtures), "--out", str(out), "--now", NOW
    )
    assert result.exit_code == 0, result.output
    assert invoke("verify", str(out)).exit_code == 0
    snap = loads_strict((out / "api" / "compliance.json").read_bytes())
    rows = snap["shadow"]["rows"]
    assert len(rows) == states * partners
    registry = load_fixtures(fixtures).registry
    for row in rows:
        active = registry.licence_status(row["partner"], row["state"]) == "active"
        assert row["shadowAllowed"] is active and row["realAllowed"] is active
    page = (out / "portal" / "compliance" / "index.html").read_text(encoding="utf-8")
    assert "Totals by state" in page
    assert ('<details id="grid"' in page) is (len(rows) <= 5_000)  # the grid: small matrices


class _ShortTarget(InProcessTarget):
    """A target that silently drops its last answer (a fault the real engine cannot show)."""

    def check_many(
        self, requests: Iterable[CheckRequest], progress: Progress | None = None
    ) -> Iterator[Decision]:
        answers = list(super().check_many(requests, progress))
        return iter(answers[:-1])


def test_a_target_that_drops_answers_is_a_target_error() -> None:
    registry = LicenceRegistry(
        states=(StateRules("MA", "Massachusetts", ("basketball.totals",), {}),),
        partners=(Partner("p1", {"MA": "active"}), Partner("p2", {})),
    )
    with pytest.raises(TargetError) as caught:
        run_shadow(_ShortTarget(Engine(registry)), registry)
    assert caught.value.exit_code == 3 and "answered 1 of 2" in caught.value.message


def test_registry_refuses_duplicate_ids() -> None:
    with pytest.raises(ValueError):
        LicenceRegistry(states=(), partners=(Partner("p", {}), Partner("p", {})))
