"""A large local OLD side read in its own process, at the same time as NEW (run.py uses it).

Parsing the two sides one after the other is the longest part of a 500,000-row diff. Here a
child forked before anything is read takes OLD: it reads and parses it, validates it against
the snapshot schema and authenticates it exactly as `check_side` does (the same functions, the
same keys), while this process reads, parses and checks NEW. The child then sends back, through
a pipe: its outcome, OLD without its shadow rows, and the rows as chunks of JSON: the canonical
bytes its authentication made anyway (digest.py), or plain JSON when there were none.

The comparison: where both sides' rows are canonical chunks of the same grid and as many, a
chunk with the same bytes on both sides holds the same rows (RFC 8785 bytes are equal exactly
when the values are), so only the chunks that differ are parsed and compared, and when every
row that differs keeps its (state, partner), that is pairs.py's aligned result exactly.
Otherwise every chunk is parsed and `compare` runs on the whole, as it always does.

Fail closed: a child that dies or sends anything malformed is an internal error (exit 4), never
an authentic side; a child's InputError or TargetError (OLD unreadable, not a snapshot, a
fetch that failed) is raised here as it would have been in-process.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from itertools import compress
from operator import itemgetter, ne
from typing import Any

import orjson

from compliance_bake.diff import digest
from compliance_bake.diff.model import Change
from compliance_bake.diff.pairs import pair_changes
from compliance_bake.diff.sides import (
    Authenticity,
    Keys,
    SideSource,
    authenticate,
    parse_snapshot,
    validate_side,
)
from compliance_bake.errors import EXIT_INTERNAL, BakeError, InputError, TargetError

_LENGTH = 8
_ERRORS: dict[str, type[BakeError]] = {"InputError": InputError, "TargetError": TargetError}
_KEY = itemgetter("state", "partner")


class CheckingFailed(BakeError):
    """The process that read OLD died or answered nonsense: nothing about OLD is known."""

    exit_code = EXIT_INTERNAL


@dataclass(frozen=True, slots=True)
class OldSide:
    source: str
    authenticity: Authenticity
    rest: dict[str, Any]  # OLD with `shadow.rows` empty
    count: int  # its rows
    chunks: list[bytes]  # its rows, as JSON arrays of CHUNK_ROWS rows
    canonical: bool  # the chunks are RFC 8785 bytes


def _frame(data: bytes) -> bytes:
    return len(data).to_bytes(_LENGTH, "big") + data


_UNKNOWN = 2**64 - 1  # the row count of an OLD that is not a snapshot


def _child(side: SideSource, raw: bytes, keys: Keys, write_fd: int) -> None:  # pragma: no cover
    code = 0
    try:
        with os.fdopen(write_fd, "wb") as pipe:
            try:
                snapshot = parse_snapshot(raw, "OLD", side.source)
            except InputError as error:
                snapshot = None
                problem: InputError | None = error
            shadow = (snapshot or {}).get("shadow")
            rows = shadow.get("rows") if isinstance(shadow, dict) else None
            count = len(rows) if isinstance(rows, list) else _UNKNOWN
            pipe.write(count.to_bytes(_LENGTH, "big"))
            pipe.flush()  # the parent picks its way on this count, before the rest
            del raw
            if snapshot is not None:
                problem = _problem(snapshot, side)
            if problem is not None or snapshot is None:
                assert problem is not None
                said = ["error", type(problem).__name__, problem.message, problem.hint]
                pipe.write(_frame(json.dumps(said).encode()))
                return
            keep: list[bytes] = []
            found = authenticate(snapshot, keys, side.folder, keep)
            listed: list[Any] = snapshot["shadow"]["rows"]
            size = digest.CHUNK_ROWS
            cuts = range(0, count, size)
            chunks = keep or [orjson.dumps(listed[at : at + size]) for at in cuts]
            head: list[object] = ["ok", found.authentic, found.checked, count, bool(keep)]
            rest = dict(snapshot, shadow=dict(snapshot["shadow"], rows=[]))
            pipe.write(_frame(json.dumps(head).encode()) + _frame(orjson.dumps(rest)))
            pipe.write(len(chunks).to_bytes(_LENGTH, "big"))
            for chunk in chunks:
                pipe.write(_frame(chunk))
    except BaseException:  # noqa: BLE001 - the parent reads no outcome and fails closed
        code = 1
    finally:
        os._exit(code)


def _problem(snapshot: dict[str, Any], side: SideSource) -> InputError | None:
    try:
        validate_side(snapshot, side)
    except InputError as error:
        return error
    return None


def _read_exact(pipe: Any, size: int) -> bytes:
    data: bytes = pipe.read(size)
    if len(data) != size:
        raise ValueError("short read")
    return data


def _framed(pipe: Any) -> bytes:
    return _read_exact(pipe, int.from_bytes(_read_exact(pipe, _LENGTH), "big"))


def _receive(pipe: Any, source: str, want_chunks: bool) -> OldSide | BakeError:
    head = json.loads(_framed(pipe))
    if head[0] == "error" and head[1] in _ERRORS:
        return _ERRORS[head[1]](str(head[2]), str(head[3]))
    kind, authentic, checked, count, canonical = head
    if kind != "ok" or type(authentic) is not bool or type(canonical) is not bool:
        raise ValueError("not an outcome")
    rest = orjson.loads(_framed(pipe))
    chunks = []
    for _ in range(int.from_bytes(_read_exact(pipe, _LENGTH), "big")):
        chunk = _framed(pipe)  # read even when not wanted: the child writes them all
        if want_chunks:
            chunks.append(chunk)
    return OldSide(source, Authenticity(authentic, str(checked)), rest, int(count), chunks,
                   canonical and want_chunks)  # fmt: skip


class OldReader:
    """The child that takes OLD, forked from OLD's bytes as read here (so both processes see
    the same bytes). `count()` is OLD's row count as soon as the child parsed it (None when
    OLD is not a snapshot); `finish()` waits for the rest and reaps the child: call it once,
    whatever happened."""

    def __init__(self, side: SideSource, raw: bytes, keys: Keys) -> None:
        self.side = side
        read_fd, write_fd = os.pipe()
        self._pid = os.fork()
        if self._pid == 0:  # pragma: no cover - the child
            os.close(read_fd)
            _child(side, raw, keys, write_fd)
        os.close(write_fd)
        self._pipe = os.fdopen(read_fd, "rb")
        self._broken = False
        self._count: int | None = None
        self._counted = False

    def count(self) -> int | None:
        if not self._counted:
            self._counted = True
            try:
                found = int.from_bytes(_read_exact(self._pipe, _LENGTH), "big")
            except (ValueError, OSError):
                self._broken = True
                return None
            self._count = None if found == _UNKNOWN else found
        return self._count

    def finish(self, want_chunks: bool) -> OldSide | BakeError:
        found: OldSide | BakeError | None = None
        self.count()  # read first, if it was not
        if not self._broken:
            try:
                found = _receive(self._pipe, self.side.source, want_chunks)
            except (ValueError, TypeError, KeyError, IndexError, OSError, orjson.JSONDecodeError):
                found = None
        self._pipe.close()
        _, status = os.waitpid(self._pid, 0)
        if found is None or os.waitstatus_to_exitcode(status) != 0:
            return CheckingFailed(
                "OLD: the process that read and checked it failed; nothing about it is known",
                "run the diff again; if it fails again, report it",
            )
        return found


def _rows(chunks: list[bytes]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for chunk in chunks:
        rows += orjson.loads(chunk)
    return rows


def compare_rows(old: OldSide, new_rows: list[dict[str, Any]], new_chunks: list[bytes]) -> (
    tuple[list[Change] | None, list[dict[str, Any]] | None]
):
    """(the shadow matrix's changes, None) when the chunks settle them; else (None, OLD's rows
    parsed whole) for `compare` to match."""
    size = digest.CHUNK_ROWS
    same_grid = (
        old.canonical
        and len(new_chunks) == len(old.chunks)
        and old.count == len(new_rows)
        and len(new_chunks) * size >= len(new_rows)
    )
    if same_grid:
        differ = list(compress(range(len(new_chunks)), map(ne, old.chunks, new_chunks)))
        old_rows = _rows([old.chunks[i] for i in differ])
        new_part: list[dict[str, Any]] = []
        for i in differ:
            new_part += new_rows[i * size : (i + 1) * size]
        if len(old_rows) == len(new_part) and all(
            _KEY(a) == _KEY(b) for a, b in zip(old_rows, new_part, strict=True) if a != b
        ):
            return pair_changes(old_rows, new_part), None
    return None, _rows(old.chunks)


def local_size(spec: str) -> int | None:
    """The size of a local side's snapshot file (a folder's api/compliance.json), else None."""
    from compliance_bake.diff.sides import URL_PREFIXES
    from compliance_bake.report import layout

    if spec.startswith(URL_PREFIXES):
        return None
    path = os.path.join(spec, layout.API_FILE) if os.path.isdir(spec) else spec
    try:
        return os.stat(path).st_size
    except OSError:
        return None
