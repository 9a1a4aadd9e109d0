"""A database password that holds `#`, `/`, `@`, `?` or `%` appears in no output, report, file or
snapshot, raw or percent-encoded.

Raw, each of these characters makes the URL read two ways: libpq ends the user part at the first
`@` or `/`, the URL standard at the first `/`, `?` or `#`. A raw `#` logged in and was then shown
and signed (the rest of the URL read as a fragment); a raw `/` or `@` put part of the password in
the driver's error, as a host. Such a URL is refused before any connection (exit 2, one line);
percent-encoded, it logs in, and the password is in none of what the run wrote.

Real parts: the run's throwaway PostgreSQL cluster, a role of its own per password, the real CLI.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import pytest

from tests._pg_helpers import Cluster
from tests._phase_lines import diagnostics
from tests.conftest import NOW

# The password's two halves are searched for apart: a half alone is a leak too.
LEFT, RIGHT = "leftQ7x", "rightZ9y"
CHARACTERS = ["#", "/", "@", "?", "%"]
COLUMNS = "partner=node_id,state=state_code,zip=zip_code,enriched_at=enriched_at"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PGPASSWORD"}
    return subprocess.run(
        [sys.executable, "-m", "compliance_bake", *args],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip


def _texts(run: subprocess.CompletedProcess[str], root: Path) -> str:
    files = (p.read_bytes().decode("utf-8", "replace") for p in root.rglob("*") if p.is_file())
    return run.stdout + run.stderr + "".join(files)


@pytest.fixture(scope="module")
def plays_table(pg_cluster: Cluster) -> str:
    pg_cluster.psql(
        "DROP SCHEMA IF EXISTS pw CASCADE; CREATE SCHEMA pw; "
        "CREATE TABLE pw.plays (play_id TEXT, node_id TEXT, state_code TEXT, zip_code TEXT, "
        "enriched_at TEXT); INSERT INTO pw.plays VALUES "
        "('p-1', 'node-shore-02', 'NJ', '07102', '2026-11-20T10:00:00.000Z')"
    )
    return "pw.plays"


def _role(cluster: Cluster, n: int, password: str) -> str:
    role = f"auditor_{n}"
    literal = password.replace("'", "''")
    cluster.psql(
        f"DROP OWNED BY {role}; DROP ROLE {role}"
        if cluster.psql(f"SELECT 1 FROM pg_roles WHERE rolname = '{role}'").strip()
        else "SELECT 1"
    )
    cluster.psql(
        f"CREATE ROLE {role} LOGIN PASSWORD '{literal}'; GRANT USAGE ON SCHEMA pw TO {role}; "
        f"GRANT SELECT ON pw.plays TO {role}"
    )
    return role


def _url(cluster: Cluster, role: str, password: str) -> str:
    return f"postgresql://{role}:{password}@127.0.0.1:{cluster.port}/plays"


def _runs(url: str, table: str, out: Path) -> list[tuple[subprocess.CompletedProcess[str], Path]]:
    audit = ["audit", "deep", "--plays", url, "--plays-table", table, "--plays-columns", COLUMNS]
    bake = ["bake", "snapshot", "--deep-audit", url, "--plays-table", table,
            "--plays-columns", COLUMNS]  # fmt: skip
    return [
        (_cli(*audit, "--now", NOW, "--out", str(out / "audit"), "--json"), out / "audit"),
        (_cli(*bake, "--now", NOW, "--out", str(out / "bake"), "--json"), out / "bake"),
    ]


@pytest.mark.parametrize("character", CHARACTERS)
def test_a_raw_character_in_the_password_is_refused_and_never_shown(
    character: str, pg_cluster: Cluster, plays_table: str, tmp_path: Path
) -> None:
    password = f"{LEFT}{character}{RIGHT}"
    role = _role(pg_cluster, CHARACTERS.index(character), password)
    for run, out in _runs(_url(pg_cluster, role, password), plays_table, tmp_path):
        assert run.returncode == 2, (run.returncode, run.stdout, run.stderr)
        assert "Traceback" not in run.stderr
        (line,) = diagnostics(run.stderr).splitlines()
        assert "percent-encode" in line and "(fix: " in line, line
        assert not out.exists()
        shown = _texts(run, tmp_path)
        assert LEFT not in shown and RIGHT not in shown, shown


@pytest.mark.parametrize("character", CHARACTERS)
def test_a_percent_encoded_password_logs_in_and_appears_nowhere(
    character: str, pg_cluster: Cluster, plays_table: str, tmp_path: Path
) -> None:
    password = f"{LEFT}{character}{RIGHT}"
    role = _role(pg_cluster, 10 + CHARACTERS.index(character), password)
    url = _url(pg_cluster, role, quote(password, safe=""))
    for run, _ in _runs(url, plays_table, tmp_path):
        assert run.returncode == 0, (run.returncode, run.stdout, run.stderr)
        assert json.loads(run.stdout)["ok"] is True
    snapshot = json.loads((tmp_path / "bake" / "api" / "compliance.json").read_text())
    assert (
        f"postgresql://{role}@127.0.0.1:{pg_cluster.port}/plays"
        in (snapshot["deepAudit"]["command"])
    )
    everything = "".join(_texts(run, tmp_path) for run, _ in _runs(url, plays_table, tmp_path))
    assert LEFT not in everything and RIGHT not in everything


@pytest.mark.parametrize("character", CHARACTERS)
def test_a_failing_login_with_an_encoded_password_names_no_part_of_it(
    character: str, pg_cluster: Cluster, plays_table: str, tmp_path: Path
) -> None:
    """The role exists with another password: the server refuses the login, and its words reach
    the terminal with neither half of the password given."""
    role = _role(pg_cluster, 20 + CHARACTERS.index(character), "another-password")
    url = _url(pg_cluster, role, quote(f"{LEFT}{character}{RIGHT}", safe=""))
    for run, _ in _runs(url, plays_table, tmp_path):
        assert run.returncode == 2, (run.returncode, run.stdout, run.stderr)
        assert "refused the login" in run.stderr
        shown = _texts(run, tmp_path)
        assert LEFT not in shown and RIGHT not in shown, shown


def test_a_raw_hash_in_a_query_password_is_refused_and_never_shown(tmp_path: Path) -> None:
    url = f"postgresql://auditor@127.0.0.1:1/plays?password={LEFT}%23x#{RIGHT}"
    for run, _ in _runs(url, "t", tmp_path):
        assert run.returncode == 2, (run.returncode, run.stderr)
        shown = _texts(run, tmp_path)
        assert LEFT not in shown and RIGHT not in shown, shown


# The read is read-only on the server too, whatever the role: a read-only transaction stops
# writes to tables, not a superuser's lo_export writing a file on the server's disk (nor
# set_config('role', ...) taking back a role dropped inside the transaction). A role that can
# write on the server is refused before any query of the operator's runs.
def _server_file(cluster: Cluster, name: str) -> Path:
    return cluster.folder / name


@pytest.fixture(scope="module")
def large_object(pg_cluster: Cluster) -> int:
    """A large object any role may read: what lo_export writes out."""
    oid = int(pg_cluster.psql("SELECT lo_from_bytea(0, 'written on the server')").strip())
    pg_cluster.psql(f"GRANT SELECT ON LARGE OBJECT {oid} TO PUBLIC")
    return oid


def _lo_export_query(oid: int, target: Path) -> str:
    return (
        f"SELECT lo_export({oid}, '{target}')::text AS play_id, "
        "node_id AS partner, state_code AS state, zip_code AS zip, enriched_at FROM pw.plays"
    )


@pytest.mark.parametrize("who", ["superuser", "granted lo_export", "pg_write_server_files"])
def test_a_role_that_can_write_on_the_server_is_refused_before_the_query(
    who: str, pg_cluster: Cluster, plays_table: str, large_object: int, tmp_path: Path
) -> None:
    if who == "superuser":
        url = pg_cluster.url(user="postgres")
    else:
        role = _role(pg_cluster, 30 + len(who), pg_cluster.password)
        grant = (
            f"GRANT EXECUTE ON FUNCTION lo_export(oid, text) TO {role}"
            if who == "granted lo_export"
            else f"GRANT pg_write_server_files TO {role}"
        )
        pg_cluster.psql(grant)
        url = _url(pg_cluster, role, pg_cluster.password)
    target = _server_file(pg_cluster, f"written-{who.replace(' ', '-')}")
    out = tmp_path / "out"
    query = _lo_export_query(large_object, target)
    run = _cli("audit", "deep", "--plays", url, "--plays-query", query, "--now", NOW,
               "--out", str(out))  # fmt: skip
    assert run.returncode == 2, (run.returncode, run.stdout, run.stderr)
    (line,) = diagnostics(run.stderr).splitlines()
    assert "can write on the server" in line and "pg_read_all_data" in line, line
    assert pg_cluster.password not in line
    assert not out.exists()
    assert not target.exists(), "the query wrote a file on the server"


def test_a_reading_role_runs_the_query_and_lo_export_fails_in_it(
    pg_cluster: Cluster, plays_table: str, large_object: int, tmp_path: Path
) -> None:
    target = _server_file(pg_cluster, "written-by-reader")
    query = _lo_export_query(large_object, target)
    run = _cli("audit", "deep", "--plays", pg_cluster.url(), "--plays-query", query,
               "--now", NOW, "--out", str(tmp_path / "out"))  # fmt: skip
    assert run.returncode == 2 and "the query failed" in run.stderr, run.stderr
    assert not target.exists()
    ok = _cli("audit", "deep", "--plays", pg_cluster.url(), "--plays-table", plays_table,
              "--plays-columns", COLUMNS, "--now", NOW, "--out", str(tmp_path / "ok"))  # fmt: skip
    assert ok.returncode == 0, ok.stderr
