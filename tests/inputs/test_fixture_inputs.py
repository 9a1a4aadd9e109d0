"""Good and bad fixture folders through the real CLI: bad input exits 2 with one line, out/ kept.

Data-driven, like check-jsonschema's positive and negative example folders:

- every folder under tests/cases/fixtures/good/ must load (`load_fixtures`), bake with exit 0 and
  verify;
- every folder under tests/cases/fixtures/bad/ (a licences.json and a geo.json, each a copy of the
  demo one with one thing changed) must be refused by `compliance-bake bake snapshot` with exit 2,
  exactly one line on stderr, no traceback, and an out/ baked before left exactly as it was.

A bad case's `expected.txt`: line 1 is "<file>: <place>" (e.g. `geo.json: $.partners[1].zipCode`)
and must follow the case folder's path in the message, so the message names the file and the
place; every further line is a fragment (the problem, the fix) that the message must contain.

Known bugs of compliance_bake are strict xfails in KNOWN_BUGS, each naming the fix: when the bug
is fixed the xfail turns into a failure, and the entry must go.

Also here: a bad `--now` or SOURCE_DATE_EPOCH, the other input of a bake that is not a secret.
"""

from __future__ import annotations

import json
import re
import stat
from pathlib import Path

import pytest

from compliance_bake.inputs.fixtures import load_fixtures
from tests._inputs_helpers import (
    CASES,
    DEMO,
    ERROR_PREFIX,
    Job,
    assert_one_line_refusal,
    bake_args,
    bake_good,
    invoke,
    process_env,
    run_processes,
    stray_files,
    tree_state,
)

GOOD = sorted(p for p in (CASES / "good").iterdir() if p.is_dir())
BAD = sorted(p for p in (CASES / "bad").iterdir() if p.is_dir())

# The inputs the suite must cover; a case folder cannot disappear unnoticed.
REQUIRED_BAD = {
    "duplicate-key",
    "nan",
    "infinity",
    "lone-surrogate",
    "age-as-string",
    "wager-types-as-string",
    "status-as-boolean",
    "zip-as-number",
    "zip-four-digits",
    "zip-not-real",
    "zip-of-another-state",
    "city-not-of-zip",
    "unknown-state-in-states",
    "unknown-state-in-licence",
    "unknown-state-in-geo",
    "licence-state-not-in-states",
    "duplicate-partner",
    "missing-geo-profile",
    "geo-for-unknown-partner",
    "missing-required-field",
    "unknown-extra-field",
    "missing-file",
    "truncated-json",
    "not-utf8",
    "empty-file",
    "limits-max-below-min",
    "limits-bet-types-not-array",
    "limits-overlapping-windows",
    "limits-special-rules-malformed",
    "limits-special-rules-unknown-rule",
    "limits-min-not-whole-cents",
    "limits-unknown-partner",
    "limits-wager-type-not-listed",
    "limits-nan-amount",
    "identity-as-string",
}

# (case, aspect) -> why it fails today; aspect is "refusal", "fragments" or "place". Empty: the
# bugs these tests found (paths of duplicate keys and NaN, 41.0 as an integer, the board's file
# name, clock overflows) are fixed; a new one goes here as a strict xfail naming the fix.
KNOWN_BUGS: dict[tuple[str, str], str] = {}

ASPECTS = ("refusal", "fragments", "place")

# The files of a bake, relative to out/.
BAKED = {
    "api/compliance.json",
    "registry/compliance-enhancements.json",
    "registry/compliance-shadow.json",
    "registry/compliance-policy.json",
    "portal/compliance/index.html",
}


def _cases(aspect: str) -> list[pytest.ParameterSet]:
    """Every bad case folder, a strict xfail where KNOWN_BUGS names (case, aspect)."""
    assert aspect in ASPECTS, aspect
    params = []
    for case in BAD:
        reason = KNOWN_BUGS.get((case.name, aspect))
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        params.append(pytest.param(case, id=case.name, marks=marks))
    return params


def _expected(case: Path) -> tuple[str, list[str]]:
    """(line 1, the further lines) of the case's expected.txt."""
    lines = (case / "expected.txt").read_text(encoding="utf-8").splitlines()
    assert lines and ": " in lines[0], (case, lines)
    return lines[0], [line for line in lines[1:] if line.strip()]


def _refusal(case: Path, out: Path) -> str:
    """The one line of a bad bake of case into out."""
    return assert_one_line_refusal(invoke(bake_args(case, out)))


def _source_zips(case: Path) -> dict[str, str]:
    """nodeId -> zipCode as written in the case's geo.json."""
    doc = json.loads((case / "geo.json").read_text(encoding="utf-8"))
    return {p["nodeId"]: p["zipCode"] for p in doc["partners"]}


def test_case_folders_cover_the_required_inputs() -> None:
    names = {case.name for case in BAD}
    assert names >= REQUIRED_BAD, sorted(REQUIRED_BAD - names)
    for case in BAD:
        assert (case / "expected.txt").is_file(), case
    for case_name, aspect in KNOWN_BUGS:
        assert case_name in names, case_name
        assert aspect in ASPECTS, aspect
    assert GOOD, "no good case folder"
    for case in GOOD:
        assert (case / "licences.json").is_file() and (case / "geo.json").is_file(), case


# --- good cases ------------------------------------------------------------------------------


@pytest.mark.parametrize("case", GOOD, ids=[case.name for case in GOOD])
def test_good_case_loads_bakes_and_verifies(case: Path, tmp_path: Path) -> None:
    zips = _source_zips(case)
    assert all(re.fullmatch(r"[0-9]{5}", z) for z in zips.values()), zips
    assert any(z.startswith("0") for z in zips.values()), "a good case needs a leading zero"

    fixtures = load_fixtures(case)
    assert fixtures.geo
    for profile in fixtures.geo:
        assert isinstance(profile.zip_code, str)
        assert profile.zip_code == zips[profile.node_id]

    out = tmp_path / "out"
    run = invoke(bake_args(case, out, "--json"))
    assert run.code == 0, run
    files = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
    assert files == BAKED
    for name in files:
        assert stat.S_IMODE((out / name).stat().st_mode) == 0o644, name
    assert stray_files(out) == []

    baked = json.loads((out / "api" / "compliance.json").read_text(encoding="utf-8"))
    partners = baked["geo"]["partners"]
    assert partners
    for partner in partners:
        assert isinstance(partner["zipCode"], str), partner
        assert partner["zipCode"] == zips[partner["nodeId"]], partner

    verified = invoke(["verify", str(out)])
    assert verified.code == 0, verified


# --- bad cases -------------------------------------------------------------------------------


@pytest.mark.parametrize("case", _cases("refusal"))
def test_bad_case_exits_2_with_one_line_and_keeps_out(case: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    before = bake_good(out)
    _refusal(case, out)
    assert tree_state(out) == before
    assert stray_files(out) == []

    fresh = tmp_path / "fresh" / "out"
    _refusal(case, fresh)
    assert not fresh.exists()
    assert not fresh.parent.exists()


@pytest.mark.parametrize("case", _cases("fragments"))
def test_bad_case_message_says_the_problem_and_the_fix(case: Path, tmp_path: Path) -> None:
    _, fragments = _expected(case)
    line = _refusal(case, tmp_path / "out")
    for fragment in fragments:
        assert fragment in line, (fragment, line)


@pytest.mark.parametrize("case", _cases("place"))
def test_bad_case_message_names_the_file_and_the_place(case: Path, tmp_path: Path) -> None:
    place, _ = _expected(case)
    line = _refusal(case, tmp_path / "out")
    assert f"{case}/{place}" in line, (place, line)


def test_verbose_shows_a_traceback_then_the_same_line(tmp_path: Path) -> None:
    case = CASES / "bad" / "zip-as-number"
    line = _refusal(case, tmp_path / "quiet")
    run = invoke(["-v", *bake_args(case, tmp_path / "out")])
    assert run.code == 2, run
    assert run.stdout == "", run
    assert "Traceback (most recent call last)" in run.stderr, run
    assert run.stderr.splitlines()[-1] == line
    assert not (tmp_path / "out").exists()


PROCESS_CASES = ["zip-as-number", "not-utf8", "missing-file"]


def test_bad_cases_through_the_installed_script(tmp_path: Path) -> None:
    """The console script in clean processes (in parallel): exit 2, one line, no traceback."""
    jobs = [
        Job(bake_args(CASES / "bad" / name, tmp_path / name / "out"), process_env(), tmp_path)
        for name in PROCESS_CASES
    ]
    for name, run in zip(PROCESS_CASES, run_processes(jobs), strict=True):
        case = CASES / "bad" / name
        line = assert_one_line_refusal(run)
        assert line.startswith(ERROR_PREFIX), line
        place, fragments = _expected(case)
        assert f"{case}/{place}" in line, (place, line)
        for fragment in fragments:
            assert fragment in line, (fragment, line)
        assert not (tmp_path / name).exists(), name


CLOCK_REFUSED = [
    pytest.param(["--now", "garbage"], {}, "--now: 'garbage' is not an ISO 8601", id="now-garbage"),
    pytest.param(["--now", "2026-11-22T04:06:00"], {}, "has no UTC offset", id="now-naive"),
    pytest.param(["--now", "2026-13-01T00:00:00Z"], {}, "is not an ISO 8601", id="now-month-13"),
    pytest.param(["--now", "1795000000"], {}, "is not an ISO 8601", id="now-epoch-number"),
    pytest.param([], {"SOURCE_DATE_EPOCH": "abc"}, "SOURCE_DATE_EPOCH='abc'", id="epoch-text"),
    pytest.param(
        [], {"SOURCE_DATE_EPOCH": "-5"}, "is not a Unix time in seconds", id="epoch-negative"
    ),
    pytest.param(
        [], {"SOURCE_DATE_EPOCH": "1.5"}, "is not a Unix time in seconds", id="epoch-fraction"
    ),
    pytest.param(
        [], {"SOURCE_DATE_EPOCH": "2026-11-22"}, "is not a Unix time in seconds", id="epoch-date"
    ),
    pytest.param(
        ["--now", "9999-12-31T23:59:59-01:00"],
        {},
        "--now",
        id="now-past-year-9999-in-utc",
    ),
    pytest.param(
        [],
        {"SOURCE_DATE_EPOCH": "99999999999999999"},
        "SOURCE_DATE_EPOCH",
        id="epoch-too-large",
    ),
    pytest.param(
        [],
        {"SOURCE_DATE_EPOCH": "\u00b2"},
        "SOURCE_DATE_EPOCH",
        id="epoch-superscript-digit",
    ),
]


@pytest.mark.parametrize(("now", "env", "fragment"), CLOCK_REFUSED)
def test_bad_clock_exits_2_with_one_line_and_keeps_out(
    now: list[str], env: dict[str, str], fragment: str, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    before = bake_good(out)
    args = ["bake", "snapshot", "--fixtures", str(DEMO), "--out", str(out), *now]
    line = assert_one_line_refusal(invoke(args, env=env))
    assert fragment in line, line
    assert tree_state(out) == before
    assert stray_files(out) == []
