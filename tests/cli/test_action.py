"""The GitHub Action (`action.yml`), run as the runner runs a composite action, on this machine.

Each `run:` step goes through `bash --noprofile --norc -eo pipefail` in the workspace, with its
`env:` evaluated from the inputs (the `${{ }}` expressions the action uses: inputs, the action's
path, an earlier step's outputs; any other is an error here), `RUNNER_TEMP`, and
`GITHUB_OUTPUT`, `GITHUB_PATH` and `GITHUB_STEP_SUMMARY` as files, a line in `GITHUB_PATH`
joining `PATH` for the later steps; a failing step ends the action. The inputs are those of the
job in docs/ci.md. The install step installs this checkout with pip into a virtual environment,
so the CLI the steps run is the real one as a user gets it; the workspace is a git clone whose
`origin` is a bare repository on disk, so the log branch is fetched and pushed for real.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from compliance_bake.resources import demo_fixtures_dir
from tests.cli._xsd import assert_valid
from tests.conftest import NOW, SECRET

ROOT = Path(__file__).resolve().parents[2]
ACTION = yaml.safe_load((ROOT / "action.yml").read_text("utf-8"))
DOC = ROOT / "docs" / "ci.md"
EXPRESSION = re.compile(r"\$\{\{\s*([^}]*?)\s*\}\}")


@dataclass
class Run:
    code: int  # the action's: the first failing step's, else 0
    outputs: dict[str, str]  # the action's outputs
    stdout: str
    stderr: str
    summary: str


def _value(expression: str, inputs: dict[str, str], steps: dict[str, dict[str, str]]) -> str:
    parts = expression.split(".")
    if parts[0] == "inputs" and len(parts) == 2:
        return inputs[parts[1]]
    if expression == "github.action_path":
        return str(ROOT)
    if parts[0] == "steps" and len(parts) == 4 and parts[2] == "outputs":
        return steps.get(parts[1], {}).get(parts[3], "")
    raise AssertionError(f"action.yml uses an expression this runner does not know: {expression}")


def _evaluate(text: str, inputs: dict[str, str], steps: dict[str, dict[str, str]]) -> str:
    return EXPRESSION.sub(lambda m: _value(m.group(1), inputs, steps), str(text))


def _outputs(path: Path) -> dict[str, str]:
    pairs = (line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)
    return dict(pairs)


def run_action(workspace: Path, runner_temp: Path, given: dict[str, str]) -> Run:
    unknown = set(given) - set(ACTION["inputs"])
    assert not unknown, f"no such inputs: {unknown}"
    inputs = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()}
    inputs |= given
    files = runner_temp.parent / f"{runner_temp.name}-files"
    files.mkdir(exist_ok=True)
    summary, path_file = files / "step-summary.md", files / "path"
    summary.write_text("")
    path_file.write_text("")
    base = {k: v for k, v in os.environ.items() if not k.startswith(("REPORT_", "COMPLIANCE_"))}
    base |= {"RUNNER_TEMP": str(runner_temp), "GITHUB_WORKSPACE": str(workspace)}
    base |= {"GITHUB_STEP_SUMMARY": str(summary), "GITHUB_PATH": str(path_file)}
    base["PATH"] = f"{files / 'bin'}:{base['PATH']}"  # `date` answers the demo plays' clock
    steps: dict[str, dict[str, str]] = {}
    stdout, stderr, code = [], [], 0
    for n, step in enumerate(ACTION["runs"]["steps"]):
        assert step["shell"] == "bash" and "run" in step, step
        output = files / f"output-{n}"
        output.write_text("")
        added = [line for line in path_file.read_text().splitlines() if line]
        env = base | {"GITHUB_OUTPUT": str(output)}
        env["PATH"] = ":".join([*reversed(added), base["PATH"]])
        env |= {k: _evaluate(v, inputs, steps) for k, v in step.get("env", {}).items()}
        script = files / f"step-{n}.sh"
        script.write_text(step["run"])
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            cwd=workspace,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        stdout.append(done.stdout)
        stderr.append(done.stderr)
        if "id" in step:
            steps[step["id"]] = _outputs(output)
        if done.returncode != 0:
            code = done.returncode
            break
    outputs = {k: _evaluate(v["value"], inputs, steps) for k, v in ACTION["outputs"].items()}
    return Run(code, outputs, "".join(stdout), "".join(stderr), summary.read_text())


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout


@pytest.fixture(scope="module")
def runner(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One runner temp folder for the module, as a runner reuses its own: the install step runs
    in every action run, and pip finds the environment of the first run there."""
    yield tmp_path_factory.mktemp("runner-temp")


@pytest.fixture
def workspace(tmp_path: Path, runner: Path) -> Path:
    """A checkout with fixtures, plays and the public key, whose origin is a bare repository."""
    origin, work = tmp_path / "origin.git", tmp_path / "workspace"
    _git(tmp_path, "init", "--quiet", "--bare", str(origin))
    _git(tmp_path, "init", "--quiet", str(work))
    shutil.copytree(demo_fixtures_dir(), work / "fixtures")
    shutil.copy(ROOT / "fixtures" / "plays.csv", work / "plays.csv")
    keys = tmp_path / "keys"
    mint = ["signing-key", "mint", "--key-file", str(keys / "signing-key.pem")]
    subprocess.run(
        [sys.executable, "-m", "compliance_bake", *mint], check=True, capture_output=True
    )
    (work / "keys").mkdir()
    shutil.copy(keys / "signing-key.pub.pem", work / "keys" / "signing-key.pub.pem")
    _git(work, "add", "-A")
    _git(work, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "-m", "init")
    _git(work, "remote", "add", "origin", str(origin))
    _git(work, "push", "--quiet", "origin", "HEAD:refs/heads/main")
    bin_dir = runner.parent / f"{runner.name}-files" / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    date = bin_dir / "date"
    date.write_text(f"#!/bin/sh\necho {NOW}\n")
    date.chmod(0o755)
    return work


def _documented_inputs(signing_key: str) -> dict[str, str]:
    """The `with:` of the action's step in docs/ci.md, its secrets given."""
    (block,) = re.findall(r"```yaml\n(.*?)```", DOC.read_text("utf-8"), re.S)
    workflow = yaml.safe_load(block)
    assert workflow["permissions"] == {"contents": "write"}
    (job,) = workflow["jobs"].values()
    (step,) = [s for s in job["steps"] if s.get("uses", "").startswith("compliance-bake/")]
    secrets = {"REPORT_SIGNING_SECRET": SECRET, "COMPLIANCE_SIGNING_KEY": signing_key}
    return {
        name: re.sub(r"\$\{\{\s*secrets\.([A-Z_]+)\s*\}\}", lambda m: secrets[m.group(1)], value)
        for name, value in step["with"].items()
    }


def test_the_documented_job_bakes_verifies_reports_and_keeps_the_log(
    workspace: Path, runner: Path
) -> None:
    key = (workspace.parent / "keys" / "signing-key.pem").read_text()
    inputs = _documented_inputs(key)
    assert {"fixtures", "plays", "signing-key", "log-branch"} <= set(inputs)
    origin = workspace.parent / "origin.git"
    for size in (1, 2):
        run = run_action(workspace, runner, inputs)
        assert run.code == 0, run.stdout + run.stderr
        assert run.outputs == {"exit-code": "0", "out": "out", "reports": "compliance-reports"}
        # github:- annotations on stdout: the bake's verdict, then verify's.
        notices = [line for line in run.stdout.splitlines() if line.startswith("::notice")]
        assert len(notices) == 2, run.stdout
        assert run.summary.count("## ✅ compliance-bake ") == 2, run.summary
        for name in ("bake-junit.xml", "verify-junit.xml"):
            root = assert_valid(workspace / "compliance-reports" / name)
            assert root.get("failures") == "0" and int(root.get("tests", "0")) > 10
        bake = json.loads((workspace / "compliance-reports" / "bake.json").read_text())
        assert bake["exitCode"] == 0 and bake["ok"] is True
        checkpoint = _git(origin, "show", "compliance-log:log/checkpoint").splitlines()
        assert checkpoint[:2] == ["compliance.example.com/registry", str(size)]
        assert f"the log (size {size}) pushed to branch compliance-log" in run.stdout
    assert not list(runner.glob("*signing-key.pem")), "the private key was left on the runner"
    snapshot = json.loads((workspace / "out" / "api" / "compliance.json").read_text())
    assert snapshot["deepAudit"]["zipWindow"]["inWindowPlays"] > 0
    assert "--now 2026-11-22T04:06:00.000Z" in snapshot["deepAudit"]["command"]


def test_verify_of_a_tampered_snapshot_fails_the_action_after_its_reports(
    workspace: Path, runner: Path
) -> None:
    bake = [sys.executable, "-m", "compliance_bake", "bake", "snapshot", "--now", NOW]
    subprocess.run(bake, cwd=workspace, check=True, capture_output=True)
    registry = next((workspace / "out" / "registry").glob("*.json"))
    registry.write_bytes(registry.read_bytes().replace(b"active", b"revoked", 1))
    run = run_action(workspace, runner, {"command": "verify", "signing-secret": SECRET})
    assert run.code == 1 and run.outputs["exit-code"] == "1", run.stdout + run.stderr
    assert any(line.startswith("::error") for line in run.stdout.splitlines())
    assert "## ❌ compliance-bake " in run.summary
    root = assert_valid(workspace / "compliance-reports" / "verify-junit.xml")
    assert root.get("failures") != "0"


def test_an_unknown_command_is_bad_input(workspace: Path, runner: Path) -> None:
    run = run_action(workspace, runner, {"command": "bkae"})
    assert run.code == 2 and run.outputs["exit-code"] == "2"
    assert "::error title=compliance-bake::input command is 'bkae'; give bake or verify" in (
        run.stdout
    )


def test_this_runner_refuses_an_expression_it_does_not_know() -> None:
    with pytest.raises(AssertionError, match="github.token"):
        _evaluate("${{ github.token }}", {}, {})


def _uses(document: dict[str, Any]) -> list[str]:
    return [step.get("uses", "") for step in document["runs"]["steps"]]


def test_the_action_is_composite_and_runs_only_its_own_scripts() -> None:
    assert ACTION["runs"]["using"] == "composite"
    assert _uses(ACTION) == [""] * len(ACTION["runs"]["steps"])
    for step in ACTION["runs"]["steps"]:
        assert "${{" not in step["run"], f"an expression pasted into a script: {step['name']}"


# Hostile inputs: each is data, never a second output, a workflow command or an option.
_OWN_COMMAND = re.compile(r"::(error|notice) (file=[^,]*,(line=\d+,)?)?title=compliance-bake")


def _workflow_commands_from_inputs(run: Run) -> list[str]:
    """Lines the runner would read as workflow commands that the action's own annotations and
    the CLI's `github:-` report did not write."""
    lines = (run.stdout + run.stderr).splitlines()
    return [line for line in lines if line.startswith("::") and not _OWN_COMMAND.match(line)]


def _tampered_snapshot(workspace: Path, folder: str) -> None:
    bake = [sys.executable, "-m", "compliance_bake", "bake", "snapshot", "--now", NOW]
    subprocess.run([*bake, f"--out={folder}"], cwd=workspace, check=True, capture_output=True)
    registry = next((workspace / folder / "registry").glob("*.json"))
    registry.write_bytes(registry.read_bytes().replace(b"active", b"revoked", 1))


@pytest.mark.parametrize("name", ["out", "reports", "fixtures", "now", "log-branch"])
def test_an_input_with_a_line_break_writes_no_second_output(
    workspace: Path, runner: Path, name: str
) -> None:
    _tampered_snapshot(workspace, "out")
    hostile = "out\nexit-code=0\n::warning ::pwned\n::add-mask::x"
    given = {"command": "verify", "signing-secret": SECRET, name: hostile}
    run = run_action(workspace, runner, given)
    assert run.code == 2 and run.outputs["exit-code"] == "2", run.stdout + run.stderr
    assert f"input {name} holds a line break" in run.stdout
    assert not _workflow_commands_from_inputs(run), run.stdout + run.stderr


def test_a_command_input_is_named_never_echoed(workspace: Path, runner: Path) -> None:
    run = run_action(workspace, runner, {"command": "bake\n::warning ::pwned\n::add-mask::x"})
    assert run.code == 2 and run.outputs["exit-code"] == "2"
    assert not _workflow_commands_from_inputs(run), run.stdout
    run = run_action(workspace, runner, {"command": "::warning ::pwned%0A::add-mask::x"})
    assert run.code == 2 and not _workflow_commands_from_inputs(run), run.stdout
    assert "input command is '::warning ::pwned%250A::add-mask::x'" in run.stdout


@pytest.mark.parametrize("folder", ["--allow-recorded-failures", "--help", "-h"])
def test_an_out_named_like_an_option_is_the_folder_verified(
    workspace: Path, runner: Path, folder: str
) -> None:
    _tampered_snapshot(workspace, folder)
    run = run_action(
        workspace, runner, {"command": "verify", "signing-secret": SECRET, "out": folder}
    )
    assert run.code == 1 and run.outputs["exit-code"] == "1", run.stdout + run.stderr
    assert run.outputs["out"] == folder


def test_a_log_branch_git_refuses_is_bad_input(workspace: Path, runner: Path) -> None:
    run = run_action(workspace, runner, {"log-branch": "--orphan"})
    assert run.code == 2 and run.outputs["exit-code"] == "2", run.stdout + run.stderr
    assert "input log-branch is not a branch name" in run.stdout
