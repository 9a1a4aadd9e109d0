"""Response shapes for the OpenAPI document (docs/service-api.md).

Declared once, in `compliance_bake/targets/contract.py`, which the HTTP target validates answers
with: the document `serve` publishes and the target's checks cannot drift apart. Handlers send
pre-encoded bodies; the schemathesis test holds the real answers to these descriptions.
"""

from __future__ import annotations

from compliance_bake.targets.contract import (
    CheckAnswer,
    ErrorBody,
    ErrorDetail,
    HealthAnswer,
    StatusAnswer,
)

__all__ = ["CheckAnswer", "ErrorBody", "ErrorDetail", "HealthAnswer", "StatusAnswer"]
