"""JUnit from bake, audit and verify, read as Jenkins reads it: xmllint against junit-10.xsd.

Passing runs, failing runs and hostile file names (a control character in a plays file's name
and in a stray file of out/) must all give a well-formed document that the schema accepts, with
unique test names, the suite's timestamp, hostname and time, and failure bodies that hold the
full evidence and the items to fix.
"""

from __future__ import annotations

import socket
from datetime import UTC, datetime
from pathlib import Path
from xml.etree import ElementTree

import pytest

from compliance_bake.inputs.models import Decision
from compliance_bake.targets.engine import Engine
from tests.cli._xsd import assert_valid, xmllint
from tests.conftest import NOW, invoke

HEADER = "play_id,partner,state,zip,placed_at,enriched_at,wager_type,stake\n"
IN_WINDOW = "2026-11-01T00:00:00Z"


def _allow_everything(self: Engine, partner: str, state: str, wager_type: str) -> Decision:
    return Decision(True, 200)


def _suites(root: ElementTree.Element) -> list[ElementTree.Element]:
    return root.findall("testsuite")


def assert_run_attributes(root: ElementTree.Element, before: datetime) -> None:
    """Each suite says when (UTC, as JUnit writes it: no offset), where and how long."""
    for suite in _suites(root):
        stamp = datetime.strptime(suite.get("timestamp", ""), "%Y-%m-%dT%H:%M:%S")
        assert before.replace(microsecond=0) <= stamp.replace(tzinfo=UTC)
        assert stamp.replace(tzinfo=UTC) <= datetime.now(UTC)
        assert suite.get("hostname") == socket.gethostname()
        assert float(suite.get("time", "x")) >= 0
        assert all(case.get("time") == "0" for case in suite.iter("testcase"))
    assert float(root.get("time", "x")) >= 0


def assert_unique_cases(root: ElementTree.Element) -> None:
    keys = [(c.get("classname"), c.get("name")) for c in root.iter("testcase")]
    assert len(keys) == len(set(keys)), sorted(k for k in keys if keys.count(k) > 1)


def test_the_schema_check_refuses_what_the_schema_forbids(tmp_path: Path) -> None:
    """The check can fail: a suite without its required `tests` attribute is refused."""
    bad = tmp_path / "bad.xml"
    bad.write_text('<testsuites><testsuite name="x" failures="0" errors="0"/></testsuites>')
    assert xmllint(bad).returncode != 0
    control = tmp_path / "control.xml"
    control.write_bytes(b'<testsuites><testsuite name="\x1b" tests="0" failures="0" errors="0"/>'
                        b"</testsuites>")  # fmt: skip
    assert xmllint(control).returncode != 0  # not well-formed


def test_passing_bake_audit_and_verify_validate(tmp_path: Path) -> None:
    before = datetime.now(UTC)
    out, reports = tmp_path / "out", tmp_path / "reports"
    baked = invoke("bake", "snapshot", "--out", str(out), "--now", NOW,
                   "--report", f"junit:{reports / 'bake.xml'}")  # fmt: skip
    assert baked.exit_code == 0, baked.output
    root = assert_valid(reports / "bake.xml")
    assert {s.get("name") for s in _suites(root)} == {"board", "integrity", "policy", "shadow"}
    assert_run_attributes(root, before)
    assert_unique_cases(root)

    verified = invoke("verify", str(out), "--report", f"junit:{reports / 'verify.xml'}")
    assert verified.exit_code == 0, verified.output
    root = assert_valid(reports / "verify.xml")
    assert_run_attributes(root, before)
    assert_unique_cases(root)
    names = [c.get("name") for c in root.iter("testcase")]
    assert len(set(names)) == len(names) > 20  # unique names, not only unique pairs
    assert {c.get("classname") for c in root.iter("testcase")} >= {
        "compliance-bake.verify.rule", "compliance-bake.verify.digest"
    }  # fmt: skip


def test_a_failing_bake_with_a_hostile_plays_name_validates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(Engine, "check", _allow_everything)
    plays = Path("plays\x1b[31m.csv")  # in the working folder: the item names it relatively
    plays.write_text(HEADER + f"p1,node-offshore-04,MA,02108,{IN_WINDOW},{IN_WINDOW},x,1\n"
                     "p2,bad\n")  # fmt: skip
    report = tmp_path / "bake.xml"
    before = datetime.now(UTC)
    baked = invoke("bake", "snapshot", "--out", str(tmp_path / "out"), "--now", NOW,
                   "--deep-audit", str(plays), "--report", f"junit:{report}")  # fmt: skip
    assert baked.exit_code == 1
    assert b"\x1b" not in report.read_bytes()
    root = assert_valid(report)
    assert_run_attributes(root, before)
    assert_unique_cases(root)
    bodies = {
        f"{case.get('classname')} {case.get('name')}": (case.find("failure").text or "")
        for case in root.iter("testcase")
        if case.find("failure") is not None
    }
    board = bodies["compliance-bake.board check.nj_unlicensed_block"]
    assert 'expected: {"allowed": false, "status": 403}' in board  # the full evidence
    assert 'actual:   {"allowed": true, "status": 200}' in board
    assert "- $.status: expected 403, actual 200" in board  # every differing field
    shadow = bodies["compliance-bake.shadow MA"]
    assert (
        "- allowed without an active licence: "
        "MA node-shore-02: real allow, shadow block (licence none) at "
    ) in shadow
    malformed = bodies["compliance-bake.zip-window malformed-row"]
    assert '- row "p2,bad" at plays\\x1b[31m.csv:3' in malformed  # escaped, with its line
    unlicensed = bodies["compliance-bake.zip-window partner-not-licensed"]
    assert "- play p1 (partner node-offshore-04, state MA, zip 02108)" in unlicensed


def test_a_failing_audit_validates(tmp_path: Path) -> None:
    plays = tmp_path / "plays.csv"
    play = f"node-offshore-04,MA,02108,{IN_WINDOW},{IN_WINDOW},x,1\n"
    rows = "".join(f"p{n},{play}" for n in range(7))
    plays.write_text(HEADER + rows)
    report = tmp_path / "audit.xml"
    audited = invoke("audit", "deep", "--plays", str(plays), "--now", NOW,
                     "--out", str(tmp_path / "out"), "--report", f"junit:{report}")  # fmt: skip
    assert audited.exit_code == 1
    root = assert_valid(report)
    assert_unique_cases(root)
    (case,) = [c for c in root.iter("testcase") if c.get("name") == "partner-not-licensed"]
    body = case.find("failure")
    assert body is not None and body.get("message") == "7 plays"
    assert all(f"- play p{n} (" in (body.text or "") for n in range(7))


def test_a_failing_verify_with_a_hostile_file_name_validates(baked: Path, tmp_path: Path) -> None:
    (baked / "stray\x01\x1b]0;x\x07.json").write_text("{}")
    (baked / "portal" / "compliance" / "index.html").write_text("<p>edited</p>")
    report = tmp_path / "verify.xml"
    before = datetime.now(UTC)
    result = invoke("verify", str(baked), "--report", f"junit:{report}")
    assert result.exit_code == 1
    raw = report.read_bytes()
    assert not any(byte in raw for byte in (b"\x01", b"\x1b", b"\x07"))
    root = assert_valid(report)
    assert_run_attributes(root, before)
    assert_unique_cases(root)
    failed = [c.get("name") for c in root.iter("testcase") if c.find("failure") is not None]
    assert "stray\\x01\\x1b]0;x\\x07.json file" in failed
    assert "portal/compliance/index.html file" in failed
