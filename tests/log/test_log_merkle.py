"""RFC 6962 hashing and proofs, against the Certificate Transparency reference vectors (the
eight leaves of RFC 6962's reference implementation tests) and against a tree computed by hand
from the RFC's definitions; and the tlog-tiles layout against the C2SP text's own examples.

No outside implementation covers consistency proofs or tiles (sigstore-python verifies inclusion
only), so those parts are held to these vectors and to the hand-computed trees here.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from compliance_bake.log import merkle, tiles

LEAVES = [bytes.fromhex(h) for h in (
    "", "00", "10", "2021", "3031", "40414243", "5051525354555657",
    "606162636465666768696a6b6c6d6e6f",
)]  # fmt: skip
ROOTS = [
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
]
INCLUSION = [  # (leaf index, tree size, path)
    (0, 8, ["96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"]),
    (5, 8, ["bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
            "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"]),
    (2, 3, ["fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125"]),
    (1, 5, ["6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"]),
]  # fmt: skip
CONSISTENCY = [  # (old size, new size, proof)
    (1, 1, []),
    (1, 8, ["96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"]),
    (6, 8, ["0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
            "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"]),
    (2, 5, ["5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"]),
]  # fmt: skip
HASHES = [merkle.leaf_hash(leaf) for leaf in LEAVES]


def memory(hashes: list[bytes]) -> merkle.Stored:
    """Complete-subtree hashes straight from a list of leaf hashes."""
    return lambda level, index: merkle.root_of(hashes[index << level : (index + 1) << level])


def mth(hashes: list[bytes]) -> bytes:
    """RFC 6962 section 2.1, written out again here from the text (not the module's code)."""
    if len(hashes) == 1:
        return hashes[0]
    k = 1
    while k * 2 < len(hashes):
        k *= 2
    return hashlib.sha256(b"\x01" + mth(hashes[:k]) + mth(hashes[k:])).digest()


@pytest.mark.parametrize("size", range(9))
def test_roots_match_the_reference_vectors(size: int) -> None:
    assert merkle.tree_root(memory(HASHES), size).hex() == ROOTS[size]
    assert merkle.root_of(HASHES[:size]).hex() == ROOTS[size]


def test_a_tree_of_three_computed_by_hand() -> None:
    a, b, c = (hashlib.sha256(b"\x00" + x).digest() for x in (b"a", b"b", b"c"))
    ab = hashlib.sha256(b"\x01" + a + b).digest()
    assert merkle.root_of([a, b, c]) == hashlib.sha256(b"\x01" + ab + c).digest()
    assert merkle.inclusion_proof(memory([a, b, c]), 2, 3) == [ab]
    assert merkle.inclusion_proof(memory([a, b, c]), 0, 3) == [b, c]


@pytest.mark.parametrize(("index", "size", "path"), INCLUSION)
def test_inclusion_proofs_match_the_reference_vectors(
    index: int, size: int, path: list[str]
) -> None:
    proof = merkle.inclusion_proof(memory(HASHES), index, size)
    assert [p.hex() for p in proof] == path
    root = bytes.fromhex(ROOTS[size])
    assert merkle.verify_inclusion(index, size, HASHES[index], proof, root)
    assert not merkle.verify_inclusion(index, size, HASHES[index - 1], proof, root)
    assert not merkle.verify_inclusion(index, size, HASHES[index], proof[:-1], root)
    assert not merkle.verify_inclusion(index ^ 1, size, HASHES[index], proof, root)


@pytest.mark.parametrize(("old", "new", "proof"), CONSISTENCY)
def test_consistency_proofs_match_the_reference_vectors(
    old: int, new: int, proof: list[str]
) -> None:
    got = merkle.consistency_proof(memory(HASHES), old, new)
    assert [p.hex() for p in got] == proof
    old_root, new_root = bytes.fromhex(ROOTS[old]), bytes.fromhex(ROOTS[new])
    assert merkle.verify_consistency(old, new, old_root, new_root, got)
    if old != new:
        assert not merkle.verify_consistency(old, new, new_root, new_root, got)
        assert not merkle.verify_consistency(old, new, old_root, old_root, got)


def test_every_proof_in_every_tree_up_to_24_leaves() -> None:
    hashes = [merkle.leaf_hash(bytes([i, i * 7 % 256])) for i in range(24)]
    for size in range(1, 25):
        root = mth(hashes[:size])
        assert merkle.tree_root(memory(hashes), size) == root
        for index in range(size):
            proof = merkle.inclusion_proof(memory(hashes), index, size)
            assert merkle.verify_inclusion(index, size, hashes[index], proof, root)
        for old in range(1, size + 1):
            proof = merkle.consistency_proof(memory(hashes), old, size)
            assert merkle.verify_consistency(old, size, mth(hashes[:old]), root, proof)
            if old < size:  # a history with one leaf changed is not consistent with it
                other = [*hashes[: old - 1], merkle.leaf_hash(b"rewritten")]
                assert not merkle.verify_consistency(old, size, mth(other), root, proof)


def test_tile_paths_follow_the_c2sp_example() -> None:
    assert tiles.index_path(1234067) == "x001/x234/067"
    assert tiles.index_path(0) == "000"
    assert tiles.index_path(1000) == "x001/000"
    assert tiles.tile_path(0, 1234067, 256) == "tile/0/x001/x234/067"
    assert tiles.tile_path("entries", 3, 17) == "tile/entries/003.p/17"


def test_tile_widths_follow_the_c2sp_example_of_a_tree_of_70000() -> None:
    size = 70_000
    assert sum(tiles.width_at(0, n, size) == 256 for n in range(300)) == 273
    assert tiles.width_at(0, 273, size) == 112
    assert tiles.width_at(1, 0, size) == 256
    assert tiles.width_at(1, 1, size) == 17
    assert tiles.width_at(2, 0, size) == 1
    assert tiles.width_at(3, 0, size) == 0
    assert (
        tiles.width_at(1, 0, 256) == 1
    )  # "a tree of size 256 ... a partial level 1 tile of width 1"


def test_the_tile_reader_gives_the_in_memory_tree_across_tile_boundaries(tmp_path: Path) -> None:
    """Tiles written by hand from a list of leaf hashes (levels 0 and 1) answer every proof."""
    hashes = [merkle.leaf_hash(i.to_bytes(4, "big")) for i in range(600)]
    files = {
        "tile/0/000": hashes[:256], "tile/0/001": hashes[256:512], "tile/0/002.p/88": hashes[512:],
        "tile/1/000.p/2": [merkle.root_of(hashes[:256]), merkle.root_of(hashes[256:512])],
    }  # fmt: skip
    for name, content in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(b"".join(content))

    def source(path: str) -> bytes | None:
        file = tmp_path / path
        return file.read_bytes() if file.is_file() else None

    reader = tiles.TileReader(source, 600)
    assert merkle.tree_root(reader, 600) == mth(hashes)
    for index in (0, 255, 256, 511, 512, 599):
        proof = merkle.inclusion_proof(reader, index, 600)
        assert proof == merkle.inclusion_proof(memory(hashes), index, 600)
    for old in (1, 255, 256, 257, 512, 599):
        assert merkle.consistency_proof(reader, old, 600) == merkle.consistency_proof(
            memory(hashes), old, 600
        )
