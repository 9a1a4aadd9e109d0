"""`compliance-bake diff`: bakes that differ in known ways give exactly the expected changes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests._diff_helpers import bake, bake_lying, diff_json, fixtures_with, kinds
from tests.conftest import OTHER_SECRET, invoke

PLAYS = Path(__file__).resolve().parents[2] / "fixtures" / "plays.csv"


def _partner(licences: dict[str, Any], node: str) -> dict[str, Any]:
    return next(p for p in licences["partners"] if p["nodeId"] == node)


def _revoke(licences: dict[str, Any], geo: dict[str, Any]) -> None:
    partner = _partner(licences, "node-corridor-03")
    partner["licences"] = [x for x in partner["licences"] if x["state"] != "NJ"]


def _add_state(licences: dict[str, Any], geo: dict[str, Any]) -> None:
    licences["states"].append(
        {
            "code": "NY",
            "name": "New York",
            "wagerTypes": ["basketball.totals"],
            "limits": {"maxStakeUsd": 100, "maxDailyStakeUsd": 200, "minAge": 21},
        }
    )
    _partner(licences, "node-offshore-04")["licences"].append(
        {"state": "NY", "status": "active", "licenceNumber": "NY-GC-2026-0001"}
    )


def _remove_partner(licences: dict[str, Any], geo: dict[str, Any]) -> None:
    licences["partners"] = [p for p in licences["partners"] if p["nodeId"] != "node-offshore-04"]
    geo["partners"] = [p for p in geo["partners"] if p["nodeId"] != "node-offshore-04"]


def _reorder(licences: dict[str, Any], geo: dict[str, Any]) -> None:
    # node-bay-01 stays first: the board picks the first partner that fits each feature.
    licences["partners"][1:] = licences["partners"][:0:-1]
    geo["partners"].reverse()


@pytest.fixture
def base(tmp_path: Path) -> Path:
    return bake(fixtures_with(tmp_path, "base"), tmp_path / "base-out")


def _counts(decision: int = 0, coverage: int = 0, self_check: int = 0, cosmetic: int = 0) -> Any:
    return {
        "decision": decision,
        "coverage": coverage,
        "self-check": self_check,
        "cosmetic": cosmetic,
    }


def test_a_revoked_licence_is_one_decision(tmp_path: Path, base: Path) -> None:
    new = bake(fixtures_with(tmp_path, "revoked", _revoke), tmp_path / "new")
    code, doc = diff_json(str(base), str(new))
    assert code == 1
    assert doc["counts"] == _counts(decision=1)
    assert doc["failed"] == ["decision"]
    assert doc["changes"] == [
        {
            "class": "decision",
            "kind": "pair-changed",
            "concerns": {"state": "NJ", "partner": "node-corridor-03"},
            "before": {
                "licenseStatus": "active",
                "realAllowed": True,
                "shadowAllowed": True,
                "match": True,
            },
            "after": {
                "licenseStatus": None,
                "realAllowed": False,
                "shadowAllowed": False,
                "match": True,
            },
        }
    ]
    text = invoke("diff", str(base), str(new))
    assert text.exit_code == 1
    words = " ".join(text.stdout.split())
    assert "NJ node-corridor-03 real allow -> block, shadow allow -> block" in words
    assert "licence active -> none" in words
    assert text.stdout.rstrip().endswith("verdict: changed: decision (exit 1)")


def test_a_state_added_is_coverage_and_the_health_row(tmp_path: Path, base: Path) -> None:
    new = bake(fixtures_with(tmp_path, "ny", _add_state), tmp_path / "new")
    code, doc = diff_json(str(base), str(new))
    assert code == 1
    assert doc["counts"] == _counts(coverage=1, self_check=1)
    assert kinds(doc) == [
        ("coverage", "state-added", {"state": "NY"}),
        ("self-check", "board-row-changed", {"feature": "health.states"}),
    ]
    assert doc["changes"][0]["after"] == {"pairs": 4, "allowed": 1}
    assert doc["changes"][1]["after"]["actualState"] == {"ok": True, "states": ["MA", "NJ", "NY"]}
    assert doc["new"]["pairs"] == 12 and doc["old"]["pairs"] == 8
    # Only decisions fail: a new state alone passes.
    assert invoke("diff", str(base), str(new), "--fail-on", "decision").exit_code == 0
    never = invoke("diff", str(base), str(new), "--fail-on", "", "--json")
    assert never.exit_code == 0 and json.loads(never.stdout)["failOn"] == []


def test_a_partner_removed_is_coverage(tmp_path: Path, base: Path) -> None:
    new = bake(fixtures_with(tmp_path, "three", _remove_partner), tmp_path / "new")
    code, doc = diff_json(str(base), str(new))
    assert code == 1
    assert doc["counts"] == _counts(coverage=2)
    assert kinds(doc) == [
        ("coverage", "partner-removed", {"partner": "node-offshore-04"}),
        ("coverage", "geo-removed", {"nodeId": "node-offshore-04"}),
    ]
    assert doc["changes"][0]["before"] == {"pairs": 2, "allowed": 0}
    assert doc["changes"][0]["after"] is None
    # The other way round, the partner is added.
    code, back = diff_json(str(new), str(base))
    assert kinds(back) == [
        ("coverage", "partner-added", {"partner": "node-offshore-04"}),
        ("coverage", "geo-added", {"nodeId": "node-offshore-04"}),
    ]


def test_a_service_that_starts_lying(tmp_path: Path, base: Path) -> None:
    new = bake_lying(fixtures_with(tmp_path, "lie"), tmp_path / "new", "node-offshore-04", "MA")
    code, doc = diff_json(str(base), str(new))
    assert code == 1
    assert doc["counts"] == _counts(decision=1, self_check=2)
    decision, kind, check = doc["changes"]
    assert kind == {
        "class": "self-check",
        "kind": "disagreement",
        "concerns": {"field": "shadow.disagreements.allowedWithoutLicence"},
        "before": 0,
        "after": 1,
    }
    assert decision["concerns"] == {"state": "MA", "partner": "node-offshore-04"}
    assert decision["before"]["realAllowed"] is False and decision["after"]["realAllowed"] is True
    assert decision["after"]["shadowAllowed"] is False and decision["after"]["match"] is False
    assert check == {
        "class": "self-check",
        "kind": "check-changed",
        "concerns": {"check": "shadow"},
        "before": {"ok": True, "label": "Shadow mismatches 0"},
        "after": {"ok": False, "label": "Shadow mismatches 1"},
    }
    assert doc["failed"] == ["decision", "self-check"]


def test_plays_moving_out_of_the_window(tmp_path: Path) -> None:
    fixtures = fixtures_with(tmp_path, "fx")
    old = bake(fixtures, tmp_path / "old", "--deep-audit", str(PLAYS))
    new = bake(fixtures, tmp_path / "new", "--deep-audit", str(PLAYS), now="2027-02-10T00:00:00Z")
    code, doc = diff_json(str(old), str(new))
    assert code == 1
    assert doc["counts"] == _counts(coverage=1, cosmetic=5)
    counts = doc["changes"][0]
    assert counts["kind"] == "deep-audit-counts" and counts["class"] == "coverage"
    assert counts["before"] == {
        "days": 90,
        "mode": "enriched",
        "totalPlays": 20,
        "inWindowPlays": 16,
    }
    assert counts["after"]["inWindowPlays"] == 7
    assert counts["after"]["delta"] == {"totalPlays": 0, "inWindowPlays": -9}
    assert sorted(
        c["concerns"].get("field", c["concerns"].get("check")) for c in doc["changes"][1:]
    ) == [
        "deepAudit.command",
        "deepAudit.zipWindow.label",
        "generatedAt",
        "links.deepAudit",
        "zip-window",
    ]
    assert {c["class"] for c in doc["changes"][1:]} == {"cosmetic"}
    # Only coverage fails by default; cosmetic alone never does unless asked.
    assert invoke("diff", str(old), str(new), "--fail-on", "cosmetic").exit_code == 1
    assert invoke("diff", str(old), str(new), "--fail-on", "decision,self-check").exit_code == 0


def test_identical_inputs_exit_0_with_no_change(base: Path, tmp_path: Path) -> None:
    again = bake(fixtures_with(tmp_path, "again"), tmp_path / "again-out")
    code, doc = diff_json(str(base), str(again))
    assert (code, doc["changes"], doc["failed"]) == (0, [], [])
    assert doc["authenticated"] is True and "warning" not in doc
    later = bake(
        fixtures_with(tmp_path, "later"), tmp_path / "later-out", now="2026-11-23T04:06:00Z"
    )
    code, doc = diff_json(str(base), str(later))
    assert code == 0
    assert doc["counts"] == _counts(cosmetic=1)
    assert doc["changes"][0]["concerns"] == {"field": "generatedAt"}
    text = invoke("diff", str(base), str(later))
    assert text.exit_code == 0
    assert "no change that fails (cosmetic only) (exit 0)" in text.stdout


def test_positions_do_not_matter(base: Path, tmp_path: Path) -> None:
    reordered = bake(fixtures_with(tmp_path, "reordered", _reorder), tmp_path / "reordered-out")
    rows = json.loads((reordered / "api" / "compliance.json").read_text())["shadow"]["rows"]
    base_rows = json.loads((base / "api" / "compliance.json").read_text())["shadow"]["rows"]
    assert rows != base_rows  # the same pairs in another order
    code, doc = diff_json(str(base), str(reordered))
    assert (code, doc["changes"]) == (0, [])


def test_a_snapshot_file_is_a_side(base: Path, tmp_path: Path) -> None:
    new = bake(fixtures_with(tmp_path, "revoked", _revoke), tmp_path / "new")
    code, doc = diff_json(str(base / "api" / "compliance.json"), str(new))
    assert code == 1 and doc["counts"]["decision"] == 1
    assert doc["old"]["source"].endswith("api/compliance.json")


def test_a_side_baked_with_another_secret_is_refused(base: Path, tmp_path: Path) -> None:
    other = bake(fixtures_with(tmp_path, "other"), tmp_path / "other-out")
    env = {"REPORT_SIGNING_SECRET": OTHER_SECRET}
    result = invoke("diff", str(base), str(other), env=env)
    assert result.exit_code == 2 and result.stdout == ""
    assert "OLD" in result.stderr and "not authentic" in result.stderr
    assert "--unauthenticated" in result.stderr and OTHER_SECRET not in result.stderr


def test_without_a_secret_nothing_is_authentic(base: Path) -> None:
    env: Any = {"REPORT_SIGNING_SECRET": None}  # unset: no secret source at all
    result = invoke("diff", str(base), str(base), env=env)
    assert result.exit_code == 2, result.output
    assert "no report signing secret" in result.stderr


def test_unauthenticated_comparison_says_so_everywhere(base: Path, tmp_path: Path) -> None:
    new = bake(fixtures_with(tmp_path, "revoked", _revoke), tmp_path / "new")
    env = {"REPORT_SIGNING_SECRET": OTHER_SECRET}
    code, doc = diff_json(str(base), str(new), "--unauthenticated", env=env)
    assert code == 1 and doc["counts"]["decision"] == 1
    assert doc["authenticated"] is False and "UNAUTHENTICATED" in doc["warning"]
    assert doc["old"]["authentic"] is False and "does not match" in doc["old"]["checked"]
    text = invoke("diff", str(base), str(new), "--unauthenticated", env=env).stdout.splitlines()
    assert "UNAUTHENTICATED" in text[0] and any("UNAUTHENTICATED" in line for line in text[-3:])
    md = invoke("diff", str(base), str(new), "--unauthenticated", "--markdown", env=env).stdout
    lines = md.strip().splitlines()
    assert "UNAUTHENTICATED" in lines[0] and "UNAUTHENTICATED" in lines[-1]


def test_an_edited_snapshot_is_refused(base: Path, tmp_path: Path) -> None:
    edited = tmp_path / "edited.json"
    snapshot = json.loads((base / "api" / "compliance.json").read_text())
    row = next(r for r in snapshot["shadow"]["rows"] if r["realAllowed"])
    row.update(realAllowed=False, match=False, reason=f"Partner not licensed in {row['state']}")
    edited.write_text(json.dumps(snapshot))
    result = invoke("diff", str(base), str(edited))
    assert result.exit_code == 2
    assert "NEW" in result.stderr and "integrity.proof.digest does not match" in result.stderr
    code, doc = diff_json(str(base), str(edited), "--unauthenticated")
    assert code == 1 and doc["changes"][0]["class"] == "decision"


@pytest.mark.parametrize(
    ("side", "expected"),
    [
        ("missing-folder", "cannot read"),
        ("not-json.json", "not JSON"),
        ("not-snapshot.json", "not a snapshot"),
    ],
)
def test_bad_sides_are_one_line_exit_2(
    base: Path, tmp_path: Path, side: str, expected: str
) -> None:
    (tmp_path / "not-json.json").write_text("{nope")
    (tmp_path / "not-snapshot.json").write_text('{"ok": true}')
    result = invoke("diff", str(base), str(tmp_path / side))
    assert result.exit_code == 2, result.output
    assert result.stdout == "" and "Traceback" not in result.stderr
    assert expected in result.stderr and "(fix: " in result.stderr


def test_unknown_fail_on_class_is_usage_error(base: Path) -> None:
    result = invoke("diff", str(base), str(base), "--fail-on", "decision,typo")
    assert result.exit_code == 2
    assert "typo" in result.output


def test_human_output_fits_80_columns_and_counts_the_rest(tmp_path: Path) -> None:
    fixtures = fixtures_with(tmp_path, "fx")
    old = bake(fixtures, tmp_path / "old", "--deep-audit", str(PLAYS))
    new = bake(fixtures, tmp_path / "new", "--deep-audit", str(PLAYS), now="2027-02-10T00:00:00Z")
    result = invoke("diff", str(old), str(new), "--limit", "2")
    lines = result.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert lines.index("coverage (1)") < lines.index("cosmetic (5)")
    assert "  ... and 3 more (--limit, or --json for all)" in lines
    assert "changes: decision 0, coverage 1, self-check 0, cosmetic 5" in lines
    md = invoke("diff", str(old), str(new), "--markdown", "--limit", "2").stdout
    assert "| coverage | 1 |" in md and "- ... and 3 more" in md


def test_decisions_come_first(tmp_path: Path) -> None:
    old = bake(fixtures_with(tmp_path, "fx", _add_state), tmp_path / "old")
    both = fixtures_with(
        tmp_path, "fx2", lambda lic, geo: (_add_state(lic, geo), _revoke(lic, geo))
    )
    new = bake(both, tmp_path / "new", now="2026-11-23T00:00:00Z")
    lines = invoke("diff", str(old), str(new)).stdout.splitlines()
    assert lines.index("decision (1)") < lines.index("cosmetic (1)")


def _row(state: str, partner: str, real: bool, licence: str | None = "active") -> dict[str, Any]:
    row: dict[str, Any] = {
        "state": state,
        "partner": partner,
        "licenseStatus": licence,
        "realAllowed": real,
        "shadowAllowed": licence == "active",
        "match": real is (licence == "active"),
    }
    if not real:
        row["reason"] = f"Partner not licensed in {state}"
    return row


def test_pair_classes_and_pairs_outside_a_full_matrix() -> None:
    from compliance_bake.diff.pairs import pair_changes as typed_pair_changes
    from compliance_bake.report.models import ShadowRow

    def pair_changes(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> Any:
        return typed_pair_changes(*([ShadowRow.from_json(r) for r in rows] for rows in (old, new)))

    old = [_row("MA", "a", True), _row("MA", "b", False, "suspended"), _row("NJ", "a", False, None)]
    new = [_row("MA", "b", False, None), _row("MA", "a", True), _row("NJ", "b", False, None)]
    changes = pair_changes(old, new)
    assert [(c.cls.value, c.kind, c.concerns) for c in changes] == [
        ("coverage", "pair-added", {"state": "NJ", "partner": "b"}),
        ("coverage", "pair-removed", {"state": "NJ", "partner": "a"}),
        ("coverage", "pair-changed", {"state": "MA", "partner": "b"}),
    ]
    assert changes[2].before["licenseStatus"] == "suspended"
    assert changes[2].after["licenseStatus"] is None
    # Same positions: a reason alone is cosmetic, a shadow disagreement is a self-check.
    worded = dict(old[2], reason="Partner not licensed in NJ (revoked)")
    lying_shadow = dict(old[0], shadowAllowed=False, match=False)
    changes = pair_changes(old, [lying_shadow, old[1], worded])
    assert [(c.cls.value, c.concerns["partner"], c.concerns["state"]) for c in changes] == [
        ("self-check", "a", "MA"),
        ("cosmetic", "a", "NJ"),
    ]
    assert changes[1].before == {"reason": "Partner not licensed in NJ"}


def test_authentication_holds_and_fails_closed(base: Path, tmp_path: Path) -> None:
    """Both sides authenticated in this process: the secret's HMACs hold; another secret, an
    edited side and a side that is not a snapshot are refused, each naming its side."""
    from compliance_bake.diff.run import run_diff
    from compliance_bake.errors import InputError
    from compliance_bake.signing.secret import Secret
    from tests.conftest import SECRET

    new = bake(fixtures_with(tmp_path, "revoked", _revoke), tmp_path / "new")
    secret = Secret(SECRET, "test")
    found = run_diff(str(base), str(new), secret=secret)
    assert found.authenticated and found.counts[found.changes[0].cls] == 1
    with pytest.raises(InputError, match="OLD .* not authentic: .*another secret"):
        run_diff(str(base), str(new), secret=Secret(OTHER_SECRET, "test"))
    edited = tmp_path / "edited.json"
    snapshot = json.loads((new / "api" / "compliance.json").read_text())
    snapshot["geo"]["partners"][0]["age"] += 1
    edited.write_text(json.dumps(snapshot))
    with pytest.raises(InputError, match="NEW .* not authentic: integrity.proof.digest"):
        run_diff(str(base), str(edited), secret=secret)
    not_a_snapshot = tmp_path / "not-a-snapshot.json"
    not_a_snapshot.write_text('{"ok": true, "shadow": {"rows": []}}')
    with pytest.raises(InputError, match="NEW .* not a snapshot: "):
        run_diff(str(base), str(not_a_snapshot), secret=secret)


def test_a_public_key_authenticates_out_folders(tmp_path: Path) -> None:
    from tests._attest_helpers import mint

    key, stranger = mint(tmp_path), mint(tmp_path, "stranger.pem")
    fixtures = fixtures_with(tmp_path, "fx")
    signed = ("--signing-key", str(key.private))
    old = bake(fixtures, tmp_path / "old", *signed)
    new = bake(fixtures_with(tmp_path, "revoked", _revoke), tmp_path / "new", *signed)
    no_secret: Any = {"REPORT_SIGNING_SECRET": None}
    code, doc = diff_json(str(old), str(new), "--public-key", str(key.public), env=no_secret)
    assert code == 1 and doc["counts"]["decision"] == 1 and doc["authenticated"] is True
    assert doc["old"]["checked"] == (
        f"Ed25519 attestation attestation/compliance.intoto.json, public key {key.key_id}"
    )
    # Another key, or a snapshot file (no attestation beside it): refused.
    result = invoke("diff", str(old), str(new), "--public-key", str(stranger.public), env=no_secret)
    assert result.exit_code == 2 and "OLD" in result.stderr and "public key" in result.stderr
    file_side = str(old / "api" / "compliance.json")
    result = invoke("diff", file_side, str(new), "--public-key", str(key.public), env=no_secret)
    assert result.exit_code == 2 and "no attestation beside it" in result.stderr
    # An edited file of the folder breaks the attestation.
    portal = new / "portal" / "compliance" / "index.html"
    portal.write_bytes(portal.read_bytes() + b" ")
    result = invoke("diff", str(old), str(new), "--public-key", str(key.public), env=no_secret)
    assert result.exit_code == 2 and "NEW" in result.stderr and "sha256 differs" in result.stderr


def test_url_sides_against_serve_on_loopback(tmp_path: Path) -> None:
    from compliance_bake.identity.keyfile import mint_key
    from tests.support.live_service import LiveService

    old = bake(fixtures_with(tmp_path, "fx"), tmp_path / "old")
    served = bake(fixtures_with(tmp_path, "revoked", _revoke), tmp_path / "served")
    keys_file = tmp_path / "agent-keys.json"
    mint_key(keys_file, "test")
    with LiveService(keys_file=keys_file, out_dir=served, cwd=tmp_path) as live:
        url = f"{live.url}/api/compliance"
        code, doc = diff_json(str(old), url)
        assert code == 1 and doc["counts"] == _counts(decision=1)
        assert doc["new"]["source"] == url and doc["new"]["authentic"] is True
        # The served snapshot is the file on disk: no change between them.
        code, doc = diff_json(url, str(served))
        assert (code, doc["changes"]) == (0, [])
        missing = invoke("diff", str(old), f"{live.url}/api/nothing-here")
        assert missing.exit_code == 3 and missing.stdout == ""
        assert "NEW " in missing.stderr and "404" in missing.stderr
        port = live.url.rsplit(":", 1)[1]
    gone = invoke("diff", f"http://127.0.0.1:{port}/api/compliance", str(old))
    assert gone.exit_code == 3 and "OLD http://127.0.0.1:" in gone.stderr
    assert "Traceback" not in gone.stderr
