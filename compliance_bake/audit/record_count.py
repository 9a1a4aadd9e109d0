"""The records of a plays file, counted without the engine: the audit's check that no row hides.

Engine-neutral (no DuckDB here): any engine that reads a plays file reconciles its rows with this
count. A record ends at a line feed outside a quoted field, as RFC 4180 has it with the reader's
own quoting: a double quote opens a quoted field only at the start of a field, `""` inside one is
a quote, and a quote anywhere else is a plain character. A record that is empty (or only `\\r`)
is a blank line and no play, as for the readers. The CSV header is the first record. JSON Lines
are read without quoting (a JSON string cannot hold a raw line feed): every non-blank line is one.

The count reads the file in chunks of `CHUNK` bytes into one buffer it reuses, with flat memory:
runs of lines without a quote and without a blank line are counted in bulk (`line_feeds`: numpy
over blocks of 256 KiB, which releases the GIL), other lines one by one (far slower, so only
where a quote or a blank line needs it). A chunk stays in the processor's cache while it is
searched: fresh large chunks would each be new memory for the kernel to map, and each search of
one would go back to main memory, which costs most beside DuckDB's reader; `bytes.count` with a
regex for blank lines is slower still (docs/benchmarks.md has the figures).
Records longer than `RECORD_LIMIT` are listed with their line and byte range:
`plays_input.without_oversized` copies the file with each of them blanked out, so that a reader
never meets a record past its limit, and `plays_input.has_long_line` is the quick look, before an
engine reads a file, for a line past the limit. So are CSV records whose count of fields (commas
outside quotes, plus one) differs from the header's (`misfits`): DuckDB's reader rejects a row with
too few fields or a value too many, but passes one whose extra fields are empty (`...,25.00,,,`) as
a clean play, and none of its options flags that one without losing the lines of the others. Lines
with a quote, or beside a blank line, are checked as they are walked. Plain lines in bulk are
checked only where one ends in a comma (`comma_ends`, a byte search), for only such a line can
hold empty fields too many; there `fields_match` checks each (numpy).
A plain line with too few fields, or a value too many, is left to the reader, which rejects it
with its line.
"""

from __future__ import annotations

import codecs
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

RECORD_LIMIT = 64 << 20  # bytes, line feed included; the reader takes records up to this size
CHUNK = 1 << 20  # bytes read at a time (module docstring)
_QUOTE = 0x22
# One field from its start, quotes balanced: a line of the header's count of them is one whole
# record with the right fields (`RecordScanner._exact`).
_FIELD = rb'(?:"(?:[^"]|"")*+"(?:[^,"][^,]*)?|[^,"][^,]*|)'
FEED_BLOCK = 1 << 18  # bytes `line_feeds` looks at in one step (numpy arrays stay in cache)
# Where a line's record may start or end in quotes: then it is walked quote by quote.
_FIELD_START, _UNQUOTED, _QUOTED, _QUOTE_PENDING = range(4)


Chunk = bytes | bytearray  # what the scanner is fed: it keeps no reference to it


class ReadsInto(Protocol):
    """A binary stream read into a buffer (a file opened "rb", io.BytesIO, standard input)."""

    def readinto(self, buffer: bytearray, /) -> int | None: ...


@dataclass(frozen=True, slots=True)
class Oversized:
    """A record longer than the limit: its first physical line, byte range and size."""

    line: int
    start: int
    end: int  # just past its line feed (or the end of the file)
    lines: int  # physical lines it spans

    @property
    def size(self) -> int:
        return self.end - self.start


@dataclass(frozen=True, slots=True)
class Misfit(Oversized):
    """A CSV record whose count of fields differs from the header's."""

    fields: int


@dataclass(frozen=True, slots=True)
class RecordCount:
    """The plays a file holds, as records: the CSV header and blank lines are not plays."""

    records: int
    oversized: tuple[Oversized, ...]
    lines: int  # physical lines (line feeds, plus a last line without one)
    nul: bool  # a NUL byte anywhere in the file
    not_utf8: bool = False  # bytes that are not UTF-8 somewhere in the file (CSV only)
    misfits: tuple[Misfit, ...] = ()  # CSV records with another count of fields than the header

    def set_aside(self) -> list[Oversized]:
        """The records no reader is given (past the limit, or misfits), in the file's order."""
        return sorted(self.oversized + self.misfits, key=lambda record: record.start)


def _numpy() -> Any:
    """numpy, imported with OpenBLAS's thread pool at one thread. numpy's import starts one
    OpenBLAS thread per core, with its buffers, for linear algebra the count never does (it
    only compares bytes), whose start-up CPU shows on a small audit. A
    value the user set is kept; once numpy is imported, this changes nothing."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    import numpy

    return numpy


def line_feeds(data: Chunk, begin: int, end: int, block: int = FEED_BLOCK) -> int | None:
    """How many line feeds `data[begin:end]` holds, or None when a blank line (`\\n\\n` or
    `\\n\\r\\n`) is in it: numpy over blocks of `block` bytes, each looking 2 bytes past its end.

    A range of one block is searched with bytes methods instead: cheap on so few bytes, and a
    small file then never pays numpy's import (a large part of a small audit).
    """
    if end <= begin:
        return 0
    returns = data.find(b"\r", begin, end) >= 0
    if end - begin <= block:
        if data.find(b"\n\n", begin, end) >= 0:
            return None
        if returns and data.find(b"\n\r\n", begin, end) >= 0:
            return None
        return data.count(b"\n", begin, end)
    np = _numpy()

    view = np.frombuffer(data, dtype=np.uint8, count=end - begin, offset=begin)
    feeds = 0
    for at in range(0, end - begin, block):
        part = view[at : at + block + 2]
        feed = part == 0x0A
        if np.any(feed[1:] & feed[:-1]):
            return None
        if returns and np.any(feed[:-2] & (part[1:-1] == 0x0D) & feed[2:]):
            return None
        feeds += int(np.count_nonzero(feed[:block]))
    return feeds


def comma_ends(data: Chunk, begin: int, end: int, block: int = FEED_BLOCK) -> bool:
    """Whether some line of `data[begin:end]` ends in a comma (before its `\n` or `\r`)."""
    returns = data.find(b"\r", begin, end) >= 0
    if end - begin <= block:
        return data.find(b",\n", begin, end) >= 0 or returns and data.find(b",\r", begin, end) >= 0
    np = _numpy()

    view = np.frombuffer(data, dtype=np.uint8, count=end - begin, offset=begin)
    for at in range(0, end - begin, block):
        part = view[at : at + block + 1]
        ending = part[1:] == 0x0A
        if returns:
            ending |= part[1:] == 0x0D
        if np.any(ending & (part[:-1] == 0x2C)):
            return True
    return False


def fields_match(data: Chunk, begin: int, end: int, commas: int) -> bool:
    """Whether each of the whole lines `data[begin:end]` (the last ends in a line feed, none
    holds a quote) holds exactly `commas` commas. A range of one block or less is searched with
    bytes methods (no numpy import for a small file, as in `line_feeds`)."""
    if end <= begin:
        return True
    if end - begin <= FEED_BLOCK:
        lines = bytes(data[begin : end - 1]).split(b"\n")
        return all(line.count(b",") == commas for line in lines)
    np = _numpy()

    view = np.frombuffer(data, dtype=np.uint8, count=end - begin, offset=begin)
    feeds, found = np.flatnonzero(view == 0x0A), np.flatnonzero(view == 0x2C)
    if len(found) != commas * len(feeds):
        return False
    if commas == 0:
        return True
    # Line i holds `commas` commas when its last comma comes before its line feed and the
    # next line's first comes after it; with the total right, that is every line's count.
    last, first = found[commas - 1 :: commas], found[commas::commas]
    return bool(np.all(last < feeds) and np.all(first > feeds[:-1]))


class RecordScanner:
    """Counts records fed to it chunk by chunk; `finish` gives the count."""

    def __init__(self, quoting: bool, header: bool, limit: int) -> None:
        self.quoting, self.header, self.limit = quoting, header, limit
        self.records = 0
        self.oversized: list[Oversized] = []
        self.misfits: list[Misfit] = []
        self.commas = 0  # outside quotes, in the current record (CSV)
        self.fields = 0  # the header's, once read (CSV)
        self._exact: re.Pattern[bytes] | None = None  # a whole line of `fields` fields
        # A `\r` not ending its line: some writers end a line there, and the reader is given a
        # copy where it does (`plays_input.PlaysInput.line_feeds_only`), so the reader counts
        # fields.
        self.lone_cr = False
        self.offset = 0  # of the next byte
        self.line = 1  # physical line of the next byte
        self.state = _FIELD_START
        self.start = 0  # the current record's first byte and line
        self.start_line = 1
        self.blank = True  # nothing but `\r` in the current record so far
        self.nul = False
        # A CSV value's bytes that are not UTF-8 are read as U+FFFD (`without_oversized`).
        self._utf8 = codecs.getincrementaldecoder("utf-8")() if quoting else None
        self.not_utf8 = False

    def _end_record(self, end: int) -> None:
        """The current record ends just before `end` (past its line feed, if any)."""
        if not self.blank:
            lines = self.line - self.start_line + 1
            if self.header:
                self.header = False
                self._header_fields(self.commas + 1)
            else:
                self.records += 1
            if end - self.start > self.limit:
                self.oversized.append(Oversized(self.start_line, self.start, end, lines))
            elif self.fields and self.commas + 1 != self.fields and not self.lone_cr:
                found = self.commas + 1
                self.misfits.append(Misfit(self.start_line, self.start, end, lines, found))
        self.start, self.start_line, self.blank = end, self.line + 1, True
        self.state, self.commas, self.lone_cr = _FIELD_START, 0, False

    def _header_fields(self, fields: int) -> None:
        if self.quoting:
            self.fields = fields
            self._exact = re.compile(_FIELD + (rb"," + _FIELD) * (fields - 1))

    def _walk(self, text: Chunk) -> None:
        """Carry the quoting state over `text` (part of one physical line, no line feed)."""
        if not self.quoting:
            return
        i, n, state = 0, len(text), self.state
        while i < n:
            if state == _QUOTE_PENDING:  # a quote ended the last piece, in quotes
                if text[i] == _QUOTE:
                    state, i = _QUOTED, i + 1
                    continue
                state = _UNQUOTED
            if state == _QUOTED:
                j = text.find(b'"', i)
                if j < 0:
                    break
                if j + 1 == n:
                    state, i = _QUOTE_PENDING, n
                elif text[j + 1] == _QUOTE:
                    i = j + 2
                else:
                    state, i = _UNQUOTED, j + 1
                continue
            if state == _FIELD_START and text[i] == _QUOTE:
                state, i = _QUOTED, i + 1
                continue
            j = text.find(b",", i)
            if j < 0:
                state = _UNQUOTED
                break
            state, i = _FIELD_START, j + 1
            self.commas += 1
        self.state = state

    def _piece(self, text: Chunk) -> None:
        """Bytes of the current physical line, without its line feed."""
        if self.blank and text.strip(b"\r"):
            self.blank = False
        if 0 <= text.find(b"\r") < len(text) - 1:
            self.lone_cr = True
        self._walk(text)
        self.offset += len(text)

    def _line_feed(self) -> None:
        self.offset += 1
        if self.state == _QUOTE_PENDING:
            self.state = _UNQUOTED
        if self.state == _QUOTED:
            self.blank = False
        else:
            self._end_record(self.offset)
        self.line += 1

    def _plain_lines(self, data: Chunk, begin: int, end: int, feeds: int) -> None:
        """Whole lines `data[begin:end]` (ending in a line feed, `feeds` of them), each one
        record: no quote, no blank line, and the first starts a record."""
        skip = 1 if self.header else 0
        if self.header:
            self.header = False
            first = data.find(b"\n", begin, end) + 1
            self._header_fields(data.count(b",", begin, first) + 1)
            self._fields(data, first, end, self.line + 1, self.offset - begin)
        else:
            self._fields(data, begin, end, self.line, self.offset - begin)
        self.records += feeds - skip
        # A record past the limit leaves a stretch of `limit` bytes with no line feed.
        last = begin - 1  # the line feed before this record
        while last + 1 + self.limit < end:
            found = data.rfind(b"\n", last + 1, last + 1 + self.limit)
            if found >= 0:
                last = found
                continue
            stop = data.find(b"\n", last + 1, end) + 1
            line = self.line + data.count(b"\n", begin, last + 1)
            base = self.offset - begin
            self.oversized.append(Oversized(line, base + last + 1, base + stop, 1))
            last = stop - 1
        self.offset += end - begin
        self.line += feeds
        self.start, self.start_line, self.blank = self.offset, self.line, True

    def _fields(self, data: Chunk, begin: int, end: int, line: int, base: int) -> None:
        """List the plain lines `data[begin:end]` (the first is physical line `line`; `base` is
        the file offset of `data[0]`) whose count of fields is not the header's; one past the
        limit is listed as oversized instead."""
        if not self.fields or not comma_ends(data, begin, end):
            return
        if fields_match(data, begin, end, self.fields - 1):
            return
        i = begin
        while i < end:
            j = data.find(b"\n", i, end)
            found = data.count(b",", i, j) + 1
            lone_cr = data.find(b"\r", i, j - 1) >= 0
            if found != self.fields and j + 1 - i <= self.limit and not lone_cr:
                self.misfits.append(Misfit(line, base + i, base + j + 1, 1, found))
            line, i = line + 1, j + 1

    def _lines(self, data: Chunk, begin: int, end: int) -> None:
        """Whole lines `data[begin:end]`, in bulk where they are plain."""
        plain = (
            self.state == _FIELD_START
            and self.blank
            and (not self.quoting or data.find(b'"', begin, end) < 0)
            and data[begin] != 0x0A
            and data[begin : begin + 2] != b"\r\n"
        )
        feeds = line_feeds(data, begin, end) if plain else None
        if feeds is not None:
            self._plain_lines(data, begin, end, feeds)
            return
        i = begin
        while i < end:
            j = data.find(b"\n", i, end)
            if (
                self.state == _FIELD_START
                and self.blank
                and self._exact is not None
                and self._exact.fullmatch(data, i, j)
            ):
                self.blank = j == i or data[i:j] == b"\r"
                self.commas = self.fields - 1
                self.offset += j - i
            else:
                self._piece(data[i:j])
            self._line_feed()
            i = j + 1

    def feed(self, data: Chunk) -> None:
        if not self.nul and data.find(b"\0") >= 0:
            self.nul = True
        # ASCII, with no character left open by the last chunk, is UTF-8: the check is a scan.
        if self._utf8 is not None and not (data.isascii() and not self._utf8.getstate()[0]):
            try:
                self._utf8.decode(data)
            except UnicodeDecodeError:
                self.not_utf8, self._utf8 = True, None
        first = data.find(b"\n")
        if first < 0:
            self._piece(data)
            return
        self._piece(data[:first])
        self._line_feed()
        last = data.rfind(b"\n")
        if last > first:
            self._lines(data, first + 1, last + 1)
        self._piece(data[last + 1 :])

    def finish(self) -> RecordCount:
        lines = self.line - 1
        if self.offset > self.start:  # a last line without a line feed
            lines += 1
            self._end_record(self.offset)
        if self._utf8 is not None:
            try:
                self._utf8.decode(b"", final=True)
            except UnicodeDecodeError:
                self.not_utf8 = True
        records = tuple(self.oversized)
        misfits = tuple(self.misfits)
        return RecordCount(self.records, records, lines, self.nul, self.not_utf8, misfits)


def count_stream(
    stream: ReadsInto, *, quoting: bool, header: bool, limit: int | None = None
) -> RecordCount:
    """Count the records of an open binary stream, from its current position to its end
    (`limit`: `RECORD_LIMIT` unless given)."""
    limit = RECORD_LIMIT if limit is None else limit
    scanner = RecordScanner(quoting, header, limit)
    size = CHUNK  # read once: a test may change it
    buffer = bytearray(size)  # the scanner keeps no reference to what it is fed
    while read := stream.readinto(buffer):
        scanner.feed(buffer if read == size else bytes(buffer[:read]))
    return scanner.finish()


def count_records(
    path: Path, *, quoting: bool, header: bool, limit: int | None = None
) -> RecordCount:
    """Count the records of a file: CSV (`quoting`, `header`) or JSON Lines (neither)."""
    with path.open("rb") as handle:
        return count_stream(handle, quoting=quoting, header=header, limit=limit)
