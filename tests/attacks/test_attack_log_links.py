"""A link planted in the log folder cannot make an append write, replace or remove anything
outside it.

The log folder may come from elsewhere (the GitHub Action checks it out of a branch, and git
keeps symbolic links), so a folder of it may be a link to any folder the operator can write.
Followed, such a link would let an append replace a file of the same name in the folder linked
to, and the undo of the append its read-back then fails would remove it. The append opens every
folder of the log one component at a time without following a link, and refuses with one line
(exit 2), having written nothing anywhere.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.log._log_helpers import bake, bake_env, baked_once, mint

pytestmark = pytest.mark.attack


OWN = b"the operator's own file"


def _plant(victim: Path, inner: str) -> Path:
    """The operator's file at `inner` in the folder a link will point to."""
    precious = victim / inner
    precious.parent.mkdir(parents=True)
    precious.write_bytes(OWN)
    return precious


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def _bake_refused(log: Path, private: Path, out: Path, day: int, victim: Path) -> None:
    """The bake refuses the link with one line (exit 2), and leaves the folder linked to as it
    was and no file in `out`."""
    before = _files(victim)
    with bake_env():
        result = bake(out, log, private, day)
    assert result.exit_code == 2, result.output
    line = result.stderr.strip()
    assert len(line.splitlines()) == 1 and "link" in line and "Traceback" not in line, line
    assert _files(victim) == before
    assert not [p for p in out.rglob("*") if p.is_file()]


@pytest.mark.parametrize("planted", ["tile/entries", "tile/entries/000.p", "tile"])
def test_a_linked_folder_in_the_log_is_refused_and_nothing_outside_is_touched(
    tmp_path: Path, planted: str
) -> None:
    with bake_env():
        _, log, private, _ = baked_once(tmp_path)
    victim = tmp_path / "victim"
    # The folder linked to holds what the next append would write at the linked place.
    inner = {"tile/entries": "000.p/2", "tile/entries/000.p": "2", "tile": "entries/000.p/2"}
    precious = _plant(victim, inner[planted])
    os.rename(log / planted, tmp_path / "moved-aside")
    (log / planted).symlink_to(victim, target_is_directory=True)
    _bake_refused(log, private, tmp_path / "out2", 2, victim)
    assert precious.read_bytes() == OWN


def test_a_new_log_whose_tile_folder_is_a_link_writes_nothing_through_it(tmp_path: Path) -> None:
    """The first append reads nothing before it writes: only the writer's own refusal of the
    link keeps the operator's file (here at the first entry bundle's place) as it was."""
    with bake_env():
        private, _ = mint(tmp_path, "operator")
    victim = tmp_path / "victim"
    precious = _plant(victim, "entries/000.p/1")
    log = tmp_path / "log"
    log.mkdir()
    (log / "tile").symlink_to(victim, target_is_directory=True)
    _bake_refused(log, private, tmp_path / "out", 1, victim)
    assert precious.read_bytes() == OWN
