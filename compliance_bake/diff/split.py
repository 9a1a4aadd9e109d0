"""Large sides read each in its own process, at the same time (run.py uses it).

Parsing and checking the two sides is most of a 500,000-row diff. Here each side's bytes, once
read, go to a child forked at once: it parses the side and sends its row count; authenticates
it exactly as `check_side` does (the same functions, the same keys), which makes its rows'
canonical bytes (digest.py); sends the side without its shadow rows and the rows as chunks of
JSON with sorted keys (the canonical bytes, or made the same way when authentication made none),
with the rows' (state, partners) runs when this process asks for them (the two sides' counts
differ: the rows are then matched by key); checks the side against the snapshot schema; and
sends its outcome: the side's authenticity, or the error that refuses it.

This process compares the two sides' rows as bytes (rowbytes.py) while the children check the
schemas, and reports nothing before both outcomes are in.

Fail closed: a child that dies or sends anything malformed is an internal error (exit 4), never
an authentic side; a child's InputError (a side that is not JSON, not a snapshot) is raised
here as it would have been in-process.
"""

from __future__ import annotations

import contextlib
import json
import os
from typing import Any

import orjson

from compliance_bake.diff import digest
from compliance_bake.diff.rowbytes import SideRows, runs_of
from compliance_bake.diff.sides import (
    Authenticity,
    Keys,
    SideSource,
    authenticate,
    parse_snapshot,
    schema_refusal,
)
from compliance_bake.errors import EXIT_INTERNAL, BakeError, InputError, TargetError

_LENGTH = 8
_ERRORS: dict[str, type[BakeError]] = {"InputError": InputError, "TargetError": TargetError}


class CheckingFailed(BakeError):
    """The process that read a side died or answered nonsense: nothing about it is known."""

    exit_code = EXIT_INTERNAL


def _frame(data: bytes) -> bytes:
    return len(data).to_bytes(_LENGTH, "big") + data


_NO_ROWS = _frame(b'["none"]')  # the side is not a snapshot (its schema check says why)


def _rows_message(snapshot: dict[str, Any], keep: list[bytes], with_runs: bool) -> list[bytes]:
    """The frames that carry the side's rows: its head, rest, runs (None unless asked), then
    each chunk (its length, then its bytes: written as they are, not copied into one
    buffer)."""
    shadow = snapshot.get("shadow")
    rows = shadow.get("rows") if isinstance(shadow, dict) else None
    if not isinstance(shadow, dict) or not isinstance(rows, list):
        return [_NO_ROWS]
    try:
        runs: list[Any] | None = runs_of(rows) if with_runs else None
    except (KeyError, TypeError):
        runs = None  # not a snapshot's rows: the schema check refuses the side
    try:
        size = digest.CHUNK_ROWS
        chunks = keep or [
            orjson.dumps(rows[at : at + size], option=orjson.OPT_SORT_KEYS)
            for at in range(0, len(rows), size)
        ]
        rest = dict(snapshot, shadow=dict(shadow, rows=[]))
        head = json.dumps(["rows", len(rows), len(chunks)]).encode()
        parts = [_frame(head), _frame(orjson.dumps(rest)), _frame(orjson.dumps(runs))]
    except (TypeError, orjson.JSONEncodeError):
        return [_NO_ROWS]
    for chunk in chunks:
        parts += (len(chunk).to_bytes(_LENGTH, "big"), chunk)
    return parts


def _said(problem: InputError) -> bytes:
    said = ["error", type(problem).__name__, problem.message, problem.hint]
    return _frame(json.dumps(said).encode())


_UNKNOWN = 2**64 - 1  # the row count of a side that is not a snapshot


def _count(snapshot: dict[str, Any] | None) -> bytes:
    shadow = (snapshot or {}).get("shadow")
    rows = shadow.get("rows") if isinstance(shadow, dict) else None
    return (len(rows) if isinstance(rows, list) else _UNKNOWN).to_bytes(_LENGTH, "big")


def _asked(request_fd: int) -> bool:  # pragma: no cover - in the child
    """Whether the parent wants the rows' runs (the sides' row counts differ)."""
    try:
        return os.read(request_fd, 1) == b"r"
    finally:
        os.close(request_fd)


def _child(  # pragma: no cover
    side: SideSource, held: list[bytes], keys: Keys, write_fd: int, request_fd: int
) -> None:
    """Parse the side and send its row count; authenticate it (which keeps its rows'
    canonical bytes); send the rows (with their runs when the parent asks: the two sides'
    counts differ); check the side against the schema while the parent compares them; send
    the outcome.

    The rows are sent before the schema check, not beside it from a thread: the check holds
    the GIL, and a thread writing the pipe 64 KiB at a time would wait for it at every write."""
    code = 0
    try:
        with os.fdopen(write_fd, "wb") as pipe:
            raw = held.pop()  # the only reference: freed once parsed
            try:
                snapshot = parse_snapshot(raw, side.label, side.source)
            except InputError as error:
                pipe.write(_count(None) + _NO_ROWS + _said(error))
                return
            del raw
            pipe.write(_count(snapshot))
            pipe.flush()  # the parent asks for the runs on both sides' counts
            keep: list[bytes] = []
            failure: Exception | None = None
            try:
                found = authenticate(snapshot, keys, side.folder, keep)
            except Exception as error:  # noqa: BLE001 - said below, once the schema is checked
                failure = error
                keep.clear()
            pipe.writelines(_rows_message(snapshot, keep, _asked(request_fd)))
            pipe.flush()  # read as soon as it is sent
            del keep
            problem = schema_refusal(snapshot, side)  # while the parent compares the rows
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


def _read_exact(pipe: Any, size: int) -> bytes:
    data: bytes = pipe.read(size)
    if len(data) != size:
        raise ValueError("short read")
    return data


def _framed(pipe: Any) -> bytes:
    return _read_exact(pipe, int.from_bytes(_read_exact(pipe, _LENGTH), "big"))


def _receive_rows(pipe: Any) -> SideRows | None:
    head = json.loads(_framed(pipe))
    if head == ["none"]:
        return None
    kind, count, chunk_count = head
    if kind != "rows" or type(count) is not int or type(chunk_count) is not int:
        raise ValueError("not a side's rows")
    rest = orjson.loads(_framed(pipe))
    runs = orjson.loads(_framed(pipe))
    if not isinstance(rest, dict) or not isinstance(runs, list | None):
        raise ValueError("not a side's rows")
    chunks = [_framed(pipe) for _ in range(chunk_count)]
    return SideRows(rest, count, chunks, runs)


def _receive_outcome(pipe: Any) -> Authenticity | BakeError:
    head = json.loads(_framed(pipe))
    if head[0] == "error" and head[1] in _ERRORS:
        return _ERRORS[head[1]](str(head[2]), str(head[3]))
    kind, authentic, checked = head
    if kind != "ok" or type(authentic) is not bool or not isinstance(checked, str):
        raise ValueError("not an outcome")
    return Authenticity(authentic, checked)


_BROKEN = (ValueError, TypeError, KeyError, IndexError, OSError, orjson.JSONDecodeError)


class SideProcess:
    """The child that takes one side, forked from the side's bytes as read here (fork before
    any thread runs in this process). In order: `count()` is the side's row count once the
    child parsed it; `ask()` tells the child whether to send the rows' runs too; `rows()` is
    what it sends then: the side's rows as bytes, for the comparison (None when the side is not
    a snapshot or the child broke); `finish()` waits for its outcome (the side's authenticity,
    or the error that refuses it) and reaps the child: call it once, whatever happened. Each
    step does the ones before it that were skipped, so the child never waits for an answer."""

    def __init__(self, side: SideSource, held: list[bytes], keys: Keys) -> None:
        """`held` holds the side's bytes, and must be their only reference: the child takes
        them out, and this process lets go of them. (A local variable of the caller's would
        live on in the child's copy of the caller's frame, pinning a side's size of memory in
        the child until it ends.)"""
        self.side = side
        read_fd, write_fd = os.pipe()
        request_read, self._request = os.pipe()
        self._pid = os.fork()
        if self._pid == 0:  # pragma: no cover - the child
            os.close(read_fd)
            os.close(self._request)
            _child(side, held, keys, write_fd, request_read)
        held.clear()  # the child has them; the rows come back as bytes
        os.close(write_fd)
        os.close(request_read)
        self._pipe = os.fdopen(read_fd, "rb")
        self._broken = False
        self._count: int | None = None
        self._counted = False
        self._rows: SideRows | None = None
        self._received = False

    def count(self) -> int | None:
        """The side's row count, once the child has parsed it (None: not a snapshot)."""
        if not self._counted:
            self._counted = True
            try:
                found = int.from_bytes(_read_exact(self._pipe, _LENGTH), "big")
                self._count = None if found == _UNKNOWN else found
            except _BROKEN:
                self._broken = True
        return self._count

    def ask(self, runs: bool) -> None:
        """Answer the child (once): send the rows' runs too, or not. Never blocks."""
        if self._request >= 0:
            with contextlib.suppress(OSError):  # the child is gone: finish() says so
                os.write(self._request, b"r" if runs else b"n")
            os.close(self._request)
            self._request = -1

    def rows(self) -> SideRows | None:
        if not self._received:
            self._received = True
            self.count()
            self.ask(False)  # if not asked: the child waits for the answer
            if not self._broken:
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
                f"{self.side.label}: the process that read and checked it failed; nothing "
                "about it is known",
                "run the diff again; if it fails again, report it",
            )
        return found


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
