"""`gc_paused`: used where many long-lived objects are built in bulk (the fixtures, the strict
parse of a snapshot)."""

from __future__ import annotations

import atexit
import gc
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache


@contextmanager
def gc_paused(keep: bool = False) -> Iterator[None]:
    """Pause the cyclic garbage collector while building many long-lived objects.

    Every full collection walks all the objects built so far, and here finds nothing to free:
    loading 10,000 partners or building a 500,000-row matrix otherwise spends a large share of its
    time there. Reference counting still frees everything as usual. Nestable; restores the
    collector's previous state.

    With `keep`, for what is built to live as long as the process (the fixtures, the ZIP index,
    the shadow matrix), everything alive on exit is frozen (`gc.freeze`): the collector never
    walks it again (without it, the first collection after the pause walks every object built,
    and later ones again, a cost that grows with the rows). Frozen objects are still freed by
    reference counting; a reference cycle already garbage at that moment is freed only when
    the process exits (the objects are unfrozen then, so that the final collection sees them:
    extension types such as DuckDB's report what is never collected).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if keep:
            _unfreeze_at_exit()
            gc.freeze()
        if was_enabled:
            gc.enable()


@cache
def _unfreeze_at_exit() -> None:
    atexit.register(gc.unfreeze)
