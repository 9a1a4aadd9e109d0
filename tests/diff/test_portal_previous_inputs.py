"""`bake snapshot --previous OLD`: what OLD may be, and what is refused (nothing written)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from compliance_bake.report.portal import render_portal
from compliance_bake.report.portal_previous import seal, view
from tests._attest_helpers import mint
from tests._diff_helpers import bake, fixtures_with
from tests.conftest import OTHER_SECRET, SECRET, invoke
from tests.diff.test_portal_previous import (
    LATER,
    PORTAL,
    _decision_rows,
    _predicate,
    _revoked,
    _with_extra,
)

HOSTILE = '<img src=x onerror="alert(1)"></script><script>alert(2)</script>'


def _bake_new(tmp_path: Path, *extra: str, env: dict[str, Any] | None = None) -> Any:
    fixtures = fixtures_with(tmp_path, f"fx-{len(list(tmp_path.iterdir()))}", _revoked)
    args = ["bake", "snapshot", "--fixtures", str(fixtures), "--now", LATER, *extra]
    return invoke(*args, env=env)


def test_without_a_signing_key_previous_is_refused(tmp_path: Path) -> None:
    old = bake(fixtures_with(tmp_path, "base", _with_extra), tmp_path / "old")
    result = _bake_new(tmp_path, "--out", str(tmp_path / "new"), "--previous", str(old))
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.count("\n") <= 2 and "Traceback" not in result.stderr
    assert "--previous needs an Ed25519 signing key" in result.stderr
    assert "signing-key mint" in result.stderr
    assert not (tmp_path / "new").exists()


def test_an_unauthentic_previous_is_refused_unless_allowed(tmp_path: Path) -> None:
    key = mint(tmp_path)
    signed = ("--signing-key", str(key.private))
    other = {"REPORT_SIGNING_SECRET": OTHER_SECRET}
    old = tmp_path / "old"
    fixtures = fixtures_with(tmp_path, "base", _with_extra)
    result = invoke("bake", "snapshot", "--fixtures", str(fixtures), "--out", str(old), env=other)
    assert result.exit_code == 0, result.output
    new = tmp_path / "new"
    result = _bake_new(tmp_path, "--out", str(new), *signed, "--previous", str(old))
    assert result.exit_code == 2 and not new.exists()
    assert f"--previous {old} is not authentic" in result.stderr
    assert "--previous-unauthenticated" in result.stderr
    # Allowed: the portal says so, the record too, and the page still verifies.
    allow = ("--previous", str(old), "--previous-unauthenticated")
    assert _bake_new(tmp_path, "--out", str(new), *signed, *allow).exit_code == 0
    page = (new / PORTAL).read_bytes()
    assert b'id="previous-unauthenticated" role="alert"><strong>NOT AUTHENTICATED</strong>' in page
    assert _predicate(new)["previous"]["authenticated"] is False
    assert invoke("verify", str(new)).exit_code == 0
    # The old side's own public key authenticates the folder, whatever secret baked it.
    key_old = mint(tmp_path, "old-key.pem")
    result = invoke(
        "bake", "snapshot", "--fixtures", str(fixtures), "--out", str(old),
        "--signing-key", str(key_old.private), env=other,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    by_key = ("--previous", str(old), "--previous-public-key", str(key_old.public))
    assert _bake_new(tmp_path, "--out", str(new), *signed, *by_key).exit_code == 0
    record = _predicate(new)["previous"]
    assert record["authenticated"] is True and key_old.key_id in record["checked"]


def test_a_url_previous_served_on_loopback(tmp_path: Path) -> None:
    from compliance_bake.identity.keyfile import mint_key
    from tests.support.live_service import LiveService

    key = mint(tmp_path)
    old = bake(fixtures_with(tmp_path, "base", _with_extra), tmp_path / "old")
    keys_file = tmp_path / "agent-keys.json"
    mint_key(keys_file, "test")
    new = tmp_path / "new"
    with LiveService(keys_file=keys_file, out_dir=old, cwd=tmp_path) as live:
        url = f"{live.url}/api/compliance"
        signed = ("--signing-key", str(key.private))
        result = _bake_new(tmp_path, "--out", str(new), *signed, "--previous", url)
        assert result.exit_code == 0, result.output
        missing = _bake_new(
            tmp_path, "--out", str(tmp_path / "n2"), *signed, "--previous", f"{url}-gone"
        )
        assert missing.exit_code == 3 and "--previous " in missing.stderr
        assert not (tmp_path / "n2").exists()
        # A user name, password or query in the URL is neither recorded, shown nor said.
        secret_url = url.replace("http://", "http://user:hunter2@")
        hidden = tmp_path / "hidden"
        result = _bake_new(tmp_path, "--out", str(hidden), *signed, "--previous", secret_url)
        assert result.exit_code == 0, result.output
        for path in hidden.rglob("*"):
            if path.is_file():
                text = path.read_bytes()
                if path.name.endswith(".json") and b"payload" in text:
                    text += str(_predicate(hidden)).encode()
                assert b"hunter" not in text, path
        gone = _bake_new(tmp_path, "--out", str(hidden), *signed, "--previous", f"{secret_url}?t=h")
        assert gone.exit_code == 3 and "hunter" not in gone.output + gone.stderr
    assert _predicate(new)["previous"]["source"] == url
    from compliance_bake.targets.fetch import shown_url as shown_source

    assert shown_source(url.replace("http://", "http://u:p@") + "?token=t#x") == url
    assert shown_source("https://[::1]:8443/api/compliance") == "https://[::1]:8443/api/compliance"
    assert [row[:2] for row in _decision_rows((new / PORTAL).read_bytes())] == [
        ["NJ", "node-extra-05"]
    ]
    assert invoke("verify", str(new), "--public-key", str(key.public)).exit_code == 0


def test_bad_previous_inputs_are_one_line_exit_2(tmp_path: Path) -> None:
    key = mint(tmp_path)
    signed = ("--signing-key", str(key.private))
    not_snapshot = tmp_path / "x.json"
    not_snapshot.write_text('{"ok": true}')
    for spec, words in (
        (str(tmp_path / "nowhere"), "no such file"),
        (str(not_snapshot), "not a snapshot"),
    ):
        result = _bake_new(tmp_path, "--out", str(tmp_path / "new"), *signed, "--previous", spec)
        assert result.exit_code == 2 and words in result.stderr, result.stderr
        assert "Traceback" not in result.stderr and not (tmp_path / "new").exists()


def _record(**changes: Any) -> dict[str, Any]:
    record = {
        "source": HOSTILE,
        "generatedAt": HOSTILE,
        "integrityDigest": HOSTILE,
        "authenticated": False,
        "checked": HOSTILE,
        "snapshot": "0" * 64,
        "counts": {"decision": 250, "coverage": 0, "self-check": 0, "cosmetic": 0},
        "decisions": [
            {
                "kind": "pair-changed",
                "concerns": {"state": HOSTILE, "partner": HOSTILE},
                "before": {"licenseStatus": HOSTILE, "realAllowed": True},
                "after": {"licenseStatus": None, "realAllowed": False},
            }
        ],
        "decisionsTotal": 250,
    }
    return seal({**record, **changes}, SECRET)


def test_every_value_of_the_section_is_escaped(baked: Path) -> None:
    snapshot = json.loads((baked / "api/compliance.json").read_bytes())
    page = render_portal(snapshot, _record()).decode("utf-8")
    section = page[page.index('<h2 id="previous">') : page.index('<h2 id="board">')]
    assert "<img" not in section and "<script" not in section
    assert section.count("&lt;img src=x onerror=&#34;alert(1)&#34;&gt;") >= 6
    assert "The first 1 of 250 decision changes; 249 more" in section
    assert "NOT AUTHENTICATED" in section


@pytest.mark.parametrize(
    "changes",
    [
        {"counts": {"decision": 1}},
        {"authenticated": "yes"},
        {"decisions": [{"concerns": {"state": "NJ"}, "before": {}, "after": {}}]},
        {"decisionsTotal": 0},
        {"source": 1},
    ],
)
def test_a_malformed_record_is_refused(changes: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="previous-snapshot record"):
        view(_record(**changes))
