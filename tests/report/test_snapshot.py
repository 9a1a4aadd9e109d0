"""The JSON the bake writes is the typed snapshot's own JSON.

`build_snapshot` makes the snapshot's JSON while it seals it (the shadow rows become JSON once,
for the signature and the files); that JSON must be exactly `snapshot.to_json()`, and its proofs
what the signing scheme gives when recomputed from it.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from compliance_bake.inputs.fixtures import load_fixtures
from compliance_bake.inputs.jsonio import dumps_pretty
from compliance_bake.report.models import DeepAudit, ZipWindow
from compliance_bake.report.snapshot import DEEP_AUDIT_COMMAND, BakeSettings, build_snapshot
from compliance_bake.resources import demo_fixtures_dir
from compliance_bake.signing import proofs
from compliance_bake.signing.integrity import proof_hmac_holds
from compliance_bake.signing.secret import Secret
from compliance_bake.targets.engine import Engine
from compliance_bake.targets.inprocess import InProcessTarget
from tests.conftest import SECRET

NOW = datetime(2026, 11, 22, 4, 6, tzinfo=UTC)
AUDIT = DeepAudit(
    ZipWindow(True, 90, "enriched", 3, 2, "ZIP 90d window via enriched_at (2/3 plays)"),
    "compliance-bake audit deep --plays p.csv --days 90",
)


@pytest.mark.parametrize("deep_audit", [None, AUDIT], ids=["plain", "deep-audit"])
def test_the_document_is_the_snapshots_json_and_its_proofs_hold(
    deep_audit: DeepAudit | None,
) -> None:
    fixtures = load_fixtures(demo_fixtures_dir())
    target = InProcessTarget(Engine(fixtures.registry))
    settings = BakeSettings(now=NOW, deep_audit=deep_audit)
    snapshot, document, _ = build_snapshot(fixtures, target, Secret(SECRET, "test"), settings)

    assert dumps_pretty(document) == dumps_pretty(snapshot.to_json())
    assert snapshot.deep_audit == deep_audit
    assert snapshot.links.to_json() == document["links"]
    assert snapshot.links.deep_audit == (AUDIT.command if deep_audit else DEEP_AUDIT_COMMAND)
    shadow, board = document["shadow"], document["enhancements"]
    assert snapshot.shadow.signature == proofs.shadow_digest(shadow)  # type: ignore[arg-type]
    assert snapshot.shadow.proof.digest == snapshot.shadow.signature
    assert snapshot.board.signature == proofs.board_signature(
        board  # type: ignore[arg-type]
    )
    assert snapshot.integrity.proof.digest == proofs.integrity_digest(document)
    for proof in (snapshot.shadow.proof, snapshot.integrity.proof):
        assert proof_hmac_holds(proof.to_json(), SECRET)
    assert snapshot.integrity.holds
    ids = [check.id for check in snapshot.integrity.checks]
    assert ("zip-window" in ids) is (deep_audit is not None)
