"""The whole policy against the regulatory Bun service (tests/targets/services/bun_regulatory.ts
with LIMITS): asked at every boundary through a profile's `[questions]`
(tests/targets/profiles/bun_regulatory_questions.toml), real and shadow, with the service's own
registry read from its folder, a SQLite file, PostgreSQL's default tables and PostgreSQL under
other names through a map (tests/support/registry_db.py). The unbroken service passes; each of
its nine broken-rule switches fails the bake naming the rule, and `verify` names it too; a
registry maximum below the service's fails at an amount between them.
"""

from __future__ import annotations

import json
import shutil
import urllib.request
from collections.abc import Iterator, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from compliance_bake.policy.amounts import amount_json
from compliance_bake.policy.recorded import question_from_json
from tests.conftest import NOW, invoke
from tests.support import registry_db as reg
from tests.targets.bun_services import NOW_SECONDS, REGISTRY, regulatory_running

pytestmark = pytest.mark.service

HERE = Path(__file__).resolve().parent
PROFILE = HERE / "profiles" / "bun_regulatory_questions.toml"
HEADLINE_PROFILE = HERE / "profiles" / "bun_regulatory.toml"
POLICY = "registry/compliance-policy.json"


@pytest.fixture
def service() -> Iterator[str]:
    with regulatory_running() as url:
        yield url


def _bake(
    out: Path, url: str, profile: Path = PROFILE, registry: Sequence[str] = (str(REGISTRY),)
) -> Any:
    return invoke(
        "bake", "snapshot", "--target", url, "--target-profile", str(profile),
        "--registry", *registry, "--out", str(out), "--now", NOW,
        "--timeout", "10", "--retries", "1",
    )  # fmt: skip


def _record(out: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((out / POLICY).read_text())
    return loaded


def _ask(url: str, item: dict[str, Any]) -> dict[str, Any]:
    """The question as the profile sends it, asked again by hand."""
    question = question_from_json(item["state"], item["partner"], item["question"])
    body: dict[str, Any] = {
        "nodeId": question.partner,
        "stateCode": question.state,
        "sportId": question.sport,
        "marketId": question.market,
    }
    if question.amount is not None:
        body["wagerAmount"] = amount_json(question.amount)
    optional = {"betType": question.bet_type, "age": question.age, "zipCode": question.zip_code}
    body.update({key: value for key, value in optional.items() if value is not None})
    request = urllib.request.Request(
        f"{url}/v1/regulatory/check?shadow=true",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        said: dict[str, Any] = json.loads(answer.read())["regulatory"]
        return said


def _applying_rows() -> list[tuple[str, str, dict[str, Any]]]:
    """(state, partner, row) of each actively licensed pair and each limit row of limits.json
    that applies to it at NOW: active, in its window, the partner's own before the state's."""
    licences = json.loads((REGISTRY / "licences.json").read_text())["partners"]
    now = int(NOW_SECONDS)
    holding = [
        row for row in json.loads((REGISTRY / "limits.json").read_text())["limits"]
        if row["status"] == "active" and row["effective_from"] <= now
        and (row["effective_to"] is None or now < row["effective_to"])
    ]  # fmt: skip
    found = []
    for partner, licence in ((p["nodeId"], lic) for p in licences for lic in p["licences"]):
        if licence["status"] != "active":
            continue
        state, by_key = licence["state"], {}
        for row in holding:
            if row["state_code"] == state and row["node_id"] in (partner, None):
                key = (row["sport_id"], row["market_id"])
                if key not in by_key or row["node_id"] is not None:
                    by_key[key] = row
        found += [(state, partner, row) for row in by_key.values()]
    return found


def _boundaries(row: dict[str, Any]) -> set[tuple[str, str, object]]:
    """(kind, field, value) of the boundary questions a limit row must have."""
    cent, top, low = Decimal("0.01"), Decimal(str(row["max_wager"])), Decimal(str(row["min_wager"]))
    age = row["special_rules"].get("min_age", 21)
    amounts = {"max": top, "max+0.01": top + cent, "min": low, "min-0.01": low - cent}
    wanted = {(kind, "amount", f"{value:.2f}") for kind, value in amounts.items()}
    wanted |= {("age-min", "age", age), ("age-min-1", "age", age - 1)}
    return wanted | {("bet-type", "betType", t) for t in row["allowed_bet_types"]}


def _asked_every_boundary(questions: list[dict[str, Any]]) -> None:
    applying = _applying_rows()
    assert len(applying) == 4  # MA bay and corridor (its own row), NJ shore and corridor
    for state, partner, row in applying:
        mine = [q for q in questions if (q["state"], q["partner"]) == (state, partner)
                and (q["question"]["sport"], q["question"]["market"])
                == (row["sport_id"], row["market_id"])]  # fmt: skip
        asked = {(q["kind"], f, q["question"].get(f)) for q in mine for f in q["question"]}
        assert _boundaries(row) <= asked, (state, partner, _boundaries(row) - asked)
        refused = {q["question"]["betType"] for q in mine if q["kind"] == "bet-type-refused"}
        assert refused and not refused & set(row["allowed_bet_types"]), (state, partner)
        prefixes = tuple(row["special_rules"].get("allowed_zip_prefixes", ()))
        zips = {q["kind"]: q["question"]["zipCode"] for q in mine if q["kind"].startswith("zip-")}
        if prefixes:
            assert zips["zip-inside"].startswith(prefixes), (state, partner)
            assert not zips["zip-outside"].startswith(prefixes), (state, partner)
        else:
            assert zips == {}, (state, partner)


def _registry(form: str, request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, ...]:
    """--registry (and --registry-map) of the service's own registry in `form`: the folder, a
    SQLite file or a PostgreSQL database with the default tables, or one with other names."""
    if form == "folder":
        return (str(REGISTRY),)
    rows = reg.folder_rows(REGISTRY)
    if form == "sqlite":
        return (f"sqlite:{reg.write_sqlite(tmp_path / 'registry.db', rows=rows)}",)
    cluster = request.getfixturevalue("pg_cluster")
    if form == "postgresql":
        return (cluster.url(database=reg.postgres_database(cluster, reg.postgres_sql(rows=rows))),)
    (tmp_path / "map.toml").write_text(reg.MAP_TOML)
    sql = reg.postgres_sql(names=reg.OTHER_NAMES, columns=reg.OTHER_COLUMNS, rows=rows)
    url = cluster.url(database=reg.postgres_database(cluster, sql))
    return (url, "--registry-map", str(tmp_path / "map.toml"))


POSTGRESQL = pytest.mark.database
FORMS = ["folder", "sqlite", pytest.param("postgresql", marks=POSTGRESQL),
         pytest.param("postgresql-map", marks=POSTGRESQL)]  # fmt: skip


@pytest.mark.parametrize("form", FORMS)
def test_the_unbroken_service_passes_every_boundary_and_verify_agrees(
    form: str, service: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    run = _bake(out, service, registry=_registry(form, request, tmp_path))
    assert run.exit_code == 0, run.output
    record = _record(out)
    assert record["asked"] is True
    assert record["fields"] == ["age", "amount", "betType", "zipCode"]
    questions = record["questions"]
    assert questions and all(q["disagreements"] == [] for q in questions)
    assert all(q["shadow"] is not None for q in questions)
    _asked_every_boundary(questions)
    if form != "folder":  # the rows' pairs and the profile's [wagers], the profile's first
        wagers = ["basketball.totals", "soccer.moneyline"]
        assert [s["wagerTypes"] for s in record["registry"]["states"]] == [wagers, wagers]
        assert {(q["state"], q["question"]["sport"]) for q in questions if q["kind"] == "no-row"} \
            == {("MA", "soccer"), ("NJ", "basketball")}  # fmt: skip
    # Every recorded real answer is the service's own (asked again, its shadow path: no effect).
    for item in questions:
        said = _ask(service, item)
        assert said["allowed"] is item["real"]["allowed"], item
        assert said.get("reason") == item["real"]["reason"], item
    verified = invoke("verify", str(out))
    assert verified.exit_code == 0, verified.output


# switch -> (the disagreement's words in the outputs, its key in the record, the kinds of
# question that show it)
SWITCHES = {
    "licence": ("allowed without an active licence", "allowedWithoutLicence", {"unlicensed"}),
    "suspended": ("allowed without an active licence", "allowedWithoutLicence", {"unlicensed"}),
    "max": ("max wager not enforced", "maxWagerNotEnforced", {"max+0.01"}),
    "max-exclusive": ("blocked within the policy", "blockedWithinPolicy", {"max"}),
    "min": ("min wager not enforced", "minWagerNotEnforced", {"min-0.01"}),
    "min-exclusive": ("blocked within the policy", "blockedWithinPolicy", {"min"}),
    "bet-type": ("bet type not enforced", "betTypeNotEnforced", {"bet-type-refused"}),
    "age": ("age not enforced", "ageNotEnforced", {"age-min-1"}),
    "identity": ("identity not enforced", "identityNotEnforced", None),
}


# Each switch with the registry in its folder; one through each kind of database registry too.
BROKEN = [(switch, "folder") for switch in SWITCHES] + [
    ("max", "sqlite"),
    pytest.param("max", "postgresql-map", marks=POSTGRESQL),
]


@pytest.mark.parametrize(("switch", "form"), BROKEN)
def test_each_broken_rule_fails_the_bake_and_verify_naming_it(
    switch: str, form: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    words, key, kinds = SWITCHES[switch]
    out = tmp_path / "out"
    with regulatory_running(broken=switch) as url:
        run = _bake(out, url, registry=_registry(form, request, tmp_path))
    assert run.exit_code == 1, run.output
    failing = [q for q in _record(out)["questions"] if key in q["disagreements"]]
    assert failing, switch
    if kinds is not None:
        assert kinds <= {q["kind"] for q in failing}
    summary = run.output.split("short summary")[1]
    assert words in summary
    verified = invoke("verify", str(out))
    assert verified.exit_code == 1, verified.output
    assert f"recorded disagreement {words}" in verified.output


def test_a_registry_maximum_below_the_service_s_fails_between_them(tmp_path: Path) -> None:
    """The registry holds NJ soccer to 4000; the service takes up to 5000."""
    registry = tmp_path / "registry"
    shutil.copytree(REGISTRY, registry)
    rows = json.loads((REGISTRY / "limits.json").read_text())
    service_rows = json.loads(json.dumps(rows))
    for row in rows["limits"]:
        if row["policy_key"] == "nj-soccer":
            row["max_wager"] = 4000
    for row in service_rows["limits"]:
        if row["policy_key"] == "nj-soccer":
            row["max_wager"] = 5000
    (registry / "limits.json").write_text(json.dumps(rows))
    service_limits = tmp_path / "service-limits.json"
    service_limits.write_text(json.dumps(service_rows))
    out = tmp_path / "out"
    with regulatory_running(limits=service_limits) as url:
        run = _bake(out, url, registry=(str(registry),))
    assert run.exit_code == 1, run.output
    failing = [q for q in _record(out)["questions"] if "maxWagerNotEnforced" in q["disagreements"]]
    assert failing
    assert {q["question"]["amount"] for q in failing} == {"4000.01"}
    assert all(4000 < float(q["question"]["amount"]) < 5000 for q in failing)
    assert "max wager not enforced" in run.output


def test_without_questions_the_bake_asks_the_headline_alone_and_says_the_limits_were_not_asked(
    service: str, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    run = _bake(out, service, profile=HEADLINE_PROFILE)
    assert run.exit_code == 0, run.output
    record = _record(out)
    assert record["asked"] is False and record["questions"] == []
    assert "limits not asked" in run.output
    assert "limits not asked" in record["summary"]["label"]
    page = (out / "portal" / "compliance" / "index.html").read_text()
    assert 'id="policy-not-asked"' in page and "nothing here says they hold" in page
    assert invoke("verify", str(out)).exit_code == 0
