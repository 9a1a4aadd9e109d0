"""Publishing is all or nothing: a disk that fills up mid-bake leaves the previous out/ intact."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest

from compliance_bake.report import publish as publish_module
from tests.conftest import diagnostics, invoke, snapshot_tree


def test_files_are_world_readable_and_no_temporaries_remain(baked: Path) -> None:
    files = [p for p in baked.rglob("*") if p.is_file()]
    assert len(files) == 5  # the snapshot, two registry copies, the policy file, the page
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o644 for p in files)
    assert not [p for p in baked.rglob("*") if p.name.startswith(".")]


def test_a_full_disk_while_staging_changes_nothing(
    baked: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = snapshot_tree(baked)
    calls = {"n": 0}
    real_fsync = os.fsync

    def fsync_until_full(fd: int) -> None:
        # A real disk cannot be made to fill up on cue in a test; this is that fault.
        calls["n"] += 1
        if calls["n"] == 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(publish_module.os, "fsync", fsync_until_full)
    result = invoke("bake", "snapshot", "--out", str(baked), "--now", "2027-01-01T00:00:00Z")
    assert result.exit_code == 2
    assert "No space left on device" in result.stderr
    assert diagnostics(result.stderr).count("\n") == 1
    assert snapshot_tree(baked) == before
    assert not [p for p in baked.rglob("*") if p.name.startswith(".")]
    assert (
        b'"generatedAt": "2026-11-22T04:06:00.000Z"'
        in (baked / "api" / "compliance.json").read_bytes()
    )


def test_a_report_that_fails_its_schema_is_not_written(
    baked: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from compliance_bake.report import snapshot

    before = snapshot_tree(baked)
    monkeypatch.setattr(snapshot, "PROTON", {**snapshot.PROTON, "secretValue": "x"})
    result = invoke("bake", "snapshot", "--out", str(baked))
    assert result.exit_code == 4
    assert "fails its schema" in result.stderr and diagnostics(result.stderr).count("\n") == 1
    assert snapshot_tree(baked) == before


def _rebake(out: Path) -> None:
    result = invoke("bake", "snapshot", "--out", str(out), "--now", "2027-01-01T00:00:00Z")
    assert result.exit_code == 0, result.output


def test_out_is_swapped_whole_and_keeps_what_other_tools_put_there(baked: Path) -> None:
    (baked / "notes.txt").write_text("a note of another tool\n")
    private = baked / "registry" / "private"
    private.mkdir()
    os.chmod(private, 0o700)
    (private / "keep.json").write_text("{}")
    (baked / "api" / "latest").symlink_to("compliance.json")
    before = os.stat(baked)
    _rebake(baked)
    assert not os.path.samestat(before, os.stat(baked))  # a new folder took the name at once
    assert (baked / "notes.txt").read_text() == "a note of another tool\n"
    assert stat.S_IMODE(private.stat().st_mode) == 0o700
    assert (private / "keep.json").read_text() == "{}"
    assert os.readlink(baked / "api" / "latest") == "compliance.json"
    assert b"2027-01-01" in (baked / "api" / "compliance.json").read_bytes()
    assert [p.name for p in baked.parent.iterdir() if p.name.startswith(".")] == []


def test_an_out_that_is_a_symlink_stays_one(baked: Path, tmp_path: Path) -> None:
    link = tmp_path / "current"
    link.symlink_to(baked)
    _rebake(link)
    assert link.is_symlink() and os.readlink(link) == str(baked)
    assert b"2027-01-01" in (baked / "api" / "compliance.json").read_bytes()


def test_without_the_exchange_each_file_is_renamed_in(
    baked: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Another system, or a filesystem that refuses RENAME_EXCHANGE: the renames of old.
    monkeypatch.setattr(publish_module, "can_exchange", lambda: False)
    before = os.stat(baked)
    _rebake(baked)
    assert os.path.samestat(before, os.stat(baked))
    assert b"2027-01-01" in (baked / "api" / "compliance.json").read_bytes()
    files = [p for p in baked.rglob("*") if p.is_file()]
    assert len(files) == 5 and all(stat.S_IMODE(p.stat().st_mode) == 0o644 for p in files)
