"""Benchmark: the cost of one append to the transparency log, at 1,000, 10,000 and 100,000
entries.

    python bench/log_bench.py [--sizes 1000,10000,100000] [--appends 20]

For each size, a log of that many entries is laid down directly as tlog-tiles files (full
tiles, the partial tiles of the last size and a signed checkpoint, built with the package's
own tile and note code; checked by recomputing its root from the tiles), into bench/.data/
(git-ignored). Then --appends entries are appended one at a time with
`compliance_bake.log.append.append_entry` (the bake's own call: lock, read the right-edge
tiles, write the new ones through fsync'd temporary files, sign and write the checkpoint),
timing each, and counting the files each one reads and writes.

An append touches only the rightmost tile of each level (one more level per factor 256), so
its cost must not grow with the log beyond those tiles: the median at 100,000 entries must stay
within 2x the median at 1,000 (exit 1 otherwise; the figures are printed either way).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import time
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from compliance_bake.log import append, merkle, note, source, tiles
from compliance_bake.signing.signing_key import SigningKey

DATA = Path(__file__).resolve().parent / ".data" / "log"
ORIGIN = "bench.example/log"


def entry(i: int) -> dict[str, object]:
    """An entry of the size a bake's is (about 400 bytes of JSON)."""
    return {
        "attestationSha256": f"{i:064x}", "generatedAt": "2026-11-22T04:06:00.000Z",
        "integrityDigest": f"{i * 7:064x}", "keyId": "ab" * 32, "target": "in-process://bench",
        "verdict": {"ok": True, "board": {"passed": 8, "total": 8}, "shadowMismatches": 0},
    }  # fmt: skip


def lay_down(folder: Path, size: int, key: SigningKey) -> None:
    """A log of `size` entries as tlog-tiles files, written in one pass."""
    shutil.rmtree(folder, ignore_errors=True)
    data = [append.entry_bytes(entry(i)) for i in range(size)]
    level_hashes = [merkle.leaf_hash(d) for d in data]

    def put(path: str, content: bytes) -> None:
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_bytes(content)

    for n in range(0, size, tiles.TILE_WIDTH):
        chunk = data[n : n + tiles.TILE_WIDTH]
        put(tiles.tile_path("entries", n >> 8, len(chunk)), tiles.encode_bundle(chunk))
    level = 0
    while level_hashes:
        above = []
        for n in range(0, len(level_hashes), tiles.TILE_WIDTH):
            chunk = level_hashes[n : n + tiles.TILE_WIDTH]
            put(tiles.tile_path(level, n >> 8, len(chunk)), b"".join(chunk))
            if len(chunk) == tiles.TILE_WIDTH:
                above.append(merkle.root_of(chunk))
        level_hashes, level = above, level + 1
    reader = tiles.TileReader(source.folder_source(folder), size)
    root = merkle.tree_root(reader, size)
    checkpoint = note.Checkpoint(ORIGIN, size, root)
    signed = note.Note(checkpoint.text(), (note.sign_note(checkpoint.text(), ORIGIN, key.private),))
    put("checkpoint", signed.render())


class Counting:
    """The folder source, counting the files an append reads."""

    def __init__(self) -> None:
        self.reads = 0
        self.original = source.folder_source

    def __call__(self, folder: Path) -> tiles.Source:
        inner = self.original(folder)

        def read(path: str) -> bytes | None:
            self.reads += 1
            return inner(path)

        return read


def measure(size: int, appends: int, key: SigningKey) -> tuple[float, float, float]:
    folder = DATA / str(size)
    lay_down(folder, size, key)
    counting = Counting()
    append.folder_source = counting  # type: ignore[attr-defined]
    times, reads, writes = [], [], []
    try:
        for i in range(appends):
            before = sum(1 for _ in folder.rglob("*"))
            counting.reads = 0
            start = time.perf_counter()
            append.append_entry(folder, ORIGIN, entry(size + i), key)
            times.append(time.perf_counter() - start)
            reads.append(counting.reads)
            writes.append(sum(1 for _ in folder.rglob("*")) - before)
    finally:
        append.folder_source = counting.original  # type: ignore[attr-defined]
    return statistics.median(times), statistics.mean(reads), statistics.mean(writes)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--appends", type=int, default=20)
    args = parser.parse_args()
    key = SigningKey(Ed25519PrivateKey.generate(), "bench")
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"append to a log of N entries: median of {args.appends} appends")
    print(f"{'entries':>9}  {'median ms':>9}  {'files read':>10}  {'files added':>11}")
    medians = {}
    for size in sizes:
        median, reads, writes = measure(size, args.appends, key)
        medians[size] = median
        print(f"{size:>9,}  {median * 1000:>9.2f}  {reads:>10.1f}  {writes:>11.1f}")
    smallest, largest = medians[min(sizes)], medians[max(sizes)]
    ratio = largest / smallest
    print(f"{max(sizes):,} vs {min(sizes):,} entries: {ratio:.2f}x (target: within 2x)")
    return 0 if ratio <= 2.0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
