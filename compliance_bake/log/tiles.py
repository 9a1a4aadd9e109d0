"""C2SP tlog-tiles: where each tile and entry bundle lives, and the hashes a tree size needs.

Tiles hold 256 hashes at tree levels 0, 8, 16, ...: tile `tile/<L>/<N>` holds the hashes of the
complete subtrees of 256**L leaves numbered 256*N to 256*N+255; the rightmost tile of a level is
partial (`.p/<W>`, W from 1 to 255) and is never hashed into the level above. Entry bundles
`tile/entries/<N>[.p/<W>]` hold the entries themselves, each behind a big-endian 2-byte length.
A hash at a level between two tile levels is recomputed from the 2**r hashes below it.

`TileReader` answers `merkle.Stored` for one tree size from a `Source` (a folder or a URL), and
keeps the tiles it has read for the one operation it serves.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable
from dataclasses import dataclass, field

from compliance_bake.log.merkle import HASH_SIZE, root_of

TILE_HEIGHT = 8
TILE_WIDTH = 1 << TILE_HEIGHT
MAX_ENTRY_BYTES = 0xFFFF
# The bytes of the file at a log-relative path, or None when it does not exist.
Source = Callable[[str], bytes | None]


def index_path(n: int) -> str:
    """1234067 -> x001/x234/067: three-digit elements, all but the last prefixed with x."""
    digits = f"{n:d}"
    digits = digits.zfill(-(-len(digits) // 3) * 3)
    parts = [digits[i : i + 3] for i in range(0, len(digits), 3)]
    return "/".join([*("x" + p for p in parts[:-1]), parts[-1]])


def tile_path(level: int | str, n: int, width: int) -> str:
    """`tile/<L>/<N>` for a full tile, `tile/<L>/<N>.p/<W>` for a partial one; level "entries"
    names an entry bundle."""
    base = f"tile/{level}/{index_path(n)}"
    return base if width == TILE_WIDTH else f"{base}.p/{width}"


def width_at(level: int, n: int, size: int) -> int:
    """The width of tile n at tile level `level` in a tree of `size` leaves (0: not there)."""
    count = size >> (TILE_HEIGHT * level)
    return max(0, min(TILE_WIDTH, count - TILE_WIDTH * n))


def encode_bundle(entries: list[bytes]) -> bytes:
    return b"".join(struct.pack(">H", len(e)) + e for e in entries)


def decode_bundle(data: bytes) -> list[bytes] | None:
    """The entries of a bundle; None when the bytes are not a sequence of length-prefixed
    entries."""
    entries: list[bytes] = []
    at = 0
    while at < len(data):
        if at + 2 > len(data):
            return None
        (length,) = struct.unpack_from(">H", data, at)
        at += 2
        if at + length > len(data):
            return None
        entries.append(data[at : at + length])
        at += length
    return entries


class TileMissing(Exception):
    """A tile or bundle that the tree size needs is not in the log (or has the wrong length)."""

    def __init__(self, path: str, what: str) -> None:
        super().__init__(f"{path}: {what}")
        self.path = path
        self.what = what


@dataclass
class TileReader:
    """The stored hashes of a tree of `size` leaves, read from its tiles."""

    source: Source
    size: int
    _tiles: dict[tuple[int, int], list[bytes]] = field(default_factory=dict)

    def tile(self, level: int, n: int) -> list[bytes]:
        key = (level, n)
        if key not in self._tiles:
            width = width_at(level, n, self.size)
            if width == 0:
                raise TileMissing(tile_path(level, n, 1), "not part of this tree size")
            self._tiles[key] = read_tile(self.source, level, n, width)
        return self._tiles[key]

    def __call__(self, level: int, index: int) -> bytes:
        tile_level, below = divmod(level, TILE_HEIGHT)
        first = index << below
        n, offset = divmod(first, TILE_WIDTH)
        hashes = self.tile(tile_level, n)[offset : offset + (1 << below)]
        if len(hashes) != 1 << below:
            raise TileMissing(
                tile_path(tile_level, n, width_at(tile_level, n, self.size)),
                f"holds too few hashes for level {level} index {index}",
            )
        return hashes[0] if below == 0 else root_of(hashes)

    def entries(self, n: int) -> list[bytes]:
        width = width_at(0, n, self.size)
        path = tile_path("entries", n, width)
        data = read_path(self.source, path, tile_path("entries", n, TILE_WIDTH))
        entries = decode_bundle(data)
        if entries is None:
            raise TileMissing(path, "is not a sequence of length-prefixed entries")
        if len(entries) < width:
            raise TileMissing(path, f"holds {len(entries)} entries, the tree needs {width}")
        return entries[:width]


def read_path(source: Source, path: str, fallback: str) -> bytes:
    """A partial tile, else the full tile that replaced it (tlog-tiles lets a log delete a
    partial tile once the full one exists)."""
    data = source(path)
    if data is None and fallback != path:
        data = source(fallback)
    if data is None:
        raise TileMissing(path, "missing from the log")
    return data


def read_tile(source: Source, level: int, n: int, width: int) -> list[bytes]:
    path = tile_path(level, n, width)
    data = read_path(source, path, tile_path(level, n, TILE_WIDTH))
    if len(data) % HASH_SIZE or len(data) < width * HASH_SIZE:
        raise TileMissing(path, f"is {len(data)} bytes, the tree needs {width * HASH_SIZE}")
    return [data[i : i + HASH_SIZE] for i in range(0, width * HASH_SIZE, HASH_SIZE)]


_PUBLISHED = re.compile(
    r"checkpoint|tile/(entries|[0-9]|[1-5][0-9]|6[0-3])/(x[0-9]{3}/)*[0-9]{3}"
    r"(\.p/([1-9]|[1-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5]))?"
)


def published_path(path: str) -> bool:
    """A path tlog-tiles publishes (the checkpoint, a tile, an entry bundle), and nothing else:
    a server of a log folder answers these and refuses every other name."""
    return _PUBLISHED.fullmatch(path) is not None


def media_type(path: str) -> str:
    return "text/plain; charset=utf-8" if path == "checkpoint" else "application/octet-stream"
