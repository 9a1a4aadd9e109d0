"""The questions at every boundary of the policy, for the bake to ask real and shadow.

For every (state, partner) pair with an active licence and every limit row that applies to it
at the bake's moment (the partner's own row, else the state-wide one), in this order:

- `max`, `max+0.01`: the maximum (allowed) and one cent more;
- `min`, `min-0.01`: the minimum (allowed) and one cent less (when the minimum is a cent or more);
- `bet-type`: each allowed bet type; `bet-type-refused`: one bet type the row does not list;
- `age-min`, `age-min-1`: where the target carries an age, the row's minimum age and one less;
- `zip-inside`, `zip-outside`: where the row lists ZIP prefixes and the target carries a ZIP,
  a ZIP within the first prefix and one within none;

and, per pair, `no-row`: a wager type the state lists that has no limit row (when there is one);
and, for every partner without an active licence in a state with limit rows, `unlicensed`: the
first limit row's allowed question, which the licence alone blocks.

Each question changes one field from a question the row allows: the amount is the minimum (or
the maximum, or none when the row has neither), the bet type the first allowed, the age the
minimum age, the ZIP one inside, so the rule asked about is the one that decides. A field the
target cannot carry is left out (None), and its rule is not asked. The registry's own keys are
sent for sport and market, never an alias.

With no limit rows there are no questions: the headline matrix alone is asked, and nothing here
costs anything.
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from functools import lru_cache
from typing import NamedTuple

from compliance_bake.policy.amounts import CENT
from compliance_bake.policy.model import DEFAULT_MIN_AGE, LimitRow, PolicyRegistry, Question

# The question fields a target may carry besides sport and market (a profile's `[questions]`).
AMOUNT, BET_TYPE, AGE, ZIP_CODE = "amount", "betType", "age", "zipCode"
FIELDS = (AMOUNT, BET_TYPE, AGE, ZIP_CODE)
QUESTION_FIELDS = ("sport", "market", *FIELDS)  # a whole question, as a check's query sends it
# Bet types tried, in order, for the one a row does not list.
_REFUSED_BET_TYPES = ("teaser", "parlay", "straight", "round_robin", "futures", "if_bet")


class Kind:
    MAX = "max"
    ABOVE_MAX = "max+0.01"
    MIN = "min"
    BELOW_MIN = "min-0.01"
    BET_TYPE = "bet-type"
    BET_TYPE_REFUSED = "bet-type-refused"
    AGE_MIN = "age-min"
    BELOW_AGE = "age-min-1"
    ZIP_INSIDE = "zip-inside"
    ZIP_OUTSIDE = "zip-outside"
    NO_ROW = "no-row"
    UNLICENSED = "unlicensed"


class PolicyQuestion(NamedTuple):
    """One question, its kind, and the limit row it was made from (None for `no-row`). A named
    tuple: a large registry makes millions."""

    kind: str
    question: Question
    row: LimitRow | None


def boundary_questions(
    registry: PolicyRegistry, now: int, carried: frozenset[str] = frozenset(FIELDS)
) -> list[PolicyQuestion]:
    """Every boundary question of the registry at `now`, states and partners in the registry's
    order, for a target that carries the fields `carried`."""
    if not registry.limits:
        return []
    found: list[PolicyQuestion] = []
    licences = registry.licences
    for rules in licences.states:
        state = rules.code
        wager_types = [w.partition(".") for w in rules.wager_types]
        with_rows = [(s, m) for s, _, m in wager_types if registry.rows_for(state, s, m)]
        without = [(s, m) for s, _, m in wager_types if not registry.rows_for(state, s, m)]
        if not with_rows:
            continue
        active = registry.active_partners(state)
        for partner in licences.partners:
            node = partner.node_id
            if node not in active:
                sport, market = with_rows[0]
                base = Question(state, node, sport, market)
                row = registry.row_for(base, now)
                asked = base if row is None else _allowed(row, base, carried)
                found.append(PolicyQuestion(Kind.UNLICENSED, asked, row))
                continue
            for sport, market in with_rows:
                row = registry.row_for(Question(state, node, sport, market), now)
                if row is not None:
                    found.extend(_row_questions(row, Question(state, node, sport, market), carried))
            if without:
                sport, market = without[0]
                found.append(
                    PolicyQuestion(Kind.NO_ROW, Question(state, node, sport, market), None)
                )
    return found


def _row_questions(
    row: LimitRow, base: Question, carried: frozenset[str]
) -> Iterator[PolicyQuestion]:
    special = row.special_rules
    min_age = DEFAULT_MIN_AGE if special.min_age is None else special.min_age
    prefixes = special.allowed_zip_prefixes
    allowed = _allowed(row, base, carried)

    state, partner, sport, market, amount, bet_type, age, zip_code = allowed

    # Each question is `allowed` with the one field named changed, built whole (a `_replace` per
    # question costs more than deciding it).
    def asking(
        kind: str,
        *,
        amount: Decimal | None = amount,
        bet_type: str | None = bet_type,
        age: int | None = age,
        zip_code: str | None = zip_code,
    ) -> PolicyQuestion:
        asked = Question(state, partner, sport, market, amount, bet_type, age, zip_code)
        return PolicyQuestion(kind, asked, row)

    if AMOUNT in carried:
        if row.max_wager is not None:
            yield asking(Kind.MAX, amount=row.max_wager)
            yield asking(Kind.ABOVE_MAX, amount=row.max_wager + CENT)
        if row.min_wager is not None:
            yield asking(Kind.MIN, amount=row.min_wager)
            if row.min_wager >= CENT:
                yield asking(Kind.BELOW_MIN, amount=row.min_wager - CENT)
    if BET_TYPE in carried and row.allowed_bet_types is not None:
        for allowed_type in row.allowed_bet_types:
            yield asking(Kind.BET_TYPE, bet_type=allowed_type)
        yield asking(Kind.BET_TYPE_REFUSED, bet_type=refused_bet_type(row.allowed_bet_types))
    if AGE in carried:
        yield asking(Kind.AGE_MIN, age=min_age)
        if min_age > 0:
            yield asking(Kind.BELOW_AGE, age=min_age - 1)
    if ZIP_CODE in carried and prefixes:
        yield asking(Kind.ZIP_INSIDE, zip_code=zip_inside(prefixes[0]))
        outside = zip_outside(prefixes)
        if outside is not None:
            yield asking(Kind.ZIP_OUTSIDE, zip_code=outside)


def _allowed(row: LimitRow, base: Question, carried: frozenset[str]) -> Question:
    """The question the row allows: the minimum (else the maximum), the first allowed bet type,
    the minimum age, a ZIP inside the first prefix; each only where the target carries it."""
    special = row.special_rules
    prefixes = special.allowed_zip_prefixes
    return base._replace(
        amount=(row.min_wager if row.min_wager is not None else row.max_wager)
        if AMOUNT in carried
        else None,
        bet_type=row.allowed_bet_types[0]
        if BET_TYPE in carried and row.allowed_bet_types
        else None,
        age=(DEFAULT_MIN_AGE if special.min_age is None else special.min_age)
        if AGE in carried
        else None,
        zip_code=zip_inside(prefixes[0]) if ZIP_CODE in carried and prefixes else None,
    )


def refused_bet_type(allowed: tuple[str, ...]) -> str:
    """A bet type the list does not hold: the first of a few common ones, else a made-up one."""
    for candidate in _REFUSED_BET_TYPES:
        if candidate not in allowed:
            return candidate
    return "not_" + "_".join(allowed)  # pragma: no cover - a list holding every candidate


def zip_inside(prefix: str) -> str:
    """The first 5-digit ZIP of a prefix: the prefix padded with zeros."""
    return prefix.ljust(5, "0")


@lru_cache(maxsize=1024)
def zip_outside(prefixes: tuple[str, ...]) -> str | None:
    """The first 5-digit ZIP within none of the prefixes (None when they cover every ZIP): the
    ZIPs ending in 000 first (prefixes are short), then every one. Once per list of prefixes."""
    for candidates in (range(0, 100_000, 1_000), range(100_000)):
        for number in candidates:
            candidate = f"{number:05d}"
            if not candidate.startswith(prefixes):
                return candidate
    return None
