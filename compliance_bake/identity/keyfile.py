"""The agent-key file that `keys mint` writes and `serve` reads: hashes only, mode 0600.

    {"version": 1,
     "keys": [{"prefix": "ab3de", "sha3": "<64 hex>", "label": "ci", "revoked": false}]}

A key is printed once, when it is minted; the file holds its SHA3-256 hash. The file is written
through a temporary file and renamed, so a crash leaves the old file whole.
"""

from __future__ import annotations

import re
import stat
from pathlib import Path
from typing import Any

from compliance_bake.errors import InputError
from compliance_bake.identity.keys import PREFIX_LEN, KeyRecord, KeyStore
from compliance_bake.inputs.files import FIXTURE_MAX_BYTES, read_regular_file
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
    try:
        raw = read_regular_file(path, max_bytes=FIXTURE_MAX_BYTES, what="agent-key file")
    except FileNotFoundError:
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
