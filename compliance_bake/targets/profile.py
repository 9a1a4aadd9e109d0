"""Target profiles: how to ask a given compliance service the specification's three questions
(health, check, status) and where each spec field sits in its answers (docs/target-profiles.md).

A profile is a TOML file. Each operation names a method, a path, and optionally a query, a JSON
body, headers, the HTTP statuses that carry an answer and whether a POST may be retried; each
field is a JMESPath expression over `{"body": <the JSON answer>, "http": {"status": <int>,
"headers": {<lower-case name>: <value>}}}`. The built-in profile (`profiles/builtin.toml`) is the
reference service's, docs/service-api.md.

Everything is checked and compiled when the file loads: an unknown table or key, a missing field,
a JMESPath syntax error, an unknown placeholder or a method other than GET and POST is an
`InputError` (exit 2) naming the file, the key and the fix, before any request is sent.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import quote

import jmespath
import orjson
from jmespath.exceptions import JMESPathError

from compliance_bake.errors import InputError

BUILTIN_CONTRACT = "docs/service-api.md"
OPERATIONS = ("health", "check", "status")
PLACEHOLDERS = {
    "health": frozenset(),
    "check": frozenset(("partner", "state", "wagerType")),
    "status": frozenset(("partner", "state")),
}
# The spec fields each operation maps: required, then optional.
REQUIRED = {
    "health": ("ok", "states"),
    "check": ("allowed", "status"),
    "status": ("ok", "state", "licenseStatus", "hasLimits"),
}
OPTIONAL = {
    "health": ("runtime",),
    "check": ("reason", "partner", "state", "wagerType"),
    "status": (),
}
_DEFAULT_ANSWERS = {"health": (200,), "check": (200, 403), "status": (200,)}
_REQUEST_KEYS = ("method", "path", "query", "body", "headers", "answers", "retry")
_AUTH_KEYS = ("header", "value")
# A 3xx is never followed, a 401 is a refused key, a 429 and a 5xx are retried.
_ANSWERABLE = frozenset(range(200, 300)) | (frozenset(range(400, 500)) - {401, 429})
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
_FIX = "see docs/target-profiles.md, or `compliance-bake target profile show` for a whole profile"


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


def _uses_http(expression: Expression) -> bool:
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

    @property
    def label(self) -> str:
        return f"{self.method} {self.path}"

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
        return _format_string(self.value).format_map({"key": key})


@dataclass(frozen=True, slots=True)
class Profile:
    source: str  # BUILTIN_CONTRACT or the file's path: what messages name
    builtin: bool
    auth: Auth
    health: Operation
    check: Operation
    status: Operation


@lru_cache(maxsize=256)
def _format_string(text: str) -> str:
    """`text` as a str.format string: its placeholders kept, every other brace doubled."""
    parts: list[str] = []
    last = 0
    for match in _PLACEHOLDER.finditer(text):
        parts.append(text[last : match.start()].replace("{", "{{").replace("}", "}}"))
        parts.append(match.group(0))
        last = match.end()
    parts.append(text[last:].replace("{", "{{").replace("}", "}}"))
    return "".join(parts)


@lru_cache(maxsize=1 << 16)
def _q(value: str) -> str:
    # A matrix asks about each partner once per state: quoting each value once saves ~2 us/check.
    return quote(value, safe="")


# -- loading ---------------------------------------------------------------------------------


def builtin_text() -> str:
    """The built-in profile's TOML, as shipped (what `target profile show` prints)."""
    return (resources.files("compliance_bake.targets") / "profiles" / "builtin.toml").read_text(
        "utf-8"
    )


@lru_cache(maxsize=1)
def builtin_profile() -> Profile:
    return parse_profile(builtin_text(), BUILTIN_CONTRACT, builtin=True)


def load_profile(path: Path) -> Profile:
    """The profile in `path`; every problem is an InputError naming the file and the key."""
    where = str(path)
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        raise InputError(f"--target-profile {where}: no such file", _FIX) from None
    except IsADirectoryError:
        raise InputError(f"--target-profile {where}: a folder, not a TOML file", _FIX) from None
    except UnicodeDecodeError:
        raise InputError(f"{where}: not UTF-8 text", "save the profile as UTF-8") from None
    except OSError as exc:
        raise InputError(
            f"--target-profile {where}: cannot read it ({exc.strerror})", _FIX
        ) from None
    return parse_profile(text, where, builtin=False)


def parse_profile(text: str, source: str, builtin: bool = False) -> Profile:
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{source}: not valid TOML ({exc})", "fix the TOML syntax") from None
    problem = _Problems(source)
    for table in document:
        if table not in (*OPERATIONS, "auth"):
            problem.fail(
                f"unknown table [{table}]", "the tables are [auth], [health], [check], [status]"
            )
    auth = _auth(problem, document.get("auth", {}))
    operations = {name: _operation(problem, name, document.get(name)) for name in OPERATIONS}
    return Profile(
        source, builtin, auth, operations["health"], operations["check"], operations["status"]
    )


class _Problems:
    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, what: str, fix: str = _FIX) -> None:
        raise InputError(f"{self.source}: {what}", fix)


def _table(problem: _Problems, name: str, value: object) -> dict[str, Any]:
    if not isinstance(value, dict):
        problem.fail(f"`{name}` must be a table", f"write it as [{name}] or {name} = {{ ... }}")
    assert isinstance(value, dict)
    return value


def _auth(problem: _Problems, value: object) -> Auth:
    table = _table(problem, "auth", value)
    for key in table:
        if key not in _AUTH_KEYS:
            problem.fail(f"unknown key [auth] {key}", "[auth] holds `header` and `value`")
    header = _string(problem, "[auth] header", table.get("header", "Authorization"))
    if not re.fullmatch(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+", header):
        problem.fail(f"[auth] header: {header!r} is not an HTTP header name", "e.g. X-Agent-Key")
    text = _string(problem, "[auth] value", table.get("value", "Bearer {key}"))
    _placeholders(problem, "[auth] value", text, frozenset(("key",)))
    if "{key}" not in text:
        problem.fail("[auth] value does not hold {key}", 'e.g. value = "{key}"')
    return Auth(header, text)


def _string(problem: _Problems, where: str, value: object) -> str:
    if not isinstance(value, str):
        problem.fail(
            f"{where} must be a string", f'write it in quotes, e.g. {where.split()[-1]} = "..."'
        )
    assert isinstance(value, str)
    return value


def _placeholders(problem: _Problems, where: str, text: str, allowed: frozenset[str]) -> None:
    for name in _PLACEHOLDER.findall(text):
        if name not in allowed:
            if name == "key":
                problem.fail(
                    f"{where}: {{key}} is only for [auth] value", "send the key with [auth]"
                )
            named = ", ".join(f"{{{n}}}" for n in sorted(allowed)) or "none"
            problem.fail(f"{where}: unknown placeholder {{{name}}}", f"placeholders here: {named}")


def _strings(
    problem: _Problems, where: str, value: object, allowed: frozenset[str]
) -> tuple[tuple[str, str], ...]:
    table = _table(problem, where, value)
    pairs = []
    for key, text in table.items():
        text = _string(problem, f"{where}.{key}", text)
        _placeholders(problem, f"{where}.{key}", text, allowed)
        pairs.append((key, _format_string(text)))
    return tuple(pairs)


def _body(problem: _Problems, where: str, value: object, allowed: frozenset[str]) -> str:
    _table(problem, where, value)

    def walk(item: object, at: str) -> None:
        if isinstance(item, str):
            _placeholders(problem, at, item, allowed)
        elif isinstance(item, dict):
            for key, inner in item.items():
                _placeholders(problem, f"{at}.{key}", key, frozenset())
                walk(inner, f"{at}.{key}")
        elif isinstance(item, list):
            for index, inner in enumerate(item):
                walk(inner, f"{at}[{index}]")
        elif not isinstance(item, bool | int | float):
            problem.fail(
                f"{at}: a {type(item).__name__} has no JSON form",
                "use strings, numbers, booleans, tables and arrays",
            )

    walk(value, where)
    text = orjson.dumps(value).decode()
    # Keep the placeholders (they sit inside JSON strings), double every other brace.
    names = "|".join(sorted(allowed)) or "(?!)"
    parts, last = [], 0
    for match in re.finditer(r"\{(" + names + r")\}", text):
        parts.append(text[last : match.start()].replace("{", "{{").replace("}", "}}"))
        parts.append(match.group(0))
        last = match.end()
    parts.append(text[last:].replace("{", "{{").replace("}", "}}"))
    return "".join(parts)


def _operation(problem: _Problems, name: str, value: object) -> Operation:
    if value is None:
        problem.fail(f"no [{name}] table", f"add [{name}] with its method, path and fields")
    table = _table(problem, name, value)
    fields = REQUIRED[name] + OPTIONAL[name]
    for key in table:
        if key not in _REQUEST_KEYS and key not in fields:
            problem.fail(
                f"unknown key [{name}] {key}",
                f"[{name}] holds {', '.join(_REQUEST_KEYS)} and the fields {', '.join(fields)}",
            )
    allowed = PLACEHOLDERS[name]
    method = _string(problem, f"[{name}] method", table.get("method", "GET"))
    if method not in ("GET", "POST"):
        problem.fail(
            f"[{name}] method: {method!r} is not GET or POST", 'write method = "GET" or "POST"'
        )
    if "path" not in table:
        problem.fail(f"[{name}] has no `path`", f'add path = "/..." to [{name}]')
    path = _string(problem, f"[{name}] path", table["path"])
    if not path.startswith("/"):
        problem.fail(f"[{name}] path must start with /", f'e.g. path = "/{path}"')
    _placeholders(problem, f"[{name}] path", path, allowed)
    query = _strings(problem, f"[{name}] query", table.get("query", {}), allowed)
    headers = _strings(problem, f"[{name}] headers", table.get("headers", {}), allowed)
    body = None
    if "body" in table:
        if method != "POST":
            problem.fail(
                f'[{name}] body needs method = "POST"',
                "send the question in the query or path of a GET",
            )
        body = _body(problem, f"[{name}] body", table["body"], allowed)
    answers = table.get("answers", list(_DEFAULT_ANSWERS[name]))
    if (
        not isinstance(answers, list)
        or not answers
        or not all(type(code) is int and code in _ANSWERABLE for code in answers)
    ):
        problem.fail(
            f"[{name}] answers must be a list of HTTP statuses that carry an answer "
            "(2xx, or 4xx other than 401 and 429)",
            "e.g. answers = [200] or answers = [200, 403]",
        )
    retry = table.get("retry", method == "GET")
    if not isinstance(retry, bool):
        problem.fail(f"[{name}] retry must be true or false", "e.g. retry = true")
    compiled = []
    for field in fields:
        if field not in table:
            if field in REQUIRED[name]:
                problem.fail(
                    f"[{name}] has no `{field}`",
                    f'add {field} = "<JMESPath>", e.g. {field} = "body.{field}"',
                )
            continue
        text = _string(problem, f"[{name}] {field}", table[field])
        try:
            compiled.append((field, compile_expression(text)))
        except JMESPathError as exc:
            detail = " ".join(str(exc).split())[:120]
            problem.fail(
                f"[{name}] {field}: {text!r} is not a JMESPath expression ({detail})",
                'e.g. "body.data.allowed"; see https://jmespath.org',
            )
    return Operation(
        name=name,
        method=method,
        path=path,
        path_format=_format_string(path),
        query=query,
        headers=headers,
        body=body,
        answers=frozenset(answers),
        retry=retry,
        fields=tuple(compiled),
        needs_http=any(_uses_http(expression) for _, expression in compiled),
    )
