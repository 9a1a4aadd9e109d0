"""Sign the report's blocks from their canonical bytes, each block canonicalised once.

The bake builds its blocks, then seals them here, then checks its own signatures once
(`signing.integrity`, the same functions `verify` runs), then seals the whole snapshot:
- `seal_enhancements`: enhancements.signature over the block's canonical bytes;
- `seal_shadow`: the rows are canonicalised once (`canon_floatless`: their type holds no float),
  the unsigned block's bytes are assembled around them for the digest and the proof's HMAC, and
  that digest and the signed block's bytes (signature and proof spliced in) are returned, for
  the integrity check (which then does not canonicalise and hash 500,000 rows again) and the
  snapshot;
- `seal_snapshot`: integrity.proof over the whole snapshot, the shadow's bytes spliced in.
Each proof's HMAC is over canon(proof without hmac), as the scheme says (proofs.make_proof).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, NamedTuple

from compliance_bake.signing import proofs
from compliance_bake.signing.canon import (
    FloatFree,
    canon,
    canon_floatless,
    canon_parts,
    digest_parts,
)

SHADOW_UNSIGNED = ("signature", "proof", "rows")


class SealedShadow(NamedTuple):
    """What sealing the shadow block made: H(canon(the unsigned block)), and the canonical bytes
    of the signed block, as pieces (the rows' bytes are made once and never copied)."""

    digest: str
    signed: list[bytes]


def seal_enhancements(enhancements: dict[str, Any]) -> None:
    enhancements["signature"] = proofs.enhancements_signature(enhancements)


def seal_shadow(
    shadow: dict[str, Any],
    rows: Sequence[Mapping[str, FloatFree]],
    runtime: str,
    generated_at: str,
    secret: str,
) -> SealedShadow:
    """Add signature and proof to `shadow` (whose "rows" are `rows`); return the digest and
    the signed block's canonical bytes."""
    if shadow.get("rows") is not rows:
        raise ValueError("seal_shadow: rows must be the block's own rows")
    members = {
        key: (canon(value),) for key, value in shadow.items() if key not in SHADOW_UNSIGNED
    }
    members["rows"] = (canon_floatless(rows),)
    shadow_digest = digest_parts(canon_parts(members))
    shadow["signature"] = shadow_digest
    shadow["proof"] = proofs.make_proof(shadow_digest, runtime, generated_at, secret)
    members["signature"] = (canon(shadow_digest),)
    members["proof"] = (canon(shadow["proof"]),)
    return SealedShadow(shadow_digest, canon_parts(members))


def seal_snapshot(
    snapshot: dict[str, Any],
    shadow_bytes: Sequence[bytes],
    runtime: str,
    generated_at: str,
    secret: str,
    meanwhile: Callable[[], None] | None = None,
) -> None:
    """Set integrity.proof (placed before the checks, the specification's order).

    `meanwhile`, when given, runs in this thread while the digest is computed in another: the
    hash of the rows' bytes does not hold the GIL, so work that does not read or change
    `snapshot["integrity"]` (the bake renders its registry files) costs no extra time on a
    second core."""
    if meanwhile is None:
        content_digest = proofs.integrity_digest(snapshot, {"shadow": shadow_bytes})
    else:
        with ThreadPoolExecutor(1, thread_name_prefix="integrity-digest") as pool:
            pending = pool.submit(proofs.integrity_digest, snapshot, {"shadow": shadow_bytes})
            meanwhile()
            content_digest = pending.result()
    proof = proofs.make_proof(content_digest, runtime, generated_at, secret)
    checks = snapshot["integrity"]["checks"]
    snapshot["integrity"] = {"scoreHint": "integrity+hmac", "proof": proof, "checks": checks}
