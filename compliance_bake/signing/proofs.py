"""The signing scheme of DESIGN.md, to the letter (auditors check it with jq and openssl).

- enhancements.signature = H(canon(enhancements without "signature"))
- shadow: s = shadow without "signature" and "proof"; proof.digest = H(canon(s)); signature = digest
- integrity: t = the whole snapshot without integrity.proof; integrity.proof.digest = H(canon(t))
- every proof: proof.hmac = M(canon(proof without "hmac"))
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from compliance_bake.signing.canon import canon, canon_parts, digest, digest_parts, mac

ALGORITHM = "sha3-256"


def without(block: dict[str, Any], *names: str) -> dict[str, Any]:
    return {k: v for k, v in block.items() if k not in names}


def enhancements_signature(enhancements: dict[str, Any]) -> str:
    return digest(canon(without(enhancements, "signature")))


def shadow_digest(shadow: dict[str, Any]) -> str:
    return digest(canon(without(shadow, "signature", "proof")))


def integrity_digest(
    snapshot: dict[str, Any], known: Mapping[str, Sequence[bytes]] | None = None
) -> str:
    """H(canon(t)); `known` holds members' canonical bytes already made, as pieces (the bake
    passes the shadow block's), spliced in instead of serialising those members again."""
    return digest_parts(integrity_parts(snapshot, known))


def integrity_parts(
    snapshot: dict[str, Any], known: Mapping[str, Sequence[bytes]] | None = None
) -> list[bytes]:
    """canon(t), as pieces (`integrity_digest` hashes them)."""
    known = known or {}
    members = {
        key: known[key] if key in known else (canon(value),)
        for key, value in snapshot.items()
        if key != "integrity"
    }
    members["integrity"] = (canon(without(snapshot["integrity"], "proof")),)
    return canon_parts(members)


def proof_hmac(proof: dict[str, Any], secret: str) -> str:
    return mac(canon(without(proof, "hmac")), secret)


def make_proof(content_digest: str, runtime: str, generated_at: str, secret: str) -> dict[str, Any]:
    proof: dict[str, Any] = {
        "algorithm": ALGORITHM,
        "digest": content_digest,
        "bunVersion": runtime,
        "generatedAt": generated_at,
    }
    proof["hmac"] = proof_hmac(proof, secret)
    return proof
