"""Where the audit's plays come from: a regular file, or standard input spooled into one.

Engine-neutral. A plays path must name a regular file: it is opened without blocking
(`O_NONBLOCK`, so a FIFO with no writer cannot hang the audit) and refused, exit 2, when it is a
FIFO, a device, a socket or a folder. Standard input (`-`) is a stream a pipe carries in, or a
regular file redirected in (a terminal or a named FIFO is refused, exit 2): it is copied into a
private temporary folder (mode 0700, removed afterwards) while its records are counted, because
an engine reads its input more than once. `PlaysInput.readable` gives the file an engine may
read: the file itself, or a copy with every record past the reader's limit, and every CSV record
with another count of fields than the header's, blanked out (`without_oversized`, below).
"""

from __future__ import annotations

import codecs
import mmap
import os
import shutil
import stat
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from compliance_bake.audit import record_count
from compliance_bake.audit.plays_source import (
    STDIN,
    PlaysFormat,
    not_regular,
    plays_format,
    unreadable,
)
from compliance_bake.audit.record_count import (
    CHUNK,
    RECORD_LIMIT,
    Oversized,
    RecordCount,
    RecordScanner,
    count_records,
)
from compliance_bake.errors import InputError
from compliance_bake.inputs.files import NotRegular, open_regular

STDIN_NAME = "standard input"


@dataclass(slots=True)
class PlaysInput:
    """A plays input, ready for an engine: `path` is a regular file."""

    path: Path
    name: str  # as given: a path, or "-" for standard input
    format: PlaysFormat
    limit: int  # the longest record an engine is given, in bytes
    workdir: Path | None = None  # the private temporary folder, once one is needed
    count: RecordCount | None = None
    _readable: Path | None = field(default=None, repr=False)
    _line_feeds: bool = field(default=False, repr=False)

    @property
    def label(self) -> str:
        """How messages name the input."""
        return STDIN_NAME if self.name == STDIN else self.name

    def record_count(self) -> RecordCount:
        """The input's records, counted once (CSV and JSON Lines; not Parquet)."""
        if self.count is None:
            csv = self.format is PlaysFormat.CSV
            self.count = count_records(self.path, quoting=csv, header=csv, limit=self.limit)
        return self.count

    def readable(self) -> Path:
        """The file an engine reads: `path`, or a copy without the records past the limit or
        with the wrong count of fields (and
        for a CSV with bytes that are not UTF-8, with those read as U+FFFD; after
        `line_feeds_only`, with every line ending in a line feed)."""
        if self.format is PlaysFormat.PARQUET:
            return self.path
        count = self.record_count()
        set_aside = count.set_aside()
        if not set_aside and not count.not_utf8 and not self._line_feeds:
            return self.path
        if self._readable is None:
            target = self._workdir() / ("readable" + self.path.suffix)
            without_oversized(self.path, target, set_aside, count.not_utf8, self._line_feeds)
            self._readable = target
        return self._readable

    def line_feeds_only(self) -> bool:
        """Make `readable` a copy whose lines all end in a line feed, when the file holds a
        carriage return: DuckDB's reader stops at a file whose lines end both ways. Whether
        anything changed."""
        if self._line_feeds or self.format is PlaysFormat.PARQUET:
            return False
        with self.path.open("rb") as handle:
            while chunk := handle.read(record_count.CHUNK):
                if b"\r" in chunk:
                    self._line_feeds, self._readable = True, None
                    return True
        return False

    def _workdir(self) -> Path:
        if self.workdir is None:
            self.workdir = Path(tempfile.mkdtemp(prefix="compliance-bake-plays-"))
        return self.workdir


def regular_file(path: Path, what: str = "plays file") -> None:
    """Refuse anything but an existing, readable regular file, without blocking on a FIFO."""
    try:
        with open_regular(path):
            pass
    except NotRegular as exc:
        raise not_regular(path, exc.kind, what) from None
    except OSError as exc:
        raise unreadable(path, exc, what) from None


def _streamable(stream: BinaryIO) -> None:
    """Refuse a standard input that is a terminal or a named FIFO: a plays input is a regular
    file, or a stream a pipe carries in. A named FIFO is a path on disk, held to the path forms'
    rule (refused, exit 2); a pipe (`pipe:[N]` in /proc/self/fd) is the stream `-` is for."""
    kind = "a terminal" if stream.isatty() else None
    with suppress(OSError, ValueError):  # no descriptor (a test's stream), no /proc: a stream
        fd = stream.fileno()
        if stat.S_ISFIFO(os.fstat(fd).st_mode):
            link = os.readlink(f"/proc/self/fd/{fd}")
            kind = kind or (None if link.startswith("pipe:") else f"a named FIFO, {link}")
    if kind is not None:
        raise InputError(
            f"--plays {STDIN} reads {STDIN_NAME}, which is {kind}",
            "pipe the plays in (zcat plays.csv.gz | compliance-bake audit deep --plays -) "
            "or pass a regular file's path",
        )


def _spool(stream: BinaryIO, target: Path, fmt: PlaysFormat, limit: int) -> RecordCount | None:
    """Copy the stream into `target`, counting its records on the way (not Parquet's)."""
    scanner = None
    if fmt is not PlaysFormat.PARQUET:
        csv = fmt is PlaysFormat.CSV
        scanner = RecordScanner(quoting=csv, header=csv, limit=limit)
    with target.open("wb") as out:
        while chunk := stream.read(record_count.CHUNK):
            out.write(chunk)
            if scanner is not None:
                scanner.feed(chunk)
    return None if scanner is None else scanner.finish()


@contextmanager
def plays_input(path: Path, fmt: PlaysFormat | None = None) -> Iterator[PlaysInput]:
    """The plays input named by `path` (`-`: standard input, CSV unless `fmt` says otherwise),
    with records up to `record_count.RECORD_LIMIT` bytes. Bad input raises InputError;
    temporary files are removed on the way out."""
    limit = record_count.RECORD_LIMIT
    plays: PlaysInput
    if str(path) == STDIN:
        fmt = fmt or PlaysFormat.CSV
        workdir = Path(tempfile.mkdtemp(prefix="compliance-bake-plays-"))
        plays = PlaysInput(workdir / f"stdin.{fmt.value}", STDIN, fmt, limit, workdir)
    else:
        fmt = fmt or plays_format(path)
        regular_file(path)
        plays = PlaysInput(path, str(path), fmt, limit)
    try:
        if plays.name == STDIN:
            source = sys.stdin.buffer
            _streamable(source)
            try:
                plays.count = _spool(source, plays.path, fmt, limit)
            except OSError as exc:
                raise InputError(
                    f"{STDIN_NAME}: cannot read the plays: {exc.strerror or exc}",
                    "pipe a plays file in, or pass its path",
                ) from None
        yield plays
    finally:
        if plays.workdir is not None:
            shutil.rmtree(plays.workdir, ignore_errors=True)


@contextmanager
def counting(plays: PlaysInput) -> Iterator[Callable[[], RecordCount | None]]:
    """Count the input's records in a side thread while DuckDB reads it (DuckDB releases the
    GIL): the count reads the file at memory speed, so it costs no time of its own."""
    if plays.format is PlaysFormat.PARQUET:
        yield lambda: None
        return
    failed: list[OSError] = []

    def count() -> None:
        try:
            plays.record_count()
        except OSError as exc:
            failed.append(exc)

    counter = threading.Thread(target=count, daemon=True)
    counter.start()

    def result() -> RecordCount:
        counter.join()
        if failed:
            raise InputError(
                f"{plays.label}: cannot read the plays: {failed[0].strerror}",
                "make it readable, and keep it in place during the audit",
            )
        return plays.record_count()

    try:
        yield result
    finally:
        counter.join()


def has_long_line(path: Path, limit: int | None = None) -> bool:
    """Whether some line of the file is longer than `limit` bytes: a quick look before an engine
    reads it. From each line feed it looks back from `limit` bytes on for the next one, so it
    touches a few bytes per `limit` bytes of file (the file is mapped, not read). A record past
    the limit made of short lines (a quoted field with line feeds) escapes it; the full count
    finds that one."""
    limit = RECORD_LIMIT if limit is None else limit
    with path.open("rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size <= limit:
            return False
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            last = -1  # the line feed before the current line
            while last + 1 + limit < size:
                found = data.rfind(b"\n", last + 1, last + 1 + limit)
                if found < 0:
                    return True
                last = found
    return False


def without_oversized(
    source: Path,
    target: Path,
    oversized: Iterable[Oversized],
    repair_utf8: bool = False,
    line_feeds: bool = False,
) -> None:
    """Copy `source` to `target` with each oversized record replaced by as many line feeds as it
    has lines: blank lines, which the readers skip, so the lines after keep their numbers. With
    `repair_utf8`, bytes that are not UTF-8 become U+FFFD, as Spark's CSV reader shows them:
    DuckDB's reader refuses a row whose value it reads with such bytes, so whether the row
    counted as a play would depend on the columns a query reads. With `line_feeds`, every line
    ends in a line feed: `\\r\\n` becomes `\\n`, and so does a lone `\\r` (a line end to
    some writers), for DuckDB's reader stops at a file whose lines end both ways."""
    with source.open("rb") as src, target.open("wb") as raw:
        dst = _Repairing(raw, repair_utf8, line_feeds)
        at = 0
        for record in oversized:
            _copy_range(src, dst, at, record.start)
            dst.write(b"\n" * record.lines)
            at = record.end
        src.seek(at)
        shutil.copyfileobj(src, dst, CHUNK)
        dst.write(b"", final=True)


class _Repairing:
    """A binary writer that passes bytes on, or writes UTF-8 (bytes that are not UTF-8 replaced
    by U+FFFD), and/or lines that all end in a line feed (a final `\\r` waits for the next)."""

    def __init__(self, out: BinaryIO, utf8: bool, line_feeds: bool) -> None:
        self.out, self.line_feeds = out, line_feeds
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace") if utf8 else None
        self.pending = b""

    def write(self, data: bytes, final: bool = False) -> int:
        size = len(data)
        if self.decoder is not None:
            data = self.decoder.decode(data, final).encode("utf-8")
        if self.line_feeds:
            data, self.pending = self.pending + data, b""
            if data.endswith(b"\r") and not final:
                data, self.pending = data[:-1], b"\r"
            data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        self.out.write(data)
        return size


def _copy_range(src: BinaryIO, dst: _Repairing, begin: int, end: int) -> None:
    src.seek(begin)
    left = end - begin
    while left > 0:
        chunk = src.read(min(CHUNK, left))
        if not chunk:
            break
        dst.write(chunk)
        left -= len(chunk)
