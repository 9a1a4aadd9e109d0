"""REPORT_SIGNING_SECRET: refused when missing, empty, short or exposed; found in the documented
order; minted 0600 without being shown; never printed, logged, put in a traceback or baked.

Refusals run the real CLI (in-process for the matrix, a clean subprocess for the missing secret):
exit 2, one line on stderr that says how to fix it, and an out/ baked before left as it was.
"""

from __future__ import annotations

import json
import os
import stat
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from compliance_bake.errors import SecretError
from compliance_bake.signing.secret import (
    ENV_FILE,
    ENV_VALUE,
    LOCAL_FILE,
    MIN_LENGTH,
    Secret,
    require_secret,
    resolve_secret,
)
from tests._inputs_helpers import (
    CASES,
    DEMO,
    GOOD_SECRET,
    NOW,
    Job,
    assert_one_line_refusal,
    bake_args,
    bake_good,
    invoke,
    process_env,
    run_process,
    run_processes,
    stray_files,
    tree_state,
)


def _write_secret(path: Path, value: str, mode: int = 0o600) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(value + "\n", encoding="utf-8")
    path.chmod(mode)
    return path


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


# --- refusals through the CLI ----------------------------------------------------------------

# Each setup gets tmp_path (also the cwd of the run) and returns (env, extra args, the value that
# must not be shown or None, fragments of the line).
Prepared = tuple[dict[str, str | None], list[str], str | None, list[str]]
Setup = Callable[[Path], Prepared]


def _empty(_: Path) -> Prepared:
    return {ENV_VALUE: ""}, [], None, [f"${ENV_VALUE} is empty", "secret mint"]


def _blank(_: Path) -> Prepared:
    return {ENV_VALUE: " \t\n "}, [], None, [f"${ENV_VALUE} is empty"]


def _short(_: Path) -> Prepared:
    value = "short-" + "s" * (MIN_LENGTH - 7)
    assert len(value) == MIN_LENGTH - 1
    return {ENV_VALUE: value}, [], value, [f"shorter than {MIN_LENGTH}", "secret mint"]


def _file_0644(tmp: Path) -> Prepared:
    path = _write_secret(tmp / "world.secret", GOOD_SECRET + "-file", 0o644)
    fragments = ["--secret-file", "readable by others", "0644", f"chmod 600 {path}"]
    return {}, ["--secret-file", str(path)], GOOD_SECRET + "-file", fragments


def _file_0640(tmp: Path) -> Prepared:
    path = _write_secret(tmp / "group.secret", GOOD_SECRET + "-group", 0o640)
    return {}, ["--secret-file", str(path)], GOOD_SECRET + "-group", [f"chmod 600 {path}"]


def _file_short(tmp: Path) -> Prepared:
    path = _write_secret(tmp / "short.secret", "tiny-secret")
    fragments = [str(path), f"shorter than {MIN_LENGTH}"]
    return {}, ["--secret-file", str(path)], "tiny-secret", fragments


def _file_empty(tmp: Path) -> Prepared:
    path = _write_secret(tmp / "empty.secret", "")
    return {}, ["--secret-file", str(path)], None, [str(path), "is empty"]


def _file_missing(tmp: Path) -> Prepared:
    path = tmp / "nowhere.secret"
    return {}, ["--secret-file", str(path)], None, [f"{path} does not exist", "secret mint"]


def _env_file_0644(tmp: Path) -> Prepared:
    path = _write_secret(tmp / "vault.secret", GOOD_SECRET + "-vault", 0o644)
    env: dict[str, str | None] = {ENV_VALUE: None, ENV_FILE: str(path)}
    return env, [], GOOD_SECRET + "-vault", [f"${ENV_FILE}", f"chmod 600 {path}"]


def _local_0644(tmp: Path) -> Prepared:
    _write_secret(tmp / LOCAL_FILE, GOOD_SECRET + "-local", 0o644)
    fragments = ["the local secret", "readable by others", f"chmod 600 {Path.cwd() / LOCAL_FILE}"]
    return {ENV_VALUE: None}, [], GOOD_SECRET + "-local", fragments


REFUSED: dict[str, Setup] = {
    "env-empty": _empty,
    "env-blank": _blank,
    "env-too-short": _short,
    "secret-file-0644": _file_0644,
    "secret-file-0640": _file_0640,
    "secret-file-too-short": _file_short,
    "secret-file-empty": _file_empty,
    "secret-file-missing": _file_missing,
    "env-file-0644": _env_file_0644,
    "local-file-0644": _local_0644,
}


@pytest.mark.parametrize("setup", REFUSED.values(), ids=list(REFUSED))
def test_bad_secret_exits_2_with_one_line_and_keeps_out(
    setup: Setup, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    before = bake_good(out)
    monkeypatch.chdir(tmp_path)
    env, extra, value, fragments = setup(tmp_path)

    run = invoke(bake_args(DEMO, out, *extra), env=env)
    line = assert_one_line_refusal(run)
    for fragment in fragments:
        assert fragment in line, (fragment, line)
    if value is not None:
        assert value.strip() not in run.text
    assert tree_state(out) == before
    assert stray_files(out) == []


def test_missing_secret_is_refused_in_a_clean_process(tmp_path: Path) -> None:
    """No variable, no --secret-file, and a cwd without .compliance-bake: exit 2, one line."""
    out = tmp_path / "out"
    before = bake_good(out)
    env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", str(tmp_path))}
    assert not (tmp_path / LOCAL_FILE.parent).exists()

    run = run_process(Job(bake_args(DEMO, Path("out")), env, tmp_path))
    line = assert_one_line_refusal(run)
    assert "no report signing secret is configured" in line
    for fix in ("compliance-bake secret mint", ENV_VALUE, ENV_FILE):
        assert fix in line, (fix, line)
    assert tree_state(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


# --- resolution order ------------------------------------------------------------------------


def test_resolution_order_follows_the_design(tmp_path: Path) -> None:
    """--secret-file, then $REPORT_SIGNING_SECRET, then $REPORT_SIGNING_SECRET_FILE, then the
    local minted file; with none of them, no secret."""
    values = {name: f"{name}-{uuid.uuid4().hex}" for name in ("flag", "env", "envfile", "local")}
    flag = _write_secret(tmp_path / "flag.secret", values["flag"])
    env_file = _write_secret(tmp_path / "vault" / "env.secret", values["envfile"])
    local = _write_secret(tmp_path / LOCAL_FILE, values["local"])
    environ = {ENV_VALUE: values["env"], ENV_FILE: str(env_file)}

    found = resolve_secret(flag, environ=dict(environ), cwd=tmp_path)
    assert found is not None
    assert (found.value, found.source) == (values["flag"], f"--secret-file ({flag})")

    found = resolve_secret(None, environ={ENV_VALUE: values["env"]}, cwd=tmp_path)
    assert found is not None
    assert (found.value, found.source) == (values["env"], f"${ENV_VALUE}")

    with pytest.raises(SecretError, match="ambiguous"):  # both: tests/attacks covers the CLI
        resolve_secret(None, environ=dict(environ), cwd=tmp_path)

    found = resolve_secret(None, environ={ENV_FILE: str(env_file)}, cwd=tmp_path)
    assert found is not None
    assert (found.value, found.source) == (values["envfile"], f"${ENV_FILE} ({env_file})")

    found = resolve_secret(None, environ={}, cwd=tmp_path)
    assert found is not None
    assert (found.value, found.source) == (values["local"], f"the local secret ({local})")

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert resolve_secret(None, environ={}, cwd=elsewhere) is None
    with pytest.raises(SecretError, match="no report signing secret is configured"):
        require_secret(None, environ={}, cwd=elsewhere)


@pytest.mark.parametrize(
    "broken",
    ["flag-0644", "env-too-short", "env-file-0644", "env-file-missing"],
)
def test_a_broken_source_is_refused_not_skipped(broken: str, tmp_path: Path) -> None:
    """A configured source that is bad is an error, never a reason to try the next one."""
    good_file = _write_secret(tmp_path / "good.secret", GOOD_SECRET)
    _write_secret(tmp_path / LOCAL_FILE, GOOD_SECRET + "-local")
    flag: Path | None = None
    environ: dict[str, str] = {}
    if broken == "flag-0644":
        flag = _write_secret(tmp_path / "flag.secret", GOOD_SECRET + "-flag", 0o644)
        environ = {ENV_VALUE: GOOD_SECRET, ENV_FILE: str(good_file)}
    elif broken == "env-too-short":
        environ = {ENV_VALUE: "too-short"}
    elif broken == "env-file-0644":
        environ = {ENV_FILE: str(_write_secret(tmp_path / "v.secret", GOOD_SECRET, 0o644))}
    else:
        environ = {ENV_FILE: str(tmp_path / "absent.secret")}
    with pytest.raises(SecretError) as caught:
        resolve_secret(flag, environ=environ, cwd=tmp_path)
    assert GOOD_SECRET not in caught.value.one_line()
    assert "too-short" not in caught.value.one_line()


def test_secret_hides_its_value(tmp_path: Path) -> None:
    value = "SENTINEL-" + uuid.uuid4().hex + uuid.uuid4().hex
    path = _write_secret(tmp_path / "s.secret", value)
    for secret in (
        resolve_secret(None, environ={ENV_VALUE: value}, cwd=tmp_path),
        resolve_secret(path, environ={}, cwd=tmp_path),
        Secret(value, "a test"),
    ):
        assert secret is not None and secret.value == value
        shown = [repr(secret), str(secret), f"{secret}", f"{secret!r}", format(secret, "")]
        for text in shown:
            assert value not in text and value[9:] not in text, text
        assert secret.source in str(secret)


# --- secret mint -----------------------------------------------------------------------------


def test_mint_writes_a_private_file_and_never_shows_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    old_umask = os.umask(0)  # the 0600 must not depend on the caller's umask
    try:
        run = invoke(["secret", "mint"], env={ENV_VALUE: None})
    finally:
        os.umask(old_umask)
    assert run.code == 0, run
    path = tmp_path / LOCAL_FILE
    assert _mode(path) == 0o600
    assert _mode(path.parent) == 0o700
    value = path.read_text("ascii").strip()
    assert len(value) >= 64 and int(value, 16) >= 0
    assert value not in run.text
    assert str(LOCAL_FILE) in run.stderr and "not shown" in run.stderr
    assert stray_files(path.parent) == []

    found = resolve_secret(None, environ={}, cwd=tmp_path)
    assert found is not None and found.value == value
    assert found.source.startswith("the local secret")

    baked = invoke(bake_args(DEMO, tmp_path / "out", "--json"), env={ENV_VALUE: None})
    assert baked.code == 0, baked
    assert value not in baked.text


def test_mint_refuses_to_overwrite_without_force(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert invoke(["secret", "mint"]).code == 0
    path = tmp_path / LOCAL_FILE
    first = path.read_text("ascii").strip()
    before = tree_state(path.parent)

    again = invoke(["secret", "mint"])
    line = assert_one_line_refusal(again)
    assert "already exists" in line and "--force" in line
    assert first not in again.text
    assert tree_state(path.parent) == before

    forced = invoke(["secret", "mint", "--force"])
    assert forced.code == 0, forced
    second = path.read_text("ascii").strip()
    assert second != first
    assert _mode(path) == 0o600
    assert second not in forced.text and first not in forced.text
    assert stray_files(path.parent) == []


def test_mint_to_a_path_then_bake_with_it(tmp_path: Path) -> None:
    path = tmp_path / "dev" / "deep" / "report.secret"
    run = invoke(["secret", "mint", "--path", str(path)])
    assert run.code == 0, run
    assert _mode(path) == 0o600
    value = path.read_text("ascii").strip()
    assert value not in run.text

    refused = invoke(["secret", "mint", "--path", str(path)])
    assert_one_line_refusal(refused)
    assert path.read_text("ascii").strip() == value

    baked = invoke(
        bake_args(DEMO, tmp_path / "out", "--json", "--secret-file", str(path)),
        env={ENV_VALUE: None},
    )
    assert baked.code == 0, baked
    assert value not in baked.text


# --- the sentinel: the value appears nowhere -------------------------------------------------


def test_sentinel_secret_never_leaks(tmp_path: Path) -> None:
    """A unique secret through a good bake, verify, a refused bake, and -v errors (tracebacks
    shown) in real processes: it is in no output and in no baked file."""
    nonce = uuid.uuid4().hex + uuid.uuid4().hex
    sentinel = "SENTINEL-" + nonce
    assert len(sentinel) >= 40
    env = process_env(REPORT_SIGNING_SECRET=sentinel)
    exposed = _write_secret(tmp_path / "exposed.secret", sentinel, 0o644)
    bad = CASES / "bad" / "zip-as-number"
    out = tmp_path / "out"

    good, refused, verbose, verbose_secret = run_processes(
        [
            Job(bake_args(DEMO, out), env, tmp_path),
            Job(bake_args(bad, tmp_path / "out-refused"), env, tmp_path),
            Job(["-v", *bake_args(bad, tmp_path / "out-verbose")], env, tmp_path),
            Job(
                ["-v", *bake_args(DEMO, tmp_path / "out-exposed"), "--secret-file", str(exposed)],
                env,
                tmp_path,
            ),
        ]
    )
    assert good.code == 0, good
    verified = run_process(Job(["verify", str(out), "--json"], env, tmp_path))
    assert verified.code == 0, verified
    assert json.loads(verified.stdout)["hmacChecked"] is True

    assert_one_line_refusal(refused)
    for loud in (verbose, verbose_secret):
        assert loud.code == 2, loud
        assert "Traceback" in loud.stderr, loud  # -v really took the traceback path
    assert "chmod 600" in verbose_secret.stderr

    for run in (good, verified, refused, verbose, verbose_secret):
        assert sentinel not in run.text and nonce not in run.text, run
    files = [p for p in tmp_path.rglob("*") if p.is_file() and p != exposed]
    assert any(p.parent.name == "api" for p in files)
    for path in files:
        data = path.read_bytes()
        assert sentinel.encode() not in data and nonce.encode() not in data, path
    assert NOW[:10] in (out / "api" / "compliance.json").read_text("utf-8")
