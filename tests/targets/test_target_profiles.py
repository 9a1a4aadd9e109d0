"""Target profiles against services of other shapes: a real Bun service (TypeScript, run by the
`bun` binary from npm, `make tools`) with a POST check and a nested answer, and the fault server
in its "path" shape (the question in the path, the decision in the HTTP status, the runtime in a
header). Each is a real server on a loopback port, stopped by the test.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import NOW, diagnostics, invoke, snapshot_tree
from tests.targets.bun_services import bun_binary, bun_running
from tests.targets.fault_server import AGENT_KEY, PATH_PROFILE, RUNTIME, FaultServer

HERE = Path(__file__).resolve().parent
BUN_PROFILE = HERE / "profiles" / "bun.toml"
BUN_SERVICE = HERE / "services" / "bun_service.ts"
BUN_KEY = "bunky.another-secret-agent-key-9876543210zyxwvu"
FAST = ("--timeout", "10", "--retries", "1")


@dataclass
class BunService:
    url: str
    version: str


@pytest.fixture(scope="module")
def bun_version() -> str:
    return subprocess.run(
        [bun_binary(), "--version"], capture_output=True, text=True, check=True
    ).stdout.strip()


@contextmanager
def _bun_service(version: str, lie: bool) -> Iterator[BunService]:
    with bun_running(BUN_SERVICE, AGENT_KEY=BUN_KEY, LIE="1" if lie else "0") as url:
        yield BunService(url, version)


@pytest.fixture(scope="module")
def bun(bun_version: str) -> Iterator[BunService]:
    with _bun_service(bun_version, lie=False) as service:
        yield service


@pytest.fixture(scope="module")
def lying_bun(bun_version: str) -> Iterator[BunService]:
    with _bun_service(bun_version, lie=True) as service:
        yield service


def _bake(out: Path, url: str, key: str, *extra: str) -> tuple[int, dict[str, Any], str]:
    args = ("bake", "snapshot", "--target", url, "--out", str(out), "--now", NOW, "--json")
    result = invoke(*args, *FAST, *extra, env={"COMPLIANCE_AGENT_KEY": key})
    summary = json.loads(result.stdout) if result.stdout.strip().startswith("{") else {}
    return result.exit_code, summary, result.stderr


def _one_line(stderr: str) -> str:
    lines = diagnostics(stderr).splitlines()
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    return lines[0]


# -- the Bun service --------------------------------------------------------------------------


def test_a_profiled_bake_against_bun_is_8_of_8_with_bun_s_version(
    bun: BunService, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    code, summary, stderr = _bake(out, bun.url, BUN_KEY, "--target-profile", str(BUN_PROFILE))
    assert code == 0, stderr
    snapshot = json.loads((out / "api/compliance.json").read_text())
    assert (snapshot["enhancements"]["passed"], snapshot["enhancements"]["total"]) == (8, 8)
    assert snapshot["shadow"]["summary"]["mismatches"] == 0
    assert snapshot["shadow"]["base"] == bun.url
    assert snapshot["shadow"]["proof"]["bunVersion"] == f"Bun {bun.version}"
    assert snapshot["integrity"]["proof"]["bunVersion"] == f"Bun {bun.version}"
    assert summary["shadow"]["mismatches"] == 0
    verified = invoke("verify", str(out), "--json")
    assert verified.exit_code == 0, verified.stdout
    assert BUN_KEY not in stderr and BUN_KEY not in (out / "api/compliance.json").read_text()


def test_a_lying_bun_service_is_caught_in_the_shadow(lying_bun: BunService, tmp_path: Path) -> None:
    out = tmp_path / "out"
    code, _, stderr = _bake(out, lying_bun.url, BUN_KEY, "--target-profile", str(BUN_PROFILE))
    assert code == 1, stderr
    snapshot = json.loads((out / "api/compliance.json").read_text())
    mismatches = [row for row in snapshot["shadow"]["rows"] if not row["match"]]
    assert snapshot["shadow"]["summary"]["mismatches"] == len(mismatches) > 0
    assert all(row["realAllowed"] and not row["shadowAllowed"] for row in mismatches)


def test_without_a_profile_bun_is_exit_3_and_the_hint_names_the_option(
    bun: BunService, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    code, _, stderr = _bake(out, bun.url, BUN_KEY)
    line = _one_line(stderr)
    assert code == 3, stderr
    assert "HTTP 401" in line and "--target-profile" in line, line
    assert BUN_KEY not in stderr and not out.exists()


def test_check_explain_shows_request_answer_and_fields_with_the_key_masked(
    bun: BunService,
) -> None:
    args = ("check", "--target", bun.url, "--target-profile", str(BUN_PROFILE), "--explain")
    args += ("--partner", "node-offshore-04", "--state", "NJ", "--wager-type", "soccer.moneyline")
    result = invoke(*args, "--json", env={"COMPLIANCE_AGENT_KEY": BUN_KEY})
    assert result.exit_code == 0, result.stderr
    answer = json.loads(result.stdout)
    assert (answer["allowed"], answer["status"]) == (False, 403)
    explained = result.stderr
    assert f"POST {bun.url}/v2/wagers/eligibility" in explained
    assert "X-Agent-Key: <agent key>" in explained
    sent = '{"nodeId":"node-offshore-04","stateCode":"NJ","wager":{"type":"soccer.moneyline"}}'
    assert sent in explained
    assert "HTTP 200" in explained and '"meta":{"api":"v2"' in explained
    assert "allowed: body.data.allowed -> false" in explained
    assert "status: body.data.status -> 403" in explained
    assert 'reason: body.data.reason -> "Partner not licensed in NJ"' in explained
    assert BUN_KEY not in explained and BUN_KEY[:5] not in explained


# -- the path-shaped service, and faults through a profile -------------------------------------


@pytest.fixture
def path_server(tmp_path: Path) -> Iterator[tuple[FaultServer, Path]]:
    profile = tmp_path / "path.toml"
    profile.write_text(PATH_PROFILE)
    with FaultServer(shape="path") as running:
        yield running, profile


def test_a_profiled_bake_of_the_path_shaped_service(
    path_server: tuple[FaultServer, Path], tmp_path: Path
) -> None:
    server, profile = path_server
    out = tmp_path / "out"
    code, _, stderr = _bake(out, server.url, AGENT_KEY, "--target-profile", str(profile))
    assert code == 0, stderr
    snapshot = json.loads((out / "api/compliance.json").read_text())
    assert snapshot["enhancements"]["passed"] == 8
    assert snapshot["shadow"]["proof"]["bunVersion"] == RUNTIME  # from the Server header
    asked = server.requests_to("/v1/partners/node-bay-01/states/MA/wagers/basketball.totals")
    assert asked and asked[0].headers["x-api-key"] == AGENT_KEY


@pytest.mark.parametrize(
    ("route", "kind", "params", "says"),
    [
        (
            "check",
            "allowed_string",
            {},
            "`allowed` is a string, not a boolean (`body.result.allowed` yielded 'true')",
        ),
        ("check", "hang", {}, "no complete answer within 2 s (a timeout is not retried)"),
        ("check", "oversize", {"size": 50 * 1024 * 1024}, "over the 1048576-byte limit"),
        ("check", "redirect", {"location": "/elsewhere"}, "redirected (HTTP 302) to /elsewhere"),
        ("status", "forbidden_allowed", {}, "unexpected HTTP 403"),
        ("/v1/health", "status", {"code": 503, "retry_after": "0"}, "HTTP 503"),
        ("check", "status", {"code": 429, "retry_after": "0"}, "HTTP 429"),
    ],
    ids=["bad-type", "hang", "50MB", "redirect", "status-403", "health-503", "retry-after-429"],
)
def test_faults_through_a_profiled_target_are_exit_3_naming_the_route(
    path_server: tuple[FaultServer, Path],
    tmp_path: Path,
    route: str,
    kind: str,
    params: dict[str, Any],
    says: str,
) -> None:
    server, profile = path_server
    server.fault(route, kind, **params)
    out = tmp_path / "out"
    args = ("--target-profile", str(profile), "--timeout", "2", "--retries", "1")
    code, _, stderr = _bake(out, server.url, AGENT_KEY, *args)
    line = _one_line(stderr)
    assert code == 3, line
    label = {
        "check": "GET /v1/partners/{partner}/states/{state}/wagers/{wagerType}",
        "status": "GET /v1/partners/{partner}/states/{state}",
        "/v1/health": "GET /v1/health",
    }[route]
    assert line.startswith(f"compliance-bake: error: {label}: "), line
    assert says in line, line
    assert AGENT_KEY not in stderr and not out.exists()


def test_a_retry_after_is_honoured_through_a_profile(
    path_server: tuple[FaultServer, Path], tmp_path: Path
) -> None:
    server, profile = path_server
    server.fault("check", "status", times=1, code=503, retry_after="0")
    code, _, stderr = _bake(
        tmp_path / "out", server.url, AGENT_KEY, "--target-profile", str(profile)
    )
    assert code == 0, stderr
    assert (
        len(server.requests_to("/v1/partners/node-bay-01/states/MA/wagers/basketball.totals")) >= 2
    )


# -- live mapping errors -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (
            ('allowed = "body.result.allowed"', 'allowed = "body.result.verdict"'),
            "`allowed` is missing from the answer (`body.result.verdict` yielded nothing)",
        ),
        (
            ('allowed = "body.result.allowed"', 'allowed = "body.result.state"'),
            "`allowed` is a string, not a boolean (`body.result.state` yielded 'MA')",
        ),
        (
            ('status = "http.status"', 'status = "body.api"'),
            "`status` is a string, not an integer (`body.api` yielded 'v1')",
        ),
        (
            ('ok = "body.result.ok"', "ok = \"join('', [body.result.nothing])\""),
            "`join('', [body.result.nothing])` failed on the answer",
        ),
    ],
    ids=["nothing", "wrong-type", "wrong-type-status", "function-error"],
)
def test_a_field_that_maps_badly_on_a_live_answer_is_exit_3_naming_it(
    path_server: tuple[FaultServer, Path], tmp_path: Path, change: tuple[str, str], says: str
) -> None:
    server, profile = path_server
    text = profile.read_text()
    assert change[0] in text
    profile.write_text(text.replace(change[0], change[1]))
    out = tmp_path / "out"
    code, _, stderr = _bake(out, server.url, AGENT_KEY, "--target-profile", str(profile))
    line = _one_line(stderr)
    assert code == 3 and says in line, line
    assert line.startswith("compliance-bake: error: GET /v1/partners/"), line
    assert str(profile) in line  # the hint names the profile the answer was held to
    assert AGENT_KEY not in stderr and not out.exists()


# -- bad profiles: exit 2, one line, nothing written, no request -----------------------------

# (text of the path profile, what replaces it or "" to append, what the line says)
BAD = [
    ("", "[nonsense]\n", "unknown table [nonsense]"),
    ("[check]\n", "[check]\nfoo = 1\n", "unknown key [check] foo"),
    ("[auth]\n", "[auth]\ntoken = 'x'\n", "unknown key [auth] token"),
    ('status = "http.status"\n', "", "[check] has no `status`"),
    ('status = "http.status"', 'status = "body.(("', "[check] status: 'body.((' is not a JMESPath"),
    (
        "/v1/partners/{partner}/states/{state}/wagers/",
        "/v1/{nodeId}/",
        "unknown placeholder {nodeId}",
    ),
    ("[status]\n", '[status]\nquery = { w = "{wagerType}" }\n', "[status] query.w: unknown placeh"),
    ("[check]\n", '[check]\nheaders = { X-Key = "{key}" }\n', "{key} is only for [auth] value"),
    ("[check]\n", '[check]\nmethod = "PUT"\n', "[check] method: 'PUT' is not GET or POST"),
    ("[check]\n", '[check]\nheaders = { X-Trace = "a\\nb" }\n', "cannot hold a control character"),
    ('header = "X-Api-Key"', 'header = "X Api Key"', "'X Api Key' is not an HTTP header name"),
    ("[check]\n", '[check]\nbody = { a = "{partner}" }\n', '[check] body needs method = "POST"'),
    ("[check]\n", "[check]\nanswers = [301]\n", "[check] answers must be a list of HTTP statuses"),
    ("[check]\n", '[check]\nretry = "yes"\n', "[check] retry must be true or false"),
    ('value = "{key}"', 'value = "Token"', "[auth] value does not hold {key}"),
    ("", "[check\n", "not valid TOML"),
]


def _broken(old: str, new: str) -> str:
    if not old:
        return PATH_PROFILE + "\n" + new
    assert PATH_PROFILE.count(old) == 1, old
    return PATH_PROFILE.replace(old, new)


@pytest.mark.parametrize(("old", "new", "says"), BAD, ids=[says for _, _, says in BAD])
def test_a_bad_profile_is_exit_2_naming_file_and_key_before_any_request(
    path_server: tuple[FaultServer, Path], tmp_path: Path, old: str, new: str, says: str
) -> None:
    server, profile = path_server
    profile.write_text(_broken(old, new))
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("previous")
    before = snapshot_tree(out)
    for command in (
        ("bake", "snapshot", "--target", server.url, "--out", str(out)),
        ("check", "--target", server.url, "--partner", "p", "--state", "MA", "--wager-type", "w"),
    ):
        result = invoke(
            *command, "--target-profile", str(profile), env={"COMPLIANCE_AGENT_KEY": AGENT_KEY}
        )
        line = _one_line(result.stderr)
        assert result.exit_code == 2, line
        assert line.startswith(f"compliance-bake: error: {profile}: "), line
        assert says in line and "(fix: " in line, line
    assert server.seen == []
    assert snapshot_tree(out) == before


def test_a_missing_profile_file_and_a_profile_without_target_are_bad_usage(tmp_path: Path) -> None:
    result = invoke(
        "check",
        "--target",
        "http://127.0.0.1:9",
        "--partner",
        "p",
        "--state",
        "MA",
        "--wager-type",
        "w",
        "--target-profile",
        str(tmp_path / "none.toml"),
    )
    assert result.exit_code == 2 and "no such file" in _one_line(result.stderr)
    profile = tmp_path / "p.toml"
    profile.write_text(PATH_PROFILE)
    result = invoke(
        "check",
        "--partner",
        "p",
        "--state",
        "MA",
        "--wager-type",
        "w",
        "--target-profile",
        str(profile),
    )
    assert result.exit_code == 2 and "--target-profile needs --target" in result.stderr


def test_the_profile_comes_from_the_environment_too(
    path_server: tuple[FaultServer, Path], tmp_path: Path
) -> None:
    server, profile = path_server
    args = ("check", "--target", server.url, "--partner", "node-bay-01", "--state", "MA")
    env = {"COMPLIANCE_AGENT_KEY": AGENT_KEY, "COMPLIANCE_TARGET_PROFILE": str(profile)}
    result = invoke(*args, "--wager-type", "basketball.totals", "--json", env=env)
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["allowed"] is True
    # Set in the environment but no --target: the in-process engine answers, no error.
    result = invoke(
        "check",
        "--partner",
        "node-bay-01",
        "--state",
        "MA",
        "--wager-type",
        "basketball.totals",
        env=env,
    )
    assert result.exit_code == 0, result.stderr


def test_the_built_in_profile_as_a_file_bakes_the_same_bytes_as_no_profile(
    tmp_path: Path,
) -> None:
    shown = invoke("target", "profile", "show")
    profile = tmp_path / "builtin.toml"
    profile.write_text(shown.stdout)
    with FaultServer() as server:
        default, _, err_default = _bake(tmp_path / "a" / "out", server.url, AGENT_KEY)
        explicit, _, err_explicit = _bake(
            tmp_path / "b" / "out", server.url, AGENT_KEY, "--target-profile", str(profile)
        )
    assert (default, explicit) == (0, 0), err_default + err_explicit
    assert snapshot_tree(tmp_path / "a" / "out") == snapshot_tree(tmp_path / "b" / "out")


def test_bake_explain_shows_the_first_request_of_each_operation(
    path_server: tuple[FaultServer, Path], tmp_path: Path
) -> None:
    server, profile = path_server
    code, _, stderr = _bake(
        tmp_path / "out", server.url, AGENT_KEY, "--target-profile", str(profile), "--explain"
    )
    assert code == 0, stderr
    for operation in ("health", "check", "status"):
        assert stderr.count(f"--- {operation}: request") == 1, stderr
        assert stderr.count(f"--- {operation}: fields") == 1, stderr
    assert f"GET {server.url}/v1/health" in stderr and "X-Api-Key: <agent key>" in stderr
    assert "runtime: http.headers.server -> " + json.dumps(RUNTIME) in stderr
    assert "status: http.status -> 200" in stderr
    assert AGENT_KEY not in stderr


def test_check_explain_shows_an_answer_it_cannot_map(
    path_server: tuple[FaultServer, Path],
) -> None:
    server, profile = path_server
    server.fault("check", "non_json")
    args = ("check", "--target", server.url, "--target-profile", str(profile), "--explain")
    args += ("--partner", "node-bay-01", "--state", "MA", "--wager-type", "basketball.totals")
    result = invoke(*args, "--retries", "0", env={"COMPLIANCE_AGENT_KEY": AGENT_KEY})
    assert result.exit_code == 3
    assert "<html>Service Unavailable</html>" in result.stderr
    assert "(no fields: GET /v1/partners/" in result.stderr and "not strict JSON" in result.stderr


@pytest.mark.parametrize(("retry", "attempts"), [("false", 1), ("true", 2)])
def test_retries_follow_the_operation_s_retry_key(
    path_server: tuple[FaultServer, Path], tmp_path: Path, retry: str, attempts: int
) -> None:
    server, profile = path_server
    profile.write_text(PATH_PROFILE.replace("[check]\n", f"[check]\nretry = {retry}\n"))
    server.fault("check", "status", code=503, retry_after="0")
    code, _, stderr = _bake(
        tmp_path / "out", server.url, AGENT_KEY, "--target-profile", str(profile)
    )
    line = _one_line(stderr)
    assert code == 3 and "HTTP 503" in line, line
    assert ("(after 2 attempts)" in line) is (attempts == 2), line
    checks = [seen for seen in server.seen if "/wagers/" in seen.path]
    assert len(checks) == attempts


def test_explain_masks_a_key_the_service_echoes(path_server: tuple[FaultServer, Path]) -> None:
    server, profile = path_server
    server.fault("check", "raw", body=json.dumps({"result": {"allowed": AGENT_KEY}}).encode())
    args = ("check", "--target", server.url, "--target-profile", str(profile), "--explain")
    args += ("--partner", "node-bay-01", "--state", "MA", "--wager-type", "basketball.totals")
    result = invoke(*args, env={"COMPLIANCE_AGENT_KEY": AGENT_KEY})
    assert result.exit_code == 3
    assert '{"result": {"allowed": "<agent key>"}}' in result.stderr
    assert 'allowed: body.result.allowed -> "<agent key>"' in result.stderr
    assert AGENT_KEY not in result.stderr


def test_a_404_on_the_built_in_profile_hints_at_a_profile_and_a_profiled_one_names_it(
    path_server: tuple[FaultServer, Path],
) -> None:
    server, profile = path_server
    args = ("--partner", "node-bay-01", "--state", "MA", "--wager-type", "basketball.totals")
    env = {"COMPLIANCE_AGENT_KEY": AGENT_KEY}
    with FaultServer() as reference:  # the built-in routes, under a prefix it does not serve
        result = invoke("check", "--target", reference.url + "/nowhere", *args, env=env)
    line = _one_line(result.stderr)
    assert result.exit_code == 3 and "unexpected HTTP 404" in line, line
    assert "describe it with --target-profile FILE" in line, line
    profile.write_text(profile.read_text().replace("/wagers/", "/wagerz/"))
    result = invoke(
        "check", "--target", server.url, "--target-profile", str(profile), *args, env=env
    )
    line = _one_line(result.stderr)
    assert result.exit_code == 3 and "/wagerz/{wagerType}: unexpected HTTP 404" in line, line
    assert "--target-profile FILE" not in line and str(profile) in line, line
