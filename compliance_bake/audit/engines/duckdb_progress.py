"""DuckDB's progress while the audit runs: how far it has read the plays file, into a progress sink.

DuckDB's own `query_progress()` stays at the share of finished pipelines for the audit's query
(25% until the end, on DuckDB 2.0), so the bar follows the bytes this process has read instead:
`rchar` in `/proc/self/io` (Linux), which counts every read, `pread` included, against the file's
size. Elsewhere, or when the count is not available, it falls back to DuckDB's figure. Reading
Parquet skips the columns the audit does not need, so there the bar may stop short of the end
before it completes. Spark's twin is spark_progress.py.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from compliance_bake.progress import NoProgress, PercentBar, ProgressSink

_IO = Path("/proc/self/io")
POLL_SECONDS = 0.2


def bytes_read() -> int | None:
    """Bytes this process has read so far (all threads), or None when unknown."""
    with contextlib.suppress(OSError, ValueError):
        for line in _IO.read_text().splitlines():
            if line.startswith("rchar:"):
                return int(line.split()[1])
    return None


@contextmanager
def read_progress(con: Any, path: Path, progress: ProgressSink) -> Iterator[None]:
    """Poll the reading of `path` into the sink from a side thread while DuckDB runs a query."""
    if isinstance(progress, NoProgress):
        yield
        return
    con.execute("SET enable_progress_bar = true")
    con.execute("SET enable_progress_bar_print = false")
    size = max(path.stat().st_size, 1)
    start = bytes_read()
    done = threading.Event()
    progress.begin("Auditing plays", 100)

    def percent() -> float:
        now = bytes_read()
        by_bytes = 0.0 if now is None or start is None else 100.0 * (now - start) / size
        return max(by_bytes, float(con.query_progress()))

    def poll() -> None:
        bar = PercentBar(progress)
        while not done.wait(POLL_SECONDS):
            bar.show(int(max(0.0, percent())), 100)

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    try:
        yield
    finally:
        done.set()
        poller.join()
        progress.end()
