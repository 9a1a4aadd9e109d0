"""Run the service under uvicorn on a socket we bind ourselves.

Binding first means `--port 0` works (the kernel picks a free port, and we can say which before
the first request), and an address in use is one clear error instead of a uvicorn traceback.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compliance_bake.errors import InputError
from compliance_bake.identity.keyfile import KeyFile
from compliance_bake.inputs.registry_source import read_registry
from compliance_bake.service.protocol import CLIENT_TIMEOUT
from compliance_bake.targets.engine import Engine
from compliance_bake.targets.inprocess import python_runtime


@dataclass(frozen=True, slots=True)
class ServeSettings:
    host: str
    port: int
    fixtures_dir: Path | str  # the registry source (inputs/registry_source.py)
    out_dir: Path
    keys_file: Path
    access_log: bool = False
    client_timeout: int = CLIENT_TIMEOUT
    log_dir: Path | None = None  # a transparency log served under /log/


@dataclass(frozen=True, slots=True)
class Listening:
    url: str
    keys: int
    states: tuple[str, ...]


def bind(host: str, port: int) -> socket.socket:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise InputError(
            f"--host {host}: {exc.strerror}", "use an address such as 127.0.0.1"
        ) from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        raise InputError(
            f"cannot listen on {host}:{port}: {exc.strerror}",
            "pick another --port (0 lets the system choose a free one)",
        ) from None
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def _log_config() -> dict[str, Any]:
    """uvicorn's logging, with the access log on stderr beside every other diagnostic: stdout
    carries results, and `serve` has none."""
    import copy

    from uvicorn.config import LOGGING_CONFIG

    config = copy.deepcopy(LOGGING_CONFIG)
    config["handlers"]["access"]["stream"] = "ext://sys.stderr"
    return config


def _key_file_problem(problem: str) -> None:
    import logging

    from compliance_bake.report.escape import visible

    logging.getLogger("uvicorn.error").warning(
        "the agent-key file changed and no longer loads, so every key is refused until it does: %s",
        visible(problem),
    )


def serve(settings: ServeSettings, on_listening: Callable[[Listening], None]) -> None:
    """Load everything, bind, announce, then serve until interrupted (SIGINT/SIGTERM)."""
    import uvicorn

    from compliance_bake.service.app import create_app
    from compliance_bake.service.protocol import GuardedHttp

    fixtures = read_registry(settings.fixtures_dir)
    keys = KeyFile(settings.keys_file, _key_file_problem)
    engine = Engine(fixtures.policy)  # decides at each request's time
    app = create_app(engine, keys, settings.out_dir, python_runtime(), settings.log_dir)
    sock = bind(settings.host, settings.port)
    config = uvicorn.Config(
        app,
        log_config=_log_config(),
        loop="auto",
        http=GuardedHttp,
        timeout_keep_alive=settings.client_timeout,
        lifespan="off",
        access_log=settings.access_log,
        log_level="info" if settings.access_log else "warning",
        server_header=False,
        proxy_headers=False,
    )
    host, port = sock.getsockname()[:2]
    url = f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"
    on_listening(Listening(url, len(keys.records()), engine.health().states))
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()
