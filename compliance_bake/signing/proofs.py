"""The signing scheme, to the letter (auditors check it with jq and openssl).

- enhancements.signature = H(canon(enhancements without "signature"))
- shadow: s = shadow without "signature" and "proof"; proof.digest = H(canon(s)); signature = digest
- integrity: t = the whole snapshot without integrity.proof; integrity.proof.digest = H(canon(t))
- every proof: proof.hmac = M(canon(proof without "hmac"))
- the policy record (registry/compliance-policy.json): proof.digest = H(canon(record without
  "proof")); the attestation names the file among its subjects

Every digest and HMAC is computed here, so the bake and its readers cannot disagree on one:
the bake seals its shadow block with `seal_shadow` (the rows canonicalised once, their bytes
spliced into the integrity digest) and its other blocks with the functions below; `verify`,
`diff` and `bake --previous` check a snapshot with `snapshot_digests`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, TypeVar

from compliance_bake.signing.canon import (
    FloatFree,
    canon,
    canon_floatless,
    canon_parts,
    digest,
    digest_parts,
    mac,
)

T = TypeVar("T")

ALGORITHM = "sha3-256"


def without(block: dict[str, Any], *names: str) -> dict[str, Any]:
    return {k: v for k, v in block.items() if k not in names}


def board_signature(board: dict[str, Any]) -> str:
    """`enhancements.signature`: the board's digest, over the block without its signature."""
    return digest(canon(without(board, "signature")))


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


def reseal_integrity(
    snapshot: dict[str, Any], runtime: str, generated_at: str, secret: str
) -> dict[str, Any]:
    """`integrity.proof` made again over the whole snapshot, for a member added after it was
    sealed (`bake --waivers`' `waivers` field, known only once the policy's questions are
    answered)."""
    return make_proof(integrity_digest(snapshot), runtime, generated_at, secret)


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


def policy_digest(record: dict[str, Any]) -> str:
    """The policy record's digest: H(canon(the record without "proof"))."""
    return digest(canon(without(record, "proof")))


def seal_policy(record: dict[str, Any], runtime: str, generated_at: str, secret: str) -> None:
    """Add `proof` to the policy record (`/registry/compliance-policy.json`): its digest, and the
    HMAC of the proof, as every proof of the snapshot."""
    record["proof"] = make_proof(policy_digest(record), runtime, generated_at, secret)


class SealedShadow(NamedTuple):
    """What sealing the shadow block made: H(canon(the unsigned block)), and the canonical bytes
    of the signed block, as pieces (the rows' bytes are made once and never copied)."""

    digest: str
    signed: list[bytes]


def seal_shadow(
    shadow: dict[str, Any],
    rows: Sequence[Mapping[str, FloatFree]],
    runtime: str,
    generated_at: str,
    secret: str,
) -> SealedShadow:
    """Add signature and proof to `shadow` (whose "rows" are `rows`, canonicalised once and
    without the float scan: their type holds no float); return the digest and the signed
    block's canonical bytes, which `integrity_digest` takes as the shadow member's."""
    if shadow.get("rows") is not rows:
        raise ValueError("seal_shadow: rows must be the block's own rows")
    members = {
        key: (canon(value),)
        for key, value in shadow.items()
        if key not in ("signature", "proof", "rows")
    }
    members["rows"] = (canon_floatless(rows),)
    digest_of_shadow = digest_parts(canon_parts(members))
    shadow["signature"] = digest_of_shadow
    shadow["proof"] = make_proof(digest_of_shadow, runtime, generated_at, secret)
    members["signature"] = (canon(digest_of_shadow),)
    members["proof"] = (canon(shadow["proof"]),)
    return SealedShadow(digest_of_shadow, canon_parts(members))


SHADOW_UNSIGNED = ("signature", "proof")  # left out of the shadow block's own digest
# What the functions above raise on a malformed document: the digest then cannot be computed.
FAILS = (KeyError, TypeError, AttributeError, ValueError, RecursionError)


@dataclass(frozen=True, slots=True)
class Digests:
    """A snapshot's digests recomputed from its content; None: cannot be computed on it."""

    board: str | None
    shadow: str | None  # of `snap.get("shadow") or {}`, as the checks read the block
    integrity: str | None
    of_shadow_block: str | None  # `shadow`, when it is the digest of the snapshot's own block


def _attempt(compute: Callable[[], T]) -> T | None:
    try:
        return compute()
    except FAILS:
        return None


def snapshot_digests(snap: dict[str, Any]) -> Digests:
    """The three digests of a snapshot (the same values as the functions above), each member of
    the shadow block canonicalised once: the block's bytes serve its own digest and, with its
    signature and proof spliced in, the integrity digest (RFC 8785 is compositional).

    `snap` comes from the strict parser (inputs/jsonio.py), which refuses every number that is
    not a whole one, so the shadow block's members are canonicalised without the float scan
    (`canon_floatless`), which spares verify and diff a scan of every row's bytes.
    Were a float there anyway, the digest would differ from the signed one: not authentic,
    never the reverse."""
    board: Any = snap.get("enhancements") or {}
    shadow: Any = snap.get("shadow") or {}
    own_block = snap.get("shadow") is shadow  # not a stand-in for a missing or empty block
    unsigned = _attempt(
        lambda: {k: (canon_floatless(v),) for k, v in shadow.items() if k not in SHADOW_UNSIGNED}
    )
    shadow_digest = None if unsigned is None else digest_parts(canon_parts(unsigned))
    known: Mapping[str, Sequence[bytes]] = {}
    if unsigned is not None and own_block:
        signed = _attempt(
            lambda: {k: (canon_floatless(v),) for k, v in shadow.items() if k in SHADOW_UNSIGNED}
        )
        if signed is not None:
            known = {"shadow": canon_parts({**unsigned, **signed})}
    return Digests(
        board=_attempt(lambda: board_signature(board)),
        shadow=shadow_digest,
        integrity=_attempt(lambda: integrity_digest(snap, known)),
        of_shadow_block=shadow_digest if own_block else None,
    )
