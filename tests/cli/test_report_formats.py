"""Every report format behind the one interface (cli/reporters.FORMATS) passes the same test: the
same outcome, one passing and one failing, rendered by each; the verdict and the failure reach
each reader; hostile text from outside (ESC, C1, bidi overrides, a line break, markup) is
escaped for each format's language and never printed raw."""

from __future__ import annotations

import re

import pytest

from compliance_bake.cli.outcome import Case, Item, Outcome
from compliance_bake.cli.reporters import FORMATS

HOSTILE = "node\x1b]0;PWNED\x07-\x9b31m\u202eevil\n::error::fake <img src=x> [x](https://e)"
RAW = re.compile("[\x1b\x07\x9b\u202e]")


def _outcome(ok: bool) -> Outcome:
    case = Case(
        "NJ",
        ok,
        "1 disagreeing" if not ok else "agrees",
        () if ok else (Item(f"allowed without an active licence: {HOSTILE}", "licences.json", 7),),
    )
    verdict = "PASS: every check holds" if ok else f"FAIL: shadow {HOSTILE}"
    return Outcome("bake snapshot", ok, 0 if ok else 1, verdict, {"shadow": [case]}, {"ok": ok})


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_each_format_says_pass_and_fail(name: str) -> None:
    passing = FORMATS[name].make(_outcome(True)).decode("utf-8")
    failing = FORMATS[name].make(_outcome(False)).decode("utf-8")
    if name == "junit":  # a JUnit reader sees failures, not a verdict line
        assert 'failures="0"' in passing and "<failure" not in passing
        assert 'failures="1"' in failing and "<failure" in failing
    else:
        assert "PASS" in passing and "FAIL" in failing
    assert passing != failing
    assert FORMATS[name].name == name and FORMATS[name].suffix


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_each_format_escapes_hostile_text(name: str) -> None:
    text = FORMATS[name].make(_outcome(False)).decode("utf-8")
    assert RAW.search(text) is None, (name, text)
    assert not re.search(r"^::error::fake", text, re.M)  # no injected workflow command
    if name in ("junit", "markdown"):  # no live markup: escaped as &lt; or \<
        assert not re.search(r"(?<!\\)<img", text), text
    if name == "markdown":  # no live link
        assert "](https://e)" not in text
