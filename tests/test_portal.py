"""The portal page: self-contained, every cell escaped, the matrix as a states x partners grid."""

from __future__ import annotations

import copy
import re
from pathlib import Path

from compliance_bake.inputs.jsonio import loads_strict
from compliance_bake.report.portal import GRID_LIMIT, render_portal

HOSTILE = '<script>alert("x")</script>&\''


def _snapshot(baked: Path) -> dict:  # type: ignore[type-arg]
    return loads_strict((baked / "api" / "compliance.json").read_bytes())  # type: ignore[no-any-return]


def test_page_loads_nothing_from_outside(baked: Path) -> None:
    page = (baked / "portal" / "compliance" / "index.html").read_text(encoding="utf-8")
    assert "<script" not in page and "<link" not in page and "<img" not in page
    assert not re.search(r"(src|href)=\"(https?:)?//", page)
    assert "default-src 'none'" in page


def test_page_shows_the_grid_board_geo_checks_and_proofs(baked: Path) -> None:
    snap = _snapshot(baked)
    page = (baked / "portal" / "compliance" / "index.html").read_text(encoding="utf-8")
    for row in snap["enhancements"]["rows"]:
        assert row["feature"] in page
    for profile in snap["geo"]["partners"]:
        assert profile["zipCode"] in page and profile["location"] in page
    for check in snap["integrity"]["checks"]:
        assert check["label"] in page
    assert snap["shadow"]["proof"]["hmac"] in page and snap["integrity"]["proof"]["digest"] in page
    header = re.search(r"<tr><th>Partner</th>(.*?)</tr>", page)
    assert header and re.findall(r"<th>([A-Z]{2})</th>", header.group(1)) == ["MA", "NJ"]
    assert page.count("real allow / shadow allow") == snap["shadow"]["summary"]["allow"]


def test_every_cell_is_escaped(baked: Path) -> None:
    snap = copy.deepcopy(_snapshot(baked))
    snap["shadow"]["base"] = HOSTILE
    snap["enhancements"]["rows"][0]["notes"] = HOSTILE
    snap["enhancements"]["rows"][0]["actualState"] = {"ok": HOSTILE}
    snap["geo"]["partners"][0]["location"] = HOSTILE
    snap["shadow"]["rows"][0]["partner"] = HOSTILE
    snap["proton"]["note"] = HOSTILE
    snap["integrity"]["checks"][0]["label"] = HOSTILE
    page = render_portal(snap).decode("utf-8")
    assert "<script>" not in page
    assert 'alert("x")' not in page and 'alert(\\"x\\")' not in page
    assert "&lt;script&gt;" in page


def test_a_large_matrix_shows_totals_instead_of_the_grid(baked: Path) -> None:
    snap = copy.deepcopy(_snapshot(baked))
    rows = snap["shadow"]["rows"]
    snap["shadow"]["rows"] = [
        dict(rows[i % len(rows)], partner=f"p{i}") for i in range(GRID_LIMIT + 1)
    ]
    page = render_portal(snap).decode("utf-8")
    assert "Totals by state" in page and "real allow / shadow allow" not in page
