"""docs/commands.md's `--help` reference is what the CLI prints: `scripts/help_reference.py
--check` runs every command's `--help` through the real console entry and compares, and fails on
a page one line off."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "help_reference.py"
PAGE = ROOT / "docs" / "commands.md"


def _check(page: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--check", "--page", str(page)],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_help_reference_in_commands_md_is_what_the_cli_prints() -> None:
    checked = _check(PAGE)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    text = PAGE.read_text("utf-8")
    assert "### `compliance-bake docs --help`" in text
    assert text.count("5  nothing audited: no play in the window") >= 3  # group, bake, audit


def test_a_stale_reference_is_found(tmp_path: Path) -> None:
    text = PAGE.read_text("utf-8")
    line = "  --allow-empty-window            With --deep-audit: exit 0 when no play falls"
    assert line in text
    stale = tmp_path / "commands.md"
    stale.write_text(text.replace(line, line.replace("exit 0", "exit 1"), 1), encoding="utf-8")
    checked = _check(stale)
    assert checked.returncode == 1 and "stale; run `make docs-help`" in checked.stdout
