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


# The registry files and the snapshot blocks they hold, in the order they are written.
REGISTRY_BLOCKS = {ENHANCEMENTS_FILE: "enhancements", SHADOW_FILE: "shadow"}


def json_documents(snapshot: dict[str, Any]) -> dict[str, Any]:
    return {
        API_FILE: snapshot,
        ENHANCEMENTS_FILE: snapshot["enhancements"],
        SHADOW_FILE: snapshot["shadow"],
    }


def render_registry(snapshot: dict[str, Any]) -> dict[str, bytes]:
    """The two registry files: the snapshot's own blocks, final before its integrity proof is."""
    return {name: dumps_pretty(snapshot[key]) for name, key in REGISTRY_BLOCKS.items()}


def render_files(
    snapshot: dict[str, Any],
    *,
    registry: dict[str, bytes] | None = None,
    previous: dict[str, Any] | None = None,
) -> dict[str, bytes]:
    """Every file of `out/`; `registry`: the registry files rendered already (render_registry);
    `previous`: the record of `bake --previous` (report/portal_previous.py)."""
    from compliance_bake.report.portal import render_portal

    registry = registry or render_registry(snapshot)
    files = {API_FILE: dumps_pretty(snapshot)}
    files.update((name, registry[name]) for name in REGISTRY_BLOCKS)
    files[PORTAL_FILE] = render_portal(snapshot, previous)
    return files
