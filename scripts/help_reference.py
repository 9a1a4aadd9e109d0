"""Write the `--help` reference at the end of docs/commands.md from the installed CLI itself.

Every command's help, the group's first, as `COLUMNS=100 compliance-bake [COMMAND] --help`
prints it (the real console entry, one process each), in the order the group registers them.
`make docs-help` rewrites the section; `--check` exits 1 when the page differs from the CLI,
which tests/cli/test_help_reference.py runs.

    python scripts/help_reference.py            # rewrite docs/commands.md's reference
    python scripts/help_reference.py --check    # exit 1 if it is stale
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import click

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "commands.md"
HEADING = "## Reference: `--help`"
INTRO = """What `compliance-bake [COMMAND] --help` prints at 100 columns, for every command. It is
written from the CLI itself by `make docs-help` (`scripts/help_reference.py`), and
`tests/cli/test_help_reference.py` fails when the two differ; the installed version's own
`--help` is the authority."""


def command_paths() -> list[tuple[str, ...]]:
    """The group, then every command under it that runs (not a group), in registration order."""
    from compliance_bake.cli.main import cli

    def walk(group: click.Group, prefix: tuple[str, ...]) -> list[tuple[str, ...]]:
        found: list[tuple[str, ...]] = []
        for name, command in group.commands.items():
            path = (*prefix, name)
            found += walk(command, path) if isinstance(command, click.Group) else [path]
        return found

    return [(), *walk(cli, ())]


def help_text(path: tuple[str, ...]) -> str:
    env = {**os.environ, "COLUMNS": "100", "NO_COLOR": "1"}
    shown = subprocess.run(
        [sys.executable, "-m", "compliance_bake", *path, "--help"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=60,
    )
    return shown.stdout


def reference() -> str:
    parts = [HEADING, "", INTRO, ""]
    for path in command_paths():
        name = " ".join(("compliance-bake", *path))
        parts += [f"### `{name} --help`", "", "```text", help_text(path).rstrip("\n"), "```", ""]
    return "\n".join(parts)


def rewritten(page: str) -> str:
    """The page with its reference section (to the end of the page) written anew."""
    head, found, _ = page.partition(HEADING)
    if not found:
        raise SystemExit(f"{PAGE}: no `{HEADING}` section to rewrite")
    return head + reference()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the page is stale")
    parser.add_argument("--page", type=Path, default=PAGE, help="the page [docs/commands.md]")
    args = parser.parse_args()
    page = args.page.read_text(encoding="utf-8")
    fresh = rewritten(page)
    if args.check:
        if fresh != page:
            print(f"{args.page}: the --help reference is stale; run `make docs-help`")
            return 1
        print(f"{args.page}: the --help reference matches the CLI")
        return 0
    args.page.write_text(fresh, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
