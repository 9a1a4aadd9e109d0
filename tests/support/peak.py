"""Wall time, CPU time and peak RSS of one child process alone.

Linux carries a process's peak RSS across fork and exec: a child's `ru_maxrss` starts at its
parent's high-water mark (the forked copy of the parent's memory is the "old mm" that exec
records). A bench that generated 10,000,000 plays in-process and then started its children
reported the generator's 3.2 GiB for every one of them. So `measure` starts each command through
a small launcher (a fresh interpreter, a few MiB): the launcher starts the command, reaps it with
`os.wait4` and reports that child's own wall time, peak RSS, exit code and CPU time (user plus
system, all its threads) on a pipe. The command's peak then starts from the launcher's few
MiB, whatever the caller holds.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

_LAUNCHER = """
import os, subprocess, sys, time
start = time.perf_counter()
child = subprocess.Popen(sys.argv[2:])
_, status, usage = os.wait4(child.pid, 0)
elapsed = time.perf_counter() - start
cpu = usage.ru_utime + usage.ru_stime
report = f"{elapsed!r} {usage.ru_maxrss} {os.waitstatus_to_exitcode(status)} {cpu!r}"
os.write(int(sys.argv[1]), report.encode())
"""


@dataclass(frozen=True, slots=True)
class Measured:
    wall_s: float
    peak_bytes: int
    exit_code: int
    stdout: str
    stderr: str
    cpu_s: float = 0.0  # user + system CPU seconds of the child (all its threads)


def measure(argv: Sequence[str], env: Mapping[str, str] | None = None) -> Measured:
    """Run argv as a child of a fresh launcher; its own wall time, peak RSS, exit code, output."""
    read_end, write_end = os.pipe()
    try:
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            launcher = subprocess.Popen(
                [sys.executable, "-c", _LAUNCHER, str(write_end), *argv],
                stdout=out,
                stderr=err,
                env=None if env is None else dict(env),
                pass_fds=(write_end,),
            )
            os.close(write_end)
            write_end = -1
            report = b""
            while chunk := os.read(read_end, 4096):
                report += chunk
            if launcher.wait() != 0 or not report:
                raise RuntimeError(f"the launcher for {list(argv[:3])} failed")
            out.seek(0)
            err.seek(0)
            stdout = out.read().decode(errors="replace")
            stderr = err.read().decode(errors="replace")
    finally:
        os.close(read_end)
        if write_end >= 0:
            os.close(write_end)
    wall, maxrss, code, cpu = report.decode().split()
    peak = int(maxrss) if sys.platform == "darwin" else int(maxrss) * 1024
    return Measured(float(wall), peak, int(code), stdout, stderr, float(cpu))
