"""`serve --log DIR` on a loopback port: the log's files under /log/, read-only, and every
reader (`log verify`, `witness`, `verify --log`) working from the URL as from the folder."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.log._log_helpers import get, log_verify, mint, served_log, verify_out, witness


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    root = tmp_path_factory.mktemp("served")
    mint(root, "regulator", "witness-key")
    with served_log(root, 3) as (url, _):
        yield url, root


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
