"""A registry in the operator's database (`--registry sqlite:PATH`, `--registry postgresql://`,
`--registry-map FILE`): compliance_bake/inputs/registry_database.py.

The same registry (tests/support/registry_db.py) as a fixtures folder, in a real SQLite file and
in the run's real PostgreSQL cluster bakes, through the real CLI and the in-process engine, into
snapshots whose decisions and policy questions are the folder's; `verify` passes. A bad registry
is one line, exit 2, and no out folder.
"""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path
from typing import Any

import pytest

from compliance_bake.inputs.jurisdictions import NAMES
from compliance_bake.inputs.registry_source import read_registry
from compliance_bake.inputs.zipindex import zip_index
from compliance_bake.resources import demo_fixtures_dir
from tests.conftest import NOW, invoke
from tests.support import registry_db as reg

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")


def bake(out: Path, *registry: str) -> Any:
    return invoke("bake", "snapshot", "--registry", *registry, "--out", str(out), "--now", NOW)


def _json(path: Path) -> Any:
    return json.loads(path.read_text())


def decisions(out: Path) -> dict[str, Any]:
    """What the bake decided and asked, in an order of its own (a database registry lists its
    partners by node id, the folder as licences.json does), without where it was read."""
    snapshot = _json(out / "api" / "compliance.json")
    policy = _json(out / "registry" / "compliance-policy.json")
    key = lambda row: json.dumps(row, sort_keys=True)  # noqa: E731
    registry = dict(policy["registry"])
    source = registry.pop("source")
    for name, value in registry.items():
        if isinstance(value, list):
            registry[name] = sorted(value, key=key)
    return {
        "board": snapshot["enhancements"]["rows"],
        "rows": sorted(snapshot["shadow"]["rows"], key=key),
        "summary": snapshot["shadow"]["summary"],
        "geo": sorted(snapshot["geo"]["partners"], key=key),
        "questions": sorted(policy["questions"], key=key),
        "policy_summary": policy["summary"],
        "registry": registry,
        "asked": policy["asked"],
        "source": source,
    }


def _without_source(found: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in found.items() if k != "source"}


@pytest.fixture(scope="module")
def folder_bake(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    base = tmp_path_factory.mktemp("folder")
    folder = reg.write_folder(base / "registry")
    mp = pytest.MonkeyPatch()
    mp.setenv("REPORT_SIGNING_SECRET", "test-secret-0123456789abcdef0123456789abcdef")
    try:
        run = bake(base / "out", str(folder))
    finally:
        mp.undo()
    assert run.exit_code == 0, run.output
    found = decisions(base / "out")
    assert found["source"] == str(folder)
    # The registry asks real boundaries: a fractional minimum, a partner's row, bet types.
    assert {q["kind"] for q in found["questions"]} >= {
        "max+0.01",
        "min-0.01",
        "bet-type-refused",
        "zip-outside",
        "age-min-1",
    }
    assert found["policy_summary"]["questions"] > 100
    return found


def _same_as_folder(out: Path, folder_bake: dict[str, Any], source: str) -> None:
    found = decisions(out)
    assert found["source"] == source
    assert _without_source(found) == _without_source(folder_bake)
    verified = invoke("verify", str(out))
    assert verified.exit_code == 0, verified.output


def test_a_sqlite_registry_bakes_the_folders_decisions_and_verifies(
    tmp_path: Path, folder_bake: dict[str, Any]
) -> None:
    database = reg.write_sqlite(tmp_path / "registry.db")
    run = bake(tmp_path / "out", f"sqlite:{database}")
    assert run.exit_code == 0, run.output
    _same_as_folder(tmp_path / "out", folder_bake, f"sqlite:{database}")
    recorded = _json(tmp_path / "out" / "registry" / "compliance-policy.json")["registry"]
    minimum = next(r for r in recorded["limits"] if r["policy_key"] == "ma-nba-totals")
    assert minimum["min_wager"] == "0.49"  # REAL 0.49, never 0.48999999999999999


def test_a_sqlite_registry_through_a_map_with_other_names_bakes_the_same(
    tmp_path: Path, folder_bake: dict[str, Any]
) -> None:
    database = reg.write_sqlite(
        tmp_path / "registry.db", names=reg.OTHER_NAMES, columns=reg.OTHER_COLUMNS
    )
    (tmp_path / "map.toml").write_text(reg.MAP_TOML)
    run = bake(tmp_path / "out", f"sqlite:{database}", "--registry-map", str(tmp_path / "map.toml"))
    assert run.exit_code == 0, run.output
    _same_as_folder(tmp_path / "out", folder_bake, f"sqlite:{database}")


def test_a_profile_s_wager_types_come_first_in_every_state_then_the_rows(tmp_path: Path) -> None:
    """The matrix asks a state's first wager type: the profile's headline, which its [wagers]
    can ask; then each state's rows' pairs, in `id` order, none twice."""
    database = reg.write_sqlite(tmp_path / "registry.db")
    profile = ("hockey.moneyline", "soccer.moneyline")
    states = read_registry(f"sqlite:{database}", profile).registry.states
    assert [(s.code, s.wager_types) for s in states] == [
        ("MA", (*profile, "basketball.totals", "basketball.spread", "basketball.moneyline",
                "football.spread")),
        ("NJ", (*profile, "basketball.totals", "basketball.spread", "football.spread",
                "soccer.totals")),
    ]  # fmt: skip
    plain = read_registry(f"sqlite:{database}").registry.states
    assert plain[1].wager_types[0] == "basketball.totals"


def test_the_deep_audit_s_command_carries_the_map_and_reruns_the_bake_s_audit(
    tmp_path: Path,
) -> None:
    database = reg.write_sqlite(
        tmp_path / "registry.db", names=reg.OTHER_NAMES, columns=reg.OTHER_COLUMNS
    )
    map_file = tmp_path / "map.toml"
    map_file.write_text(reg.MAP_TOML)
    plays = demo_fixtures_dir() / "plays.csv"
    mapped = (f"sqlite:{database}", "--registry-map", str(map_file), "--deep-audit", str(plays))
    run = bake(tmp_path / "out", *mapped)
    assert run.exit_code == 0, run.output
    deep = _json(tmp_path / "out" / "api" / "compliance.json")["deepAudit"]
    words = shlex.split(deep["command"])
    assert words[words.index("--registry") + 1 :][:3] == list(mapped[:3])
    again = invoke(*words[1:], "--out", str(tmp_path / "audit"), "--json")
    assert again.exit_code == 0, again.output
    assert json.loads(again.output)["zipWindow"] == deep["zipWindow"]


def test_without_the_map_the_other_names_are_a_missing_table(tmp_path: Path) -> None:
    database = reg.write_sqlite(tmp_path / "registry.db", names=reg.OTHER_NAMES)
    run = bake(tmp_path / "out", f"sqlite:{database}")
    assert run.exit_code == 2
    assert len(run.output.strip().splitlines()) == 1
    assert "partner_state_licenses" in run.output and "no such table" in run.output
    assert not (tmp_path / "out").exists()


def test_every_jurisdiction_of_the_zip_index_has_a_name() -> None:
    assert set(NAMES) == set(zip_index().jurisdictions)


def _limits_with(**changes: Any) -> dict[str, list[tuple[Any, ...]]]:
    """The tables with the row id=2 (ma-nba-spread) changed: column -> stored value."""
    rows = reg.table_rows()
    index = {name: i for i, name in enumerate(reg.LIMIT_COLUMNS)}
    limits = []
    for row in rows["regulatory_limits"]:
        if row[0] == 2:
            row = tuple(changes.get(c, v) for c, v in zip(reg.LIMIT_COLUMNS, row, strict=True))
        limits.append(row)
    assert index  # the columns are the table's
    rows["regulatory_limits"] = limits
    return rows


def _overlapping() -> dict[str, list[tuple[Any, ...]]]:
    rows = reg.table_rows()
    second = list(rows["regulatory_limits"][1])
    second[0], second[1], second[11] = 99, "ma-nba-spread-2027", 1790000000
    rows["regulatory_limits"].append(tuple(second))
    return rows


BAD = {
    "maximum below minimum": (
        {"rows": _limits_with(max_wager=1.0, min_wager=5.0)},
        "regulatory_limits row id=2: max_wager: the maximum 1 is below the minimum 5",
    ),
    "malformed special_rules": (
        {"rows": _limits_with(special_rules='{"min_age": 21,')},
        "regulatory_limits row id=2: special_rules: malformed JSON",
    ),
    "bet types not an array": (
        {"rows": _limits_with(allowed_bet_types='"straight"')},
        "regulatory_limits row id=2: allowed_bet_types: 'straight' is not an array",
    ),
    "overlapping windows": (
        {"rows": _overlapping()},
        "regulatory_limits row id=99: effective_from: the window of 'ma-nba-spread-2027' "
        "overlaps that of 'ma-nba-spread'",
    ),
    "missing column": (
        {"columns": {"regulatory_limits": {"min_wager": "minimum"}}},
        "regulatory_limits has no column min_wager",
    ),
    "missing table": (
        {"names": {"partner_profile_bindings": "bindings"}},
        "cannot read partner_profile_bindings: ",
    ),
    "a bet type that is not text": (
        {"rows": _limits_with(allowed_bet_types='["straight", 7]')},
        "regulatory_limits row id=2: allowed_bet_types[1]: 7 is not a non-empty string",
    ),
}


def _one_refusal(run: Any, out: Path, words: str) -> None:
    assert run.exit_code == 2, run.output
    lines = run.output.strip().splitlines()
    assert len(lines) == 1, run.output
    assert words in lines[0], lines[0]
    assert "Traceback" not in run.output
    assert not out.exists()


@pytest.mark.parametrize("case", list(BAD), ids=list(BAD))
def test_a_bad_sqlite_registry_is_one_line_exit_2_and_writes_nothing(
    case: str, tmp_path: Path
) -> None:
    changes, words = BAD[case]
    database = reg.write_sqlite(tmp_path / "registry.db", **changes)
    run = bake(tmp_path / "out", f"sqlite:{database}")
    _one_refusal(run, tmp_path / "out", f"sqlite:{database}: {words}")


def test_a_bad_row_through_the_map_is_named_by_the_maps_table_and_column(tmp_path: Path) -> None:
    rows = _limits_with(max_wager=1.0, min_wager=5.0)
    database = reg.write_sqlite(
        tmp_path / "registry.db", names=reg.OTHER_NAMES, columns=reg.OTHER_COLUMNS, rows=rows
    )
    (tmp_path / "map.toml").write_text(reg.MAP_TOML)
    run = bake(tmp_path / "out", f"sqlite:{database}", "--registry-map", str(tmp_path / "map.toml"))
    _one_refusal(
        run,
        tmp_path / "out",
        "regulatory_limits (table op_limits) row id=2: stake_cap: the maximum",
    )


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("[regulatory_limits]\ntabel = 'x'\n", "[regulatory_limits].tabel: not a key"),
        ("[limits]\ntable = 'x'\n", "'limits' is not a key of a registry map"),
        ("[regulatory_limits]\ncolumns = {maximum = 'x'}\n", "columns.maximum: not a column"),
        ("[regulatory_limits]\ntable = 'a'\nquery = 'SELECT 1'\n", "both a table and a query"),
        ("states = 'MA'\n", "states: not a non-empty array"),
        ("states = [\n", "not TOML"),
    ],
)
def test_a_bad_map_is_one_line_exit_2(text: str, words: str, tmp_path: Path) -> None:
    database = reg.write_sqlite(tmp_path / "registry.db")
    (tmp_path / "map.toml").write_text(text)
    run = bake(tmp_path / "out", f"sqlite:{database}", "--registry-map", str(tmp_path / "map.toml"))
    _one_refusal(run, tmp_path / "out", words)


def test_a_map_with_a_folder_registry_is_refused(tmp_path: Path) -> None:
    (tmp_path / "map.toml").write_text("")
    run = invoke(
        "bake", "snapshot", "--registry-map", str(tmp_path / "map.toml"), "--out",
        str(tmp_path / "out"), "--now", NOW,
    )  # fmt: skip
    _one_refusal(run, tmp_path / "out", "names the tables of a database registry")


def test_the_maps_states_must_hold_every_licence(tmp_path: Path) -> None:
    database = reg.write_sqlite(tmp_path / "registry.db")
    (tmp_path / "map.toml").write_text('states = ["MA"]\n')
    run = bake(tmp_path / "out", f"sqlite:{database}", "--registry-map", str(tmp_path / "map.toml"))
    _one_refusal(run, tmp_path / "out", "partner_state_licenses row 2: state_code: NJ is not a")


def test_a_sqlite_file_that_is_not_there_is_one_line(tmp_path: Path) -> None:
    run = bake(tmp_path / "out", f"sqlite:{tmp_path / 'none.db'}")
    _one_refusal(run, tmp_path / "out", "no such SQLite file")


def test_the_sqlite_read_leaves_the_file_as_it_was(tmp_path: Path) -> None:
    database = reg.write_sqlite(tmp_path / "registry.db")
    before = database.read_bytes()
    assert bake(tmp_path / "out", f"sqlite:{database}").exit_code == 0
    assert database.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "registry.db"]  # no journal


# PostgreSQL: the run's cluster (tests/conftest.py `pg_cluster`), a database per test, set up as
# the superuser and read as the reading role `auditor` (pg_read_all_data).


def test_a_postgresql_registry_bakes_the_folders_decisions_and_verifies(
    pg_cluster: Any, tmp_path: Path, folder_bake: dict[str, Any]
) -> None:
    name = reg.postgres_database(pg_cluster, reg.postgres_sql())
    run = bake(tmp_path / "out", pg_cluster.url(database=name))
    assert run.exit_code == 0, run.output
    _same_as_folder(
        tmp_path / "out",
        folder_bake,
        pg_cluster.url(password=False, database=name).replace("auditor@", ""),
    )
    assert pg_cluster.password not in _everything(tmp_path / "out") + run.output


def test_a_postgresql_registry_through_a_map_with_numeric_amounts_bakes_the_same(
    pg_cluster: Any, tmp_path: Path, folder_bake: dict[str, Any]
) -> None:
    sql = reg.postgres_sql(names=reg.OTHER_NAMES, columns=reg.OTHER_COLUMNS).replace(
        "DOUBLE PRECISION", "NUMERIC(14, 2)"
    )
    name = reg.postgres_database(pg_cluster, sql)
    (tmp_path / "map.toml").write_text(reg.MAP_TOML)
    url = pg_cluster.url(database=name)
    run = bake(tmp_path / "out", url, "--registry-map", str(tmp_path / "map.toml"))
    assert run.exit_code == 0, run.output
    _same_as_folder(
        tmp_path / "out", folder_bake, f"postgresql://127.0.0.1:{pg_cluster.port}/{name}"
    )


def test_a_wrong_password_is_one_line_that_never_prints_it(pg_cluster: Any, tmp_path: Path) -> None:
    name = reg.postgres_database(pg_cluster, reg.postgres_sql())
    wrong = "Wr0ng-" + os.urandom(6).hex()
    url = f"postgresql://auditor:{wrong}@127.0.0.1:{pg_cluster.port}/{name}"
    run = bake(tmp_path / "out", url)
    _one_refusal(run, tmp_path / "out", "the server refused the login")
    assert wrong not in run.output


def test_a_superuser_login_is_refused_before_any_read(pg_cluster: Any, tmp_path: Path) -> None:
    name = reg.postgres_database(pg_cluster, reg.postgres_sql())
    run = bake(tmp_path / "out", pg_cluster.url(database=name, user="postgres"))
    _one_refusal(run, tmp_path / "out", "so it can write on the server")
    assert pg_cluster.password not in run.output


def test_the_postgresql_read_is_one_read_only_transaction(pg_cluster: Any, tmp_path: Path) -> None:
    """A map's query that writes (a sequence's nextval) is refused by the server: the read is
    READ ONLY; one that asks the isolation level sees REPEATABLE READ."""
    sql = reg.postgres_sql() + "CREATE SEQUENCE bumps; GRANT USAGE ON SEQUENCE bumps TO auditor;"
    name = reg.postgres_database(pg_cluster, sql)
    (tmp_path / "map.toml").write_text(
        '[partner_profile_bindings]\nquery = "SELECT * FROM partner_profile_bindings '
        "WHERE nextval('bumps') > 0\"\n"
    )
    run = bake(tmp_path / "out", pg_cluster.url(database=name), "--registry-map",
               str(tmp_path / "map.toml"))  # fmt: skip
    _one_refusal(run, tmp_path / "out", "read-only transaction")
    assert pg_cluster.psql("SELECT last_value FROM bumps", database=name).strip() == "1"
    (tmp_path / "map.toml").write_text(
        '[partner_profile_bindings]\nquery = "SELECT * FROM partner_profile_bindings '
        "WHERE current_setting('transaction_isolation') = 'repeatable read' "
        "AND current_setting('transaction_read_only') = 'on'\"\n"
    )
    run = bake(tmp_path / "out", pg_cluster.url(database=name), "--registry-map",
               str(tmp_path / "map.toml"))  # fmt: skip
    assert run.exit_code == 0, run.output
    policy = _json(tmp_path / "out" / "registry" / "compliance-policy.json")
    # The bindings' rows came through that WHERE: the query ran in REPEATABLE READ, READ ONLY.
    assert policy["registry"]["identityVerified"] == sorted(reg.VERIFIED)


def test_a_bad_postgresql_registry_is_one_line_naming_table_row_and_column(
    pg_cluster: Any, tmp_path: Path
) -> None:
    name = reg.postgres_database(
        pg_cluster, reg.postgres_sql(rows=_limits_with(special_rules="{min_age"))
    )
    run = bake(tmp_path / "out", pg_cluster.url(database=name))
    _one_refusal(run, tmp_path / "out", "regulatory_limits row id=2: special_rules: malformed JSON")
    assert pg_cluster.password not in run.output


def _everything(out: Path) -> str:
    return "".join(p.read_text(errors="replace") for p in out.rglob("*") if p.is_file())
