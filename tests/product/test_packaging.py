"""A non-editable install works from any folder: schemas and demo fixtures ship in the wheel. And
README stays a front page: short, no tracker numbers or timing diary, its links to docs/ whole;
the code, tests and benchmarks name no tracker number, no file the repository lacks, no diary."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

from tests.support.wheel import build_wheel

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
README_MAX_LINES = 400
# "issue 14", "issue-12", "issues #3": tracker numbers a reader of the repository cannot follow.
ISSUE_NUMBER = re.compile(r"\bissues?[ -]#?[0-9]", re.IGNORECASE)
# "20:50 UTC", "16:20-16:45 UTC": a diary of when something was measured, not what it is.
DIARY_STAMP = re.compile(
    r"\b[0-9]{1,2}:[0-9]{2}(?::[0-9]{2})?(?:\s*-\s*[0-9]{1,2}:[0-9]{2})?\s*UTC"
)
# Files a reader of the repository does not have: the design and style notes live outside it.
ABSENT_FILE = re.compile(r"\b(?:DESIGN|STYLE)\.md\b")
# The audit's code and tests are being rewritten elsewhere; they join the sweep when they land.
NOT_YET_SWEPT: tuple[str, ...] = ()
DOCS = "compliance_bake/_data/docs/"
# The pages for developers of compliance-bake, which stay in the repository (hatch_build.py).
DEVELOPER_PAGES = {"development.md", "benchmarks.md", "design.md", "report-models.md"}
# Where a Markdown link or image points: `[text](target)`.
LOCAL_TARGET = re.compile(r"\]\(([^)\s]+)\)")


def test_wheel_ships_schemas_and_fixtures_and_bakes_from_elsewhere(tmp_path: Path) -> None:
    wheel = build_wheel(tmp_path / "wheels")
    names = set(zipfile.ZipFile(wheel).namelist())
    for schema in (ROOT / "schemas").glob("*.json"):
        assert f"compliance_bake/_data/schemas/{schema.name}" in names
    fixtures = ROOT / "fixtures"  # licences.json, geo.json, plays.csv, drifted/licences.json
    for fixture in (f for f in fixtures.rglob("*") if f.is_file()):
        assert f"compliance_bake/_data/fixtures/{fixture.relative_to(fixtures)}" in names
    assert "compliance_bake/templates/portal.html.j2" in names
    manual = {p.name for p in (ROOT / "docs").glob("*.md")} - DEVELOPER_PAGES
    shipped = {n.removeprefix(DOCS) for n in names if n.startswith(DOCS)}
    assert shipped == manual  # the manual for users, for `compliance-bake docs`
    for name in sorted(shipped):
        text = zipfile.ZipFile(wheel).read(DOCS + name).decode("utf-8")
        assert not re.findall(r"!\[", text), name  # no picture: none ships, a terminal shows none
        beside = [t for t in LOCAL_TARGET.findall(text) if not t.startswith(("http", "#"))]
        assert {t.split("#")[0] for t in beside} <= shipped, (name, beside)
    assert not [name for name in names if name.endswith(".png")]  # pages only, no screenshots
    assert "compliance_bake-0.1.0.dist-info/licenses/LICENSE" in names
    assert "compliance_bake/audit/engines/spark-log4j2.properties" in names

    target = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "-q",
            "--target",
            str(target),
            str(wheel),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {**os.environ, "PYTHONPATH": str(target)}
    where = subprocess.run(
        [sys.executable, "-c", "import compliance_bake; print(compliance_bake.__file__)"],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert where.stdout.startswith(str(target))
    baked = subprocess.run(
        [sys.executable, "-m", "compliance_bake", "bake", "snapshot", "--json"],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert baked.returncode == 0, baked.stderr
    assert (elsewhere / "out" / "api" / "compliance.json").is_file()

    def docs(*topic: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "compliance_bake", "docs", *topic],
            cwd=elsewhere,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )

    listed = docs()
    assert listed.returncode == 0, listed.stderr
    assert "target-profiles    Target profiles: baking against your own service" in listed.stdout
    page = docs("target-profiles")
    assert page.returncode == 0, page.stderr
    # The page as written, its link to the benchmarks (a developer page) pointed at the repository.
    written = (ROOT / "docs" / "target-profiles.md").read_text("utf-8")
    repository = "https://github.com/compliance-bake/compliance-bake/tree/main/docs/"
    assert page.stdout == written.replace("(benchmarks.md)", f"({repository}benchmarks.md)")
    portal = docs("portal")
    assert portal.returncode == 0 and "(picture)](https://github.com/" in portal.stdout
    for developers in sorted(DEVELOPER_PAGES):  # make targets, tests/, scripts/: the repository's
        assert docs(developers.removesuffix(".md")).returncode == 2, developers
    missing = docs("no-such-page")
    assert missing.returncode == 2 and missing.stdout == ""
    assert "run `compliance-bake docs` for the list of pages" in missing.stderr


def test_the_sdist_holds_the_licence_the_changelog_and_what_builds_the_wheel(
    tmp_path: Path,
) -> None:
    subprocess.run(
        [sys.executable, "-m", "hatchling", "build", "-t", "sdist", "-d", str(tmp_path)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=300,
    )
    (sdist,) = tmp_path.glob("compliance_bake-*.tar.gz")
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    assert {"LICENSE", "CHANGELOG.md", "hatch_build.py", "requirements-dev.lock"} <= names
    assert {"action.yml", "docs/commands.md", "pyproject.toml"} <= names


def test_hints_and_help_name_manual_pages_as_the_docs_command() -> None:
    """A pip user has no docs/ folder: a string the package shows (help, an error's hint, the
    portal, a drafted profile) names a page as `compliance-bake docs TOPIC`, and each TOPIC it
    names is a page. Module docstrings and comments are for readers of the source and may cite
    docs/ paths; the snapshot's `vaultMap` link is a field of the spec, not a hint."""
    import ast

    package = ROOT / "compliance_bake"
    topics = {page.stem for page in (ROOT / "docs").glob("*.md")}
    path_of_page = re.compile(r"docs/[a-z-]+\.md")
    named = re.compile(r"(?:`|<code>)compliance-bake docs\s+([a-z-]+)(?:`|</code>)")
    shown: list[tuple[str, str]] = []
    for source in sorted(package.rglob("*.py")):
        tree = ast.parse(source.read_text("utf-8"))
        module_doc = ast.get_docstring(tree, clean=False)
        shown += [
            (str(source.relative_to(ROOT)), node.value)
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and node.value != module_doc
        ]
    shown += [
        (str(other.relative_to(ROOT)), other.read_text("utf-8"))
        for other in (*package.rglob("*.j2"), *package.rglob("*.toml"))
    ]
    cited = [
        (where, found)
        for where, text in shown
        for found in path_of_page.findall(text)
        if not (where.endswith("report/snapshot.py") and found == "docs/vault-map.md")
    ]
    assert not cited, cited
    names = {topic for _, text in shown for topic in named.findall(text)}
    assert {"target-profiles", "service-api", "limits", "fixtures", "signing"} <= names
    assert names <= topics, names - topics


def prose_pages() -> list[Path]:
    return [README, *sorted((ROOT / "docs").glob("*.md"))]


def test_readme_is_a_front_page_under_400_lines() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) < README_MAX_LINES, f"README has {len(lines)} lines; the manual is docs/"


def test_readme_and_docs_hold_no_issue_numbers_and_no_timing_diary() -> None:
    found = []
    for page in prose_pages():
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            if ISSUE_NUMBER.search(line) or DIARY_STAMP.search(line):
                found.append(f"{page.relative_to(ROOT)}:{number}: {line.strip()}")
    assert found == []


def source_files() -> list[Path]:
    """The package (code and templates), the tests and the benchmarks, audit parts aside."""
    files = [ROOT / "pyproject.toml", ROOT / "Makefile"]
    for folder in ("compliance_bake", "tests", "bench"):
        for path in sorted((ROOT / folder).rglob("*")):
            name = path.relative_to(ROOT).as_posix()
            if path.suffix in {".py", ".j2", ".sh", ".toml"} and not name.startswith(NOT_YET_SWEPT):
                files.append(path)
    return [path for path in files if path != Path(__file__).resolve()]


def test_code_tests_and_benchmarks_hold_no_issue_numbers_absent_files_or_diary() -> None:
    found = []
    for path in source_files():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if ISSUE_NUMBER.search(line) or DIARY_STAMP.search(line) or ABSENT_FILE.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert found == []


def test_the_sweep_reads_the_package_tests_and_benchmarks() -> None:
    names = {path.relative_to(ROOT).as_posix() for path in source_files()}
    assert {"compliance_bake/errors.py", "compliance_bake/templates/portal.html.j2"} <= names
    assert {"tests/conftest.py", "bench/key_timing.py", "pyproject.toml"} <= names
    assert not any(name.startswith(NOT_YET_SWEPT) for name in names)


def test_the_patterns_catch_what_they_name() -> None:
    assert ISSUE_NUMBER.search("the issue-14 targets") and ISSUE_NUMBER.search("(issue 15)")
    assert DIARY_STAMP.search("a fourth run (20:50 UTC)")
    assert DIARY_STAMP.search("2026-11-23, 16:20-16:45 UTC")
    assert not DIARY_STAMP.search("--now 2026-11-22T04:06:00Z")
    assert not ISSUE_NUMBER.search("a tissue 3 ply")
    assert ABSENT_FILE.search("(DESIGN.md's scheme)") and ABSENT_FILE.search("see STYLE.md")
    assert not ABSENT_FILE.search("docs/design.md")


def test_every_docs_link_in_readme_resolves_to_a_file() -> None:
    links = re.findall(r"\]\((docs/[^)#\s]+)", README.read_text(encoding="utf-8"))
    assert "docs/commands.md" in links and "docs/spec.md" in links
    missing = [link for link in links if not (ROOT / link).is_file()]
    assert missing == []


def test_every_environment_variable_the_package_names_is_in_the_table() -> None:
    """docs/environment.md is the one table: a variable a help text, an option or the code
    names (COMPLIANCE_*, REPORT_*, SOURCE_DATE_EPOCH) has a row there."""
    page = (ROOT / "docs" / "environment.md").read_text("utf-8")
    rows = set(re.findall(r"^\| `([A-Z_]+)` \|", page, re.MULTILINE))
    named = re.compile(
        r"\b(?:COMPLIANCE_[A-Z_]+|REPORT_SIGNING_SECRET(?:_FILE)?|SOURCE_DATE_EPOCH)\b"
    )
    found: set[str] = set()
    for source in (ROOT / "compliance_bake").rglob("*.py"):
        found |= set(named.findall(source.read_text("utf-8")))
    assert found, "no variable found: the pattern is wrong"
    assert found <= rows, sorted(found - rows)
    for always in ("COLUMNS", "NO_COLOR", "JAVA_HOME", "_COMPLIANCE_BAKE_COMPLETE"):
        assert always in rows
