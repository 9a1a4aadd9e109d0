"""What `verify` checks of a baked `out/log/`: the snapshot is in the log, and the log holds it.

`out/log/inclusion.json` holds the entry, its index, the tree size and root, and the RFC 6962
inclusion path; `out/log/checkpoint` the signed checkpoint the path leads to. Both verify with
nothing but the log's public key (the signing key's), so neither is an attestation subject.
The checks: the checkpoint's signature under its origin; the entry's leaf hash up the path to
the checkpoint's root; the entry names this `out/` (the SHA-256 of its attestation, the key that
signed it, and what the signed predicate says). With the log itself (`--log DIR|URL`): its
latest checkpoint verifies with the same key and extends the snapshot's (no rollback, no fork, a
consistency proof from its tiles). With witness keys: that many distinct witnesses cosigned a
checkpoint the snapshot is proven in.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from compliance_bake.errors import InputError
from compliance_bake.inputs.files import read_regular_file
from compliance_bake.inputs.jsonio import StrictJSONError, loads_strict
from compliance_bake.log import check, merkle, note
from compliance_bake.log.append import OUT_CHECKPOINT, OUT_INCLUSION
from compliance_bake.log.entry import entry_bytes, entry_of, mismatches
from compliance_bake.log.source import open_source
from compliance_bake.log.tiles import Source
from compliance_bake.signing.attestation import ATTESTATION_FILE
from compliance_bake.targets.fetch import SNAPSHOT_MAX_BYTES

SNAPSHOT = "api/compliance.json"
# out/log/'s two files: a checkpoint note; a proof of at most 64 hashes, with the entry.
MAX_OUT_LOG_BYTES = 1 << 20
_HEX64 = frozenset("0123456789abcdef")


@dataclass(frozen=True, slots=True)
class LogCheckOptions:
    keys: tuple[Ed25519PublicKey, ...]  # the log's (the signing key's) public keys
    log: Source | None = None  # the log itself, for its latest checkpoint
    log_location: str = ""
    witnesses: tuple[Ed25519PublicKey, ...] = ()
    threshold: int = 0


@dataclass(slots=True)
class LogFindings:
    """(file, ok, what) triples for verify's report, and notes."""

    findings: list[tuple[str, bool, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    summary: list[str] = field(default_factory=list)  # what was checked, for "applied"

    def add(self, file: str, ok: bool, what: str) -> bool:
        self.findings.append((file, ok, what))
        return ok


def _hash(value: Any) -> bytes | None:
    if isinstance(value, str) and len(value) == 64 and set(value) <= _HEX64:
        return bytes.fromhex(value)
    return None


def _read_inside(out_dir: Path, name: str, max_bytes: int) -> bytes:
    """A file of out/ through the one opener: a link, a FIFO or a device planted there is
    refused (InputError), never followed, waited on or read without end."""
    return read_regular_file(name, max_bytes=max_bytes, what=name, inside=out_dir)


def _read(out_dir: Path, name: str, found: LogFindings) -> bytes | None:
    try:
        return _read_inside(out_dir, name, MAX_OUT_LOG_BYTES)
    except (FileNotFoundError, NotADirectoryError):
        found.add(name, False, "missing")
    except InputError as exc:
        found.add(name, False, exc.one_line())
    return None


def _inclusion(doc: Any) -> tuple[int, int, bytes, list[bytes], dict[str, Any]] | None:
    if not isinstance(doc, dict):
        return None
    index, size, entry = doc.get("logIndex"), doc.get("treeSize"), doc.get("entry")
    root, hashes = _hash(doc.get("rootHash")), doc.get("hashes")
    if not (
        isinstance(index, int)
        and isinstance(size, int)
        and isinstance(entry, dict)
        and root is not None
        and isinstance(hashes, list)
    ):
        return None
    path = [_hash(h) for h in hashes]
    if any(h is None for h in path):
        return None
    return index, size, root, [h for h in path if h is not None], entry


def _attestation(out_dir: Path) -> tuple[bytes, str | None, dict[str, Any]] | None:
    """The envelope's bytes, its signature's key id and its predicate (verify checks the
    signature itself); None when unreadable."""
    try:
        raw = _read_inside(out_dir, ATTESTATION_FILE, SNAPSHOT_MAX_BYTES)
        envelope = loads_strict(raw)
        statement = loads_strict(base64.b64decode(envelope["payload"], validate=True))
        key_id = envelope["signatures"][0]["keyid"]
        predicate = statement["predicate"]
    except (OSError, InputError, StrictJSONError, KeyError, IndexError, TypeError, binascii.Error):
        return None
    if not isinstance(predicate, dict):
        return None
    return raw, key_id if isinstance(key_id, str) else None, predicate


def check_out_log(out_dir: Path, options: LogCheckOptions) -> LogFindings:
    found = LogFindings()
    if not (out_dir / OUT_INCLUSION).exists() and not (out_dir / OUT_CHECKPOINT).exists():
        if options.log is not None or options.threshold:
            found.add(
                "log/",
                False,
                "missing: the snapshot was not baked with --log, so no log can prove it",
            )
        return found
    if not options.keys:
        found.notes.append("out/log/ not checked: its checkpoint verifies with --public-key only")
        return found
    raw = _read(out_dir, OUT_CHECKPOINT, found)
    signed, problem = check.read_signed(raw, OUT_CHECKPOINT, options.keys)
    if signed is None:
        found.add(OUT_CHECKPOINT, False, problem or "not verified")
        return found
    found.add(OUT_CHECKPOINT, True, f"{signed.checkpoint.describe()} signed by the log's key")
    doc_raw = _read(out_dir, OUT_INCLUSION, found)
    try:
        parsed = _inclusion(loads_strict(doc_raw)) if doc_raw is not None else None
    except StrictJSONError:
        parsed = None
    if parsed is None:
        found.add(
            OUT_INCLUSION,
            False,
            "not an inclusion proof (logIndex, treeSize, rootHash, hashes, entry)",
        )
        return found
    index, size, root, path, entry = parsed
    cp = signed.checkpoint
    if (size, root) != (cp.size, cp.root):
        found.add(
            OUT_INCLUSION, False, f"proves a tree of size {size}, the checkpoint is {cp.describe()}"
        )
        return found
    leaf = merkle.leaf_hash(entry_bytes(entry))
    if not found.add(
        OUT_INCLUSION,
        merkle.verify_inclusion(index, size, leaf, path, cp.root),
        f"entry {index} included in {cp.describe()} (RFC 6962 inclusion proof)",
    ):
        return found
    found.summary.append(f"transparency log: entry {index} in {cp.origin} size {cp.size}")
    _entry_names_out(out_dir, entry, found)
    latest = _latest(options, signed, found)
    _witnessed(options, [signed.note, *([latest.note] if latest else [])], found)
    return found


def _entry_names_out(out_dir: Path, entry: dict[str, Any], found: LogFindings) -> None:
    """Every field of the logged entry against the entry rebuilt from this out/: its
    attestation (SHA-256, key id) and the snapshot it names (target, verdict, digests, time)."""
    attested = _attestation(out_dir)
    if attested is None:
        found.add(OUT_INCLUSION, False, f"the entry names {ATTESTATION_FILE}, which is unreadable")
        return
    raw, key_id, _ = attested
    try:
        document = loads_strict(_read_inside(out_dir, SNAPSHOT, SNAPSHOT_MAX_BYTES))
        expected = entry_of(document, raw, key_id or "")
    except (InputError, FileNotFoundError, StrictJSONError, KeyError, TypeError):
        found.add(OUT_INCLUSION, False, f"the entry names {SNAPSHOT}, which is unreadable")
        return
    wrong = mismatches(entry, expected)
    found.add(
        OUT_INCLUSION,
        not wrong,
        "the logged entry is this out/'s, every field (attestation SHA-256, key id, target, "
        "verdict, integrity digest, time)"
        if not wrong
        else f"the logged entry is not this out/'s: {', '.join(wrong)} differ",
    )


def _latest(
    options: LogCheckOptions, signed: check.Signed, found: LogFindings
) -> check.Signed | None:
    if options.log is None:
        return None
    where = f"{options.log_location}/checkpoint"
    latest, problem = check.read_signed(options.log(check.CHECKPOINT), where, [signed.key])
    if latest is None:
        found.add(where, False, problem or "not verified")
        return None
    broken = check.consistency_problem(options.log, signed.checkpoint, latest.checkpoint)
    found.add(
        where,
        broken is None,
        broken
        or (
            f"the log's latest {latest.checkpoint.describe()} extends the snapshot's checkpoint "
            "(consistency proof from its tiles)"
        ),
    )
    found.summary.append(f"consistent with the log's latest (size {latest.checkpoint.size})")
    return latest if broken is None else None


def _witnessed(options: LogCheckOptions, notes: Sequence[note.Note], found: LogFindings) -> None:
    if not options.threshold:
        return
    cosigners: set[bytes] = set()
    for signed in notes:
        cosigners |= note.cosigners(signed, list(options.witnesses))
    found.add(
        OUT_CHECKPOINT,
        len(cosigners) >= options.threshold,
        f"{len(cosigners)} of the {len(options.witnesses)} given witnesses cosigned a "
        f"checkpoint that holds this snapshot (threshold {options.threshold})",
    )


def _public(pem: bytes, what: str) -> Ed25519PublicKey:
    from compliance_bake.signing.signing_key import parse_public_key

    try:
        return parse_public_key(pem)
    except ValueError as exc:
        raise InputError(
            f"{what}: {exc}", "pass the .pub.pem file the mint command wrote"
        ) from None


def check_folder(
    out_dir: Path,
    public_pems: Sequence[bytes],
    log_location: str | None,
    witness_pems: Sequence[bytes],
    threshold: int | None,
    timeout: float,
) -> LogFindings:
    """verify's one call: the options as the command line gives them, checked, then the
    checks of `check_out_log`."""
    if (log_location or witness_pems) and not out_dir.is_dir():
        raise InputError(
            f"{out_dir}: the log's proof is in an out/ folder (out/log/)",
            "verify the out/ folder the bake wrote",
        )
    if (log_location or witness_pems) and not public_pems:
        raise InputError(
            "--log and --witness-key check the log's checkpoints, which verify with the "
            "signing key's public key",
            "add --public-key signing-key.pub.pem",
        )
    needed = len(witness_pems) if threshold is None else threshold
    if needed > len(witness_pems):
        raise InputError(
            f"--witness-threshold {needed}: only {len(witness_pems)} --witness-key given",
            "give as many witness keys as the threshold, or lower it",
        )
    options = LogCheckOptions(
        keys=tuple(_public(pem, "--public-key") for pem in public_pems),
        log=None if log_location is None else open_source(log_location, timeout),
        log_location=(log_location or "").rstrip("/"),
        witnesses=tuple(_public(pem, "--witness-key") for pem in witness_pems),
        threshold=needed,
    )
    return check_out_log(out_dir, options)
