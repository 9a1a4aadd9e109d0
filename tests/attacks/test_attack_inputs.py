"""Attacks on the inputs: what a hostile or careless user hands the tool as a file.

A case that could block (a FIFO, /dev/zero, a socket) runs the real console script in its own
process with a generous timeout, so a reader that blocks fails the test (TimeoutExpired) instead
of hanging the suite; the others run in-process (click's CliRunner), to keep the suite fast.
The safe result is always exit 2 and one line naming the file.
"""

from __future__ import annotations

import contextlib
import os
import socket
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import Result

from compliance_bake.inputs.files import FIXTURE_MAX_BYTES
from compliance_bake.inputs.jsonio import MAX_DEPTH
from tests.conftest import NOW, SECRET, invoke, run_cli

DEEP = ("[" * 10_000 + "]" * 10_000).encode()
HUGE_INT = b'{"states": [], "partners": [], "x": ' + b"7" * 5_000 + b"}"


@contextlib.contextmanager
def _socket_at(path: Path) -> Iterator[None]:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.bind(str(path))
        yield


def _plant(kind: str, path: Path) -> contextlib.AbstractContextManager[None]:
    """Put a FIFO, /dev/zero (through a symlink), a socket, deep JSON or a huge integer at path."""
    if path.exists():
        path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "socket":
        return _socket_at(path)
    elif kind == "deep":
        path.write_bytes(DEEP)
    elif kind == "huge-int":
        path.write_bytes(HUGE_INT)
    return contextlib.nullcontext()


def _one_line(result: subprocess.CompletedProcess[str] | Result) -> str:
    assert result.stderr.count("\n") == 1, result.stderr
    assert "Traceback" not in result.stderr
    return result.stderr.strip()


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REPORT_SIGNING_SECRET")}
    return {**env, "REPORT_SIGNING_SECRET": SECRET, **extra}


NOT_REGULAR = {"fifo": "a FIFO", "dev-zero": "a character device", "socket": "a socket"}


@pytest.mark.parametrize(
    ("kind", "name"),
    [
        ("fifo", "licences.json"),
        ("fifo", "geo.json"),
        ("dev-zero", "licences.json"),
        ("socket", "licences.json"),
    ],
)
def test_a_fixture_that_is_not_a_regular_file_is_refused_without_blocking(
    kind: str, name: str, fixtures_copy: Path, tmp_path: Path
) -> None:
    target = fixtures_copy / name
    with _plant(kind, target):
        result = run_cli(
            "bake",
            "snapshot",
            "--fixtures",
            str(fixtures_copy),
            "--out",
            str(tmp_path / "out"),
            "--now",
            NOW,
            env=_env(),
        )
    line = _one_line(result)
    assert result.returncode == 2
    assert f"{target}: not a regular file ({NOT_REGULAR[kind]})" in line
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("kind", ["deep", "huge-int"])
def test_parser_limits_in_a_fixture_are_bad_input_naming_the_file(
    kind: str, fixtures_copy: Path, tmp_path: Path
) -> None:
    target = fixtures_copy / "licences.json"
    _plant(kind, target)
    result = invoke(
        "bake", "snapshot", "--fixtures", str(fixtures_copy), "--out", str(tmp_path / "out")
    )
    line = _one_line(result)
    assert result.exit_code == 2
    assert line.startswith(f"compliance-bake: error: {target}: ")
    expected = f"deeper than {MAX_DEPTH}" if kind == "deep" else "more than 4,300 digits"
    assert expected in line


def test_an_oversized_fixture_is_refused_from_its_size_before_reading(
    fixtures_copy: Path, tmp_path: Path
) -> None:
    target = fixtures_copy / "licences.json"
    with target.open("r+b") as handle:  # sparse: 200 MB on paper, nothing on disk
        handle.truncate(200 * 1024 * 1024)
    result = invoke(
        "bake", "snapshot", "--fixtures", str(fixtures_copy), "--out", str(tmp_path / "out")
    )
    line = _one_line(result)
    assert result.exit_code == 2
    assert f"{target}: the fixture file is 200 MiB, over the 64 MiB limit" in line
    assert FIXTURE_MAX_BYTES == 64 * 1024 * 1024  # docs/limits.md says so


@pytest.mark.parametrize("kind", ["fifo", "deep", "huge-int"])
def test_serve_with_a_hostile_fixture_exits_2_with_one_line(
    kind: str, fixtures_copy: Path, tmp_path: Path
) -> None:
    _plant(kind, fixtures_copy / "geo.json")
    args = ["serve", "--port", "0", "--fixtures", str(fixtures_copy)]
    args += ["--keys-file", str(tmp_path / "keys.json"), "--out", str(tmp_path / "out")]
    # A FIFO could block: a process of its own. The others fail before binding: in-process.
    result = run_cli(*args, env=_env()) if kind == "fifo" else invoke(*args)
    line = _one_line(result)
    ran_apart = isinstance(result, subprocess.CompletedProcess)
    code = result.returncode if ran_apart else result.exit_code
    assert code == 2
    assert str(fixtures_copy / "geo.json") in line


def _secret_file_env(path: Path) -> dict[str, str]:
    env = _env()
    del env["REPORT_SIGNING_SECRET"]
    return {**env, "REPORT_SIGNING_SECRET_FILE": str(path)}


SECRET_PATHS: dict[str, Callable[[Path], tuple[list[str], dict[str, str]]]] = {
    "--secret-file": lambda p: (["--secret-file", str(p)], _env()),
    "REPORT_SIGNING_SECRET_FILE": lambda p: ([], _secret_file_env(p)),
}


@pytest.mark.parametrize(
    ("source", "kind"),
    [
        ("--secret-file", "fifo"),
        ("--secret-file", "dev-zero"),
        ("REPORT_SIGNING_SECRET_FILE", "fifo"),
    ],
)
def test_a_secret_file_that_is_not_a_regular_file_is_refused(
    source: str, kind: str, tmp_path: Path
) -> None:
    secret = tmp_path / "signing.secret"
    _plant(kind, secret)
    args, env = SECRET_PATHS[source](secret)
    result = run_cli("bake", "snapshot", "--out", str(tmp_path / "out"), *args, env=env)
    line = _one_line(result)
    assert result.returncode == 2
    assert "not a regular file" in line and str(secret) in line


def test_an_agent_key_file_that_is_a_fifo_is_refused(tmp_path: Path) -> None:
    key_file = tmp_path / "agent.key"
    os.mkfifo(key_file, 0o600)
    result = run_cli(
        "check",
        "--target",
        "http://127.0.0.1:9",
        "--agent-key-file",
        str(key_file),
        "--partner",
        "node-bay-01",
        "--state",
        "MA",
        "--wager-type",
        "basketball.totals",
        env=_env(),
    )
    line = _one_line(result)
    assert result.returncode == 2
    assert f"{key_file}: not a regular file (a FIFO)" in line


@pytest.mark.parametrize("kind", ["fifo"])
def test_an_agent_keys_store_that_is_not_a_regular_file_is_refused(
    kind: str, tmp_path: Path
) -> None:
    keys = tmp_path / "agent-keys.json"
    _plant(kind, keys)
    result = run_cli("keys", "list", "--keys-file", str(keys), env=_env())
    line = _one_line(result)
    assert result.returncode == 2
    assert f"{keys}: not a regular file" in line


def test_both_secret_variables_set_is_refused_as_ambiguous(tmp_path: Path) -> None:
    other = tmp_path / "vault.secret"
    other.write_text("x" * 40)
    other.chmod(0o600)
    result = invoke(
        "bake",
        "snapshot",
        "--out",
        str(tmp_path / "out"),
        env={"REPORT_SIGNING_SECRET_FILE": str(other)},
    )
    line = _one_line(result)
    assert result.exit_code == 2
    assert "$REPORT_SIGNING_SECRET and $REPORT_SIGNING_SECRET_FILE" in line
    assert "ambiguous" in line and SECRET not in line and "x" * 40 not in line
    assert not (tmp_path / "out").exists()


def test_a_bake_under_umask_077_publishes_folders_0755(tmp_path: Path) -> None:
    out = tmp_path / "deep" / "out"
    saved = os.umask(0o077)
    try:
        result = invoke("bake", "snapshot", "--out", str(out))
    finally:
        os.umask(saved)
    assert result.exit_code == 0, result.output
    folders = [out.parent, out, *(p for p in out.rglob("*") if p.is_dir())]
    assert len(folders) == 6  # deep, out, api, registry, portal, portal/compliance
    assert {oct(stat.S_IMODE(p.stat().st_mode)) for p in folders} == {"0o755"}
    files = [p for p in out.rglob("*") if p.is_file()]
    assert {oct(stat.S_IMODE(p.stat().st_mode)) for p in files} == {"0o644"}


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_public_key_that_is_not_a_regular_file_is_refused(kind: str, tmp_path: Path) -> None:
    public = tmp_path / "signing-key.pub.pem"
    _plant(kind, public)
    code = (
        "import sys; from pathlib import Path; "
        "from compliance_bake.signing.signing_key import SigningKeyError, read_public_key\n"
        "try: read_public_key(Path(sys.argv[1]), '--public-key')\n"
        "except SigningKeyError as exc: print(exc.one_line()); sys.exit(2)"
    )
    result = subprocess.run(  # its own process: a reader that blocks fails on the timeout
        [sys.executable, "-c", code, str(public)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 2, result.stderr
    assert f"--public-key: {public}: not a regular file" in result.stdout
