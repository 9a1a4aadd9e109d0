"""The agent-key file that `keys mint` writes and `serve` reads: hashes only, mode 0600.

    {"version": 1,
     "keys": [{"prefix": "ab3de", "sha3": "<64 hex>", "label": "ci", "revoked": false}]}

A key is printed once, when it is minted; the file holds its SHA3-256 hash. The file is written
through a temporary file and renamed, so a crash leaves the old file whole.

`serve` reads it through `KeyFile`, which re-reads it whenever it changes, so a key minted or
revoked while the service runs counts from the next request, without a restart.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from compliance_bake.errors import InputError
from compliance_bake.identity.keys import PREFIX_LEN, KeyRecord, KeyStore
from compliance_bake.inputs.files import FIXTURE_MAX_BYTES, read_if_present
from compliance_bake.inputs.jsonio import StrictJSONError, dumps_pretty, loads_strict
from compliance_bake.inputs.private_file import write_private_bytes

_PREFIX = re.compile(rf"[a-z0-9]{{{PREFIX_LEN}}}")
_HEX64 = re.compile(r"[0-9a-f]{64}")
_FIX = "mint keys with `compliance-bake keys mint`, or restore the file from a backup"


def _bad(path: Path, where: str, what: str) -> InputError:
    return InputError(f"{path}: {where}: {what}", _FIX)


def _record(path: Path, i: int, item: Any) -> KeyRecord:
    where = f"$.keys[{i}]"
    if not isinstance(item, dict):
        raise _bad(path, where, "not an object")
    prefix, sha3 = item.get("prefix"), item.get("sha3")
    label, revoked = item.get("label", ""), item.get("revoked", False)
    if not isinstance(prefix, str) or not _PREFIX.fullmatch(prefix):
        raise _bad(path, f"{where}.prefix", f"not {PREFIX_LEN} characters of [a-z0-9]")
    if not isinstance(sha3, str) or not _HEX64.fullmatch(sha3):
        raise _bad(path, f"{where}.sha3", "not 64 lowercase hex characters")
    if not isinstance(label, str) or not isinstance(revoked, bool):
        raise _bad(path, where, "label must be a string and revoked a boolean")
    return KeyRecord(prefix=prefix, key_hash=bytes.fromhex(sha3), label=label, revoked=revoked)


def load_keys(path: Path) -> KeyStore:
    """The store in the file; an empty store when the file does not exist."""
    try:
        info = path.stat()
    except FileNotFoundError:
        return KeyStore()
    except OSError as exc:
        raise InputError(f"{path}: cannot read the agent-key file ({exc.strerror})", _FIX) from None
    if stat.S_ISREG(info.st_mode) and info.st_mode & 0o022:  # not regular: refused below
        raise InputError(
            f"{path}: the agent-key file is writable by others "
            f"(mode {stat.S_IMODE(info.st_mode):04o})",
            f"chmod 600 {path}",
        )
    raw = read_if_present(path, max_bytes=FIXTURE_MAX_BYTES, what="agent-key file")
    if raw is None:
        return KeyStore()
    try:
        doc = loads_strict(raw)
    except StrictJSONError as exc:
        raise _bad(path, exc.where, str(exc)) from None
    valid = isinstance(doc, dict) and doc.get("version") == 1 and isinstance(doc.get("keys"), list)
    if not valid:
        raise _bad(path, "$", 'expected {"version": 1, "keys": [...]}')
    index: dict[str, KeyRecord] = {}
    for i, item in enumerate(doc["keys"]):
        record = _record(path, i, item)
        if record.prefix in index:
            raise _bad(path, f"$.keys[{i}].prefix", f"prefix {record.prefix} appears twice")
        index[record.prefix] = record
    return KeyStore(index)


def save_keys(path: Path, store: KeyStore) -> None:
    doc = {
        "version": 1,
        "keys": [
            {"prefix": r.prefix, "sha3": r.key_hash.hex(), "label": r.label, "revoked": r.revoked}
            for r in store.records()
        ],
    }
    write_private_bytes(path, dumps_pretty(doc))


def mint_key(path: Path, label: str = "") -> str:
    """A new key, stored as a hash in the file; the key itself is returned once."""
    store = load_keys(path)
    key = store.mint(label)
    save_keys(path, store)
    return key


def revoke_key(path: Path, prefix: str) -> KeyRecord:
    store = load_keys(path)
    if not any(r.prefix == prefix for r in store.records()):
        raise InputError(
            f"{path}: no agent key with prefix {prefix!r}",
            "run `compliance-bake keys list` to see the prefixes",
        )
    store.revoke(prefix)
    save_keys(path, store)
    return next(r for r in store.records() if r.prefix == prefix)


_Signature = tuple[int, int, int, int] | None  # (device, inode, size, mtime in ns); None: absent


def _signature(path: Path) -> _Signature:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)


class KeyFile:
    """The agent-key file as a running service reads it: checked at each lookup (one stat) and
    re-read when its device, inode, size or modification time changed, as `keys mint` and
    `keys revoke` change them (they write a new file and rename it into place). The signature is
    taken before the file is read, so a change during the read is seen at the next lookup.

    A file that no longer loads (edited by hand into invalid JSON, made writable by others)
    accepts no key until it loads again, and `on_problem` is told once per change: a key file
    nobody can trust must not keep old keys, or a revocation, silently alive."""

    def __init__(self, path: Path, on_problem: Callable[[str], None]) -> None:
        self._path = path
        self._on_problem = on_problem
        self._seen = _signature(path)
        self._store = load_keys(path)  # at start a bad file is bad input (exit 2), as before

    def records(self) -> list[KeyRecord]:
        return self._current().records()

    def lookup(self, presented: str) -> KeyRecord | None:
        return self._current().lookup(presented)

    def _current(self) -> KeyStore:
        seen = _signature(self._path)
        if seen != self._seen:
            self._seen = seen
            try:
                self._store = load_keys(self._path)
            except InputError as exc:
                self._store = KeyStore()
                self._on_problem(exc.one_line())
        return self._store
