"""Attacks through the OpenAPI document `target profile init --from-openapi` drafts from: parts of
the wrong JSON type, texts that TOML cannot hold as written or that would end a comment, and a
request body that references itself. The draft is TOML that loads, its comments stay comments,
no control character reaches the terminal, the work is bounded, and a bad document is never
exit 4. Each attack has a control that must succeed. The CLI runs as a separate process where a
hang is possible (`run_cli`, whose generous timeout a hang would exceed).
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

from compliance_bake.targets.profile_file import parse_profile
from tests.conftest import invoke, run_cli


def _draft(tmp_path: Path, document: dict[str, Any]) -> tuple[int, str, str]:
    source = tmp_path / "openapi.json"
    source.write_text(json.dumps(document))
    result = run_cli("target", "profile", "init", "--from-openapi", str(source))
    return result.returncode, result.stdout, result.stderr


def _check_operation(**operation: Any) -> dict[str, Any]:
    return {"paths": {"/check": {"get": operation}}}


MALFORMED = {
    "parameters-object": _check_operation(parameters={}),
    "path-parameters-object": {"paths": {"/check": {"parameters": {}, "get": {}}}},
    "components-array": {"paths": {}, "components": []},
    "request-body-array": {"paths": {"/check": {"post": {"requestBody": []}}}},
    "properties-array": {
        "paths": {
            "/check": {
                "post": {
                    "requestBody": {
                        "content": {"application/json": {"schema": {"properties": ["partner"]}}}
                    }
                }
            }
        }
    },
    "responses-null": _check_operation(responses=None),
}


@pytest.mark.parametrize("name", list(MALFORMED))
def test_a_malformed_document_is_never_a_bug(tmp_path: Path, name: str) -> None:
    """Never a TypeError or AttributeError (exit 4): a part of the wrong type reads
    as absent: the draft is written, that part a TODO."""
    code, stdout, stderr = _draft(tmp_path, MALFORMED[name])
    assert code == 0, stderr
    assert "Traceback" not in stderr and "TODO" in stdout
    tomllib.loads(stdout)


def test_control_a_well_formed_document_drafts_its_operation(tmp_path: Path) -> None:
    parameters = [{"in": "query", "name": "partner"}, {"in": "query", "name": "state"}]
    code, stdout, stderr = _draft(tmp_path, _check_operation(parameters=parameters))
    assert code == 0, stderr
    draft = tomllib.loads(stdout)
    assert draft["check"]["query"] == {"partner": "{partner}", "state": "{state}"}


EMOJI_PATH = "/v1/\U0001f3b2/check/{partner}"


def test_a_path_with_an_emoji_is_drafted_as_toml_that_loads(tmp_path: Path) -> None:
    """The emoji is written as itself: json.dumps would write a surrogate pair, which TOML
    rejects."""
    document = {"paths": {EMOJI_PATH: {"get": {"parameters": [{"in": "path", "name": "partner"}]}}}}
    code, stdout, stderr = _draft(tmp_path, document)
    assert code == 0, stderr
    assert tomllib.loads(stdout)["check"]["path"] == EMOJI_PATH
    assert parse_profile(stdout, "draft.toml").check.path == EMOJI_PATH


def test_control_an_ascii_path_is_drafted_as_given(tmp_path: Path) -> None:
    document = {"paths": {"/v1/check": {"get": {}}}}
    code, stdout, _ = _draft(tmp_path, document)
    assert code == 0 and 'path = "/v1/check"' in stdout


HOSTILE_NAME = 'id\n[auth]\nheader = "X-Evil"\x1b]0;PWNED\x07\u202e'


def test_a_parameter_name_cannot_end_its_comment_or_reach_the_terminal(tmp_path: Path) -> None:
    """The name cannot end the `# TODO` comment, start an [auth] table of its own or carry ESC
    and BEL to stdout."""
    parameters = [{"in": "path", "name": HOSTILE_NAME}]
    document = {"paths": {"/check/{" + HOSTILE_NAME + "}": {"get": {"parameters": parameters}}}}
    code, stdout, stderr = _draft(tmp_path, document)
    assert code == 0, stderr
    for char in ("\x1b", "\x07", "\u202e"):
        assert char not in stdout + stderr
    assert len([line for line in stdout.splitlines() if line.startswith("[auth]")]) == 1
    draft = tomllib.loads(stdout)
    assert draft["auth"]["header"] == "Authorization"
    assert "\\u001b]0;PWNED" in stdout  # shown, escaped


def test_control_a_plain_parameter_name_is_named_in_its_todo(tmp_path: Path) -> None:
    parameters = [{"in": "path", "name": "id"}]
    document = {"paths": {"/check/{id}": {"get": {"parameters": parameters}}}}
    code, stdout, _ = _draft(tmp_path, document)
    assert code == 0 and "# TODO: path parameter id has no placeholder" in stdout


def _self_referencing(properties: int) -> dict[str, Any]:
    node = {
        "type": "object",
        "properties": {f"p{i}": {"$ref": "#/components/schemas/Node"} for i in range(properties)},
    }
    body = {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Node"}}}}
    return {
        "paths": {"/check": {"post": {"requestBody": body}}},
        "components": {"schemas": {"Node": node}},
    }


def test_a_request_body_that_references_itself_is_drafted_with_bounded_work(
    tmp_path: Path,
) -> None:
    """12 properties that reference their own schema would make 12**8 keys if expanded. The
    schema is drafted once, its references to itself TODOs."""
    code, stdout, stderr = _draft(tmp_path, _self_referencing(12))
    assert code == 0, stderr
    body = tomllib.loads(stdout)["check"]["body"]
    assert body == {f"p{i}": "TODO" for i in range(12)}


def test_control_a_nested_request_body_is_drafted_whole(tmp_path: Path) -> None:
    schema = {
        "type": "object",
        "properties": {
            "partner": {"type": "string"},
            "wager": {"type": "object", "properties": {"type": {"type": "string"}}},
        },
    }
    body = {"content": {"application/json": {"schema": schema}}}
    document = {"paths": {"/check": {"post": {"requestBody": body}}}}
    result = invoke("target", "profile", "init", "--from-openapi", _write(tmp_path, document))
    assert result.exit_code == 0, result.stderr
    drafted = tomllib.loads(result.stdout)["check"]["body"]
    assert drafted == {"partner": "{partner}", "wager": {"type": "{wagerType}"}}


def _write(tmp_path: Path, document: dict[str, Any]) -> str:
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(document))
    return str(path)
