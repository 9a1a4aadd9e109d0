"""A non-editable install works from any folder: schemas and demo fixtures ship in the wheel."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_wheel_ships_schemas_and_fixtures_and_bakes_from_elsewhere(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(wheels),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = wheels.glob("compliance_bake-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for schema in (ROOT / "schemas").glob("*.json"):
        assert f"compliance_bake/_data/schemas/{schema.name}" in names
    for fixture in (ROOT / "fixtures").iterdir():  # licences.json, geo.json, plays.csv
        assert f"compliance_bake/_data/fixtures/{fixture.name}" in names
    assert "compliance_bake/templates/portal.html.j2" in names
    assert "compliance_bake/audit/engines/spark-log4j2.properties" in names

    target = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "-q",
            "--target",
            str(target),
            str(wheel),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {**os.environ, "PYTHONPATH": str(target)}
    where = subprocess.run(
        [sys.executable, "-c", "import compliance_bake; print(compliance_bake.__file__)"],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert where.stdout.startswith(str(target))
    baked = subprocess.run(
        [sys.executable, "-m", "compliance_bake", "bake", "snapshot", "--json"],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert baked.returncode == 0, baked.stderr
    assert (elsewhere / "out" / "api" / "compliance.json").is_file()
