"""Results leave the core as `findings.Finding`: the diff's changes, the audit's violating plays
(a record no reader was given among them), the integrity checks and the board's self-checks,
each with the severity the command acts on; the CLI reads those and no module's own record.

Each edge runs on a real failing input: a diff against a bake whose service lies about one pair,
an audit of a plays file with an unlicensed play and a record with fields too many, the
integrity block of that lying bake, and a real bake's board with its first row measured otherwise.
"""

from __future__ import annotations

import ast
import json
from datetime import UTC, datetime
from pathlib import Path

import msgspec

from compliance_bake.audit.plays_source import COLUMNS
from compliance_bake.audit.zip_window import run_zip_window
from compliance_bake.diff.model import ChangeClass
from compliance_bake.diff.render import describe, findings
from compliance_bake.diff.run import run_diff
from compliance_bake.findings import (
    BOARD,
    DIFF,
    FAIL,
    INFO,
    INTEGRITY,
    RECORDED,
    WARN,
    ZIP_WINDOW,
    Finding,
)
from compliance_bake.inputs.fixtures import load_fixtures
from compliance_bake.log.entry import entry_of, verdict_finding
from compliance_bake.report.models import Board, Integrity
from compliance_bake.resources import demo_fixtures_dir
from compliance_bake.signing.secret import Secret
from tests._diff_helpers import bake, bake_lying, fixtures_with
from tests.conftest import SECRET

CLI = Path(__file__).resolve().parents[2] / "compliance_bake" / "cli"
RECORDS = ("Change", "ViolatingPlay", "Oversized", "Misfit", "IntegrityCheck", "Verdict")
LIAR = ("node-offshore-04", "MA")  # allowed by the lying service, without a licence


def test_a_failing_diff_and_its_integrity_checks_leave_as_findings(tmp_path: Path) -> None:
    """The lying bake changes a decision and two self-checks: under the default --fail-on each
    change is a failure of its class; under `--fail-on decision` the self-checks are warnings.
    Its integrity block, read back, fails the shadow check and holds the others, and its log
    entry's verdict is a recorded failure."""
    base = bake(fixtures_with(tmp_path, "base"), tmp_path / "base-out")
    lying = bake_lying(fixtures_with(tmp_path, "lie"), tmp_path / "lie-out", *LIAR)
    result = run_diff(str(base), str(lying), secret=Secret(SECRET, "test"))
    found = findings(result)
    assert all(isinstance(f, Finding) and f.kind == DIFF for f in found)
    assert [(f.rule, f.severity) for f in found] == [
        ("decision", FAIL),
        ("self-check", FAIL),
        ("self-check", FAIL),
    ]
    assert [f.what for f in found] == [describe(c) for c in result.changes]
    assert "MA node-offshore-04" in found[0].what
    result.fail_on = (ChangeClass.DECISION,)
    assert [f.severity for f in findings(result)] == [FAIL, WARN, WARN]
    assert len(findings(result, per_class=1)) == 2

    document = json.loads((lying / "api" / "compliance.json").read_text())
    checks = Integrity.from_json(document["integrity"]).findings()
    assert all(f.kind == INTEGRITY for f in checks)
    assert {f.rule: f.severity for f in checks} == {
        "enhancements": INFO,
        "shadow": FAIL,
        "sha3": INFO,
        "hmac": INFO,
        "geo": INFO,
    }
    assert [f.what for f in checks if not f.ok] == ["Shadow mismatches 1"]
    logged = verdict_finding(entry_of(document, "0" * 64, "key"))
    assert (logged.severity, logged.kind) == (FAIL, RECORDED)
    assert logged.what == "self-checks 8/8  mismatches 1"
    held = json.loads((base / "api" / "compliance.json").read_text())
    assert verdict_finding(entry_of(held, "0" * 64, "key")).severity == INFO

    board = Board.from_json(held["enhancements"])
    row = board.rows[0]  # health.states, measured {"ok": true, "states": ["MA", "NJ"]}
    broken = msgspec.structs.replace(row, actual_state={"ok": False, "states": ["MA"]}, match=False)
    found = msgspec.structs.replace(board, rows=[broken, *board.rows[1:]]).findings()
    assert all(f.kind == BOARD for f in found)
    assert [(f.rule, f.severity, f.what) for f in found if not f.ok] == [
        ("health.states", FAIL, "$.ok: expected true, actual false"),
        ("health.states", FAIL, '$.states: expected ["MA", "NJ"], actual ["MA"]'),
    ]
    assert [(f.rule, f.what) for f in found if f.ok] == [
        (r.feature, "holds") for r in board.rows[1:]
    ]


def test_an_audit_leaves_its_violating_plays_as_failures_with_their_lines(
    tmp_path: Path,
) -> None:
    """Two plays of a partner with no licence in the state, and a record with empty fields too
    many (set aside: no reader is given it): each fails the audit at its file line; a report
    may ask for the first of each reason only."""
    clean = "p1,node-bay-01,MA,02108,2026-11-20T10:00:00Z,2026-11-20T10:00:01Z,b.t,1"
    rows = [
        ",".join(COLUMNS),
        clean,
        clean.replace("p1,node-bay-01", "p2,node-offshore-04"),
        clean.replace("p1", "p3") + ",,",
        clean.replace("p1,node-bay-01", "p4,node-offshore-04"),
    ]
    plays = tmp_path / "plays.csv"
    plays.write_text("\n".join(rows) + "\n")
    registry = load_fixtures(demo_fixtures_dir()).registry
    result = run_zip_window(plays, registry, datetime(2026, 11, 22, 4, 6, tzinfo=UTC))
    found = result.findings()
    assert all(f.kind == ZIP_WINDOW and f.file == str(plays) for f in found)
    assert sorted((f.rule, f.severity, f.lineno) for f in found) == [
        ("malformed-row", FAIL, 4),
        ("partner-not-licensed", FAIL, 3),
        ("partner-not-licensed", FAIL, 5),
    ]
    first = result.findings(per_reason=1)
    assert len(first) == 2
    by_rule = {f.rule: f.what for f in first}
    assert (
        by_rule["partner-not-licensed"] == "play p2 (partner node-offshore-04, state MA, zip 02108)"
    )
    assert by_rule["malformed-row"].startswith('row "p3,node-bay-01,MA')
    assert not any(f.ok for f in found) and not result.ok


def test_the_cli_imports_no_module_record_to_read_results() -> None:
    """cli/ imports none of the modules' own result records (at module level or in a
    function): it reads Findings."""
    for module in sorted(CLI.glob("*.py")):
        names = {
            alias.name
            for node in ast.walk(ast.parse(module.read_text()))
            if isinstance(node, ast.ImportFrom)
            and (node.module or "").startswith("compliance_bake")
            for alias in node.names
        }
        assert not names & set(RECORDS), f"{module.name} imports {sorted(names & set(RECORDS))}"
