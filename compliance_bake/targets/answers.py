"""Decoding the service's answers: strict JSON, the profile's fields mapped out of it, the shapes
of `contract.py`, and the checks that go beyond one answer's shape (the echo matches the question,
`status` agrees with the HTTP status, a 403 is never `allowed: true`, a `reason` only on a block).

Pure functions, no sockets. Everything doubtful is a `TargetError` whose message starts with the
method and route (`GET /api/compliance/check: ...`), names the profile's expression and what it
yielded, and never quotes a credential: every text of an answer that goes on (into a decision, the
runtime, a message) has been through `redacted` with the agent key, so a service that echoes the
key, or a URL with a password or a token, never gets it into a snapshot, a report or a terminal.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from jmespath.exceptions import JMESPathError
from pydantic import TypeAdapter, ValidationError

from compliance_bake.errors import TargetError
from compliance_bake.inputs.jsonio import (
    StrictJSONError,
    loads_compact_flat,
    loads_strict,
    loads_unambiguous,
    strict_problem,
)
from compliance_bake.inputs.models import STATUS_ALLOWED, Decision, Health, StatusPanel
from compliance_bake.inputs.redaction import redacted
from compliance_bake.targets import contract
from compliance_bake.targets.interface import CheckRequest
from compliance_bake.targets.profile import MISSING, Operation, Profile
from compliance_bake.targets.routes import shown

T = TypeVar("T")
KEY_SHOWN = "<agent key>"  # where a secret stood in an answer's text
_EXPECTED = {
    "bool_type": "a boolean",
    "int_type": "an integer",
    "string_type": "a string",
    "list_type": "an array",
    "dict_type": "an object",
}
_EMPTY = frozenset(("string_too_short", "string_pattern_mismatch"))
_CLEAN = frozenset((bool, type(None)))  # values strict_problem never refuses (fast path)


def kind(value: object) -> str:
    """`a string`, `an integer`, `null` ...: a JSON value's type, for a message."""
    if value is None:
        return "null"
    return {
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "an array",
        dict: "an object",
    }.get(type(value), type(value).__name__)


class Answer:
    """Decodes one JSON answer for one operation of a profile; every refusal names the route."""

    __slots__ = ("builtin", "contract", "hint", "label", "operation", "secrets")

    def __init__(
        self, operation: Operation, base: str, profile: Profile, secrets: tuple[str, ...] = ()
    ) -> None:
        self.operation = operation
        self.secrets = secrets  # what `redacted` removes from the answer's texts
        self.label = operation.label
        self.contract = profile.source
        self.builtin = profile.builtin
        check = "check its version" if profile.builtin else "try `compliance-bake check --explain`"
        self.hint = f"the service at {base} does not answer as {profile.source} says; {check}"

    def fail(self, problem: str) -> TargetError:
        return TargetError(self.redacted(f"{self.label}: {problem}"), self.hint)

    def redacted(self, text: str) -> str:
        """`text` without the secrets (`inputs/redaction.py`), what KEY_SHOWN marks."""
        return redacted(text, self.secrets, KEY_SHOWN)

    def body(self, raw: bytes) -> tuple[dict[str, Any], bool]:
        """The answer's object, and whether every value in it is strict already (the fast
        path's: no fraction, NaN or 64-bit overflow anywhere, so nothing mapped needs a look)."""
        fast = loads_compact_flat(raw)
        if fast is not None:
            return fast, True
        try:
            # Unambiguous (a key twice anywhere is refused); the strict checks apply to the
            # values the profile reads (`fields`), not to parts no expression reads.
            value = loads_unambiguous(raw)
        except StrictJSONError as exc:
            raise self.fail(f"the answer is not strict JSON ({exc} at {exc.where})") from None
        if not isinstance(value, dict):
            raise self.fail(f"the answer is {kind(value)}, not a JSON object")
        return value, False

    def fields(self, status: int, headers: Mapping[str, str], raw: bytes) -> dict[str, Any]:
        """Each field of the operation on this answer (MISSING where a field path found none)."""
        body, strict = self.body(raw)
        try:
            values = self.operation.map(status, headers, body)
        except JMESPathError as exc:
            failed = _failing_expression(self.operation, status, headers, body)
            detail = " ".join(str(exc).split())
            raise self.fail(f"`{failed}` failed on the answer ({shown(detail, False)})") from None
        if strict:
            return values
        for name, expression in self.operation.fields:
            value = values[name]
            kind_ = type(value)
            if kind_ in _CLEAN or (kind_ is str and value.isascii()):
                continue
            problem = strict_problem(value)
            if problem is not None:
                raise self.fail(f"`{expression.text}` yielded what is not strict JSON ({problem})")
        return values

    def shaped(
        self, shape: TypeAdapter[T], status: int, headers: Mapping[str, str], raw: bytes
    ) -> T:
        """The mapped answer, held to its declared shape (the adapter's core validator,
        called directly: the TypeAdapter wrapper costs more than the validation)."""
        values = self.fields(status, headers, raw)
        mapped = {name: value for name, value in values.items() if value is not MISSING}
        try:
            value: T = shape.validator.validate_python(mapped)
        except ValidationError as exc:
            raise self.fail(self._first_problem(exc, values)) from None
        # Held to its shape, each value is a string, a list of strings, a boolean or an integer.
        shaped: Any = value
        for name, item in shaped.items():
            if type(item) is str:
                shaped[name] = self.redacted(item)
            elif type(item) is list:
                shaped[name] = [self.redacted(text) for text in item]
        return value

    def _first_problem(self, exc: ValidationError, values: dict[str, Any]) -> str:
        error = exc.errors(include_url=False)[0]
        loc = error["loc"]
        where = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc)
        name = where.lstrip(".")
        if error["type"] == "missing":
            problem = f"`{name}` is missing from the answer"
        elif error["type"] in _EMPTY and not str(error["input"]).strip():
            problem = f"`{name}` is empty"
        elif error["type"] == "string_pattern_mismatch":
            problem = f"`{name}` is {shown(error['input'])}, not a two-letter state code such as NJ"
        elif (expected := _EXPECTED.get(error["type"])) is not None:
            problem = f"`{name}` is {kind(error['input'])}, not {expected}"
        else:  # pragma: no cover - every declared constraint is above
            problem = f"`{name}`: {error['msg']}"
        return problem + self.yielded(str(loc[0]), values)

    def declares(self, field: str) -> bool:
        """Whether the profile gives `field` as a literal (its value is the profile's word,
        not the service's)."""
        return any(
            name == field
            and expression.keys is None
            and expression.parsed.parsed["type"] == "literal"
            for name, expression in self.operation.fields
        )

    def yielded(self, field: str, values: Mapping[str, Any]) -> str:
        """` (`body.x` yielded 'y')`: where a field came from, for a message."""
        for name, expression in self.operation.fields:
            if name == field:
                value = values.get(field, MISSING)
                said = "nothing" if value is MISSING else shown(value)
                return f" (`{expression.text}` yielded {said})"
        return ""


def _failing_expression(
    operation: Operation, status: int, headers: Mapping[str, str], body: Any
) -> str:
    lower = {name.lower(): value for name, value in headers.items()}
    context = {"body": body, "http": {"status": status, "headers": lower}}
    for _, expression in operation.fields:
        try:
            expression.search(context)
        except JMESPathError:
            return expression.text
    return "?"  # pragma: no cover - map() raised, so one of them does


_DECISIONS: dict[tuple[bool, int, str | None], Decision] = {}


def decode_check(
    answer: Answer,
    http_status: int,
    headers: Mapping[str, str],
    raw: bytes,
    request: CheckRequest,
) -> Decision:
    """The decision, when the mapped answer is one (with several `answers`, the HTTP status
    says the decision too, and the two must agree)."""
    body = answer.shaped(contract.CHECK, http_status, headers, raw)
    allowed, status = body["allowed"], body["status"]
    if status != http_status and len(answer.operation.answers) > 1:
        raise answer.fail(f"`status` {status} disagrees with the HTTP status {http_status}")
    if allowed != (status == STATUS_ALLOWED):
        raise answer.fail(f"an HTTP {status} with allowed: {'true' if allowed else 'false'}")
    reason = body.get("reason")
    if allowed and reason is not None:
        raise answer.fail("an allowed check carries a `reason`")
    for name, asked in zip(("partner", "state", "wagerType"), request, strict=True):
        got = body.get(name)
        if got is not None and got != asked:
            raise answer.fail(
                f"answered another question: asked {name}={shown(asked)}, got {shown(got)}"
            )
    key = (allowed, status, reason)
    # Decisions repeat (one reason per state); share them, as the engine does, to keep a
    # 500,000-row matrix small.
    decision = _DECISIONS.get(key)
    if decision is None:
        decision = Decision(allowed, status, reason)
        if len(_DECISIONS) < 4096:
            _DECISIONS[key] = decision
    return decision


def decode_health(
    answer: Answer, http_status: int, headers: Mapping[str, str], raw: bytes
) -> tuple[Health, str]:
    """The health answer, and the runtime it reports (`contract.RUNTIME_UNKNOWN` if none)."""
    body = answer.shaped(contract.HEALTH, http_status, headers, raw)
    runtime = body.get("runtime", contract.RUNTIME_UNKNOWN)
    if "runtime" in body and answer.declares("runtime"):
        runtime = f"{runtime}{contract.RUNTIME_DECLARED}"
    return Health(ok=body["ok"], states=tuple(body["states"])), runtime


def decode_status(
    answer: Answer, http_status: int, headers: Mapping[str, str], raw: bytes, state: str
) -> StatusPanel:
    body = answer.shaped(contract.STATUS, http_status, headers, raw)
    if body["state"] != state:
        raise answer.fail(
            f"answered another question: asked state={shown(state)}, got {shown(body['state'])}"
        )
    return StatusPanel(
        ok=body["ok"],
        state=body["state"],
        license_status=body["licenseStatus"],
        has_limits=body["hasLimits"],
    )


def error_detail(raw: bytes) -> str:
    """`code: message` of an error body of the contract's shape, or "" (never raises)."""
    try:
        error = contract.ERROR.validate_python(loads_strict(raw))["error"]
    except (StrictJSONError, ValidationError):
        return ""
    return f" ({shown(error['code'], False)}: {shown(error['message'], False)})"
