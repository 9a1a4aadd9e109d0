"""A large out/ folder: the snapshot file's layout and schema checked in a child, beside the rest.

For a snapshot file of FORK_MIN_BYTES and more (where the platform can fork), `verify` reads the
files and parses the snapshot file with orjson, then forks a child that shares that reading and
finds what load_folder would (files.known): whether the bytes are plainly the rendering of the
reading (then it is the strict reading), the snapshot schema's outcome, and whether each
registry copy is the rendering of its block. Meanwhile this process checks the digests, HMACs,
rules and recorded checks on the reading, into a report of their own: the *tail*, computed as if
the files were as baked (Ahead.check).

Then the folder's findings are made in their usual order, load_folder taking the child's answers,
and the tail follows only if it was computed from what the folder turned out to hold: the same
reading, the same files' bytes, the same renderings (`Ahead.settles`). Otherwise it is computed
again from what the folder holds, so the findings are those of the in-process path, always.

Fail closed, never less checked: a child that dies or answers anything malformed gives no
answer, and load_folder then checks every file in-process, as for a small folder.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any

import orjson

from compliance_bake.inputs.jsonpieces import loads_in_pieces
from compliance_bake.inputs.schemas import SchemaViolation
from compliance_bake.progress import Phases
from compliance_bake.report import layout
from compliance_bake.report.portal import Totals
from compliance_bake.signing.secret import Secret
from compliance_bake.verify import files
from compliance_bake.verify.columns import ShadowColumns, state_totals
from compliance_bake.verify.findings import VerifyReport
from compliance_bake.verify.sealed import Digests, start_digests
from compliance_bake.verify.snapshot_checks import verify_snapshot

FORK_MIN_BYTES = 16 * 1024 * 1024
# Every file of out/ verify reads, read before the child forks: both see the same bytes.
READ_FILES = (*layout.JSON_FILES, layout.PORTAL_FILE, files.ATTESTATION_FILE, files.AUDIT_FILE)
COPIES = tuple(files.REGISTRY_BLOCKS)
Args = tuple[Any, list[files.RawFile], str | None, frozenset[str]]


def _encode(found: files.Known | None) -> bytes:
    if found is None:
        return orjson.dumps(["unknown"])
    schema = found.schema
    said: Any = (
        schema
        if schema is None or isinstance(schema, str)
        else [schema.path, schema.message, schema.keyword]
    )
    return orjson.dumps(["known", said, found.copies])


def _decode(data: bytes, value: Any) -> files.Known | None:
    """The child's answer about `value`; None for "not plainly the layout" and for anything
    that is not an answer."""
    try:
        kind, said, copies = orjson.loads(data)
    except (orjson.JSONDecodeError, TypeError, ValueError):
        return None
    if kind != "known" or type(copies) is not dict or not set(copies) <= set(COPIES):
        return None
    if not all(type(same) is bool for same in copies.values()):
        return None
    if said is None or type(said) is str:
        return files.Known(value, said, copies)
    if type(said) is list and len(said) == 3 and all(type(part) is str for part in said):
        return files.Known(value, SchemaViolation(*said), copies)
    return None


def _fork(job: Callable[[], bytes]) -> Callable[[], bytes | None]:
    """Run `job` in a forked child; the returned call waits for its bytes (None: the child
    failed) and reaps it. Call it exactly once."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child; its answers are what the tests check
        code = 0
        try:
            os.close(read_fd)
            with os.fdopen(write_fd, "wb") as pipe:
                pipe.write(job())
        except BaseException:  # noqa: BLE001 - the parent reads no answer and checks itself
            code = 1
        finally:
            os._exit(code)
    os.close(write_fd)

    def answer() -> bytes | None:
        with os.fdopen(read_fd, "rb") as pipe:
            data = pipe.read()
        _, status = os.waitpid(pid, 0)
        return data if os.waitstatus_to_exitcode(status) == 0 else None

    return answer


class Ahead:
    """The child, forked, and the tail, computed: `start` makes one."""

    def __init__(
        self, value: Any, raws: list[files.RawFile], blocks: frozenset[str], answer: Any
    ) -> None:
        self.value = value
        self.digests: Callable[[], Digests] = start_digests(value)
        self._args: Args = (value, raws, layout.API_FILE, blocks)
        self._answer: Callable[[], bytes | None] = answer
        self._known: files.Known | None = None
        self._waited = False
        self._tail: VerifyReport | None = None
        self.columns: ShadowColumns | None = None

    def check(self, report: VerifyReport, secret: Secret | None, phases: Phases) -> None:
        """The tail: the snapshot's own checks on the reading, as if every file were as baked.
        An exception leaves no tail (the checks run again, in the open)."""
        tail = VerifyReport(report.source, report.source_kind, report.hmac_checked)
        value, raws, rendering, blocks = self._args
        try:
            self.columns = verify_snapshot(  # the columns serve the portal's totals too
                layout.API_FILE, value, secret, tail, list(raws), phases, rendering, blocks,
                self.digests,
            )  # fmt: skip
        except Exception:  # noqa: BLE001 - raised again where the checks run in the open
            return
        self._tail = tail

    def totals(self, snap: Any) -> Totals | None:
        """The portal's totals per state of `snap`, counted on the columns, if it is the
        reading they were read from; None: let the portal count them."""
        if snap is not self.value or self.columns is None:
            return None
        return state_totals(self.columns)

    def known(self) -> files.Known | None:
        """The child's answer (waits for it, and reaps the child, the first time)."""
        if not self._waited:
            self._waited = True
            data = self._answer()
            self._known = None if data is None else _decode(data, self.value)
        return self._known

    def settles(self, args: Args, report: VerifyReport) -> bool:
        """Add the tail's findings and signers to `report` if it was computed from `args`, what
        the folder holds; False (nothing added) otherwise."""
        value, raws, rendering, blocks = self._args
        if self._tail is None or args[0] is not value or args[1:] != (raws, rendering, blocks):
            return False
        report.findings.extend(self._tail.findings)
        report.signers.extend(self._tail.signers)
        return True


def _bytes(read: Future[bytes]) -> bytes:
    return read.result() if read.exception() is None else b""


def start(out_dir: Path, reads: files.Reads, reader: ThreadPoolExecutor) -> Ahead | None:
    """For a snapshot file of FORK_MIN_BYTES and more: parse it, wait for every read (no thread
    may run when the child forks), fork the child. None (and the reads go on, or are done) for
    a smaller file, one that is no JSON object, or where a platform cannot fork."""
    wait([reads[layout.API_FILE]])
    raw = _bytes(reads[layout.API_FILE])
    if not hasattr(os, "fork") or len(raw) < FORK_MIN_BYTES:
        reader.shutdown(wait=False)  # the thread ends with its work
        return None
    try:
        value = loads_in_pieces(raw)  # while the thread reads the other files (a third of the peak)
    except (orjson.JSONDecodeError, TypeError, MemoryError):
        value = None
    if not isinstance(value, dict):  # not a snapshot: nothing to check beside
        reader.shutdown(wait=False)
        return None
    reader.shutdown(wait=True)
    copies = {name: reads[name].result() for name in COPIES if reads[name].exception() is None}
    # The child shares this reading, copy-on-write: each process copies the pages it writes
    # (reference counts), about 0.15 s in all for 500,000 rows, less than parsing it again.
    answer = _fork(lambda: _encode(files.known(raw, value, copies)))
    raws = [(name, _bytes(reads[name])) for name in (*layout.JSON_FILES, layout.PORTAL_FILE)]
    present = [x for x in (files.ATTESTATION_FILE, files.AUDIT_FILE) if (out_dir / x).exists()]
    raws.extend((x, _bytes(reads[x])) for x in present)
    return Ahead(value, raws, frozenset(copies), answer)
