"""A URL's user name and password are dropped, never sent and never printed, on every path that
takes a URL (docs/service-api.md): `--target`, a published snapshot with its attestation
(`verify URL --public-key`), `verify --log URL`, `log verify URL`, `log show URL` and `witness
URL`. `verify URL` and `diff URL` are tests/verify/test_fetch.py's. A recording file server on
127.0.0.1 keeps every request's head."""

from __future__ import annotations

import base64
import shutil
import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from click.testing import Result

from tests.conftest import invoke
from tests.log._log_helpers import bake_env, baked_once, log_verify, mint, verify_out, witness

USER, PASSWORD = "auditor", "hunter2-url-password"
CREDENTIALS = f"{USER}:{PASSWORD}@"


class _Recording(SimpleHTTPRequestHandler):
    heads: list[str]  # set per server: the request line and headers of every request

    def do_GET(self) -> None:
        self.heads.append(self.requestline + "\n" + str(self.headers))
        super().do_GET()

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, list[str]]]:
    """A bake with --log published as files: out/ at /, the log at /tlog; the base URL with
    credentials in it, the folder, and the heads recorded."""
    root = tmp_path_factory.mktemp("credentials")
    with bake_env():
        out, log, _, _ = baked_once(root)
    mint(root, "regulator", "witness-key")
    site = root / "site"
    shutil.copytree(out, site)
    shutil.copytree(log, site / "tlog")
    heads: list[str] = []
    handler = type("Handler", (_Recording,), {"heads": heads})
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(handler, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://{CREDENTIALS}127.0.0.1:{server.server_address[1]}", root, heads
    finally:
        server.shutdown()
        server.server_close()


def _nothing_sent_or_shown(heads: list[str], result: Result) -> None:
    basic = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    assert heads, "no request reached the server"
    for head in heads:
        assert "authorization: basic" not in head.lower(), head
        assert PASSWORD not in head and USER not in head and basic not in head, head
    assert PASSWORD not in result.output and USER not in result.output, result.output


def test_a_published_snapshot_with_its_attestation(served: tuple[str, Path, list[str]]) -> None:
    base, root, heads = served
    heads.clear()
    result = invoke(
        "verify", f"{base}/api/compliance.json", "--public-key", str(root / "operator.pub.pem")
    )
    assert result.exit_code == 0, result.output
    assert any("attestation" in head for head in heads)
    _nothing_sent_or_shown(heads, result)


def test_verify_with_a_log_at_a_url(served: tuple[str, Path, list[str]]) -> None:
    base, root, heads = served
    heads.clear()
    result = verify_out(root / "out", root / "operator.pub.pem", "--log", f"{base}/tlog")
    assert result.exit_code == 0, result.output
    _nothing_sent_or_shown(heads, result)


def test_log_verify_and_log_show_at_a_url(served: tuple[str, Path, list[str]]) -> None:
    """`log verify --json` names the log by its URL without the password (its `log` field)."""
    base, root, heads = served
    heads.clear()
    verified = log_verify(f"{base}/tlog", root / "operator.pub.pem")
    assert verified.exit_code == 0, verified.output
    _nothing_sent_or_shown(heads, verified)
    heads.clear()
    shown = invoke(
        "log", "show", f"{base}/tlog", "0", "--public-key", str(root / "operator.pub.pem")
    )
    assert shown.exit_code == 0, shown.output
    _nothing_sent_or_shown(heads, shown)


def test_witness_at_a_url(served: tuple[str, Path, list[str]], tmp_path: Path) -> None:
    base, root, heads = served
    heads.clear()
    run = witness(
        f"{base}/tlog", root / "operator.pub.pem", root / "regulator.pem", tmp_path / "state.json"
    )
    assert run.exit_code == 0, run.output
    _nothing_sent_or_shown(heads, run)


def test_a_target_url(served: tuple[str, Path, list[str]]) -> None:
    """The files server answers no question of the contract (exit 3): what matters is what
    each request carried, and what the refusal says."""
    base, _, heads = served
    heads.clear()
    result = invoke(
        "check", "--target", base, "--partner", "p", "--state", "NJ", "--wager-type", "sports",
        env={"COMPLIANCE_AGENT_KEY": "x" * 40},
    )  # fmt: skip
    assert result.exit_code == 3, result.output
    assert "127.0.0.1" in result.output
    _nothing_sent_or_shown(heads, result)
