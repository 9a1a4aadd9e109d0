"""Target profiles: how to ask a given compliance service the specification's three questions
(health, check, status) and where each spec field sits in its answers (`compliance-bake docs
target-profiles`).

A profile is a TOML file. Each operation names a method, a path, and optionally a query, a JSON
body, headers, the HTTP statuses that carry an answer and whether a POST may be retried; each
field is a JMESPath expression over `{"body": <the JSON answer>, "http": {"status": <int>,
"headers": {<lower-case name>: <value>}}}`. The built-in profile (`profiles/builtin.toml`) is the
reference service's, docs/service-api.md.

This module holds the compiled profile and what it does per request (paths, queries, bodies,
the fields of an answer); `profile_file.py` reads and checks the TOML.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any
from urllib.parse import quote

import jmespath
import orjson

from compliance_bake.errors import InputError
from compliance_bake.targets.routes import shown

BUILTIN_CONTRACT = "`compliance-bake docs service-api`"
OPERATIONS = ("health", "check", "status")
# `[shadow]`: the service's own shadow decision, asked as `[check]` is (same keys); optional.
SHADOW = "shadow"
PLACEHOLDERS = {
    "health": frozenset(),
    "check": frozenset(("partner", "state", "wagerType")),
    "status": frozenset(("partner", "state")),
    SHADOW: frozenset(("partner", "state", "wagerType")),
}
# The operations whose questions may hold `{wager.NAME}` (a value of `[wagers."TYPE"]`).
WAGER_OPERATIONS = frozenset(("check", SHADOW))
WAGER_PREFIX = "wager."
# The spec fields each operation maps: required, then optional.
REQUIRED = {
    "health": ("ok", "states"),
    "check": ("allowed", "status"),
    "status": ("ok", "state", "licenseStatus", "hasLimits"),
    SHADOW: ("allowed", "status"),
}
OPTIONAL = {
    "health": ("runtime",),
    "check": ("reason", "partner", "state", "wagerType"),
    "status": (),
    SHADOW: ("reason", "partner", "state", "wagerType"),
}
PLACEHOLDER = re.compile(r"\{([^{}]*)\}")


class _Missing:
    """What a field path yields where the answer has no such key (JMESPath says null)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "nothing"


MISSING: Any = _Missing()


@dataclass(frozen=True, slots=True)
class Expression:
    """One compiled JMESPath expression.

    A plain field path (`body.data.allowed`) is walked directly: it is most of what a profile
    holds, the walk costs a tenth of jmespath's interpreter on a 500,000-check matrix, and it
    tells a missing key (MISSING) from a null, which the answer's contract treats differently.
    Any other expression goes through jmespath, and its null reads as MISSING (nothing found).
    `search` gives what jmespath gives, except MISSING where jmespath gives None.
    """

    text: str
    keys: tuple[str, ...] | None
    parsed: Any  # jmespath.parser.ParsedResult

    def search(self, context: Mapping[str, Any]) -> Any:
        keys = self.keys
        if keys is None:
            found = self.parsed.search(context)
            return MISSING if found is None else found
        value: Any = context
        for key in keys:
            if type(value) is not dict:
                return None if value is not MISSING else MISSING
            value = value.get(key, MISSING)
        return value


def compile_expression(text: str) -> Expression:
    """`text` compiled once; raises JMESPathError when it is not JMESPath."""
    parsed = jmespath.compile(text)
    return Expression(text, _field_path(parsed.parsed), parsed)


def expression_nodes(expression: Expression) -> int:
    """The number of nodes in the expression's syntax tree, counted without recursion: what
    bounds the work of one search (each `[@, @]` can double the value it is given)."""
    count = 0
    stack = [expression.parsed.parsed]
    while stack:
        node = stack.pop()
        count += 1
        stack += [child for child in node.get("children", ()) if isinstance(child, dict)]
    return count


def _field_path(node: Any) -> tuple[str, ...] | None:
    if node["type"] == "field":
        return (node["value"],)
    if node["type"] == "subexpression":
        keys: tuple[str, ...] = ()
        for child in node["children"]:
            part = _field_path(child)
            if part is None:
                return None
            keys += part
        return keys
    return None


def uses_http(expression: Expression) -> bool:
    if expression.keys is not None:
        return expression.keys[0] == "http"
    return "http" in expression.text  # any other expression gets the whole context


@dataclass(frozen=True, slots=True)
class Operation:
    """How to ask one question, and where its answer's fields are."""

    name: str  # health, check, status
    method: str  # GET or POST
    path: str  # as written, placeholders included (messages show it)
    path_format: str  # the path as a str.format string
    query: tuple[tuple[str, str], ...]  # (name, format string)
    headers: tuple[tuple[str, str], ...]  # (name, format string)
    body: str | None  # the JSON text as a format string
    answers: frozenset[int]
    retry: bool
    fields: tuple[tuple[str, Expression], ...]  # (spec field, expression)
    needs_http: bool  # some expression reads `http`: the headers are collected
    # With `{wager.NAME}` in the question: this operation with each wager type's table values
    # put in (keyed by wager type); the operation itself is then never sent.
    by_wager: Mapping[str, Operation] | None = None
    # With a profile's `[questions]`: this operation with a question's own wager values put in
    # ((NAME, value) pairs; a NAME absent is left out of the request), compiled once per set.
    for_values: Callable[[tuple[tuple[str, object], ...]], Operation] | None = None

    @property
    def label(self) -> str:
        return f"{self.method} {self.path}"

    def for_wager(self, wager_type: str) -> Operation:
        """The operation that asks about `wager_type`: with its `[wagers."TYPE"]` values when
        the question holds `{wager.NAME}`; a type without a table is a bad profile (exit 2),
        which `Profile.missing_wagers` finds before any request."""
        if self.by_wager is None:
            return self
        found = self.by_wager.get(wager_type)
        if found is None:
            raise InputError(*missing_wager_message(self.name, wager_type))
        return found

    def target(self, values: Mapping[str, str]) -> str:
        """The path and query for the question `values` (placeholders URL-encoded)."""
        path = self.path_format.format_map({k: _q(v) for k, v in values.items()})
        if not self.query:
            return path
        query = "&".join(f"{_q(name)}={_q(text.format_map(values))}" for name, text in self.query)
        return f"{path}?{query}"

    def body_bytes(self, values: Mapping[str, str]) -> bytes | None:
        """The JSON body for `values` (placeholders as JSON string content), or None."""
        if self.body is None:
            return None
        escaped = {k: orjson.dumps(v)[1:-1].decode() for k, v in values.items()}
        return self.body.format_map(escaped).encode()

    def header_values(self, values: Mapping[str, str]) -> dict[str, str]:
        return {name: text.format_map(values) for name, text in self.headers}

    def map(self, status: int, headers: Mapping[str, str], body: Any) -> dict[str, Any]:
        """Each field's value on this answer, MISSING where a field path found no key.

        Raises JMESPathError when an expression fails on the answer (a function given a null).
        """
        http = None
        if self.needs_http:
            lower = {name.lower(): value for name, value in headers.items()}
            http = {"status": status, "headers": lower}
        context = {"body": body, "http": http}
        return {name: expression.search(context) for name, expression in self.fields}


@dataclass(frozen=True, slots=True)
class Auth:
    header: str
    value: str  # format string with {key}

    def render(self, key: str) -> str:
        return format_string(self.value).format_map({"key": key})


@dataclass(frozen=True, slots=True)
class Profile:
    source: str  # BUILTIN_CONTRACT or the file's path: what messages name
    builtin: bool
    auth: Auth
    health: Operation
    check: Operation
    status: Operation
    shadow: Operation | None = None  # `[shadow]`, when the service has a shadow decision
    # `[questions]`: each question field (sport, market, amount, betType, age, zipCode) and the
    # `{wager.NAME}` it fills; None: the profile asks the headline questions alone.
    questions: tuple[tuple[str, str], ...] | None = None
    # `[wagers."TYPE"]` as written: a question starts from its wager type's values.
    wagers: Mapping[str, Mapping[str, object]] | None = None

    def missing_wagers(self, wager_types: Iterable[str]) -> None:
        """Raise InputError (exit 2) naming the first wager type the bake will ask that the
        profile's `{wager.NAME}` questions have no `[wagers."TYPE"]` table for."""
        for operation in (self.check, self.shadow):
            if operation is None or operation.by_wager is None:
                continue
            for wager_type in wager_types:
                if wager_type not in operation.by_wager:
                    what, fix = missing_wager_message(operation.name, wager_type)
                    raise InputError(f"{self.source}: {what}", fix)


def missing_wager_message(operation: str, wager_type: str) -> tuple[str, str]:
    return (
        f"[{operation}] uses {{wager.NAME}} and there is no [wagers.{quoted_key(wager_type)}] "
        f"table for the wager type {wager_type!r}, which is asked",
        f"add [wagers.{quoted_key(wager_type)}] with the values the question names "
        "(`compliance-bake docs target-profiles`)",
    )


def quoted_key(name: str) -> str:
    """A TOML key as a table header writes it (quoted: wager types hold dots)."""
    return orjson.dumps(name).decode()


@lru_cache(maxsize=256)
def format_string(text: str, pattern: re.Pattern[str] = PLACEHOLDER) -> str:
    """`text` as a str.format string: what `pattern` finds kept, every other brace doubled."""
    parts: list[str] = []
    last = 0
    for match in pattern.finditer(text):
        parts.append(text[last : match.start()].replace("{", "{{").replace("}", "}}"))
        parts.append(match.group(0))
        last = match.end()
    parts.append(text[last:].replace("{", "{{").replace("}", "}}"))
    return "".join(parts)


@lru_cache(maxsize=1 << 16)
def _q(value: str) -> str:
    # A matrix asks about each partner once per state: each value is quoted once, not per check.
    return quote(value, safe="")


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_DOT_SEGMENTS = frozenset((".", ".."))


def refuse_unsafe(operation: Operation, values: Mapping[str, str]) -> None:
    """Refuse a question whose value would change the request instead of filling it in.

    A control character (a CR/LF would end a header and start another) is never part of a
    partner, a state or a wager type; `.` or `..` alone in a path segment would move the request
    to another route (`/pre/api/../check`), with the agent key. InputError: bad input, exit 2.
    """
    for name, value in values.items():
        if _CONTROL.search(value):
            raise InputError(
                f"{operation.label}: the {name} {shown(value)} holds a control character",
                f"a {name} is printable text; fix it where it was given",
            )
        if value in _DOT_SEGMENTS and "{" + name + "}" in operation.path:
            raise InputError(
                f"{operation.label}: the {name} {value!r} would change the route in the path",
                f"a {name} is a name, not . or ..",
            )
