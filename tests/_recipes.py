"""The shell recipes of docs/*.md, extracted and run exactly as printed: under `sh` (POSIX, no
`-e`), from the folder that holds `out/`, in an environment without the report signing secret
unless a test gives one. A recipe prints one `ok   CHECK` or `FAIL CHECK` line per check, then
one line saying what it checked, and exits non-zero when a check failed."""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1] / "docs"
# name: (the page, the marker before its ```sh block)
RECIPES = {
    "verify": ("signing.md", "<!-- recipe:verify -->"),
    "attestation": ("signing.md", "<!-- recipe:attestation -->"),
    "inclusion": ("transparency-log.md", "<!-- recipe: inclusion -->"),
}
SECRET_VARIABLES = ("REPORT_SIGNING_SECRET", "REPORT_SIGNING_SECRET_FILE", "PUB")


def recipe(name: str) -> str:
    page, marker = RECIPES[name]
    found = re.search(re.escape(marker) + r"\n```sh\n(.*?)```", (DOCS / page).read_text(), re.S)
    assert found is not None, f"docs/{page} lost its {marker} block"
    return found.group(1)


@dataclass(frozen=True)
class Run:
    code: int
    checks: dict[str, bool]  # in the order printed
    summary: str
    stderr: str

    @property
    def failing(self) -> set[str]:
        return {check for check, ok in self.checks.items() if not ok}


def run(name: str, cwd: Path, **env: str) -> Run:
    """The recipe `name` under `sh -c`, in `cwd`, with `env` added to an environment that holds
    none of SECRET_VARIABLES."""
    base = {k: v for k, v in os.environ.items() if k not in SECRET_VARIABLES}
    done = subprocess.run(
        ["sh", "-c", recipe(name)], cwd=cwd, env={**base, **env}, capture_output=True,
        text=True, timeout=120,
    )  # fmt: skip
    lines = done.stdout.splitlines()
    assert lines, done.stderr
    *checks, summary = lines
    assert all(line[:5] in ("ok   ", "FAIL ") for line in checks), lines
    assert summary.startswith("checked "), lines
    return Run(done.returncode, {line[5:]: line.startswith("ok") for line in checks}, summary,
               done.stderr)  # fmt: skip


def tree(folder: Path) -> dict[str, bytes]:
    """Every file under `folder`, by relative path: what a recipe must leave as it found it."""
    return {
        path.relative_to(folder).as_posix(): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and not path.is_symlink()
    }
