"""`bake snapshot --service-fixtures DIR`: the in-process engine answers from DIR's licences while
the shadow reads --fixtures, so drift between a service's database and the registry fails the
bake as it would live; DIR is checked like --fixtures; with --target it is refused.

fixtures/drifted/ is the rehearsal `make demo-fail` runs and docs/fixtures.md shows: the bundled
licences with two drifts.
"""

from __future__ import annotations

import json
import shutil
import socket
from pathlib import Path
from typing import Any

import pytest

from compliance_bake.inputs.fixtures import LICENCES_FILE
from tests._inputs_helpers import (
    CASES,
    DEMO,
    assert_one_line_refusal,
    bake_args,
    bake_good,
    invoke,
    tree_state,
)

ROOT = Path(__file__).resolve().parents[2]
DRIFTED = ROOT / "fixtures" / "drifted"

# The bad fixture cases whose fault is in licences.json (line 1 of expected.txt names the file).
LICENCE_CASES = sorted(
    case
    for case in (CASES / "bad").iterdir()
    if (case / "expected.txt").read_text(encoding="utf-8").startswith(LICENCES_FILE)
)
# The registry must hold the board's MA licence (a fixture rule, not a file's); a service that
# lacks it has drifted, and the board and the shadow say so (exit 1).
BOARD_RULE = "no-active-licence-in-ma"


def _service_bake(service: Path, out: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    run = invoke(bake_args(DEMO, out, "--service-fixtures", str(service), "--json", *extra))
    assert run.code in (0, 1), run
    return run.code, json.loads(run.stdout)


def _mismatches(out: Path) -> set[tuple[str, str, bool, bool, str | None]]:
    shadow = json.loads((out / "registry" / "compliance-shadow.json").read_text("utf-8"))
    return {
        (r["state"], r["partner"], r["realAllowed"], r["shadowAllowed"], r["licenseStatus"])
        for r in shadow["rows"]
        if not r["match"]
    }


def test_the_drifted_set_fails_the_shadow_both_ways(tmp_path: Path) -> None:
    out = tmp_path / "out"
    code, summary = _service_bake(DRIFTED, out)
    assert code == 1
    assert _mismatches(out) == {
        # The service allows a partner the registry does not license there...
        ("NJ", "node-offshore-04", True, False, None),
        # ...and blocks one whose registry licence is active.
        ("MA", "node-corridor-03", False, True, "active"),
    }
    assert summary["enhancements"] == {"passed": 8, "total": 8, "failed": []}
    failed = {check["id"] for check in summary["integrity"] if not check["ok"]}
    assert failed == {"shadow"}


def test_the_same_licences_as_the_registry_pass(tmp_path: Path) -> None:
    """The option changes nothing but the engine's licences: a copy of the registry's passes."""
    service = tmp_path / "service"
    service.mkdir()
    shutil.copy(DEMO / LICENCES_FILE, service / LICENCES_FILE)
    out = tmp_path / "out"
    code, summary = _service_bake(service, out)
    assert code == 0, summary
    assert _mismatches(out) == set()


def test_the_engine_not_the_shadow_reads_the_service_licences(tmp_path: Path) -> None:
    """The drifted licences given as --fixtures (the registry) with the bundled ones as the
    service's: the same pairs mismatch with real and shadow swapped (a suspended licence is
    null in a row, as the specification shows only an active one)."""
    registry = tmp_path / "registry"
    registry.mkdir()
    shutil.copy(DRIFTED / LICENCES_FILE, registry / LICENCES_FILE)
    shutil.copy(DEMO / "geo.json", registry / "geo.json")
    out = tmp_path / "out"
    run = invoke(bake_args(registry, out, "--service-fixtures", str(DEMO), "--json"))
    assert run.code == 1, run
    assert _mismatches(out) == {
        ("NJ", "node-offshore-04", False, True, "active"),
        ("MA", "node-corridor-03", True, False, None),
    }


def test_a_service_without_the_boards_licence_fails_the_board(tmp_path: Path) -> None:
    out = tmp_path / "out"
    code, summary = _service_bake(CASES / "bad" / BOARD_RULE, out)
    assert code == 1
    assert "check.ma_licensed_nba_totals" in summary["enhancements"]["failed"]
    assert ("MA", "node-bay-01", False, True, "active") in _mismatches(out)


@pytest.mark.parametrize(
    "case", [c for c in LICENCE_CASES if c.name != BOARD_RULE], ids=lambda c: c.name
)
def test_a_bad_service_licences_file_is_refused_as_fixtures_are(case: Path, tmp_path: Path) -> None:
    """The same one line as --fixtures gives for the same file, exit 2, out/ untouched."""
    out = tmp_path / "out"
    before = bake_good(out)
    as_fixtures = assert_one_line_refusal(invoke(bake_args(case, tmp_path / "other")))
    as_service = assert_one_line_refusal(
        invoke(bake_args(DEMO, out, "--service-fixtures", str(case)))
    )
    assert as_service == as_fixtures
    assert f"{case}/{LICENCES_FILE}" in as_service
    assert tree_state(out) == before
    fresh = tmp_path / "fresh" / "out"
    assert_one_line_refusal(invoke(bake_args(DEMO, fresh, "--service-fixtures", str(case))))
    assert not fresh.parent.exists()


def test_the_cases_cover_the_licence_checks() -> None:
    names = {case.name for case in LICENCE_CASES}
    assert {"duplicate-key", "not-utf8", "status-as-boolean", "unknown-state-in-licence"} <= names
    assert BOARD_RULE in names


@pytest.mark.parametrize("missing", ["folder", "file"])
def test_a_missing_folder_or_file_names_the_option_and_licences_only(
    missing: str, tmp_path: Path
) -> None:
    service = tmp_path / "service"
    if missing == "file":
        service.mkdir()
        shutil.copy(DEMO / "geo.json", service / "geo.json")  # geo.json is not what it needs
    out = tmp_path / "out"
    line = assert_one_line_refusal(invoke(bake_args(DEMO, out, "--service-fixtures", str(service))))
    assert "pass --service-fixtures DIR, a folder with licences.json)" in line
    assert "geo.json" not in line
    assert not out.exists()


def test_with_a_target_it_is_refused_before_any_request(tmp_path: Path) -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        server.setblocking(False)
        url = f"http://127.0.0.1:{server.getsockname()[1]}"
        out = tmp_path / "out"
        args = bake_args(DEMO, out, "--service-fixtures", str(DRIFTED), "--target", url)
        line = assert_one_line_refusal(invoke(args, env={"COMPLIANCE_AGENT_KEY": "a" * 40}))
        with pytest.raises(BlockingIOError):
            server.accept()  # nobody connected
    assert "--service-fixtures" in line and "(fix: drop --target" in line
    assert not out.exists()


def test_a_rehearsals_annotations_point_at_the_service_licences(tmp_path: Path) -> None:
    """The drift to fix is in the service's file: each mismatch names the partner's line there."""
    lines = {
        partner: number
        for number, line in enumerate(
            (DRIFTED / LICENCES_FILE).read_text(encoding="utf-8").splitlines(), start=1
        )
        for partner in ("node-corridor-03", "node-offshore-04")
        if f'"nodeId": "{partner}"' in line
    }
    report = tmp_path / "github.txt"
    run = invoke(
        bake_args(DEMO, tmp_path / "out", "--service-fixtures", str(DRIFTED), "-q",
                  "--report", f"github:{report}")
    )  # fmt: skip
    assert run.code == 1, run
    text = report.read_text(encoding="utf-8")
    where = f"file={DRIFTED / LICENCES_FILE}"
    for partner, number in lines.items():
        assert f"{where},line={number},title=shadow" in text, (partner, text)
    assert f"file={DEMO / LICENCES_FILE}" not in text
