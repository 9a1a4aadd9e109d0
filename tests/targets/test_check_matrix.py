"""The shadow matrix's requests: a CheckMatrix is the requests it stands for, and the in-process
target's column-by-column path answers exactly what checking them one by one answers."""

from __future__ import annotations

import pytest

from compliance_bake.inputs.fixtures import load_fixtures
from compliance_bake.inputs.models import Decision
from compliance_bake.resources import demo_fixtures_dir
from compliance_bake.targets import inprocess
from compliance_bake.targets.engine import Engine
from compliance_bake.targets.inprocess import InProcessTarget
from compliance_bake.targets.interface import CheckMatrix, CheckRequest

COLUMNS = (("MA", "basketball.totals"), ("NJ", "soccer.moneyline"), ("ZZ", "x"), ("MA", "nope"))
PARTNERS = ("node-bay-01", "node-shore-02", "node-unknown")


def test_a_matrix_is_its_requests_states_outer() -> None:
    matrix = CheckMatrix(COLUMNS, PARTNERS)
    expected = [CheckRequest(p, s, w) for s, w in COLUMNS for p in PARTNERS]
    assert list(matrix) == expected and len(matrix) == len(expected) == 12


@pytest.mark.parametrize("chunk", [1, 2, 4096])
def test_the_in_process_matrix_path_answers_as_the_engine_does_one_by_one(
    chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(inprocess, "_PROGRESS_EVERY", chunk)
    engine = Engine(load_fixtures(demo_fixtures_dir()).registry)
    target = InProcessTarget(engine)
    matrix = CheckMatrix(COLUMNS, PARTNERS)
    one_by_one = [engine.check(*request) for request in matrix]
    assert {d.allowed for d in one_by_one} == {True, False}  # both answers occur
    progress: list[int] = []
    assert list(target.check_many(matrix, progress.append)) == one_by_one
    assert sum(progress) == len(matrix) and max(progress) <= chunk
    assert list(target.check_many(iter(list(matrix)))) == one_by_one  # the generic path


def test_the_matrix_path_asks_the_engine_check_it_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    # A check broken on purpose shows in the matrix: the path calls Engine.check, not a copy.
    def always_allowed(self: Engine, partner: str, state: str, wager_type: str) -> Decision:
        return Decision(True, 200)

    monkeypatch.setattr(Engine, "check", always_allowed)
    target = InProcessTarget(Engine(load_fixtures(demo_fixtures_dir()).registry))
    answers = list(target.check_many(CheckMatrix(COLUMNS, PARTNERS)))
    assert answers == [Decision(True, 200)] * 12
