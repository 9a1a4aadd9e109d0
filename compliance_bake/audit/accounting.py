"""Every record of a plays file accounted for: the rows an engine read, and the ones it could not.

Engine-neutral. An engine reports how many plays it read (rows, and lines its reader rejected);
the independent count (`records`) says how many records the file holds. Each record past the
reader's limit, which the engine never saw, is a `malformed-row` with its line and the size that
put it out of reach; so is each CSV record with another count of fields than the header's, with
its line and its text. Should the engine still come short of the count, each missing record is a
`malformed-row` too, without a line (the engine cannot say which it lost): no play hides. An
engine that finds more than the count (the count reads only line feeds as line ends, some readers
take a lone `\\r` too) keeps its own figure: the count is a floor.
"""

from __future__ import annotations

from pathlib import Path

from compliance_bake.audit.record_count import Oversized, RecordCount
from compliance_bake.audit.violations import ViolatingPlay, Violation

_SHOWN = 200  # bytes of an oversized record shown in the report
_RAW = 500  # bytes of a misfit record kept, as the report keeps of a row's text


def _head(path: Path, record: Oversized, size: int = _SHOWN) -> str:
    try:
        with path.open("rb") as handle:
            handle.seek(record.start)
            return handle.read(min(size, record.size)).decode("utf-8", "replace")
    except OSError:
        return ""


def _unread(line: int | None, raw: str) -> ViolatingPlay:
    return ViolatingPlay(Violation.MALFORMED_ROW, None, line, None, None, None, None, raw)


def unread_plays(path: Path, count: RecordCount, read: int, limit: int) -> list[ViolatingPlay]:
    """The plays the engine did not read, as `malformed-row` plays: `read` is what it accounted
    for (rows and rejected lines) in the file `path` whose records `count` holds; records past
    `limit` and misfits it never saw, with their line and text (a misfit's without its line end,
    as the reader shows a row), then each record still missing, without a line."""
    plays = [
        _unread(
            record.line,
            f"[a record of {record.size:,} bytes, over the reader's limit of {limit:,} bytes; "
            f"it starts:] {_head(path, record)}",
        )
        for record in count.oversized
    ]
    for misfit in count.misfits:
        raw = _head(path, misfit, _RAW)
        plays.append(_unread(misfit.line, raw.rstrip("\r\n") if misfit.size <= _RAW else raw))
    missing = count.records - read - len(plays)
    said = (
        f"[a record the reader did not return: the file holds {count.records:,} records, "
        f"the reader accounted for {read + len(plays):,}]"
    )
    return plays + [_unread(None, said)] * max(missing, 0)
