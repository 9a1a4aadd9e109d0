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


def test_the_geo_table_is_capped_for_large_fixtures(baked: Path) -> None:
    from compliance_bake.report.portal import GEO_LIMIT

    snap = copy.deepcopy(_snapshot(baked))
    first = snap["geo"]["partners"][0]
    snap["geo"]["partners"] = [dict(first, nodeId=f"node-{i:05d}") for i in range(10_000)]
    page = render_portal(snap).decode("utf-8")
    assert f"node-{GEO_LIMIT - 1:05d}" in page and f"node-{GEO_LIMIT:05d}" not in page
    assert f"The first {GEO_LIMIT:,} of 10,000 partners" in page


def test_links_to_the_registry_and_api_files_are_relative_and_resolve(baked: Path) -> None:
    page_path = baked / "portal" / "compliance" / "index.html"
    hrefs = set(re.findall(r'href="([^"#]+)"', page_path.read_text(encoding="utf-8")))
    assert hrefs == {
        "../../api/compliance.json",
        "../../registry/compliance-enhancements.json",
        "../../registry/compliance-shadow.json",
    }
    for href in hrefs:
        assert (page_path.parent / href).resolve().is_file(), href


def test_the_banner_and_colours_follow_match_not_the_decision(baked: Path) -> None:
    page = (baked / "portal" / "compliance" / "index.html").read_text(encoding="utf-8")
    assert '<div class="banner pass" id="verdict"' in page
    assert "cell-block" not in page and "cell-allow" not in page  # colour is by match
    assert page.count('class="cell-match"') >= 8
    assert "break-all" not in page
    assert "prefers-color-scheme:dark" in page and "@media print" in page
