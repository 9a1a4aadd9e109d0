"""Sealing from canonical bytes, and the integrity checks: each fails when what it checks breaks.

The bake signs each block from bytes made once (`proofs.seal_shadow`) and then checks its
signatures once from the content. These tests hold that the sealed values are what the scheme
gives when recomputed from scratch, and that every integrity check the bake signs can fail.
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

import pytest

from compliance_bake.inputs.fixtures import load_fixtures
from compliance_bake.report.snapshot import BakeSettings, build_snapshot
from compliance_bake.resources import demo_fixtures_dir
from compliance_bake.signing import proofs
from compliance_bake.signing.canon import canon
from compliance_bake.signing.integrity import digests_consistent, proof_hmac_holds
from compliance_bake.signing.secret import Secret
from compliance_bake.targets.engine import Engine
from compliance_bake.targets.inprocess import InProcessTarget
from compliance_bake.verify.rules.shadow import content_checks
from tests.conftest import OTHER_SECRET, SECRET


@pytest.fixture(scope="module")
def snapshot() -> dict[str, Any]:
    fixtures = load_fixtures(demo_fixtures_dir())
    settings = BakeSettings(now=datetime(2026, 11, 22, 4, 6, tzinfo=UTC))
    target = InProcessTarget(Engine(fixtures.registry))
    return build_snapshot(fixtures, target, Secret(SECRET, "test"), settings).document


def _checks(snap: dict[str, Any], secret: str = SECRET) -> dict[str, bool]:
    checks = content_checks(snap, proof_hmac_holds(snap["shadow"]["proof"], secret))
    return {check.id: check.ok for check in checks}


def test_sealed_values_equal_the_scheme_recomputed_from_scratch(snapshot: dict[str, Any]) -> None:
    shadow, board = snapshot["shadow"], snapshot["enhancements"]
    assert board["signature"] == proofs.board_signature(board)
    assert shadow["signature"] == shadow["proof"]["digest"] == proofs.shadow_digest(shadow)
    assert snapshot["integrity"]["proof"]["digest"] == proofs.integrity_digest(snapshot)
    for proof in (shadow["proof"], snapshot["integrity"]["proof"]):
        assert proof_hmac_holds(proof, SECRET)
    assert all(_checks(snapshot).values())


def test_the_shadow_seal_returns_the_signed_blocks_canonical_bytes(
    snapshot: dict[str, Any],
) -> None:
    shadow = {k: v for k, v in snapshot["shadow"].items() if k not in ("signature", "proof")}
    shadow = copy.deepcopy(shadow)
    digest, signed = proofs.seal_shadow(shadow, shadow["rows"], "python", "x", SECRET)

    assert b"".join(signed) == canon(shadow)
    assert digest == proofs.shadow_digest(shadow) == shadow["signature"]
    with pytest.raises(ValueError):
        proofs.seal_shadow(shadow, list(shadow["rows"]), "python", "x", SECRET)


@pytest.mark.parametrize(
    ("check", "breakage"),
    [
        ("sha3", lambda s: s["shadow"]["rows"][0].update(partner="someone-else")),
        ("sha3", lambda s: s["shadow"].update(signature="0" * 64)),
        ("sha3", lambda s: s["shadow"]["proof"].update(digest="0" * 64)),
        ("sha3", lambda s: s["enhancements"]["rows"][0].update(feature="renamed")),
        ("sha3", lambda s: s["enhancements"].update(total=s["enhancements"]["total"] + 1)),
        ("hmac", lambda s: s["shadow"]["proof"].update(hmac="0" * 64)),
        ("hmac", lambda s: s["shadow"]["proof"].update(generatedAt="2000-01-01T00:00:00.000Z")),
        ("hmac", lambda s: s["shadow"]["proof"].pop("hmac")),
        ("geo", lambda s: s["geo"]["partners"][0].update(zipCode="ABCDE")),
        ("geo", lambda s: s["geo"].update(partners=[])),
        ("enhancements", lambda s: s["enhancements"].update(passed=0)),
        ("shadow", lambda s: s["shadow"]["summary"].update(mismatches=1)),
    ],
)
def test_each_check_fails_when_what_it_checks_is_broken(
    snapshot: dict[str, Any], check: str, breakage: Any
) -> None:
    broken = copy.deepcopy(snapshot)
    breakage(broken)
    assert _checks(broken)[check] is False


def test_the_hmac_check_fails_under_another_secret(snapshot: dict[str, Any]) -> None:
    assert _checks(snapshot, OTHER_SECRET)["hmac"] is False


def test_stale_shadow_bytes_give_an_integrity_digest_the_scheme_refuses(
    snapshot: dict[str, Any],
) -> None:
    # The integrity seal splices the shadow's bytes; bytes that no longer match the block give a
    # digest that a from-scratch recomputation (what `verify` runs) does not reproduce.
    broken = copy.deepcopy(snapshot)
    stale = proofs.integrity_digest(broken, {"shadow": [b'{"stale":true}']})
    assert stale != proofs.integrity_digest(broken)
    assert digests_consistent(broken["enhancements"], broken["shadow"])


def test_the_sha3_check_given_the_seals_digest_fails_when_the_signed_values_differ(
    snapshot: dict[str, Any],
) -> None:
    # The bake passes the digest the seal computed from the canonical bytes; the stored
    # signature and proof digest must equal it (and `verify`, passing none, recomputes it).
    shadow, board = snapshot["shadow"], snapshot["enhancements"]
    digest = proofs.shadow_digest(shadow)
    assert digests_consistent(board, shadow, digest)
    assert not digests_consistent(board, shadow, "0" * 64)
    for field in ("signature", "proof"):
        broken = copy.deepcopy(shadow)
        if field == "signature":
            broken["signature"] = "0" * 64
        else:
            broken["proof"]["digest"] = "0" * 64
        assert not digests_consistent(board, broken, digest)
