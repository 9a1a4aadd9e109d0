"""The checks every reader of a log runs: the checkpoint's signature, the consistency of two
checkpoints, and the tiles recomputed from the entries.

Each check answers with failed findings (compliance_bake/findings.py), each naming the file, or
the two checkpoints that cannot both be true (then no one file: `file` is empty); none means it
holds. A checkpoint is trusted only when it verifies
with a given key under its own origin.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from compliance_bake.errors import EXIT_CHECK_FAILED, BakeError
from compliance_bake.findings import FAIL, INFO, Finding, Findings
from compliance_bake.log import merkle
from compliance_bake.log.note import (
    Checkpoint,
    Note,
    NoteError,
    parse_checkpoint,
    parse_note,
    verify_note,
)
from compliance_bake.log.tiles import (
    TILE_HEIGHT,
    TILE_WIDTH,
    Source,
    TileMissing,
    TileReader,
    tile_path,
    width_at,
)

CHECKPOINT = "checkpoint"


class LogCheckFailed(BakeError):
    """The log does not hold what it should: a check failed (exit 1)."""

    exit_code = EXIT_CHECK_FAILED


@dataclass(frozen=True, slots=True)
class Signed:
    """A checkpoint note that verified with `key` under its origin."""

    note: Note
    checkpoint: Checkpoint
    key: Ed25519PublicKey


def _failed(file: str, what: str) -> Finding:
    return Finding(file, FAIL, what)


def read_signed(
    raw: bytes | None, where: str, keys: Sequence[Ed25519PublicKey]
) -> Signed | Finding:
    """The checkpoint in `raw` when one of `keys` signed it; else the problem, naming `where`."""
    if raw is None:
        return _failed(where, "missing")
    try:
        signed = parse_note(raw)
        checkpoint = parse_checkpoint(signed.text)
    except NoteError as exc:
        return _failed(where, f"not a signed checkpoint ({exc})")
    for key in keys:
        if verify_note(signed, checkpoint.origin, key):
            return Signed(signed, checkpoint, key)
    return _failed(
        where,
        f"{checkpoint.describe()} is not signed by the log's key "
        f"(no Ed25519 signature under origin {checkpoint.origin} verifies with a given key)",
    )


def consistency_problem(source: Source, old: Checkpoint, new: Checkpoint) -> Finding | None:
    """None when `new` extends `old` (a consistency proof computed from the log's tiles at
    `new`'s size verifies against both roots); else why the two cannot both be true."""
    both = f"{old.describe()} and {new.describe()} cannot both be true"
    if old.origin != new.origin:
        return _failed("", f"origin {old.origin} and origin {new.origin} are two logs, not one")
    if new.size < old.size:
        return _failed("", f"rollback: the log is smaller than it was: {both}")
    if new.size == old.size:
        return (
            None
            if new.root == old.root
            else _failed("", f"fork: two trees of the same size: {both}")
        )
    if old.size == 0:
        return None
    try:
        proof = merkle.consistency_proof(TileReader(source, new.size), old.size, new.size)
    except TileMissing as exc:
        return _failed(exc.path, f"{exc.what} (no consistency proof): {both}")
    if not merkle.verify_consistency(old.size, new.size, old.root, new.root, proof):
        return _failed(
            "", f"the consistency proof from the tiles does not verify (history rewritten): {both}"
        )
    return None


def tile_problems(source: Source, size: int, start: int = 0) -> tuple[list[Finding], list[bytes]]:
    """Every tile holding a hash of a leaf at `start` or later, recomputed from the entry
    bundles (level 0) and from the tiles below (levels above), against the stored tiles; and
    the entries from `start` on. Stops at the first level with a problem."""
    reader = TileReader(source, size)
    problems: list[Finding] = []
    entries: list[bytes] = []
    if size == 0:
        return problems, entries
    try:
        for n in range(start >> TILE_HEIGHT, ((size - 1) >> TILE_HEIGHT) + 1):
            bundle = reader.entries(n)
            stored = reader.tile(0, n)
            path = tile_path(0, n, len(stored))
            for i, (data, hashed) in enumerate(zip(bundle, stored, strict=True)):
                if merkle.leaf_hash(data) != hashed:
                    bundle_path = tile_path("entries", n, len(bundle))
                    problems.append(
                        _failed(
                            path,
                            f"hash {i} is not the hash of entry {n * TILE_WIDTH + i} "
                            f"in {bundle_path} (a tile or an entry was edited)",
                        )
                    )
                    break
            entries.extend(bundle[max(0, start - n * TILE_WIDTH) :])
        level = 1
        while problems == [] and size >> (TILE_HEIGHT * level):
            first = start >> (TILE_HEIGHT * (level + 1))
            last = ((size >> (TILE_HEIGHT * level)) - 1) >> TILE_HEIGHT
            for n in range(first, last + 1):
                stored = reader.tile(level, n)
                for i, hashed in enumerate(stored):
                    below = reader.tile(level - 1, n * TILE_WIDTH + i)
                    if merkle.root_of(below) != hashed:
                        problems.append(
                            _failed(
                                tile_path(level, n, width_at(level, n, size)),
                                f"hash {i} is not the root of "
                                f"{tile_path(level - 1, n * TILE_WIDTH + i, TILE_WIDTH)} "
                                "(a tile was edited)",
                            )
                        )
                        break
            level += 1
    except TileMissing as exc:
        problems.append(_failed(exc.path, exc.what))
    return problems, entries


def root_problem(source: Source, checkpoint: Checkpoint) -> Finding | None:
    try:
        root = merkle.tree_root(TileReader(source, checkpoint.size), checkpoint.size)
    except TileMissing as exc:
        return _failed(exc.path, exc.what)
    if root != checkpoint.root:
        return _failed(
            "", f"the tiles' root {root.hex()[:16]}... is not the root of {checkpoint.describe()}"
        )
    return None


def checked_tiles(
    found: Findings,
    source: Source,
    keys: Sequence[Ed25519PublicKey],
    signer: str,
    recomputed: str,
    start: int = 0,
) -> tuple[Signed | None, list[bytes]]:
    """What every reader of a whole log checks first, each a finding in `found`: the checkpoint
    signed (by `signer`, in words), then the tiles from entry `start` and the root recomputed
    (`recomputed`: what held, in words). The checkpoint (None when it does not verify) and the
    entries from `start` on."""
    signed = read_signed(source(CHECKPOINT), CHECKPOINT, keys)
    if isinstance(signed, Finding):
        found.findings.append(signed)
        return None, []
    checkpoint = signed.checkpoint
    found.add(CHECKPOINT, True, f"{checkpoint.describe()} signed by {signer}")
    problems, entries = tile_problems(source, checkpoint.size, min(start, checkpoint.size))
    found.findings.extend(problems)
    if not problems:
        found.findings.append(root_problem(source, checkpoint) or Finding("", INFO, recomputed))
    return signed, entries
