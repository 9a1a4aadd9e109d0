"""The service's answers, declared once (docs/service-api.md): `serve` publishes these shapes in
/openapi.json and the HTTP target validates every answer with the same declarations.

Each shape holds what the specification requires (spec 4: `{ok, states}`, `{allowed, status}`,
the status panel's four fields) as required properties, and what the reference service adds (the
runtime, the echoed question, the reason of a block) as optional ones: a service that sends only
the spec's fields is a valid target, and an extra field it sends is ignored. Validation is strict
(no `1` for `true`, no `"200"` for `200`); an optional field, when present, may not be null.

The checks that go beyond one answer's shape (the echo matches the question, `status` equals the
HTTP status, a 403 is never `allowed: true`) are in `answers.py`.
"""

from __future__ import annotations

from typing import Annotated, Any, NotRequired

from pydantic import ConfigDict, Field, TypeAdapter, with_config
from typing_extensions import TypedDict  # pydantic needs it before Python 3.12

# What `bunVersion` holds when a service's /health does not say which runtime answers.
RUNTIME_UNKNOWN = "unknown (the service did not report its runtime)"
# After a runtime the target profile states as a literal: the profile declared it, the
# service did not report it.
RUNTIME_DECLARED = " (declared by the target profile, not reported by the service)"

_STRICT = ConfigDict(strict=True)
STATE_CODE = r"^[A-Z]{2}$"  # as the snapshot's schema says (`stateCode`)
_Code = Annotated[str, Field(pattern=STATE_CODE, description="A two-letter state code.")]
_Echo = Annotated[str, Field(description="Echoed from the request, when the service echoes.")]


@with_config(_STRICT)
class HealthAnswer(TypedDict):
    """GET /health."""

    ok: bool
    states: Annotated[list[_Code], Field(description="The regulated states.")]
    runtime: NotRequired[
        Annotated[
            str,
            Field(
                pattern=r"\S",
                description="The runtime that answers; a bake writes it into bunVersion. "
                f"Optional: without it, bunVersion reads {RUNTIME_UNKNOWN!r}.",
            ),
        ]
    ]


@with_config(_STRICT)
class CheckAnswer(TypedDict):
    """GET /api/compliance/check, HTTP 200 (allowed) or 403 (blocked)."""

    allowed: bool
    status: Annotated[int, Field(description="200 when allowed, 403 when blocked: the HTTP status")]
    reason: NotRequired[
        Annotated[
            str,
            Field(
                min_length=1,
                description="Only on a block, e.g. Partner not licensed in NJ. Optional.",
            ),
        ]
    ]
    partner: NotRequired[_Echo]
    state: NotRequired[_Echo]
    wagerType: NotRequired[_Echo]  # noqa: N815 - the wire name
    sport: NotRequired[_Echo]
    market: NotRequired[_Echo]
    amount: NotRequired[_Echo]
    betType: NotRequired[_Echo]  # noqa: N815 - the wire name
    age: NotRequired[_Echo]
    zipCode: NotRequired[_Echo]  # noqa: N815 - the wire name


@with_config(_STRICT)
class StatusAnswer(TypedDict):
    """GET /api/compliance/status: the status panel."""

    ok: bool
    state: str
    licenseStatus: str  # noqa: N815 - the wire name
    hasLimits: bool  # noqa: N815 - the wire name


@with_config(_STRICT)
class ErrorDetail(TypedDict):
    code: str
    message: str


@with_config(_STRICT)
class ErrorBody(TypedDict):
    """Every error answer (400, 401, 404, 405)."""

    error: ErrorDetail


HEALTH: TypeAdapter[HealthAnswer] = TypeAdapter(HealthAnswer)
CHECK: TypeAdapter[CheckAnswer] = TypeAdapter(CheckAnswer)
STATUS: TypeAdapter[StatusAnswer] = TypeAdapter(StatusAnswer)
ERROR: TypeAdapter[ErrorBody] = TypeAdapter(ErrorBody)

# The shapes by the name /openapi.json gives their component.
ANSWERS: dict[str, TypeAdapter[Any]] = {
    "HealthAnswer": HEALTH,
    "CheckAnswer": CHECK,
    "StatusAnswer": STATUS,
    "ErrorBody": ERROR,
}
