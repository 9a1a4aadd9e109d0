"""`diff --report KIND:PATH` through the reporters every command shares: a JUnit file that
Jenkins' schema accepts, the run summary its schema accepts, GitHub annotations and a step
summary, each saying what the exit code says."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from compliance_bake.inputs.schemas import schemas_dir
from tests._diff_helpers import bake, fixtures_with
from tests.cli._xsd import assert_valid
from tests.conftest import invoke


def _revoke(licences: dict[str, Any], _geo: dict[str, Any]) -> None:
    for partner in licences["partners"]:
        if partner["nodeId"] == "node-corridor-03":
            partner["licences"] = [x for x in partner["licences"] if x["state"] != "NJ"]


@pytest.fixture(scope="module")
def sides(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    mp = pytest.MonkeyPatch()
    mp.setenv("REPORT_SIGNING_SECRET", "test-secret-0123456789abcdef0123456789abcdef")
    root = tmp_path_factory.mktemp("diff-reports")
    try:
        old = bake(fixtures_with(root, "base"), root / "old")
        new = bake(fixtures_with(root, "revoked", _revoke), root / "new")
    finally:
        mp.undo()
    return old, new


def test_junit_on_stdout_is_valid_and_fails_the_decision_case(
    sides: tuple[Path, Path], tmp_path: Path
) -> None:
    old, new = sides
    result = invoke("diff", str(old), str(new), "--report", "junit:-")
    assert result.exit_code == 1
    report = tmp_path / "junit.xml"
    report.write_text(result.stdout)
    root = assert_valid(report)
    failed = [
        case.get("name") for case in root.iter("testcase") if case.find("failure") is not None
    ]
    assert failed == ["decision"]
    assert "node-corridor-03" in result.stdout
    assert "verdict: changed: decision" in result.stderr  # the tables moved to stderr


def test_json_and_github_reports_say_the_exit(sides: tuple[Path, Path], tmp_path: Path) -> None:
    old, new = sides
    summary, notes = tmp_path / "summary.json", tmp_path / "annotations.txt"
    result = invoke(
        "diff", str(old), str(new), "--report", f"json:{summary}", "--report", f"github:{notes}"
    )
    assert result.exit_code == 1
    document = json.loads(summary.read_text())
    schema = json.loads((schemas_dir() / "run-summary.schema.json").read_text())
    assert list(Draft202012Validator(schema).iter_errors(document)) == []
    assert document["command"] == "diff" and document["exitCode"] == 1
    assert document["ok"] is False and document["details"]["failed"] == ["decision"]
    assert notes.read_text().startswith("::error")


def test_no_change_passes_in_every_report(sides: tuple[Path, Path], tmp_path: Path) -> None:
    old, _ = sides
    steps = tmp_path / "steps.md"
    result = invoke(
        "diff", str(old), str(old), "--report", "junit:-", "--report", f"markdown:{steps}"
    )
    assert result.exit_code == 0
    assert "<failure" not in result.stdout
    assert "PASS" in steps.read_text()


def test_json_on_stdout_and_a_report_on_stdout_are_refused(sides: tuple[Path, Path]) -> None:
    old, new = sides
    result = invoke("diff", str(old), str(new), "--json", "--report", "junit:-")
    assert result.exit_code == 2 and "stdout" in result.output


def test_the_diffs_own_json_and_markdown_are_report_formats_and_the_flags_alias_them(
    sides: tuple[Path, Path], tmp_path: Path
) -> None:
    """`--report diff-json:PATH` and `diff-markdown:PATH` write the bytes `--json` and
    `--markdown` print; the flags stay, and `diff-json` is refused on a command without it."""
    old, new = sides
    by_flag = {flag: invoke("diff", str(old), str(new), flag) for flag in ("--json", "--markdown")}
    written = {"json": tmp_path / "changes.json", "markdown": tmp_path / "changes.md"}
    result = invoke(
        "diff", str(old), str(new),
        "--report", f"diff-json:{written['json']}",
        "--report", f"diff-markdown:{written['markdown']}",
    )  # fmt: skip
    assert result.exit_code == by_flag["--json"].exit_code == 1
    assert written["json"].read_text("utf-8") == by_flag["--json"].output
    assert written["markdown"].read_text("utf-8") == by_flag["--markdown"].output
    assert json.loads(written["json"].read_text("utf-8"))["changes"], "the revocation is a change"
    on_stdout = invoke("diff", str(old), str(new), "--report", "diff-markdown:-")
    assert on_stdout.stdout == by_flag["--markdown"].output
    refused = invoke("audit", "deep", "--plays", "-", "--report", f"diff-json:{tmp_path / 'x'}")
    assert refused.exit_code == 2 and "diff-json" in refused.output
