"""`bake snapshot --waivers` against the tests' regulatory Bun service with one partner's
identity made unverified: the bake fails without waivers, passes "with 1
waiver" with one for that pair before its expiry, fails naming the waiver after it, reports an
unused waiver, and records the waivers in the signed snapshot that `verify` re-derives."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import invoke
from tests.targets.bun_services import REGULATORY, bun_running
from tests.targets.test_regulatory_service import PROFILE, _post

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
    with bun_running(REGULATORY) as url:
        status, _ = _post(f"{url}/test/identity", {"nodeId": PARTNER, "verified": False})
        assert status == 200
        yield url


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
    assert "waived: 1 blocked for another reason with an active licence" in result.output
    assert "Waivers: 1 applied, 1 item waived" in result.output
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
    github = tmp_path / "github.txt"
    markdown = tmp_path / "summary.md"
    reported = _bake(
        tmp_path / "r", service, BEFORE, "--waivers", str(file),
        "--report", f"json:{report}", "--report", f"junit:{junit}",
        "--report", f"github:{github}", "--report", f"markdown:{markdown}",
    )  # fmt: skip
    assert reported.exit_code == 0
    assert json.loads(report.read_text())["verdict"] == "PASS with 1 waiver (until 2026-12-31)"
    assert JUSTIFICATION in junit.read_text() and "<skipped" in junit.read_text()
    assert "PASS with 1 waiver (until 2026-12-31)" in github.read_text()
    assert r"**PASS with 1 waiver \(until 2026-12-31\)** (exit 0)" in markdown.read_text()


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


def _waived_bake(service: str, tmp_path: Path, *extra: str) -> Path:
    tmp_path.mkdir(exist_ok=True)
    out = tmp_path / "out"
    file = _waivers(tmp_path, WAIVER + UNUSED)
    result = _bake(out, service, BEFORE, "--waivers", str(file), *extra)
    assert result.exit_code == 0, result.output
    return out


def _edit(out: Path, change: Any) -> None:
    """Edit the recorded snapshot in out/, written back in the baked layout."""
    from compliance_bake.inputs.jsonio import dumps_pretty

    path = out / "api" / "compliance.json"
    doc = json.loads(path.read_text())
    change(doc)
    path.write_bytes(dumps_pretty(doc))


def test_verify_says_compliant_with_1_waiver(service: str, tmp_path: Path) -> None:
    out = _waived_bake(service, tmp_path)
    verified = invoke("verify", str(out))
    assert verified.exit_code == 0, verified.output
    assert "compliant with 1 waiver (until 2026-12-31): every rule holds" in verified.output
    assert _last(verified.output).startswith(
        "PASS: verified, compliant with 1 waiver (until 2026-12-31)"
    )
    as_json = json.loads(invoke("verify", str(out), "--json").output)
    assert as_json["compliant"]["waived"] == "compliant with 1 waiver (until 2026-12-31)"
    single = invoke("verify", str(out / "api" / "compliance.json"))
    assert single.exit_code == 0, single.output
    assert "compliant with 1 waiver" in single.output


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d["waivers"]["waivers"][0].update(expires="2026-11-21"),
        lambda d: d["waivers"]["waivers"][0].update(justification="all fine, nothing to see"),
        lambda d: d["waivers"]["waivers"][0].update(partner="node-bay-01"),
        lambda d: d["waivers"]["waivers"][1].update(status="applied"),
        lambda d: d.pop("waivers"),
    ],
)
def test_an_edited_waiver_record_makes_verify_exit_1(
    service: str, tmp_path: Path, change: Any
) -> None:
    out = _waived_bake(service, tmp_path)
    _edit(out, change)
    verified = invoke("verify", str(out))
    assert verified.exit_code == 1, verified.output
    assert "integrity.proof.digest does not match" in verified.output


def test_a_resigned_record_that_does_not_follow_from_its_waivers_fails(
    service: str, tmp_path: Path
) -> None:
    """Re-signed with the secret (so the digests hold), a record whose waived items do not
    follow from its waivers at generatedAt still fails verify: a waiver already expired, or an
    item marked waived by a waiver that does not match it."""
    from compliance_bake.signing.proofs import reseal_integrity
    from tests.conftest import SECRET

    def expire(doc: dict[str, Any]) -> None:
        doc["waivers"]["waivers"][0]["expires"] = "2026-11-21"  # before generatedAt
        proof = doc["integrity"]["proof"]
        doc["integrity"]["proof"] = reseal_integrity(
            doc, proof["bunVersion"], proof["generatedAt"], SECRET
        )

    out = _waived_bake(service, tmp_path)
    _edit(out, expire)
    verified = invoke("verify", str(out))
    assert verified.exit_code == 1, verified.output
    assert "line 1 (NJ node-shore-02): recorded applied, derived expired" in verified.output
    assert "recorded disagreement blocked for another reason" in verified.output


def test_a_waiver_cannot_make_a_tampered_or_unsigned_snapshot_pass(
    service: str, tmp_path: Path
) -> None:
    out = _waived_bake(service, tmp_path)
    _edit(out, lambda d: d["shadow"]["rows"][0].update(reason="edited"))
    tampered = invoke("verify", str(out))
    assert tampered.exit_code == 1, tampered.output
    assert "compliant with" not in _last(tampered.output)
    unsigned = _waived_bake(service, tmp_path / "u")
    _edit(unsigned, lambda d: d["integrity"]["proof"].update(hmac="0" * 64))
    result = invoke("verify", str(unsigned))
    assert result.exit_code == 1, result.output
    assert "integrity.proof.hmac does not match" in result.output


def test_rebakes_with_the_same_waivers_are_byte_identical(service: str, tmp_path: Path) -> None:
    first = _waived_bake(service, tmp_path / "a")
    second = _waived_bake(service, tmp_path / "b")
    names = sorted(p.relative_to(first) for p in first.rglob("*") if p.is_file())
    assert names == sorted(p.relative_to(second) for p in second.rglob("*") if p.is_file())
    for name in names:
        assert (first / name).read_bytes() == (second / name).read_bytes(), name


def test_the_attestation_predicate_and_the_log_entry_hold_the_waivers(
    service: str, tmp_path: Path
) -> None:
    import base64

    from tests._attest_helpers import mint

    key = mint(tmp_path)
    log = tmp_path / "log"
    out = _waived_bake(
        service, tmp_path / "signed", "--signing-key", str(key.private), "--log", str(log),
        "--log-origin", "compliance.example.com/registry",
    )  # fmt: skip
    snap = json.loads((out / "api" / "compliance.json").read_text())
    envelope = json.loads((out / "attestation" / "compliance.intoto.json").read_text())
    predicate = json.loads(base64.b64decode(envelope["payload"]))["predicate"]
    assert predicate["waivers"] == {
        "sha3": snap["waivers"]["sha3"], "applied": 1, "until": "2026-12-31", "waived": 1,
    }  # fmt: skip
    verified = invoke(
        "verify", str(out), "--public-key", str(key.public), "--log", str(log)
    )  # fmt: skip
    assert verified.exit_code == 0, verified.output
    assert "compliant with 1 waiver" in verified.output
    entries = invoke("log", "verify", str(log), "--public-key", str(key.public), "--json")
    assert entries.exit_code == 0, entries.output
    (entry,) = json.loads(entries.output)["entries"]
    assert entry["integrityDigest"] == snap["integrity"]["proof"]["digest"]
    assert entry["verdict"]["ok"] is True  # the one failing row is waived
    assert entry["verdict"]["waivers"] == predicate["waivers"]
    # Tampering with the recorded waiver breaks the attestation too (its subject's SHA-256).
    _edit(out, lambda d: d["waivers"]["waivers"][0].update(expires="2026-12-30"))
    tampered = invoke("verify", str(out), "--public-key", str(key.public))
    assert tampered.exit_code == 1, tampered.output
    assert "attestation" in tampered.output


def test_diff_lists_the_waiver_added_and_then_expired(service: str, tmp_path: Path) -> None:
    failing = tmp_path / "failing"
    assert _bake(failing, service, BEFORE).exit_code == 1
    waived = _waived_bake(service, tmp_path / "w")
    result = invoke("diff", str(failing), str(waived))
    assert result.exit_code == 1, result.output  # a self-check change
    text = " ".join(result.output.split())
    assert (
        f"waiver added: NJ node-shore-02 until 2026-12-31 (applied, 1 items): {JUSTIFICATION} "
        "(approved by j.doe (compliance officer))"
    ) in text
    assert "waiver added: MA node-bay-01 allowedWithoutLicence until 2026-12-15 (unused" in text
    expired = tmp_path / "expired"
    file = _waivers(tmp_path, WAIVER + UNUSED)
    assert _bake(expired, service, AFTER, "--waivers", str(file)).exit_code == 1
    later = invoke("diff", str(waived), str(expired), "--json")
    changes = [c for c in json.loads(later.output)["changes"] if c["kind"].startswith("waiver-")]
    assert [(c["kind"], c["concerns"]["waiver"]) for c in changes] == [
        ("waiver-expired", "NJ node-shore-02"),
        ("waiver-expired", "MA node-bay-01 allowedWithoutLicence"),
    ]
    renewed = tmp_path / "renewed"
    file.write_text(WAIVER.replace("2026-12-31", "2027-01-31") + UNUSED)
    assert _bake(renewed, service, BEFORE, "--waivers", str(file)).exit_code == 0
    again = invoke("diff", str(waived), str(renewed), "--json")
    kinds = [c["kind"] for c in json.loads(again.output)["changes"] if "waiver" in c["kind"]]
    assert kinds == ["waiver-renewed"]


def test_the_portal_shows_the_waived_row_apart_at_1280_and_390(
    service: str, tmp_path: Path
) -> None:
    from tests.report.test_portal_browser import ARGS, CHROMIUM, fits_and_shot

    out = _waived_bake(service, tmp_path)
    page_path = out / "portal" / "compliance" / "index.html"
    html = page_path.read_text()
    assert "Compliant with 1 waiver (until 2026-12-31)" in html
    assert "<title>PASS" in html
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            for width in (1280, 390):
                context = browser.new_context(viewport={"width": width, "height": 900})
                page = context.new_page()
                page.goto(page_path.resolve().as_uri())
                banner = page.locator("#verdict").inner_text()
                assert banner.startswith("PASS Compliant with 1 waiver (until 2026-12-31)")
                table = page.locator("#waivers-table")
                assert table.is_visible()
                applied = table.locator("tr.waiver-applied").inner_text()
                assert "NJ node-shore-02" in applied and JUSTIFICATION in applied
                assert "j.doe (compliance officer)" in applied and "2026-12-31" in applied
                assert "Identity verification required in NJ" in applied
                unused = table.locator("tr.waiver-unused").inner_text()
                assert "unused: nothing to waive" in unused
                fits_and_shot(page, width, "portal-waived")
                context.close()
        finally:
            browser.close()


def test_hostile_waiver_text_is_escaped_in_the_terminal_and_the_page(
    service: str, tmp_path: Path
) -> None:
    hostile = '<img src=x onerror=\\"window.__pwned=1\\">\\u001b[31mred'
    file = _waivers(tmp_path, WAIVER.replace(JUSTIFICATION, hostile))
    out = tmp_path / "out"
    result = _bake(out, service, BEFORE, "--waivers", str(file))
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output
    page = (out / "portal" / "compliance" / "index.html").read_text()
    assert "<img src=x" not in page and "&lt;img src=x" in page
    assert invoke("verify", str(out)).exit_code == 0


def test_a_failing_page_leaves_the_waived_pair_out_of_its_banner(
    service: str, tmp_path: Path
) -> None:
    """node-corridor-03 unverified too (MA and NJ fail), node-shore-02 waived: the page fails
    naming one NJ pair and one MA pair, not the waived one."""
    status, _ = _post(f"{service}/test/identity", {"nodeId": "node-corridor-03", "verified": False})
    assert status == 200
    out = tmp_path / "out"
    result = _bake(out, service, BEFORE, "--waivers", str(_waivers(tmp_path, WAIVER)))
    assert result.exit_code == 1, result.output
    page = (out / "portal" / "compliance" / "index.html").read_text()
    banner = page.split('id="verdict"', 1)[1].split("</div>", 1)[0]
    assert banner.count("1 pair") == 2, banner  # MA and NJ: node-corridor-03 only
    assert 'class="waiver-applied"' in page
    assert invoke("verify", str(out)).exit_code == 1  # the unwaived pairs fail verify too


def test_a_bad_waiver_leaves_an_earlier_bake_intact(service: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert _bake(out, service, BEFORE).exit_code == 1  # written: the failure is recorded
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    file = _waivers(tmp_path, WAIVER.replace('"NJ"', '"NY"'))
    result = _bake(out, service, BEFORE, "--waivers", str(file))
    assert result.exit_code == 2, result.output
    assert f"{file}:1: [[waiver]]: unknown state 'NY'" in result.output
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
