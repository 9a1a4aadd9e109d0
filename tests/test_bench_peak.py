"""The benchmarks' child measurement reads each child's own peak, not its parent's."""

from __future__ import annotations

import sys

from bench.peak import measure, tree_peak

MIB = 1024**2
ALLOCATE = "b = bytearray({n} * 2**20)\nfor i in range(0, len(b), 4096): b[i] = 1\nprint('done')"


def test_a_child_of_known_size_reads_its_own_peak() -> None:
    result = measure([sys.executable, "-c", ALLOCATE.format(n=200)])
    assert result.exit_code == 0 and result.stdout.strip() == "done"
    assert 200 * MIB <= result.peak_bytes <= 300 * MIB


def test_a_small_child_of_a_large_parent_reads_small() -> None:
    held = bytearray(400 * MIB)  # this process's peak is now over 400 MiB
    for i in range(0, len(held), 4096):
        held[i] = 1
    result = measure([sys.executable, "-c", "print('small')"])
    assert result.exit_code == 0 and result.stdout.strip() == "small"
    assert result.peak_bytes < 100 * MIB
    del held


def test_the_exit_code_and_stderr_are_the_childs() -> None:
    result = measure([sys.executable, "-c", "import sys; sys.stderr.write('no'); sys.exit(3)"])
    assert result.exit_code == 3 and result.stderr == "no"


def test_the_cpu_time_is_the_childs_own() -> None:
    """A child that spins for half a second of CPU reads about that; a sleeping one reads little."""
    spin = "import time\nend = time.process_time() + 0.5\nwhile time.process_time() < end: pass"
    busy = measure([sys.executable, "-c", spin])
    idle = measure([sys.executable, "-c", "import time; time.sleep(0.5)"])
    assert busy.exit_code == 0 and idle.exit_code == 0
    assert 0.5 <= busy.cpu_s <= 5.0
    assert idle.cpu_s < 0.4 < idle.wall_s


FORKING = """
import os, time
held = bytearray({parent} * 2**20)
for i in range(0, len(held), 4096): held[i] = 1
pid = os.fork()
if pid == 0:
    own = bytearray({child} * 2**20)
    for i in range(0, len(own), 4096): own[i] = 1
    time.sleep(3)  # held long enough to be sampled many times, even on a busy machine
    os._exit(0)
os.waitpid(pid, 0)
"""


def test_the_tree_peak_sums_a_forked_childs_own_memory() -> None:
    result = tree_peak([sys.executable, "-c", FORKING.format(parent=100, child=200)])
    assert result.exit_code == 0 and result.processes == 2
    assert 300 * MIB <= result.pss_bytes <= 400 * MIB


def test_the_tree_peak_counts_shared_pages_once() -> None:
    """The child maps the parent's 300 MiB (copy on write) and writes none of it: their RSS
    would sum to over 600 MiB; their PSS sums to the 300 MiB there is."""
    result = tree_peak([sys.executable, "-c", FORKING.format(parent=300, child=0)])
    assert result.exit_code == 0 and result.processes == 2
    assert 300 * MIB <= result.pss_bytes <= 400 * MIB
