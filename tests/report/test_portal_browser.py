"""The portal page in a real browser: Debian's chromium driven by Playwright (no download).

`make test` installs chromium with apt-get (the Makefile's `tools` target), as it does jq.
Screenshots at 1280 and 390 px go to test-artifacts/ (git-ignored) for people to look at.
"""

from __future__ import annotations

import copy
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from compliance_bake.inputs.jsonio import loads_strict
from compliance_bake.report.portal import render_portal
from compliance_bake.resources import demo_fixtures_dir
from tests.conftest import NOW, invoke

CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
HOSTILE = '<img src=x onerror="window.__pwned=1"></script><script>window.__pwned=2</script>'


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        chromium = driver.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


def _page(browser: Any, path: Path, width: int) -> Any:
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    page.goto(path.resolve().as_uri())
    return page


def fits_and_shot(page: Any, width: int, name: str) -> None:
    """The page does not scroll sideways at this width; its screenshot goes to ARTIFACTS."""
    overflow = page.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert overflow <= 0, f"the page scrolls sideways by {overflow}px at {width}px"
    page.screenshot(path=str(ARTIFACTS / f"{name}-{width}.png"), full_page=True)


def _portal(out: Path) -> Path:
    return out / "portal" / "compliance" / "index.html"


def test_a_passing_snapshot_says_pass_at_1280_and_390(browser: Any, baked: Path) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    for width in (1280, 390):
        page = _page(browser, _portal(baked), width)
        banner = page.locator("#verdict")
        assert banner.inner_text().startswith("PASS Every check holds")
        assert page.locator("#signer-none").is_visible()  # an unsigned bake says so
        board = page.locator("#board + p + .scroll")
        assert "runtime.deepEquals" not in board.inner_text()  # the feature ids: disclosed only
        first = board.locator("details").first
        assert not first.locator("table").is_visible()
        first.locator("summary").click()
        assert first.locator("table").inner_text().splitlines()[1] == "ok\ttrue\ttrue"
        fits_and_shot(page, width, "portal-pass")
        page.context.close()


def test_a_failing_snapshot_says_fail_and_names_the_zip_window(
    browser: Any, tmp_path: Path
) -> None:
    """Fixtures, plays and keys in a temporary folder: the page names none of its paths, names
    the signer, and shows the failing audit's reasons and plays."""
    fixtures = tmp_path / "fixtures"
    shutil.copytree(demo_fixtures_dir(), fixtures)
    plays = tmp_path / "plays.csv"
    plays.write_text(
        "play_id,partner,state,zip,placed_at,enriched_at,wager_type,stake\n"
        "p1,node-bay-01,MA,07102,2026-11-01T00:00:00Z,2026-11-01T00:00:00Z,x,1\n"
    )
    key = tmp_path / "signing.pem"
    assert invoke("signing-key", "mint", "--key-file", str(key)).exit_code == 0
    out = tmp_path / "out"
    baked = invoke(
        "bake", "snapshot", "--out", str(out), "--now", NOW, "--deep-audit", str(plays),
        "--fixtures", str(fixtures), "--signing-key", str(key),
    )  # fmt: skip
    assert baked.exit_code == 1
    envelope = json.loads((out / "attestation" / "compliance.intoto.json").read_bytes())
    key_id = envelope["signatures"][0]["keyid"]
    ARTIFACTS.mkdir(exist_ok=True)
    for width in (1280, 390):
        page = _page(browser, _portal(out), width)
        assert str(tmp_path) not in page.content()
        text = page.locator("#verdict").inner_text()
        assert text == (  # as the terminal counts: the integrity check and the one reason
            "FAIL 2 checks failed:\n\n"
            "the ZIP-window audit (1 play of 1 in the window violates it)\n"
            "1 play in the ZIP window: zip in other state"
        )
        assert page.locator("#signer-key").inner_text() == key_id
        assert page.locator("#signer-key").is_visible()
        reasons = page.locator("#deep-audit-reasons tbody tr")
        assert reasons.all_inner_texts() == ["zip in other state (zip-in-other-state)\t1"]
        cells = page.locator("#deep-audit-sample tbody tr").first.locator("td").all_inner_texts()
        assert cells[0] == "p1" and cells[1] == "plays.csv:2"  # the file name and line
        assert cells[2:] == ["zip-in-other-state", "node-bay-01", "MA", "07102"]
        assert page.locator("#deep-audit").is_visible()
        assert not page.locator("#notes table").is_visible()  # operator notes: collapsed
        fits_and_shot(page, width, "portal-fail")
        page.context.close()


def test_a_hostile_runtime_string_runs_nothing(browser: Any, baked: Path, tmp_path: Path) -> None:
    snap = copy.deepcopy(loads_strict((_portal(baked).parents[2] / "api" / "compliance.json")
                                      .read_bytes()))  # fmt: skip
    snap["shadow"]["proof"]["bunVersion"] = HOSTILE
    snap["integrity"]["proof"]["bunVersion"] = HOSTILE
    snap["shadow"]["base"] = HOSTILE
    path = tmp_path / "hostile.html"
    path.write_bytes(render_portal(snap))
    page = _page(browser, path, 1280)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    assert page.evaluate("window.__pwned === undefined")
    assert page.locator("img").count() == 0 and page.locator("script").count() == 0
    assert HOSTILE in page.locator("body").inner_text()  # shown as text
    assert errors == []
    page.context.close()


def test_dark_mode_and_match_colours(browser: Any, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert invoke("bake", "snapshot", "--out", str(out), "--now", NOW).exit_code == 0
    context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme="dark")
    page = context.new_page()
    page.goto(_portal(out).resolve().as_uri())
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert background == "rgb(15, 18, 22)"
    cells = page.locator("td.cell-match")
    assert cells.count() == 8  # every grid cell agrees: all green, whatever the decision
    assert "service blocks / registry blocks" in page.locator("main").inner_text()
    context.close()


def _scroll_hints(page: Any) -> list[list[bool]]:
    """Each visible table box: [does it scroll sideways, is its hint shown]."""
    return page.evaluate(
        """() => [...document.querySelectorAll('.scroll')]
        .filter(box => box.offsetParent !== null)
        .map(box => {
          const hint = box.previousElementSibling;
          const shown = !!hint && hint.classList.contains('scroll-hint')
            && getComputedStyle(hint).display !== 'none';
          return [box.scrollWidth > box.clientWidth, shown];
        })"""
    )


CAMEL_CASE = re.compile(r"\b[a-z]+[A-Z][A-Za-z]*\b")


def test_the_drifted_bake_counts_as_the_terminal_names_its_folder_and_hints_at_scrolling(
    browser: Any, tmp_path: Path
) -> None:
    """`make demo-fail`'s bake: the banner counts the failures the terminal's short summary
    counts, the verify command names out-fail, every table that scrolls sideways at 390 px says
    so (and only those), and no JSON key in camelCase reaches the page, even with every
    disclosure open."""
    assert invoke("signing-key", "mint").exit_code == 0
    drifted = Path(__file__).resolve().parents[2] / "fixtures" / "drifted"
    baked = subprocess.run(
        [sys.executable, "-m", "compliance_bake", "bake", "snapshot", "--now", NOW,
         "--service-fixtures", str(drifted), "--out", "out-fail"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert baked.returncode == 1, baked.stderr
    counted = re.search(r"short summary: (\d+) failed", baked.stdout + baked.stderr)
    assert counted is not None, baked.stdout + baked.stderr
    ARTIFACTS.mkdir(exist_ok=True)
    for width in (1280, 390):
        page = _page(browser, _portal(Path("out-fail")), width)
        banner = page.locator("#verdict").inner_text()
        assert banner.startswith(f"FAIL {counted.group(1)} checks failed:\n"), banner
        assert page.locator("#verdict-failed li").count() == int(counted.group(1)) == 5
        assert page.locator("#signer ~ code.cmd").first.inner_text() == (
            "compliance-bake verify out-fail --public-key signing-key.pub.pem"
        )
        hints = _scroll_hints(page)
        assert all(scrolls == hinted for scrolls, hinted in hints), (width, hints)
        assert any(scrolls for scrolls, _ in hints) == (width == 390), (width, hints)
        page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
        shown = page.locator("body").inner_text()
        for row in json.loads(Path("out-fail/api/compliance.json").read_text())["enhancements"][
            "rows"
        ]:  # a feature's id is the specification's name, beside its plain words
            assert row["feature"] in shown
            shown = shown.replace(row["feature"], "")
        assert "real" not in shown.split() and "shadow" not in shown.split()
        assert not CAMEL_CASE.findall(shown), CAMEL_CASE.findall(shown)
        assert all(scrolls == hinted for scrolls, hinted in _scroll_hints(page)), width
        fits_and_shot(page, width, "portal-drifted")
        page.context.close()
