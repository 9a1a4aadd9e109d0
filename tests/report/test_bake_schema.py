"""The bake holds the rows it built to the snapshot schema before anything is written: a row the
schema forbids (a block with an empty reason, a decision that is not a boolean) stops the bake
with the validator's own words and place, and `out/` is not touched."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from compliance_bake import bake
from compliance_bake.inputs.fixtures import load_fixtures
from compliance_bake.inputs.models import Decision
from compliance_bake.resources import demo_fixtures_dir
from compliance_bake.targets.engine import Engine
from compliance_bake.targets.inprocess import InProcessTarget
from tests.conftest import NOW

PAIR = ("node-offshore-04", "NJ")


class _OddEngine(Engine):
    """The engine, answering one pair with `answer` (a decision nothing has type-checked)."""

    def __init__(self, registry: Any, answer: Decision) -> None:
        super().__init__(registry)
        self._answer = answer

    def check(self, partner: str, state: str, wager_type: str) -> Decision:
        if (partner, state) == PAIR:
            return self._answer
        return super().check(partner, state, wager_type)


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        (Decision(False, 403, ""), 'rows[7].reason: "" is shorter than 1 character'),
        (Decision(1, 200), 'rows[7].realAllowed: 1 is not of type "boolean"'),
    ],
    ids=["empty-reason", "allowed-as-1"],
)
def test_a_row_off_the_schema_stops_the_bake_before_out_is_written(
    tmp_path: Path, answer: Decision, words: str
) -> None:
    fixtures = demo_fixtures_dir()
    registry = load_fixtures(fixtures).registry
    out = tmp_path / "out"
    with pytest.raises(bake.ReportInvalid) as raised:
        bake.run_bake(
            fixtures_dir=fixtures,
            out_dir=out,
            now=NOW,
            secret_file=None,
            console_depth=2,
            target=InProcessTarget(_OddEngine(registry, answer)),
        )
    message = str(raised.value)
    assert "the report fails its schema at $.shadow.rows[" in message
    assert words in message, message
    assert not out.exists()
