"""xmllint with Jenkins' junit-10.xsd (beside this file): how the tests read JUnit."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from xml.etree import ElementTree

XSD = Path(__file__).resolve().parent / "junit-10.xsd"


def xmllint(path: Path) -> subprocess.CompletedProcess[str]:
    """xmllint's schema validation; xmllint comes with `make tools` (Debian libxml2-utils)."""
    found = shutil.which("xmllint")
    assert found, "xmllint is missing: run `make tools` (Debian: apt-get install libxml2-utils)"
    return subprocess.run(
        [found, "--noout", "--schema", str(XSD), str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )


def assert_valid(path: Path) -> ElementTree.Element:
    checked = xmllint(path)
    assert checked.returncode == 0, checked.stderr
    return ElementTree.parse(path).getroot()
