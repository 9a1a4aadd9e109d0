"""Agent API keys (spec 5.1): a fixed 5-character prefix for one direct lookup.

A key reads `<prefix>.<secret>`: five characters of [a-z0-9], a dot, and 43 URL-safe characters.
The store keeps only the SHA3-256 hash of each key, indexed by its prefix; a lookup reads exactly
one index entry whatever the store's size, and compares hashes with `hmac.compare_digest`. An
unknown prefix is compared against a dummy hash so that it costs the same as a wrong secret.

The comparison is a seam (`KeyStore(compare=...)`, default `hmac.compare_digest`): the
board's `identity.agent_key_prefix` feature reads which function the store compares with and counts
the comparisons a lookup makes (compliance_bake/report/key_probe.py).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import string
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass

PREFIX_LEN = 5
SECRET_LEN = 43
KEY_LEN = PREFIX_LEN + 1 + SECRET_LEN
_PREFIX_ALPHABET = string.ascii_lowercase + string.digits
_SECRET_ALPHABET = frozenset(string.ascii_letters + string.digits + "-_")
_DUMMY_HASH = hashlib.sha3_256(b"compliance-bake: no such key").digest()
Compare = Callable[[bytes, bytes], bool]


@dataclass(frozen=True, slots=True)
class KeyRecord:
    prefix: str
    key_hash: bytes
    label: str = ""
    revoked: bool = False


def _hash(key: str) -> bytes:
    return hashlib.sha3_256(key.encode("ascii")).digest()


def well_formed(key: str) -> bool:
    return (
        len(key) == KEY_LEN
        and key.isascii()
        and key[PREFIX_LEN] == "."
        and all(c in _PREFIX_ALPHABET for c in key[:PREFIX_LEN])
        and all(c in _SECRET_ALPHABET for c in key[PREFIX_LEN + 1 :])
    )


class KeyStore:
    """Hashes of agent keys, indexed by prefix. Hand it the index to observe its accesses."""

    def __init__(
        self,
        index: MutableMapping[str, KeyRecord] | None = None,
        compare: Compare = hmac.compare_digest,
    ) -> None:
        self._index: MutableMapping[str, KeyRecord] = {} if index is None else index
        self._compare = compare

    @property
    def compare(self) -> Compare:
        """The function that compares a presented key's hash with the stored one."""
        return self._compare

    def mint(self, label: str = "") -> str:
        """Create a key; the full key is returned once and never stored."""
        while True:
            prefix = "".join(secrets.choice(_PREFIX_ALPHABET) for _ in range(PREFIX_LEN))
            if prefix not in self._index:
                break
        key = f"{prefix}.{secrets.token_urlsafe(32)}"
        self._index[prefix] = KeyRecord(prefix=prefix, key_hash=_hash(key), label=label)
        return key

    def records(self) -> list[KeyRecord]:
        return [self._index[prefix] for prefix in sorted(self._index)]

    def revoke(self, prefix: str) -> None:
        record = self._index[prefix]
        self._index[prefix] = KeyRecord(record.prefix, record.key_hash, record.label, revoked=True)

    def lookup(self, presented: str) -> KeyRecord | None:
        """The record of a valid, unrevoked key; None for anything else."""
        if not well_formed(presented):
            return None
        record = self._index.get(presented[:PREFIX_LEN])
        expected = _DUMMY_HASH if record is None else record.key_hash
        matches = self._compare(_hash(presented), expected)
        if record is None or not matches or record.revoked:
            return None
        return record
