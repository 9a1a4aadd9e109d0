"""The HTTP target's wire format in one import (docs/service-api.md): where it asks
(`routes.py`), what counts as an answer (`contract.py`, `answers.py`) and the words for what does
not (`refusals.py`). `http.py` moves the bytes; these modules decide what they mean.
"""

from __future__ import annotations

from compliance_bake.targets.answers import (
    Answer,
    decode_check,
    decode_health,
    decode_status,
    error_detail,
)
from compliance_bake.targets.refusals import (
    parse_retry_after,
    redirected,
    unauthorized,
    unexpected,
)
from compliance_bake.targets.routes import (
    CHECK_STATUSES,
    CONTRACT,
    ROUTE_CHECK,
    ROUTE_HEALTH,
    ROUTE_STATUS,
    TargetUrl,
    check_query,
    parse_target_url,
    shown,
    status_query,
)

__all__ = [
    "CHECK_STATUSES",
    "CONTRACT",
    "ROUTE_CHECK",
    "ROUTE_HEALTH",
    "ROUTE_STATUS",
    "Answer",
    "TargetUrl",
    "check_query",
    "decode_check",
    "decode_health",
    "decode_status",
    "error_detail",
    "parse_retry_after",
    "parse_target_url",
    "redirected",
    "shown",
    "status_query",
    "unauthorized",
    "unexpected",
]
