"""The eight checks of spec 2.2 have one name wherever a person reads about them: "self-checks"
(the specification's own word: "the self-checks (enhancements)"). The terminal, the portal, the
reports, every `--help`, README and the shipped manual say it, never "board", "features" or
"enhancements" in prose.

What may stay is what a machine reads or what the specification fixes: the field and file names
(`enhancements`, `compliance-enhancements.json`, `$.enhancements.rows`, a row's `feature`), the
ids (`board-count`, the portal's `#board`), and the labels the snapshot records as spec 9.2 words
them (`Enhancements 8/8`, `Board integrity sha3-256`), which a page quotes as recorded. A word
joined to a dot, a slash, a dash, an underscore or a letter is such a name; Markdown code (a
backtick span) and HTML tags and attributes are names too.
"""

from __future__ import annotations

import html
import re
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest

from compliance_bake.cli.main import cli
from tests.conftest import NOW, invoke

ROOT = Path(__file__).resolve().parents[2]
# The other names, as words of prose.
OTHER = re.compile(r"(?<![\w./$#\"-])(board|boards|enhancements?|features?)(?![\w./\"-])", re.I)
# The labels spec 9.2 fixes, quoted where the snapshot's record is shown.
SPEC_LABELS = re.compile(r"Enhancements \d+/\d+|Board integrity sha3-256")
# The integrity check's id (spec 9.2) where the terminal names checks by id: its table
# (`│ ✓ │ enhancements │`), the short summary (`FAILED integrity enhancements`), the verdict.
CHECK_ID_CELL = re.compile(
    r"│ [✓✗] │ enhancements +│|(?<=integrity )enhancements|(?<=FAIL: )enhancements"
)
DEVELOPER_PAGES = {"development.md", "benchmarks.md", "design.md", "report-models.md"}


def _others(text: str) -> list[str]:
    """Each use of another name, with the words around it."""
    text = CHECK_ID_CELL.sub("", SPEC_LABELS.sub("", text))
    return [text[max(0, m.start() - 40) : m.end() + 40] for m in OTHER.finditer(text)]


def _markdown_prose(text: str) -> str:
    """A Markdown page without its code spans and link targets (names, not prose)."""
    text = re.sub(r"`[^`\n]*`", "", text)
    return re.sub(r"\]\([^)]*\)", "]", text)


def _page_text(page: str) -> str:
    """The portal as read: its text without tags, attributes and code elements."""
    page = page.split("<body", 1)[1]
    page = re.sub(r"<code[^>]*>.*?</code>", "", page, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


def _leaves(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found: list[tuple[str, ...]] = [prefix]
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            found += _leaves(command, (*prefix, name))
        else:
            found.append((*prefix, name))
    return found


@pytest.mark.parametrize("path", _leaves(cli), ids=lambda p: " ".join(p) or "main")
def test_help_calls_them_self_checks(path: tuple[str, ...]) -> None:
    text = invoke(*path, "--help", env={"COLUMNS": "200"}).output
    assert _others(_markdown_prose(text)) == [], path


@pytest.mark.parametrize(
    "page",
    [ROOT / "README.md"]
    + [p for p in sorted((ROOT / "docs").glob("*.md")) if p.name not in DEVELOPER_PAGES],
    ids=lambda p: p.name,
)
def test_readme_and_the_manual_call_them_self_checks(page: Path) -> None:
    assert _others(_markdown_prose(page.read_text("utf-8"))) == [], page.name


def _run(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "compliance_bake", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**__import__("os").environ, "COLUMNS": "100"},
    )
    return done.stdout + done.stderr


def test_the_terminal_the_reports_and_the_portal_call_them_self_checks(tmp_path: Path) -> None:
    """A passing bake with the audit, the drifted bake, their verify and diff, every report
    format, and both portal pages with every disclosure's text."""
    plays = ROOT / "fixtures" / "plays.csv"
    drifted = ROOT / "fixtures" / "drifted"
    reports = tmp_path / "reports"
    reports.mkdir()
    said = []
    for name, extra in (
        ("pass", ["--deep-audit", str(plays)]),
        ("fail", ["--service-fixtures", str(drifted)]),
    ):
        formats = [
            f"--report={kind}:{reports / f'{name}.{kind}'}"
            for kind in ("junit", "github", "markdown")
        ]
        said.append(
            _run("bake", "snapshot", "--now", NOW, "--out", str(tmp_path / name), *extra, *formats)
        )
        said.append(
            _run("verify", str(tmp_path / name), f"--report=markdown:{reports / f'v-{name}.md'}")
        )
        page = (tmp_path / name / "portal" / "compliance" / "index.html").read_text("utf-8")
        said.append(_page_text(page))
    said.append(_run("diff", str(tmp_path / "pass"), str(tmp_path / "fail")))
    said.append(_run("diff", str(tmp_path / "pass"), str(tmp_path / "fail"), "--markdown"))
    # A report's names (a JUnit case's, an XML attribute) are ids: the text is what is read.
    said += [re.sub(r"<[^>]+>", " ", r.read_text("utf-8")) for r in sorted(reports.iterdir())]
    assert "PASS" in said[0] and "FAIL" in said[3], said[:4]
    found = [use for text in said for use in _others(text)]
    assert found == [], found
    shutil.rmtree(reports)
