"""Fixtures of the attestation tests: a minted key pair, and a bake attested with it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests._attest_helpers import KeyPair, bake, mint


@pytest.fixture
def key(tmp_path: Path) -> KeyPair:
    return mint(tmp_path / "keys")


@pytest.fixture
def attested(tmp_path: Path, key: KeyPair) -> Path:
    return bake(tmp_path / "out", key)
