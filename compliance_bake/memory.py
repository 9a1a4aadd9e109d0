"""`gc_paused`: used where many long-lived objects are built in bulk (ZIP index, shadow matrix)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while building many long-lived objects.

    Every full collection walks all the objects built so far, and here finds nothing to free:
    loading 10,000 partners or building a 500,000-row matrix otherwise spends a large share of its
    time there. Reference counting still frees everything as usual. Nestable; restores the
    collector's previous state.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
