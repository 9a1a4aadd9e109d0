"""Spark's progress while the audit runs: tasks done of the running stages, into a progress sink.

A local session is polled through its status tracker from a side thread; a Spark Connect
session reports progress to a handler (pyspark 4). The CLI's sink draws the bar on stderr, on a
terminal only.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from compliance_bake.progress import NoProgress, PercentBar, ProgressSink

POLL_SECONDS = 0.25


def _local_poll(spark: Any, bar: PercentBar, stop: threading.Event) -> None:
    tracker = spark.sparkContext.statusTracker()
    seen: dict[int, tuple[int, int]] = {}
    while not stop.wait(POLL_SECONDS):
        with contextlib.suppress(Exception):  # a stage may vanish between the two calls
            for stage_id in tracker.getActiveStageIds():
                info = tracker.getStageInfo(stage_id)
                if info is not None:
                    seen[stage_id] = (info.numCompletedTasks, info.numTasks)
        bar.show(sum(d for d, _ in seen.values()), sum(t for _, t in seen.values()))


@contextmanager
def stage_progress(spark: Any, progress: ProgressSink, remote: bool) -> Iterator[None]:
    """Report the tasks of the query run inside the block."""
    if isinstance(progress, NoProgress):
        yield
        return
    bar = PercentBar(progress)
    progress.begin("Auditing plays on Spark (tasks)", 100)
    stop = threading.Event()
    poller: threading.Thread | None = None
    handler = None
    try:
        if remote:

            def handler(stages: Any = (), **_: Any) -> None:
                done = sum(getattr(s, "num_completed_tasks", 0) for s in stages)
                bar.show(done, sum(getattr(s, "num_tasks", 0) for s in stages))

            with contextlib.suppress(AttributeError):
                spark.registerProgressHandler(handler)
        else:
            poller = threading.Thread(target=_local_poll, args=(spark, bar, stop), daemon=True)
            poller.start()
        yield
    finally:
        stop.set()
        if poller is not None:
            poller.join()
        if handler is not None:
            with contextlib.suppress(AttributeError, ValueError):
                spark.removeProgressHandler(handler)
        progress.end()
