"""Check a large side beside the rest of the diff, in forked child processes.

Validating and authenticating a 500,000-row snapshot (its schema, its canonical bytes and their
SHA3-256) costs about as much as parsing it, and the machine has more than one core. After a
side is parsed, two children forked from this process (which then share the parsed snapshot,
copy-on-write, without copying it) check it, one against the schema (`sides.validate_side`) and
one for authenticity (`sides.authenticate`), and write their outcomes into pipes, while this
process parses the other side and compares. The new side's checks start only once it is parsed
and end the run, so they use both cores. The children run with the cyclic collector paused (as
the parent is) and end with `os._exit`, so they free nothing and touch as few shared pages as
they can.

Fail closed: a child that dies, or writes anything but an outcome, yields "not authentic".
Small sides (and platforms without fork) are checked in-process: forking costs more than it
saves there, and the test suite's many small diffs never fork.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

from compliance_bake.diff.sides import (
    Authenticity,
    Keys,
    SideSource,
    authenticate,
    check_side,
    schema_refusal,
)
from compliance_bake.errors import InputError

FORK_MIN_BYTES = 16 * 1024 * 1024

# The outcome: the side's authenticity, or the InputError that refuses it (not a snapshot).
Outcome = Authenticity | InputError
Pending = Callable[[], Outcome]


def _outcome(snapshot: dict[str, Any], side: SideSource, keys: Keys) -> Outcome:
    try:
        return check_side(snapshot, side, keys)
    except InputError as error:
        return error


def _in_child(write_fd: int, job: Callable[[], Outcome | None]) -> None:
    code = 0
    try:
        found = job()
        message: list[object]
        if found is None:
            message = ["valid", None, None]
        elif isinstance(found, InputError):
            message = ["bad", found.message, found.hint]
        else:
            message = ["checked", found.authentic, found.checked]
        os.write(write_fd, json.dumps(message).encode("utf-8"))
    except BaseException:  # noqa: BLE001 - the parent reads no outcome and fails closed
        code = 1
    finally:
        os._exit(code)


_FAILED = Authenticity(False, "not checked: the checking process failed")


def _read_outcome(data: bytes, exit_code: int) -> Outcome | None:
    try:
        kind, first, second = json.loads(data) if data else (None, None, None)
    except ValueError:
        kind = first = second = None
    if exit_code == 0 and kind == "valid":
        return None
    if exit_code == 0 and kind == "bad" and isinstance(first, str) and isinstance(second, str):
        return InputError(first, second)
    if exit_code == 0 and kind == "checked" and type(first) is bool and isinstance(second, str):
        return Authenticity(first, second)
    return _FAILED


def _fork(job: Callable[[], Outcome | None]) -> Callable[[], Outcome | None]:
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child; its outcome is what the tests check
        os.close(read_fd)
        _in_child(write_fd, job)
    os.close(write_fd)

    def outcome() -> Outcome | None:
        with os.fdopen(read_fd, "rb") as pipe:
            data = pipe.read()
        _, status = os.waitpid(pid, 0)
        return _read_outcome(data, os.waitstatus_to_exitcode(status))

    return outcome


def check_beside(
    snapshot: dict[str, Any], side: SideSource, keys: Keys, min_bytes: int = FORK_MIN_BYTES
) -> Pending:
    """Start checking `snapshot`; the returned function waits for the outcome. Call it exactly
    once (it also reaps the children); it never raises. A large side gets two children, one
    for the schema and one for authenticity, so they run on two cores."""
    if not hasattr(os, "fork") or side.size < min_bytes:
        found = _outcome(snapshot, side, keys)
        return lambda: found
    validity = _fork(lambda: schema_refusal(snapshot, side))
    authenticity = _fork(lambda: authenticate(snapshot, keys, side.folder))

    def outcome() -> Outcome:
        valid, authentic = validity(), authenticity()  # both reaped, whatever they say
        if isinstance(valid, InputError):
            return valid  # not a snapshot: said first, as in-process
        if valid is not None or not isinstance(authentic, Authenticity):
            return _FAILED  # fail closed
        return authentic

    return outcome
