"""A side of the diff: where it comes from, its snapshot, and whether it is authentic.

A side is a baked `out/` folder (its `api/compliance.json`), a snapshot file (a regular file,
size-capped), or an http(s) URL of a published `/api/compliance`, fetched with
`targets/fetch.py` as `verify` fetches one.

`authenticate` is the one place a side's authenticity is decided, with the key material `verify`
takes. With the signing secret it recomputes `integrity.proof.digest` over the whole snapshot
(which binds every other field, the shadow proof included) and checks `integrity.proof.hmac` and
`shadow.proof.hmac`, with the same signing functions as `verify`. With trusted Ed25519 public
keys and an out/ folder, it runs `verify`'s `check_attestation` on the folder (the signed DSSE
envelope, every file's SHA-256, the predicate). Either one that holds makes the side authentic.
It does not re-run verify's compliance checks (board consistency, labels, the registry copies,
the portal): those are what the diff reports as changes, and running them costs about 11 s on a
500,000-row out/ folder. Without key material nothing is authentic: the diff refuses the side
unless the caller asked for an unauthenticated comparison. (The attestation is checked on the
folder as it is on disk; a writer racing the diff is out of scope, as it is for `verify`.)
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from compliance_bake.diff.digest import typed_digest
from compliance_bake.errors import InputError, TargetError
from compliance_bake.inputs import schemas
from compliance_bake.inputs.files import read_regular_file
from compliance_bake.inputs.jsonpieces import loads_in_pieces
from compliance_bake.report import layout
from compliance_bake.signing import proofs
from compliance_bake.signing.attestation import ATTESTATION_FILE
from compliance_bake.signing.canon import same_mac
from compliance_bake.signing.integrity import hmac_present
from compliance_bake.signing.secret import Secret
from compliance_bake.targets.fetch import DEFAULT_TIMEOUT, SNAPSHOT_MAX_BYTES, fetch_document
from compliance_bake.verify.attestation import check_attestation
from compliance_bake.verify.verifier import KeyMaterial

URL_PREFIXES = ("http://", "https://")
_FIX_AUTH = (
    "pass the secret it was baked with (--secret-file, REPORT_SIGNING_SECRET or "
    "REPORT_SIGNING_SECRET_FILE), or add --unauthenticated to compare anyway"
)


@dataclass(frozen=True, slots=True)
class Authenticity:
    authentic: bool
    checked: str  # how, with which secret source; or why not


@dataclass(frozen=True, slots=True)
class Side:
    label: str  # OLD or NEW
    source: str
    snapshot: dict[str, Any]
    authenticity: Authenticity


# The key material `verify` takes (the HMAC secret, trusted Ed25519 public keys): its own type.
Keys = KeyMaterial


def _by_secret(
    snapshot: dict[str, Any], secret: Secret, keep: list[bytes] | None = None
) -> Authenticity:
    proof = snapshot["integrity"]["proof"]
    if proof["digest"] != typed_digest(snapshot, keep=keep):  # the same digest; see diff/digest.py
        return Authenticity(False, "integrity.proof.digest does not match the content (edited)")
    for where, block in (("integrity.proof", proof), ("shadow.proof", snapshot["shadow"]["proof"])):
        if not hmac_present(block) or not same_mac(
            block["hmac"], proofs.proof_hmac(block, secret.value)
        ):
            return Authenticity(
                False, f"{where}.hmac does not match (tampered, or baked with another secret)"
            )
    return Authenticity(True, f"HMAC-SHA3-256 with the report signing secret from {secret.source}")


def _by_attestation(folder: Path | None, public_keys: tuple[bytes, ...]) -> Authenticity:
    if folder is None:
        return Authenticity(
            False, "public key: a snapshot file has no attestation beside it (pass its out/ folder)"
        )
    result = check_attestation(folder, public_keys)
    if result.ok:
        return Authenticity(
            True, f"Ed25519 attestation {ATTESTATION_FILE}, public key {result.key_id}"
        )
    file, what = result.failures[0] if result.failures else ("", "no public key verified it")
    return Authenticity(False, f"public key: {file}: {what}")


def authenticate(
    snapshot: dict[str, Any], keys: Keys, folder: Path | None, keep: list[bytes] | None = None
) -> Authenticity:
    """Is this snapshot the one its baker signed? Authentic when the secret's HMACs hold or
    (for an out/ folder) its public attestation verifies with a trusted key. Fails closed.

    For a side the snapshot schema accepts: `check_side` validates first, and parallel.py
    discards this outcome when the side fails the schema (diff/digest.py relies on it)."""
    if keys.empty:
        return Authenticity(False, "not checked: no report signing secret or public key configured")
    reasons: list[str] = []
    if keys.secret is not None:
        found = _by_secret(snapshot, keys.secret, keep)
        if found.authentic:
            return found
        reasons.append(found.checked)
    if keys.public_keys:
        found = _by_attestation(folder, keys.public_keys)
        if found.authentic:
            return found
        reasons.append(found.checked)
    return Authenticity(False, "; ".join(reasons))


def _read(spec: str, label: str) -> tuple[str, bytes, Path | None]:
    """(source, bytes, the out/ folder or None). A URL is fetched as `verify` fetches one: the
    HTTP target's timeouts, size cap and no redirects; a failure is a TargetError (exit 3)."""
    if spec.startswith(URL_PREFIXES):
        try:
            return (
                spec,
                fetch_document(spec, timeout=DEFAULT_TIMEOUT, max_bytes=SNAPSHOT_MAX_BYTES),
                None,
            )
        except TargetError as error:
            raise TargetError(f"{label} {error.message}", error.hint) from None
    path, folder = Path(spec), None
    if path.is_dir():
        path, folder = path / layout.API_FILE, path
    try:
        raw = read_regular_file(path, max_bytes=SNAPSHOT_MAX_BYTES, what=f"{label} snapshot")
    except FileNotFoundError:
        raise InputError(
            f"{label} {path}: cannot read: no such file",
            "pass a baked out/ folder, a snapshot file (out/api/compliance.json) or an "
            "http(s):// URL of a published /api/compliance",
        ) from None
    return str(path), raw, folder


def parse_snapshot(raw: bytes, label: str, source: str) -> dict[str, Any]:
    """JSON in, an object out; the schema is `check_side`'s (it runs beside the rest). Parsed
    in pieces (the same value, a third of the peak: inputs/jsonpieces.py)."""
    try:
        snapshot = loads_in_pieces(raw)
    except orjson.JSONDecodeError as exc:
        raise InputError(
            f"{label} {source}: not JSON: {exc}", "pass a snapshot baked by compliance-bake"
        ) from None
    if not isinstance(snapshot, dict):
        raise InputError(
            f"{label} {source}: not a snapshot: the JSON is not an object",
            "pass a snapshot baked by compliance-bake (out/api/compliance.json)",
        )
    return snapshot


def validate_side(snapshot: dict[str, Any], side: SideSource) -> None:
    """InputError if the side is not a snapshot (by the snapshot schema)."""
    problem = schemas.first_violation(schemas.SNAPSHOT, snapshot)
    if problem is not None:
        raise InputError(
            f"{side.label} {side.source}: not a snapshot: {problem.path}: {problem.message}",
            "pass a snapshot baked by compliance-bake (out/api/compliance.json)",
        )


def schema_refusal(snapshot: dict[str, Any], side: SideSource) -> InputError | None:
    """`validate_side`'s refusal as a value (None: a snapshot), for a child to send back."""
    try:
        validate_side(snapshot, side)
    except InputError as error:
        return error
    return None


def check_side(snapshot: dict[str, Any], side: SideSource, keys: Keys) -> Authenticity:
    """Schema-validate (InputError if it is not a snapshot), then authenticate."""
    validate_side(snapshot, side)
    return authenticate(snapshot, keys, side.folder)


def refuse_unless(side: Side, allow_unauthenticated: bool) -> Side:
    """The side, or exit 2 if it is not authentic and the caller did not allow that."""
    if not side.authenticity.authentic and not allow_unauthenticated:
        raise InputError(
            f"{side.label} {side.source} is not authentic: {side.authenticity.checked}", _FIX_AUTH
        )
    return side


@dataclass(frozen=True, slots=True)
class SideSource:
    label: str  # OLD or NEW
    source: str  # the snapshot file read
    folder: Path | None  # the out/ folder, when the side is one
    size: int  # bytes


def read_raw(spec: str, label: str) -> tuple[SideSource, bytes]:
    """Read one side's bytes."""
    source, raw, folder = _read(spec, label)
    return SideSource(label, source, folder, len(raw)), raw


def read_side(spec: str, label: str) -> tuple[SideSource, dict[str, Any]]:
    """Read and parse one side."""
    source, raw, folder = _read(spec, label)
    return SideSource(label, source, folder, len(raw)), parse_snapshot(raw, label, source)


class SideReader:
    """One side read ahead: a local file's bytes are read in a thread (the reads release the
    GIL) while the other side is parsed; `side()` then parses them, or raises what reading
    raised. A URL is fetched only when `side()` is called (a fetch may take its whole timeout,
    and no thread is left behind when the other side is refused first). Call `close()` in any
    case: it waits for the read."""

    def __init__(self, spec: str, label: str) -> None:
        self.spec, self.label = spec, label
        self._read: tuple[str, bytes, Path | None] | BaseException | None = None
        self._thread: threading.Thread | None = None
        if not spec.startswith(URL_PREFIXES):
            self._thread = threading.Thread(target=self._run, name=f"diff-read-{label}")
            self._thread.start()

    def _run(self) -> None:
        try:
            self._read = _read(self.spec, self.label)
        except BaseException as error:  # noqa: BLE001 - raised again by side()
            self._read = error

    def close(self) -> None:
        if self._thread is not None:
            self._thread.join()

    def side(self) -> tuple[SideSource, dict[str, Any]]:
        if self._thread is None:
            return read_side(self.spec, self.label)
        self.close()
        found, self._read = self._read, None  # the bytes are freed once parsed
        if isinstance(found, BaseException):
            raise found
        assert found is not None
        source, raw, folder = found
        del found
        return SideSource(self.label, source, folder, len(raw)), parse_snapshot(
            raw, self.label, source
        )
