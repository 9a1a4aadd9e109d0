"""Past the bound, the listed plays are the first ones in the report's order, whatever the engine.

The engine returns its first groups in `sql.VIOLATION_ORDER`, and the audit sorts those by
`ViolatingPlay.sort_key` and cuts: the listing is right only while the two orders agree. Plays
here differ where orders can part: ids in code point order against case and accents, an empty
id, one id with two partners, a ZIP and a timestamp as the last tie-breakers, and a row the
reader rejects (a line and raw text, no id).
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest

from compliance_bake.audit.engines import EngineOptions
from compliance_bake.audit.violations import ViolatingPlay
from compliance_bake.audit.zip_window import run_zip_window
from compliance_bake.inputs.fixtures import load_fixtures
from compliance_bake.resources import demo_fixtures_dir
from tests._plays_helpers import play, write_csv
from tests._spark_helpers import SPARK_MASTER

NOW = datetime(2026, 11, 22, 4, 6, tzinfo=UTC)
T1, T2 = "2026-11-20T10:00:01.000Z", "2026-11-20T10:00:02.000Z"


def _plays_file(path: Path) -> Path:
    unknown = {"state": "ZZ"}  # unknown-state, in the window or not
    rows = [
        play("b", partner="a-partner", **unknown),
        play("a", partner="z-partner", **unknown),
        play("a", partner="m-partner", **unknown),
        play("é", **unknown),
        play("z", **unknown),
        play("Z", **unknown),
        play("", **unknown),
        play("ab", zip="02109", **unknown),
        play("ab", zip="02108", **unknown),
        play("ac", enriched_at=T2, **unknown),
        play("ac", enriched_at=T1, **unknown),
        play("x", zip="2108"),  # malformed-zip: another reason, ranked before unknown-state
    ]
    write_csv(path, rows)
    with path.open("a", encoding="utf-8") as handle:
        handle.write("only,three,fields\n")  # rejected by the reader: malformed-row
    return path


def _listed(path: Path, engine: str, bound: int | None) -> Counter[ViolatingPlay]:
    registry = load_fixtures(demo_fixtures_dir()).registry
    options = EngineOptions(engine, SPARK_MASTER) if engine == "spark" else EngineOptions()
    found = run_zip_window(path, registry, NOW, engine=options, bound=bound).violations
    # The report lists plays with a file line first within their reason: compare as sets.
    return Counter(ViolatingPlay(p.reason, p.play_id, None, p.partner, p.state, p.zip,
                                 p.enriched_at, p.raw) for p in found)  # fmt: skip


def _first(plays: Counter[ViolatingPlay], bound: int) -> Counter[ViolatingPlay]:
    return Counter(sorted(plays.elements(), key=ViolatingPlay.sort_key)[:bound])


@pytest.mark.parametrize("engine", ["duckdb", pytest.param("spark", marks=pytest.mark.spark)])
def test_each_bound_lists_the_first_plays_of_the_report_order(tmp_path: Path, engine: str) -> None:
    path = _plays_file(tmp_path / "plays.csv")
    every = _listed(path, engine, None)
    assert sum(every.values()) == 13
    # The orders can part here: by id `a` < `b`, by partner `b`'s < `a`'s; `Z` < `z` < `é`.
    first = sorted(every.elements(), key=ViolatingPlay.sort_key)[:4]
    assert [p.play_id for p in first] == [None, "x", None, "Z"]
    bounds = range(1, 13) if engine == "duckdb" else (2, 5, 8)
    for bound in bounds:
        assert _listed(path, engine, bound) == _first(every, bound), bound
