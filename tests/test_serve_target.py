"""Done-when of issue 3: bake with --target against `compliance-bake serve` as a real process.

The same board rows, shadow rows and summary as the in-process bake of the same fixtures
(timestamps, `base` and `bunVersion` aside), and `verify` accepts the result. Skipped while this
build has no `serve` command (the service lands on its own branch).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from compliance_bake.cli.main import cli
from tests.conftest import NOW, invoke, run_cli
from tests.fault_server import free_port

pytestmark = pytest.mark.skipif("serve" not in cli.commands, reason="no `serve` command yet")

KEY_PATTERN = re.compile(r"\b[a-z0-9]{5}\.[A-Za-z0-9_-]{43}\b")


@pytest.fixture
def service(tmp_path: Path) -> Iterator[tuple[str, str]]:
    """(base URL, agent key) of a `compliance-bake serve` process on a free loopback port."""
    minted = run_cli("keys", "mint", cwd=tmp_path)
    assert minted.returncode == 0, minted.stderr
    found = KEY_PATTERN.search(minted.stdout + minted.stderr)
    assert found, "keys mint printed no key"
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "compliance_bake", "serve", "--host", "127.0.0.1"]
        + ["--port", str(port), "--out", str(tmp_path / "served")],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=dict(os.environ),
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(base + "/health", timeout=1) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"serve did not start: {process.stderr.read().decode()[-500:]}")  # type: ignore[union-attr]
                time.sleep(0.1)
        yield base, found.group(0)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        process.stderr.close()  # type: ignore[union-attr]


def test_a_bake_against_serve_matches_the_in_process_bake(
    service: tuple[str, str], tmp_path: Path
) -> None:
    base, key = service
    local_out, remote_out = tmp_path / "local", tmp_path / "remote"
    assert invoke("bake", "snapshot", "--out", str(local_out), "--now", NOW).exit_code == 0
    remote = invoke(
        "bake",
        "snapshot",
        "--target",
        base,
        "--out",
        str(remote_out),
        "--now",
        NOW,
        env={"COMPLIANCE_AGENT_KEY": key},
    )
    assert remote.exit_code == 0, remote.stderr
    assert key not in remote.output + remote.stderr
    local_report = json.loads((local_out / "api" / "compliance.json").read_text())
    remote_report = json.loads((remote_out / "api" / "compliance.json").read_text())
    assert remote_report["enhancements"]["rows"] == local_report["enhancements"]["rows"]
    for part in ("rows", "summary"):
        assert remote_report["shadow"][part] == local_report["shadow"][part]
    assert remote_report["shadow"]["base"] == base
    assert remote_report["shadow"]["proof"]["bunVersion"]
    assert invoke("verify", str(remote_out)).exit_code == 0
