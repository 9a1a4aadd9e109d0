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
    for check in snap["integrity"]["checks"]:  # by id beside its words (test_portal_officer)
        assert f"(check <code>{check['id']}</code>)" in page
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


def test_the_verify_command_is_the_url_form_and_names_no_folder(baked: Path) -> None:
    """A published page is the same bytes wherever it was baked: its verify commands name the
    page's own address (a placeholder the page explains), never the bake's folder; the facts
    the page states carry no folder either."""
    from compliance_bake.report.portal import SNAPSHOT_URL, bake_facts

    facts = bake_facts(None, None, ())
    assert PortalFacts.from_json(facts.to_json()) == facts and "folder" not in facts.to_json()
    page = render_portal(_snapshot(baked), facts=facts).decode("utf-8")
    assert SNAPSHOT_URL == "https://HOST/api/compliance.json"
    commands = re.findall(r'<code class="cmd">(compliance-bake verify [^<]+)</code>', page)
    assert commands == [f"compliance-bake verify {SNAPSHOT_URL}"], commands
    assert 'Verify it with the command under <a href="#signer">Who signed it</a>' in page
    assert "verify out" not in page and "For <code>https://HOST/</code>" in page
    assert read_facts(page.encode()) == facts
    signed = render_portal(_snapshot(baked), facts=PortalFacts("ab" * 32)).decode("utf-8")
    assert re.findall(r'<code class="cmd">(compliance-bake verify [^<]+)</code>', signed) == [
        f"compliance-bake verify {SNAPSHOT_URL} --public-key signing-key.pub.pem"
    ]


def test_a_folder_or_file_named_like_an_option_is_never_an_option_in_the_pages_commands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--out ./--allow-recorded-failures` and plays called `--help.csv`, in a folder and in
    the working one: each copy-paste command of the page runs as printed, every path a path."""
    import html
    import shlex
    import shutil

    from tests.conftest import NOW, invoke

    plays = Path(__file__).resolve().parents[2] / "fixtures" / "plays.csv"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p").mkdir()
    shutil.copy(plays, tmp_path / "p" / "--help.csv")
    shutil.copy(plays, tmp_path / "--help.csv")
    for given in ("./p/--help.csv", "--help.csv"):
        out = tmp_path / "--allow-recorded-failures"
        baked = invoke("bake", "snapshot", "--out=./--allow-recorded-failures", "--now", NOW,
                       f"--deep-audit={given}")  # fmt: skip
        assert baked.exit_code == 0, baked.output
        page = (out / "portal" / "compliance" / "index.html").read_text(encoding="utf-8")
        commands = [
            shlex.split(html.unescape(c)) for c in re.findall(r'class="cmd">([^<]+)</code>', page)
        ]
        assert commands and all(words[0] == "compliance-bake" for words in commands)
        for words in commands:
            assert "--allow-recorded-failures" not in words and "--help.csv" not in words, words
        audit = next(words for words in commands if words[1:3] == ["audit", "deep"])
        assert audit[audit.index("--plays") + 1] == "./--help.csv"  # the page names files alone
        ran = invoke(*audit[1:])
        assert ran.exit_code == 0, ran.output
        snapshot = loads_strict((out / "api" / "compliance.json").read_bytes())
        recorded = shlex.split(snapshot["deepAudit"]["command"])
        assert recorded[recorded.index("--plays") + 1] == f"./{given.removeprefix('./')}"


def test_the_banner_counts_each_failure_once_as_the_terminal_does(tmp_path: Path) -> None:
    """The drifted demo: 2 pairs disagree, in MA and in NJ, and the policy finds 2 failing
    kinds. The banner and the terminal's short summary both say 4: the `shadow` integrity
    check sums up those same pairs and is not counted a third time."""
    from tests.conftest import NOW, invoke

    drifted = Path(__file__).resolve().parents[2] / "fixtures" / "drifted"
    out = tmp_path / "out-fail"
    baked = invoke("bake", "snapshot", "--now", NOW, "--service-fixtures", str(drifted),
                   "--out", str(out))  # fmt: skip
    assert baked.exit_code == 1, baked.output
    terminal = re.search(r"short summary: (\d+) failed", baked.output)
    page = (out / "portal" / "compliance" / "index.html").read_text(encoding="utf-8")
    banner = re.search(r"<strong>FAIL</strong> (\d+) checks? failed:", page)
    snapshot = loads_strict((out / "api" / "compliance.json").read_bytes())
    assert terminal and banner and snapshot["shadow"]["summary"]["mismatches"] == 2
    listed = page[page.index('id="verdict-failed"') : page.index("</ul>", page.index("verdict-"))]
    items = re.findall(r"<li>(.*?)</li>", listed)
    assert int(terminal.group(1)) == int(banner.group(1)) == len(items) == 4, items
    assert [i.split(",")[0] for i in items[:2]] == ["in MA", "in NJ"], items
    assert not any("against the registry" in i for i in items)  # the sum, not counted again


def test_the_window_count_says_plays_in_the_window(tmp_path: Path) -> None:
    """ "(16/20 plays)", the specification's label, reads as 16 of 20 passed: where people read
    it, it says 16 of 20 plays in the window; the snapshot keeps the label as specified."""
    from tests.conftest import bake_deep_demo

    out = bake_deep_demo(tmp_path / "out")
    page = (out / "portal" / "compliance" / "index.html").read_text(encoding="utf-8")
    assert "16 of 20 plays in the 90-day ZIP window" in page and "(16/20 plays)" not in page
    snapshot = loads_strict((out / "api" / "compliance.json").read_bytes())
    assert snapshot["deepAudit"]["zipWindow"]["label"].endswith("(16/20 plays)")
