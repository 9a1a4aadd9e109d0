"""The demo bake's bytes, held: same fixtures, clock and test secret => these exact sha256s.

The digests are the contract's bytes and must not move: a change that alters a single byte of
the four JSON documents fails here. The portal page is held on its own
(tests/report/test_portal_golden.py, regenerated on request); the JSON documents are the contract.

The deep-audit run names its plays file by a relative path from the project root, so the
`command` string recorded in the report is the same on every machine.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from compliance_bake.resources import demo_fixtures_dir
from tests.conftest import NOW, invoke

FILES = (
    "api/compliance.json",
    "registry/compliance-enhancements.json",
    "registry/compliance-shadow.json",
    "registry/compliance-policy.json",
)

# sha256 of each file in FILES order.
GOLDEN: dict[str, tuple[str, str, str, str]] = {
    "plain": (
        "c78659a00cbaa1ee7ffe83682d988f6612b694083f7d0f103c4b42e35df12699",
        "08d119b7a57f08b6c72f12c7305d634cb9a38d7522c03bfd1c6b4a02aaf533e1",
        "b42b2c4b36df8a44b69c24b054f763fc11f8a55856a1b710aec9174df23fea82",
        "66195b826885986159646522088e14042e55b15d6ca20e74f8b32c157e9aa819",
    ),
    "deep-audit": (
        "4598d1788308f278e21453e6c905fa5da49a83a2ffa61952d8e7f3983a64a09a",
        "08d119b7a57f08b6c72f12c7305d634cb9a38d7522c03bfd1c6b4a02aaf533e1",
        "b42b2c4b36df8a44b69c24b054f763fc11f8a55856a1b710aec9174df23fea82",
        "66195b826885986159646522088e14042e55b15d6ca20e74f8b32c157e9aa819",
    ),
}


def _digests(out: Path) -> dict[str, str]:
    return {name: hashlib.sha256((out / name).read_bytes()).hexdigest() for name in FILES}


@pytest.mark.parametrize("case", ["plain", "deep-audit"])
def test_demo_bake_bytes_are_unchanged(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = demo_fixtures_dir().parent
    monkeypatch.chdir(root)
    extra = ["--deep-audit", "fixtures/plays.csv"] if case == "deep-audit" else []
    out = tmp_path / "out"
    result = invoke("bake", "snapshot", "--out", str(out), "--now", NOW, *extra)
    assert result.exit_code == 0, result.output
    assert _digests(out) == dict(zip(FILES, GOLDEN[case], strict=True))
