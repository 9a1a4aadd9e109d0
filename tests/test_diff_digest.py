"""diff/digest.py: the side's integrity digest, chunked and hashed in a thread, is the digest."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from compliance_bake.diff.digest import typed_digest
from compliance_bake.signing import proofs


def _snapshot(baked: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((baked / "api" / "compliance.json").read_bytes())
    return document


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 25_000])
def test_the_digest_is_the_recorded_one_whatever_the_chunks(baked: Path, chunk: int) -> None:
    snapshot = _snapshot(baked)
    assert typed_digest(snapshot, chunk) == snapshot["integrity"]["proof"]["digest"]


def test_it_equals_the_reference_on_edited_snapshots(baked: Path) -> None:
    snapshot = _snapshot(baked)
    edits: list[Any] = [
        lambda s: s["shadow"]["rows"].clear(),
        lambda s: s["shadow"]["rows"][0].update(partner="node-\ue000-high"),  # past U+E000
        lambda s: s["shadow"]["rows"][1].update(partner="n\u00e9e \U0001f600"),
        lambda s: s["shadow"]["rows"][2].update(realAllowed=1),
        lambda s: s["shadow"].update(rows="not a list"),
        lambda s: s["geo"].update(extra=1.5),  # a float outside the rows: canon's own guard
    ]
    for edit in edits:
        edited = copy.deepcopy(snapshot)
        edit(edited)
        assert typed_digest(edited, 2) == proofs.integrity_digest(edited)
        assert typed_digest(edited, 2) != snapshot["integrity"]["proof"]["digest"]


def test_a_number_in_a_row_never_reaches_the_digest(baked: Path) -> None:
    """The rows' float scan is skipped because the schema admits no number in a row: a side
    with one is refused before its authenticity counts, in-process and forked alike."""
    from compliance_bake.diff.parallel import check_beside
    from compliance_bake.diff.sides import Keys, SideSource
    from compliance_bake.errors import InputError
    from compliance_bake.signing.secret import resolve_secret

    snapshot = _snapshot(baked)
    snapshot["shadow"]["rows"][0]["realAllowed"] = 1.0
    side = SideSource("NEW", "edited.json", None, 10)
    keys = Keys(resolve_secret(None), ())
    for fork_min_bytes in (10**9, 1):
        outcome = check_beside(snapshot, side, keys, fork_min_bytes)()
        assert isinstance(outcome, InputError) and "not a snapshot" in outcome.message
