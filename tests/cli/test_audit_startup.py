"""`audit deep --json` imports and reads only what it uses: its start-up is measured against a
bare DuckDB query (bench/audit_bench.py), so each module left out is held out here.

The real command runs in a fresh interpreter (a test process has imported everything already);
the probe notes which schema files the fixtures' validation read and which modules were loaded.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from compliance_bake.inputs import schemas

DEMO_PLAYS = Path(__file__).resolve().parents[2] / "fixtures" / "plays.csv"
NOW = "2026-11-22T04:06:00Z"

# Modules the audit's --json run must not import: the report outcome and the terminal's tables
# are built only for a --report or a human table; rich only for a terminal or a table; the
# pure-Python jsonschema only to word a fixture's error; Jinja2 and markupsafe only for the
# bake's portal (report/escape.py, which --json uses for terminal_json, imports it for HTML).
NOT_IMPORTED = (
    "compliance_bake.cli.outcome",
    "compliance_bake.cli.render",
    "compliance_bake.cli.terminal",
    "compliance_bake.inputs.atomic_write",
    "markupsafe",
    "rich",
    "jsonschema",
    "referencing",
    "jinja2",
)

PROBE = """
import json, sys
from compliance_bake.inputs import schemas

read = []
document = schemas._document


def recording(name):
    read.append(name)
    return document(name)


schemas._document = recording
from compliance_bake.cli.main import main

code = 0
try:
    main()
except SystemExit as done:
    code = done.code
modules = sorted(m for m in sys.modules if m.startswith(tuple({roots!r})))
found = {{"code": code, "schemas": sorted(set(read)), "modules": modules}}
print(json.dumps(found), file=sys.stderr)
"""


def _audit_in_a_child(tmp_path: Path, plays: Path, *extra: str) -> tuple[Any, Any]:
    roots = sorted({name.split(".")[0] for name in NOT_IMPORTED} | {"compliance_bake"})
    argv = ["compliance-bake", "audit", "deep", "--plays", str(plays), "--now", NOW]
    argv += ["--out", str(tmp_path / "out"), "--json", *extra]
    code = f"import sys; sys.argv = {argv!r}\n" + PROBE.format(roots=roots)
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "COLUMNS")}
    env["REPORT_SIGNING_SECRET"] = "test-only-signing-secret-0123456789abcdef"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    probe = json.loads(done.stderr.strip().splitlines()[-1])
    return probe, json.loads(done.stdout)


def _loaded(modules: list[str], name: str) -> bool:
    return any(m == name or m.startswith(name + ".") for m in modules)


def test_audit_json_imports_only_what_it_uses(tmp_path: Path) -> None:
    probe, summary = _audit_in_a_child(tmp_path, DEMO_PLAYS)
    assert probe["code"] == 0, summary
    assert summary["zipWindow"]["totalPlays"] > 0
    assert (tmp_path / "out" / "audit" / "zip-window.json").is_file()
    assert "compliance_bake.audit.engines.duckdb" in probe["modules"]  # the probe sees imports
    assert [name for name in NOT_IMPORTED if _loaded(probe["modules"], name)] == []


def test_fixture_validation_reads_only_the_fixture_schemas(tmp_path: Path) -> None:
    probe, _ = _audit_in_a_child(tmp_path, DEMO_PLAYS)
    # the demo fixtures hold limits.json: its schema is a fixture schema too
    assert probe["schemas"] == sorted([schemas.LICENCES, schemas.GEO, schemas.LIMITS])


@pytest.mark.parametrize("kind", ["json", "junit"])
def test_a_report_still_gets_its_outcome(tmp_path: Path, kind: str) -> None:
    report = tmp_path / f"audit.{kind}"
    probe, _ = _audit_in_a_child(tmp_path, DEMO_PLAYS, "--report", f"{kind}:{report}")
    assert probe["code"] == 0
    assert "compliance_bake.cli.outcome" in probe["modules"]
    text = report.read_text()
    assert 'name="zip-window"' in text if kind == "junit" else json.loads(text)["ok"] is True


def test_a_schema_naming_another_reads_it_too() -> None:
    # The registry copies point into the snapshot's schema; the validator resolves them.
    assert schemas._with_references(schemas.REGISTRY_SHADOW) == [
        schemas.REGISTRY_SHADOW,
        schemas.SNAPSHOT,
    ]
    assert schemas._with_references(schemas.LICENCES) == [schemas.LICENCES]
