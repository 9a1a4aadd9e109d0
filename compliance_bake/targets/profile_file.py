"""Reading a target profile: the TOML file checked key by key and compiled into a `Profile`
(docs/target-profiles.md), and the built-in profile shipped in `profiles/builtin.toml`.

Everything is checked when the file loads: an unknown table or key, a missing field, a JMESPath
syntax error, an unknown placeholder or a method other than GET and POST is an `InputError`
(exit 2) naming the file, the key and the fix, before any request is sent.
"""

from __future__ import annotations

import math
import re
import sys
import tomllib
from dataclasses import replace
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import quote

import orjson
from jmespath.exceptions import JMESPathError

from compliance_bake.errors import InputError
from compliance_bake.inputs.files import read_regular_file
from compliance_bake.inputs.jsonio import INT_MAX, INT_MIN
from compliance_bake.policy.questions import QUESTION_FIELDS
from compliance_bake.targets.profile import (
    BUILTIN_CONTRACT,
    OPERATIONS,
    OPTIONAL,
    PLACEHOLDER,
    PLACEHOLDERS,
    REQUIRED,
    SHADOW,
    WAGER_OPERATIONS,
    WAGER_PREFIX,
    Auth,
    Expression,
    Operation,
    Profile,
    compile_expression,
    expression_nodes,
    format_string,
    quoted_key,
    uses_http,
)
from compliance_bake.targets.routes import shown

_DEFAULT_ANSWERS = {"health": (200,), "check": (200, 403), "status": (200,), SHADOW: (200, 403)}
_TABLES = (*OPERATIONS, SHADOW, "auth", "wagers", "questions")
_QUESTION = ("path", "query", "headers", "body")  # the keys that say what is asked
WagerTable = dict[str, object]
_REQUEST_KEYS = ("method", "path", "query", "body", "headers", "answers", "retry")
_AUTH_KEYS = ("header", "value")
# A 3xx is never followed, a 401 is a refused key, a 429 and a 5xx are retried.
_ANSWERABLE = frozenset(range(200, 300)) | (frozenset(range(400, 500)) - {401, 429})
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
PROFILE_MAX_BYTES = 1024 * 1024  # a profile is a page of TOML (compliance-bake docs limits)
PROFILE_MAX_DEPTH = 32  # tables and arrays within each other
EXPRESSION_MAX_CHARS = 512  # of one field's JMESPath
EXPRESSION_MAX_NODES = 64  # of its syntax tree: bounds what one search can build
_FIX = (
    "see `compliance-bake docs target-profiles`, or `compliance-bake target profile show` for a "
    "whole profile"
)


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
    missing = InputError(f"--target-profile {where}: no such file", _FIX)
    what = "target profile (TOML)"
    raw = read_regular_file(path, max_bytes=PROFILE_MAX_BYTES, what=what, missing=missing)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{where}: not UTF-8 text", "save the profile as UTF-8") from None
    return parse_profile(text, where, builtin=False)


def parse_profile(text: str, source: str, builtin: bool = False) -> Profile:
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{source}: not valid TOML ({exc})", "fix the TOML syntax") from None
    except ValueError:  # int() past the interpreter's digit limit, raised through tomllib
        limit = sys.get_int_max_str_digits()
        raise InputError(
            f"{source}: an integer of more than {limit:,} digits",
            "give numbers within 64 bits (or the value as a string)",
        ) from None
    except RecursionError:  # tomllib recurses once per nested array or inline table
        raise InputError(
            f"{source}: the TOML is nested deeper than Python can parse",
            f"a profile nests at most {PROFILE_MAX_DEPTH} levels",
        ) from None
    file = _File(source)
    if _depth(document) > PROFILE_MAX_DEPTH:  # dotted keys nest without recursing
        raise file.fail(
            f"nested deeper than {PROFILE_MAX_DEPTH} levels",
            "a profile is tables of strings, a body a few levels of JSON",
        )
    for table in document:
        if table not in _TABLES:
            raise file.fail(
                f"unknown table [{table}]",
                "the tables are [auth], [health], [check], [shadow], [status], "
                '[wagers."TYPE"], [questions]',
            )
    auth = _auth(file, document.get("auth", {}))
    wagers = _wagers(file, document.get("wagers", {}))
    questions = None
    if "questions" in document:
        questions = _questions(file, document["questions"], document)
    # The names [questions] fills may be absent from a [wagers] table: the headline question
    # leaves them empty, and they are left out of its request.
    optional = frozenset(name for _, name in questions or ())
    operations = {
        name: _operation(file, name, document.get(name), wagers, optional) for name in OPERATIONS
    }
    shadow = None
    if SHADOW in document:
        shadow = _operation(file, SHADOW, document[SHADOW], wagers, optional)
    if questions is not None:
        operations["check"] = _asking(file, "check", document["check"], operations["check"])
        if shadow is not None:
            shadow = _asking(file, SHADOW, document[SHADOW], shadow)
    return Profile(
        source,
        builtin,
        auth,
        operations["health"],
        operations["check"],
        operations["status"],
        shadow,
        questions,
        wagers,
    )


def _questions(file: _File, value: object, document: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """`[questions]`: field = "NAME", each NAME a `{wager.NAME}` that [check] (and [shadow])
    uses; sport and market are required (a question sends the registry's own keys)."""
    table = _table(file, "questions", value)
    for name, text in table.items():
        if name not in QUESTION_FIELDS:
            raise file.fail(
                f"[questions] {name}: not a question field",
                f"map some of {', '.join(QUESTION_FIELDS)}",
            )
        _string(file, f"[questions] {name}", text)
    for required in ("sport", "market"):
        if required not in table:
            raise file.fail(
                f"[questions] has no `{required}`",
                f'map it to the wager name the question sends, e.g. {required} = "{required}"',
            )
    for operation in ("check", SHADOW):
        if operation not in document:
            continue
        used = _wager_names(_table(file, operation, document[operation]))
        for name, text in table.items():
            if text not in used:
                raise file.fail(
                    f"[questions] {name} = {quoted_key(text)}: [{operation}] has no "
                    f"{{wager.{text}}}",
                    f"put {{wager.{text}}} where [{operation}] sends the {name}",
                )
    return tuple((name, text) for name, text in table.items())


_OMIT = object()  # a whole `{wager.NAME}` a question leaves empty: the value is left out


def _asking(file: _File, name: str, value: object, operation: Operation) -> Operation:
    """`operation` with `for_values`: the question as written, a question's wager values put
    in, compiled once per set of values (the boundary questions share a few per limit row)."""
    table = _table(file, name, value)

    @lru_cache(maxsize=4096)
    def compiled(values: tuple[tuple[str, object], ...]) -> Operation:
        given = dict(values)
        return _compiled(
            file,
            name,
            {
                key: _put_question(item, given, key == "body") if key in _QUESTION else item
                for key, item in table.items()
            },
        )

    return replace(operation, for_values=compiled)


def _put_question(item: Any, values: dict[str, object], typed: bool, segment: bool = False) -> Any:
    """`_put_wager` for a question: a value that is one `{wager.NAME}` the question leaves
    empty is left out (its key of a table, its entry of an array); within a longer string an
    empty one is written as nothing; in the path (`segment`) a value is one segment."""
    if isinstance(item, str):
        whole = PLACEHOLDER.fullmatch(item)
        if whole is not None and whole.group(1).startswith(WAGER_PREFIX):
            name = whole.group(1)[len(WAGER_PREFIX) :]
            if name not in values:
                return _OMIT
        present = {name: values.get(name, "") for name in _wager_refs(item)}
        return _put_wager(item, present, typed, segment)
    if isinstance(item, dict):
        kept = {key: _put_question(inner, values, typed) for key, inner in item.items()}
        return {key: inner for key, inner in kept.items() if inner is not _OMIT}
    if isinstance(item, list):
        kept_items = [_put_question(inner, values, typed) for inner in item]
        return [inner for inner in kept_items if inner is not _OMIT]
    return item


def _depth(document: object) -> int:
    """How deep tables and arrays nest in `document`, counted without recursion."""
    deepest = 0
    stack: list[tuple[object, int]] = [(document, 1)]
    while stack:
        item, depth = stack.pop()
        deepest = max(deepest, depth)
        if depth > PROFILE_MAX_DEPTH:
            break
        children = (
            item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        )
        stack += [(child, depth + 1) for child in children if isinstance(child, dict | list)]
    return deepest


def _wagers(file: _File, value: object) -> dict[str, WagerTable]:
    """`[wagers."TYPE"]`: per wager type, the values `{wager.NAME}` stands for (TOML strings,
    integers, floats and booleans)."""
    tables = _table(file, "wagers", value)
    found: dict[str, WagerTable] = {}
    for wager_type, table in tables.items():
        where = f"[wagers.{quoted_key(wager_type)}]"
        if not isinstance(table, dict):
            raise file.fail(
                f"{where} must be a table", f"write it as {where} with name = value lines"
            )
        for name, item in table.items():
            if type(item) is int and not INT_MIN <= item <= INT_MAX:
                raise file.fail(
                    f"{where} {name}: an integer past 64 bits, which a request's JSON cannot carry",
                    f"give an integer from {INT_MIN} to {INT_MAX}, or the amount as a string",
                )
            if _wager_value(item):
                continue
            raise file.fail(
                f"{where} {name}: must be a string without braces, a number or a boolean",
                'e.g. amount = 100 or betType = "straight"',
            )
        found[wager_type] = table
    return found


class _File:
    """The profile being read, which every refusal names: `raise file.fail(what, fix)`."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, what: str, fix: str = _FIX) -> InputError:
        return InputError(f"{self.source}: {what}", fix)


def _table(file: _File, name: str, value: object) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise file.fail(f"`{name}` must be a table", f"write it as [{name}] or {name} = {{ ... }}")
    return value


def _auth(file: _File, value: object) -> Auth:
    table = _table(file, "auth", value)
    for key in table:
        if key not in _AUTH_KEYS:
            raise file.fail(f"unknown key [auth] {key}", "[auth] holds `header` and `value`")
    header = _string(file, "[auth] header", table.get("header", "Authorization"))
    _header_name(file, "[auth] header", header)
    text = _string(file, "[auth] value", table.get("value", "Bearer {key}"))
    _header_value(file, "[auth] value", text)
    _placeholders(file, "[auth] value", text, frozenset(("key",)))
    if "{key}" not in text:
        raise file.fail("[auth] value does not hold {key}", 'e.g. value = "{key}"')
    return Auth(header, text)


def _string(file: _File, where: str, value: object) -> str:
    if not isinstance(value, str):
        raise file.fail(
            f"{where} must be a string", f'write it in quotes, e.g. {where.split()[-1]} = "..."'
        )
    return value


def _header_name(file: _File, where: str, name: str) -> None:
    if not _TOKEN.fullmatch(name):
        raise file.fail(f"{where}: {name!r} is not an HTTP header name", "e.g. X-Agent-Key")


def _header_value(file: _File, where: str, text: str) -> None:
    if any(ord(char) < 0x20 or ord(char) == 0x7F for char in text):
        raise file.fail(f"{where}: a header value cannot hold a control character", "remove it")


def _placeholders(file: _File, where: str, text: str, allowed: frozenset[str]) -> None:
    for name in PLACEHOLDER.findall(text):
        if name not in allowed:
            if name == "key":
                raise file.fail(
                    f"{where}: {{key}} is only for [auth] value", "send the key with [auth]"
                )
            named = ", ".join(f"{{{n}}}" for n in sorted(allowed)) or "none"
            raise file.fail(
                f"{where}: unknown placeholder {{{name}}}", f"placeholders here: {named}"
            )


def _strings(
    file: _File, where: str, value: object, allowed: frozenset[str]
) -> tuple[tuple[str, str], ...]:
    table = _table(file, where, value)
    pairs = []
    for key, text in table.items():
        text = _string(file, f"{where}.{key}", text)
        _placeholders(file, f"{where}.{key}", text, allowed)
        pairs.append((key, format_string(text)))
    return tuple(pairs)


def _body(file: _File, where: str, value: object, allowed: frozenset[str]) -> str:
    _table(file, where, value)

    def walk(item: object, at: str) -> None:
        if isinstance(item, str):
            _placeholders(file, at, item, allowed)
        elif isinstance(item, dict):
            for key, inner in item.items():
                _placeholders(file, f"{at}.{key}", key, frozenset())
                walk(inner, f"{at}.{key}")
        elif isinstance(item, list):
            for index, inner in enumerate(item):
                walk(inner, f"{at}[{index}]")
        elif not isinstance(item, bool | int | float):
            raise file.fail(
                f"{at}: a {type(item).__name__} has no JSON form",
                "use strings, numbers, booleans, tables and arrays",
            )

    walk(value, where)
    # The placeholders sit inside JSON strings; only the allowed names are placeholders there
    # (the JSON's own braces make `{"a":1}`, which the general pattern would take for one).
    names = "|".join(map(re.escape, sorted(allowed))) or "(?!)"
    return format_string(orjson.dumps(value).decode(), re.compile(r"\{(" + names + r")\}"))


def _wager_value(item: object) -> bool:
    """A value `{wager.NAME}` may stand for: a string without braces (it is put into a
    question that still has placeholders), an integer, a finite float, a boolean."""
    if isinstance(item, str):
        return "{" not in item and "}" not in item
    if isinstance(item, float):
        return math.isfinite(item)
    return isinstance(item, bool | int)


def _wager_names(table: dict[str, object]) -> set[str]:
    """The NAMEs of every `{wager.NAME}` in an operation's question."""
    names: set[str] = set()

    def walk(item: object) -> None:
        if isinstance(item, str):
            names.update(_wager_refs(item))
        elif isinstance(item, dict):
            for inner in item.values():
                walk(inner)
        elif isinstance(item, list):
            for inner in item:
                walk(inner)

    for key in _QUESTION:
        walk(table.get(key))
    return names


def _wager_refs(text: str) -> list[str]:
    """The NAMEs of the `{wager.NAME}`s in `text`, in order."""
    return [f[len(WAGER_PREFIX) :] for f in PLACEHOLDER.findall(text) if f.startswith(WAGER_PREFIX)]


def _wager_text(value: object) -> str:
    return orjson.dumps(value).decode() if not isinstance(value, str) else value


def _put_wager(item: Any, values: WagerTable, typed: bool, segment: bool = False) -> Any:
    """`item` (a question's string, table or array) with each `{wager.NAME}` replaced by its
    value: a string that is exactly one placeholder becomes the value itself (its TOML type
    kept: 100 stays a number); within a longer string the value is written as text, and in the
    path (`segment`) percent-encoded as one path segment, as `{partner}` and `{state}` are, so
    a `/`, `?`, `#` or `%` in it stays inside its segment."""
    if isinstance(item, str):
        whole = PLACEHOLDER.fullmatch(item)
        if typed and whole is not None and whole.group(1).startswith(WAGER_PREFIX):
            return values[whole.group(1)[len(WAGER_PREFIX) :]]

        def text(match: Any) -> str:
            name = match.group(1)
            if not name.startswith(WAGER_PREFIX):
                return str(match.group(0))
            value = _wager_text(values[name[len(WAGER_PREFIX) :]])
            return quote(value, safe="") if segment else value

        return PLACEHOLDER.sub(text, item)
    if isinstance(item, dict):
        return {key: _put_wager(inner, values, typed) for key, inner in item.items()}
    if isinstance(item, list):
        return [_put_wager(inner, values, typed) for inner in item]
    return item


def _path_values(file: _File, name: str, path: object, values: WagerTable, where: str) -> None:
    """Refuse a `{wager.NAME}` value the path cannot hold as one segment: a control character
    (never part of a question's value), nothing, or `.` / `..` (which move the request to
    another route, with the agent key), before any request."""
    if not isinstance(path, str):
        return
    for key in _wager_refs(path):
        value = _wager_text(values[key])
        if value in ("", ".", "..") or any(ord(c) < 0x20 or ord(c) == 0x7F for c in value):
            raise file.fail(
                f"{where} {key}: {shown(value)} cannot fill a segment of [{name}] path "
                "(empty, . or .., or a control character)",
                "give a printable name; the path sends it percent-encoded as one segment",
            )


def _operation(
    file: _File,
    name: str,
    value: object,
    wagers: dict[str, WagerTable],
    optional: frozenset[str] = frozenset(),
) -> Operation:
    if value is None:
        raise file.fail(f"no [{name}] table", f"add [{name}] with its method, path and fields")
    table = _table(file, name, value)
    used = _wager_names(table) if name in WAGER_OPERATIONS else set()
    if not used:
        return _compiled(file, name, table)
    if not wagers and used <= optional:
        # Each `{wager.NAME}` is a question's field, no [wagers]: a headline question sends none.
        return _compiled(file, name, _filled(table, {}))
    for wager_type, values in wagers.items():
        for wanted in sorted(used - optional):
            if wanted not in values:
                raise file.fail(
                    f"[{name}] uses {{wager.{wanted}}} and [wagers.{quoted_key(wager_type)}] "
                    f"has no `{wanted}`",
                    f"add {wanted} = ... to [wagers.{quoted_key(wager_type)}]",
                )
    # The question as written is checked once (its placeholders allowed as wager names), then
    # compiled once per wager type with that type's values in place.
    base = _compiled(file, name, table, frozenset(f"{WAGER_PREFIX}{n}" for n in used))
    for wager_type, values in wagers.items():
        where = f"[wagers.{quoted_key(wager_type)}]"
        _path_values(file, name, table.get("path"), values, where)
    by_wager = {
        wager_type: _compiled(file, name, _filled(table, values))
        for wager_type, values in wagers.items()
    }
    return replace(base, by_wager=by_wager)


def _filled(table: dict[str, object], values: WagerTable) -> dict[str, object]:
    """The operation's table with `values` put into its question (`_put_question`)."""
    return {
        key: _put_question(item, dict(values), key == "body", key == "path")
        if key in _QUESTION
        else item
        for key, item in table.items()
    }


def _compiled(
    file: _File, name: str, table: dict[str, object], extra: frozenset[str] = frozenset()
) -> Operation:
    """The operation's table checked key by key, in the order the refusals read, and compiled;
    `extra` names the placeholders a question adds (its `{wager.NAME}`s)."""
    fields = REQUIRED[name] + OPTIONAL[name]
    for key in table:
        if key not in _REQUEST_KEYS and key not in fields:
            raise file.fail(
                f"unknown key [{name}] {key}",
                f"[{name}] holds {', '.join(_REQUEST_KEYS)} and the fields {', '.join(fields)}",
            )
    allowed = PLACEHOLDERS[name] | extra
    method = _string(file, f"[{name}] method", table.get("method", "GET"))
    if method not in ("GET", "POST"):
        raise file.fail(
            f"[{name}] method: {method!r} is not GET or POST", 'write method = "GET" or "POST"'
        )
    path = _path(file, name, table, allowed)
    query = _strings(file, f"[{name}] query", table.get("query", {}), allowed)
    headers = _strings(file, f"[{name}] headers", table.get("headers", {}), allowed)
    for header, text in headers:
        _header_name(file, f"[{name}] headers", header)
        _header_value(file, f"[{name}] headers.{header}", text)
    body = None
    if "body" in table:
        if method != "POST":
            raise file.fail(
                f'[{name}] body needs method = "POST"',
                "send the question in the query or path of a GET",
            )
        body = _body(file, f"[{name}] body", table["body"], allowed)
    answers = _answers(file, name, table)
    retry = table.get("retry", method == "GET")
    if not isinstance(retry, bool):
        raise file.fail(f"[{name}] retry must be true or false", "e.g. retry = true")
    compiled = _fields(file, name, table, fields)
    return Operation(
        name=name,
        method=method,
        path=path,
        path_format=format_string(path),
        query=query,
        headers=headers,
        body=body,
        answers=frozenset(answers),
        retry=retry,
        fields=tuple(compiled),
        needs_http=any(uses_http(expression) for _, expression in compiled),
    )


def _path(file: _File, name: str, table: dict[str, object], allowed: frozenset[str]) -> str:
    """The operation's path: given, absolute, its placeholders the operation's own."""
    if "path" not in table:
        raise file.fail(f"[{name}] has no `path`", f'add path = "/..." to [{name}]')
    path = _string(file, f"[{name}] path", table["path"])
    if not path.startswith("/"):
        raise file.fail(f"[{name}] path must start with /", f'e.g. path = "/{path}"')
    _placeholders(file, f"[{name}] path", path, allowed)
    return path


def _answers(file: _File, name: str, table: dict[str, object]) -> list[int]:
    """The HTTP statuses whose body is the operation's answer (a 401, a 429, a 3xx never is)."""
    answers = table.get("answers", list(_DEFAULT_ANSWERS[name]))
    if (
        not isinstance(answers, list)
        or not answers
        or not all(type(code) is int and code in _ANSWERABLE for code in answers)
    ):
        raise file.fail(
            f"[{name}] answers must be a list of HTTP statuses that carry an answer "
            "(2xx, or 4xx other than 401 and 429)",
            "e.g. answers = [200] or answers = [200, 403]",
        )
    return answers


def _fields(
    file: _File, name: str, table: dict[str, object], fields: tuple[str, ...]
) -> list[tuple[str, Expression]]:
    """Each answer field's JMESPath, compiled once, within bounds that keep one search small."""
    compiled: list[tuple[str, Expression]] = []
    for field in fields:
        if field not in table:
            if field in REQUIRED[name]:
                raise file.fail(
                    f"[{name}] has no `{field}`",
                    f'add {field} = "<JMESPath>", e.g. {field} = "body.{field}"',
                )
            continue
        text = _string(file, f"[{name}] {field}", table[field])
        if len(text) > EXPRESSION_MAX_CHARS:  # the parser recurses once per bracket
            raise file.fail(
                f"[{name}] {field}: the expression is {len(text):,} characters, over the "
                f"{EXPRESSION_MAX_CHARS} limit",
                "a field's expression is a path and a few operators",
            )
        try:
            expression = compile_expression(text)
        except JMESPathError as exc:
            detail = " ".join(str(exc).split())[:120]
            raise file.fail(
                f"[{name}] {field}: {text!r} is not a JMESPath expression ({detail})",
                'e.g. "body.data.allowed"; see https://jmespath.org',
            ) from None
        if expression_nodes(expression) > EXPRESSION_MAX_NODES:  # each `[@, @]` doubles
            raise file.fail(
                f"[{name}] {field}: the expression has more than {EXPRESSION_MAX_NODES} parts",
                "a field's expression is a path and a few operators",
            )
        compiled.append((field, expression))
    return compiled
