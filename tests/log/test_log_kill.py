"""A bake killed (SIGKILL) at each step of its append leaves a log whose last checkpoint
verifies, and the next bake appends cleanly.

The append's steps are numbered by `_COMPLIANCE_BAKE_CRASH_AT=log:N` (log/append.py): each
file staged, then renamed; the entry bundle and level-0 tile first, a level-1 tile when the
level-0 tile fills, the checkpoint last, then the removal of partial tiles a full one replaced.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

from compliance_bake.log import append
from compliance_bake.signing.signing_key import load_signing_key
from tests.conftest import run_cli
from tests.log._log_helpers import ORIGIN, bake, log_verify, mint

# (entries before the bake, steps of its append): a plain append writes two files and the
# checkpoint; the 256th entry fills the level-0 tile, so a level-1 tile is written too.
CASES = [(2, n) for n in range(1, 8)] + [(255, n) for n in range(1, 10)]


def size_of(log: Path, public: Path) -> int:
    result = log_verify(log, public)
    assert result.exit_code == 0, result.output
    return int(json.loads(result.stdout)["size"])


@pytest.mark.parametrize(("before", "step"), CASES)
def test_a_bake_killed_at_each_step_of_the_append(tmp_path: Path, before: int, step: int) -> None:
    private, public = mint(tmp_path, "operator")
    log = tmp_path / "log"
    key = load_signing_key(private, "test")
    for i in range(before):
        append.append_entry(log, ORIGIN, {"i": i}, key)
    env = {**os.environ, "_COMPLIANCE_BAKE_CRASH_AT": f"log:{step}"}
    killed = run_cli(
        "bake", "snapshot", "--out", str(tmp_path / "out"), "--signing-key", str(private),
        "--log", str(log), "--now", "2026-11-22T04:06:00Z", "-q", env=env,
    )  # fmt: skip
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    size = size_of(log, public)
    assert size in (before, before + 1)
    assert (size == before + 1) == (step >= (8 if before == 255 else 6))  # the checkpoint's rename
    again = bake(tmp_path / "out2", log, private, 23)
    assert again.exit_code == 0, again.output
    assert size_of(log, public) == size + 1
    leftovers = [p for p in log.rglob("*") if p.name.startswith(".compliance-bake-")]
    assert leftovers == [] or step % 2 == 1, leftovers
