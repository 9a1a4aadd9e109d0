"""The test cluster's reaper: a run killed before `stop` leaves a running PostgreSQL server,
and the next `start_cluster` stops it and removes its folder (tests/_pg_helpers.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests._pg_helpers import _alive, pg_bin, reap_orphans, why_no_postgres

pytestmark = pytest.mark.database
ROOT = Path(__file__).resolve().parent.parent
STARTS = (  # starts a cluster, names its folder, and waits to be killed
    "from tests._pg_helpers import start_cluster as s; print(s('pw').folder, flush=True); input()"
)


def test_a_killed_runs_cluster_is_stopped_and_removed_by_the_reaper() -> None:
    reason = why_no_postgres()
    if reason is not None:
        pytest.skip(reason)
    with subprocess.Popen(
        [sys.executable, "-c", STARTS], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        text=True,
    ) as run:  # fmt: skip
        assert run.stdout is not None
        folder = Path(run.stdout.readline().strip())
        postmaster = int((folder / "data" / "postmaster.pid").read_text().split()[0])
        run.send_signal(signal.SIGKILL)
        run.wait(timeout=60)
    assert _alive(postmaster), "the server outlives the run that started it"
    binary = pg_bin()
    assert binary is not None
    assert folder in reap_orphans(binary)
    assert not folder.exists()
    assert not _alive(postmaster) or _zombie(postmaster)


def test_a_live_runs_cluster_is_left_alone(tmp_path: Path) -> None:
    """An owner that is still running (this process) keeps its folder."""
    folder = Path(tempfile.gettempdir()) / f"compliance-bake-pg-live-{os.getpid()}"
    folder.mkdir()
    try:
        (folder / "owner").write_text(f"{os.getpid()}\n")
        binary = pg_bin() or tmp_path
        assert folder not in reap_orphans(binary)
        assert folder.exists()
    finally:
        (folder / "owner").unlink()
        folder.rmdir()


def _zombie(pid: int) -> bool:
    """A stopped server not yet reaped by its parent (init) still answers kill(pid, 0)."""
    status = Path(f"/proc/{pid}/status")
    return status.exists() and "\nState:\tZ" in status.read_text()
