"""docs/ci.md's GitHub Actions job, run as written: its `compliance-bake` steps through bash, with
the demo fixtures and plays in the working folder, `$GITHUB_STEP_SUMMARY` set, and the job's
`date` answering the demo plays' clock. Its reports are read as their consumers read them."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from compliance_bake.resources import demo_fixtures_dir
from tests.cli._xsd import assert_valid
from tests.conftest import NOW

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "ci.md"


def _job_steps() -> list[dict[str, Any]]:
    (block,) = re.findall(r"```yaml\n(.*?)```", DOC.read_text(), re.S)
    workflow = yaml.safe_load(block)
    (job,) = workflow["jobs"].values()
    steps: list[dict[str, Any]] = job["steps"]
    return steps


def _run(script: str, summary: Path) -> subprocess.CompletedProcess[str]:
    """One `run:` block under bash -e, as the runner runs it; `compliance-bake` is this
    checkout's, and `date` gives the demo clock (the demo plays are of November 2026)."""
    prelude = (
        f'compliance-bake() {{ {shlex.quote(sys.executable)} -m compliance_bake "$@"; }}\n'
        f"date() {{ echo {NOW}; }}\n"
    )
    env = {**os.environ, "GITHUB_STEP_SUMMARY": str(summary)}
    return subprocess.run(
        ["bash", "-e", "-c", prelude + script],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def test_the_documented_job_runs_and_reports() -> None:
    shutil.copytree(demo_fixtures_dir(), "fixtures")
    shutil.copy(ROOT / "fixtures" / "plays.csv", "plays.csv")
    steps = [s for s in _job_steps() if "compliance-bake" in s.get("run", "")]
    assert [s["name"] for s in steps] == ["Bake and audit", "Verify what was baked"]
    assert all("REPORT_SIGNING_SECRET" in s["env"] for s in steps)
    for n, step in enumerate(steps):
        summary = Path(f"summary-{n}.md")
        result = _run(step["run"], summary)
        assert result.returncode == 0, result.stdout + result.stderr
        # github:- holds stdout: workflow commands only, the tables on stderr.
        commands = result.stdout.splitlines()
        assert commands and all(line.startswith("::") for line in commands), commands
        assert commands[-1].startswith("::notice title=compliance-bake ")
        assert summary.read_text().startswith("## ✅ compliance-bake ")
    snapshot = json.loads(Path("out/api/compliance.json").read_text())
    assert "--now 2026-11-22T04:06:00.000Z" in snapshot["deepAudit"]["command"]  # the job's clock
    assert snapshot["deepAudit"]["zipWindow"]["inWindowPlays"] > 0
    for name in ("bake-junit.xml", "verify-junit.xml"):
        root = assert_valid(Path("reports") / name)
        assert root.get("failures") == "0" and int(root.get("tests", "0")) > 10
