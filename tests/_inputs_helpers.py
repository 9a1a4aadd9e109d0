"""Helpers of test_fixture_inputs.py and test_secret_inputs.py: the real CLI, trees, refusals.

Not a test module. The CLI runs either in-process (click's CliRunner: cheap, for big case
matrices) or as the installed `compliance-bake` console script in a subprocess (each start loads
the ZIP database, about 1-2 s, so only for a few representative cases, in parallel).
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from click.testing import CliRunner

from compliance_bake.cli.main import cli
from compliance_bake.resources import demo_fixtures_dir
from tests._phase_lines import diagnostics

NOW = "2026-11-22T04:06:00Z"
GOOD_SECRET = "inputs-test-secret-0123456789abcdef0123456789abcdef"
CASES = Path(__file__).resolve().parent / "cases" / "fixtures"
DEMO = demo_fixtures_dir()
ERROR_PREFIX = "compliance-bake: error: "
SECRET_VARS = ("REPORT_SIGNING_SECRET", "REPORT_SIGNING_SECRET_FILE", "SOURCE_DATE_EPOCH")

assert len(GOOD_SECRET) >= 40


@dataclass(frozen=True)
class Run:
    """What one run of the CLI gave, in-process or not."""

    code: int
    stdout: str
    stderr: str

    @property
    def text(self) -> str:
        return self.stdout + self.stderr


def bake_args(fixtures: Path, out: Path, *extra: str) -> list[str]:
    where = ["--fixtures", str(fixtures), "--out", str(out)]
    return ["bake", "snapshot", *where, "--now", NOW, *extra]


def invoke(args: Sequence[str], env: Mapping[str, str | None] | None = None) -> Run:
    """The real CLI in-process. By default the good secret is set and no other source is; a None
    value in env unsets that variable for the run."""
    full: dict[str, str | None] = {
        "REPORT_SIGNING_SECRET": GOOD_SECRET,
        "REPORT_SIGNING_SECRET_FILE": None,
        "SOURCE_DATE_EPOCH": None,
        "NO_COLOR": "1",
    }
    full.update(env or {})
    result = CliRunner().invoke(cli, list(args), env=full)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"the CLI raised {result.exception!r} instead of exiting") from (
            result.exception
        )
    return Run(result.exit_code, result.stdout, result.stderr)


def cli_command() -> list[str]:
    """The installed console script beside this interpreter, else `python -m compliance_bake`."""
    script = Path(sys.executable).with_name("compliance-bake")
    return [str(script)] if script.exists() else [sys.executable, "-m", "compliance_bake"]


def process_env(**values: str | None) -> dict[str, str]:
    """This process's environment without any secret or clock source, then `values` (None
    unsets); the good secret unless values say otherwise."""
    env = {k: v for k, v in os.environ.items() if k not in SECRET_VARS}
    env["NO_COLOR"] = "1"
    env["REPORT_SIGNING_SECRET"] = GOOD_SECRET
    for key, value in values.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


@dataclass(frozen=True)
class Job:
    args: Sequence[str]
    env: Mapping[str, str]
    cwd: Path | None = None


def run_process(job: Job) -> Run:
    done = subprocess.run(
        [*cli_command(), *job.args],
        capture_output=True,
        text=True,
        env=dict(job.env),
        cwd=job.cwd,
        timeout=120,
        check=False,
    )
    return Run(done.returncode, done.stdout, done.stderr)


def run_processes(jobs: Sequence[Job]) -> list[Run]:
    """Independent subprocess runs, started together (each start costs a second or two)."""
    with ThreadPoolExecutor(max_workers=max(1, len(jobs))) as pool:
        return list(pool.map(run_process, jobs))


Entry = tuple[int, int, int, bytes | None]


def tree_state(root: Path) -> dict[str, Entry]:
    """Every entry under root, hidden ones included, and root itself:
    relative path -> (mode, inode, mtime in ns, bytes for a file / None for a folder).

    Folder mtimes catch a temporary file created and removed again; inodes and file mtimes catch
    a file replaced by an identical copy."""
    state: dict[str, Entry] = {}
    for path in [root, *sorted(root.rglob("*"))]:
        info = path.lstat()
        relative = path.relative_to(root).as_posix()
        data = path.read_bytes() if stat.S_ISREG(info.st_mode) else None
        state[relative] = (info.st_mode, info.st_ino, info.st_mtime_ns, data)
    return state


def stray_files(root: Path) -> list[str]:
    """Leftovers of a write: names ending in .tmp or starting with a dot, anywhere under root."""
    return sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.name.endswith(".tmp") or p.name.startswith(".")
    )


def bake_good(out: Path) -> dict[str, Entry]:
    """Bake the demo fixtures into out (in-process); return the tree as it is then."""
    run = invoke(bake_args(DEMO, out, "--json"))
    assert run.code == 0, run
    assert (out / "api" / "compliance.json").is_file()
    return tree_state(out)


def assert_one_line_refusal(run: Run) -> str:
    """Exit 2, exactly one line on stderr that says how to fix it, nothing on stdout, no
    traceback. Returns the line."""
    assert run.code == 2, run
    assert "Traceback" not in run.text, run
    assert run.stdout == "", run
    lines = diagnostics(run.stderr).splitlines()
    assert len(lines) == 1 and run.stderr.endswith("\n"), run
    line = lines[0]
    assert line.startswith(ERROR_PREFIX), line
    assert "(fix: " in line, line
    return line
