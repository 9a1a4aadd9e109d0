"""The target profile itself: the field-path walk against jmespath, the request templates, the
built-in profile as shipped, and `target profile show|init` (init against `serve`'s own
/openapi.json, whose draft then bakes 8/8 against `serve`)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import jmespath
import pytest
from hypothesis import given
from hypothesis import strategies as st

from compliance_bake.identity.keyfile import mint_key
from compliance_bake.targets.draft import draft_profile
from compliance_bake.targets.profile import MISSING, compile_expression
from compliance_bake.targets.profile_file import builtin_profile, builtin_text, parse_profile
from tests.conftest import NOW, invoke
from tests.support.live_service import LiveService

KEYS = st.sampled_from(["body", "http", "a", "b", "data", "allowed"])
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=12,
)


@given(value=JSON, keys=st.lists(KEYS, min_size=1, max_size=4))
def test_a_field_path_walk_gives_what_jmespath_gives(value: Any, keys: list[str]) -> None:
    text = ".".join(keys)
    expression = compile_expression(text)
    assert expression.keys == tuple(keys)
    found = expression.search(value)
    expected = jmespath.search(text, value)
    assert (None if found is MISSING else found) == expected
    # MISSING only where jmespath's null comes from an absent key, not from a JSON null.
    if found is None:
        assert expected is None


def test_other_expressions_go_through_jmespath_and_their_null_is_nothing() -> None:
    context = {"body": {"ok": "up", "v": "1.2"}, "http": {"status": 200, "headers": {}}}
    assert compile_expression("body.ok == 'up'").search(context) is True
    assert compile_expression("join('', ['Bun ', body.v])").search(context) == "Bun 1.2"
    assert compile_expression("http.status").keys == ("http", "status")
    assert compile_expression("body.missing || body.absent").search(context) is MISSING


def test_placeholders_are_url_encoded_in_paths_and_queries_and_json_in_bodies() -> None:
    profile = parse_profile(
        builtin_text()
        .replace(
            'path = "/api/compliance/check"',
            'path = "/c/{partner}/x"\nmethod = "POST"\n'
            'body = { q = { who = "{partner} in {state}", n = 1, t = true }, "k{" = "}{" }',
        )
        .replace('method = "GET"\npath = "/c/', 'path = "/c/'),
        "test.toml",
    )
    values = {"partner": 'a/b "c"\\', "state": "M&A", "wagerType": "x y"}
    assert profile.check.target(values) == (
        "/c/a%2Fb%20%22c%22%5C/x?partner=a%2Fb%20%22c%22%5C&state=M%26A&wagerType=x%20y"
    )
    body = profile.check.body_bytes(values)
    assert body is not None
    assert json.loads(body) == {
        "q": {"who": 'a/b "c"\\ in M&A', "n": 1, "t": True},
        "k{": "}{",
    }


def test_the_built_in_profile_is_the_shipped_file_and_the_reference_service_s() -> None:
    shipped = Path(__file__).resolve().parents[2] / "compliance_bake/targets/profiles/builtin.toml"
    assert builtin_text() == shipped.read_text()
    profile = builtin_profile()
    assert profile.builtin and profile.source == "`compliance-bake docs service-api`"
    assert (profile.auth.header, profile.auth.render("K")) == ("Authorization", "Bearer K")
    assert profile.check.label == "GET /api/compliance/check"
    assert profile.check.answers == frozenset((200, 403))
    assert profile.check.retry and profile.status.retry and profile.health.retry
    shown = invoke("target", "profile", "show")
    assert shown.exit_code == 0 and shown.stdout == builtin_text()
    assert tomllib.loads(shown.stdout)["check"]["path"] == "/api/compliance/check"


def test_a_post_is_retried_only_when_the_profile_says_so() -> None:
    text = builtin_text().replace(
        'method = "GET"\npath = "/api/compliance/check"', 'method = "POST"\npath = "/c"'
    )
    assert parse_profile(text, "p.toml").check.retry is False
    retried = text.replace('path = "/c"', 'path = "/c"\nretry = true')
    assert parse_profile(retried, "p.toml").check.retry is True


def test_a_draft_marks_what_it_had_to_guess() -> None:
    document = {
        "openapi": "3.1.0",
        "paths": {
            "/v1/health": {"get": {"responses": {"200": {"content": {}}}}},
            "/v2/check/{nodeId}": {
                "post": {
                    "parameters": [{"name": "nodeId", "in": "path", "required": True}],
                    "requestBody": {
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "properties": {
                                        "stateCode": {"type": "string"},
                                        "wager": {
                                            "type": "object",
                                            "properties": {"kind": {"type": "string"}},
                                        },
                                    },
                                }
                            }
                        }
                    },
                    "responses": {
                        "200": {
                            "content": {
                                "application/json": {
                                    "schema": {"$ref": "#/components/schemas/Eligibility"}
                                }
                            }
                        }
                    },
                }
            },
        },
        "components": {
            "schemas": {
                "Eligibility": {
                    "type": "object",
                    "properties": {
                        "data": {
                            "type": "object",
                            "properties": {"eligible": {"type": "boolean"}, "code": {}},
                        }
                    },
                }
            },
            "securitySchemes": {"k": {"type": "apiKey", "in": "header", "name": "X-Agent-Key"}},
        },
    }
    draft = draft_profile(document, "openapi.json")
    assert 'header = "X-Agent-Key"' in draft and 'value = "{key}"' in draft
    assert 'path = "/v2/check/{partner}"' in draft
    assert 'body = { stateCode = "{state}", wager = { kind = "TODO" } }  # TODO' in draft
    assert 'allowed = "body.data.eligible"' in draft and 'status = "body.data.code"' in draft
    assert "[status]  # TODO: no operation names status" in draft
    assert 'ok = "body.ok"  # TODO: not found' in draft  # health's answer has no schema
    profile = parse_profile(draft, "draft.toml")  # it loads; the TODOs are values to check
    assert profile.check.method == "POST"


def test_init_from_serve_s_openapi_drafts_a_profile_that_bakes_8_of_8(tmp_path: Path) -> None:
    keys_file = tmp_path / "agent-keys.json"
    key = mint_key(keys_file, "test")
    with LiveService(keys_file=keys_file, out_dir=tmp_path / "served", cwd=tmp_path) as serve:
        drafted = invoke("target", "profile", "init", "--from-openapi", serve.url + "/openapi.json")
        assert drafted.exit_code == 0, drafted.stderr
        assert "TODO" not in drafted.stdout.split("# Every key")[1]
        profile = tmp_path / "serve.toml"
        profile.write_text(drafted.stdout)
        out = tmp_path / "out"
        args = ("bake", "snapshot", "--target", serve.url, "--target-profile", str(profile))
        baked = invoke(
            *args, "--out", str(out), "--now", NOW, "--json", env={"COMPLIANCE_AGENT_KEY": key}
        )
    assert baked.exit_code == 0, baked.stderr
    snapshot = json.loads((out / "api/compliance.json").read_text())
    assert snapshot["enhancements"]["passed"] == snapshot["enhancements"]["total"] == 8
    assert snapshot["shadow"]["summary"]["mismatches"] == 0
    assert snapshot["shadow"]["proof"]["bunVersion"].startswith("CPython ")
    # The draft from the reference service's document is the built-in profile, field for field.
    drafted_profile = parse_profile(profile.read_text(), str(profile))
    builtin = builtin_profile()
    for name in ("health", "check", "status"):
        ours, theirs = getattr(drafted_profile, name), getattr(builtin, name)
        assert (ours.method, ours.path, ours.query, ours.answers) == (
            theirs.method,
            theirs.path,
            theirs.query,
            theirs.answers,
        )
        assert [(f, e.text) for f, e in ours.fields] == [(f, e.text) for f, e in theirs.fields]


@pytest.mark.parametrize(
    ("content", "says"),
    [(b"not json", "not JSON"), (b'{"openapi": "3.1.0"}', "not an OpenAPI document")],
)
def test_init_refuses_what_is_not_an_openapi_document(
    tmp_path: Path, content: bytes, says: str
) -> None:
    source = tmp_path / "doc.json"
    source.write_bytes(content)
    result = invoke("target", "profile", "init", "--from-openapi", str(source))
    assert result.exit_code == 2 and says in result.stderr and result.stdout == ""
