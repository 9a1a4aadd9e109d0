"""The portal page: self-contained, every cell escaped, the matrix as a states x partners grid."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest

from compliance_bake.inputs.jsonio import loads_strict
from compliance_bake.report.portal import GRID_LIMIT, PortalFacts, read_facts, render_portal

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
    assert page.count("service allows / registry allows") == snap["shadow"]["summary"]["allow"]
    assert page.index('id="verdict"') < page.index('id="signer"') < page.index('id="failed"')
    assert page.index('id="failed"') < page.index('id="board"') < page.index('id="matrix"')
    assert page.index('id="matrix"') < page.index('id="proofs"') < page.index('id="geo"')
    assert page.index('id="geo"') < page.index('<details id="notes">')


def test_the_board_speaks_plain_words_with_json_values_behind_a_disclosure(baked: Path) -> None:
    snap = copy.deepcopy(_snapshot(baked))
    row = snap["enhancements"]["rows"][5]
    assert row["feature"] == "runtime.deepEquals.strict_vs_loose"
    row.update(actualState={"loose": True, "strict": True, "diverges": False}, match=False)
    page = render_portal(snap).decode("utf-8")
    board = page[page.index('id="board"') : page.index('id="matrix"')]
    headlines = re.sub(r"<details>.*?</details>", "", board, flags=re.S)
    assert "runtime.deepEquals" not in headlines and "True" not in headlines
    assert "Strict equality tells apart values" in headlines
    assert "Differs in: strict, diverges." in headlines
    fields = re.findall(r"<td>([\w ]+)</td><td class=\"mono\">([^<]*)</td>"
                        r"<td class=\"mono\">([^<]*)</td>", board)  # fmt: skip
    assert ("strict", "false", "true") in fields and ("loose", "true", "true") in fields


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


def test_the_bake_facts_are_escaped_and_read_back(baked: Path) -> None:
    play = {"reason": HOSTILE, "playId": HOSTILE, "line": 3, "partner": HOSTILE, "zip": "\x1b"}
    facts = PortalFacts(key_id=HOSTILE, by_reason={HOSTILE: 2}, sample=(play,))
    snap = _snapshot(baked)
    page = render_portal(snap, facts=facts)
    assert b"<script>" not in page and b'alert("x")' not in page
    assert read_facts(page) == facts
    assert read_facts(page.replace(b"data-facts=", b"data-x=")) is None


def test_a_control_character_from_the_target_is_shown_not_written(baked: Path) -> None:
    snap = copy.deepcopy(_snapshot(baked))
    snap["shadow"]["proof"]["bunVersion"] = "Bun 1.1\x1b[31m\x07\x9b"
    snap["geo"]["partners"][0]["location"] = "Bos\x00ton"
    page = render_portal(snap).decode("utf-8")
    assert not re.search("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]", page)
    assert "Bun 1.1\\x1b[31m\\x07\\x9b" in page and "Bos\\x00ton" in page


def test_a_bidi_override_or_line_break_from_outside_is_shown_not_obeyed(baked: Path) -> None:
    """U+202E in a partner's location would print the rest of the cell backwards to an officer;
    a line break would split it. Both are shown as escapes, as on a terminal."""
    snap = copy.deepcopy(_snapshot(baked))
    snap["geo"]["partners"][0]["location"] = "Boston\u202enotsob\u2066x\nTrenton\t."
    page = render_portal(snap).decode("utf-8")
    assert not re.search("[\u202a-\u202e\u2066-\u2069\u2028\u2029]", page)
    assert "Boston\\u202enotsob\\u2066x\\x0aTrenton\\x09." in page


def test_the_page_parses_without_an_html_parse_error(baked: Path) -> None:
    """html5lib in strict mode raises on any WHATWG parse error: a raw control character from
    a target (an ESC in its runtime string), stray markup from a hostile cell."""
    import html5lib

    strict = html5lib.HTMLParser(strict=True)
    snap = copy.deepcopy(_snapshot(baked))
    snap["shadow"]["proof"]["bunVersion"] = "Bun 1.1\x1b[31m" + HOSTILE
    snap["geo"]["partners"][0]["location"] = "Bos\x00ton\x85"
    strict.parse(render_portal(snap).decode("utf-8"))
    strict.parse((baked / "portal" / "compliance" / "index.html").read_text(encoding="utf-8"))
    with pytest.raises(html5lib.html5parser.ParseError):  # the check itself sees a raw ESC
        strict.parse("<!doctype html><html><head><title>t</title></head><p>\x1b</p></html>")


def test_a_large_matrix_shows_totals_instead_of_the_grid(baked: Path) -> None:
    snap = copy.deepcopy(_snapshot(baked))
    rows = snap["shadow"]["rows"]
    snap["shadow"]["rows"] = [
        dict(rows[i % len(rows)], partner=f"p{i}") for i in range(GRID_LIMIT + 1)
    ]
    page = render_portal(snap).decode("utf-8")
    assert "Totals by state" in page and "service allows / registry allows" not in page


def test_the_geo_table_is_capped_for_large_fixtures(baked: Path) -> None:
    from compliance_bake.report.portal import GEO_LIMIT

    snap = copy.deepcopy(_snapshot(baked))
    first = snap["geo"]["partners"][0]
    snap["geo"]["partners"] = [dict(first, nodeId=f"node-{i:05d}") for i in range(10_000)]
    page = render_portal(snap).decode("utf-8")
    assert f"node-{GEO_LIMIT - 1:05d}" in page and f"node-{GEO_LIMIT:05d}" not in page
    assert f"and {10_000 - GEO_LIMIT:,} more" in page


def test_links_to_the_registry_and_api_files_are_relative_and_resolve(baked: Path) -> None:
    page_path = baked / "portal" / "compliance" / "index.html"
    hrefs = set(re.findall(r'href="([^"#]+)"', page_path.read_text(encoding="utf-8")))
    assert hrefs == {
        "../../api/compliance.json",
        "../../registry/compliance-enhancements.json",
        "../../registry/compliance-shadow.json",
        "../../registry/compliance-policy.json",  # the demo's limits: the policy section
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


def test_the_verify_command_names_the_folder_baked_and_no_path_of_the_machine(
    baked: Path,
) -> None:
    from compliance_bake.report.portal import bake_facts, folder_shown

    assert folder_shown("out-fail") == "out-fail"
    assert folder_shown("build/out") == "build/out"
    assert folder_shown("/srv/bakes/out-fail") == "out-fail"
    assert folder_shown("../elsewhere/out") == "out"
    assert folder_shown("C:\\bakes\\out-fail") == "out-fail"
    facts = bake_facts(None, None, (), "/srv/bakes/out fail")
    assert facts.folder == "out fail" and PortalFacts.from_json(facts.to_json()) == facts
    assert "folder" not in bake_facts(None, None, (), "/tmp/x/out").to_json()  # the default
    page = render_portal(_snapshot(baked), facts=facts)
    assert b"compliance-bake verify &#39;out fail&#39;" in page and b"/srv" not in page
    assert read_facts(page) == facts
