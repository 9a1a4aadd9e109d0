"""Check the public attestation of a baked `out/` with Ed25519 public keys alone (no HMAC secret).

What holds when `ok` is true: `out/attestation/compliance.intoto.json` is a DSSE envelope of an
in-toto Statement v1 of our predicate type, its signature over the DSSE pre-authentication
encoding verifies with one of the given public keys (several keys: rotation; the envelope's
`keyid` must name that key), every subject's SHA-256 matches its file, every file of `out/` is a
subject and every subject a file, and the predicate summarises the attested snapshot.

Two files of `out/` are not subjects, by design: `audit/zip-window.json`, which `audit deep`
writes into the same folder after or apart from the bake, and an empty `.gitkeep` at the top
(a checkout keeps an empty `out/` that way; it carries nothing). Anything else that is not a
subject, including a symbolic link, fails. Every failure names the file (relative to `out/`)
and what failed; a check that cannot run is a failure, never a pass.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, TypeGuard

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from compliance_bake.errors import InputError
from compliance_bake.inputs.files import LeavesFolder, NotRegular, TooLarge, read_bounded
from compliance_bake.inputs.jsonio import StrictJSONError, loads_strict
from compliance_bake.signing.attestation import (
    ATTESTATION_FILE,
    MAX_ENVELOPE_BYTES,
    PAYLOAD_TYPE,
    PREDICATE_TYPE,
    STATEMENT_TYPE,
    pae,
    predicate,
)
from compliance_bake.signing.signing_key import key_id, parse_public_key
from compliance_bake.targets.fetch import SNAPSHOT_MAX_BYTES
from compliance_bake.verify.document import read_document
from compliance_bake.verify.findings import json_value

# out/log/ holds the log's inclusion proof and checkpoint: they verify on their own.
NOT_SUBJECTS = ("audit/zip-window.json", "log/inclusion.json", "log/checkpoint")
KEEP_FILE = ".gitkeep"
SNAPSHOT_FILE = "api/compliance.json"
_SHA256_HEX = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True, slots=True)
class AttestationResult:
    ok: bool
    key_id: str | None  # the key whose signature verified, None when none did
    failures: list[tuple[str, str]] = field(default_factory=list)  # (file, what failed)


class _Findings:
    def __init__(self) -> None:
        self.failures: list[tuple[str, str]] = []

    def fail(self, file: str, what: str) -> None:
        self.failures.append((file, what))


def _public_keys(pems: Sequence[bytes]) -> list[Ed25519PublicKey]:
    if not pems:
        raise InputError(
            "no public key given to check the attestation with",
            "pass the signer's .pub.pem (`--public-key PEM`, repeatable)",
        )
    keys = []
    for number, pem in enumerate(pems, 1):
        try:
            keys.append(parse_public_key(pem))
        except ValueError as exc:
            raise InputError(
                f"public key {number} is {exc}",
                "pass the .pub.pem file `signing-key mint` wrote",
            ) from None
    return keys


def _b64(value: Any) -> bytes | None:
    if not isinstance(value, str):
        return None
    try:
        return base64.b64decode(value.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError):
        return None


def _envelope(out_dir: Path, found: _Findings) -> dict[str, Any] | None:
    try:  # the one opener: a link or a FIFO planted in out/ is refused, never followed
        raw = read_bounded(ATTESTATION_FILE, MAX_ENVELOPE_BYTES, inside=out_dir)
    except (FileNotFoundError, NotADirectoryError, LeavesFolder, NotRegular):
        found.fail(ATTESTATION_FILE, "missing (baked without a signing key, or removed)")
        return None
    except TooLarge:
        found.fail(ATTESTATION_FILE, f"larger than {MAX_ENVELOPE_BYTES} bytes")
        return None
    except OSError as exc:
        found.fail(ATTESTATION_FILE, f"cannot read: {exc.strerror}")
        return None
    try:
        doc = loads_strict(raw)
    except StrictJSONError as exc:
        found.fail(ATTESTATION_FILE, f"not strict JSON at {exc.where}: {exc}")
        return None
    if not isinstance(doc, dict) or set(doc) != {"payloadType", "payload", "signatures"}:
        found.fail(ATTESTATION_FILE, "not a DSSE envelope {payloadType, payload, signatures}")
        return None
    if doc["payloadType"] != PAYLOAD_TYPE:
        found.fail(ATTESTATION_FILE, f"payloadType is not {PAYLOAD_TYPE}")
        return None
    return doc


def _payload(doc: dict[str, Any], found: _Findings) -> bytes | None:
    """The envelope's payload bytes, once its signatures are a list of {keyid, sig}; None (and
    why) when either is malformed."""
    payload = _b64(doc["payload"])
    signatures = doc["signatures"]
    shaped = (
        isinstance(signatures, list)
        and signatures
        and all(isinstance(s, dict) and set(s) == {"keyid", "sig"} for s in signatures)
    )
    if payload is None or not shaped:
        found.fail(ATTESTATION_FILE, "payload is not base64, or signatures are not [{keyid, sig}]")
        return None
    return payload


def _signer(doc: dict[str, Any], keys: list[Ed25519PublicKey], found: _Findings) -> str | None:
    """The key id of the given key that signed the envelope, or None (and why)."""
    payload = _payload(doc, found)
    if payload is None:
        return None
    signatures = doc["signatures"]
    message = pae(PAYLOAD_TYPE, payload)
    for signature in signatures:
        sig = _b64(signature["sig"])
        for key in keys:
            try:
                key.verify(sig or b"", message)
            except InvalidSignature:
                continue
            signer = key_id(key)
            if signature["keyid"] != signer:
                found.fail(ATTESTATION_FILE, f"keyid does not name the key that signed ({signer})")
            return signer
    found.fail(ATTESTATION_FILE, _unverified([s["keyid"] for s in signatures], keys))
    return None


def _unverified(named: list[Any], keys: list[Ed25519PublicKey]) -> str:
    """Why no signature verified, with every key id in full: a given key the envelope names
    whose signature fails means the envelope changed after signing; a given key it does not
    name means the wrong public key was given."""
    given = [key_id(k) for k in keys]
    same = [k for k in given if k in named]
    if same:
        return (
            f"signature: does not verify with key {', '.join(same)}, the key the envelope "
            "names: the envelope changed after signing"
        )
    shown = ", ".join(n if isinstance(n, str) else json_value(n) for n in named)
    return (
        f"signature: signed by key {shown}; the given key {', '.join(given)} is another key: "
        "give the signer's public key"
    )


def _safe_name(name: Any) -> TypeGuard[str]:
    if not isinstance(name, str) or not name or "\\" in name or "\x00" in name:
        return False
    parts = PurePosixPath(name).parts
    return (
        not name.startswith("/")
        and "/".join(parts) == name
        and all(part not in (".", "..") for part in parts)
    )


def _subjects(doc: dict[str, Any], found: _Findings) -> tuple[dict[str, str], Any] | None:
    """{name: sha256} and the predicate, from the envelope's Statement; None when malformed."""
    try:
        statement = loads_strict(base64.b64decode(doc["payload"], validate=True))
    except StrictJSONError as exc:
        found.fail(ATTESTATION_FILE, f"payload: not strict JSON at {exc.where}: {exc}")
        return None
    if not isinstance(statement, dict) or statement.get("_type") != STATEMENT_TYPE:
        found.fail(ATTESTATION_FILE, f"payload: not an in-toto Statement ({STATEMENT_TYPE})")
        return None
    if statement.get("predicateType") != PREDICATE_TYPE:
        found.fail(ATTESTATION_FILE, f"payload: predicateType is not {PREDICATE_TYPE}")
        return None
    subject = statement.get("subject")
    digests: dict[str, str] = {}
    for entry in subject if isinstance(subject, list) else [None]:
        name = entry.get("name") if isinstance(entry, dict) else None
        digest = entry.get("digest") if isinstance(entry, dict) else None
        sha = digest.get("sha256") if isinstance(digest, dict) else None
        if not _safe_name(name) or not isinstance(sha, str) or not _SHA256_HEX.fullmatch(sha):
            found.fail(ATTESTATION_FILE, "payload: a subject is not {name, digest: {sha256}}")
            return None
        if name in digests or name == ATTESTATION_FILE:
            found.fail(ATTESTATION_FILE, f"payload: subject {name} listed twice or names itself")
            return None
        digests[name] = sha
    return digests, statement.get("predicate")


def _files_of(out_dir: Path, found: _Findings) -> set[str]:
    """Every entry of out/ that must be a subject: relative POSIX names, links included."""
    names: set[str] = set()
    for root, dirs, files in os.walk(out_dir):
        here = Path(root)
        entries = files + [d for d in dirs if (here / d).is_symlink()]
        for entry in entries:
            path = here / entry
            name = path.relative_to(out_dir).as_posix()
            info = path.lstat()
            if name in (ATTESTATION_FILE, *NOT_SUBJECTS):
                continue
            if name == KEEP_FILE and stat.S_ISREG(info.st_mode) and info.st_size == 0:
                continue
            if not stat.S_ISREG(info.st_mode):
                found.fail(name, "not a regular file (a bake writes none)")
            names.add(name)
    return names


def _sha256_of(out_dir: Path, name: str) -> str:
    """Through the one opener, within the cap of the largest file a bake writes."""
    return hashlib.sha256(read_bounded(name, SNAPSHOT_MAX_BYTES, inside=out_dir)).hexdigest()


def _check_files(out_dir: Path, digests: dict[str, str], found: _Findings) -> None:
    present = _files_of(out_dir, found)
    for name in sorted(digests.keys() - present):
        found.fail(name, "missing: the attestation names it, out/ lacks it")
    for name in sorted(present - digests.keys()):
        found.fail(name, "extra: in out/, not named by the attestation")
    for name in sorted(digests.keys() & present):
        path = out_dir / name
        if not stat.S_ISREG(path.lstat().st_mode):
            continue  # already reported
        try:
            same = _sha256_of(out_dir, name) == digests[name]
        except OSError as exc:
            found.fail(name, f"cannot read: {exc.strerror}")
            continue
        except (LeavesFolder, NotRegular, TooLarge):
            found.fail(name, "not a regular file of at most 256 MiB (a bake writes none)")
            continue
        if not same:
            found.fail(name, "sha256 differs from the attestation (changed after signing)")


def _check_predicate(out_dir: Path, claimed: Any, found: _Findings, snapshot: Any) -> None:
    try:
        if snapshot is None:
            snapshot = read_document(SNAPSHOT_FILE, inside=out_dir)
        # `previous` (bake --previous) is carried as signed; report/portal_previous.py checks it.
        previous = claimed.get("previous") if isinstance(claimed, dict) else None
        summary = predicate(snapshot, previous)
    except (OSError, InputError, KeyError, TypeError, ValueError):
        found.fail(ATTESTATION_FILE, f"predicate: cannot summarise {SNAPSHOT_FILE}")
        return
    if summary != claimed:
        found.fail(ATTESTATION_FILE, f"predicate does not summarise {SNAPSHOT_FILE}")


def parse_problems(out_dir: Path) -> list[tuple[str, str]]:
    """Why `out_dir`'s attestation cannot be parsed (an envelope, its signatures' shape, its
    Statement and subjects), without a key: an attestation nobody can read fails even when no
    key is given to check its signature. Empty when it parses (or is absent)."""
    found = _Findings()
    if not (out_dir / ATTESTATION_FILE).is_symlink() and not (out_dir / ATTESTATION_FILE).exists():
        return []
    doc = _envelope(out_dir, found)
    if doc is None:
        return found.failures
    if _payload(doc, found) is not None:
        _subjects(doc, found)
    return found.failures


def signed_subjects(out_dir: Path, public_keys: Sequence[bytes]) -> list[str]:
    """The names of the subjects of `out_dir`'s attestation, once its signature verifies with
    one of the given keys; empty otherwise (then `check_attestation` says why). Only what a
    trusted signer named is worth fetching: `verify URL` fetches these beside the snapshot."""
    keys = _public_keys(public_keys)
    found = _Findings()
    doc = _envelope(out_dir, found)
    if doc is None or _signer(doc, keys, found) is None or found.failures:
        return []
    parsed = _subjects(doc, found)
    return [] if parsed is None else sorted(parsed[0])


def check_attestation(
    out_dir: Path, public_keys: Sequence[bytes], *, snapshot: Any = None
) -> AttestationResult:
    """Check `out_dir`'s attestation against the given Ed25519 public keys (SPKI PEM bytes).
    `snapshot`: `out_dir`'s snapshot as verify/source.py read it (whose bytes the subjects'
    SHA-256 binds); read as that module reads it when not given.

    InputError (bad usage, exit 2) when no key is given or one is not an Ed25519 public key.
    """
    keys = _public_keys(public_keys)
    found = _Findings()
    if not out_dir.is_dir():
        found.fail(str(out_dir), "not a folder")
        return AttestationResult(False, None, found.failures)
    doc = _envelope(out_dir, found)
    if doc is None:
        return AttestationResult(False, None, found.failures)
    signer = _signer(doc, keys, found)
    if found.failures:  # nothing the payload says can be trusted, or even read
        return AttestationResult(False, signer, found.failures)
    parsed = _subjects(doc, found)
    if parsed is not None:
        digests, claimed = parsed
        _check_files(out_dir, digests, found)
        if not found.failures:
            _check_predicate(out_dir, claimed, found, snapshot)
    return AttestationResult(not found.failures and signer is not None, signer, found.failures)
