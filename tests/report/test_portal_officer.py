"""What an officer reads on the page of a real bake: no path of the baking machine, the signer,
and the failing audit's reasons and plays; `verify` re-renders that page from the snapshot and
the facts the page states."""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from compliance_bake.report.portal import read_facts, render_portal
from compliance_bake.resources import demo_fixtures_dir
from tests.conftest import NOW, SECRET, invoke

PLAYS = (
    "play_id,partner,state,zip,placed_at,enriched_at,wager_type,stake\n"
    "p1,node-bay-01,MA,07102,2026-11-01T00:00:00Z,2026-11-01T00:00:00Z,x,1\n"
    "p2,node-bay-01,NY,10001,2026-11-01T00:00:00Z,2026-11-01T00:00:00Z,x,1\n"
    "p3,node-shore-02,NJ,07102,2026-11-01T00:00:00Z,2026-11-01T00:00:00Z,x,1\n"
)


@pytest.fixture()
def machine(tmp_path: Path) -> dict[str, Path]:
    """Fixtures, plays, secret and signing key in a temporary folder, baked into out/."""
    root = tmp_path / "baking-machine-home"
    fixtures = root / "my-fixtures"
    shutil.copytree(demo_fixtures_dir(), fixtures)
    plays = root / "data" / "plays-2026.csv"
    plays.parent.mkdir(parents=True)
    plays.write_text(PLAYS)
    secret = root / "secret.txt"
    secret.write_text(SECRET)
    secret.chmod(0o600)
    key = root / "keys" / "signing.pem"
    key.parent.mkdir()
    minted = invoke("signing-key", "mint", "--key-file", str(key))
    assert minted.exit_code == 0, minted.output
    out = root / "out"
    baked = invoke(
        "bake", "snapshot", "--fixtures", str(fixtures), "--out", str(out), "--now", NOW,
        "--deep-audit", str(plays), "--secret-file", str(secret), "--signing-key", str(key),
    )  # fmt: skip
    assert baked.exit_code == 1, baked.output  # p1 and p2 break the window
    return {"root": root, "out": out, "key": key, "public": key.with_name("signing.pub.pem")}


def _page(out: Path) -> str:
    return (out / "portal" / "compliance" / "index.html").read_text(encoding="utf-8")


def test_no_path_of_the_baking_machine_is_on_the_page(machine: dict[str, Path]) -> None:
    page = _page(machine["out"])
    snapshot = (machine["out"] / "api" / "compliance.json").read_text(encoding="utf-8")
    assert str(machine["root"]) in snapshot  # the snapshot's command names the plays path
    assert str(machine["root"]) not in page and "baking-machine-home" not in page
    assert str(Path.home()) not in page and "/tmp/" not in page
    assert "plays-2026.csv" in page  # named by its file name


def test_the_signer_is_named_with_the_attestation_and_the_command(
    machine: dict[str, Path],
) -> None:
    page = _page(machine["out"])
    facts = read_facts(page.encode("utf-8"))
    assert facts is not None and facts.key_id is not None
    assert re.fullmatch("[0-9a-f]{64}", facts.key_id)
    signer = page[page.index('id="signer"') : page.index('id="failed"')]
    assert f'<span class="mono digest" id="signer-key">{facts.key_id}</span>' in signer
    href = re.search(r'<a href="([^"]+)">attestation/compliance.intoto.json</a>', signer)
    assert href and (machine["out"] / "portal" / "compliance" / href.group(1)).resolve().is_file()
    assert "compliance-bake verify https://HOST/api/compliance.json --public-key" in signer
    envelope = machine["out"] / "attestation" / "compliance.intoto.json"
    attestation = json.loads(envelope.read_text(encoding="utf-8"))
    assert [s["keyid"] for s in attestation["signatures"]] == [facts.key_id]


def test_the_failing_audit_shows_its_reasons_and_first_plays(machine: dict[str, Path]) -> None:
    page = _page(machine["out"])
    assert page.index('id="failed"') < page.index('id="deep-audit"') < page.index('id="board"')
    reasons = re.findall(
        r'<tr class="cell-mismatch"><td>[^<]*<span class="muted">\(<code>([a-z-]+)</code>\)'
        r"</span></td><td>(\d+)</td></tr>",
        page,
    )
    assert reasons == [("zip-in-other-state", "1"), ("state-not-regulated", "1")]
    sample = re.findall(r"<tr><td><code>(p\d)</code></td><td>([^<]*)</td>", page)
    assert sample == [("p1", "plays-2026.csv:2"), ("p2", "plays-2026.csv:3")]  # file name: line
    verdict = page[page.index('id="verdict"') : page.index("</header>")]
    assert "FAIL" in verdict and "2 checks failed" in verdict  # by reason, counted once
    assert "1 play in the ZIP window: zip in other state" in verdict


def test_verify_holds_the_page_to_the_snapshot_and_its_facts(machine: dict[str, Path]) -> None:
    out, public = machine["out"], machine["public"]
    ok = invoke("verify", str(out), "--public-key", str(public))
    assert "portal page differs" not in ok.output and "authentic: yes" in ok.output
    path = out / "portal" / "compliance" / "index.html"
    page = path.read_text(encoding="utf-8")
    path.write_text(page.replace("<td>1</td></tr>", "<td>0</td></tr>", 1), encoding="utf-8")
    edited = invoke("verify", str(out), "--public-key", str(public))
    assert "portal page differs" in edited.output and "authentic: NO" in edited.output


def test_verify_refuses_a_page_that_names_another_signer(machine: dict[str, Path]) -> None:
    """The page re-rendered with the facts of another key (or of none): it renders the snapshot
    and its own facts, but the signer it names is not the attestation's."""
    out = machine["out"]
    path = out / "portal" / "compliance" / "index.html"
    facts = read_facts(path.read_bytes())
    assert facts is not None
    snapshot = json.loads((out / "api" / "compliance.json").read_bytes())
    for forged in (None, "ab" * 32):
        path.write_bytes(render_portal(snapshot, facts=replace(facts, key_id=forged)))
        result = invoke("verify", str(out))  # the secret only: the attestation is not checked
        assert result.exit_code == 1
        assert f"portal page names the signer {forged or '(none)'}" in result.output
        assert f"the attestation's signers are {facts.key_id}" in result.output


def test_a_sample_without_lines_has_no_line_column(machine: dict[str, Path]) -> None:
    """Plays without a line (a Parquet file, standard input): no Line column, no dashes."""
    page = _page(machine["out"]).encode("utf-8")
    facts = read_facts(page)
    assert facts is not None and "<th>Line</th>" in page.decode("utf-8")
    unplaced = tuple({k: v for k, v in play.items() if k != "line"} for play in facts.sample)
    snapshot = json.loads((machine["out"] / "api" / "compliance.json").read_bytes())
    again = render_portal(snapshot, facts=replace(facts, sample=unplaced)).decode("utf-8")
    assert "<th>Line</th>" not in again and "<td>-</td>" not in again
    assert re.findall(r"<tr><td><code>(p\d)</code></td><td>([^<]*)</td>", again) == [
        ("p1", "zip-in-other-state"), ("p2", "state-not-regulated")
    ]  # fmt: skip


def test_the_proofs_speak_an_officers_words(tmp_path: Path) -> None:
    """The proofs section says what each check means and what a seal is, in words: no label
    recorded for machines ("Enhancements 8/8", "Geo profiles discrete (state/age/location/zip)"),
    no "Block" or "Algorithm" column."""
    from tests.conftest import bake_deep_demo

    out = bake_deep_demo(tmp_path / "out")
    page = _page(out)
    proofs = page[page.index('id="proofs"') : page.index('id="geo"')]
    snapshot = json.loads((out / "api" / "compliance.json").read_text(encoding="utf-8"))
    checks = snapshot["integrity"]["checks"]
    ids = {"enhancements", "shadow", "sha3", "hmac", "geo", "zip-window"}
    assert {c["id"] for c in checks} == ids
    for check in checks:
        assert check["label"] not in proofs, check["label"]
        assert f"(check <code>{check['id']}</code>)" in proofs
    for jargon in ("Enhancements", "discrete", "state/age/location/zip", ">Block<", ">Algorithm<"):
        assert jargon not in proofs, jargon
    for words in (
        "Each self-check of the running service holds (8 of 8 hold)",
        "The service decides each of the 8 partner-state pairs as the licence registry does "
        "(0 pairs differ)",
        "Each partner's geo profile names one state, one age, one location and one ZIP code",
        "No play in the 90-day ZIP window breaks it (16 of 20 plays fall in the window)",
        "<th>Part of the snapshot</th><th>Sealed with</th>",
    ):
        assert words in proofs, words
