"""The files of `out/`, rendered from a snapshot, and their schemas.

`out/` mirrors the snapshot's link paths so that any static server can publish it as it is. The
bake writes exactly these bytes, and `verify` re-renders them to compare.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compliance_bake.inputs import schemas
from compliance_bake.inputs.jsonio import dumps_pretty
from compliance_bake.report.models import JsonValue, Snapshot

if TYPE_CHECKING:
    from compliance_bake.report.portal import PortalFacts
    from compliance_bake.report.portal_previous import PreviousRecord
    from compliance_bake.report.row_kinds import Totals

API_FILE = "api/compliance.json"
BOARD_FILE = "registry/compliance-enhancements.json"
SHADOW_FILE = "registry/compliance-shadow.json"
# The policy's questions (report/policy.py): not a copy of a snapshot block, so it is sealed with
# its own proof, and `verify` reads it beside the snapshot.
POLICY_FILE = "registry/compliance-policy.json"
PORTAL_FILE = "portal/compliance/index.html"
# `audit deep --out`'s report, the one other file out/ may hold; and the empty file a checkout
# keeps an empty out/ with.
AUDIT_FILE = "audit/zip-window.json"
KEEP_FILE = ".gitkeep"

JSON_FILES: dict[str, str] = {
    API_FILE: schemas.SNAPSHOT,
    BOARD_FILE: schemas.REGISTRY_BOARD,
    SHADOW_FILE: schemas.REGISTRY_SHADOW,
}


# The registry files and the snapshot blocks they hold, in the order they are written.
REGISTRY_BLOCKS = {BOARD_FILE: "enhancements", SHADOW_FILE: "shadow"}


def out_entries(out_dir: Path) -> Iterator[tuple[str, Path]]:
    """Every entry of `out_dir` by its POSIX name relative to it, with links to folders (never
    followed), but the empty KEEP_FILE a checkout keeps: what `verify` holds to what a bake
    writes."""
    for root, dirs, files in os.walk(out_dir):
        here = Path(root)
        for entry in [*files, *(d for d in dirs if (here / d).is_symlink())]:
            path = here / entry
            name = path.relative_to(out_dir).as_posix()
            info = path.lstat()
            if not (name == KEEP_FILE and stat.S_ISREG(info.st_mode) and info.st_size == 0):
                yield name, path


def render_files(
    snapshot: Snapshot | Mapping[str, Any],
    previous: PreviousRecord | None = None,
    *,
    document: Mapping[str, JsonValue] | None = None,
    facts: PortalFacts | None = None,
    totals: Totals | None = None,
    policy: Mapping[str, JsonValue] | None = None,
) -> dict[str, bytes]:
    """Every file of `out/`: the JSON files from the snapshot's JSON, the portal page from the
    snapshot. `snapshot` may be a JSON document that has passed the schema (as read from a
    file); `document`: `snapshot.to_json()`, when the caller has made it already (the bake, which
    validates it first); `previous`: the record of `bake --previous` (report/portal_previous.py);
    `facts`: what the page states beyond the snapshot (the signer, the audit's detail);
    `totals`: the portal's totals per state, when the caller has counted the rows' kinds.
    `policy`: the sealed policy record (report/policy.py), written as POLICY_FILE and shown on
    the page.
    """
    from compliance_bake.report.portal import render_portal

    if isinstance(snapshot, Snapshot):
        model = snapshot
        document = snapshot.to_json() if document is None else document
    else:
        model, document = Snapshot.from_json(snapshot), snapshot
    files = {API_FILE: dumps_pretty(document)}
    files.update((name, dumps_pretty(document[key])) for name, key in REGISTRY_BLOCKS.items())
    if policy is not None:
        files[POLICY_FILE] = dumps_pretty(policy)
    files[PORTAL_FILE] = render_portal(model, previous, totals, facts=facts, policy=policy)
    return files
