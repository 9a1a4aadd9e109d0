"""`--report FORMAT:PATH` onto nodes that are not regular files: a report never replaces a node.

A FIFO's reader gets the report; a character device stays a device; a symlink is followed only to
a FIFO or a character device; anything else is exit 2 naming the path, before the command runs.
"""

from __future__ import annotations

import json
import os
import socket
import stat
from pathlib import Path

import pytest

from tests.conftest import invoke


def _verify(baked: Path, report: str) -> tuple[int, str]:
    result = invoke("verify", str(baked), "--report", report)
    return result.exit_code, result.output


def test_a_report_onto_a_fifo_reaches_its_reader_and_the_fifo_stays(
    baked: Path, tmp_path: Path
) -> None:
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader waits before the run
    try:
        code, output = _verify(baked, f"json:{fifo}")
        assert code == 0, output
        received = os.read(reader, 1 << 16)
    finally:
        os.close(reader)
    assert json.loads(received)["command"] == "verify"
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


@pytest.mark.skipif(os.geteuid() != 0, reason="mknod of a character device needs root")
def test_a_report_onto_a_character_device_leaves_a_character_device(
    baked: Path, tmp_path: Path
) -> None:
    null = tmp_path / "null"  # a copy of /dev/null: the real one is never put at risk
    os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    code, output = _verify(baked, f"junit:{null}")
    assert code == 0, output
    assert stat.S_ISCHR(null.lstat().st_mode)
    assert null.lstat().st_rdev == os.makedev(1, 3)


def test_a_symlink_to_a_fifo_is_written_through(baked: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    link = tmp_path / "report.json"
    link.symlink_to(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        code, output = _verify(baked, f"json:{link}")
        assert code == 0, output
        assert json.loads(os.read(reader, 1 << 16))["ok"] is True
    finally:
        os.close(reader)
    assert link.is_symlink()


def test_a_symlink_to_a_regular_file_is_refused_and_both_stay(baked: Path, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.txt"
    target.write_text("someone else's file\n")
    link = tmp_path / "report.xml"
    link.symlink_to(target)
    code, output = _verify(baked, f"junit:{link}")
    assert code == 2
    assert str(link) in output and "symlink" in output
    assert link.is_symlink() and target.read_text() == "someone else's file\n"


@pytest.mark.parametrize("node", ["folder", "socket"])
def test_a_folder_or_a_socket_is_exit_2_naming_the_path(
    baked: Path, tmp_path: Path, node: str
) -> None:
    path = tmp_path / f"a-{node}"
    listener = None
    if node == "folder":
        path.mkdir()
    else:
        listener = socket.socket(socket.AF_UNIX)
        listener.bind(str(path))
    try:
        code, output = _verify(baked, f"json:{path}")
    finally:
        if listener is not None:
            listener.close()
    assert code == 2
    assert str(path) in output
    assert path.exists() and not path.is_file()


def test_a_report_onto_a_regular_file_is_replaced_whole_with_mode_0644(
    baked: Path, tmp_path: Path
) -> None:
    old_umask = os.umask(0o077)
    try:
        report = tmp_path / "reports" / "summary.json"
        code, output = _verify(baked, f"json:{report}")
        assert code == 0, output
        assert stat.S_IMODE(report.stat().st_mode) == 0o644
        report.write_text("stale")
        code, output = _verify(baked, f"json:{report}")
        assert code == 0, output
    finally:
        os.umask(old_umask)
    assert json.loads(report.read_text())["ok"] is True
    assert stat.S_IMODE(report.stat().st_mode) == 0o644
