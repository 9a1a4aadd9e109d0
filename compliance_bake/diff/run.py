"""The diff, end to end: both sides read, authenticated and compared.

A large local OLD (FORK_MIN_BYTES and up) is parsed and checked in a child while NEW is parsed
here (`_run_split`, split.py): the two parses, the longest part of a large diff, overlap.
Otherwise (small sides, a URL OLD, no fork) NEW's bytes are read in a thread while OLD is
parsed (sides.SideReader). Each side's schema
validation and authentication run beside the rest (parallel.py): the old one's beside parsing
the new one, the new one's beside a keyed comparison (or after a cheap aligned one). Both
outcomes are in before anything is reported: a side that is not a snapshot is refused (exit
2), and so is one that is not authentic unless the caller allowed it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
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
    FAILED,
    FORK_MIN_BYTES,
    Outcome,
    Pending,
    check_beside,
    validity_beside,
)
from compliance_bake.diff.sides import (
    Authenticity,
    Keys,
    Side,
    SideReader,
    authenticate,
    read_raw,
    read_side,
    refuse_unless,
)
from compliance_bake.diff.split import OldReader, OldRows, compare_rows, local_size, new_chunks
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
        return _run_split(old, new, keys, allow_unauthenticated, fail_on, fork_min_bytes)
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


def _run_split(
    old: str,
    new: str,
    keys: Keys,
    allow_unauthenticated: bool,
    fail_on: tuple[ChangeClass, ...],
    fork_min_bytes: int,
) -> DiffResult:
    """OLD parsed and checked in a child while NEW is parsed, schema-checked (in another) and
    authenticated here; the shadow rows are compared as bytes (split.py, rowbytes.py) while
    OLD's child checks OLD's schema. Nothing is reported before both outcomes are in."""
    with gc_paused():
        old_from, old_raw = read_raw(old, "OLD")
        reader = OldReader(old_from, old_raw, keys)  # forked before any thread runs
        del old_raw  # the child has it; OLD's rows come back as bytes
        new_error: BakeError | None = None
        pending: list[Callable[[], Outcome | None]] = []
        keep: list[bytes] = []
        old_rows: OldRows | None = None
        pairs: list[Change] | None = None
        parsed: list[dict[str, Any]] | None = None
        problem: Exception | None = None
        try:
            new_from, new_doc = read_side(new, "NEW")
            pending.append(validity_beside(new_doc, new_from, fork_min_bytes))
            found = _authenticate(new_doc, keys, new_from.folder, keep)
            pending.append(lambda: found)
            old_rows = reader.rows()
            if old_rows is not None:  # compared while OLD's child checks OLD's schema
                try:
                    rows = new_doc["shadow"]["rows"]
                    pairs, parsed = compare_rows(old_rows, rows, new_chunks(rows, keep))
                except Exception as error:  # noqa: BLE001 - raised after the outcomes
                    problem = error
            keep.clear()  # NEW's bytes and OLD's are no longer needed
            if old_rows is not None:
                old_rows.chunks.clear()
        except BakeError as error:
            new_error = error
        finally:
            found_old = reader.finish()  # always reap the children
            outcomes = [outcome() for outcome in pending]
        if isinstance(found_old, BakeError):
            raise found_old  # OLD's problem first, as in-process
        if new_error is not None:
            raise new_error
        valid, new_authenticity = outcomes
        if isinstance(valid, InputError):
            raise valid
        if valid is not None or not isinstance(new_authenticity, Authenticity):
            new_authenticity = FAILED  # a check that could not run: fail closed
        if old_rows is None:  # pragma: no cover - a snapshot the schema accepts has rows
            raise InputError("OLD: not a snapshot", "pass a snapshot baked by compliance-bake")
        old_side = Side("OLD", old_from.source, {}, found_old)
        new_side = Side("NEW", new_from.source, new_doc, new_authenticity)
        refuse_unless(old_side, allow_unauthenticated)
        refuse_unless(new_side, allow_unauthenticated)
        if problem is not None:
            raise problem
        old_doc = old_rows.rest
        if parsed is not None:
            old_doc["shadow"]["rows"] = parsed
        changes = compare(old_doc, new_doc, pairs)
        facts = (str(old_doc["generatedAt"]), old_rows.count)
        return DiffResult(side_info(old_side, facts), side_info(new_side), changes, fail_on)


def _authenticate(
    snapshot: dict[str, Any], keys: Keys, folder: Path | None, keep: list[bytes]
) -> Authenticity:
    """NEW's authenticity here, beside its schema check (whose refusal comes first)."""
    try:
        return authenticate(snapshot, keys, folder, keep)
    except Exception:  # noqa: BLE001 - not a snapshot: fail closed
        keep.clear()
        return FAILED
