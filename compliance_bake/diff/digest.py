"""`integrity.proof.digest` recomputed for a side of the diff: the same bytes, hashed sooner.

`proofs.integrity_digest(snapshot)` is H(canon(the snapshot without integrity.proof)). On a
500,000-row side most of its time goes to the shadow rows: serialising them (orjson), scanning
the 75 MB of output for float tokens (`canon`'s guard) and SHA3-256 over it. `typed_digest`
gives the same digest with two savings, and nothing else changed:

- the rows are serialised in chunks, and a thread hashes each chunk while the next one is
  serialised (hashlib releases the GIL on large buffers), so on two cores the hash costs
  little wall time;
- the rows' float scan is skipped, because a side's digest only counts once the snapshot
  schema has accepted the side (sides.check_side validates first; parallel.py discards an
  authenticity whose side fails the schema), and the schema's `shadowRow` admits no number at
  all (strings, booleans and null, no other property). The check for characters at or above
  U+E000 stays: where one occurs, the whole digest falls back to `proofs.integrity_digest`.

Every other member goes through `canon` as before; RFC 8785 is compositional, so the object is
its members' canonical bytes in key order (canon.canon_parts), the rows spliced in as pieces.
"""

from __future__ import annotations

import hashlib
import queue
import threading
from collections.abc import Iterator
from typing import Any

import orjson

from compliance_bake.signing import proofs
from compliance_bake.signing.canon import canon, canon_parts, has_high_char

CHUNK_ROWS = 2_000  # about 300 KB of canonical bytes
QUEUED = 8
_OWN = ("integrity", "shadow")  # members made apart: the one without its proof, the one chunked
_OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_STRICT_INTEGER
_LATER = bytes(8)  # a placeholder piece (by identity), replaced by a member's lazy pieces


class _Fallback(Exception):
    """A row the fast path cannot prove canonical: use proofs.integrity_digest."""


Piece = bytes | memoryview


def _row_pieces(rows: list[Any], chunk: int, keep: list[bytes] | None) -> Iterator[Piece]:
    """`canon(rows)` as pieces: each chunk's array without its brackets (a view, not a copy),
    commas between them. `keep` receives each chunk's whole canonical array."""
    yield b"["
    for start in range(0, len(rows), chunk):
        try:
            piece = orjson.dumps(rows[start : start + chunk], option=_OPTIONS)
        except orjson.JSONEncodeError:
            raise _Fallback from None
        if has_high_char(piece):
            raise _Fallback
        if keep is not None:
            keep.append(piece)
        if start:
            yield b","
        yield memoryview(piece)[1:-1]
    yield b"]"


def _expand(parts: list[bytes], later: Iterator[Piece]) -> Iterator[Piece]:
    for part in parts:
        if part is _LATER:
            yield from later
        else:
            yield part


def _pieces(snapshot: dict[str, Any], chunk: int, keep: list[bytes] | None) -> Iterator[Piece]:
    shadow = snapshot["shadow"]
    inner = {k: (canon(v),) for k, v in shadow.items() if k != "rows"}
    inner["rows"] = (_LATER,)
    shadow_pieces = _expand(canon_parts(inner), _row_pieces(shadow["rows"], chunk, keep))
    members = {
        key: (canon(value),) for key, value in snapshot.items() if key not in _OWN
    }
    members["integrity"] = (canon(proofs.without(snapshot["integrity"], "proof")),)
    members["shadow"] = (_LATER,)
    return _expand(canon_parts(members), shadow_pieces)


def typed_digest(
    snapshot: dict[str, Any], chunk: int | None = None, keep: list[bytes] | None = None
) -> str:
    """`proofs.integrity_digest(snapshot)` for a side the snapshot schema accepts (see above).
    On anything else it may differ, which makes the side not authentic: never the reverse.
    `keep`, when given, receives the canonical bytes of every chunk of rows in order (each a
    whole JSON array), or stays empty when they could not all be made."""
    if not isinstance(snapshot.get("shadow"), dict) or not isinstance(
        snapshot["shadow"].get("rows"), list
    ):
        return proofs.integrity_digest(snapshot)  # no rows to keep: `keep` stays empty
    chunk = chunk or CHUNK_ROWS  # read at each call: split.py cuts OLD's rows on the same grid
    hasher = hashlib.sha3_256()
    # Bounded, so the chunks in flight stay few and their memory is reused.
    pending: queue.Queue[Piece | None] = queue.Queue(maxsize=QUEUED)

    def hash_pieces() -> None:
        while (piece := pending.get()) is not None:
            hasher.update(piece)

    worker = threading.Thread(target=hash_pieces, name="diff-digest", daemon=True)
    worker.start()
    try:
        for piece in _pieces(snapshot, chunk, keep):
            pending.put(piece)
    except _Fallback:
        if keep is not None:
            keep.clear()
        return proofs.integrity_digest(snapshot)
    finally:
        pending.put(None)
        worker.join()
    return hasher.hexdigest()
