"""The files of `out/`, rendered from a snapshot, and their schemas.

`out/` mirrors the snapshot's link paths so that any static server can publish it as it is. The
bake writes exactly these bytes, and `verify` re-renders them to compare.
"""

from __future__ import annotations

from typing import Any

from compliance_bake.inputs import schemas
from compliance_bake.inputs.jsonio import dumps_pretty

API_FILE = "api/compliance.json"
ENHANCEMENTS_FILE = "registry/compliance-enhancements.json"
SHADOW_FILE = "registry/compliance-shadow.json"
PORTAL_FILE = "portal/compliance/index.html"

JSON_FILES: dict[str, str] = {
    API_FILE: schemas.SNAPSHOT,
    ENHANCEMENTS_FILE: schemas.REGISTRY_ENHANCEMENTS,
    SHADOW_FILE: schemas.REGISTRY_SHADOW,
}


def json_documents(snapshot: dict[str, Any]) -> dict[str, Any]:
    return {
        API_FILE: snapshot,
        ENHANCEMENTS_FILE: snapshot["enhancements"],
        SHADOW_FILE: snapshot["shadow"],
    }


def render_files(snapshot: dict[str, Any]) -> dict[str, bytes]:
    from compliance_bake.report.portal import render_portal

    files = {name: dumps_pretty(doc) for name, doc in json_documents(snapshot).items()}
    files[PORTAL_FILE] = render_portal(snapshot)
    return files
