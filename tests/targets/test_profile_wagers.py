"""`[shadow]` and `[wagers."TYPE"]` in a target profile (docs/target-profiles.md): checked when
the file loads (exit 2 naming the key), compiled once per wager type, a value that is exactly one
placeholder sent with its TOML type."""

from __future__ import annotations

import json

import pytest

from compliance_bake.errors import InputError
from compliance_bake.targets.profile_file import parse_profile
from tests.conftest import builtin_headline_text

CHECK = """
[check]
method = "POST"
path = "/check/{wager.market}"
query = { amount = "{wager.amount}" }
allowed = "body.allowed"
status = "body.status"

[check.body]
who = "{partner}"
amount = "{wager.amount}"
label = "{wager.sport} x{wager.amount}"
live = "{wager.live}"
"""
WAGERS = """
[wagers."basketball.totals"]
sport = "basketball"
market = "totals"
amount = 100
live = true

[wagers."soccer.moneyline"]
sport = "soccer"
market = "moneyline"
amount = 12.5
live = false
"""


def _profile(check: str = CHECK, wagers: str = WAGERS, extra: str = "") -> str:
    base = builtin_headline_text()
    head, rest = base.split("[check]", 1)
    status = rest[rest.index("[status]") :]
    return head + check + "\n" + status + extra + wagers


def _values(wager_type: str) -> dict[str, str]:
    return {"partner": "p 1", "state": "MA", "wagerType": wager_type}


def test_a_value_that_is_one_placeholder_keeps_its_toml_type() -> None:
    profile = parse_profile(_profile(), "p.toml")
    totals = profile.check.for_wager("basketball.totals")
    body = json.loads(totals.body_bytes(_values("basketball.totals")) or b"")
    assert body == {"who": "p 1", "amount": 100, "label": "basketball x100", "live": True}
    assert totals.target(_values("basketball.totals")) == "/check/totals?amount=100"
    soccer = profile.check.for_wager("soccer.moneyline")
    assert json.loads(soccer.body_bytes(_values("soccer.moneyline")) or b"")["amount"] == 12.5
    with pytest.raises(InputError) as caught:
        profile.check.for_wager("football.spread")
    assert '[wagers."football.spread"]' in caught.value.message
    with pytest.raises(InputError) as missing:
        profile.missing_wagers(["basketball.totals", "football.spread"])
    assert missing.value.message.startswith("p.toml: [check] uses {wager.NAME}")


@pytest.mark.parametrize(
    ("wagers", "words"),
    [
        (WAGERS.replace("amount = 100\n", ""), "has no `amount`"),
        (WAGERS.replace('sport = "soccer"', 'sport = "{state}"'), "without braces"),
        (WAGERS.replace("live = false", "live = [1]"), "must be a string"),
        ('[wagers]\n"x" = 1\n', '[wagers."x"] must be a table'),
    ],
)
def test_a_bad_wager_table_is_refused_when_the_profile_loads(wagers: str, words: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_profile(_profile(wagers=wagers), "p.toml")
    assert words in caught.value.message and caught.value.exit_code == 2


def test_wager_placeholders_are_only_for_check_and_shadow() -> None:
    status = '[status]\npath = "/s/{wager.sport}"\n'
    text = _profile().replace('[status]\nmethod = "GET"\npath = "/api/compliance/status"', status)
    with pytest.raises(InputError) as caught:
        parse_profile(text, "p.toml")
    assert "unknown placeholder {wager.sport}" in caught.value.message


def test_shadow_takes_the_keys_of_check_and_nothing_else() -> None:
    shadow = CHECK.replace("[check", "[shadow").replace("/check/", "/shadow/")
    profile = parse_profile(_profile(extra=shadow), "p.toml")
    assert profile.shadow is not None and profile.shadow.name == "shadow"
    assert profile.shadow.answers == frozenset((200, 403))
    assert (
        profile.shadow.for_wager("soccer.moneyline").target(_values("soccer.moneyline"))
        == "/shadow/moneyline?amount=12.5"
    )
    assert parse_profile(_profile(), "p.toml").shadow is None
    with pytest.raises(InputError) as caught:
        bad = shadow.replace('status = "body.status"', 'status = "body.status"\nruntime = "b"')
        parse_profile(_profile(extra=bad), "p.toml")
    assert "unknown key [shadow] runtime" in caught.value.message


def test_the_built_in_profile_asks_a_headline_question_with_none_of_the_question_s_fields() -> None:
    """Every `{wager.NAME}` of its [check] is mapped by [questions] and it has no [wagers]
    table: the headline check sends the spec's three parameters, a question its own fields."""
    from compliance_bake.policy.model import Question
    from compliance_bake.targets.http import HttpTarget
    from compliance_bake.targets.profile_file import builtin_profile

    check = builtin_profile().check
    values = _values("basketball.totals")
    assert check.for_wager("basketball.totals").target(values) == (
        "/api/compliance/check?partner=p%201&state=MA&wagerType=basketball.totals"
    )
    builtin_profile().missing_wagers(["basketball.totals", "soccer.moneyline"])  # none missing
    question = Question("MA", "p 1", "basketball", "totals", age=20)
    with HttpTarget("http://127.0.0.1:9") as target:  # never connects
        asked = target._question_operation(check, question).target(values)
    assert asked.endswith("wagerType=basketball.totals&sport=basketball&market=totals&age=20")
