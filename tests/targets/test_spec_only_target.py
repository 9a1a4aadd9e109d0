"""A service that answers with exactly the specification's shapes is a valid target (spec 4).

The stand-in is tests/targets/fault_server.py with `spec_only=True`, a real server on a
loopback port:
`/health` is `{ok, states}`, a check is `{allowed, status}`, the status panel its four fields.
The reference service's extras (runtime, the echoed question, the reason of a block) are absent,
which is not an error; `bunVersion` then holds `contract.RUNTIME_UNKNOWN`. Wrong types and
contradictions still fail the bake with exit 3.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from compliance_bake.errors import EXIT_TARGET_FAILED
from compliance_bake.targets.contract import RUNTIME_UNKNOWN
from tests.conftest import NOW, diagnostics, invoke
from tests.targets.fault_server import AGENT_KEY, FaultServer

CHECK = "/api/compliance/check"
KEY_ENV = {"COMPLIANCE_AGENT_KEY": AGENT_KEY}
FAST = ("--timeout", "10", "--retries", "1")


@pytest.fixture
def server() -> Iterator[FaultServer]:
    with FaultServer(spec_only=True) as running:
        yield running


def _bake(server: FaultServer, out: Path) -> object:
    args = ("bake", "snapshot", "--target", server.url, "--out", str(out), "--now", NOW, *FAST)
    return invoke(*args, env=KEY_ENV)


def test_the_stand_in_really_sends_only_the_spec_fields(server: FaultServer) -> None:
    import urllib.request

    def get(path: str) -> tuple[int, dict[str, object]]:
        request = urllib.request.Request(
            server.url + path, headers={"Authorization": f"Bearer {AGENT_KEY}"}
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                return answer.status, json.loads(answer.read())
        except urllib.error.HTTPError as refused:
            return refused.code, json.loads(refused.read())

    assert set(get("/health")[1]) == {"ok", "states"}
    status, blocked = get(f"{CHECK}?partner=node-bay-01&state=NJ&wagerType=soccer.moneyline")
    assert (status, blocked) == (403, {"allowed": False, "status": 403})
    panel = get("/api/compliance/status?state=MA&partner=node-bay-01")[1]
    assert set(panel) == {"ok", "state", "licenseStatus", "hasLimits"}


def test_a_spec_only_service_gives_a_clean_bake(server: FaultServer, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = _bake(server, out)
    assert result.exit_code == 0, result.stderr  # type: ignore[attr-defined]
    snapshot = json.loads((out / "api" / "compliance.json").read_text())
    board = snapshot["enhancements"]
    assert (board["passed"], board["total"]) == (8, 8)
    assert all(row["match"] for row in board["rows"])
    assert snapshot["shadow"]["summary"]["mismatches"] == 0
    assert len(snapshot["shadow"]["rows"]) == 8
    for proof in (snapshot["shadow"]["proof"], snapshot["integrity"]["proof"]):
        assert proof["bunVersion"] == RUNTIME_UNKNOWN
    # The service gives no reason: the blocked rows hold none (none is invented), and the
    # snapshot counts them, which the bake and verify report without failing.
    blocked = [row for row in snapshot["shadow"]["rows"] if not row["realAllowed"]]
    assert blocked and not any("reason" in row for row in blocked)
    assert snapshot["shadow"]["disagreements"]["blockWithoutReason"] == len(blocked)
    verified = invoke("verify", str(out))
    assert verified.exit_code == 0, verified.output
    assert f"reported blocked without a reason: {len(blocked)} rows" in verified.stderr


@pytest.mark.parametrize(
    ("fault", "says"),
    [
        ("allowed_string", "`allowed` is a string, not a boolean"),
        ("forbidden_allowed", "an HTTP 403 with allowed: true"),
        ("non_json", "not strict JSON"),
    ],
)
def test_wrong_types_and_contradictions_still_exit_3(
    server: FaultServer, tmp_path: Path, fault: str, says: str
) -> None:
    server.fault(CHECK, fault)
    out = tmp_path / "out"
    result = _bake(server, out)
    assert result.exit_code == EXIT_TARGET_FAILED
    line = diagnostics(result.stderr).strip()  # type: ignore[attr-defined]
    assert line.count("\n") == 0 and line.startswith(f"compliance-bake: error: GET {CHECK}: ")
    assert says in line
    assert not out.exists()


def test_the_placeholder_is_the_documented_one() -> None:
    root = Path(__file__).resolve().parents[2]
    for doc in ("docs/spec.md", "docs/service-api.md"):
        assert RUNTIME_UNKNOWN in (root / doc).read_text(), doc
    shown = invoke("bake", "snapshot", "--help").output
    assert RUNTIME_UNKNOWN in " ".join(shown.replace('"', " ").split())
