"""RFC 6962 Merkle tree hashing (SHA-256), inclusion and consistency proofs, over stored hashes.

A leaf hash is SHA-256(0x00 || entry), an interior node SHA-256(0x01 || left || right), and the
tree of n leaves splits at the largest power of two below n (RFC 6962, section 2.1).

Proofs are computed from a `Stored` function that answers the hash of a *complete* subtree:
`stored(level, index)` is the hash of leaves [index * 2**level, (index + 1) * 2**level). That
is exactly what tlog-tiles publishes (tiles.py reads it), so a proof touches only the few tiles
on its path, whatever the size of the log. Verification follows RFC 9162, sections 2.1.3.2 and
2.1.4.2, and needs nothing but the proof.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

Stored = Callable[[int, int], bytes]  # (level, index) -> hash of that complete subtree
HASH_SIZE = 32


def leaf_hash(entry: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + entry).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def _split(n: int) -> int:
    """The largest power of two strictly below n (n >= 2)."""
    return 1 << ((n - 1).bit_length() - 1)


def root_of(hashes: Sequence[bytes]) -> bytes:
    """MTH over leaf hashes held in memory (a tile's worth, or a test's tree)."""
    if not hashes:
        return hashlib.sha256(b"").digest()
    if len(hashes) == 1:
        return hashes[0]
    k = _split(len(hashes))
    return node_hash(root_of(hashes[:k]), root_of(hashes[k:]))


def subtree_hash(stored: Stored, lo: int, hi: int) -> bytes:
    """MTH(D[lo:hi]) where lo is aligned as RFC 6962's recursion leaves it."""
    n = hi - lo
    if n & (n - 1) == 0:
        level = n.bit_length() - 1
        return stored(level, lo >> level)
    k = _split(n)
    return node_hash(stored_aligned(stored, lo, k), subtree_hash(stored, lo + k, hi))


def stored_aligned(stored: Stored, lo: int, size: int) -> bytes:
    level = size.bit_length() - 1
    return stored(level, lo >> level)


def tree_root(stored: Stored, size: int) -> bytes:
    if size == 0:
        return hashlib.sha256(b"").digest()
    return subtree_hash(stored, 0, size)


def inclusion_proof(stored: Stored, index: int, size: int) -> list[bytes]:
    """PATH(index, D[0:size]) of RFC 6962 section 2.1.1, from the leaf's sibling upwards."""
    if not 0 <= index < size:
        raise ValueError(f"leaf {index} is not in a tree of size {size}")
    path: list[bytes] = []
    lo, hi = 0, size
    while hi - lo > 1:
        k = _split(hi - lo)
        if index < lo + k:
            path.append(subtree_hash(stored, lo + k, hi))
            hi = lo + k
        else:
            path.append(stored_aligned(stored, lo, k))
            lo += k
    path.reverse()
    return path


def consistency_proof(stored: Stored, old: int, new: int) -> list[bytes]:
    """PROOF(old, D[0:new]) of RFC 6962 section 2.1.2 (SUBPROOF with b = true)."""
    if not 0 < old <= new:
        raise ValueError(f"no consistency proof from size {old} to size {new}")
    proof: list[bytes] = []
    lo, hi, m, complete = 0, new, old, True
    while m != hi - lo:
        k = _split(hi - lo)
        if m <= k:
            proof.append(subtree_hash(stored, lo + k, hi))
            hi = lo + k
        else:
            proof.append(stored_aligned(stored, lo, k))
            lo, m, complete = lo + k, m - k, False
    if not complete:
        proof.append(subtree_hash(stored, lo, hi))
    proof.reverse()
    return proof


def root_from_inclusion(index: int, size: int, leaf: bytes, path: Sequence[bytes]) -> bytes | None:
    """The root that `path` proves `leaf` at `index` under (RFC 9162 2.1.3.2); None if the
    path has the wrong shape for that index and size."""
    if not 0 <= index < size:
        return None
    fn, sn, r = index, size - 1, leaf
    for p in path:
        if sn == 0:
            return None
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    return r if sn == 0 else None


def verify_inclusion(
    index: int, size: int, leaf: bytes, path: Sequence[bytes], root: bytes
) -> bool:
    return root_from_inclusion(index, size, leaf, path) == root


def verify_consistency(
    old: int, new: int, old_root: bytes, new_root: bytes, proof: Sequence[bytes]
) -> bool:
    """RFC 9162 2.1.4.2: the tree of size `new` extends the tree of size `old`."""
    if old > new:
        return False
    if old == new:
        return not proof and old_root == new_root
    if old == 0:
        return not proof
    if not proof:
        return False
    path = list(proof)
    if old & (old - 1) == 0:
        path.insert(0, old_root)
    fn, sn = old - 1, new - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    return sn == 0 and fr == old_root and sr == new_root
