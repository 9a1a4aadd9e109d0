"""The demo bake's portal page, held byte for byte (tests/report/golden/portal-demo.html).

The page's layout is a design choice, so a change to it is expected now and then: regenerate the
file with `COMPLIANCE_BAKE_UPDATE_GOLDEN=1 pytest tests/report/test_portal_golden.py`, then
review `git diff` of the golden file before committing it. Without the variable, any byte that
moves fails here. The JSON documents are held by tests/product/test_golden_bytes.py, which has
no such variable: they are the contract.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from compliance_bake.report.layout import PORTAL_FILE
from compliance_bake.resources import demo_fixtures_dir
from tests.conftest import NOW, invoke

GOLDEN = Path(__file__).resolve().parent / "golden" / "portal-demo.html"
UPDATE = "COMPLIANCE_BAKE_UPDATE_GOLDEN"


def test_the_demo_portal_page_is_unchanged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(demo_fixtures_dir().parent)  # the plays path in the command: relative
    out = tmp_path / "out"
    args = ["--out", str(out), "--now", NOW, "--deep-audit", "fixtures/plays.csv"]
    result = invoke("bake", "snapshot", *args)
    assert result.exit_code == 0, result.output
    page = (out / PORTAL_FILE).read_bytes()
    if os.environ.get(UPDATE) == "1":
        GOLDEN.write_bytes(page)
    assert page == GOLDEN.read_bytes(), f"the portal page moved: review it, then set {UPDATE}=1"
