"""Concurrent witnesses, each with its own state file in one folder, all succeed: the atomic
writer removes only its own temporary files. A writer that deleted every
`.compliance-bake-*.tmp` in the folder would delete other runs' in-flight files, and some of
the 24 runs would exit 2 ("cannot write the witness state")."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.log._log_helpers import bake, mint

RUNS = 24


def test_24_concurrent_witnesses_with_their_own_state_files_all_exit_0(tmp_path: Path) -> None:
    private, public = mint(tmp_path, "operator")
    log = tmp_path / "log"
    assert bake(tmp_path / "out", log, private, 1).exit_code == 0
    keys = [mint(tmp_path, f"witness{i}", "witness-key") for i in range(RUNS)]
    states = tmp_path / "states"
    states.mkdir()
    runs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "compliance_bake",
                "witness",
                str(log),
                "--log-key",
                str(public),
                "--witness-key",
                str(key),
                "--state",
                str(states / f"state{i}.json"),
                "--now",
                "2026-11-30T00:00:00Z",
            ],  # fmt: skip
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i, (key, _) in enumerate(keys)
    ]
    results = [(run.wait(timeout=600), run.stderr.read() if run.stderr else "") for run in runs]
    for run in runs:
        if run.stderr:
            run.stderr.close()
    failed = [(code, err) for code, err in results if code != 0]
    assert failed == [], failed
    assert sorted(p.name for p in states.iterdir()) == sorted(f"state{i}.json" for i in range(RUNS))
