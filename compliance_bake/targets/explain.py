"""`--explain`: what the HTTP target sent, what came back, and what each profile field made of it.

Written for someone writing a target profile: the request (method, URL, headers with the agent
key masked, body), the raw answer (status, headers, the body cut at 2 KiB) and, for each field,
its expression and the value it yielded. The record is built from the profile's templates and the
answer, so the key is not in it: the auth header shows `<agent key>` where the key goes, and a
service that echoes the key back has it masked the same way (`masked`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import orjson

from compliance_bake.errors import TargetError
from compliance_bake.targets.answers import Answer
from compliance_bake.targets.profile import MISSING
from compliance_bake.targets.routes import shown

BODY_SHOWN = 2048  # bytes of an answer's body shown
KEY_SHOWN = "<agent key>"


@dataclass(frozen=True, slots=True)
class Exchange:
    operation: str  # health, check, status
    method: str
    url: str
    request_headers: tuple[tuple[str, str], ...]
    request_body: bytes | None
    status: int
    response_headers: tuple[tuple[str, str], ...]
    body: bytes
    fields: tuple[tuple[str, str, str], ...]  # (field, expression, what it yielded)
    problem: str  # "" or why the fields could not be read


Explain = Callable[[Exchange], None]


def exchange(
    answer: Answer,
    url: str,
    request_headers: Mapping[str, str],
    request_body: bytes | None,
    status: int,
    headers: Mapping[str, str],
    raw: bytes,
) -> Exchange:
    """The record of one request and its answer, every field mapped (never raises)."""
    operation = answer.operation
    fields: tuple[tuple[str, str, str], ...] = ()
    problem = ""
    try:
        lower = {name.lower(): value for name, value in headers.items()}
        values: dict[str, Any] = answer.fields(status, lower, raw)
        fields = tuple(
            (name, expression.text, "nothing" if values[name] is MISSING else _json(values[name]))
            for name, expression in operation.fields
        )
    except TargetError as error:
        problem = error.message
    return Exchange(
        operation=operation.name,
        method=operation.method,
        url=url,
        request_headers=tuple(request_headers.items()),
        request_body=request_body,
        status=status,
        response_headers=tuple(headers.items()),
        body=raw,
        fields=fields,
        problem=problem,
    )


def masked(record: Exchange, key: str | None) -> Exchange:
    """The record with every copy of the agent key a service echoed replaced by KEY_SHOWN."""
    if not key:
        return record
    raw = key.encode()
    return replace(
        record,
        response_headers=tuple(
            (name, value.replace(key, KEY_SHOWN)) for name, value in record.response_headers
        ),
        body=record.body.replace(raw, KEY_SHOWN.encode()),
        fields=tuple(
            (name, text, value.replace(key, KEY_SHOWN)) for name, text, value in record.fields
        ),
        problem=record.problem.replace(key, KEY_SHOWN),
    )


def _json(value: Any) -> str:
    """A yielded value as JSON (what the profile's author wrote the expression against)."""
    try:
        return shown(orjson.dumps(value).decode(), False)
    except TypeError:  # pragma: no cover - JMESPath yields JSON values only
        return shown(value)


def render(record: Exchange) -> str:
    """The record as text, one section each: request, answer, fields."""
    lines = [f"--- {record.operation}: request", f"{record.method} {record.url}"]
    lines += [f"{name}: {value}" for name, value in record.request_headers]
    if record.request_body is not None:
        lines += ["", record.request_body.decode("utf-8", "replace")]
    lines += [f"--- {record.operation}: answer", f"HTTP {record.status}"]
    lines += [f"{name}: {value}" for name, value in record.response_headers]
    body = record.body[:BODY_SHOWN].decode("utf-8", "replace")
    cut = len(record.body) - BODY_SHOWN
    lines += ["", body + (f"… ({cut} more bytes)" if cut > 0 else "")]
    lines.append(f"--- {record.operation}: fields")
    lines += [f"{name}: {text} -> {value}" for name, text, value in record.fields]
    if record.problem:
        lines.append(f"(no fields: {record.problem})")
    return "\n".join(lines)
