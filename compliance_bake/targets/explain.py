"""`--explain`: what the HTTP target sent, what came back, and what each profile field made of it.

Written for someone writing a target profile: the request (method, URL, headers with the agent
key masked, body), the raw answer (status, headers, the body cut at 2 KiB) and, for each field,
its expression and the value it yielded. The record is built from the profile's templates and the
answer, so the key is not in it: the auth header shows `<agent key>` where the key goes, and
what the service sent (headers, body, the fields' values, the problem) goes through `redacted`
(`inputs/redaction.py`, as every output removes secrets) before it is shown (`masked`).
`render` takes the terminal's escaper: every text from outside is shown through it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from compliance_bake.errors import TargetError
from compliance_bake.inputs.redaction import redacted
from compliance_bake.targets.answers import KEY_SHOWN, Answer
from compliance_bake.targets.profile import MISSING
from compliance_bake.targets.routes import shown_json

BODY_SHOWN = 2048  # bytes of an answer's body shown


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
        # Each value as JSON, what the profile's author wrote the expression against.
        texts = {k: "nothing" if v is MISSING else shown_json(v) for k, v in values.items()}
        fields = tuple((name, expr.text, texts[name]) for name, expr in operation.fields)
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
    """The record with what the service sent through `redacted`: every copy of the agent key
    it echoed as KEY_SHOWN, every URL without its credentials."""
    secrets = (key,)

    def clean(text: str) -> str:
        return redacted(text, secrets, KEY_SHOWN)

    return replace(
        record,
        response_headers=tuple((name, clean(value)) for name, value in record.response_headers),
        body=clean(record.body.decode("utf-8", "replace")).encode(),
        fields=tuple((name, text, clean(value)) for name, text, value in record.fields),
        problem=clean(record.problem),
    )


def render(record: Exchange, escape: Callable[[object], str]) -> str:
    """The record as text, one section each: request, answer, fields. Every text in it that
    came from outside (the URL, headers, bodies, the values) goes through `escape`, the
    terminal's escaper (`report/escape.visible`, which this layer may not import): one line
    each (a body keeps its line breaks), with no control character that could retitle or
    rewrite the operator's terminal."""
    lines = [f"--- {record.operation}: request", f"{record.method} {escape(record.url)}"]
    lines += [f"{escape(name)}: {escape(value)}" for name, value in record.request_headers]
    if record.request_body is not None:
        lines += ["", _lines(record.request_body.decode("utf-8", "replace"), escape)]
    lines += [f"--- {record.operation}: answer", f"HTTP {record.status}"]
    lines += [f"{escape(name)}: {escape(value)}" for name, value in record.response_headers]
    body = _lines(record.body[:BODY_SHOWN].decode("utf-8", "replace"), escape)
    cut = len(record.body) - BODY_SHOWN
    lines += ["", body + (f"… ({cut} more bytes)" if cut > 0 else "")]
    lines.append(f"--- {record.operation}: fields")
    lines += [f"{name}: {escape(text)} -> {escape(value)}" for name, text, value in record.fields]
    if record.problem:
        lines.append(f"(no fields: {escape(record.problem)})")
    return "\n".join(lines)


def _lines(text: str, escape: Callable[[object], str]) -> str:
    """A body with its line breaks kept and every other control character escaped."""
    return "\n".join(escape(line) for line in text.split("\n"))
