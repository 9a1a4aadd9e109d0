"""Authenticate a large side beside the rest of the diff, in a forked child process.

Authenticating a 500,000-row snapshot (its canonical bytes and their SHA3-256) costs about as
much as parsing it, and the machine has more than one core. After a side is parsed, a child
forked from this process (which then shares the parsed snapshot, copy-on-write, without copying
it) runs `sides.authenticate` on it and writes its verdict into a pipe, while this process parses
the other side and compares. The child runs with the cyclic collector paused (as the parent is)
and ends with `os._exit`, so it frees nothing and touches as few shared pages as it can.

Fail closed: a child that dies, or writes anything but a verdict, yields "not authentic".
Small sides (and platforms without fork) are authenticated in-process: forking costs more than
it saves there, and the test suite's many small diffs never fork.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

from compliance_bake.diff.sides import Authenticity, authenticate
from compliance_bake.signing.secret import Secret

FORK_MIN_ROWS = 50_000

Verdict = Callable[[], Authenticity]


def _in_child(write_fd: int, snapshot: dict[str, Any], secret: Secret | None) -> None:
    code = 0
    try:
        found = authenticate(snapshot, secret)
        os.write(write_fd, json.dumps([found.authentic, found.checked]).encode("utf-8"))
    except BaseException:  # noqa: BLE001 - the parent reads no verdict and fails closed
        code = 1
    finally:
        os._exit(code)


def authenticate_beside(
    snapshot: dict[str, Any], secret: Secret | None, min_rows: int = FORK_MIN_ROWS
) -> Verdict:
    """Start authenticating `snapshot`; the returned function waits for the verdict. Call it
    exactly once (it also reaps the child)."""
    if not hasattr(os, "fork") or secret is None or len(snapshot["shadow"]["rows"]) < min_rows:
        found = authenticate(snapshot, secret)
        return lambda: found
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child; its verdict is what the tests check
        os.close(read_fd)
        _in_child(write_fd, snapshot, secret)
    os.close(write_fd)

    def verdict() -> Authenticity:
        with os.fdopen(read_fd, "rb") as pipe:
            data = pipe.read()
        _, status = os.waitpid(pid, 0)
        try:
            authentic, checked = json.loads(data) if data else (None, None)
        except ValueError:
            authentic, checked = None, None
        if os.waitstatus_to_exitcode(status) != 0 or type(authentic) is not bool:
            return Authenticity(False, "not checked: the authenticating process failed")
        return Authenticity(authentic, str(checked))

    return verdict
