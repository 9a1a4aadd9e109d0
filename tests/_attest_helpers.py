"""Shared by the attestation tests: a minted key pair and keyed bakes, through the real CLI."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tests.conftest import NOW, invoke


@dataclass(frozen=True)
class KeyPair:
    private: Path
    public: Path
    key_id: str

    @property
    def public_pem(self) -> bytes:
        return self.public.read_bytes()


def mint(folder: Path, name: str = "signing-key.pem") -> KeyPair:
    private = folder / name
    result = invoke("signing-key", "mint", "--key-file", str(private))
    assert result.exit_code == 0, result.output
    return KeyPair(
        private, private.with_name(name.replace(".pem", ".pub.pem")), result.stdout.strip()
    )


def bake(out: Path, key: KeyPair | None, *extra: str) -> Path:
    args = ["bake", "snapshot", "--out", str(out), "--now", NOW, *extra]
    if key is not None:
        args += ["--signing-key", str(key.private)]
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    return out
