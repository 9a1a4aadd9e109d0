"""Re-sign an edited snapshot as its operator would, with compliance_bake.signing and a secret.

A forger holding REPORT_SIGNING_SECRET recomputes every digest, the integrity checks and both
HMACs; `verify` must still catch a semantic edit through the specification's rules.
"""

from __future__ import annotations

from typing import Any

from compliance_bake.signing import proofs as signing
from compliance_bake.verify.rules.shadow import content_checks


def resign(snap: dict[str, Any], secret: str, *, recheck: bool = True) -> dict[str, Any]:
    board, shadow = snap["enhancements"], snap["shadow"]
    board["signature"] = signing.board_signature(board)
    digest = signing.shadow_digest(shadow)
    shadow["signature"] = shadow["proof"]["digest"] = digest
    shadow["proof"]["hmac"] = signing.proof_hmac(shadow["proof"], secret)
    if recheck:
        snap["integrity"]["checks"] = [check.to_json() for check in content_checks(snap, True)]
    proof = snap["integrity"]["proof"]
    proof["digest"] = signing.integrity_digest(snap)
    proof["hmac"] = signing.proof_hmac(proof, secret)
    return snap
