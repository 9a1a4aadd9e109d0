"""Waivers never cover integrity: a drifted in-process service (`--service-fixtures
fixtures/drifted`) whose every failing disagreement is waived still fails on its shadow
mismatches (integrity.checks), in the bake and in verify."""

from __future__ import annotations

from pathlib import Path

from compliance_bake.resources import demo_fixtures_dir
from tests.conftest import NOW, invoke

PAIRS = (("MA", "node-corridor-03"), ("NJ", "node-offshore-04"), ("NJ", "node-shore-02"))


def test_every_disagreement_waived_still_fails_on_the_mismatches(tmp_path: Path) -> None:
    file = tmp_path / "waivers.toml"
    file.write_text(
        "".join(
            f'[[waiver]]\nstate = "{state}"\npartner = "{partner}"\n'
            'justification = "drift under repair"\nexpires = 2026-12-01\napprovedBy = "ops"\n'
            for state, partner in PAIRS
        )
    )
    out = tmp_path / "out"
    drifted = demo_fixtures_dir() / "drifted"
    result = invoke(
        "bake", "snapshot", "--service-fixtures", str(drifted), "--out", str(out),
        "--now", NOW, "--waivers", str(file),
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    verdict = " ".join(result.output.rsplit("FAIL: ", 1)[1].split())
    assert verdict.startswith("shadow"), verdict  # the integrity check, not a disagreement
    assert "Waivers: 3 applied" in result.output  # the disagreements themselves are waived
    verified = invoke("verify", str(out))
    assert verified.exit_code == 1, verified.output
    assert "recorded check shadow failed: Shadow mismatches 2" in verified.output
    assert "compliant with" not in verified.output
