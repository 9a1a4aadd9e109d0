"""The waiver file (`--waivers FILE`, TOML): read through inputs/files, checked whole before
anything is asked of a target, each refusal one line naming the file, the line of its
`[[waiver]]` and the fix (exit 2, nothing written).

The file's waivers hold from the bake's clock: an expiry more than `MAX_DAYS` ahead is refused
(a waiver is an exception with an end, renewed on purpose); an expiry already passed is read,
waives nothing and is named in every output as expired, so the bake fails on what it covered
and says why (docs/waivers.md says why this is not refused).
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from compliance_bake.errors import InputError
from compliance_bake.inputs.files import read_regular_file
from compliance_bake.policy import questions
from compliance_bake.policy.amounts import AmountError, parse_amount
from compliance_bake.policy.model import Rule
from compliance_bake.report import disagreements, policy

WAIVERS_OPTION = "--waivers"
MAX_BYTES = 1 << 20
MAX_DAYS = 365
# The kinds a waiver may name: a disagreement kind of either record, or a policy rule id.
RULE_IDS = tuple(rule.value for rule in Rule if rule is not Rule.NONE)
KINDS = tuple(dict.fromkeys([*disagreements.FAILING, *policy.FAILING, *RULE_IDS]))
# The question fields that narrow a waiver to policy questions (policy/recorded.question_json),
# and `question`, the boundary question's kind (`max+0.01`, ...).
QUESTION_FIELDS = (*questions.QUESTION_FIELDS, "question")
REQUIRED = ("state", "partner", "justification", "expires", "approvedBy")
KEYS = frozenset([*REQUIRED, "kind", *QUESTION_FIELDS])
_TABLE = re.compile(r"^\s*\[\[\s*waiver\s*\]\]")


@dataclass(frozen=True, slots=True)
class Waiver:
    """One `[[waiver]]`: the pair, what narrows it, why, until when and by whom."""

    line: int  # of its `[[waiver]]` in the file
    state: str
    partner: str
    kind: str | None
    question: Mapping[str, str]  # narrowing fields, each as `field_text` words it
    justification: str
    expires: date
    approved_by: str

    def expired(self, today: date) -> bool:
        """A waiver holds through its expiry day (UTC) and waives nothing after it."""
        return today > self.expires

    @property
    def key(self) -> tuple[object, ...]:
        return (self.state, self.partner, self.kind, tuple(sorted(self.question.items())))

    def words(self) -> str:
        """`NJ node-x identityNotEnforced [amount=5000.01]`: the waiver as outputs name it."""
        narrow = "" if self.kind is None else f" {self.kind}"
        fields = ", ".join(f"{k}={v}" for k, v in self.question.items())
        return f"{self.state} {self.partner}{narrow}" + (f" [{fields}]" if fields else "")

    def to_json(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "state": self.state,
            "partner": self.partner,
            "kind": self.kind,
            "question": dict(self.question),
            "justification": self.justification,
            "expires": self.expires.isoformat(),
            "approvedBy": self.approved_by,
        }

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Waiver:
        return cls(
            doc["line"],
            doc["state"],
            doc["partner"],
            doc["kind"],
            dict(doc["question"]),
            doc["justification"],
            date.fromisoformat(doc["expires"]),
            doc["approvedBy"],
        )


@dataclass(frozen=True, slots=True)
class WaiverFile:
    name: str  # the file's name, as the snapshot records it
    sha3: str  # SHA3-256 of its bytes
    waivers: tuple[Waiver, ...]


def field_text(name: str, value: object) -> str:
    """A question field's value in one form, whichever way it was written (TOML or a record):
    an amount as its exact decimal to the cent, anything else as its text."""
    if name == "amount":
        amount = parse_amount(value)
        return format(amount.quantize(Decimal("0.01")), "f")
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def read_waivers(path: Path, clock: datetime, states: Collection[str]) -> WaiverFile:
    """The file's waivers, every one checked against the bake's clock and the registry's
    states; InputError (exit 2) on the first that is bad."""
    missing = InputError(
        f"{path}: no such waiver file",
        f"pass the TOML file of [[waiver]] tables to {WAIVERS_OPTION}",
    )
    raw = read_regular_file(path, max_bytes=MAX_BYTES, what="waiver file", missing=missing)
    try:
        text = raw.decode("utf-8")
        doc = tomllib.loads(text)
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text", "save the waiver file as UTF-8") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{path}: not TOML: {exc}", "fix the TOML syntax") from None
    unknown = sorted(set(doc) - {"waiver"})
    if unknown:
        raise InputError(
            f"{path}: unknown top-level key {unknown[0]!r}",
            "a waiver file holds only [[waiver]] tables",
        )
    tables = doc.get("waiver", [])
    if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
        raise InputError(f"{path}: `waiver` is not an array of tables", "write each as [[waiver]]")
    lines = [n for n, line in enumerate(text.splitlines(), start=1) if _TABLE.match(line)]
    if len(lines) != len(tables):  # an inline array of tables has no line to name
        raise InputError(
            f"{path}: waivers written as an inline array",
            "write each waiver as its own [[waiver]] table, so every refusal can name its line",
        )
    today = clock.date()
    found: list[Waiver] = []
    seen: dict[tuple[object, ...], int] = {}
    for index, table in enumerate(tables):
        line = lines[index]
        waiver = _waiver(f"{path}:{line}: [[waiver]]", line, table, today, states)
        if waiver.key in seen:
            raise InputError(
                f"{path}:{line}: [[waiver]] repeats the waiver at line {seen[waiver.key]} "
                f"({waiver.words()})",
                "keep one waiver per state, partner, kind and question fields",
            )
        seen[waiver.key] = line
        found.append(waiver)
    return WaiverFile(path.name, hashlib.sha3_256(raw).hexdigest(), tuple(found))


def _text(where: str, table: Mapping[str, Any], key: str) -> str:
    value = table.get(key)
    if value is None:
        raise InputError(f"{where}: no {key}", f'add {key} = "..." (required)')
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"{where}: {key} is not a non-empty string", f'write {key} = "..."')
    return value


def _waiver(
    where: str, line: int, table: Mapping[str, Any], today: date, states: Collection[str]
) -> Waiver:
    unknown = sorted(set(table) - KEYS)
    if unknown:
        raise InputError(
            f"{where}: unknown key {unknown[0]!r}",
            "a waiver has state, partner, kind, "
            + ", ".join(QUESTION_FIELDS)
            + ", justification, expires and approvedBy",
        )
    state = _text(where, table, "state")
    if state not in states:
        raise InputError(
            f"{where}: unknown state {state!r}",
            "name a state of the registry: " + ", ".join(sorted(states)),
        )
    partner = _text(where, table, "partner")
    kind = table.get("kind")
    if kind is not None and kind not in KINDS:
        raise InputError(
            f"{where}: unknown kind {kind!r}",
            "name a disagreement kind or a policy rule id: " + ", ".join(KINDS),
        )
    question: dict[str, str] = {}
    for name in QUESTION_FIELDS:
        if name in table:
            try:
                question[name] = field_text(name, table[name])
            except AmountError as exc:
                raise InputError(
                    f"{where}: amount: {exc}", "write an amount of whole cents"
                ) from None
    if "expires" not in table:
        raise InputError(f"{where}: no expires", "add expires = YYYY-MM-DD (a TOML date, required)")
    expires = table["expires"]
    if isinstance(expires, datetime) or not isinstance(expires, date):
        raise InputError(
            f"{where}: expires is not a TOML date", "write expires = YYYY-MM-DD, unquoted"
        )
    latest = today + timedelta(days=MAX_DAYS)
    if expires > latest:
        raise InputError(
            f"{where}: expires {expires.isoformat()} is more than {MAX_DAYS} days after the "
            f"bake's clock ({today.isoformat()})",
            f"set expires to {latest.isoformat()} or earlier, and renew the waiver when it ends",
        )
    return Waiver(
        line,
        state,
        partner,
        kind,
        question,
        _text(where, table, "justification"),
        expires,
        _text(where, table, "approvedBy"),
    )
