"""Wall time and peak RSS of one child process alone (issue 14, honest peaks).

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


@dataclass(frozen=True, slots=True)
class TreePeak:
    pss_bytes: int  # the largest sum, over one sample, of the PSS of every process in the tree
    processes: int  # the most processes seen in one sample
    exit_code: int


def _tree(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as stat:
                    parent = int(stat.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def _pss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as rollup:
            for line in rollup:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def tree_peak(
    argv: Sequence[str], env: Mapping[str, str] | None = None, every: float = 0.01
) -> TreePeak:
    """Run argv; sample the summed PSS of it and all its descendants every `every` seconds.

    A command that forks workers holds memory in several processes at once, and each one's peak
    RSS counts the pages they share once per process: PSS shares each page among the processes
    that map it, so the sum is the tree's memory. Linux only (/proc); untimed, as sampling costs
    CPU."""
    import time

    command = subprocess.Popen(
        list(argv), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env=None if env is None else dict(env),
    )  # fmt: skip
    peak = most = 0
    while command.poll() is None:
        pids = _tree(command.pid)
        peak = max(peak, sum(_pss(pid) for pid in pids))
        most = max(most, len(pids))
        time.sleep(every)
    return TreePeak(peak, most, command.returncode)
