"""Agent keys on the decision routes (spec 5): `Authorization: Bearer <key>`.

Every refusal is the same bytes, whatever was wrong with the key: a caller learns nothing from
the answer about which prefixes exist. The key store does one direct lookup by prefix and a
constant-time comparison (keys.py).
"""

from __future__ import annotations

from typing import Protocol

import orjson
from starlette.requests import Request
from starlette.responses import Response

from compliance_bake.identity.keys import KeyRecord

REALM = 'Bearer realm="compliance-bake"'
_REFUSAL = orjson.dumps(
    {
        "error": {
            "code": "unauthorized",
            "message": "A valid agent key is required: Authorization: Bearer <key>",
        }
    }
)
_SCHEME = "bearer "


class KeyLookup(Protocol):
    """A `KeyStore`, or the `KeyFile` a running service re-reads when it changes."""

    def lookup(self, presented: str) -> KeyRecord | None: ...


class Unauthorized(Exception):
    """Raised by a handler; the app answers with `AgentAuth.refusal()`."""


class AgentAuth:
    def __init__(self, keys: KeyLookup) -> None:
        self._keys = keys

    def presented_key(self, header: str | None) -> str | None:
        """The key of `Bearer <key>`: one space, no padding, nothing else (scheme any case)."""
        if header is None or header[: len(_SCHEME)].lower() != _SCHEME:
            return None
        return header[len(_SCHEME) :]

    def require(self, request: Request) -> None:
        key = self.presented_key(request.headers.get("authorization"))
        if key is None or self._keys.lookup(key) is None:
            raise Unauthorized

    @staticmethod
    def refusal() -> Response:
        return Response(
            _REFUSAL,
            status_code=401,
            media_type="application/json; charset=utf-8",
            headers={"WWW-Authenticate": REALM, "Cache-Control": "no-store"},
        )
