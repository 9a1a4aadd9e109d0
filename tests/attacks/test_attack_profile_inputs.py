"""Attacks through a target profile and the values it fills in: files that are not files, TOML
nested past any sense, JMESPath that doubles its value, a partner id that would end a header or
climb a path, and a service whose /health names states no snapshot can hold.

Each is bad input (exit 2) or a failed target (exit 3) with one line, never 4 ("a bug"), never a
hang, and each is paired with a control that must succeed. The target is a real HTTP server on
127.0.0.1 (tests/targets/fault_server.py); commands that could hang run as a separate process
(`run_cli`, whose generous timeout a hang would exceed).
"""

from __future__ import annotations

import json
import os
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote

import pytest

from compliance_bake.errors import EXIT_BAD_INPUT, EXIT_TARGET_FAILED
from compliance_bake.targets import routes
from tests.conftest import NOW, builtin_headline_text, diagnostics, invoke, run_cli
from tests.targets.fault_server import AGENT_KEY, FaultServer

KEY_ENV = {"COMPLIANCE_AGENT_KEY": AGENT_KEY}
QUESTION = ("--partner", "node-bay-01", "--state", "MA", "--wager-type", "basketball.totals")
FAST = ("--timeout", "10", "--retries", "0")


@pytest.fixture
def server() -> Iterator[FaultServer]:
    with FaultServer() as running:
        yield running


def _line(stderr: str) -> str:
    lines = diagnostics(stderr).splitlines()
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    return lines[0]


def _check(server: FaultServer, profile: Path, *question: str) -> tuple[int, str, str]:
    args = ("check", "--target", server.url, "--target-profile", str(profile), *FAST)
    result = invoke(*args, *(question or QUESTION), env=KEY_ENV)
    return result.exit_code, result.stdout, result.stderr


def _profile(tmp_path: Path, text: str, name: str = "profile.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _with(section: str, line: str) -> str:
    """The built-in profile (without its questions) with `line` added at the start of
    `[section]`."""
    return builtin_headline_text().replace(f"[{section}]\n", f"[{section}]\n{line}\n", 1)


# -- a profile or an OpenAPI document that is not a regular file -------------------------------


def _not_files(tmp_path: Path) -> dict[str, Path]:
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    zero = tmp_path / "zero.toml"
    zero.symlink_to("/dev/zero")
    return {"fifo": fifo, "dev-zero-link": zero, "dev-zero": Path("/dev/zero")}


@pytest.mark.parametrize("kind", ["fifo", "dev-zero-link", "dev-zero"])
def test_a_profile_that_is_not_a_regular_file_is_refused_not_read(
    tmp_path: Path, server: FaultServer, kind: str
) -> None:
    """A FIFO is refused, not waited on (open waits for a writer); /dev/zero is refused, not read
    until MemoryError."""
    path = _not_files(tmp_path)[kind]
    args = ("check", "--target", server.url, "--target-profile", str(path), *FAST, *QUESTION)
    result = run_cli(*args, env={**os.environ, **KEY_ENV})
    assert result.returncode == EXIT_BAD_INPUT, result.stderr
    assert "not a regular file" in _line(result.stderr)
    assert server.seen == []


@pytest.mark.parametrize("kind", ["fifo", "dev-zero-link", "dev-zero"])
def test_an_openapi_document_that_is_not_a_regular_file_is_refused_not_read(
    tmp_path: Path, kind: str
) -> None:
    path = _not_files(tmp_path)[kind]
    result = run_cli("target", "profile", "init", "--from-openapi", str(path))
    assert result.returncode == EXIT_BAD_INPUT, result.stderr
    assert "not a regular file" in _line(result.stderr) and result.stdout == ""


def test_an_oversize_profile_is_refused(tmp_path: Path, server: FaultServer) -> None:
    path = _profile(tmp_path, builtin_headline_text() + "#" * (2 * 1024 * 1024))
    code, _, stderr = _check(server, path)
    assert code == EXIT_BAD_INPUT and "over the 1 MiB limit" in _line(stderr)


def test_control_a_profile_and_a_document_as_regular_files_are_read(
    tmp_path: Path, server: FaultServer
) -> None:
    code, stdout, stderr = _check(server, _profile(tmp_path, builtin_headline_text()))
    assert code == 0 and "ALLOWED (200) node-bay-01" in stdout, stderr
    document = tmp_path / "openapi.json"
    document.write_text(json.dumps({"paths": {"/health": {"get": {}}}}))
    drafted = invoke("target", "profile", "init", "--from-openapi", str(document))
    assert drafted.exit_code == 0 and "[health]" in drafted.stdout


# -- TOML nested 3,000 deep --------------------------------------------------------------------

NESTED = {
    "arrays": "[check]\nx = " + "[" * 3000 + "]" * 3000 + "\n",
    "inline-tables": "[check]\nx = " + "{a = " * 3000 + "1" + "}" * 3000 + "\n",
    "dotted-body": _with("check", "body." + "a." * 3000 + "b = 1"),
}


@pytest.mark.parametrize("name", list(NESTED))
def test_toml_nested_3000_deep_is_bad_input(tmp_path: Path, server: FaultServer, name: str) -> None:
    """Nesting deep enough for tomllib's RecursionError (arrays, inline tables) is bad input,
    not exit 4."""
    code, _, stderr = _check(server, _profile(tmp_path, NESTED[name]))
    assert code == EXIT_BAD_INPUT, stderr
    assert "nested deeper" in _line(stderr)
    assert server.seen == []


def test_control_a_body_nested_a_few_levels_loads(tmp_path: Path, server: FaultServer) -> None:
    text = builtin_headline_text().replace(
        '[check]\nmethod = "GET"', '[check]\nmethod = "POST"\nbody.a.b.c = "{partner}"', 1
    )
    code, _, stderr = _check(server, _profile(tmp_path, text))
    assert code == 0, stderr
    (seen,) = server.requests_to("/api/compliance/check")
    assert seen.method == "POST"


# -- a partner id with CR/LF through a header placeholder --------------------------------------

HEADER_PROFILE = _with("check", 'headers = { X-Partner = "{partner}" }')


@pytest.mark.parametrize("partner", ["node\r\nX-Injected: 1", "node\nX-Injected: 1", "a\x00b"])
def test_a_partner_with_a_control_character_is_bad_input_and_never_sent(
    tmp_path: Path, server: FaultServer, partner: str
) -> None:
    """A newline meant for a header is bad input, not aiohttp's ValueError (exit 4)."""
    question = ("--partner", partner, "--state", "MA", "--wager-type", "basketball.totals")
    code, _, stderr = _check(server, _profile(tmp_path, HEADER_PROFILE), *question)
    assert code == EXIT_BAD_INPUT, stderr
    line = _line(stderr)
    assert "holds a control character" in line and "\r" not in line
    assert server.requests_to("/api/compliance/check") == []


def test_control_a_plain_partner_fills_the_header(tmp_path: Path, server: FaultServer) -> None:
    code, stdout, stderr = _check(server, _profile(tmp_path, HEADER_PROFILE))
    assert code == 0, stderr
    (seen,) = server.requests_to("/api/compliance/check")
    assert seen.headers["x-partner"] == "node-bay-01"


# -- a path-unsafe placeholder value -----------------------------------------------------------

PATH_PROFILE = builtin_headline_text().replace(
    'path = "/api/compliance/check"', 'path = "/api/compliance/{partner}/check"', 1
)


@pytest.mark.parametrize("partner", ["..", "."])
def test_a_dot_segment_partner_is_refused_before_the_key_is_sent(
    tmp_path: Path, server: FaultServer, partner: str
) -> None:
    """`check --partner ..` is refused before any request: GET /api/compliance/../check, with
    the key, would leave the route."""
    question = ("--partner", partner, "--state", "MA", "--wager-type", "basketball.totals")
    code, _, stderr = _check(server, _profile(tmp_path, PATH_PROFILE), *question)
    assert code == EXIT_BAD_INPUT, stderr
    assert "would change the route" in _line(stderr)
    assert [seen.path for seen in server.seen] == []


def test_control_a_partner_fills_its_path_segment(tmp_path: Path, server: FaultServer) -> None:
    code, _, stderr = _check(server, _profile(tmp_path, PATH_PROFILE))
    assert code == EXIT_TARGET_FAILED, stderr  # this server has no such route: 404
    assert [seen.path for seen in server.seen] == ["/api/compliance/node-bay-01/check"]


# -- /health states that are not state codes ---------------------------------------------------


@pytest.mark.parametrize(
    ("states", "says"),
    [
        (["nj"], "`states[0]` is 'nj', not a two-letter state code"),
        ([""], "`states[0]` is empty"),
        (["MA", "N J"], "`states[1]` is 'N J', not a two-letter state code"),
    ],
)
def test_health_states_that_are_not_state_codes_fail_the_target(
    tmp_path: Path, server: FaultServer, states: list[str], says: str
) -> None:
    """A health answer with such states is the target's failure (exit 3), not "the report fails
    its schema ... this is a bug" (exit 4)."""
    server.fault("/health", "raw", body=json.dumps({"ok": True, "states": states}).encode())
    args = ("bake", "snapshot", "--target", server.url, "--out", str(tmp_path / "out"))
    result = invoke(*args, "--now", NOW, *FAST, env=KEY_ENV)
    assert result.exit_code == EXIT_TARGET_FAILED, result.stderr
    line = _line(result.stderr)
    assert line.startswith("compliance-bake: error: GET /health: ") and says in line
    assert not (tmp_path / "out").exists()


def test_control_health_states_as_codes_bake(tmp_path: Path, server: FaultServer) -> None:
    args = ("bake", "snapshot", "--target", server.url, "--out", str(tmp_path / "out"))
    result = invoke(*args, "--now", NOW, *FAST, env=KEY_ENV)
    assert result.exit_code == 0, result.stderr


# -- a JMESPath that doubles its value ---------------------------------------------------------


def test_an_expression_that_doubles_its_value_40_times_is_refused_at_load(
    tmp_path: Path, server: FaultServer
) -> None:
    """A JMESPath expression that doubles 40 times (2**40 leaves) is refused, not evaluated out
    of memory (or, under --explain, into a SIGSEGV)."""
    doubling = "body.runtime" + " | [@, @]" * 40
    text = builtin_headline_text().replace('runtime = "body.runtime"', f'runtime = "{doubling}"', 1)
    args = ("bake", "snapshot", "--target", server.url, "--target-profile")
    result = run_cli(
        *args,
        str(_profile(tmp_path, text)),
        "--out",
        str(tmp_path / "out"),
        "--explain",
        *FAST,
        env={**os.environ, **KEY_ENV},
    )
    assert result.returncode == EXIT_BAD_INPUT, result.stderr[-2000:]
    assert "[health] runtime: the expression has more than 64 parts" in _line(result.stderr)
    assert server.seen == []


def test_control_a_few_doublings_fail_the_target_with_a_short_message(
    tmp_path: Path, server: FaultServer
) -> None:
    doubling = "body.runtime" + " | [@, @]" * 8
    text = builtin_headline_text().replace('runtime = "body.runtime"', f'runtime = "{doubling}"', 1)
    args = ("check", "--target", server.url, "--target-profile", str(_profile(tmp_path, text)))
    # `check` asks no /health: a bake does, and says what the expression yielded.
    args = ("bake", "snapshot", *args[1:], "--out", str(tmp_path / "out"), "--now", NOW)
    result = invoke(*args, *FAST, env=KEY_ENV)
    assert result.exit_code == EXIT_TARGET_FAILED, result.stderr
    line = _line(result.stderr)
    assert "`runtime` is an array, not a string" in line and "…" in line


def test_a_message_builds_no_more_of_a_value_than_it_shows() -> None:
    """shown() cuts a value to 60 characters without building the repr of the whole value
    (megabytes)."""
    wide = ["0123456789"] * 200_000
    deep: list[object] = ["x"]
    for _ in range(60):
        deep = [deep, deep]  # 2**60 leaves, shared
    shown = routes.shown
    for show in ("shown", "shown_json"):
        for value in (wide, deep):  # the wide one first: the old code never ends the deep one
            tracemalloc.start()
            try:
                text = getattr(routes, show)(value)
                peak = tracemalloc.get_traced_memory()[1]
            finally:
                tracemalloc.stop()
            assert peak < 64 * 1024, (show, peak)
            assert len(text) == 60 and text.endswith("…")
    # Control: a short value is shown whole, as repr and as JSON.
    assert shown(["a", 1, True]) == "['a', 1, True]"
    assert routes.shown_json({"a": [1, None]}) == '{"a":[1,null]}'


# -- a {wager.NAME} value in the path is one segment -------------------------------------------


def _wager_path_profile(tmp_path: Path, sport: str) -> Path:
    text = builtin_headline_text().replace(
        'path = "/api/compliance/check"', 'path = "/api/compliance/{wager.sport}/check"', 1
    )
    text += f'\n[wagers."basketball.totals"]\nsport = {json.dumps(sport)}\n'
    return _profile(tmp_path, text)


@pytest.mark.parametrize(
    "sport", ["../../admin", "a/b", "x?admin=1", "x#frag", "%2e%2e", "a b", "basket ball/.."]
)
def test_a_wager_value_in_the_path_is_sent_as_one_segment(
    tmp_path: Path, server: FaultServer, sport: str
) -> None:
    """The value is one encoded segment: pasted raw, `../../admin` would leave the route and
    `x?admin=1` would add a query parameter."""
    code, _, stderr = _check(server, _wager_path_profile(tmp_path, sport))
    assert code == EXIT_TARGET_FAILED, stderr  # this server has no such route: 404
    (seen,) = server.seen
    segment = seen.path.removeprefix("/api/compliance/").removesuffix("/check")
    assert "/" not in segment and set(seen.query) == {"partner", "state", "wagerType"}, seen
    assert unquote(segment) == sport


@pytest.mark.parametrize("sport", ["..", ".", "", "basket\r\nX-Injected: 1", "a\nb"])
def test_a_wager_value_that_would_change_the_route_is_refused_before_any_request(
    tmp_path: Path, server: FaultServer, sport: str
) -> None:
    code, _, stderr = _check(server, _wager_path_profile(tmp_path, sport))
    assert code == EXIT_BAD_INPUT, stderr
    line = _line(stderr)
    assert '[wagers."basketball.totals"] sport' in line and "path" in line, line
    assert "\r" not in line
    assert server.seen == []


@pytest.mark.parametrize(
    ("amount", "words"),
    [
        (str(2**64), "amount: an integer past 64 bits"),
        (str(-(2**63) - 1), "amount: an integer past 64 bits"),
        ("9" * 5000, "an integer of more than 4,300 digits"),
    ],
    ids=["2**64", "below-int64", "5000-digits"],
)
def test_a_wager_amount_past_64_bits_is_bad_input_before_any_request(
    tmp_path: Path, server: FaultServer, amount: str, words: str
) -> None:
    """`amount` of a `[wagers."TYPE"]` table past what a request's JSON carries: exit 2, one
    line naming the key, for `check` and `bake` alike; never a TypeError (exit 4)."""
    wagers = (
        '[wagers."basketball.totals"]\nsport = "basketball"\nmarket = "totals"\n'
        f"amount = {amount}\n"
    )
    text = _with("check", 'body = { amount = "{wager.amount}" }').replace(
        'method = "GET"\npath = "/api/compliance/check"', 'method = "POST"\npath = "/c"', 1
    )
    profile = _profile(tmp_path, text + "\n" + wagers)
    code, stdout, stderr = _check(server, profile)
    assert code == EXIT_BAD_INPUT and stdout == "", stderr
    assert words in _line(stderr) and str(profile) in _line(stderr)
    baked = invoke(
        "bake", "snapshot", "--target", server.url, "--target-profile", str(profile), *FAST,
        "--out", str(tmp_path / "out"), "--now", NOW, env=KEY_ENV,
    )  # fmt: skip
    assert baked.exit_code == EXIT_BAD_INPUT and words in _line(baked.stderr), baked.output
    assert not (tmp_path / "out").exists() and server.seen == []


def test_control_a_wager_amount_within_64_bits_loads(tmp_path: Path) -> None:
    from compliance_bake.targets.profile_file import parse_profile

    wagers = '[wagers."basketball.totals"]\namount = 18446744073709551615\n'
    text = _with("check", 'body = { amount = "{wager.amount}" }').replace(
        'method = "GET"\npath = "/api/compliance/check"', 'method = "POST"\npath = "/c"', 1
    )
    profile = parse_profile(text + "\n" + wagers, "p.toml")
    body = profile.check.for_wager("basketball.totals").body_bytes(
        {"partner": "p", "state": "MA", "wagerType": "basketball.totals"}
    )
    assert json.loads(body or b"") == {"amount": 2**64 - 1}
