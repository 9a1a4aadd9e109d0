"""The diff, end to end: both sides read, authenticated and compared.

A large local OLD (FORK_MIN_BYTES and up) makes both sides go to children that parse and check
them at the same time (`_run_split`, split.py), while this process compares their shadow rows
as bytes (rowbytes.py). Otherwise (small sides, a URL OLD, no fork) NEW's bytes are read in a
thread while OLD is parsed (sides.SideReader), and each side's schema validation and
authentication run beside the rest (parallel.py): the old one's beside parsing the new one, the
new one's beside a keyed comparison (or after a cheap aligned one). Both outcomes are in before
anything is reported: a side that is not a snapshot is refused (exit 2), and so is one that is
not authentic unless the caller allowed it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from compliance_bake.diff.compare import compare
from compliance_bake.diff.model import (
    DEFAULT_FAIL_ON,
    Change,
    ChangeClass,
    DiffResult,
    SideInfo,
)
from compliance_bake.diff.parallel import (
    FORK_MIN_BYTES,
    Outcome,
    Pending,
    check_beside,
)
from compliance_bake.diff.rowbytes import SideRows, compare_rows
from compliance_bake.diff.sides import (
    Authenticity,
    Keys,
    Side,
    SideReader,
    SideSource,
    read_raw,
    read_side,
    refuse_unless,
)
from compliance_bake.diff.split import SideProcess, local_size
from compliance_bake.errors import BakeError, InputError
from compliance_bake.memory import gc_paused
from compliance_bake.signing.secret import Secret

Facts = tuple[str, int]  # a side's generatedAt and pair count, kept when its snapshot is freed


def _facts(snapshot: dict[str, Any]) -> Facts | None:
    try:
        return str(snapshot["generatedAt"]), len(snapshot["shadow"]["rows"])
    except (KeyError, TypeError):
        return None  # not a snapshot: its check refuses it


def side_info(side: Side, facts: Facts | None = None) -> SideInfo:
    generated_at, pairs = facts or (
        side.snapshot["generatedAt"],
        len(side.snapshot["shadow"]["rows"]),
    )
    return SideInfo(
        source=side.source,
        generated_at=generated_at,
        authentic=side.authenticity.authentic,
        checked=side.authenticity.checked,
        pairs=pairs,
    )


def _rows_line_up(old: dict[str, Any], new: dict[str, Any]) -> bool:
    """As many shadow rows on both sides: the comparison is then a C-level pass (pairs.py),
    cheaper run before NEW's checks fork than beside them, where every page of NEW it touches
    (reference counts) would be copied; a keyed comparison is worth running beside them."""
    try:
        return len(old["shadow"]["rows"]) == len(new["shadow"]["rows"])
    except (KeyError, TypeError):
        return False  # not a snapshot: its check says so


def _compare(old: dict[str, Any], new: dict[str, Any]) -> tuple[list[Change], Exception | None]:
    try:
        return compare(old, new), None
    except Exception as error:  # noqa: BLE001 - raised by run_diff, after the outcomes
        return [], error


def run_diff(
    old: str,
    new: str,
    *,
    secret: Secret | None = None,
    public_keys: Sequence[bytes] = (),
    allow_unauthenticated: bool = False,
    fail_on: tuple[ChangeClass, ...] = DEFAULT_FAIL_ON,
    fork_min_bytes: int = FORK_MIN_BYTES,
) -> DiffResult:
    keys = Keys(secret, tuple(public_keys))
    size = local_size(old) if hasattr(os, "fork") else None
    if size is not None and size >= fork_min_bytes:  # large: OLD read beside NEW (split.py)
        return _run_split(old, new, keys, allow_unauthenticated, fail_on)
    pending: list[Pending] = []
    found: list[Outcome] = []
    changes: list[Change] = []
    problem: Exception | None = None
    with gc_paused():
        reader = SideReader(new, "NEW")  # NEW's bytes read while OLD is parsed
        try:
            old_from, old_doc = read_side(old, "OLD")
            reader.close()  # no thread left running when the checks fork
            pending.append(check_beside(old_doc, old_from, keys, fork_min_bytes))
            new_from, new_doc = reader.side()
            early = _rows_line_up(old_doc, new_doc)
            if early:
                changes, problem = _compare(old_doc, new_doc)
            pending.append(check_beside(new_doc, new_from, keys, fork_min_bytes))
            if not early:  # while NEW's checks run; nothing is reported before their outcomes
                changes, problem = _compare(old_doc, new_doc)
            # OLD's checks ended while NEW was parsed: once they are reaped no process shares
            # OLD's pages, and it is freed while NEW's checks run instead of after them.
            found.append(pending[0]())
            old_facts = _facts(old_doc)
            del old_doc
        finally:
            reader.close()
            found += [outcome() for outcome in pending[len(found) :]]  # always reap them all
        authenticity: list[Authenticity] = []
        for outcome in found:
            if isinstance(outcome, InputError):
                raise outcome  # not a snapshot: said before anything else
            authenticity.append(outcome)
        if old_facts is None:  # pragma: no cover - the schema requires both fields
            raise InputError("OLD: not a snapshot", "pass a snapshot baked by compliance-bake")
        old_side = Side("OLD", old_from.source, {}, authenticity[0])
        new_side = Side("NEW", new_from.source, new_doc, authenticity[1])
        refuse_unless(old_side, allow_unauthenticated)
        refuse_unless(new_side, allow_unauthenticated)
        if problem is not None:
            raise problem
        return DiffResult(side_info(old_side, old_facts), side_info(new_side), changes, fail_on)


def _held(read: tuple[SideSource, bytes]) -> tuple[SideSource, list[bytes]]:
    """A side's bytes in a list of their own, their only reference (SideProcess)."""
    source, raw = read
    return source, [raw]


def _run_split(
    old: str,
    new: str,
    keys: Keys,
    allow_unauthenticated: bool,
    fail_on: tuple[ChangeClass, ...],
) -> DiffResult:
    """Each side parsed and checked in its own child, at the same time (split.py); the shadow
    rows compared here as bytes (rowbytes.py) while the children check the sides' schemas.
    Nothing is reported before both outcomes are in."""
    with gc_paused():
        old_from, held = _held(read_raw(old, "OLD"))
        processes = [SideProcess(old_from, held, keys)]  # forked before any thread runs
        new_error: BakeError | None = None
        sides: list[SideRows | None] = [None, None]
        pairs: list[Change] | None = None
        parsed: list[list[dict[str, Any]]] = [[], []]
        problem: Exception | None = None
        try:
            new_from, held = _held(read_raw(new, "NEW"))
            processes.append(SideProcess(new_from, held, keys))
            counts = [process.count() for process in processes]
            for process in processes:  # the runs match pairs by key: rows that do not line up
                process.ask(runs=counts[0] != counts[1])
            sides = [process.rows() for process in processes]
            if sides[0] is not None and sides[1] is not None:
                try:  # while the children check the sides' schemas
                    pairs, *parsed = compare_rows(sides[0], sides[1])
                except Exception as error:  # noqa: BLE001 - raised after the outcomes
                    problem = error
                sides[0].chunks.clear()  # no longer needed
                sides[1].chunks.clear()
        except BakeError as error:
            new_error = error
        finally:
            found = [process.finish() for process in processes]  # always reap the children
        if isinstance(found[0], BakeError):
            raise found[0]  # OLD's problem first, as in-process
        if new_error is not None:
            raise new_error
        if isinstance(found[1], BakeError):
            raise found[1]
        old_rows, new_rows = sides
        if old_rows is None or new_rows is None:  # pragma: no cover - a snapshot has rows
            raise InputError("not a snapshot", "pass a snapshot baked by compliance-bake")
        old_side = Side("OLD", old_from.source, {}, found[0])
        new_side = Side("NEW", new_from.source, {}, found[1])
        refuse_unless(old_side, allow_unauthenticated)
        refuse_unless(new_side, allow_unauthenticated)
        if problem is not None:
            raise problem
        old_doc, new_doc = old_rows.rest, new_rows.rest
        if pairs is None:
            old_doc["shadow"]["rows"], new_doc["shadow"]["rows"] = parsed
        changes = compare(old_doc, new_doc, pairs)
        return DiffResult(
            side_info(old_side, (str(old_doc["generatedAt"]), old_rows.count)),
            side_info(new_side, (str(new_doc["generatedAt"]), new_rows.count)),
            changes,
            fail_on,
        )
