"""`bake snapshot --deep-audit` (spec 2.5-2.7, 9.3); bad plays input: exit 2, nothing written."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from compliance_bake.audit.report import audit_command
from compliance_bake.inputs import schemas
from compliance_bake.inputs.jsonio import loads_strict
from compliance_bake.report.snapshot import DEEP_AUDIT_COMMAND
from compliance_bake.resources import demo_fixtures_dir
from tests._plays_helpers import play, write_csv, write_jsonl, write_parquet
from tests.conftest import NOW, SECRET, diagnostics, invoke, run_cli, snapshot_tree
from tests.signing.test_recipe import run_recipe

DEMO_PLAYS = demo_fixtures_dir() / "plays.csv"
DEMO_LABEL = "ZIP 90d window via enriched_at (16/20 plays)"


def _bake(out: Path, *extra: str) -> dict[str, object]:
    result = invoke("bake", "snapshot", "--out", str(out), "--now", NOW, *extra)
    assert result.exit_code == 0, result.output
    snapshot: dict[str, object] = loads_strict((out / "api" / "compliance.json").read_bytes())
    return snapshot


def test_bake_with_the_demo_plays_validates_verifies_and_labels(tmp_path: Path) -> None:
    out = tmp_path / "out"
    snap = _bake(out, "--deep-audit", str(DEMO_PLAYS))
    assert schemas.first_violation(schemas.SNAPSHOT, snap) is None
    deep = snap["deepAudit"]
    assert deep["zipWindow"] == {  # type: ignore[index]
        "ok": True,
        "days": 90,
        "mode": "enriched",
        "totalPlays": 20,
        "inWindowPlays": 16,
        "label": DEMO_LABEL,
    }
    checks = {c["id"]: c for c in snap["integrity"]["checks"]}  # type: ignore[index]
    assert checks["zip-window"] == {"id": "zip-window", "ok": True, "label": DEMO_LABEL}
    assert list(checks) == ["enhancements", "shadow", "sha3", "hmac", "geo", "zip-window"]
    assert snap["links"]["deepAudit"] == deep["command"]  # type: ignore[index]
    assert list(snap) == [
        "ok", "mode", "readOnly", "schemaVersion", "generatedAt", "enhancements", "shadow",
        "geo", "deepAudit", "integrity", "links", "proton",
    ]  # fmt: skip
    verified = invoke("verify", str(out), "--json")
    assert verified.exit_code == 0, verified.output
    recipe = run_recipe(tmp_path, SECRET)
    assert recipe.code == 0 and len(recipe.checks) == 9 and recipe.failing == set(), recipe


def test_the_deep_audit_command_reproduces_the_bakes_audit(tmp_path: Path) -> None:
    snap = _bake(tmp_path / "out", "--deep-audit", str(DEMO_PLAYS))
    words = shlex.split(snap["deepAudit"]["command"])  # type: ignore[index]
    assert words[:3] == ["compliance-bake", "audit", "deep"] and "--now" in words
    again = invoke(*words[1:], "--out", str(tmp_path / "audit"), "--json")
    assert again.exit_code == 0
    assert json.loads(again.output)["zipWindow"] == snap["deepAudit"]["zipWindow"]  # type: ignore[index]


def test_without_deep_audit_the_block_and_check_are_absent(baked: Path) -> None:
    snap = loads_strict((baked / "api" / "compliance.json").read_bytes())
    assert "deepAudit" not in snap
    assert "zip-window" not in {c["id"] for c in snap["integrity"]["checks"]}
    assert snap["links"]["deepAudit"] == DEEP_AUDIT_COMMAND
    assert audit_command("fixtures/plays.csv") == DEEP_AUDIT_COMMAND


def test_the_bake_audits_on_its_own_clock(tmp_path: Path) -> None:
    # On a later clock the demo's plays leave the window: fewer in it, still clean.
    result = invoke(
        "bake", "snapshot", "--out", str(tmp_path / "out"), "--now", "2027-01-01T00:00:00Z",
        "--deep-audit", str(DEMO_PLAYS), "--json",
    )  # fmt: skip
    assert result.exit_code == 0
    checks = {c["id"]: c for c in json.loads(result.output)["integrity"]}
    assert checks["zip-window"]["label"] == "ZIP 90d window via enriched_at (12/20 plays)"


def test_a_failing_audit_is_signed_written_and_verifiable(tmp_path: Path) -> None:
    plays = write_csv(tmp_path / "plays.csv", [play("ok"), play("zip-of-nj", zip="07102")])
    out = tmp_path / "out"
    result = invoke("bake", "snapshot", "--out", str(out), "--now", NOW, "--deep-audit", str(plays))
    assert result.exit_code == 1
    snap = loads_strict((out / "api" / "compliance.json").read_bytes())
    assert snap["deepAudit"]["zipWindow"]["ok"] is False
    # The report is authentic and consistent, and it records a failure: exit 1 naming it, unless
    # the failure is explicitly accepted.
    refused = invoke("verify", str(out))
    assert refused.exit_code == 1 and "recorded check zip-window failed" in refused.output
    assert invoke("verify", str(out), "--allow-recorded-failures").exit_code == 0


def test_verify_catches_an_edited_deep_audit(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _bake(out, "--deep-audit", str(DEMO_PLAYS))
    path = out / "api" / "compliance.json"
    doc = json.loads(path.read_text())
    doc["deepAudit"]["zipWindow"]["inWindowPlays"] = 20
    path.write_text(json.dumps(doc, indent=2) + "\n")
    result = invoke("verify", str(out), "--json")
    assert result.exit_code == 1
    whats = {f["what"] for f in json.loads(result.output)["failures"]}
    assert any(what.startswith("rule deep-audit-window:") for what in whats), whats
    assert "integrity.proof.digest does not match the content it digests" in whats


def test_the_same_bake_twice_is_byte_identical(tmp_path: Path) -> None:
    _bake(tmp_path / "a" / "out", "--deep-audit", str(DEMO_PLAYS))
    _bake(tmp_path / "b" / "out-2", "--deep-audit", str(DEMO_PLAYS))
    assert snapshot_tree(tmp_path / "a" / "out") == snapshot_tree(tmp_path / "b" / "out-2")


def _bad_plays(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    """name -> (plays file, a word the one-line error must contain)."""
    tmp_path.mkdir()
    missing_column = tmp_path / "missing-column.csv"
    missing_column.write_text("play_id,partner,state,placed_at,enriched_at,wager_type,stake\n")
    dup = tmp_path / "duplicate-column.csv"
    dup.write_text("play_id,partner,state,zip,zip,placed_at,enriched_at,wager_type,stake\n")
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    unknown = tmp_path / "plays.txt"
    unknown.write_text("play_id\n")
    no_ext = tmp_path / "plays"
    no_ext.write_text("play_id\n")
    folder = tmp_path / "folder.csv"
    folder.mkdir()
    jsonl_keys = write_jsonl(tmp_path / "few-keys.jsonl", [{"play_id": "x", "zip": "02108"}])
    not_jsonl = tmp_path / "not.jsonl"
    not_jsonl.write_text("play_id,partner\n")
    not_parquet = tmp_path / "not.parquet"
    not_parquet.write_text("play_id,partner\n")
    narrow = tmp_path / "narrow.parquet"
    write_parquet(narrow, [play("x")])
    import duckdb

    con = duckdb.connect()
    con.execute(
        f"COPY (SELECT play_id, partner FROM '{narrow}') TO '{tmp_path / 'few.parquet'}' "
        "(FORMAT parquet)"
    )
    con.close()
    return {
        "missing file": (tmp_path / "nope.csv", "no such plays file"),
        "missing column": (missing_column, "zip"),
        "duplicate column": (dup, "more than once"),
        "empty file": (empty, "empty"),
        "unknown format": (unknown, "unknown plays format"),
        "no extension": (no_ext, "unknown plays format"),
        "a folder": (folder, "folder"),
        "jsonl missing keys": (jsonl_keys, "partner"),
        "not json lines": (not_jsonl, "not a JSON object"),
        "not parquet": (not_parquet, "not a Parquet file"),
        "parquet missing columns": (tmp_path / "few.parquet", "enriched_at"),
    }


CASES = [
    "missing file",
    "missing column",
    "duplicate column",
    "empty file",
    "unknown format",
    "no extension",
    "a folder",
    "jsonl missing keys",
    "not json lines",
    "not parquet",
    "parquet missing columns",
]


@pytest.mark.parametrize("case", CASES)
def test_bad_plays_exit_2_name_the_file_and_write_nothing(tmp_path: Path, case: str) -> None:
    plays, word = _bad_plays(tmp_path / "in")[case]
    out = tmp_path / "out"
    _bake(out)  # a previous bake, which must stay as it was
    (out / "audit").mkdir()
    (out / "audit" / "zip-window.json").write_text("previous report\n")
    before = snapshot_tree(out)
    # The audit through the real console script (a process), the bake through CliRunner.
    done = run_cli("audit", "deep", "--plays", str(plays), "--now", NOW, "--out", str(out))
    baked = invoke("bake", "snapshot", "--out", str(out), "--now", NOW, "--deep-audit", str(plays))
    for code, stdout, stderr in (
        (done.returncode, done.stdout, done.stderr),
        (baked.exit_code, baked.stdout, baked.stderr),
    ):
        assert code == 2, stderr
        assert stdout == ""
        lines = diagnostics(stderr).strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("compliance-bake: error: ")
        assert str(plays) in lines[0] and word in lines[0] and "fix:" in lines[0]
        assert "Traceback" not in stderr and SECRET not in stderr
    assert snapshot_tree(out) == before


def test_bad_days_and_now_are_usage_errors(tmp_path: Path) -> None:
    for extra in (
        ["--days", "0"],
        ["--now", "yesterday"],
        ["--now", "2026-11-22T04:06:00"],
        ["--now", "0001-01-02T00:00:00Z"],  # the window would start before year 1
    ):
        done = run_cli("audit", "deep", "--plays", str(DEMO_PLAYS), "--out", str(tmp_path), *extra)
        assert done.returncode == 2, extra
        assert len(diagnostics(done.stderr).strip().splitlines()) == 1
    assert not (tmp_path / "audit").exists()


def test_a_missing_plays_option_is_a_usage_error() -> None:
    done = run_cli("audit", "deep")
    assert done.returncode == 2 and "--plays" in done.stderr
