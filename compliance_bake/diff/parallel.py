"""Check a large side beside the rest of the diff, in a forked child process.

Validating and authenticating a 500,000-row snapshot (its schema, its canonical bytes and their
SHA3-256) costs about as much as parsing it, and the machine has more than one core. After a
side is parsed, a child forked from this process (which then shares the parsed snapshot,
copy-on-write, without copying it) runs `sides.check_side` on it and writes its outcome into a
pipe, while this process parses the other side and compares. The child runs with the cyclic
collector paused (as the parent is) and ends with `os._exit`, so it frees nothing and touches as
few shared pages as it can.

Fail closed: a child that dies, or writes anything but an outcome, yields "not authentic".
Small sides (and platforms without fork) are checked in-process: forking costs more than it
saves there, and the test suite's many small diffs never fork.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

from compliance_bake.diff.sides import Authenticity, Keys, SideSource, check_side
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


def _in_child(write_fd: int, snapshot: dict[str, Any], side: SideSource, keys: Keys) -> None:
    code = 0
    try:
        found = _outcome(snapshot, side, keys)
        message: list[object]
        if isinstance(found, InputError):
            message = ["bad", found.message, found.hint]
        else:
            message = ["checked", found.authentic, found.checked]
        os.write(write_fd, json.dumps(message).encode("utf-8"))
    except BaseException:  # noqa: BLE001 - the parent reads no outcome and fails closed
        code = 1
    finally:
        os._exit(code)


def _read_outcome(data: bytes, exit_code: int) -> Outcome:
    try:
        kind, first, second = json.loads(data) if data else (None, None, None)
    except ValueError:
        kind = first = second = None
    if exit_code == 0 and kind == "bad" and isinstance(first, str) and isinstance(second, str):
        return InputError(first, second)
    if exit_code == 0 and kind == "checked" and type(first) is bool and isinstance(second, str):
        return Authenticity(first, second)
    return Authenticity(False, "not checked: the checking process failed")


def check_beside(
    snapshot: dict[str, Any], side: SideSource, keys: Keys, min_bytes: int = FORK_MIN_BYTES
) -> Pending:
    """Start checking `snapshot`; the returned function waits for the outcome. Call it exactly
    once (it also reaps the child); it never raises."""
    if not hasattr(os, "fork") or side.size < min_bytes:
        found = _outcome(snapshot, side, keys)
        return lambda: found
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child; its outcome is what the tests check
        os.close(read_fd)
        _in_child(write_fd, snapshot, side, keys)
    os.close(write_fd)

    def outcome() -> Outcome:
        with os.fdopen(read_fd, "rb") as pipe:
            data = pipe.read()
        _, status = os.waitpid(pid, 0)
        return _read_outcome(data, os.waitstatus_to_exitcode(status))

    return outcome
