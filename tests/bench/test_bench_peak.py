"""The benchmarks' child measurement reads each child's own peak, not its parent's."""

from __future__ import annotations

import sys

from tests.support.peak import measure

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
