"""The in-process engine's decisions, reasons and panels on a small registry."""

from __future__ import annotations

from compliance_bake.inputs.models import LicenceRegistry, Partner, StateRules
from compliance_bake.targets.engine import Engine


def _registry() -> LicenceRegistry:
    return LicenceRegistry(
        states=(
            StateRules("MA", "Massachusetts", ("basketball.totals",), {"maxStakeUsd": 1}),
            StateRules("NJ", "New Jersey", ("soccer.moneyline",), {}),
        ),
        partners=(Partner("p1", {"MA": "active", "NJ": "suspended"}), Partner("p2", {})),
    )


def test_engine_decisions() -> None:
    engine = Engine(_registry())
    assert engine.check("p1", "MA", "basketball.totals").as_json() == {
        "allowed": True,
        "status": 200,
    }
    assert engine.check("p1", "NJ", "soccer.moneyline").as_json() == {
        "allowed": False,
        "status": 403,
        "reason": "Partner not licensed in NJ",
    }
    assert engine.check("p2", "MA", "basketball.totals").status == 403
    assert (
        engine.check("p1", "MA", "soccer.moneyline").reason
        == "Wager type soccer.moneyline not permitted in MA"
    )
    assert engine.check("p1", "NY", "basketball.totals").status == 403
    assert engine.health().states == ("MA", "NJ")
    panel = engine.status("NJ", "p2")
    assert (panel.ok, panel.license_status, panel.has_limits) == (True, "unlicensed", False)
