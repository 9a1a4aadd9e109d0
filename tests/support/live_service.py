"""`compliance-bake serve` as a real process on a free loopback port, for tests and benchmarks."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

_LISTENING = re.compile(r"listening on (http://127\.0\.0\.1:\d+)")


@dataclass
class LiveService:
    """Start with `with LiveService(...) as service:`; `service.url` is its base URL."""

    keys_file: Path
    out_dir: Path
    fixtures_dir: Path | None = None
    cwd: Path | None = None
    extra_args: tuple[str, ...] = ()  # more `serve` options, e.g. ("--client-timeout", "1")
    url: str = ""
    log: list[str] = field(default_factory=list)  # every stderr line, for secrecy checks
    _process: subprocess.Popen[str] | None = None
    _drain: threading.Thread | None = None

    def __enter__(self) -> LiveService:
        args = [sys.executable, "-m", "compliance_bake", "serve", "--port", "0"]
        args += ["--keys-file", str(self.keys_file), "--out", str(self.out_dir)]
        if self.fixtures_dir is not None:
            args += ["--fixtures", str(self.fixtures_dir)]
        args += list(self.extra_args)
        self._process = subprocess.Popen(
            args,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            cwd=self.cwd,
            env=dict(os.environ),
        )
        assert self._process.stderr is not None
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            line = self._process.stderr.readline()
            if not line:
                raise RuntimeError(f"serve exited early with {self._process.wait()}: {self.log}")
            self.log.append(line)
            found = _LISTENING.search(line)
            if found:
                self.url = found.group(1)
                # Keep reading stderr so a chatty server never blocks on a full pipe.
                self._drain = threading.Thread(target=self._read_log, daemon=True)
                self._drain.start()
                return self
        self.stop()
        raise RuntimeError("serve did not announce its port within 30 s")

    def _read_log(self) -> None:
        assert self._process is not None and self._process.stderr is not None
        self.log.extend(self._process.stderr)

    def stop(self) -> None:
        if self._process is None:
            return
        self._process.terminate()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        if self._drain is not None:
            self._drain.join(timeout=10)
        if self._process.stderr is not None:
            self._process.stderr.close()
        self._process = None

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()
