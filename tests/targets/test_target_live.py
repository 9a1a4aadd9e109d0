"""`bake snapshot --target URL` against `compliance-bake serve` as a real process on loopback.

The same fixtures baked in-process and over HTTP must give the same board rows, shadow rows and
summaries; only the timestamps (pinned here with --now), `shadow.base`, `bunVersion` and the
digests and HMACs that cover them may differ. `verify` accepts the HTTP bake.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from compliance_bake.identity.keyfile import mint_key
from tests.conftest import NOW, SECRET, board_without_where, run_cli
from tests.support.gen_fixtures import generate, write_fixtures
from tests.support.live_service import LiveService


@pytest.fixture(scope="module")
def scaled_fixtures(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """6 states x 150 partners: enough checks to run many at once and out of order."""
    folder = tmp_path_factory.mktemp("scaled")
    write_fixtures(folder, *generate(6, 150, seed=7))
    return folder


@pytest.fixture(scope="module")
def live(
    tmp_path_factory: pytest.TempPathFactory, scaled_fixtures: Path
) -> Iterator[dict[str, Any]]:
    """Two services, demo fixtures and scaled ones, sharing one agent key."""
    root = tmp_path_factory.mktemp("live")
    keys_file = root / "agent-keys.json"
    key = mint_key(keys_file, "test")
    with (
        LiveService(keys_file=keys_file, out_dir=root / "served", cwd=root) as demo,
        LiveService(
            keys_file=keys_file,
            out_dir=root / "served-scaled",
            fixtures_dir=scaled_fixtures,
            cwd=root,
        ) as scaled,
    ):
        yield {"demo": demo, "scaled": scaled, "key": key}


def _bake(
    out: Path, key: str | None, *extra: str, fixtures: Path | None = None
) -> tuple[int, dict[str, Any], str]:
    env = {"REPORT_SIGNING_SECRET": SECRET, "NO_COLOR": "1", "PATH": "/usr/bin:/bin"}
    if key is not None:
        env["COMPLIANCE_AGENT_KEY"] = key
    args = ["bake", "snapshot", "--out", str(out), "--now", NOW, "--json", *extra]
    if fixtures is not None:
        args += ["--fixtures", str(fixtures)]
    done = run_cli(*args, env=env)
    summary = json.loads(done.stdout) if done.stdout.strip() else {}
    return done.returncode, summary, done.stderr


def _snapshot(out: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((out / "api/compliance.json").read_text())
    return doc


def _comparable(snapshot: dict[str, Any]) -> dict[str, Any]:
    """What must not depend on the target: rows, summaries, geo, the integrity verdicts."""
    checks = snapshot["integrity"]["checks"]
    return {
        "board": board_without_where(snapshot["enhancements"]["rows"]),
        "passed": (snapshot["enhancements"]["passed"], snapshot["enhancements"]["total"]),
        "shadow": snapshot["shadow"]["rows"],
        "summary": snapshot["shadow"]["summary"],
        "geo": snapshot["geo"],
        "checks": [(c["id"], c["ok"], c["label"]) for c in checks],
    }


def test_http_bake_equals_the_in_process_bake(live: dict[str, Any], tmp_path: Path) -> None:
    code_local, summary_local, _ = _bake(tmp_path / "local", None)
    code_http, summary_http, stderr = _bake(
        tmp_path / "http", live["key"], "--target", live["demo"].url
    )
    assert (code_local, code_http) == (0, 0), stderr
    local, http = _snapshot(tmp_path / "local"), _snapshot(tmp_path / "http")
    assert _comparable(http) == _comparable(local)
    identity = {r["feature"]: r for r in http["enhancements"]["rows"]}["identity.agent_key_prefix"]
    assert "measured in compliance-bake itself on the package's KeyStore" in identity["notes"]
    assert "1, 1, 1" in identity["notes"] and "hmac.compare_digest" in identity["notes"]
    assert http["shadow"]["base"] == live["demo"].url
    assert local["shadow"]["base"] != http["shadow"]["base"]
    # bunVersion is what the service reported on /health: the service's runtime.
    assert http["shadow"]["proof"]["bunVersion"].startswith("CPython ")
    for field in ("enhancements", "shadow", "integrity"):
        assert summary_http[field] == summary_local[field]
    verified = run_cli("verify", str(tmp_path / "http"), "--json")
    assert verified.returncode == 0, verified.stdout
    assert json.loads(verified.stdout)["hmacChecked"] is True


def test_http_bake_of_a_larger_matrix_keeps_order(
    live: dict[str, Any], tmp_path: Path, scaled_fixtures: Path
) -> None:
    code_local, _, _ = _bake(tmp_path / "local", None, fixtures=scaled_fixtures)
    code_http, _, stderr = _bake(
        tmp_path / "http",
        live["key"],
        "--target",
        live["scaled"].url,
        "--concurrency",
        "16",
        fixtures=scaled_fixtures,
    )
    assert code_http == code_local, stderr
    local, http = _snapshot(tmp_path / "local"), _snapshot(tmp_path / "http")
    assert len(http["shadow"]["rows"]) == 6 * 150
    assert _comparable(http) == _comparable(local)


def test_wrong_key_is_a_target_error_and_nothing_is_written(
    live: dict[str, Any], tmp_path: Path
) -> None:
    out = tmp_path / "out"
    wrong = live["key"][:6] + ("A" * 43)
    code, _, stderr = _bake(out, wrong, "--target", live["demo"].url)
    assert code == 3
    assert stderr.count("\n") == 1 and "agent key" in stderr
    assert wrong not in stderr and live["key"] not in stderr
    assert not out.exists()


def test_credentials_in_the_url_are_never_printed_or_written(
    live: dict[str, Any], tmp_path: Path
) -> None:
    url = live["demo"].url.replace("http://", "http://operator:hunter2-password@")
    code, summary, stderr = _bake(tmp_path / "out", live["key"], "--target", url)
    assert code == 0, stderr
    written = b"".join(p.read_bytes() for p in (tmp_path / "out").rglob("*") if p.is_file())
    for secret in ("hunter2-password", live["key"]):
        assert secret not in stderr and secret not in json.dumps(summary)
        assert secret.encode() not in written
    assert _snapshot(tmp_path / "out")["shadow"]["base"] == live["demo"].url


def test_check_against_the_live_service(live: dict[str, Any]) -> None:
    env = {"COMPLIANCE_AGENT_KEY": live["key"], "PATH": "/usr/bin:/bin"}
    args = [
        "check",
        "--partner",
        "node-bay-01",
        "--state",
        "NJ",
        "--wager-type",
        "soccer.moneyline",
    ]
    done = run_cli(*args, "--target", live["demo"].url, "--json", env=env)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["allowed"] is False and answer["status"] == 403
    assert answer["reason"] == "Partner not licensed in NJ"
    assert answer["target"] == live["demo"].url
