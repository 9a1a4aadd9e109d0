"""Property-based API test: schemathesis drives the real service from its own /openapi.json.

Hypothesis generates requests (valid and not) for every documented operation, with a valid agent
key and without; every answer must be a non-5xx that conforms to the document: status code,
content type, headers and body schema.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.core.failures import FailureGroup
from schemathesis.generation.modes import GenerationMode

from compliance_bake.identity.keyfile import mint_key
from tests.conftest import SECRET, invoke
from tests.support.live_service import LiveService


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, str]]:
    """The live service (a bake served read-only) and a valid agent key."""
    root = tmp_path_factory.mktemp("api")
    keys_file = root / "agent-keys.json"
    key = mint_key(keys_file, "schemathesis")
    out = root / "out"
    # Module scope runs before the autouse per-test environment: pass the secret explicitly.
    baked = invoke("bake", "snapshot", "--out", str(out), env={"REPORT_SIGNING_SECRET": SECRET})
    assert baked.exit_code == 0
    with LiveService(keys_file=keys_file, out_dir=out, cwd=root) as live:
        yield schemathesis.openapi.from_url(f"{live.url}/openapi.json"), key


def _operations(schema: Any) -> list[Any]:
    return [result.ok() for result in schema.get_all_operations()]


def _statuses(operation: Any, mode: GenerationMode, headers: dict[str, str], n: int) -> set[int]:
    """Run `n` generated cases of one operation; schemathesis's checks raise on any failure."""
    statuses: set[int] = set()

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(max_examples=n, deadline=None, suppress_health_check=list(HealthCheck))
    def run(case: Any) -> None:
        statuses.add(case.call_and_validate(headers=headers).status_code)

    run()
    return statuses


def _drive(schema: Any, headers: dict[str, str], examples: int) -> dict[str, set[int]]:
    """Every operation, in-schema and out of it: no 5xx, and status, content type, headers and
    body as documented. Returns the statuses seen per operation.

    The cases are driven with Hypothesis directly rather than through schemathesis's pytest
    plugin, whose lazy fixture loading does not run on pytest 9.
    """
    seen: dict[str, set[int]] = {}
    for operation in _operations(schema):
        # Out-of-schema requests need something to break: only operations with parameters.
        modes = [GenerationMode.POSITIVE] + ([GenerationMode.NEGATIVE] if operation.query else [])
        seen[f"{operation.method.upper()} {operation.path}"] = set().union(
            *(_statuses(operation, mode, headers, examples) for mode in modes)
        )
    return seen


def test_every_operation_conforms_with_a_key(api: tuple[Any, str]) -> None:
    schema, key = api
    seen = _drive(schema, {"Authorization": f"Bearer {key}"}, examples=30)
    assert len(seen) >= 8, seen
    assert seen["GET /api/compliance/check"] >= {400, 403}, seen  # random partners: no 200
    assert seen["GET /api/compliance/status"] >= {200, 400}, seen
    assert seen["GET /api/compliance"] == {200}, seen


def test_every_operation_conforms_without_a_key(api: tuple[Any, str]) -> None:
    schema, _ = api
    seen = _drive(schema, {}, examples=10)
    assert seen["GET /api/compliance/check"] == {401}, seen
    assert seen["GET /health"] == {200}, seen


def test_every_route_refuses_an_unknown_query_parameter(api: tuple[Any, str]) -> None:
    """Deterministic, for every documented operation: an undocumented query parameter is a 400
    with the error shape, as the document forbids it (the case schemathesis drew at random)."""
    schema, key = api
    operations = _operations(schema)
    assert len(operations) >= 8
    for operation in operations:
        query = {p.name: "node-bay-01" for p in operation.query} | {"unexpected": "1"}
        case = operation.Case(query=query)
        response = case.call(headers={"Authorization": f"Bearer {key}"})
        where = f"{operation.method.upper()} {operation.path}"
        assert response.status_code == 400, where
        if operation.method.upper() == "HEAD":
            continue  # the same answer without its body
        assert response.json()["error"]["code"] == "bad_request", where
        assert "unexpected" in response.json()["error"]["message"], where


def test_a_broken_answer_is_caught(api: tuple[Any, str]) -> None:
    """The harness can fail: an answer outside the document is reported."""
    schema, key = api
    check = next(op for op in _operations(schema) if op.path == "/api/compliance/check")
    case = check.Case(query={"partner": "p", "state": "MA", "wagerType": "w"})
    response = case.call(headers={"Authorization": f"Bearer {key}"})
    assert response.status_code == 403
    response.headers["content-type"] = ["text/plain"]
    with pytest.raises(FailureGroup) as caught:
        case.validate_response(response)
    assert "Undocumented Content-Type" in str(caught.value.exceptions[0])
