"""Each escaper of report/escape.py against hostile text in its own language: what the text
could do there (end a line, start markup, end a command, break the document) it cannot do."""

from __future__ import annotations

import json
from xml.etree import ElementTree

from compliance_bake.report.escape import (
    escape_html,
    html_cell,
    json_line,
    markdown,
    terminal_json,
    visible,
    visible_lines,
    workflow_data,
    workflow_property,
    xml_text,
)

# ESC to recolour, OSC to retitle, CR to overwrite, a line break and a bidi override to reorder.
HOSTILE = "node\x1b[31m\x1b]0;pwned\x07\rx\ny\u202e::error::%0A<b>&'\"[a](javascript:x)"
CONTROLS = ("\x1b", "\x07", "\r", "\u202e")


def test_visible_shows_every_control_character_and_keeps_one_line() -> None:
    shown = visible(HOSTILE)
    assert not any(c in shown for c in (*CONTROLS, "\n"))
    assert "\\x1b" in shown and "\\u202e" in shown and "\\x0a" in shown


def test_visible_lines_keeps_the_renderers_line_breaks_only() -> None:
    shown = visible_lines("one\x1b[2J\ntwo\r")
    assert shown == "one\\x1b[2J\ntwo\\x0d"


def test_html_leaves_no_tag_and_no_attribute_break() -> None:
    html = str(escape_html(HOSTILE))
    assert "<" not in html and ">" not in html and '"' not in html and "'" not in html
    assert "&lt;b&gt;" in html


def test_an_html_cell_shows_every_control_character_and_leaves_no_tag() -> None:
    cell = str(html_cell(HOSTILE))
    assert not any(c in cell for c in (*CONTROLS, "\n")) and "<" not in cell and '"' not in cell
    assert "\\u202e" in cell and "&lt;b&gt;" in cell


def test_markdown_leaves_no_link_no_markup_and_one_line() -> None:
    text = markdown(HOSTILE)
    assert "\n" not in text and "](" not in text and "<b>" not in text
    assert "\\[a\\]\\(javascript\\:x\\)" in text


def test_xml_text_is_well_formed_and_shown_as_written() -> None:
    bad = HOSTILE + "\ud800\uffff\x00"
    root = ElementTree.Element("t", name=xml_text(bad))
    root.text = xml_text(bad)
    parsed = ElementTree.fromstring(ElementTree.tostring(root, encoding="unicode"))
    assert parsed.text is not None and "\x1b" not in parsed.text
    assert parsed.get("name") == parsed.text == xml_text(bad)


def test_workflow_commands_cannot_start_a_line_or_add_a_property() -> None:
    data = workflow_data(HOSTILE)
    assert "\n" not in data and "\r" not in data and "%0A" in data and "%250A" in data
    prop = workflow_property("a.csv,line=1::error::x")
    assert "," not in prop and ":" not in prop


def test_terminal_json_escapes_controls_and_keeps_the_value() -> None:
    text = terminal_json({"partner": HOSTILE})
    assert not any(c in text for c in CONTROLS)
    assert json.loads(text) == {"partner": HOSTILE}


def test_markdown_keeps_a_date_and_a_version_as_written_and_still_breaks_links() -> None:
    from markdown_it import MarkdownIt

    assert markdown("2026-11-22T04:06:00.000Z") == "2026-11-22T04:06:00.000Z"
    assert markdown("CPython 3.11.7") == "CPython 3.11.7"
    # Beside a letter or a space the marks are escaped as before: no link, no list, no heading.
    assert markdown("http://1.2.3.4") == "http\\://1.2.3.4"
    assert markdown("www.x.org a@b.c") == "www\\.x\\.org a\\@b\\.c"
    assert markdown("1. - x") == "1\\. \\- x"
    shown = MarkdownIt("commonmark").render("- " + markdown("1-2:3.4 [a](b)"))
    assert shown == "<ul>\n<li>1-2:3.4 [a](b)</li>\n</ul>\n"


def test_a_json_value_in_a_line_is_its_json_text_cut_past_the_limit() -> None:
    assert json_line(True) == "true" and json_line(None) == "null"
    assert json_line({"a": [1, "é"]}) == '{"a": [1, "é"]}'  # one line, UTF-8 as it is
    assert json_line("line\nbreak") == '"line\\nbreak"'
    assert json_line("x" * 10, 6) == '"xxxx…' and json_line("xy", 6) == '"xy"'
