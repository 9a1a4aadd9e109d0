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

import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from compliance_bake.errors import InputError
from compliance_bake.findings import EXTRA, KEY, Finding, Findings
from compliance_bake.inputs.files import LeavesFolder, NotRegular, TooLarge, read_bounded
from compliance_bake.log.append import OUT_FILES
from compliance_bake.report.escape import json_line
from compliance_bake.report.layout import API_FILE, AUDIT_FILE, out_entries
from compliance_bake.signing.attestation import (
    ATTESTATION_FILE,
    PAYLOAD_TYPE,
    ReadAttestation,
    pae,
    predicate,
    read_attestation,
    sha256_hex,
)
from compliance_bake.signing.signing_key import key_id, parse_public_key
from compliance_bake.targets.fetch import SNAPSHOT_MAX_BYTES
from compliance_bake.verify.document import read_document
from compliance_bake.verify.findings import QUOTED

# out/log/ holds the log's inclusion proof and checkpoint: they verify on their own.
NOT_SUBJECTS = (AUDIT_FILE, *OUT_FILES)


@dataclass(slots=True)
class AttestationResult(Findings):
    """The failed findings (kind KEY), each naming the file (relative to `out/`) and what
    failed; `key_id`: the given key whose signature verified, None when none did."""

    key_id: str | None = None

    @property
    def ok(self) -> bool:
        return self.key_id is not None and not self.failures


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


def _read(out_dir: Path, found: Findings) -> ReadAttestation | None:
    """The attestation through signing/attestation's reader, or None and why (a link or a FIFO
    planted in out/ counts as missing: it is refused, never followed)."""
    read = read_attestation(out_dir)
    if read is None:
        found.add(ATTESTATION_FILE, False, "missing (baked without a signing key, or removed)", KEY)
        return None
    if not isinstance(read, ReadAttestation):
        found.findings.append(read)
        return None
    return read


def _signer(read: ReadAttestation, keys: list[Ed25519PublicKey], found: Findings) -> str | None:
    """The key id of the given key that signed the envelope, or None (and why)."""
    message = pae(PAYLOAD_TYPE, read.payload)
    for signature in read.signatures:
        for key in keys:
            try:
                key.verify(signature.sig or b"", message)
            except InvalidSignature:
                continue
            signer = key_id(key)
            if signature.keyid != signer:
                found.add(
                    ATTESTATION_FILE,
                    False,
                    f"keyid does not name the key that signed ({signer})",
                    KEY,
                )
            return signer
    found.add(ATTESTATION_FILE, False, _unverified([s.keyid for s in read.signatures], keys), KEY)
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
    shown = ", ".join(n if isinstance(n, str) else json_line(n, QUOTED) for n in named)
    return (
        f"signature: signed by key {shown}; the given key {', '.join(given)} is another key: "
        "give the signer's public key"
    )


def _files_of(out_dir: Path, found: Findings) -> set[str]:
    """Every entry of out/ that must be a subject: relative POSIX names, links included."""
    names: set[str] = set()
    for name, path in out_entries(out_dir):
        if name in (ATTESTATION_FILE, *NOT_SUBJECTS):
            continue
        if not stat.S_ISREG(path.lstat().st_mode):
            found.add(name, False, "not a regular file (a bake writes none)", KEY)
        names.add(name)
    return names


def _check_files(out_dir: Path, digests: Mapping[str, str], found: Findings) -> None:
    present = _files_of(out_dir, found)
    for name in sorted(digests.keys() - present):
        found.add(name, False, "missing: the attestation names it, out/ lacks it", KEY)
    for name in sorted(present - digests.keys()):
        found.add(name, False, "extra: in out/, not named by the attestation", EXTRA)
    for name in sorted(digests.keys() & present):
        path = out_dir / name
        if not stat.S_ISREG(path.lstat().st_mode):
            continue  # already reported
        try:
            data = read_bounded(name, SNAPSHOT_MAX_BYTES, inside=out_dir)
            same = sha256_hex(data) == digests[name]
        except OSError as exc:
            found.add(name, False, f"cannot read: {exc.strerror}", KEY)
            continue
        except (LeavesFolder, NotRegular, TooLarge):
            found.add(
                name, False, "not a regular file of at most 256 MiB (a bake writes none)", KEY
            )
            continue
        if not same:
            found.add(
                name, False, "sha256 differs from the attestation (changed after signing)", KEY
            )


def _check_predicate(out_dir: Path, claimed: object, found: Findings, snapshot: Any) -> None:
    try:
        if snapshot is None:
            snapshot = read_document(API_FILE, inside=out_dir)
        # `previous` (bake --previous) is carried as signed; report/portal_previous.py checks it.
        previous = claimed.get("previous") if isinstance(claimed, dict) else None
        summary = predicate(snapshot, previous)
    except (OSError, InputError, KeyError, TypeError, ValueError):
        found.add(ATTESTATION_FILE, False, f"predicate: cannot summarise {API_FILE}", KEY)
        return
    if summary != claimed:
        found.add(ATTESTATION_FILE, False, f"predicate does not summarise {API_FILE}", KEY)


def parse_problems(out_dir: Path) -> list[Finding]:
    """Why `out_dir`'s attestation cannot be parsed (an envelope, its signatures' shape, its
    Statement and subjects), without a key: an attestation nobody can read fails even when no
    key is given to check its signature. Empty when it parses (or is absent)."""
    if not (out_dir / ATTESTATION_FILE).is_symlink() and not (out_dir / ATTESTATION_FILE).exists():
        return []
    found = Findings()
    read = _read(out_dir, found)
    if read is not None and read.statement_problem is not None:
        found.findings.append(read.statement_problem)
    return found.failures


def signed_subjects(out_dir: Path, public_keys: Sequence[bytes]) -> list[str]:
    """The names of the subjects of `out_dir`'s attestation, once its signature verifies with
    one of the given keys; empty otherwise (then `check_attestation` says why). Only what a
    trusted signer named is worth fetching: `verify URL` fetches these beside the snapshot."""
    keys = _public_keys(public_keys)
    found = Findings()
    read = _read(out_dir, found)
    if read is None or _signer(read, keys, found) is None or found.failures:
        return []
    return sorted(read.subjects)


def check_attestation(
    out_dir: Path, public_keys: Sequence[bytes], *, snapshot: Any = None
) -> AttestationResult:
    """Check `out_dir`'s attestation against the given Ed25519 public keys (SPKI PEM bytes).
    `snapshot`: `out_dir`'s snapshot as verify/source.py read it (whose bytes the subjects'
    SHA-256 binds); read as that module reads it when not given.

    InputError (bad usage, exit 2) when no key is given or one is not an Ed25519 public key.
    """
    keys = _public_keys(public_keys)
    result = AttestationResult()
    if not out_dir.is_dir():
        result.add(str(out_dir), False, "not a folder", KEY)
        return result
    read = _read(out_dir, result)
    if read is None:
        return result
    result.key_id = _signer(read, keys, result)
    if result.failures:  # nothing the payload says can be trusted, or even read
        return result
    if read.statement_problem is not None:
        result.findings.append(read.statement_problem)
        return result
    _check_files(out_dir, read.subjects, result)
    if not result.failures:
        _check_predicate(out_dir, read.predicate, result, snapshot)
    return result
