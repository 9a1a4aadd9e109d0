"""Shared test helpers: a signing secret, a fixed clock, and a real bake into a temp folder."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from hypothesis import settings

from compliance_bake.cli.main import cli
from compliance_bake.resources import demo_fixtures_dir
from tests._phase_lines import diagnostics as diagnostics

# Property tests are derandomised (a fixed seed per test) so `make test` gives the same cases on
# every run; `make test-fuzz` runs them with fresh random cases to find new ones.
settings.register_profile("ci", derandomize=True, database=None, deadline=None)
settings.register_profile("fuzz", derandomize=False, database=None, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# The tiers (pyproject's markers): by folder, and by what a test starts.
_FOLDER_TIERS = {"attacks": "attack", "product": "product"}
# The GitHub Action's test installs the product into a fresh venv, the recipe tests run the
# manual's shell recipes with openssl and jq, the help reference runs every --help: the product
# as a user meets it. The log's kill tests kill bakes at every step (as
# tests/attacks/test_attack_kill does for out/).
_FILE_TIERS = {
    "test_action.py": "product",
    "test_help_reference.py": "product",
    "test_recipe.py": "product",
    "test_attestation_recipe.py": "product",
    "test_log_recipe.py": "product",
    "test_log_kill.py": "attack",
}
_SERVICE_NAMES = (
    "LiveService",
    "FaultServer",
    "BunService",
    "bun_binary",
    "start_bun",
    "bun_running",
    "regulatory_running",
    "ThreadingHTTPServer",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    tests_dir = Path(__file__).parent
    for item in items:
        parts = item.path.relative_to(tests_dir).parts
        if parts[0] in _FOLDER_TIERS:
            item.add_marker(_FOLDER_TIERS[parts[0]])
        if item.path.name in _FILE_TIERS:
            item.add_marker(_FILE_TIERS[item.path.name])
        fixtures = getattr(item, "fixturenames", ())
        if "pg_cluster" in fixtures:
            item.add_marker("database")
        module = vars(item.module) if getattr(item, "module", None) is not None else {}
        if "browser" in fixtures or "browser" in item.path.name:
            item.add_marker("browser")
        # A server is started by a module's helper, a `served` fixture, or a name the test
        # imports in its own body (an import inside a function is among its code's names).
        code = getattr(getattr(item, "function", None), "__code__", None)
        names = set(code.co_names) if code is not None else set()
        if "served" in fixtures or any(
            name in module or name in fixtures or name in names for name in _SERVICE_NAMES
        ):
            item.add_marker("service")


SECRET = "test-secret-0123456789abcdef0123456789abcdef"
OTHER_SECRET = "another-secret-fedcba9876543210fedcba98765432"
NOW = "2026-11-22T04:06:00Z"


@pytest.fixture(autouse=True)
def _signing_env(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[None]:
    """Every test starts with the test secret in the environment and no other secret source.

    The working folder is an empty temporary one, so a developer's own minted secret or out/
    never leaks into a test.
    """
    monkeypatch.chdir(tmp_path_factory.mktemp("cwd"))
    monkeypatch.setenv("REPORT_SIGNING_SECRET", SECRET)
    monkeypatch.delenv("REPORT_SIGNING_SECRET_FILE", raising=False)
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    monkeypatch.setenv("NO_COLOR", "1")
    yield


def invoke(*args: str, env: dict[str, str] | None = None) -> Result:
    """Run the real CLI in-process through click's CliRunner."""
    return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)


def run_cli(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run the real CLI as a separate process (a generous timeout: a local Spark run starts a
    JVM, and a loaded machine may take minutes)."""
    full_env = dict(os.environ) if env is None else env
    return subprocess.run(
        [sys.executable, "-m", "compliance_bake", *args],
        capture_output=True,
        text=True,
        env=full_env,
        cwd=cwd,
        timeout=timeout,
    )


QUESTION_QUERY = (
    ', sport = "{wager.sport}", market = "{wager.market}", amount = "{wager.amount}", '
    'betType = "{wager.betType}", age = "{wager.age}", zipCode = "{wager.zipCode}"'
)


def builtin_headline_text() -> str:
    """The built-in profile without the policy's questions (its [check] query the spec's three
    parameters, no [questions]): the base of tests of a profile's other keys, which asks the
    headline questions alone."""
    from compliance_bake.targets.profile_file import builtin_text

    text = builtin_text()
    assert QUESTION_QUERY in text and "\n[questions]\n" in text
    return text.replace(QUESTION_QUERY, "", 1).split("\n# The policy's questions")[0]


def bake_deep_demo(out: Path) -> Path:
    """A demo bake with the ZIP-window audit over the demo plays, with the test secret."""
    mp = pytest.MonkeyPatch()
    mp.setenv("REPORT_SIGNING_SECRET", SECRET)
    try:
        run = invoke(
            "bake", "snapshot", "--out", str(out), "--now", NOW,
            "--deep-audit", str(Path(__file__).resolve().parent.parent / "fixtures" / "plays.csv"),
        )  # fmt: skip
    finally:
        mp.undo()
    assert run.exit_code == 0, run.output
    return out


def snapshot_tree(root: Path) -> dict[str, tuple[int, bytes]]:
    """Every file under root: relative path -> (mode, bytes)."""
    return {
        str(p.relative_to(root)): (p.stat().st_mode, p.read_bytes())
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def fixtures_copy(tmp_path: Path) -> Path:
    """A writable copy of the demo fixtures."""
    dest = tmp_path / "fixtures"
    shutil.copytree(demo_fixtures_dir(), dest)
    return dest


@pytest.fixture
def baked(tmp_path: Path) -> Path:
    """A fresh bake of the demo fixtures; returns the out folder."""
    out = tmp_path / "out"
    result = invoke("bake", "snapshot", "--out", str(out), "--now", NOW)
    assert result.exit_code == 0, result.output
    return out


WHERE_MEASURED = "; measured "


def board_without_where(rows: list[dict[str, object]]) -> list[dict[str, object]]:
    """Board rows with the --target notes on what each row measured (the target, and the
    question it was asked, or compliance-bake itself) taken off: the one place an HTTP bake's
    board may differ from the in-process bake's."""
    out = []
    for row in rows:
        notes = str(row["notes"])
        if WHERE_MEASURED in notes:
            row = {**row, "notes": notes[: notes.index(WHERE_MEASURED)]}
        out.append(row)
    return out


@pytest.fixture(scope="session")
def spark_session() -> Iterator[object]:
    """One local[1] SparkSession for the whole run; skipped with the reason when Spark cannot
    run here (no pyspark, no Java 17+)."""
    from tests._spark_helpers import start_session, why_no_spark

    reason = why_no_spark()
    if reason is not None:
        pytest.skip(reason)
    spark = start_session()
    yield spark
    spark.stop()


@pytest.fixture(params=["duckdb", pytest.param("spark", marks=pytest.mark.spark)])
def engine(request: pytest.FixtureRequest) -> str:
    """The audit engine a test runs on: every audit case runs on both."""
    if request.param == "spark":
        request.getfixturevalue("spark_session")
    return str(request.param)


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[object]:
    """One throwaway PostgreSQL cluster for the run (tests/_pg_helpers.py): Debian's server on
    a free 127.0.0.1 port with password authentication, stopped and removed at the end."""
    from tests._pg_helpers import start_cluster, why_no_postgres

    reason = why_no_postgres()
    if reason is not None:
        pytest.skip(reason)
    cluster = start_cluster("pg-" + os.urandom(12).hex())
    yield cluster
    cluster.stop()
