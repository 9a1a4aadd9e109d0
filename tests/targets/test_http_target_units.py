"""HttpTarget on its own against the loopback fault server: order, laziness, progress, retries,
the Retry-After cap, and a clean close (no thread, no warning: warnings are errors here)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
from tenacity import RetryCallState

from compliance_bake.errors import TargetError
from compliance_bake.inputs.fixtures import load_fixtures
from compliance_bake.resources import demo_fixtures_dir
from compliance_bake.targets.engine import Engine
from compliance_bake.targets.http import HttpSettings, HttpTarget
from compliance_bake.targets.interface import CheckRequest
from compliance_bake.targets.transport import RetryPolicy
from tests.targets.fault_server import AGENT_KEY, RUNTIME, FaultServer

CHECK = "/api/compliance/check"


@pytest.fixture
def server() -> Iterator[FaultServer]:
    with FaultServer() as running:
        yield running


def _target(server: FaultServer, **settings: float) -> HttpTarget:
    options = {"timeout": 2.0, "retries": 1, "backoff_base": 0.01} | settings
    return HttpTarget(server.url, AGENT_KEY, HttpSettings(**options))  # type: ignore[arg-type]


def _loop_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "compliance-bake-http"]


def _mixed(count: int) -> list[CheckRequest]:
    partners = ["node-bay-01", "node-shore-02", "node-corridor-03", "node-offshore-04", "nobody"]
    states = ["MA", "NJ", "ZZ"]
    wagers = ["basketball.totals", "soccer.moneyline", "soccer.totals"]
    return [
        CheckRequest(partners[i % 5], states[(i // 5) % 3], wagers[(i // 15) % 3])
        for i in range(count)
    ]


def test_check_many_answers_in_request_order_with_progress_per_chunk(server: FaultServer) -> None:
    engine = Engine(load_fixtures(demo_fixtures_dir()).registry)
    requests = _mixed(500)
    seen: list[int] = []
    with _target(server, concurrency=8, chunk=64) as target:
        decisions = list(target.check_many(iter(requests), seen.append))
    assert decisions == [engine.check(*request) for request in requests]
    assert seen == [64] * 7 + [52]


def test_check_many_reads_its_requests_lazily(server: FaultServer) -> None:
    taken = 0

    def requests() -> Iterator[CheckRequest]:
        nonlocal taken
        for request in _mixed(2_000):
            taken += 1
            yield request

    with _target(server, concurrency=4, chunk=32) as target:
        answers = target.check_many(requests())
        next(answers)
        assert taken <= 2 * 32 + 1  # two chunks in flight, not the whole matrix
        assert sum(1 for _ in answers) == 2_000 - 1


def test_a_failure_mid_matrix_is_one_target_error_and_stops_the_rest(server: FaultServer) -> None:
    server.fault(CHECK, "allowed_string")
    failing = pytest.raises(TargetError, match=f"^GET {CHECK}: `allowed` is a string")
    with _target(server, concurrency=4, chunk=16) as target, failing:
        list(target.check_many(_mixed(1000)))
    assert len(server.requests_to(CHECK)) < 100
    assert _loop_threads() == []


def test_runtime_health_and_status_over_http(server: FaultServer) -> None:
    with _target(server) as target:
        assert target.runtime() == RUNTIME
        assert target.health().states == ("MA", "NJ")
        panel = target.status("MA", "node-bay-01")
        assert panel.license_status == "active" and panel.has_limits is True
        assert AGENT_KEY not in repr(target)
    assert server.requests_to("/api/compliance/status")[0].query == {
        "state": ["MA"],
        "partner": ["node-bay-01"],
    }


def test_retries_are_bounded(server: FaultServer) -> None:
    server.fault(CHECK, "status", code=503)
    with _target(server, retries=2) as target, pytest.raises(TargetError) as caught:
        target.check("node-bay-01", "MA", "basketball.totals")
    assert "HTTP 503 (busy: try later) (after 3 attempts)" in caught.value.one_line()
    assert len(server.requests_to(CHECK)) == 3
    with _target(server, retries=0) as target, pytest.raises(TargetError) as caught:
        target.check("node-bay-01", "MA", "basketball.totals")
    assert "attempts" not in caught.value.one_line()
    assert len(server.requests_to(CHECK)) == 4


def test_a_long_retry_after_is_capped(server: FaultServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """The wait the policy chooses is read, not timed, so a busy machine cannot fail the test."""
    chosen: list[float] = []
    real_wait = RetryPolicy.wait

    def recording_wait(policy: RetryPolicy, state: RetryCallState) -> float:
        seconds = real_wait(policy, state)
        chosen.append(seconds)
        return seconds if seconds <= 1 else 0.0  # an uncapped wait fails below, not in an hour

    monkeypatch.setattr(RetryPolicy, "wait", recording_wait)
    server.fault(CHECK, "status", times=1, code=503, retry_after="3600")
    started = time.monotonic()
    with _target(server, retry_after_cap=0.2) as target:
        assert target.check("node-bay-01", "MA", "basketball.totals").allowed is True
    assert chosen == [0.2]
    assert time.monotonic() - started >= 0.2  # the capped wait is waited, never skipped
    assert len(server.requests_to(CHECK)) == 2


def test_other_statuses_are_not_retried(server: FaultServer) -> None:
    failing = pytest.raises(TargetError, match=r"^GET /health: unexpected HTTP 404 \(not_found")
    with HttpTarget(server.url + "/nowhere", AGENT_KEY) as target, failing:
        target.health()
    assert len(server.requests_to("/nowhere/health")) == 1
    assert _loop_threads() == []


def test_close_is_idempotent_and_leaves_no_thread(server: FaultServer) -> None:
    target = _target(server)
    target.close()  # never started: nothing to stop
    target = _target(server)
    target.check("node-bay-01", "MA", "basketball.totals")
    assert len(_loop_threads()) == 1
    target.close()
    target.close()
    assert _loop_threads() == []
    with pytest.raises(RuntimeError):
        target.check("node-bay-01", "MA", "basketball.totals")


def test_close_while_a_request_hangs(server: FaultServer) -> None:
    server.fault(CHECK, "hang")
    target = _target(server, timeout=30)
    failed: list[BaseException] = []

    def ask() -> None:
        try:
            target.check("node-bay-01", "MA", "basketball.totals")
        except BaseException as error:  # noqa: BLE001 - recorded for the assertion
            failed.append(error)

    asking = threading.Thread(target=ask)
    asking.start()
    while not server.requests_to(CHECK):
        time.sleep(0.01)
    target.close()
    asking.join(timeout=5)
    assert not asking.is_alive() and failed
    assert _loop_threads() == []


def test_a_host_name_is_resolved_and_the_resolver_shut_down(server: FaultServer) -> None:
    with HttpTarget(f"http://localhost:{server.port}", AGENT_KEY) as target:
        assert target.runtime() == RUNTIME
    assert _loop_threads() == []


def test_with_the_defaults_an_unanswering_service_is_named_within_60_s() -> None:
    """The deadline arithmetic of the defaults: one request takes at most `--timeout` (30 s),
    every attempt and wait inside it, so a bake whose service never answers its first request
    (GET /health) ends within 60 s; four attempts at full length took 124 s."""
    from compliance_bake.targets.routes import DEFAULT_TIMEOUT
    from compliance_bake.targets.transport import longest_request

    defaults = HttpSettings()
    assert defaults.timeout == DEFAULT_TIMEOUT == 30.0 and defaults.retries == 3
    assert longest_request(defaults) == defaults.timeout < 60
    assert longest_request(HttpSettings(timeout=5, retries=10)) == 5


def test_a_service_that_never_answers_is_asked_once_and_named_at_the_timeout(
    server: FaultServer,
) -> None:
    """Accepts the connection, never answers: with --retries 3 still one attempt, the error at
    the deadline, not four of them."""
    server.fault(CHECK, "hang")
    with _target(server, timeout=1.5, retries=3) as target:
        began = time.monotonic()
        with pytest.raises(TargetError) as caught:
            target.check("node-bay-01", "MA", "basketball.totals")
        took = time.monotonic() - began
    assert 1.4 < took < 3.0, took
    assert "no complete answer within 1.5 s (a timeout is not retried)" in caught.value.message
    assert len(server.requests_to(CHECK)) == 1


def test_a_quick_failure_is_retried_within_the_deadline(server: FaultServer) -> None:
    """The control: a 503 is still retried (and answered), inside the same one deadline."""
    server.fault(CHECK, "status", times=2, code=503, retry_after="0")
    with _target(server, timeout=10, retries=3) as target:
        decision = target.check("node-bay-01", "MA", "basketball.totals")
    assert decision.allowed is True and len(server.requests_to(CHECK)) == 3
