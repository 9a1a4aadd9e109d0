"""One contract: the answer shapes `serve` publishes in /openapi.json are the ones the HTTP target
validates with, because both come from `compliance_bake/targets/contract.py`.

The live document is fetched from `compliance-bake serve` on a loopback port. Its answer
components must equal the JSON Schemas of the contract's adapters, and on a spread of bodies the
target's decoding must agree with a JSON Schema validator reading the live component: what the
document refuses the target refuses, and what it allows the target takes.
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from compliance_bake.errors import TargetError
from compliance_bake.identity.keyfile import mint_key
from compliance_bake.service import models
from compliance_bake.targets import answers, contract
from compliance_bake.targets.interface import CheckRequest
from compliance_bake.targets.profile_file import builtin_profile
from tests.support.live_service import LiveService

REF = "#/components/schemas/{model}"
ASKED = CheckRequest("node-bay-01", "NJ", "soccer.moneyline")


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The live service's /openapi.json."""
    root = tmp_path_factory.mktemp("contract")
    keys_file = root / "agent-keys.json"
    mint_key(keys_file, "contract")
    with (
        LiveService(keys_file=keys_file, out_dir=root / "out", cwd=root) as live,
        urllib.request.urlopen(f"{live.url}/openapi.json", timeout=30) as answer,
    ):
        yield json.loads(answer.read())


def test_the_service_publishes_the_contracts_shapes(published: dict[str, Any]) -> None:
    components = published["components"]["schemas"]
    for name, adapter in contract.ANSWERS.items():
        declared = adapter.json_schema(ref_template=REF)
        for inner, schema in declared.pop("$defs", {}).items():
            assert components[inner] == schema, inner
        assert components[name] == declared, name
    assert models.CheckAnswer is contract.CheckAnswer  # the service names the same declarations
    assert models.HealthAnswer is contract.HealthAnswer


def _documented(published: dict[str, Any], name: str) -> jsonschema.Draft202012Validator:
    # The component, with the document's components beside it for its `$ref`s.
    schema = {**published["components"]["schemas"][name], "components": published["components"]}
    return jsonschema.Draft202012Validator(schema)


def _target_takes(decode: Any, *args: Any) -> bool:
    try:
        decode(*args)
    except TargetError:
        return False
    return True


CHECKS: list[tuple[int, dict[str, Any]]] = [
    (200, {"allowed": True, "status": 200}),
    (403, {"allowed": False, "status": 403}),
    (403, {"allowed": False, "status": 403, "reason": "Partner not licensed in NJ"}),
    (403, {"allowed": False, "status": 403, "reason": ""}),
    (403, {"allowed": False, "status": 403, "reason": None}),
    (200, {"allowed": "true", "status": 200}),
    (200, {"allowed": 1, "status": 200}),
    (200, {"allowed": True, "status": "200"}),
    (200, {"allowed": True}),
    (200, {"status": 200}),
    (200, {"allowed": True, "status": 200, "partner": "node-bay-01", "extra": [1, {}]}),
    (200, {"allowed": True, "status": 200, "partner": None}),
    (200, {"allowed": True, "status": 200, "wagerType": 3}),
]
HEALTHS: list[dict[str, Any]] = [
    {"ok": True, "states": ["MA", "NJ"]},
    {"ok": True, "states": ["MA"], "runtime": "CPython 3.11.7"},
    {"ok": True, "states": [], "runtime": " "},
    {"ok": True, "states": [], "runtime": None},
    {"ok": True, "states": ["MA", 1]},
    {"ok": "true", "states": []},
    {"states": ["MA"]},
    {"ok": True, "states": "MA"},
    {"ok": False, "states": ["MA"], "version": 2},
]
PANELS: list[dict[str, Any]] = [
    {"ok": True, "state": "MA", "licenseStatus": "active", "hasLimits": True},
    {"ok": True, "state": "MA", "licenseStatus": "active", "hasLimits": True, "x": 1},
    {"ok": True, "state": "MA", "licenseStatus": "active"},
    {"ok": True, "state": "MA", "licenseStatus": None, "hasLimits": True},
    {"ok": 1, "state": "MA", "licenseStatus": "active", "hasLimits": True},
]


def _answer(operation: str) -> answers.Answer:
    profile = builtin_profile()
    return answers.Answer(getattr(profile, operation), "http://127.0.0.1:1", profile)


@pytest.mark.parametrize(("status", "body"), CHECKS)
def test_the_target_refuses_a_check_answer_exactly_when_the_document_does(
    published: dict[str, Any], status: int, body: dict[str, Any]
) -> None:
    raw = json.dumps(body).encode()
    answer = _answer("check")
    documented = _documented(published, "CheckAnswer").is_valid(body)
    taken = _target_takes(answers.decode_check, answer, status, {}, raw, ASKED)
    assert taken == documented


@pytest.mark.parametrize("body", HEALTHS)
def test_the_target_refuses_a_health_answer_exactly_when_the_document_does(
    published: dict[str, Any], body: dict[str, Any]
) -> None:
    raw = json.dumps(body).encode()
    answer = _answer("health")
    documented = _documented(published, "HealthAnswer").is_valid(body)
    assert _target_takes(answers.decode_health, answer, 200, {}, raw) == documented


@pytest.mark.parametrize("body", PANELS)
def test_the_target_refuses_a_status_panel_exactly_when_the_document_does(
    published: dict[str, Any], body: dict[str, Any]
) -> None:
    raw = json.dumps(body).encode()
    answer = _answer("status")
    documented = _documented(published, "StatusAnswer").is_valid(body)
    assert _target_takes(answers.decode_status, answer, 200, {}, raw, "MA") == documented


def test_beyond_shape_the_target_still_refuses_contradictions(published: dict[str, Any]) -> None:
    """Valid shapes that contradict the request or the HTTP status: the document cannot say
    these, the target refuses them all the same."""
    answer = _answer("check")
    documented = _documented(published, "CheckAnswer")
    for status, body in [
        (403, {"allowed": True, "status": 403}),
        (200, {"allowed": False, "status": 200}),
        (200, {"allowed": True, "status": 403}),
        (200, {"allowed": True, "status": 200, "reason": "x"}),
        (200, {"allowed": True, "status": 200, "state": "MA"}),
    ]:
        assert documented.is_valid(body)
        raw = json.dumps(body).encode()
        assert not _target_takes(answers.decode_check, answer, status, {}, raw, ASKED)


def test_the_document_is_from_this_file(published: dict[str, Any]) -> None:
    """A change to the declaration shows in the published document's descriptions."""
    health = published["components"]["schemas"]["HealthAnswer"]
    assert contract.RUNTIME_UNKNOWN in health["properties"]["runtime"]["description"]
    assert Path(contract.__file__).name == "contract.py"
