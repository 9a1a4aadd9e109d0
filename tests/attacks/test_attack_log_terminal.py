"""`log verify` lists the entries' fields escaped: an entry whose `generatedAt` or `target`
carries an OSC hyperlink, a window-title change, a C1 CSI or a bidi override reaches the
regulator's terminal as visible `\\xNN` / `\\uNNNN` text. A line printed unescaped would
hold the ESC, BEL, C1 and U+202E bytes, which the tests look for."""

from __future__ import annotations

import re
from pathlib import Path

from compliance_bake.log import append
from compliance_bake.signing.signing_key import load_signing_key
from tests.conftest import invoke
from tests.log._log_helpers import ORIGIN, mint

RAW = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
HOSTILE = {
    "generatedAt": "2026-11-22T04:06:00Z\x1b]0;PWNED\x07",
    "target": "\x1b]8;;https://evil.example/\x07https://prod.example\x1b]8;;\x07 \x9b2J \u202etxt",
    "verdict": {"ok": True, "board": {"passed": "\x1b[31m9", "total": 9}, "shadowMismatches": 0},
}


def test_log_verify_prints_an_entrys_fields_escaped(tmp_path: Path) -> None:
    private, public = mint(tmp_path, "operator")
    log = tmp_path / "log"
    append.append_entry(log, ORIGIN, HOSTILE, load_signing_key(private, "test"))
    result = invoke("log", "verify", str(log), "--public-key", str(public))
    assert result.exit_code == 0, result.output
    assert RAW.findall(result.output) == []
    assert "\\x1b]0;PWNED\\x07" in result.output  # shown, not dropped
    assert "\\x1b]8;;https://evil.example/\\x07https://prod.example" in result.output
    assert "\\x9b2J \\u202etxt" in result.output
    assert "self-checks \\x1b[31m9/9" in result.output
