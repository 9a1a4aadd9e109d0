"""The audit through Spark Connect: a real Connect server from the installed pyspark package.

The test starts `start-connect-server.sh --wait` (the pip package's own script) bound to
127.0.0.1 on a free port, runs the real CLI with `--spark-master sc://127.0.0.1:PORT` in a child
process, compares with DuckDB, and stops the server (its own process group, by id).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests._plays_helpers import audit, report, write_parquet
from tests._spark_helpers import why_no_spark
from tests.audit.test_audit_engines import _counts, _mixed
from tests.conftest import NOW, run_cli

pytestmark = pytest.mark.spark
START_SECONDS = 180  # generous: a JVM start on a loaded two-core machine


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(1)
        return probe.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture
def connect_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    reason = why_no_spark()
    if reason is not None:
        pytest.skip(reason)
    import pyspark

    script = Path(pyspark.__file__).parent / "sbin" / "start-connect-server.sh"
    logs = tmp_path_factory.mktemp("connect-logs")
    port = _free_port()
    env = {
        **os.environ,
        "SPARK_LOG_DIR": str(logs),
        "SPARK_PID_DIR": str(logs),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    confs = {
        "spark.connect.grpc.binding.address": "127.0.0.1",
        "spark.connect.grpc.binding.port": str(port),
        "spark.ui.enabled": "false",
        "spark.sql.shuffle.partitions": "1",
        "spark.sql.codegen.wholeStage": "false",  # tiny data: compiling costs more than it saves
        "spark.sql.adaptive.enabled": "false",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.driver.host": "127.0.0.1",
    }
    args = ["bash", str(script), "--wait", "--master", "local[1]"]
    for key, value in confs.items():
        args += ["--conf", f"{key}={value}"]
    with (logs / "server.out").open("wb") as out:
        server = subprocess.Popen(
            args, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        deadline = time.monotonic() + START_SECONDS
        while not _listening(port):
            if server.poll() is not None or time.monotonic() > deadline:
                shown = (logs / "server.out").read_text(errors="replace")[-2000:]
                pytest.fail(f"the Connect server did not start on 127.0.0.1:{port}:\n{shown}")
            time.sleep(0.5)
        yield f"sc://127.0.0.1:{port}"
    finally:
        os.killpg(server.pid, signal.SIGTERM)  # the server's own group: the script and its JVM
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(timeout=60)
        deadline = time.monotonic() + 60  # the JVM closes its port as it exits
        while _listening(port) and time.monotonic() < deadline:
            time.sleep(0.2)
    assert not _listening(port)


def test_the_audit_through_spark_connect_matches_duckdb(
    tmp_path: Path, connect_server: str
) -> None:
    plays = write_parquet(tmp_path / "plays.parquet", _mixed())
    _, duck = audit(plays, tmp_path / "duck")
    out = tmp_path / "connect"
    result = run_cli(
        "audit", "deep", "--plays", str(plays), "--now", NOW, "--out", str(out), "--json",
        "--engine", "spark", "--spark-master", connect_server,
        timeout=900,  # a bound for a hang, not a speed: a loaded machine may take minutes
    )  # fmt: skip
    assert result.returncode == 1, result.stderr
    summary = json.loads(result.stdout)
    assert summary["engine"] == "spark"
    assert _counts(summary) == _counts(duck)
    assert report(out) == report(tmp_path / "duck")
