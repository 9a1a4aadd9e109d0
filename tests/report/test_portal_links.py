"""The portal's links, followed from the page as a browser would, on a real static server
(python -m http.server publishing out/) and on the real `compliance-bake serve`.

The snapshot's `links` keep the values of the specification; `serve` answers every one of them,
and the page's own links (relative file names) resolve on both servers.
"""

from __future__ import annotations

import http.client
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest

from compliance_bake.identity.keyfile import mint_key
from compliance_bake.inputs.jsonio import loads_strict
from tests.conftest import NOW, SECRET, invoke
from tests.support.live_service import LiveService

PORTAL = "/portal/compliance/"


def _get(base: str, path: str) -> tuple[int, bytes]:
    parts = urlsplit(base)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=10)
    try:
        conn.request("GET", path)
        answer = conn.getresponse()
        return answer.status, answer.read()
    finally:
        conn.close()


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A signed bake (so the page links the attestation too)."""
    root = tmp_path_factory.mktemp("links")
    key = root / "signing.pem"
    assert invoke("signing-key", "mint", "--key-file", str(key)).exit_code == 0
    out = root / "out"
    args = ["--out", str(out), "--now", NOW, "--signing-key", str(key)]
    baked = invoke("bake", "snapshot", *args, env={"REPORT_SIGNING_SECRET": SECRET})
    assert baked.exit_code == 0, baked.output
    return out


@pytest.fixture(scope="module")
def static_server(out: Path) -> Iterator[str]:
    process = subprocess.Popen(
        [sys.executable, "-u", "-m", "http.server", "0", "--bind", "127.0.0.1"],
        cwd=out,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        found = re.search(r"port (\d+)", process.stdout.readline())
        assert found, "http.server did not announce its port"
        yield f"http://127.0.0.1:{found.group(1)}"
    finally:
        process.terminate()
        process.wait(timeout=10)
        if process.stdout is not None:
            process.stdout.close()


@pytest.fixture(scope="module")
def served(out: Path) -> Iterator[str]:
    keys_file = out.parent / "agent-keys.json"
    mint_key(keys_file, "test")
    with LiveService(keys_file=keys_file, out_dir=out, cwd=out.parent) as live:
        yield live.url


def _page_links(base: str) -> list[str]:
    status, page = _get(base, PORTAL)
    assert status == 200
    return sorted(set(re.findall(r'href="([^"#]+)"', page.decode("utf-8"))))


@pytest.mark.parametrize("server", ["static_server", "served"])
def test_every_link_of_the_page_resolves(
    server: str, out: Path, request: pytest.FixtureRequest
) -> None:
    base = request.getfixturevalue(server)
    hrefs = _page_links(base)
    assert hrefs == [
        "../../api/compliance.json",
        "../../attestation/compliance.intoto.json",
        "../../registry/compliance-enhancements.json",
        "../../registry/compliance-policy.json",
        "../../registry/compliance-shadow.json",
    ]
    for href in hrefs:
        target = urlsplit(urljoin(base + PORTAL, href)).path
        status, body = _get(base, target)
        assert status == 200, f"{server}: {target}"
        assert body == (out / target.lstrip("/")).read_bytes(), target


def test_serve_answers_every_link_of_the_snapshot_as_the_spec_writes_it(
    served: str, out: Path
) -> None:
    links = loads_strict((out / "api" / "compliance.json").read_bytes())["links"]
    assert links["api"] == "/api/compliance" and links["portal"] == PORTAL
    files = {
        "portal": "portal/compliance/index.html",
        "registryEnhancements": "registry/compliance-enhancements.json",
        "registryShadow": "registry/compliance-shadow.json",
        "api": "api/compliance.json",
    }
    for name, relative in files.items():
        status, body = _get(served, links[name])
        assert status == 200 and body == (out / relative).read_bytes(), name


def test_a_static_server_answers_the_links_that_name_files(static_server: str, out: Path) -> None:
    """Every spec link but `api` names a file (or folder) of out/; the page links the api's file
    name instead, which the test above follows."""
    links = loads_strict((out / "api" / "compliance.json").read_bytes())["links"]
    for name in ("portal", "registryEnhancements", "registryShadow"):
        assert _get(static_server, links[name])[0] == 200, name
    assert _get(static_server, links["api"])[0] == 404  # no file is named api/compliance
