"""Response shapes for the OpenAPI document (docs/service-api.md).

Handlers send pre-encoded bodies; these models describe them, and the schemathesis test holds the
real answers to these descriptions.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class HealthAnswer(_Strict):
    ok: bool
    states: list[str] = Field(description="Regulated two-letter state codes.")
    runtime: str = Field(description="The service runtime; bakes write it into bunVersion.")


class CheckAnswer(_Strict):
    allowed: bool
    status: int = Field(description="200 when allowed, 403 when blocked: the HTTP status.")
    reason: str | None = Field(
        default=None, description="Present exactly when blocked, e.g. Partner not licensed in NJ."
    )
    partner: str
    state: str
    wagerType: str  # noqa: N815 - the wire name


class StatusAnswer(_Strict):
    ok: bool
    state: str
    licenseStatus: str  # noqa: N815 - the wire name
    hasLimits: bool  # noqa: N815 - the wire name


class ErrorDetail(_Strict):
    code: str
    message: str


class ErrorBody(_Strict):
    error: ErrorDetail
