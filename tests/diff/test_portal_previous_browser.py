"""The portal's "since the previous snapshot" section in a real browser (as test_portal_browser)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from compliance_bake.report.portal import render_portal
from compliance_bake.report.portal_previous import seal
from tests.conftest import SECRET
from tests.diff.test_portal_previous import EXTRA, PORTAL, _predicate
from tests.diff.test_portal_previous import pair as pair  # noqa: F401 - the fixture
from tests.report.test_portal_browser import ARTIFACTS, HOSTILE, _page, fits_and_shot
from tests.report.test_portal_browser import browser as browser  # noqa: F401 - the fixture


def test_the_section_shows_the_decision_at_1280_and_390(browser: Any, pair: Any) -> None:
    _, _, new = pair
    ARTIFACTS.mkdir(exist_ok=True)
    for width in (1280, 390):
        page = _page(browser, new / PORTAL, width)
        heading = page.locator("#previous")
        assert heading.is_visible() and heading.inner_text() == "Since the previous snapshot"
        rows = page.locator("#previous-decisions tbody tr")
        assert rows.count() == 1
        cells = rows.first.locator("td").all_inner_texts()
        assert cells == ["NJ", EXTRA, "allow \u2192 block", "allow \u2192 block",
                         "active \u2192 none", "yes"]  # fmt: skip
        assert page.locator("#previous-unauthenticated").count() == 0
        fits_and_shot(page, width, "portal-previous")
        page.context.close()


def test_a_hostile_record_runs_nothing(browser: Any, pair: Any, tmp_path: Path) -> None:
    _, _, new = pair
    snapshot = json.loads((new / "api" / "compliance.json").read_bytes())
    record = _predicate(new)["previous"]
    record.update(source=HOSTILE, checked=HOSTILE, authenticated=False)
    record["decisions"][0]["concerns"]["partner"] = HOSTILE
    path = tmp_path / "hostile.html"
    path.write_bytes(render_portal(snapshot, seal(record, SECRET)))
    page = _page(browser, path, 1280)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    assert page.evaluate("window.__pwned === undefined")
    assert page.locator("img").count() == 0 and page.locator("script").count() == 0
    assert page.locator("#previous-unauthenticated").get_attribute("role") == "alert"
    assert HOSTILE in page.locator("#previous-decisions").inner_text()  # shown as text
    assert errors == []
    page.context.close()
