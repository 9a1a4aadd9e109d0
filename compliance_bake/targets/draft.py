"""A first draft of a target profile from a service's OpenAPI document (`target profile init`).

It looks for the operations whose path or operationId names health, check or status, takes their
parameters and request bodies (a parameter named like partner/node, state or wager/type gets that
placeholder) and finds each spec field in the answer's schema by name, nested envelopes included
(`body.data.allowed`). Where it has to guess, or finds nothing, the line carries a `# TODO`
comment: the draft is a start, checked by `check --target URL --target-profile FILE --explain`.

Pure: a parsed document in, TOML text out; the result always loads as a profile when no TODO is
left, and most often before. The document is outside input: any part may have any JSON type
(`_obj`, `_seq` read a part as what it must be, or as empty), every text of it reaches the draft
through TOML's escapes (`_toml` for strings and keys, `_comment` for comments), and the work is
bounded (`_BODY_KEYS` keys in a drafted body, a schema never inside itself).
"""

from __future__ import annotations

import json
import re
from typing import Any

from compliance_bake.targets.profile import OPERATIONS, OPTIONAL, PLACEHOLDERS, REQUIRED

# Names under which an answer field may appear, in order of preference (lower case).
_ALIASES: dict[str, tuple[str, ...]] = {
    "ok": ("ok", "healthy", "up"),
    "states": ("states", "regulatedstates", "jurisdictions"),
    "runtime": ("runtime", "bunversion", "version", "server"),
    "allowed": ("allowed", "eligible", "permitted"),
    "status": ("status", "statuscode", "code"),
    "reason": ("reason", "message"),
    "partner": ("partner", "nodeid", "node"),
    "state": ("state", "statecode", "jurisdiction"),
    "wagerType": ("wagertype", "type"),
    "licenseStatus": ("licensestatus", "licencestatus", "license", "licence"),
    "hasLimits": ("haslimits", "limits"),
}
_BARE = re.compile(r"[A-Za-z0-9_-]+")
_BODY_KEYS = 256  # keys of one drafted request body, nested ones included
_FIND_QUEUE = 256  # schemas waiting in one breadth-first search
# Escaped in TOML text: what TOML forbids (C0 controls but tab, DEL), and what would reorder or
# split the line on a terminal (C1 controls, line and paragraph separators, bidi overrides);
# a lone surrogate (which UTF-8 cannot hold) becomes U+FFFD.
_ESCAPED = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _obj(value: Any) -> dict[str, Any]:
    """`value` when it is a JSON object, else an empty one (the document is outside input)."""
    return value if isinstance(value, dict) else {}


def _seq(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return "\\ufffd" if 0xD800 <= code <= 0xDFFF else f"\\u{code:04x}"


def _toml(text: str) -> str:
    """`text` as a TOML basic string: quotes and backslashes escaped, every control character
    as `\\uXXXX`, other characters as they are (UTF-8). Every string and quoted key of a draft
    is written here: the standard library reads TOML but does not write it, and the package
    takes no writer for these few lines (tests/targets/test_draft_toml.py reads them back)."""
    return '"' + _ESCAPED.sub(_escape, text.replace("\\", "\\\\").replace('"', '\\"')) + '"'


def _comment(text: str) -> str:
    """`text` for a TOML comment: on one line, every control character shown as `\\uXXXX`."""
    return _ESCAPED.sub(_escape, text)


def _placeholder(name: str, allowed: frozenset[str]) -> str | None:
    lower = name.lower()
    guesses = (
        ("partner", ("partner", "node")),
        ("wagerType", ("wager", "type")),
        ("state", ("state", "jurisdiction")),
    )
    for placeholder, words in guesses:
        if placeholder in allowed and any(word in lower for word in words):
            return "{" + placeholder + "}"
    return None


class _Document:
    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document

    def resolve(self, schema: Any, depth: int = 0) -> dict[str, Any]:
        """The schema with `$ref`s followed (and the first of allOf/anyOf/oneOf taken)."""
        while isinstance(schema, dict) and depth < 32:
            depth += 1
            if "$ref" in schema and isinstance(schema["$ref"], str):
                node: Any = self.document
                for part in schema["$ref"].lstrip("#/").split("/"):
                    node = node.get(part, {}) if isinstance(node, dict) else {}
                schema = node
                continue
            for combined in ("allOf", "anyOf", "oneOf"):
                options = schema.get(combined)
                if isinstance(options, list) and options and "properties" not in schema:
                    schema = options[0]
                    break
            else:
                return schema
        return {}

    def find(self, schema: Any, names: tuple[str, ...], path: str = "body") -> str | None:
        """The JMESPath of the first property named like `names`, breadth first."""
        queue = [(self.resolve(schema), path)]
        for _ in range(64):
            if not queue:
                return None
            node, where = queue.pop(0)
            properties = _obj(node.get("properties"))
            by_name = {str(key).lower(): str(key) for key in properties}
            for name in names:
                if name in by_name:
                    return f"{where}.{_field(by_name[name])}"
            for key, value in properties.items():
                if len(queue) >= _FIND_QUEUE:
                    break
                queue.append((self.resolve(value), f"{where}.{_field(key)}"))
        return None


def _field(name: str) -> str:
    """A JMESPath identifier (quoted as JSON where it must be; `_toml` escapes it again)."""
    return (
        name
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name)
        else json.dumps(name, ensure_ascii=False)
    )


def _key(name: str) -> str:
    return name if _BARE.fullmatch(name) else _toml(name)


def _inline(table: dict[str, Any]) -> str:
    parts = []
    for key, value in table.items():
        text = _inline(value) if isinstance(value, dict) else _toml(str(value))
        parts.append(f"{_key(key)} = {text}")
    return "{ " + ", ".join(parts) + " }" if parts else "{}"


def _operations(document: dict[str, Any]) -> dict[str, list[tuple[str, str, dict[str, Any]]]]:
    found: dict[str, list[tuple[str, str, dict[str, Any]]]] = {name: [] for name in OPERATIONS}
    for path, item in _obj(document.get("paths")).items():
        for method in ("get", "post"):
            operation = _obj(item).get(method)
            if not isinstance(operation, dict):
                continue
            words = f"{path} {operation.get('operationId', '')}".lower()
            for name in OPERATIONS:
                if name in words:
                    found[name].append((method.upper(), str(path), operation))
    return found


def _answer_schema(operation: dict[str, Any]) -> Any:
    responses = _obj(operation.get("responses"))
    for code in ("200", "201", "403", "default"):
        response = responses.get(code)
        if isinstance(response, dict):
            media = _obj(response.get("content")).get("application/json")
            if isinstance(media, dict):
                return media.get("schema", {})
    return {}


def draft_profile(document: dict[str, Any], source: str) -> str:
    """A profile's TOML text for the service `document` describes."""
    doc = _Document(document)
    lines = [
        f"# A target profile drafted from {_comment(source)} by "
        "`compliance-bake target profile init`.",
        "# Check each `# TODO`, then try it: compliance-bake check --target URL \\",
        "#   --target-profile THIS-FILE --partner P --state S --wager-type W --explain",
        "# Every key: `compliance-bake docs target-profiles`.",
        "",
    ]
    lines += _auth(document)
    operations = _operations(document)
    for name in OPERATIONS:
        lines += ["", *_operation(doc, name, operations[name])]
    return "\n".join(lines) + "\n"


def _auth(document: dict[str, Any]) -> list[str]:
    schemes = _obj(_obj(document.get("components")).get("securitySchemes"))
    for scheme in schemes.values():
        if not isinstance(scheme, dict):
            continue
        if scheme.get("type") == "http" and str(scheme.get("scheme", "")).lower() == "bearer":
            return ["[auth]", 'header = "Authorization"', 'value = "Bearer {key}"']
        if scheme.get("type") == "apiKey" and scheme.get("in") == "header":
            return ["[auth]", f"header = {_toml(str(scheme.get('name')))}", 'value = "{key}"']
    return [
        "[auth]  # TODO: the document declares no bearer or header key; this is the default",
        'header = "Authorization"',
        'value = "Bearer {key}"',
    ]


def _operation(
    doc: _Document, name: str, candidates: list[tuple[str, str, dict[str, Any]]]
) -> list[str]:
    """The table of operation `name` drafted from its first candidate (a TODO names the others),
    or, without one, a TODO table to fill in."""
    if not candidates:
        fallback = {"health": "/health", "check": "/TODO", "status": "/TODO"}[name]
        lines = [
            f"[{name}]  # TODO: no operation names {name}; give its method and path",
            'method = "GET"',
            f"path = {_toml(fallback)}",
        ]
        lines += [f'{field} = "body.{field}"  # TODO: a guess' for field in REQUIRED[name]]
        return lines
    method, path, operation = candidates[0]
    others = len(candidates) - 1
    lines = [f"[{name}]" + (f"  # TODO: also {others} other candidate(s)" if others else "")]
    lines += [f"method = {_toml(method)}", *_request(doc, name, method, path, operation)]
    if name == "check":
        codes = [int(code) for code in _obj(operation.get("responses")) if code in ("200", "403")]
        lines.append(f"answers = {sorted(codes) or [200]}")
    schema = _answer_schema(operation)
    for field in REQUIRED[name] + OPTIONAL[name]:
        where = doc.find(schema, _ALIASES.get(field, (field.lower(),)))
        if where is not None:
            lines.append(f"{field} = {_toml(where)}")
        elif field in REQUIRED[name]:
            lines.append(f'{field} = "body.{field}"  # TODO: not found in the answer\'s schema')
    return lines


def _request(
    doc: _Document, name: str, method: str, path: str, operation: dict[str, Any]
) -> list[str]:
    """The request's lines: the path with its placeholders, the query and a POST's body, each
    with a TODO where a parameter or a value had to be guessed."""
    allowed = PLACEHOLDERS[name]
    query: dict[str, str] = {}
    todo: list[str] = []
    shared = _obj(_obj(doc.document.get("paths")).get(path)).get("parameters")
    parameters = [doc.resolve(p) for p in _seq(operation.get("parameters")) + _seq(shared)]
    # A placeholder fills one parameter, a required one first (serve's `betType` is optional).
    for parameter in sorted(parameters, key=lambda parameter: not parameter.get("required")):
        where, pname = parameter.get("in"), str(parameter.get("name", ""))
        guess = _placeholder(pname, allowed)
        guess = None if where == "query" and guess in query.values() else guess
        if where == "path":
            if guess is None:
                todo.append(f"path parameter {pname} has no placeholder")
            else:
                path = path.replace("{" + pname + "}", guess)
        elif where == "query" and (guess is not None or parameter.get("required")):
            query[pname] = guess if guess is not None else "TODO"
            if guess is None:
                todo.append(f"query {pname}")
    lines = [f"path = {_toml(path)}" + (f"  # TODO: {_comment('; '.join(todo))}" if todo else "")]
    if query:
        lines.append(
            f"query = {_inline(query)}" + ("  # TODO: a value" if "TODO" in query.values() else "")
        )
    if method != "POST":
        return lines
    content = _obj(_obj(operation.get("requestBody")).get("content"))
    body_schema = _obj(content.get("application/json")).get("schema")
    if body_schema is not None:
        body, guessed = _body(doc, body_schema, allowed, [_BODY_KEYS], ())
        lines.append(f"body = {_inline(body)}" + ("  # TODO: check the values" if guessed else ""))
    return lines


def _body(
    doc: _Document,
    schema: Any,
    allowed: frozenset[str],
    budget: list[int],
    within: tuple[int, ...],
) -> tuple[dict[str, Any], bool]:
    """The body's keys with placeholders or TODO; `budget` holds the keys left to draft, and
    `within` the schemas this one is inside (a schema that holds itself is drafted once)."""
    node = doc.resolve(schema)
    inside = (*within, id(node))
    body: dict[str, Any] = {}
    guessed = False
    for key, value in _obj(node.get("properties")).items():
        if budget[0] <= 0:
            return body, True
        budget[0] -= 1
        key = str(key)
        inner = doc.resolve(value)
        if inner.get("type") == "object" and id(inner) not in inside and len(inside) <= 8:
            body[key], more = _body(doc, inner, allowed, budget, inside)
            guessed = guessed or more
            continue
        guess = _placeholder(key, allowed)
        body[key] = guess if guess is not None else "TODO"
        guessed = guessed or guess is None
    return body, guessed
