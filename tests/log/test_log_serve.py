"""`serve --log DIR` on a loopback port: the log's files under /log/, read-only, and every
reader (`log verify`, `witness`, `verify --log`) working from the URL as from the folder."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from compliance_bake.identity.keyfile import mint_key
from tests.log._log_helpers import bake, log_verify, mint, verify_out, witness
from tests.support.live_service import LiveService


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    mp = pytest.MonkeyPatch()
    mp.setenv("REPORT_SIGNING_SECRET", "test-secret-0123456789abcdef0123456789abcdef")
    root = tmp_path_factory.mktemp("served")
    try:
        private, _ = mint(root, "operator")
        mint(root, "regulator", "witness-key")
        for day in (1, 2, 3):
            assert bake(root / f"out{day}", root / "log", private, day).exit_code == 0
    finally:
        mp.undo()
    keys_file = root / "agent-keys.json"
    mint_key(keys_file, "test")
    extra = ("--log", str(root / "log"))
    with LiveService(
        keys_file=keys_file, out_dir=root / "out3", cwd=root, extra_args=extra
    ) as live:
        yield live.url + "/log", root


def get(url: str) -> tuple[int, dict[str, str], bytes]:
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port or 0, timeout=10)
    try:
        conn.request("GET", parts.path)
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        conn.close()


def test_the_files_are_served_as_they_are(served: tuple[str, Path]) -> None:
    url, root = served
    status, headers, body = get(f"{url}/checkpoint")
    assert status == 200 and body == (root / "log" / "checkpoint").read_bytes()
    assert (
        headers["content-type"].startswith("text/plain") and headers["cache-control"] == "no-cache"
    )
    status, headers, body = get(f"{url}/tile/0/000.p/3")
    assert status == 200 and body == (root / "log" / "tile" / "0" / "000.p" / "3").read_bytes()
    assert headers["content-type"] == "application/octet-stream"


@pytest.mark.parametrize(
    "path",
    ["operator.pem", "tile/0/000.p/9", "tile/0/000.p/0", "tile/x/000", "%2e%2e/operator.pem"],
)
def test_nothing_but_the_logs_files_is_served(served: tuple[str, Path], path: str) -> None:
    url, _ = served
    status, _, body = get(f"{url}/{path}")
    assert status == 404 and b"BEGIN" not in body


def test_every_reader_works_from_the_url(served: tuple[str, Path]) -> None:
    url, root = served
    public = root / "operator.pub.pem"
    result = log_verify(url, public)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["size"] == 3
    run = witness(url, public, root / "regulator.pem", root / "state.json")
    assert run.exit_code == 0, run.output
    assert "cosignature" not in run.stdout and run.stdout.count("\u2014") == 2
    assert verify_out(root / "out1", public, "--log", url).exit_code == 0
