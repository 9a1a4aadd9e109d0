"""Shared by the log tests: keys, bakes with --log, and the real CLI's answers."""

from __future__ import annotations

import contextlib
import http.client
import json
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from click.testing import Result

from tests.conftest import SECRET, invoke

ORIGIN = "compliance.example.com/registry"


@contextlib.contextmanager
def bake_env() -> Iterator[None]:
    """The test secret and NO_COLOR for a module-scoped fixture, whose bakes run before any
    test's own environment is set (pytest's monkeypatch fixture is per test)."""
    mp = pytest.MonkeyPatch()
    mp.setenv("REPORT_SIGNING_SECRET", SECRET)
    mp.setenv("NO_COLOR", "1")
    try:
        yield
    finally:
        mp.undo()


def mint(tmp: Path, name: str, kind: str = "signing-key") -> tuple[Path, Path]:
    private = tmp / f"{name}.pem"
    result = invoke(kind, "mint", "--key-file", str(private))
    assert result.exit_code == 0, result.output
    return private, tmp / f"{name}.pub.pem"


def bake(out: Path, log: Path, key: Path, day: int, *extra: str) -> Result:
    return invoke(
        "bake", "snapshot", "--out", str(out), "--signing-key", str(key), "--log", str(log),
        "--log-origin", ORIGIN, "--now", f"2026-11-{day:02d}T04:06:00Z", "--json", *extra,
    )  # fmt: skip


def baked_once(tmp: Path) -> tuple[Path, Path, Path, Path]:
    """One bake with --log: its out/, the log, the operator's private and public keys."""
    private, public = mint(tmp, "operator")
    out, log = tmp / "out", tmp / "log"
    assert bake(out, log, private, 1).exit_code == 0
    return out, log, private, public


def log_verify(location: str | Path, public: Path) -> Result:
    return invoke("log", "verify", str(location), "--public-key", str(public), "--json")


def verify_out(out: Path, public: Path, *extra: str) -> Result:
    return invoke("verify", str(out), "--public-key", str(public), "--json", *extra)


def witness(location: str | Path, log_key: Path, witness_key: Path, state: Path) -> Result:
    return invoke(
        "witness", str(location), "--log-key", str(log_key), "--witness-key", str(witness_key),
        "--state", str(state), "--now", "2026-11-30T00:00:00Z",
    )  # fmt: skip


def failures(result: Result) -> list[str]:
    """The failed findings of `verify --json` as "file: what" lines."""
    doc = json.loads(result.stdout)
    return [f"{f['file']}: {f['what']}" for f in doc["failures"]]


@contextlib.contextmanager
def served_log(root: Path, days: int) -> Iterator[tuple[str, Path]]:
    """`serve --log` on a loopback port over a log of `days` bakes (out1 to outN, the last
    one served): the log's URL and the operator's private key; stopped on exit."""
    from compliance_bake.identity.keyfile import mint_key
    from tests.support.live_service import LiveService

    with bake_env():
        private, _ = mint(root, "operator")
        for day in range(1, days + 1):
            assert bake(root / f"out{day}", root / "log", private, day).exit_code == 0
    keys_file = root / "agent-keys.json"
    mint_key(keys_file, "test")
    extra = ("--log", str(root / "log"))
    with LiveService(
        keys_file=keys_file, out_dir=root / f"out{days}", cwd=root, extra_args=extra
    ) as live:
        yield live.url + "/log", private


def get(url: str) -> tuple[int, dict[str, str], bytes]:
    """One plain GET: status, headers, body (whatever the status)."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port or 0, timeout=10)
    try:
        conn.request("GET", parts.path)
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        conn.close()
