"""The registry as one typed value: licences, limit rows and the partner facts the rules read.

`PolicyRegistry` is what every source builds (a fixtures folder today; a database through
`rows.py`'s readers) and what `decide.decide` reads. It is immutable and indexes itself once:
the limit rows by (state, sport, market) and partner, the partners' facts by node id, so a
decision is a few hash lookups.

Building one checks what a row alone cannot say (`PolicyValueError`, with the row's index and
field): every limit row's state is a regulated state, and no two active rows of one key
(state, sport, market, partner) have overlapping effective windows, since the service could not
tell which of them holds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from enum import StrEnum
from typing import NamedTuple

LICENCE_ACTIVE = "active"
LICENCE_STATUSES = ("active", "suspended", "revoked", "expired")
LIMIT_ACTIVE = "active"  # a limit row in any other status does not apply
DEFAULT_MIN_AGE = 21


class Rule(StrEnum):
    """The rule that decided a question, in the order `decide` applies them (`none`: allowed).

    `wager-type` is the registry's list of wager types per state (licences.json `wagerTypes`):
    a wager type the state does not list is blocked, before any limit row is read.
    """

    LICENCE = "licence"
    WAGER_TYPE = "wager-type"
    MAX_WAGER = "max-wager"
    MIN_WAGER = "min-wager"
    BET_TYPE = "bet-type"
    IDENTITY = "identity"
    AGE = "age"
    ZIP_PREFIX = "zip-prefix"
    NONE = "none"


class PolicyValueError(ValueError):
    """A registry fact that cannot be: the row (its index in the rows given, None for the
    registry as a whole), the field (the operator table's column name, or `special_rules.KEY`),
    what is wrong and how to fix it. Each source turns it into its own one-line error naming its
    file or table."""

    def __init__(self, row: int | None, field: str, problem: str, hint: str) -> None:
        super().__init__(f"{field}: {problem}")
        self.row = row
        self.field = field
        self.problem = problem
        self.hint = hint


@dataclass(frozen=True, slots=True)
class StateRules:
    code: str
    name: str
    wager_types: tuple[str, ...]
    # licences.json's `limits`: names and integers the status panel reports (`hasLimits`). No
    # decision reads them; the limits that decide are the limit rows (docs/fixtures.md).
    limits: Mapping[str, int]


@dataclass(frozen=True, slots=True)
class Partner:
    node_id: str
    licences: Mapping[str, str]  # state code -> licence status


@dataclass(frozen=True, slots=True)
class LicenceRegistry:
    """The licences and regulated states, as the engine and the shadow check both read them."""

    states: tuple[StateRules, ...]
    partners: tuple[Partner, ...]
    _by_state: Mapping[str, StateRules] = field(init=False, repr=False, compare=False)
    _by_partner: Mapping[str, Partner] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_state", {s.code: s for s in self.states})
        object.__setattr__(self, "_by_partner", {p.node_id: p for p in self.partners})
        if len(self._by_state) != len(self.states) or len(self._by_partner) != len(self.partners):
            raise ValueError("state codes and partner node ids must be unique")

    @property
    def regulated_states(self) -> tuple[str, ...]:
        return tuple(s.code for s in self.states)

    def state(self, code: str) -> StateRules | None:
        return self._by_state.get(code)

    def partner(self, node_id: str) -> Partner | None:
        return self._by_partner.get(node_id)

    def licence_status(self, node_id: str, state: str) -> str | None:
        partner = self._by_partner.get(node_id)
        return None if partner is None else partner.licences.get(state)


@dataclass(frozen=True, slots=True)
class SpecialRules:
    """A limit row's `special_rules` object. The totals are read and recorded, never predicted:
    they depend on the day's placed wagers, and a question is one wager on an empty day."""

    min_age: int | None = None
    require_identity_verification: bool = False
    allowed_zip_prefixes: tuple[str, ...] | None = None  # None: any ZIP
    max_daily_total: Decimal | None = None
    max_weekly_total: Decimal | None = None


@dataclass(frozen=True, slots=True)
class LimitRow:
    """One row of the operator's `regulatory_limits` table (or of limits.json).

    `partner` None is the state-wide row, else that partner's own. `max_wager` / `min_wager`
    None: no such limit. `allowed_bet_types` None: any bet type. The window is
    `effective_from <= now < effective_to`, Unix seconds; `effective_to` None is open.
    """

    policy_key: str
    status: str
    state: str
    sport: str
    market: str
    partner: str | None
    max_wager: Decimal | None
    min_wager: Decimal | None
    allowed_bet_types: tuple[str, ...] | None
    special_rules: SpecialRules
    effective_from: int
    effective_to: int | None

    @property
    def wager_type(self) -> str:
        return f"{self.sport}.{self.market}"

    @property
    def key(self) -> tuple[str, str, str, str | None]:
        """Rows of one key must not hold at the same time."""
        return (self.state, self.sport, self.market, self.partner)

    def holds_at(self, now: int) -> bool:
        return (
            self.status == LIMIT_ACTIVE
            and self.effective_from <= now
            and (self.effective_to is None or now < self.effective_to)
        )


@dataclass(frozen=True, slots=True)
class PartnerFacts:
    """What the rules read about a partner besides its licences: its profile's age and ZIP
    (geo.json, `partner_geo_profiles`) and whether its identity is verified (geo.json's
    `identityVerified`, `partner_profile_bindings.metadata_json`). A partner without facts is
    not identity-verified."""

    node_id: str
    age: int | None = None
    zip_code: str | None = None
    identity_verified: bool = False


class Question(NamedTuple):
    """One wager asked of the service and of the registry. A field left None is not carried by
    the request, and the rule that reads it is not applied (the headline question carries
    sport and market alone). A named tuple: the in-process engine builds one per check."""

    state: str
    partner: str
    sport: str
    market: str
    amount: Decimal | None = None
    bet_type: str | None = None
    age: int | None = None
    zip_code: str | None = None

    @property
    def wager_type(self) -> str:
        return f"{self.sport}.{self.market}"

    @classmethod
    def headline(cls, partner: str, state: str, wager_type: str) -> Question:
        """The headline question of a pair: the wager type (`sport.market`, split at its first
        dot)."""
        sport, _, market = wager_type.partition(".")
        return cls(state, partner, sport, market)


class Prediction(NamedTuple):
    """What the registry decides for a question: allowed, the rule that decided, its reason
    (None when allowed)."""

    allowed: bool
    rule: Rule
    reason: str | None


_Key = tuple[str, str, str]  # (state, sport, market)


@dataclass(frozen=True, slots=True)
class PolicyRegistry:
    """The whole policy: licences and states, limit rows, partner facts.

    A registry without limit rows decides on licences and the states' wager types alone, with
    the default minimum age of 21 for a question that carries an age.
    """

    licences: LicenceRegistry
    limits: tuple[LimitRow, ...] = ()
    facts: tuple[PartnerFacts, ...] = ()
    _rows: Mapping[_Key, tuple[LimitRow, ...]] = field(init=False, repr=False, compare=False)
    _facts: Mapping[str, PartnerFacts] = field(init=False, repr=False, compare=False)
    _active: Mapping[str, frozenset[str]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        states = set(self.licences.regulated_states)
        active: dict[str, set[str]] = {code: set() for code in states}
        for partner in self.licences.partners:
            for state, status in partner.licences.items():
                if status == LICENCE_ACTIVE and state in active:
                    active[state].add(partner.node_id)
        object.__setattr__(self, "_active", {code: frozenset(n) for code, n in active.items()})
        rows: dict[_Key, list[LimitRow]] = {}
        held: dict[tuple[str, str, str, str | None], list[tuple[int, LimitRow]]] = {}
        for index, row in enumerate(self.limits):
            if row.state not in states:
                raise PolicyValueError(
                    index,
                    "state_code",
                    f"{row.state} is not a regulated state of the registry",
                    "add a licence in the state or remove the row",
                )
            rows.setdefault((row.state, row.sport, row.market), []).append(row)
            if row.status != LIMIT_ACTIVE:
                continue
            for other_index, other in held.setdefault(row.key, []):
                if _overlap(row, other):
                    raise PolicyValueError(
                        index,
                        "effective_from",
                        f"the window of {row.policy_key!r} overlaps that of "
                        f"{other.policy_key!r} (row {other_index}) for "
                        f"{_key_text(row)}",
                        "end one row's effective_to at or before the other's effective_from",
                    )
            held[row.key].append((index, row))
        object.__setattr__(self, "_rows", {key: tuple(found) for key, found in rows.items()})
        by_node = {facts.node_id: facts for facts in self.facts}
        if len(by_node) != len(self.facts):
            raise ValueError("partner facts must be unique per node id")
        object.__setattr__(self, "_facts", by_node)

    def active_partners(self, state: str) -> frozenset[str]:
        """The partners holding an `active` licence in `state` (none for an unregulated one)."""
        return self._active.get(state, frozenset())

    def rows_for(self, state: str, sport: str, market: str) -> tuple[LimitRow, ...]:
        """Every row of (state, sport, market), whatever its partner, status or window."""
        return self._rows.get((state, sport, market), ())

    def has_rows(self, state: str, wager_type: str) -> bool:
        sport, _, market = wager_type.partition(".")
        return (state, sport, market) in self._rows

    def row_for(self, question: Question, now: int) -> LimitRow | None:
        """The row that applies: the partner's own active row whose window holds `now`, else
        the state-wide one, else None."""
        state_wide: LimitRow | None = None
        for row in self._rows.get((question.state, question.sport, question.market), ()):
            if not row.holds_at(now):
                continue
            if row.partner == question.partner:
                return row
            if row.partner is None:
                state_wide = row
        return state_wide

    def identity_verified(self, node_id: str) -> bool:
        facts = self._facts.get(node_id)
        return facts is not None and facts.identity_verified


def _overlap(a: LimitRow, b: LimitRow) -> bool:
    a_before_b = a.effective_to is not None and a.effective_to <= b.effective_from
    b_before_a = b.effective_to is not None and b.effective_to <= a.effective_from
    return not (a_before_b or b_before_a)


def _key_text(row: LimitRow) -> str:
    who = "state-wide" if row.partner is None else f"partner {row.partner}"
    return f"{row.state} {row.sport}/{row.market} ({who})"
