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
import threading
from dataclasses import dataclass
from itertools import compress
from operator import itemgetter, ne
from typing import Any

import orjson

from compliance_bake.diff import digest
from compliance_bake.diff.model import Change
from compliance_bake.diff.pairs import pair_changes
from compliance_bake.diff.rowbytes import Run, pair_changes_by_bytes, row_pieces, runs_of
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
class OldRows:
    """What OLD's process sends before its outcome: enough to compare, nothing yet trusted."""

    rest: dict[str, Any]  # OLD with `shadow.rows` empty
    count: int  # its rows
    chunks: list[bytes]  # its rows, as JSON arrays of CHUNK_ROWS rows with sorted keys
    runs: list[Run] | None  # its (state, partners) runs, None when the rows have no such keys


def _frame(data: bytes) -> bytes:
    return len(data).to_bytes(_LENGTH, "big") + data


_NO_ROWS = _frame(b'["none"]')  # OLD is not a snapshot (its schema check says why)


def _rows_message(snapshot: dict[str, Any], keep: list[bytes]) -> bytes:
    shadow = snapshot.get("shadow")
    rows = shadow.get("rows") if isinstance(shadow, dict) else None
    if not isinstance(rows, list):
        return _NO_ROWS
    try:
        runs: list[Run] | None = runs_of(rows)
    except (KeyError, TypeError):
        runs = None
    try:
        size = digest.CHUNK_ROWS
        chunks = keep or [
            orjson.dumps(rows[at : at + size], option=orjson.OPT_SORT_KEYS)
            for at in range(0, len(rows), size)
        ]
        rest = dict(snapshot, shadow=dict(shadow, rows=[]))
        parts = [json.dumps(["rows", len(rows), len(chunks)]).encode(), orjson.dumps(rest)]
        parts.append(orjson.dumps(runs))
    except (TypeError, orjson.JSONEncodeError):
        return _NO_ROWS
    return b"".join(map(_frame, parts + chunks))


def _said(problem: InputError) -> bytes:
    return _frame(json.dumps(["error", type(problem).__name__, problem.message,
                              problem.hint]).encode())  # fmt: skip


def _child(side: SideSource, raw: bytes, keys: Keys, write_fd: int) -> None:  # pragma: no cover
    """Parse OLD; authenticate it (which makes its rows' canonical bytes); send the rows, from a
    thread, while OLD is checked against the schema; then send the outcome."""
    code = 0
    try:
        with os.fdopen(write_fd, "wb") as pipe:
            try:
                snapshot = parse_snapshot(raw, "OLD", side.source)
            except InputError as error:
                pipe.write(_NO_ROWS + _said(error))
                return
            del raw
            keep: list[bytes] = []
            failure: Exception | None = None
            try:
                found = authenticate(snapshot, keys, side.folder, keep)
            except Exception as error:  # noqa: BLE001 - said below, once the schema is checked
                failure = error
                keep.clear()
            message = _rows_message(snapshot, keep)
            del keep
            sender = threading.Thread(target=pipe.write, args=(message,), name="diff-old-rows")
            sender.start()  # the write releases the GIL while the parent reads
            try:
                problem = _problem(snapshot, side)
            finally:
                sender.join()
            del message
            if problem is not None:
                pipe.write(_said(problem))
                return
            if failure is not None:
                raise failure  # a snapshot that could not be authenticated: fail closed
            pipe.write(_frame(json.dumps(["ok", found.authentic, found.checked]).encode()))
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


def _receive_rows(pipe: Any) -> OldRows | None:
    head = json.loads(_framed(pipe))
    if head == ["none"]:
        return None
    kind, count, chunk_count = head
    if kind != "rows" or type(count) is not int or type(chunk_count) is not int:
        raise ValueError("not OLD's rows")
    rest = orjson.loads(_framed(pipe))
    runs = orjson.loads(_framed(pipe))
    chunks = [_framed(pipe) for _ in range(chunk_count)]
    return OldRows(rest, count, chunks, runs)


def _receive_outcome(pipe: Any) -> Authenticity | BakeError:
    head = json.loads(_framed(pipe))
    if head[0] == "error" and head[1] in _ERRORS:
        return _ERRORS[head[1]](str(head[2]), str(head[3]))
    kind, authentic, checked = head
    if kind != "ok" or type(authentic) is not bool or not isinstance(checked, str):
        raise ValueError("not an outcome")
    return Authenticity(authentic, checked)


_BROKEN = (ValueError, TypeError, KeyError, IndexError, OSError, orjson.JSONDecodeError)


class OldReader:
    """The child that takes OLD, forked from OLD's bytes as read here. `rows()` is what it
    sends first (OLD's rows as bytes, for the comparison; None when OLD is not a snapshot or
    the child broke); `finish()` waits for its outcome (OLD's authenticity, or the error that
    refuses it) and reaps the child: call it once, whatever happened."""

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
        self._rows: OldRows | None = None
        self._received = False

    def rows(self) -> OldRows | None:
        if not self._received:
            self._received = True
            try:
                self._rows = _receive_rows(self._pipe)
            except _BROKEN:
                self._broken = True
        return self._rows

    def finish(self) -> Authenticity | BakeError:
        found: Authenticity | BakeError | None = None
        self.rows()  # read first, if they were not
        if not self._broken:
            try:
                found = _receive_outcome(self._pipe)
            except _BROKEN:
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


def new_chunks(rows: list[Any], keep: list[bytes]) -> list[bytes]:
    """NEW's rows as OLD's child sends OLD's: the canonical chunks its authentication kept, or
    made the same way when it kept none."""
    size = digest.CHUNK_ROWS
    return keep or [
        orjson.dumps(rows[at : at + size], option=orjson.OPT_SORT_KEYS)
        for at in range(0, len(rows), size)
    ]


def compare_rows(old: OldRows, new_rows: list[dict[str, Any]], new_chunks: list[bytes]) -> (
    tuple[list[Change] | None, list[dict[str, Any]] | None]
):
    """(the shadow matrix's changes, None) when the bytes settle them; else (None, OLD's rows
    parsed whole) for `compare` to match. `new_chunks`: from `new_chunks`, on OLD's grid."""
    size = digest.CHUNK_ROWS
    same_grid = (
        len(new_chunks) == len(old.chunks)
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
    if old.runs is not None:
        old_pieces = row_pieces(old.chunks, old.count)
        new_pieces = row_pieces(new_chunks, len(new_rows))
        if old_pieces is not None and new_pieces is not None:
            found = pair_changes_by_bytes(old.runs, old_pieces, new_rows, new_pieces)
            if found is not None:
                return found, None
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
