"""The Bun services the target tests run (tests/targets/services/*.ts, by the `bun` binary from
npm, `make tools`): each a real server on a free loopback port, started over a licences.json
and stopped by the test. Not a test module.

The regulatory service (`bun_regulatory.ts`) with LIMITS decides the whole policy of the fixture
registry tests/targets/policy_registry on the clock NOW_SECONDS (tests.conftest.NOW).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import pytest

from compliance_bake.resources import demo_fixtures_dir

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
REGULATORY = HERE / "services" / "bun_regulatory.ts"
REGISTRY = HERE / "policy_registry"
NOW_SECONDS = "1795320360"  # tests.conftest.NOW

Process = subprocess.Popen[str]


def bun_binary() -> str:
    """The bun that `make tools` installs from npm (or $BUN, or one on PATH)."""
    local = ROOT / ".tools" / "node_modules" / "@oven" / "bun-linux-x64" / "bin" / "bun"
    for candidate in (os.environ.get("BUN"), str(local), shutil.which("bun")):
        if candidate and Path(candidate).is_file():
            return candidate
    pytest.fail("bun is not installed: run `make tools` (npm package @oven/bun-linux-x64)")


def start_bun(script: Path, **settings: str) -> tuple[Process, str]:
    """A Bun service on a free loopback port, over the demo licences unless `settings` give
    FIXTURES: the process and its URL (from its first line, `listening on URL`)."""
    env = {**os.environ, "FIXTURES": str(demo_fixtures_dir() / "licences.json"), **settings}
    process = subprocess.Popen(
        [bun_binary(), "run", str(script)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    if not line.startswith("listening on "):
        process.kill()
        _, err = process.communicate(timeout=10)
        pytest.fail(f"the Bun service {script.name} did not start: {line!r} {err[-500:]!r}")
    return process, line.split()[-1]


def stop_bun(process: Process) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    for stream in (process.stdout, process.stderr):
        if stream is not None:
            stream.close()


@contextmanager
def bun_running(script: Path, **settings: str) -> Iterator[str]:
    """`start_bun`'s service for the block: its URL, the process stopped after."""
    process, url = start_bun(script, **settings)
    try:
        yield url
    finally:
        stop_bun(process)


def regulatory_running(
    limits: Path = REGISTRY / "limits.json", broken: str = ""
) -> AbstractContextManager[str]:
    """The regulatory service deciding the whole policy of the fixture registry (its limit rows
    from `limits`), with the BROKEN switches `broken`: a context manager of its URL."""
    return bun_running(
        REGULATORY,
        FIXTURES=str(REGISTRY / "licences.json"),
        LIMITS=str(limits),
        GEO=str(REGISTRY / "geo.json"),
        NOW=NOW_SECONDS,
        BROKEN=broken,
    )
