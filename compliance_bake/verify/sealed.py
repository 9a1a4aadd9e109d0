"""The snapshot's three digests, from canonical bytes made once (issue 14).

The shadow block's canonical bytes serve three times: its own digest (the block without signature
and proof), the integrity digest (the whole block, inside the snapshot) and the integrity check
`sha3` (rule integrity-checks, which compares the first one again). Each member of the block is
canonicalised once and both forms are assembled from those bytes, as the bake seals them
(signing/seal.py): RFC 8785 is compositional, an object is its members' canonical bytes with the
keys in order. The documents come from the strict readers, which refuse floats, so
`canon_floatless` is exact for them.

Each digest is what signing.proofs computes; None where that raises (a malformed block), so a
digest that cannot be computed never matches. tests/test_verify_fast.py holds them to proofs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

from compliance_bake.signing import proofs
from compliance_bake.signing.canon import canon_floatless, canon_parts, digest_parts

SHADOW_UNSIGNED = ("signature", "proof")  # left out of the shadow block's own digest
# What signing.proofs raises on a malformed document (the verifier's digest checks catch them).
FAILS = (KeyError, TypeError, AttributeError, ValueError, RecursionError)
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Digests:
    """The digests computed from the snapshot's content; None: cannot be computed on it."""

    enhancements: str | None
    shadow: str | None  # of `snap.get("shadow") or {}`, as the verifier reads the block
    integrity: str | None
    of_shadow_block: str | None  # `shadow`, when it is the digest of the snapshot's own block


def _attempt(compute: Callable[[], T]) -> T | None:
    try:
        return compute()
    except FAILS:
        return None


def _members(block: dict[str, Any], keep: Callable[[str], bool]) -> dict[str, Sequence[bytes]]:
    return {key: (canon_floatless(value),) for key, value in block.items() if keep(key)}


def start_digests(snap: dict[str, Any]) -> Callable[[], Digests]:
    """Canonicalise now and hash beside: SHA3 lets go of the GIL, so both passes over the rows'
    bytes run on other cores while the caller goes on (the portal page, the rules). The call
    returned waits for them."""
    enhancements: Any = snap.get("enhancements") or {}
    shadow: Any = snap.get("shadow") or {}
    own_block = snap.get("shadow") is shadow  # not a stand-in for a missing or empty block
    unsigned = _attempt(lambda: _members(shadow, lambda key: key not in SHADOW_UNSIGNED))
    known: Mapping[str, Sequence[bytes]] = {}
    if unsigned is not None and own_block:
        signed = _attempt(lambda: _members(shadow, lambda key: key in SHADOW_UNSIGNED))
        if signed is not None:
            known = {"shadow": canon_parts({**unsigned, **signed})}
    integrity = _attempt(lambda: proofs.integrity_parts(snap, known))
    enhancements_signature = _attempt(lambda: proofs.enhancements_signature(enhancements))
    beside = ThreadPoolExecutor(max_workers=2, thread_name_prefix="sha3")
    try:
        shadow_parts = None if unsigned is None else canon_parts(unsigned)
        shadow_hash = None if shadow_parts is None else beside.submit(digest_parts, shadow_parts)
        integrity_hash = None if integrity is None else beside.submit(digest_parts, integrity)
    finally:
        beside.shutdown(wait=False)  # the threads end with their work

    def digests() -> Digests:
        shadow_digest = None if shadow_hash is None else shadow_hash.result()
        return Digests(
            enhancements=enhancements_signature,
            shadow=shadow_digest,
            integrity=None if integrity_hash is None else integrity_hash.result(),
            of_shadow_block=shadow_digest if own_block else None,
        )

    return digests


def snapshot_digests(snap: dict[str, Any]) -> Digests:
    return start_digests(snap)()
