"""`bake snapshot --waivers` against the tests' regulatory Bun service with one partner's
identity made unverified (issue 44's Done-when): the bake fails without waivers, passes "with 1
waiver" with one for that pair before its expiry, fails naming the waiver after it, reports an
unused waiver, and records the waivers in the signed snapshot that `verify` re-derives."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import invoke
from tests.targets.test_regulatory_service import PROFILE, SERVICE, _post
from tests.targets.test_target_profiles import _stop, start_bun

PARTNER = "node-shore-02"  # licensed in NJ only: one pair fails
BEFORE = "2026-11-22T04:06:00Z"
AFTER = "2027-01-01T00:00:00Z"
JUSTIFICATION = "identity re-verification pending under ticket KYC-118"
WAIVER = f"""\
[[waiver]]
state = "NJ"
partner = "{PARTNER}"
justification = "{JUSTIFICATION}"
expires = 2026-12-31
approvedBy = "j.doe (compliance officer)"
"""
UNUSED = """
[[waiver]]
state = "MA"
partner = "node-bay-01"
kind = "allowedWithoutLicence"
justification = "a migration window"
expires = 2026-12-15
approvedBy = "j.doe"
"""


@pytest.fixture
def service() -> Iterator[str]:
    process, url = start_bun(SERVICE)
    try:
        status, _ = _post(f"{url}/test/identity", {"nodeId": PARTNER, "verified": False})
        assert status == 200
        yield url
    finally:
        _stop(process)


def _bake(out: Path, url: str, now: str, *extra: str) -> Any:
    return invoke(
        "bake", "snapshot", "--target", url, "--target-profile", str(PROFILE), "--out", str(out),
        "--now", now, "--timeout", "10", "--retries", "1", *extra,
    )  # fmt: skip


def _waivers(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "waivers.toml"
    path.write_text(text)
    return path


def _last(output: str) -> str:
    return output.rstrip().splitlines()[-1]


def test_without_waivers_the_unverified_pair_fails(service: str, tmp_path: Path) -> None:
    result = _bake(tmp_path / "out", service, BEFORE)
    assert result.exit_code == 1, result.output
    assert "NJ node-shore-02" in result.output


def test_a_waiver_for_the_pair_passes_with_1_waiver_and_names_why(
    service: str, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    file = _waivers(tmp_path, WAIVER)
    result = _bake(out, service, BEFORE, "--waivers", str(file))
    assert result.exit_code == 0, result.output
    assert _last(result.output) == "PASS with 1 waiver (until 2026-12-31)"
    assert JUSTIFICATION in result.output
    assert "waived NJ node-shore-02" in result.output  # the row stays, marked waived
    snap = json.loads((out / "api" / "compliance.json").read_text())
    rows = {(r["state"], r["partner"]): r for r in snap["shadow"]["rows"]}
    assert rows[("NJ", PARTNER)]["realAllowed"] is False  # as the target answered
    assert snap["shadow"]["disagreements"]["otherBlockWithLicence"] == 1  # not removed
    recorded = snap["waivers"]
    assert recorded["applied"] == 1 and recorded["until"] == "2026-12-31"
    (waiver,) = recorded["waivers"]
    assert waiver["justification"] == JUSTIFICATION and waiver["status"] == "applied"
    index = list(rows).index(("NJ", PARTNER))
    assert waiver["matched"] == [{"in": "shadow", "index": index, "kind": "otherBlockWithLicence"}]
    import hashlib

    assert recorded["sha3"] == hashlib.sha3_256(file.read_bytes()).hexdigest()
    as_json = _bake(tmp_path / "j", service, BEFORE, "--waivers", str(file), "--json")
    summary = json.loads(as_json.output)
    assert summary["exitCode"] == 0
    assert summary["waivers"]["verdict"] == "PASS with 1 waiver (until 2026-12-31)"
    assert summary["waivers"]["waivers"][0]["justification"] == JUSTIFICATION
    report = tmp_path / "report.json"
    junit = tmp_path / "junit.xml"
    reported = _bake(
        tmp_path / "r", service, BEFORE, "--waivers", str(file),
        "--report", f"json:{report}", "--report", f"junit:{junit}",
    )  # fmt: skip
    assert reported.exit_code == 0
    assert json.loads(report.read_text())["verdict"] == "PASS with 1 waiver (until 2026-12-31)"
    assert JUSTIFICATION in junit.read_text() and "<skipped" in junit.read_text()


def test_after_the_expiry_the_bake_fails_naming_the_expired_waiver(
    service: str, tmp_path: Path
) -> None:
    file = _waivers(tmp_path, WAIVER)
    # --now after the expiry: 2027-01-01 is within 365 days, the waiver is read, and expired.
    result = _bake(tmp_path / "out", service, AFTER, "--waivers", str(file))
    assert result.exit_code == 1, result.output
    verdict = " ".join(result.output.rsplit("FAIL: ", 1)[1].split())  # wrapped at 80 columns
    assert verdict == (
        "blocked for another reason with an active licence, "
        "waiver expired on 2026-12-31 (line 1: NJ node-shore-02)"
    )


def test_a_waiver_that_matches_nothing_is_reported_unused(service: str, tmp_path: Path) -> None:
    file = _waivers(tmp_path, WAIVER + UNUSED)
    result = _bake(tmp_path / "out", service, BEFORE, "--waivers", str(file))
    assert result.exit_code == 0, result.output
    assert (
        f"warning: {file}:8: the waiver MA node-bay-01 allowedWithoutLicence matches no "
        "failing item"
    ) in result.output
    assert "\nPASS with 1 waiver (until 2026-12-31)\n" in result.output  # exit unchanged
    assert "unused: matches no failing item: a migration window" in result.output


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        (lambda t: t.replace("expires = 2026-12-31\n", ""), ":1: [[waiver]]: no expires"),
        (lambda t: t.replace("2026-12-31", "2027-12-27"), "more than 365 days"),
    ],
)
def test_a_bad_waiver_exits_2_with_one_line_and_writes_nothing(
    service: str, tmp_path: Path, edit: Any, said: str
) -> None:
    out = tmp_path / "out"
    file = _waivers(tmp_path, edit(WAIVER))
    result = _bake(out, service, BEFORE, "--waivers", str(file))
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if str(file) in line]
    assert len(lines) == 1 and said in lines[0], result.output
    assert "Traceback" not in result.output
    assert not out.exists()
