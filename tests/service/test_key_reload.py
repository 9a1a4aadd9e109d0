"""A running `serve` takes a key minted (or revoked) while it runs, from its next request: it
re-reads the agent-key file when the file changes, with no restart. A file changed into one that
does not load accepts no key (fail closed) and the log says so."""

from __future__ import annotations

import os
import urllib.error
import urllib.request
from pathlib import Path

from compliance_bake.identity.keyfile import mint_key
from tests.conftest import run_cli
from tests.support.live_service import LiveService

STATUS = "/api/compliance/status?state=MA&partner=node-bay-01"


def _status(base: str, key: str) -> int:
    request = urllib.request.Request(base + STATUS, headers={"Authorization": f"Bearer {key}"})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as refused:
        return refused.code


def _mint(keys_file: Path, label: str) -> str:
    done = run_cli("keys", "mint", "--keys-file", str(keys_file), "--label", label)
    assert done.returncode == 0, done.stderr
    assert "a running `serve`" in done.stderr and "next request" in done.stderr
    return done.stdout.strip()


def test_a_key_minted_while_serve_runs_is_accepted(baked: Path, tmp_path: Path) -> None:
    keys_file = tmp_path / "agent-keys.json"
    first = mint_key(keys_file, "first")
    with LiveService(keys_file=keys_file, out_dir=baked, cwd=tmp_path) as live:
        assert _status(live.url, first) == 200
        minted = _mint(keys_file, "later")
        assert _status(live.url, minted) == 200
        assert _status(live.url, first) == 200
        revoked = run_cli("keys", "revoke", "--keys-file", str(keys_file), minted[:5])
        assert revoked.returncode == 0, revoked.stderr
        assert _status(live.url, minted) == 401
        assert _status(live.url, first) == 200


def test_a_key_file_changed_into_garbage_accepts_no_key_until_it_loads(
    baked: Path, tmp_path: Path
) -> None:
    keys_file = tmp_path / "agent-keys.json"
    key = mint_key(keys_file, "only")
    good = keys_file.read_bytes()
    with LiveService(keys_file=keys_file, out_dir=baked, cwd=tmp_path) as live:
        assert _status(live.url, key) == 200
        keys_file.write_bytes(b'{"version": 1, "keys": [')
        assert _status(live.url, key) == 401
        keys_file.write_bytes(good)
        os.utime(keys_file, ns=(1, 1))  # a change the signature sees, whatever the clock did
        assert _status(live.url, key) == 200
        live.stop()
        log = "".join(live.log)
    assert "the agent-key file changed and no longer loads" in log
    assert key not in log
