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

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from compliance_bake.errors import InputError
from compliance_bake.findings import KEY, Finding, Findings
from compliance_bake.inputs.files import read_if_present, read_regular_file
from compliance_bake.inputs.jsonio import StrictJSONError, loads_strict
from compliance_bake.log import check, merkle, note
from compliance_bake.log.append import OUT_CHECKPOINT, OUT_INCLUSION
from compliance_bake.log.entry import entry_bytes, entry_of, mismatches
from compliance_bake.log.source import open_source
from compliance_bake.log.tiles import Source
from compliance_bake.report.layout import API_FILE
from compliance_bake.signing.attestation import ATTESTATION_FILE, ReadAttestation, read_attestation
from compliance_bake.targets.fetch import SNAPSHOT_MAX_BYTES

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
class LogProof(Findings):
    """What the checks of out/log/ found (kind KEY: they count for verify's *authentic*), its
    notes, and what was checked, one phrase each, for verify's "applied" line."""

    summary: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Inclusion:
    """out/log/inclusion.json as read: the entry, its index in a tree of `size` entries with
    `root`, and the RFC 6962 inclusion path."""

    index: int
    size: int
    root: bytes
    path: list[bytes]
    entry: dict[str, Any]


def _hash(value: Any) -> bytes | None:
    if isinstance(value, str) and len(value) == 64 and set(value) <= _HEX64:
        return bytes.fromhex(value)
    return None


def _read(out_dir: Path, name: str, found: LogProof) -> bytes | None:
    try:
        raw = read_if_present(name, max_bytes=MAX_OUT_LOG_BYTES, what=name, inside=out_dir)
    except InputError as exc:
        found.add(name, False, exc.one_line(), KEY)
        return None
    if raw is None:
        found.add(name, False, "missing", KEY)
    return raw


def _inclusion(raw: bytes | None) -> Inclusion | None:
    try:
        doc = loads_strict(raw) if raw is not None else None
    except StrictJSONError:
        return None
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
    return Inclusion(index, size, root, [h for h in path if h is not None], entry)


def check_out_log(out_dir: Path, options: LogCheckOptions) -> LogProof:
    found = LogProof()
    if not (out_dir / OUT_INCLUSION).exists() and not (out_dir / OUT_CHECKPOINT).exists():
        if options.log is not None or options.threshold:
            found.add(
                "log/",
                False,
                "missing: the snapshot was not baked with --log, so no log can prove it",
                KEY,
            )
        return found
    if not options.keys:
        found.notes.append("out/log/ not checked: its checkpoint verifies with --public-key only")
        return found
    signed = check.read_signed(_read(out_dir, OUT_CHECKPOINT, found), OUT_CHECKPOINT, options.keys)
    if isinstance(signed, Finding):
        found.add(OUT_CHECKPOINT, False, signed.line, KEY)
        return found
    found.add(OUT_CHECKPOINT, True, f"{signed.checkpoint.describe()} signed by the log's key", KEY)
    inclusion = _inclusion(_read(out_dir, OUT_INCLUSION, found))
    if inclusion is None:
        found.add(
            OUT_INCLUSION,
            False,
            "not an inclusion proof (logIndex, treeSize, rootHash, hashes, entry)",
            KEY,
        )
        return found
    index, size, cp = inclusion.index, inclusion.size, signed.checkpoint
    if (size, inclusion.root) != (cp.size, cp.root):
        found.add(
            OUT_INCLUSION,
            False,
            f"proves a tree of size {size}, the checkpoint is {cp.describe()}",
            KEY,
        )
        return found
    leaf = merkle.leaf_hash(entry_bytes(inclusion.entry))
    if not found.add(
        OUT_INCLUSION,
        merkle.verify_inclusion(index, size, leaf, inclusion.path, cp.root),
        f"entry {index} included in {cp.describe()} (RFC 6962 inclusion proof)",
        KEY,
    ):
        return found
    found.summary.append(f"transparency log: entry {index} in {cp.origin} size {cp.size}")
    _entry_names_out(out_dir, inclusion.entry, found)
    latest = _latest(options, signed, found)
    _witnessed(options, [signed.note, *([latest.note] if latest else [])], found)
    return found


def _entry_names_out(out_dir: Path, entry: dict[str, Any], found: LogProof) -> None:
    """Every field of the logged entry against the entry rebuilt from this out/: its
    attestation (SHA-256, key id) and the snapshot it names (target, verdict, digests, time)."""
    attested = read_attestation(out_dir)
    if not isinstance(attested, ReadAttestation) or attested.statement_problem is not None:
        found.add(
            OUT_INCLUSION, False, f"the entry names {ATTESTATION_FILE}, which is unreadable", KEY
        )
        return
    key_id = attested.signatures[0].keyid
    try:
        missing = InputError(f"{API_FILE}: missing")  # worded by the finding below
        snapshot = read_regular_file(
            API_FILE, max_bytes=SNAPSHOT_MAX_BYTES, what=API_FILE, inside=out_dir, missing=missing
        )
        document = loads_strict(snapshot)
        expected = entry_of(document, attested.sha256, key_id if isinstance(key_id, str) else "")
    except (InputError, StrictJSONError, KeyError, TypeError):
        found.add(OUT_INCLUSION, False, f"the entry names {API_FILE}, which is unreadable", KEY)
        return
    wrong = mismatches(entry, expected)
    found.add(
        OUT_INCLUSION,
        not wrong,
        "the logged entry is this out/'s, every field (attestation SHA-256, key id, target, "
        "verdict, integrity digest, time)"
        if not wrong
        else f"the logged entry is not this out/'s: {', '.join(wrong)} differ",
        KEY,
    )


def _latest(options: LogCheckOptions, signed: check.Signed, found: LogProof) -> check.Signed | None:
    if options.log is None:
        return None
    where = f"{options.log_location}/checkpoint"
    latest = check.read_signed(options.log(check.CHECKPOINT), where, [signed.key])
    if isinstance(latest, Finding):
        found.add(where, False, latest.line, KEY)
        return None
    broken = check.consistency_problem(options.log, signed.checkpoint, latest.checkpoint)
    found.add(
        where,
        broken is None,
        broken.line
        if broken
        else (
            f"the log's latest {latest.checkpoint.describe()} extends the snapshot's checkpoint "
            "(consistency proof from its tiles)"
        ),
        KEY,
    )
    found.summary.append(f"consistent with the log's latest (size {latest.checkpoint.size})")
    return latest if broken is None else None


def _witnessed(options: LogCheckOptions, notes: Sequence[note.Note], found: LogProof) -> None:
    if not options.threshold:
        return
    cosigners: set[bytes] = set()
    for signed in notes:
        cosigners |= note.cosigners(signed, list(options.witnesses))
    held = found.add(
        OUT_CHECKPOINT,
        len(cosigners) >= options.threshold,
        f"{len(cosigners)} of the {len(options.witnesses)} given witnesses cosigned a "
        f"checkpoint that holds this snapshot (threshold {options.threshold})",
        KEY,
    )
    if held:  # said where the checks applied are listed: a pass names what it checked
        found.summary.append(
            f"witnessed: {len(cosigners)} of the {len(options.witnesses)} given witness keys "
            f"cosigned a checkpoint that holds this snapshot (threshold {options.threshold})"
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
) -> LogProof:
    """What verify calls: the options as the command line gives them, checked, then the
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
