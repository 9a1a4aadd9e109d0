"""`compliance-bake docs [TOPIC]`: the manual, read where the package is installed.

The pages are docs/*.md, shipped in the wheel (hatch_build.py), so a user of `pip install` reads
the same manual as a reader of the repository; every help text and hint names a page as
`compliance-bake docs TOPIC`.
"""

from __future__ import annotations

from pathlib import Path

import click

from compliance_bake.cli.shared import DONE, exit_codes


def pages() -> dict[str, Path]:
    """Each topic (a page's file name without `.md`) and its file, in name order."""
    from compliance_bake.resources import manual_dir

    return {page.stem: page for page in sorted(manual_dir().glob("*.md"))}


def title(page: Path) -> str:
    """A page's first heading, without its `#`."""
    with page.open(encoding="utf-8") as text:
        for line in text:
            if line.startswith("# "):
                return line[2:].strip()
    return ""


@click.command(
    epilog=exit_codes(0, 2, 4, zero=DONE, two="bad usage: no such topic (the list names them)"),
    short_help="Print a page of the manual, or list them.",
)
@click.argument("topic", required=False)
def docs(topic: str | None) -> None:
    """Print a page of the manual (Markdown, as in the repository's docs/ folder); with no
    TOPIC, list the pages with their titles.

    \b
    Examples:
      compliance-bake docs
      compliance-bake docs target-profiles
      compliance-bake docs signing | less
    """
    from compliance_bake.errors import InputError
    from compliance_bake.report.escape import visible_lines

    found = pages()
    if topic is None:
        width = max(map(len, found), default=0)
        text = "".join(f"{name:<{width}}  {title(page)}\n" for name, page in found.items())
    else:
        name = topic.removesuffix(".md").removeprefix("docs/")
        if name not in found:
            raise InputError(
                f"docs: no page named {topic!r}",
                "run `compliance-bake docs` for the list of pages",
            )
        text = visible_lines(found[name].read_text(encoding="utf-8"))
    _page_out(text)


def _page_out(text: str) -> None:
    """The page on stdout; a reader that stops early (`| head`) ends the output, as for `cat`,
    not with an error."""
    import os
    import sys

    try:
        click.echo(text, nl=False)
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
