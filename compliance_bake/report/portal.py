"""The portal page (out/portal/compliance/index.html): self-contained, every cell escaped.

Rendered by Jinja2 with autoescaping on; every cell also passes through `escape.escape_html`
(the function the `runtime.escapeHTML` self-check measures). The page loads nothing from the
network: inline CSS, no scripts, and a Content-Security-Policy that forbids fetching anything.
Large matrices (more than GRID_LIMIT rows) show per-state totals and the mismatched rows instead
of the full grid, and the geo table shows its first GEO_LIMIT partners; the JSON holds them all.
A verdict banner on top says PASS, or FAIL with each failed integrity check (the ZIP window
included); grid cells are coloured by match (real = shadow), the decisions written as text.
The totals are counted with C-level iteration (one `Counter` of (state, real, match), `compress`):
a Python loop over 500,000 rows costs more than the rest of the page. The template is compiled in
each process that renders a page (a few tens of milliseconds).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from functools import lru_cache
from itertools import compress, islice
from operator import attrgetter, not_
from typing import Any

from markupsafe import Markup

from compliance_bake.report import escape
from compliance_bake.report.models import IntegrityCheck, ShadowRow, Snapshot
from compliance_bake.resources import templates_dir

GRID_LIMIT = 5_000
MISMATCH_LIMIT = 500
GEO_LIMIT = 500
_STATE_REAL_MATCH = attrgetter("state", "real_allowed", "match")
_MATCH = attrgetter("match")


def _cell(value: object) -> Markup:
    return escape.escape_html(value)


def _state_json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


@lru_cache(maxsize=1)
def _environment() -> Any:
    from jinja2 import Environment, FileSystemLoader, StrictUndefined

    env = Environment(
        loader=FileSystemLoader(str(templates_dir())),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["cell"] = _cell
    env.filters["state"] = _state_json
    return env


Totals = dict[Any, dict[str, int]]


def state_totals(rows: Sequence[ShadowRow]) -> Totals:
    """One count per (state, real decision, match): states in order of first appearance; per
    state "allow", "block", "mismatches"."""
    per_state: Totals = {}
    for (state, real, match), count in Counter(map(_STATE_REAL_MATCH, rows)).items():
        totals = per_state.setdefault(state, {"allow": 0, "block": 0, "mismatches": 0})
        totals["allow" if real else "block"] += count
        if not match:
            totals["mismatches"] += count
    return per_state


def _grid(snapshot: Snapshot, per_state: Totals | None = None) -> dict[str, Any]:
    rows = snapshot.shadow.rows
    full = len(rows) <= GRID_LIMIT
    if per_state is None:
        per_state = state_totals(rows)
    return {
        "full": full,
        "states": list(per_state),
        "partners": list(dict.fromkeys(r.partner for r in rows)) if full else [],
        "cells": {(r.state, r.partner): r for r in rows} if full else {},
        "per_state": per_state,
        "mismatched": _mismatched(rows) if any(t["mismatches"] for t in per_state.values()) else [],
        "limit": GRID_LIMIT,
    }


def _mismatched(rows: Sequence[ShadowRow]) -> list[ShadowRow]:
    """The first MISMATCH_LIMIT mismatched rows (a pass over every row: only when there are)."""
    return list(islice(compress(rows, map(not_, map(_MATCH, rows))), MISMATCH_LIMIT))


def _verdict(snapshot: Snapshot) -> dict[str, Any]:
    """The banner: PASS, or FAIL with the label of each integrity check that failed."""
    failed: tuple[IntegrityCheck, ...] = snapshot.integrity.failed
    return {"ok": not failed, "failed": failed}


def render_portal(
    snapshot: Snapshot | Mapping[str, Any],
    previous: Mapping[str, Any] | None = None,
    totals: Totals | None = None,
) -> bytes:
    """The page; with `previous` (a record of report/portal_previous.py) it also shows the
    "since the previous snapshot" section rendered from that record alone. `snapshot` may be a
    JSON document that has passed the schema (as read from a file). `totals`: what
    `state_totals` gives for the shadow rows, when the caller has counted it another way."""
    from compliance_bake.report import portal_previous

    if not isinstance(snapshot, Snapshot):
        snapshot = Snapshot.from_json(snapshot)
    template = _environment().get_template("portal.html.j2")
    partners = snapshot.geo.partners
    page: str = template.render(
        s=snapshot,
        grid=_grid(snapshot, totals),
        verdict=_verdict(snapshot),
        geo=partners[:GEO_LIMIT],
        geo_limit=GEO_LIMIT,
        previous=None if previous is None else portal_previous.view(previous),
    )
    return page.encode("utf-8")
