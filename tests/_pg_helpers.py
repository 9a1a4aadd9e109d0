"""A throwaway PostgreSQL cluster for the database-source tests and the benchmark.

Debian's `postgresql` package (installed by `make tools`) provides `initdb` and `pg_ctl` under
/usr/lib/postgresql/N/bin. The cluster lives in a private temporary folder, listens on a free
127.0.0.1 port (and a socket in that folder), takes passwords only (scram-sha-256, `trust`
nowhere), and is stopped and removed by `stop`. PostgreSQL refuses to run as root, so as root
the server runs as the `postgres` user (`runuser`), which owns the folder.

A run that is killed never reaches `stop`, so each folder records the process that started
it (`owner`), and `start_cluster` first stops and removes the clusters whose owner is gone:
a killed run costs the next one a moment, never a machine full of stray servers.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

USER = "postgres"  # the cluster's superuser: it sets the cluster up (psql), never reads plays
READER = "auditor"  # the role the audits log in as: pg_read_all_data, nothing more
DATABASE = "plays"
PREFIX = "compliance-bake-pg-"  # a cluster's folder under the temporary folder


def pg_bin() -> Path | None:
    """The newest installed server's bin folder, or None."""
    found = glob.glob("/usr/lib/postgresql/*/bin/initdb")
    found.sort(key=lambda p: int(p.split("/")[4]))
    return Path(found[-1]).parent if found else None


def why_no_postgres() -> str | None:
    if pg_bin() is None:
        return "no PostgreSQL server (/usr/lib/postgresql/*/bin/initdb): run make tools"
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        return "running as root without runuser: PostgreSQL must run as another user"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Cluster:
    folder: Path
    port: int
    password: str
    bin: Path

    def url(self, password: bool = True, database: str = DATABASE, user: str = READER) -> str:
        """The URL an audit reads with: the reading role unless `user` says otherwise (the
        superuser's URL is refused: a superuser can write on the server, read-only or not)."""
        secret = f":{self.password}" if password else ""
        return f"postgresql://{user}{secret}@127.0.0.1:{self.port}/{database}"

    def psql(self, sql: str, database: str = DATABASE) -> str:
        """Run SQL with the cluster's psql (the password from the environment)."""
        done = subprocess.run(
            [str(self.bin / "psql"), "-X", "-v", "ON_ERROR_STOP=1", "-q", "-At",
             "-h", "127.0.0.1", "-p", str(self.port), "-U", USER, "-d", database, "-c", sql],
            capture_output=True, text=True, env={**os.environ, "PGPASSWORD": self.password},
            check=False, timeout=600,
        )  # fmt: skip
        if done.returncode:
            raise RuntimeError(f"psql failed: {done.stderr.strip()}")
        return done.stdout

    def stop(self) -> None:
        _as_owner([str(self.bin / "pg_ctl"), "stop", "-D", str(self.folder / "data"),
                   "-m", "immediate", "-w"], check=False)  # fmt: skip
        shutil.rmtree(self.folder, ignore_errors=True)


def _as_owner(command: list[str], check: bool = True) -> subprocess.CompletedProcess[str]:
    if os.geteuid() == 0:
        command = ["runuser", "-u", USER, "--", *command]
    return subprocess.run(command, capture_output=True, text=True, check=check, timeout=300)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def reap_orphans(binary: Path) -> list[Path]:
    """Stop and remove the clusters whose starting process is gone; the folders reaped."""
    reaped = []
    for owner in Path(tempfile.gettempdir()).glob(f"{PREFIX}*/owner"):
        text = owner.read_text().strip()
        if text.isdigit() and not _alive(int(text)):
            Cluster(owner.parent, 0, "", binary).stop()
            reaped.append(owner.parent)
    return reaped


def start_cluster(password: str) -> Cluster:
    """initdb, start on a free loopback port, create the database `plays`."""
    binary = pg_bin()
    assert binary is not None, why_no_postgres()
    reap_orphans(binary)
    folder = Path(tempfile.mkdtemp(prefix=PREFIX))
    folder.chmod(0o755)
    (folder / "owner").write_text(f"{os.getpid()}\n")
    pwfile = folder / "pw"
    pwfile.write_text(password + "\n")
    if os.geteuid() == 0:
        shutil.chown(folder, USER, USER)
        shutil.chown(pwfile, USER, USER)
    pwfile.chmod(0o600)
    data = folder / "data"
    _as_owner([str(binary / "initdb"), "-D", str(data), "-U", USER, "--auth=scram-sha-256",
               f"--pwfile={pwfile}", "-E", "UTF8", "--locale=C.UTF-8"])  # fmt: skip
    pwfile.unlink()
    port = free_port()
    options = (
        f"-c listen_addresses=127.0.0.1 -p {port} -c unix_socket_directories={folder} "
        "-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    )
    started = _as_owner(
        [str(binary / "pg_ctl"), "start", "-D", str(data), "-w", "-t", "120",
         "-l", str(folder / "log"), "-o", options],
        check=False,
    )  # fmt: skip
    cluster = Cluster(folder, port, password, binary)
    if started.returncode:
        log = (folder / "log").read_text() if (folder / "log").exists() else ""
        cluster.stop()
        raise RuntimeError(f"pg_ctl start failed: {started.stderr} {log}")
    cluster.psql(f"CREATE DATABASE {DATABASE}", database="postgres")
    cluster.psql(
        f"CREATE ROLE {READER} LOGIN PASSWORD '{password}'; GRANT pg_read_all_data TO {READER}",
        database="postgres",
    )
    return cluster
