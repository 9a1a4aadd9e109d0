"""The limits themselves, at their edges: the strict JSON reader, the regular-file reader, and the
lock that keeps two bakes out of one `out/`."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import pytest

from compliance_bake.errors import InputError
from compliance_bake.inputs.files import read_regular_file
from compliance_bake.inputs.jsonio import INT_MAX, INT_MIN, MAX_DEPTH, StrictJSONError, loads_strict
from tests.conftest import NOW, invoke, snapshot_tree


def _nested(depth: int, kind: str) -> str:
    if kind == "array":
        return "[" * depth + "]" * depth
    return '{"k":' * depth + "0" + "}" * depth


@pytest.mark.parametrize("kind", ["array", "object"])
def test_nesting_up_to_the_limit_is_read_and_one_more_level_is_refused(kind: str) -> None:
    assert loads_strict(_nested(MAX_DEPTH, kind)) is not None
    with pytest.raises(StrictJSONError, match=f"nested deeper than {MAX_DEPTH} levels"):
        loads_strict(_nested(MAX_DEPTH + 1, kind))
    with pytest.raises(StrictJSONError, match="nested deeper"):
        loads_strict(_nested(100_000, kind))


def test_integers_inside_64_bits_are_read_and_outside_are_refused() -> None:
    assert loads_strict(f"[{INT_MIN}, {INT_MAX}]") == [INT_MIN, INT_MAX]
    for text in (f"[{INT_MAX + 1}]", f"[{INT_MIN - 1}]", f'{{"a": {10**4000}}}'):
        with pytest.raises(StrictJSONError, match="64-bit range"):
            loads_strict(text)
    with pytest.raises(StrictJSONError, match="more than 4,300 digits"):
        loads_strict("1" * 5000)


def test_a_large_string_within_the_file_cap_is_read() -> None:
    assert loads_strict('"' + "x" * 5_000_000 + '"') == "x" * 5_000_000


def test_a_file_over_the_cap_is_refused_before_reading(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    path.write_bytes(b"x" * 101)
    assert read_regular_file(path, max_bytes=101, what="test file") == b"x" * 101
    with pytest.raises(InputError, match="over the 100 bytes limit"):
        read_regular_file(path, max_bytes=100, what="test file")


def test_a_folder_is_not_a_regular_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"not a regular file \(a folder\)"):
        read_regular_file(tmp_path, max_bytes=100, what="test file")


def test_a_second_bake_into_a_folder_being_written_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert invoke("bake", "snapshot", "--out", str(out), "--now", NOW).exit_code == 0
    before = snapshot_tree(out)
    fd = os.open(out, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # what a running bake holds while it publishes
        result = invoke("bake", "snapshot", "--out", str(out))
    finally:
        os.close(fd)
    assert result.exit_code == 2
    assert "another bake is writing this folder" in result.stderr
    assert snapshot_tree(out) == before
