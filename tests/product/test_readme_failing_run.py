"""README's "A failing run" is what the CLI prints, and `make demo-fail` expects its exit 1.

The README block is the command, one elision line (`… (...)`), then the last lines of stdout at
80 columns, verbatim (stdout holds no timings; the phase lines go to stderr). When the output
changes on purpose, `REGENERATE_README=1 pytest tests/product/test_readme_failing_run.py`
rewrites those lines from the CLI's output, from the same first line on; review the diff.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import SECRET

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
HEADING = "### A failing run"
SCREEN_LINES = 24  # a terminal's last screen
FIX = ("MA node-corridor-03", "NJ node-offshore-04")  # the drifted set's two pairs


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("REPORT_SIGNING_SECRET_FILE",
                                                           "SOURCE_DATE_EPOCH")}  # fmt: skip
    env.update(COLUMNS="80", NO_COLOR="1", REPORT_SIGNING_SECRET=SECRET)
    return env


def _block() -> tuple[list[str], list[str], list[str]]:
    """(the README lines of the block, the command's argv, the output lines shown)."""
    text = README.read_text(encoding="utf-8")
    section = text.split(f"\n{HEADING}\n", 1)[1].split("\n### ", 1)[0]
    block = section.split("```console\n", 1)[1].split("\n```", 1)[0].splitlines()
    command = []
    while not command or command[-1].endswith("\\"):
        command.append(block[len(command)])
    assert command[0].startswith("$ "), command
    argv = shlex.split(" ".join(line.rstrip("\\") for line in command)[2:])
    elision, shown = block[len(command)], block[len(command) + 1 :]
    assert elision.startswith("… ("), elision
    return block, argv, shown


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    assert argv[0] == "compliance-bake", argv
    shutil.copytree(ROOT / "fixtures" / "drifted", cwd / "fixtures" / "drifted")
    return subprocess.run(
        [sys.executable, "-m", "compliance_bake", *argv[1:]],
        cwd=cwd, env=_env(), capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def _regenerate(block: list[str], shown: list[str], printed: list[str]) -> None:
    start = printed.index(shown[0])
    old = "\n".join(block)
    new = "\n".join(block[: len(block) - len(shown)] + printed[start:])
    README.write_text(README.read_text(encoding="utf-8").replace(old, new, 1), encoding="utf-8")


def test_readme_failing_run_is_what_the_cli_prints(tmp_path: Path) -> None:
    block, argv, shown = _block()
    assert "--service-fixtures" in argv and "--now" in argv
    run = _run(argv, tmp_path)
    assert run.returncode == 1, run.stderr
    printed = run.stdout.splitlines()
    if os.environ.get("REGENERATE_README") == "1":
        _regenerate(block, shown, printed)
        block, argv, shown = _block()
    assert shown and printed[-len(shown) :] == shown
    assert len(printed) > len(shown)  # the elision stands for lines the CLI printed
    assert printed[0] == "Self-check board 8/8"  # as the elision line says
    assert (tmp_path / "out-fail" / "api" / "compliance.json").is_file()


def test_the_last_screen_at_80_columns_names_what_to_fix(tmp_path: Path) -> None:
    _, argv, shown = _block()
    run = _run(argv, tmp_path)
    printed = run.stdout.splitlines()
    assert [line for line in printed if len(line) > 80] == []
    screen = " ".join(" ".join(printed[-SCREEN_LINES:]).split())
    summary = screen.split("short summary", 1)[1]
    for pair in FIX:
        assert pair in summary, (pair, summary)
    start = next(i for i, line in enumerate(printed) if line.startswith("FAIL: "))
    verdict = " ".join(" ".join(printed[start:]).split())
    assert verdict == (
        "FAIL: shadow, allowed without an active licence, blocked for a licence reason with an "
        "active licence, max wager not enforced, blocked within the policy"
    )
    readme = " ".join(" ".join(shown).split())
    assert all(pair in readme for pair in FIX)


def _make(cwd: Path, *targets: str) -> subprocess.CompletedProcess[str]:
    make = shutil.which("make")
    assert make is not None, "make is needed (Debian: apt-get install make)"
    script = Path(sys.executable).with_name("compliance-bake")
    assert script.is_file(), f"no console script beside {sys.executable}: pip install -e ."
    shutil.copy(ROOT / "Makefile", cwd / "Makefile")
    # BIN: this interpreter's environment; RUNTIME empty: nothing to install first.
    args = [make, "--no-print-directory", *targets, f"BIN={script.parent}", "RUNTIME="]
    return subprocess.run(args, cwd=cwd, env=_env(), capture_output=True, text=True, timeout=300)


def test_make_demo_fail_expects_exit_1(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "fixtures" / "drifted", tmp_path / "fixtures" / "drifted")
    run = _make(tmp_path, "demo-fail")
    assert run.returncode == 0, run.stderr
    assert "demo-fail: exit 1, as expected" in run.stdout
    assert "FAILED shadow NJ" in run.stdout
    assert "FAILED policy max wager not enforced" in run.stdout  # the drifted limit, by rule
    assert (tmp_path / "out-fail" / "api" / "compliance.json").is_file()


def test_make_demo_fail_fails_when_the_bake_passes_or_cannot_run(tmp_path: Path) -> None:
    drifted = tmp_path / "fixtures" / "drifted"
    drifted.mkdir(parents=True)
    shutil.copy(ROOT / "fixtures" / "licences.json", drifted / "licences.json")  # no drift
    passed = _make(tmp_path, "demo-fail")
    assert passed.returncode != 0
    assert "demo-fail: expected exit 1 (a check failed), got 0" in passed.stderr
    (drifted / "licences.json").unlink()  # bad input: exit 2
    refused = _make(tmp_path, "demo-fail")
    assert refused.returncode != 0
    assert "demo-fail: expected exit 1 (a check failed), got 2" in refused.stderr
