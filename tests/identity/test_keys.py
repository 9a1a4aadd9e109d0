"""The agent-key store: only hashes kept, found by prefix; near misses and revoked keys refused."""

from __future__ import annotations

import pytest

from compliance_bake.identity import keys


def test_key_store_stores_only_hashes_and_finds_by_prefix() -> None:
    store = keys.KeyStore()
    key = store.mint("ci")
    assert len(key) == keys.KEY_LEN and key[5] == "."
    record = store.lookup(key)
    assert record is not None and record.label == "ci"
    assert key not in repr(store._index) and key.encode() not in record.key_hash


@pytest.mark.parametrize(
    "mangle",
    [
        lambda k: "",
        lambda k: k[:5],
        lambda k: " " + k,
        lambda k: k.upper(),
        lambda k: k[:-1] + ("a" if k[-1] != "a" else "b"),
        lambda k: "zzzzz" + k[5:] if not k.startswith("zzzzz") else "yyyyy" + k[5:],
        lambda k: k[:-1] + "é",
        lambda k: k + "x",
    ],
)
def test_bad_keys_are_refused(mangle: object) -> None:
    store = keys.KeyStore()
    key = store.mint()
    assert store.lookup(mangle(key)) is None  # type: ignore[operator]


def test_revoked_key_is_refused() -> None:
    store = keys.KeyStore()
    key = store.mint()
    store.revoke(key[:5])
    assert store.lookup(key) is None
