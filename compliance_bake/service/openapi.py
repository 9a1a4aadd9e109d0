"""The service's OpenAPI document, as openapi-spec-validator and redocly read it.

FastAPI builds it from the same declarations that route and validate requests, so it cannot
drift from the code. Two things are added here: HEAD beside every GET (the `HeadAsGet`
middleware answers HEAD on every GET route, so the document says so, each operation with an
operationId of its own), and the agent key scheme.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI


def _with_head(paths: dict[str, Any]) -> None:
    """Document HEAD beside every GET (`HeadAsGet` answers it on every GET route) as an
    operation of its own: its own operationId, the GET's parameters and security, and the
    GET's statuses and headers without a body."""
    for operations in paths.values():
        get = operations.get("get")
        if get is None:
            continue
        head = {k: v for k, v in get.items() if k not in ("operationId", "responses", "summary")}
        head["summary"] = f"{get.get('summary', 'The GET answer')}: status and headers, no body"
        head["operationId"] = get["operationId"].removesuffix("_get") + "_head"
        head["responses"] = {
            status: {k: v for k, v in answer.items() if k != "content"}
            for status, answer in get["responses"].items()
        }
        operations["head"] = head


def install_document(app: FastAPI) -> None:
    """Build the document once, from the routes, with HEAD beside every GET and the agent key
    scheme that the decision routes' `security` refers to."""
    from fastapi.openapi.utils import get_openapi

    def document() -> dict[str, Any]:
        if app.openapi_schema is None:
            doc = get_openapi(
                title=app.title,
                version=app.version,
                description=app.description,
                routes=app.routes,
            )
            _with_head(doc["paths"])
            doc.setdefault("components", {})["securitySchemes"] = {
                "agentKey": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "An agent key from `compliance-bake keys mint`.",
                }
            }
            app.openapi_schema = doc
        return app.openapi_schema

    app.openapi = document  # type: ignore[method-assign]
