"""A bake with `--log` publishes `out/` only after the append is durable, with the entry's
proof in the same swap, and an append that fails or is killed at any step leaves `out/` as it
was and the log verifying; a failed append leaves no entry file that no checkpoint names.

Publishing `out/` first and appending after would let an append that failed (exit 2) or was
killed leave `out/` holding the new signed snapshot without `out/log/`, which
`verify out --public-key` would call verified, and a stray entry bundle in the log.

The steps of an append into a log of one entry (`_COMPLIANCE_BAKE_CRASH_AT=log:N`, N from 1):
the entry bundle staged (1) and renamed (2), the level-0 tile (3, 4), the checkpoint (5, 6),
the end (7). `fail:log:N` makes the step fail as a failing disk would (EIO).
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.log._log_helpers import ORIGIN, bake, baked_once, log_verify, verify_out

CHECKPOINT_RENAMED = 6


def files_of(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def size_of(log: Path, public: Path) -> int:
    result = log_verify(log, public)
    assert result.exit_code == 0, result.output
    return int(json.loads(result.stdout)["size"])


@pytest.fixture
def baked(tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    return baked_once(tmp_path)


def bake_at(out: Path, log: Path, private: Path, point: str) -> int:
    env = {**os.environ, "_COMPLIANCE_BAKE_CRASH_AT": point}
    run = run_cli(
        "bake", "snapshot", "--out", str(out), "--signing-key", str(private), "--log", str(log),
        "--log-origin", ORIGIN, "--now", "2026-11-02T04:06:00Z", "-q", env=env,
    )  # fmt: skip
    assert run.returncode != 0 or point.endswith(":8"), run.stdout
    assert "Traceback" not in run.stderr, run.stderr
    return run.returncode


def recovers(out: Path, log: Path, private: Path, public: Path) -> None:
    """The next bake appends and publishes; the log and out/ verify together."""
    size = size_of(log, public)
    assert bake(out, log, private, 3).exit_code == 0
    assert size_of(log, public) == size + 1
    result = verify_out(out, public, "--log", str(log))
    assert result.exit_code == 0, result.output
    leftovers = [p for p in log.rglob("*") if p.name.startswith(".compliance-bake-")]
    assert leftovers == []


@pytest.mark.parametrize("step", range(1, 8))
def test_an_append_that_fails_at_each_step_publishes_nothing(
    baked: tuple[Path, Path, Path, Path], step: int
) -> None:
    out, log, private, public = baked
    before_out, before_log = files_of(out), files_of(log)
    assert bake_at(out, log, private, f"fail:log:{step}") == 2
    assert files_of(out) == before_out
    if step < CHECKPOINT_RENAMED:
        assert files_of(log) == before_log  # as it was: no stray entry bundle or tile
        assert size_of(log, public) == 1
    else:
        assert size_of(log, public) == 2  # the checkpoint was in place: the entry stays
    recovers(out, log, private, public)


@pytest.mark.parametrize("step", range(1, 8))
def test_an_append_killed_at_each_step_leaves_out_as_it_was(
    baked: tuple[Path, Path, Path, Path], step: int
) -> None:
    out, log, private, public = baked
    before_out = files_of(out)
    assert bake_at(out, log, private, f"log:{step}") == -signal.SIGKILL
    assert files_of(out) == before_out
    assert size_of(log, public) == (2 if step >= CHECKPOINT_RENAMED else 1)
    assert verify_out(out, public, "--log", str(log)).exit_code == 0
    recovers(out, log, private, public)


@pytest.mark.parametrize("point", ["fail:staged:3", "staged:3", "swap"])
def test_a_publish_stopped_before_the_swap_leaves_out_as_it_was(
    baked: tuple[Path, Path, Path, Path], point: str
) -> None:
    out, log, private, public = baked
    before_out, before_log = files_of(out), files_of(log)
    bake_at(out, log, private, point)
    assert files_of(out) == before_out
    if point == "swap":  # after the append: the log holds an entry out/ never published
        assert size_of(log, public) == 2
    else:
        assert files_of(log) == before_log
    recovers(out, log, private, public)


def test_a_log_that_refuses_a_tile_publishes_nothing_and_keeps_no_entry(
    baked: tuple[Path, Path, Path, Path],
) -> None:
    """A real failure, not an injected one: a folder where the new level-0 tile must go."""
    out, log, private, public = baked
    planted = log / "tile" / "0" / "000.p" / "2"
    planted.mkdir(parents=True)
    (planted / "x").write_text("in the way")
    before_out, before_log = files_of(out), files_of(log)
    env = dict(os.environ)
    run = run_cli(
        "bake", "snapshot", "--out", str(out), "--signing-key", str(private), "--log", str(log),
        "--now", "2026-11-02T04:06:00Z", "-q", env=env,
    )  # fmt: skip
    assert run.returncode == 2, run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 and "Traceback" not in run.stderr
    assert files_of(out) == before_out
    assert files_of(log) == before_log  # the entry bundle it wrote first is gone
    assert size_of(log, public) == 1
    result = verify_out(out, public, "--log", str(log))
    assert result.exit_code == 0, result.output
