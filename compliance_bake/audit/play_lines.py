"""The file line of the first violating plays of each reason: where the operator opens the file.

Engine-neutral, and run after the engine: DuckDB and Spark number only the rows their reader
rejects, never a row they read, so a violating play comes back without a line. `with_lines`
finds them afterwards, in one walk of the plays file from its start: each record's play id is
looked up among the violating plays that still lack a line, and a record takes a play's line only
when it reads as that play did (the same play id, partner, state, ZIP and `enriched_at`, and
malformed or not alike; a malformed JSON line by its text), so of two rows with one play id the
violating one is named. Identical violating rows take their lines in file order.

The walk stops once each reason has its first `FIRST_LOCATED` plays located (the most any output
lists with their place: the JSON summary's 20 items of a case), so on a file where 1 play in 100
violates it reads a few hundred kilobytes, and it never reads more than `budget` bytes (a 128th of
the file, at least 1 MiB): past that, the plays not found keep no line, which says nothing wrong.
A record the walk cannot follow (a quoted record the csv module refuses, such as one with a
field past its limit) ends it the same way, for the records after it could not be numbered
surely. What it costs beside the audit: docs/play-lines.md.

Lines are physical lines, as an editor numbers them: a line ends at a line feed (`\\r\\n` is one
line end), a record that spans several lines (a quoted field holding line feeds) is named by its
first, the header is line 1, blank lines count, a byte order mark is not a line. Only a local
regular file in CSV or JSON Lines has lines: Parquet has none, and standard input's spooled copy
belongs to the engine, removed when it closes, before this runs.

The result lists the plays in the report's order: within each reason, the plays with a line
first, in file order, then the others in the engine's order (`ViolatingPlay.sort_key`). Lines are
a pure function of the file and the violations, so the report stays byte-identical on a rerun.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from itertools import chain, groupby
from operator import attrgetter
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from compliance_bake.audit.columns import ColumnMap
from compliance_bake.audit.plays_source import COLUMNS
from compliance_bake.audit.violations import ViolatingPlay, Violation
from compliance_bake.inputs.jsonio import StrictJSONError, loads_unambiguous

FIRST_LOCATED = 20  # plays of each reason given their line (module docstring)
BUDGET_SHARE = 128  # the walk reads at most this fraction of the file ...
MIN_BUDGET = 1 << 20  # ... or this many bytes, whichever is more
_CHECK_EVERY = 1024  # records between two looks at the bytes read
_KEY = ("play_id", "partner", "state", "zip", "enriched_at")


def _json_id(key: str) -> re.Pattern[str]:
    """The play id of a JSON line under `key`, found without parsing the line (a candidate only:
    a line whose id is wanted is parsed in full before it is matched)."""
    name = re.escape(json.dumps(key, ensure_ascii=False))
    return re.compile(name + r'\s*:\s*("(?:[^"\\]|\\.)*"|[^\s,}]+)')


Key = tuple[str, ...]


def _key(values: Sequence[str | None]) -> Key:
    """Field values as the engines read them: an empty field and a missing value alike."""
    return tuple("" if v is None else v for v in values)


def _id(play: ViolatingPlay) -> str:
    return play.play_id or ""


class _Wanted:
    """The violating plays still without a line, found by play id (a malformed JSON line by its
    text), and how many of the first plays of each reason the walk still has to find.

    The plays come in the engine's order: by reason, then play id. Nothing is built per play
    in Python (a dict of lists cost more than the walk): the ids go
    into a set in C, and a record whose id is in it finds its plays by bisection in each
    reason's run. Were the plays in another order, a play would be missed, never misplaced:
    each match is checked field by field."""

    def __init__(self, plays: Sequence[ViolatingPlay], first: int) -> None:
        self.plays = plays
        self.lines: dict[int, int] = {}
        self.ids: set[str | None] = set(map(attrgetter("play_id"), plays))
        if None in self.ids:  # a play without an id: a record whose id field is empty
            self.ids.add("")
        self.by_raw: dict[str, list[int]] = {}
        self.runs: list[tuple[int, int]] = []
        self.need: dict[Violation, int] = {}
        start = 0
        for reason, run in groupby(map(attrgetter("reason"), plays)):  # == is identity, in C
            end = start + len(list(run))
            self.runs.append((start, end))
            lines = list(map(attrgetter("line"), plays[start:end]))
            self.need[reason] = min(self.need.get(reason, 0) + lines.count(None), first)
            if reason is Violation.MALFORMED_ROW:
                for index in range(start, end):
                    play = plays[index]
                    if play.line is None and play.raw is not None:
                        self.by_raw.setdefault(play.raw, []).append(index)
            start = end
        self.left = sum(self.need.values())

    def indices(self, play_id: str) -> list[int]:
        """The plays of this id without a line, in the engine's order."""
        found = []
        for start, end in self.runs:
            index = bisect_left(self.plays, play_id, start, end, key=_id)
            while index < end and _id(self.plays[index]) == play_id:
                if self.plays[index].line is None and index not in self.lines:
                    found.append(index)
                index += 1
        return found

    def take(self, indices: list[int], line: int, key: Key | None, malformed: bool) -> None:
        """Give `line` to the first play of `indices` without one that reads as the record did
        (`key` None: matched by its text already)."""
        for index in indices:
            play = self.plays[index]
            if (
                index in self.lines
                or key is not None
                and (
                    (play.reason is Violation.MALFORMED_ROW) != malformed
                    or _key((play.play_id, play.partner, play.state, play.zip, play.enriched_at))
                    != key
                )
            ):
                continue
            self.lines[index] = line
            if self.need[play.reason] > 0:
                self.need[play.reason] -= 1
                self.left -= 1
            return


def _kept(lines: Iterable[str], kept: list[str]) -> Iterator[str]:
    for line in lines:
        kept.append(line)
        yield line


def _without_end(line: str) -> str:
    """A record's text as a reader shows it: without its line end."""
    line = line[:-1] if line.endswith("\n") else line
    return line[:-1] if line.endswith("\r") else line


def _strictly_read(record: str) -> bool:
    """Whether the record is one the engines read: the csv module alone also takes text after
    a closing quote (`"node"x` as `nodex`), which DuckDB rejects."""
    try:
        next(csv.reader([record], strict=True))
    except csv.Error:
        return False
    return True


def _walk_csv(
    text: TextIO, handle: BinaryIO, wanted: _Wanted, budget: int, columns: ColumnMap
) -> None:
    """Each record with its first physical line, the file read line by line (split at line
    feeds only: a lone `\\r` ends no line). A line without a quote is a whole record, split at
    its commas, and only as far as its play id unless that id is wanted; a line with a quote
    starts a record the csv module reads, taking as many lines as its quoted fields hold. A
    malformed row that an engine kept as text (Spark) is matched by the record's text."""
    names = [n.strip() for n in next(csv.reader([text.readline()]), [])]
    if any(c not in names for c in columns.required(COLUMNS)):
        return
    width = len(names)
    key_at = [names.index(columns.source(c)) for c in _KEY]
    all_at = [names.index(c) for c in columns.present(COLUMNS)]
    id_at = key_at[0]
    last = id_at == width - 1
    number = 1
    for line in text:
        number += 1
        start = number
        if number % _CHECK_EVERY == 0 and handle.tell() > budget:
            return
        if '"' in line:
            lines = [line]
            try:
                row = next(csv.reader(chain([line], _kept(text, lines))))
            except csv.Error:
                return  # the records after it could not be numbered surely
            number += len(lines) - 1
            record = "".join(lines)
            if not _strictly_read(record):
                row = []  # text after a closing quote: the engine rejects it, numbering it
        else:
            parts = line.split(",", id_at + 1)
            if len(parts) <= id_at:
                continue  # a blank line, or too few fields: no play the engine read
            play_id = _without_end(parts[id_at]) if last else parts[id_at]
            if play_id not in wanted.ids and not wanted.by_raw:
                continue
            record = line
            row = _without_end(line).split(",")
        if wanted.by_raw and (raw := _without_end(record)) in wanted.by_raw:
            wanted.take(wanted.by_raw[raw], start, None, True)
        elif len(row) == width and row[id_at] in wanted.ids:
            indices = wanted.indices(row[id_at])
            values = [row[i] for i in all_at]
            malformed = all(v == "" for v in values) or any("\x00" in v for v in values)
            wanted.take(indices, start, _key([row[i] for i in key_at]), malformed)
        if wanted.left == 0:
            return


def _as_text(value: Any) -> str | None:
    """A JSON value as the engines read it: a string as it is, null as empty, else its text."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _json_play(text: str, needed: Sequence[str]) -> dict[str, Any] | None:
    """The line's object when the engines read it as a play (an object with the `needed` keys,
    each once, no NaN, nested as deep as a document of ours may be), else None: a malformed
    row, or one the walk gives no line."""
    try:
        found = loads_unambiguous(text, constants=False)
    except StrictJSONError:
        return None
    if not isinstance(found, dict) or any(c not in found for c in needed):
        return None
    return found


def _walk_jsonl(
    text: TextIO, handle: BinaryIO, wanted: _Wanted, budget: int, columns: ColumnMap
) -> None:
    """Each line matched by its play id (under the map's key), then field by field."""
    play_id = _json_id(columns.source("play_id"))
    needed = columns.required(COLUMNS)
    keys = [columns.source(c) for c in _KEY]
    for line, raw_line in enumerate(text, start=1):
        if line % _CHECK_EVERY == 0 and handle.tell() > budget:
            return
        body = _without_end(raw_line)
        if wanted.by_raw and body in wanted.by_raw:
            wanted.take(wanted.by_raw[body], line, None, True)
        elif (found := play_id.search(body)) is not None:
            _match_json(body, found.group(1), line, wanted, needed, keys)
        if wanted.left == 0:
            return


def _match_json(
    body: str, id_text: str, line: int, wanted: _Wanted, needed: list[str], keys: list[str]
) -> None:
    try:
        play_id = _as_text(json.loads(id_text))
    except ValueError:
        return
    if (play_id or "") in wanted.ids:
        indices = wanted.indices(play_id or "")
        play = _json_play(body, needed)
        if play is not None:
            wanted.take(indices, line, _key([_as_text(play[k]) for k in keys]), False)


def in_report_order(plays: Sequence[ViolatingPlay]) -> list[ViolatingPlay]:
    """`plays` in the engine's order (by reason first), with the plays of each reason that have
    a line moved first, in file order; the others keep their order."""
    ordered: list[ViolatingPlay] = []
    for _, group in groupby(plays, key=attrgetter("reason")):  # Enum's == is identity, in C
        run = list(group)
        ordered += sorted((p for p in run if p.line is not None), key=attrgetter("line"))
        ordered += [p for p in run if p.line is None]
    return ordered


def with_lines(
    plays_path: Path | str,
    plays_format: str,
    plays: Sequence[ViolatingPlay],
    first: int = FIRST_LOCATED,
    budget: int | None = None,
    columns: ColumnMap | None = None,
) -> list[ViolatingPlay]:
    """`plays` (the audit's violating plays of the file `plays_path`, in the engine's order),
    with the file line of the first `first` of each reason that lacked one, in the report's
    order. `budget`: the bytes the walk may read (unless given, a 128th of the file, at least
    1 MiB). `columns`: the file's `--plays-columns` map, whose source columns the walk reads. A
    file that is not a local regular file of CSV or JSON Lines, or that cannot be read, gives
    the plays their order and no new line."""
    walk = {"csv": _walk_csv, "jsonl": _walk_jsonl}.get(plays_format)
    path = str(plays_path)
    located = list(plays)
    if walk is None or path == "-":
        return in_report_order(located)  # no file to walk: nothing to index
    wanted = _Wanted(plays, first)
    if wanted.left:
        try:
            if os.path.isfile(path):
                with (
                    open(path, "rb") as handle,
                    io.TextIOWrapper(
                        handle, encoding="utf-8-sig", errors="replace", newline="\n"
                    ) as text,
                ):
                    size = os.fstat(handle.fileno()).st_size
                    limit = budget if budget is not None else max(MIN_BUDGET, size // BUDGET_SHARE)
                    walk(text, handle, wanted, limit, columns or ColumnMap())
        except OSError:
            pass  # the lines found so far stand: each one was read from the file
    for index, line in wanted.lines.items():
        located[index] = replace(plays[index], line=line)
    return in_report_order(located)
