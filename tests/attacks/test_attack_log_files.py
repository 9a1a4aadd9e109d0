"""The log's files and out/log/ are read through the one opener (inputs/files): a FIFO, a
device or a link where the tool expects a file is refused in one line, never waited on, never
followed and never read without end.

A plain `open()` would hang `verify` on a FIFO `out/log/checkpoint`, run out of memory on
`out/log/inclusion.json` linked to /dev/zero (here: MemoryError under a 3 GiB address-space
limit, exit 4), and hang `bake --log` on a FIFO checkpoint in the log (here: killed by the
test's timeout). A hang is caught by a generous subprocess timeout, not a timed assertion.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from tests.log._log_helpers import ORIGIN, baked_once

GUARD_SECONDS = 120  # only ends a hang: a run that returns at all returns in a second or two
MEMORY = 3 << 30


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            [sys.executable, "-m", "compliance_bake", *args],
            capture_output=True, text=True, timeout=GUARD_SECONDS, env=dict(os.environ),
            preexec_fn=_limit_memory,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        pytest.fail(f"hung: compliance-bake {' '.join(args)}")


@pytest.fixture
def baked(tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    return baked_once(tmp_path)


def verify(out: Path, public: Path) -> subprocess.CompletedProcess[str]:
    return cli("verify", str(out), "--public-key", str(public))


def test_the_control_verifies(baked: tuple[Path, Path, Path, Path]) -> None:
    out, _, _, public = baked
    result = verify(out, public)
    assert result.returncode == 0, result.stdout + result.stderr


def test_verify_refuses_a_fifo_checkpoint_in_out(baked: tuple[Path, Path, Path, Path]) -> None:
    out, _, _, public = baked
    (out / "log" / "checkpoint").unlink()
    os.mkfifo(out / "log" / "checkpoint")
    result = verify(out, public)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "log/checkpoint" in result.stdout + result.stderr
    assert "FIFO" in result.stdout + result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("name", ["log/inclusion.json", "log/checkpoint"])
def test_verify_refuses_a_log_file_linked_to_dev_zero(
    baked: tuple[Path, Path, Path, Path], name: str
) -> None:
    out, _, _, public = baked
    (out / name).unlink()
    (out / name).symlink_to("/dev/zero")
    result = verify(out, public)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "symbolic link" in result.stdout + result.stderr
    assert "Traceback" not in result.stderr and "MemoryError" not in result.stderr


def test_verify_refuses_an_oversize_inclusion_proof(baked: tuple[Path, Path, Path, Path]) -> None:
    out, _, _, public = baked
    with open(out / "log" / "inclusion.json", "ab") as handle:
        handle.write(b" " * (2 << 20))
    result = verify(out, public)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "over the 1 MiB limit" in result.stdout + result.stderr


def test_verify_refuses_an_attestation_linked_out_of_out(
    baked: tuple[Path, Path, Path, Path], tmp_path: Path
) -> None:
    """The link's target holds the real attestation: verify still does not follow it."""
    out, _, _, public = baked
    attestation = out / "attestation" / "compliance.intoto.json"
    moved = tmp_path / "elsewhere.json"
    attestation.rename(moved)
    attestation.symlink_to(moved)
    result = verify(out, public)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr


def test_bake_log_refuses_a_fifo_checkpoint_in_the_log(
    baked: tuple[Path, Path, Path, Path],
) -> None:
    out, log, private, _ = baked
    before = {p.name: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    (log / "checkpoint").unlink()
    os.mkfifo(log / "checkpoint")
    result = cli(
        "bake", "snapshot", "--out", str(out), "--signing-key", str(private), "--log", str(log),
        "--log-origin", ORIGIN, "--now", "2026-11-02T04:06:00Z", "-q",
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "checkpoint" in lines[0] and "FIFO" in lines[0], lines
    assert {p.name: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


@pytest.mark.parametrize("planted", ["checkpoint", "tile/entries/000.p/1"])
def test_log_verify_refuses_a_log_file_linked_to_a_key(
    baked: tuple[Path, Path, Path, Path], planted: str
) -> None:
    _, log, private, public = baked
    real = log / planted
    copy = real.with_name("kept")
    real.rename(copy)
    real.symlink_to(copy)  # the right bytes, through a link: still refused
    result = cli("log", "verify", str(log), "--public-key", str(public))
    assert result.returncode == 2, result.stdout + result.stderr
    assert "symbolic link" in result.stderr and "Traceback" not in result.stderr
