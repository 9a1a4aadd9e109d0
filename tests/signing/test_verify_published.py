"""`verify URL --public-key`: an auditor with the public key alone checks a published bake. The
attestation is fetched from beside the snapshot, and every file it names; one edited published
file fails it, a missing attestation is named. Against `serve` and a plain static server on
loopback ports, through the real CLI in a process with no report signing secret anywhere."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from compliance_bake.identity.keyfile import mint_key
from tests._attest_helpers import KeyPair, bake
from tests.conftest import run_cli
from tests.support.live_service import LiveService

SUBJECTS = [
    "api/compliance.json",
    "portal/compliance/index.html",
    "registry/compliance-enhancements.json",
    "registry/compliance-shadow.json",
]


def _auditor(
    tmp_path: Path, url: str, public: Path, *extra: str
) -> subprocess.CompletedProcess[str]:
    """The auditor's run: no secret in the environment, none in the folder it runs in."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("REPORT_SIGNING_SECRET")}
    home = tmp_path / "auditor"
    home.mkdir(exist_ok=True)
    return run_cli("verify", url, "--public-key", str(public), "--json", *extra, env=env, cwd=home)


def _failures(done: subprocess.CompletedProcess[str]) -> list[str]:
    return [f"{f['file']}: {f['what']}" for f in json.loads(done.stdout)["failures"]]


@pytest.fixture
def served(attested: Path, tmp_path: Path) -> Iterator[str]:
    keys_file = tmp_path / "agent-keys.json"
    mint_key(keys_file, "test")
    with LiveService(keys_file=keys_file, out_dir=attested, cwd=tmp_path) as live:
        yield live.url


@pytest.mark.parametrize("path", ["/api/compliance.json", "/api/compliance"])
def test_a_served_signed_bake_verifies_with_the_public_key_alone(
    served: str, key: KeyPair, tmp_path: Path, path: str
) -> None:
    done = _auditor(tmp_path, served + path, key.public)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["authentic"]["ok"] is True and report["compliant"]["ok"] is True
    assert report["sourceKind"] == "url" and report["source"] == served + path
    assert any(key.key_id in signer for signer in report["authentic"]["signers"])
    assert "REPORT_SIGNING_SECRET" not in done.stdout
    assert "compliance-bake-verify-" not in done.stdout + done.stderr  # the copy is not shown
    assert any("not fetched or checked without --log" in note for note in report["notes"])


@pytest.mark.parametrize("name", SUBJECTS)
def test_one_edited_published_file_fails(
    served: str, attested: Path, key: KeyPair, tmp_path: Path, name: str
) -> None:
    path = attested / name
    data = bytearray(path.read_bytes())
    where = len(data) // 2
    while chr(data[where]) in " \n":
        where += 1
    data[where] = ord("x") if data[where] != ord("x") else ord("y")
    path.write_bytes(bytes(data))
    done = _auditor(tmp_path, served + "/api/compliance.json", key.public)
    assert done.returncode == 1, done.stdout + done.stderr
    assert any(line.startswith(f"{name}: ") for line in _failures(done)), _failures(done)
    assert json.loads(done.stdout)["authentic"]["ok"] is False


def test_a_missing_attestation_is_named(
    served: str, attested: Path, key: KeyPair, tmp_path: Path
) -> None:
    (attested / "attestation" / "compliance.intoto.json").unlink()
    done = _auditor(tmp_path, served + "/api/compliance", key.public)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "attestation/compliance.intoto.json: attestation: missing" in "\n".join(_failures(done))


def test_another_key_does_not_verify_it(served: str, tmp_path: Path) -> None:
    from tests._attest_helpers import mint

    other = mint(tmp_path / "other")
    done = _auditor(tmp_path, served + "/api/compliance.json", other.public)
    assert done.returncode == 1, done.stdout + done.stderr
    assert any("signature" in line for line in _failures(done))


def test_a_url_that_is_not_a_published_snapshot_is_bad_input(
    served: str, key: KeyPair, tmp_path: Path
) -> None:
    done = _auditor(tmp_path, served + "/registry/compliance-shadow.json", key.public)
    assert done.returncode == 2, done.stdout + done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "api/compliance" in done.stderr


@pytest.fixture
def static_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A plain static server publishing a folder, as any host would publish out/."""
    root = tmp_path / "site"
    root.mkdir()
    process = subprocess.Popen(
        [sys.executable, "-u", "-m", "http.server", "0", "--bind", "127.0.0.1"],
        cwd=root, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        found = re.search(r"port (\d+)", process.stdout.readline())
        assert found, "http.server did not announce its port"
        yield f"http://127.0.0.1:{found.group(1)}", root
    finally:
        process.terminate()
        process.wait(timeout=10)
        if process.stdout is not None:
            process.stdout.close()


def test_a_statically_published_bake_with_its_log_proof(
    static_server: tuple[str, Path], key: KeyPair, tmp_path: Path
) -> None:
    url, root = static_server
    log = tmp_path / "log"
    bake(root / "pub", key, "--log", str(log), "--log-origin", "compliance.example.com/registry")
    snapshot = f"{url}/pub/api/compliance.json"
    done = _auditor(tmp_path, snapshot, key.public, "--log", str(log))
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert any("transparency log" in line for line in report["applied"]), report["applied"]
    inclusion = root / "pub" / "log" / "inclusion.json"
    proof = json.loads(inclusion.read_text())
    proof["logIndex"] += 1
    inclusion.write_text(json.dumps(proof))
    tampered = _auditor(tmp_path, snapshot, key.public, "--log", str(log))
    assert tampered.returncode == 1, tampered.stdout + tampered.stderr
    assert any(line.startswith("log/inclusion.json") for line in _failures(tampered))
    inclusion.unlink()
    (root / "pub" / "log" / "checkpoint").unlink()
    missing = _auditor(tmp_path, snapshot, key.public, "--log", str(log))
    assert missing.returncode == 1, missing.stdout + missing.stderr
    assert any(line.startswith("log/: missing") for line in _failures(missing))


def test_a_signed_attestation_naming_a_folder_fails_as_a_check_not_a_crash(
    attested: Path, key: KeyPair, tmp_path: Path
) -> None:
    """A validly signed attestation whose subjects name `portal/compliance`, the folder that
    holds the page, beside the page itself, on a server that answers both: the published copy
    cannot hold both, and the check fails (exit 1) naming it; never a NotADirectoryError
    (exit 4)."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from compliance_bake.inputs.jsonio import loads_strict
    from compliance_bake.signing.attestation import ATTESTATION_FILE, render_attestation
    from compliance_bake.signing.signing_key import load_signing_key

    files = {
        p.relative_to(attested).as_posix(): p.read_bytes()
        for p in sorted(attested.rglob("*"))
        if p.is_file() and p.relative_to(attested).as_posix() != ATTESTATION_FILE
    }
    files["portal/compliance"] = b"a folder, named as a file\n"
    snapshot = loads_strict((attested / "api" / "compliance.json").read_bytes())
    signing = load_signing_key(key.private, "test")
    envelope = render_attestation(files, snapshot, signing)
    published = {"/" + name: data for name, data in {**files, ATTESTATION_FILE: envelope}.items()}

    class Hostile(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the stdlib's name)
            body = published.get(self.path)
            self.send_response(200 if body is not None else 404)
            self.send_header("Content-Length", str(len(body or b"")))
            self.end_headers()
            self.wfile.write(body or b"")

        def log_message(self, *_: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Hostile)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/api/compliance.json"
        done = _auditor(tmp_path, url, key.public)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and "NotADirectoryError" not in done.stderr
    assert any(line.startswith("portal/compliance") for line in _failures(done)), done.stdout
