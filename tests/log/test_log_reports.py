"""`log verify --report KIND:PATH` and `witness --report KIND:PATH` through the reporters every
command shares: a JUnit file Jenkins' schema accepts, the run summary its schema accepts, and
GitHub annotations, each saying what the exit code says; the human lines stay as they are."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from compliance_bake.inputs.schemas import schemas_dir
from tests.cli._xsd import assert_valid
from tests.conftest import invoke
from tests.log._log_helpers import bake, bake_env, log_verify, mint


@pytest.fixture(scope="module")
def logged(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """Two bakes into one log, with the log as it was after the first kept aside; the log's
    public key; the witness's private key."""
    tmp = tmp_path_factory.mktemp("log-reports")
    with bake_env():
        private, public = mint(tmp, "operator")
        witness_key, _ = mint(tmp, "regulator", "witness-key")
        assert bake(tmp / "out1", tmp / "log", private, 1).exit_code == 0
        shutil.copytree(tmp / "log", tmp / "log-at-1")
        assert bake(tmp / "out2", tmp / "log", private, 2).exit_code == 0
    return tmp, public, witness_key


def _summary(path: Path) -> dict:  # type: ignore[type-arg]
    document = json.loads(path.read_text())
    schema = json.loads((schemas_dir() / "run-summary.schema.json").read_text())
    assert list(Draft202012Validator(schema).iter_errors(document)) == []
    return document  # type: ignore[no-any-return]


def test_log_verify_reports_a_log_that_holds(
    logged: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    root, public, _ = logged
    summary = tmp_path / "summary.json"
    result = invoke(
        "log", "verify", str(root / "log"), "--public-key", str(public),
        "--report", "junit:-", "--report", f"json:{summary}",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    junit = tmp_path / "log.xml"
    junit.write_text(result.stdout)
    cases = list(assert_valid(junit).iter("testcase"))
    assert cases and all(case.find("failure") is None for case in cases)
    assert "log verified: " in result.stderr and "     0  2026-11-01" in result.stderr
    document = _summary(summary)
    assert document["command"] == "log verify" and document["ok"] is True
    assert document["verdict"].startswith("PASS: log verified: ")
    assert document["details"] == json.loads(log_verify(root / "log", public).stdout)


def test_log_verify_reports_an_edited_entry(
    logged: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    root, public, _ = logged
    log = tmp_path / "log"
    shutil.copytree(root / "log", log)
    for bundle in (p for p in (log / "tile" / "entries").rglob("*") if p.is_file()):
        bundle.write_bytes(bundle.read_bytes().replace(b"2026-11-01", b"2026-10-01"))
    summary, notes = tmp_path / "summary.json", tmp_path / "annotations.txt"
    result = invoke(
        "log", "verify", str(log), "--public-key", str(public),
        "--report", f"json:{summary}", "--report", f"github:{notes}",
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    failed = [line for line in result.stderr.splitlines() if line.startswith("FAILED: ")]
    assert failed and "a tile or an entry was edited" in failed[0]
    document = _summary(summary)
    assert document["ok"] is False and document["exitCode"] == 1
    assert document["verdict"].startswith("FAIL: log NOT verified: 1 of ")
    [case] = [c for s in document["suites"] for c in s["cases"] if not c["ok"]]
    assert f"{case['name']}: {case['message']}" == failed[0].removeprefix("FAILED: ")
    assert notes.read_text().startswith("::error")


def test_witness_reports_a_cosignature_then_a_rollback(
    logged: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    root, public, witness_key = logged
    state, first, second = tmp_path / "state.json", tmp_path / "1.json", tmp_path / "2.json"
    result = invoke(
        "witness", str(root / "log"), "--log-key", str(public), "--witness-key",
        str(witness_key), "--state", str(state), "--now", "2026-11-30T00:00:00Z",
        "--report", f"json:{first}",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("compliance.example.com/registry\n2\n")  # the cosigned note
    document = _summary(first)
    assert document["command"] == "witness" and document["verdict"].startswith("PASS: cosigned")
    assert all(case["ok"] for suite in document["suites"] for case in suite["cases"])

    result = invoke(
        "witness", str(root / "log-at-1"), "--log-key", str(public), "--witness-key",
        str(witness_key), "--state", str(state), "--now", "2026-11-30T00:00:00Z",
        "--report", f"json:{second}", "--report", "junit:-",
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    assert "FAILED: rollback: the log is smaller than it was" in result.stderr
    assert "<failure" in result.stdout and "rollback" in result.stdout
    document = _summary(second)
    assert document["ok"] is False and " size 2 root " in document["details"]["previous"]
    [case] = [c for s in document["suites"] for c in s["cases"] if not c["ok"]]
    assert case["name"].startswith("log") and case["message"].startswith("rollback: ")


def test_two_formats_on_stdout_are_refused(logged: tuple[Path, Path, Path]) -> None:
    root, public, witness_key = logged
    result = log_verify(root / "log", public)
    assert result.exit_code == 0
    refused = invoke(
        "log", "verify", str(root / "log"), "--public-key", str(public), "--json",
        "--report", "junit:-",
    )  # fmt: skip
    assert refused.exit_code == 2 and "stdout" in refused.output
    refused = invoke(
        "witness", str(root / "log"), "--log-key", str(public), "--state",
        str(root / "other.json"), "--witness-key", str(witness_key),
        "--report", "junit:-", "--report", "github:-",
    )  # fmt: skip
    assert refused.exit_code == 2 and "stdout" in refused.output
    assert not (root / "other.json").exists()  # refused before anything ran
