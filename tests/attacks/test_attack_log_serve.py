"""`serve --log DIR` never publishes a file from outside the log: a symlink planted in the log
folder (a tile, a tile folder, the checkpoint) pointing at the operator's private signing key is
answered 404, as the baked `out/` already is. A reader that follows links would answer
`GET /log/tile/0/005` with 200 and `-----BEGIN PRIVATE KEY-----`."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.log._log_helpers import get, served_log


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, Path]]:
    root = tmp_path_factory.mktemp("served-log")
    with served_log(root, 2) as (url, private):
        yield url, root / "log", private


def test_a_tile_linked_to_the_private_key_is_404(served: tuple[str, Path, Path]) -> None:
    url, log, private = served
    planted = log / "tile" / "0" / "005"
    planted.symlink_to(private)
    try:
        status, _, body = get(f"{url}/tile/0/005")
        assert status == 404 and b"PRIVATE KEY" not in body
    finally:
        planted.unlink()


def test_a_linked_tile_folder_is_404(served: tuple[str, Path, Path], tmp_path: Path) -> None:
    url, log, private = served
    elsewhere = tmp_path / "elsewhere" / "0"
    elsewhere.mkdir(parents=True)
    shutil.copy(private, elsewhere / "007")
    planted = log / "tile" / "1"
    planted.symlink_to(elsewhere.parent)
    try:
        status, _, body = get(f"{url}/tile/1/0/007")
        assert status == 404 and b"PRIVATE KEY" not in body
    finally:
        planted.unlink()


def test_a_linked_checkpoint_is_404_and_the_real_one_is_served(
    served: tuple[str, Path, Path],
) -> None:
    url, log, private = served
    checkpoint = log / "checkpoint"
    aside = log / "checkpoint.aside"
    checkpoint.rename(aside)
    checkpoint.symlink_to(private)
    try:
        status, _, body = get(f"{url}/checkpoint")
        assert status == 404 and b"PRIVATE KEY" not in body
    finally:
        checkpoint.unlink()
        aside.rename(checkpoint)
    status, _, body = get(f"{url}/checkpoint")  # the control: the real file is served
    assert status == 200 and body == checkpoint.read_bytes()
