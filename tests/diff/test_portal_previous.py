"""`bake snapshot --previous OLD`: the portal's "since the previous snapshot" section.

Real bakes of two fixture sets that differ in one known way (a licence revoked), through the CLI;
`verify` re-renders the section from the record in the signed attestation and compares bytes.
"""

from __future__ import annotations

import base64
import copy
import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from compliance_bake.report.portal import render_portal
from compliance_bake.report.portal_previous import seal
from compliance_bake.signing.attestation import render_attestation
from compliance_bake.signing.signing_key import load_signing_key
from tests._attest_helpers import KeyPair, mint
from tests._diff_helpers import bake, fixtures_with
from tests.conftest import OTHER_SECRET, SECRET, invoke

LATER = "2026-11-23T04:06:00Z"
EXTRA = "node-extra-05"
PORTAL = Path("portal/compliance/index.html")
ATTESTATION = Path("attestation/compliance.intoto.json")


def _with_extra(licences: dict[str, Any], geo: dict[str, Any]) -> None:
    """A fifth partner licensed in MA and NJ (so revoking one licence keeps every role)."""
    licences["partners"].append(
        {
            "nodeId": EXTRA,
            "licences": [
                {"state": "MA", "status": "active", "licenceNumber": "MA-X-2026-0005"},
                {"state": "NJ", "status": "active", "licenceNumber": "NJ-X-2026-0005"},
            ],
        }
    )
    profile = dict(geo["partners"][2], nodeId=EXTRA)
    geo["partners"].append(profile)


def _revoked(licences: dict[str, Any], geo: dict[str, Any]) -> None:
    _with_extra(licences, geo)
    licences["partners"][-1]["licences"].pop()  # NJ revoked


class _Section(HTMLParser):
    """The text of the previous section's decision table, row by row, and every tag seen."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self.tags: set[str] = set()
        self._in_table = False
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        if tag == "table" and ("id", "previous-decisions") in attrs:
            self._in_table = True
        elif self._in_table and tag == "tr":
            self.rows.append([])
        elif self._in_table and tag == "td":
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self._in_table = False
        elif tag == "td" and self._cell is not None:
            self.rows[-1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def _decision_rows(page: bytes) -> list[list[str]]:
    parser = _Section()
    parser.feed(page.decode("utf-8"))
    return [row for row in parser.rows if row]


def _predicate(out: Path) -> dict[str, Any]:
    envelope = json.loads((out / ATTESTATION).read_bytes())
    statement: dict[str, Any] = json.loads(base64.b64decode(envelope["payload"]))
    return statement["predicate"]


@pytest.fixture
def pair(tmp_path: Path) -> tuple[KeyPair, Path, Path]:
    """(key, old out/, new out/ baked with --previous old)."""
    key = mint(tmp_path)
    signed = ("--signing-key", str(key.private))
    old = bake(fixtures_with(tmp_path, "base", _with_extra), tmp_path / "old", *signed)
    new = bake(
        fixtures_with(tmp_path, "revoked", _revoked),
        tmp_path / "new",
        *signed,
        "--previous",
        str(old),
        now=LATER,
    )
    return key, old, new


def _verify(out: Path, *extra: str, env: dict[str, Any] | None = None) -> Any:
    return invoke("verify", str(out), *extra, env=env)


def test_the_portal_shows_the_revoked_licence_and_verifies(
    pair: tuple[KeyPair, Path, Path], tmp_path: Path
) -> None:
    key, old, new = pair
    page = (new / PORTAL).read_bytes()
    assert b'<h2 id="previous">Since the previous snapshot</h2>' in page
    assert _decision_rows(page) == [
        ["NJ", EXTRA, "allow \u2192 block", "allow \u2192 block", "active \u2192 none", "yes"]
    ]
    record = _predicate(new)["previous"]
    assert record["counts"] == {"decision": 1, "coverage": 0, "self-check": 0, "cosmetic": 1}
    assert record["decisionsTotal"] == 1 and record["authenticated"] is True
    assert record["source"] == str(old)
    old_snapshot = json.loads((old / "api/compliance.json").read_bytes())
    assert record["integrityDigest"] == old_snapshot["integrity"]["proof"]["digest"]
    # Presentation only: every other file is byte for byte the bake without --previous.
    plain = bake(
        fixtures_with(tmp_path, "plain", _revoked),
        tmp_path / "plain-out",
        "--signing-key",
        str(key.private),
        now=LATER,
    )
    for name in ("api/compliance.json", "registry/compliance-shadow.json"):
        assert (new / name).read_bytes() == (plain / name).read_bytes()
    assert (plain / PORTAL).read_bytes() != page
    assert "previous" not in _predicate(plain)
    # verify: with the secret, with the public key alone, and with both.
    assert _verify(new).exit_code == 0
    no_secret: Any = {"REPORT_SIGNING_SECRET": None}
    assert _verify(new, "--public-key", str(key.public), env=no_secret).exit_code == 0
    assert _verify(new, "--public-key", str(key.public)).exit_code == 0
    # Deterministic: the same bake again gives the same bytes.
    again = bake(
        tmp_path / "revoked",  # the same registry folder (the policy file names it)
        tmp_path / "again-bake" / new.name,  # a folder of that name: the page names it
        "--signing-key",
        str(key.private),
        "--previous",
        str(old),
        now=LATER,
    )
    assert (again / PORTAL).read_bytes() == page
    assert (again / ATTESTATION).read_bytes() == (new / ATTESTATION).read_bytes()


def test_a_tampered_section_fails_verify(pair: tuple[KeyPair, Path, Path]) -> None:
    key, _, new = pair
    page = (new / PORTAL).read_bytes()
    (new / PORTAL).write_bytes(page.replace(b"<td>NJ</td>", b"<td>MA</td>", 1))
    result = _verify(new)
    assert result.exit_code == 1
    assert "portal page differs from the rendering of the snapshot and its previous" in (
        result.output
    )
    no_secret: Any = {"REPORT_SIGNING_SECRET": None}
    assert _verify(new, "--public-key", str(key.public), env=no_secret).exit_code == 1
    # The section removed (the page as a bake without --previous would write it): fails too.
    snapshot = json.loads((new / "api/compliance.json").read_bytes())
    (new / PORTAL).write_bytes(render_portal(snapshot))
    assert _verify(new).exit_code == 1


def test_a_forged_record_fails_verify(pair: tuple[KeyPair, Path, Path]) -> None:
    """A forger re-renders the page from an edited record and even re-signs the attestation
    with the signing key: without the report signing secret the record's HMAC does not hold."""
    key, _, new = pair
    snapshot = json.loads((new / "api/compliance.json").read_bytes())
    record = copy.deepcopy(_predicate(new)["previous"])
    record["decisions"][0]["concerns"]["partner"] = "node-bay-01"
    for forged, secret in ((record, None), (seal(record, OTHER_SECRET), OTHER_SECRET)):
        page = render_portal(snapshot, forged)
        files = {name: (new / name).read_bytes() for name in _subject_names(new)}
        files[str(PORTAL)] = page
        signing_key = load_signing_key(key.private, "test")
        (new / PORTAL).write_bytes(page)
        (new / ATTESTATION).write_bytes(render_attestation(files, snapshot, signing_key, forged))
        result = _verify(new)
        assert result.exit_code == 1, secret
        assert "attestation predicate.previous.hmac does not match" in result.output
    # An honest record of another snapshot (another bake's) is refused by its `snapshot` field.
    other = seal(dict(record, snapshot="0" * 64), SECRET)
    (new / PORTAL).write_bytes(render_portal(snapshot, other))
    files = {name: (new / name).read_bytes() for name in _subject_names(new)}
    signing_key = load_signing_key(key.private, "test")
    (new / ATTESTATION).write_bytes(render_attestation(files, snapshot, signing_key, other))
    result = _verify(new)
    assert result.exit_code == 1 and "names another snapshot" in result.output


def _subject_names(out: Path) -> list[str]:
    return [
        str(p.relative_to(out))
        for p in sorted(out.rglob("*"))
        if p.is_file() and p.relative_to(out) != ATTESTATION
    ]


def test_without_a_key_verify_renders_the_section_and_says_it_is_unauthenticated(
    pair: tuple[KeyPair, Path, Path],
) -> None:
    _, _, new = pair
    no_secret: Any = {"REPORT_SIGNING_SECRET": None}
    result = _verify(new, "--digests-only", "--json", env=no_secret)
    report = json.loads(result.stdout)
    assert result.exit_code == 0 and report["failures"] == []
    notes = report["notes"]
    assert any("previous-snapshot section" in n and "NOT authenticated" in n for n in notes)
    page = (new / PORTAL).read_bytes()
    (new / PORTAL).write_bytes(page.replace(b"<td>NJ</td>", b"<td>MA</td>", 1))
    assert _verify(new, "--digests-only", env=no_secret).exit_code == 1


def test_the_bakes_own_summaries_name_the_comparison(tmp_path: Path) -> None:
    """`--json` carries what was compared against and the changes per class; the terminal
    summary says it in one line; without --previous `previous` is null."""
    key = mint(tmp_path)
    signed = ("--signing-key", str(key.private))
    old = bake(fixtures_with(tmp_path, "base", _with_extra), tmp_path / "old", *signed)
    revoked = fixtures_with(tmp_path, "revoked", _revoked)
    common = ("bake", "snapshot", "--fixtures", str(revoked), "--now", LATER, *signed)
    done = invoke(*common, "--out", str(tmp_path / "a"), "--previous", str(old), "--json")
    assert done.exit_code == 0, done.output
    summary = json.loads(done.stdout)["previous"]
    record = _predicate(tmp_path / "a")["previous"]
    assert summary == {
        "source": str(old),
        "generatedAt": record["generatedAt"],
        "authenticated": True,
        "checked": record["checked"],
        "counts": {"decision": 1, "coverage": 0, "self-check": 0, "cosmetic": 1},
        "decisionsTotal": 1,
    }
    shown = invoke(*common, "--out", str(tmp_path / "b"), "--previous", str(old))
    assert shown.exit_code == 0, shown.output
    text = " ".join(shown.stdout.split())  # as wrapped at 80 columns
    assert "Since the previous snapshot: 1 decision, 0 coverage, 0 self-check changes" in text
    assert f"previous of {record['generatedAt']}, authenticated by {record['checked']}" in text
    assert all(len(x) <= 80 for x in shown.stdout.splitlines() if "previous" in x)
    plain = invoke(*common, "--out", str(tmp_path / "c"), "--json")
    assert json.loads(plain.stdout)["previous"] is None
