"""Every failure names what to fix: the short summary, the GitHub annotations, the step summary
and the JSON summary list the partners and states, the plays and the fields, with their file
and line where a file holds them, then how many more."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import jsonschema
import pytest
from markdown_it import MarkdownIt

from compliance_bake.cli.outcome import Case, Item, Outcome
from compliance_bake.cli.report_github import markdown_bytes
from compliance_bake.inputs.models import Decision
from compliance_bake.resources import demo_fixtures_dir, schemas_dir
from compliance_bake.targets.engine import Engine
from tests.conftest import NOW, invoke

HEADER = "play_id,partner,state,zip,placed_at,enriched_at,wager_type,stake\n"
IN_WINDOW = "2026-11-01T00:00:00Z"
SCREEN = 24  # lines of the last screen


def _allow_everything(self: Engine, partner: str, state: str, wager_type: str) -> Decision:
    return Decision(True, 200)


def _line_of(path: Path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if text in line)


@pytest.fixture
def failing(monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """The engine allows everyone (so the shadow disagrees), fixtures copied to `fx` and a
    plays file `plays.csv` in the working folder: five unlicensed plays and a malformed row."""
    monkeypatch.setattr(Engine, "check", _allow_everything)
    fixtures = Path("fx")
    shutil.copytree(demo_fixtures_dir(), fixtures)
    plays = Path("plays.csv")
    play = f"node-offshore-04,MA,02108,{IN_WINDOW},{IN_WINDOW},x,1\n"
    rows = "".join(f"u{n},{play}" for n in range(5))
    plays.write_text(HEADER + rows + "broken,row\n")
    return fixtures, plays


def test_a_failing_bake_last_screen_at_80_columns_names_what_to_fix(
    failing: tuple[Path, Path],
) -> None:
    fixtures, plays = failing
    result = invoke("bake", "snapshot", "--fixtures", str(fixtures), "--now", NOW,
                    "--deep-audit", str(plays), env={"COLUMNS": "80"})  # fmt: skip
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    # the re-run command is the one line that may pass 80 columns: never wrapped, it pastes whole
    long = [line for line in lines if len(line) > 80]
    assert [line for line in long if not line.startswith("  every violation: ")] == []
    screen = " ".join(" ".join(lines[-SCREEN:]).split())
    shore = _line_of(fixtures / "licences.json", '"node-shore-02"')
    assert "FAILED shadow MA: 2 disagreeing" in screen
    assert (
        "- allowed without an active licence: "
        f"MA node-shore-02: real allow, shadow block (licence none) at fx/licences.json:{shore}"
        in screen
    )
    assert "FAILED zip-window partner-not-licensed: 5 plays" in screen
    assert "- play u0 (partner node-offshore-04, state MA, zip 02108) at plays.csv:2" in screen
    assert "- play u2 (" in screen and "- play u3 (" not in screen
    assert "… and 2 more" in screen
    assert '- row "broken,row" at plays.csv:7' in screen
    assert "- $.allowed: expected false, actual true" in screen
    assert lines[-1] == (
        "FAIL: enhancements, shadow, zip-window, allowed without an active licence"
    )


def test_a_failing_audit_names_its_plays(failing: tuple[Path, Path]) -> None:
    _, plays = failing
    result = invoke("audit", "deep", "--plays", str(plays), "--now", NOW)
    assert result.exit_code == 1
    summary = " ".join(result.stdout.split("short summary")[1].split())
    assert "FAILED zip-window partner-not-licensed: 5 plays - play u0 (" in summary
    assert "zip 02108) at plays.csv:2 - play u1 (" in summary  # the file line of a play read
    assert "… and 2 more FAILED zip-window malformed-row" not in summary  # reasons in order
    assert '- row "broken,row" at plays.csv:7' in summary


def _annotations(text: str) -> list[dict[str, str]]:
    """Workflow commands as the runner splits them: `::name props::message`, props split at
    commas into key=value, then %-escapes undone (the toolkit's own escaping rules)."""
    found = []
    for line in text.splitlines():
        match = re.fullmatch(r"::(\w+)(?: ([^:]*))?::(.*)", line)
        assert match, line
        props = dict(p.split("=", 1) for p in (match.group(2) or "").split(",") if p)

        def undo(s: str) -> str:
            return s.replace("%0D", "\r").replace("%0A", "\n").replace("%3A", ":") \
                .replace("%2C", ",").replace("%25", "%")  # fmt: skip

        found.append({"command": match.group(1), "message": undo(match.group(3)),
                      **{k: undo(v) for k, v in props.items()}})  # fmt: skip
    return found


def test_github_annotations_point_at_fixture_and_plays_lines(
    failing: tuple[Path, Path], tmp_path: Path
) -> None:
    fixtures, plays = failing
    result = invoke("bake", "snapshot", "--fixtures", str(fixtures), "--now", NOW,
                    "--out", str(tmp_path / "out"), "--deep-audit", str(plays),
                    "--report", "github:-")  # fmt: skip
    assert result.exit_code == 1
    notes = _annotations(result.stdout)
    licences = str(fixtures / "licences.json")
    shore = _line_of(fixtures / "licences.json", '"node-shore-02"')
    offshore = _line_of(fixtures / "licences.json", '"node-offshore-04"')
    ma = [n for n in notes if n.get("title") == "shadow: MA"]
    assert [(n["file"], n["line"]) for n in ma] == [
        (licences, str(shore)), (licences, str(offshore))
    ]  # fmt: skip
    assert ma[0]["message"].startswith(
        "2 disagreeing\n- allowed without an active licence: MA node-shore-02: real allow"
    )
    (malformed,) = [n for n in notes if n.get("title") == "zip-window: malformed-row"]
    assert (malformed["file"], malformed["line"]) == ("plays.csv", "7")
    # a play that was read, at its file line too: the first annotation lists the case's items,
    # one more each points at a further play
    unlicensed = [n for n in notes if n.get("title") == "zip-window: partner-not-licensed"]
    assert [(n["file"], n["line"]) for n in unlicensed] == [
        ("plays.csv", str(n)) for n in range(2, 7)
    ]
    last = "\n- play u4 (partner node-offshore-04, state MA, zip 02108) at plays.csv:6"
    assert unlicensed[0]["message"].endswith(last)
    assert unlicensed[1]["message"] == "play u1 (partner node-offshore-04, state MA, zip 02108)"
    assert notes[-1]["command"] == "error" and notes[-1]["message"].startswith("FAIL: ")


def test_markdown_step_summary_and_json_summary(failing: tuple[Path, Path], tmp_path: Path) -> None:
    fixtures, plays = failing
    step, summary = tmp_path / "step.md", tmp_path / "summary.json"
    result = invoke("bake", "snapshot", "--fixtures", str(fixtures), "--now", NOW,
                    "--out", str(tmp_path / "out"), "--deep-audit", str(plays),
                    "--report", f"markdown:{step}", "--report", f"json:{summary}")  # fmt: skip
    assert result.exit_code == 1
    html = MarkdownIt("commonmark").enable("table").render(step.read_text())
    text = re.sub(r"<[^>]+>", "", html)
    assert "FAIL: enhancements, shadow, zip-window, allowed without" in text
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", html)
    assert [cells[i : i + 3] for i in range(0, len(cells), 3)] == [
        ["board", "8", "1"], ["integrity", "6", "3"], ["policy", "1", "0"], ["shadow", "2", "2"],
        ["zip-window", "9", "2"]
    ]  # fmt: skip
    assert "MA node-shore-02: real allow, shadow block (licence none) at fx/licences.json:" in text
    assert "play u4 (partner node-offshore-04, state MA, zip 02108) at plays.csv:6" in text

    document = json.loads(summary.read_text())
    schema = json.loads((schemas_dir() / "run-summary.schema.json").read_text())
    jsonschema.validate(document, schema)
    cases = {(s["name"], c["name"]): c for s in document["suites"] for c in s["cases"]}
    malformed = cases[("zip-window", "malformed-row")]
    assert malformed["items"] == [{"text": 'row "broken,row"', "file": "plays.csv", "line": 7}]
    unlicensed = cases[("zip-window", "partner-not-licensed")]
    assert unlicensed["moreItems"] == 0
    assert [(i["file"], i["line"]) for i in unlicensed["items"]] == [
        ("plays.csv", n) for n in range(2, 7)
    ]
    assert "items" not in cases[("board", "health.states")]


def test_markdown_keeps_hostile_text_literal() -> None:
    hostile = "<img src=x onerror=alert(1)> | **bold** [link](http://x) `code`\x1b[31m"
    case = Case("partner-not-licensed", False, "1 play", (Item(hostile, "p|x.csv", 2),))
    verdict = "FAIL: zip-window, 1 violations"
    outcome = Outcome("audit deep", False, 1, verdict, {"zip-window": [case]})
    html = MarkdownIt("commonmark").enable("table").render(markdown_bytes(outcome).decode())
    assert "<img" not in html and "<strong>bold" not in html and "<a " not in html
    assert "<code>" not in html and "\x1b" not in html
    assert "&lt;img src=x onerror=alert(1)&gt; | **bold** [link](http://x) `code`\\x1b[31m" in html
    assert "at p|x.csv:2" in html


def test_junit_failure_bodies_name_each_plays_line(
    failing: tuple[Path, Path], tmp_path: Path
) -> None:
    import xml.etree.ElementTree as ET

    _, plays = failing
    junit = tmp_path / "audit.xml"
    result = invoke("audit", "deep", "--plays", str(plays), "--now", NOW,
                    "--out", str(tmp_path / "out"), "--report", f"junit:{junit}")  # fmt: skip
    assert result.exit_code == 1
    cases = {c.get("name"): c for c in ET.parse(junit).getroot().iter("testcase")}
    failure = cases["partner-not-licensed"].find("failure")
    assert failure is not None and failure.text is not None
    assert failure.text.splitlines()[1:] == [
        f"- play u{n} (partner node-offshore-04, state MA, zip 02108) at plays.csv:{n + 2}"
        for n in range(5)
    ]
