"""A side of the diff: where it comes from, its snapshot, and whether it is authentic.

A side is a baked `out/` folder (its `api/compliance.json`), a snapshot file, or (once
`targets/fetch.py` lands) an http(s) URL of a published `/api/compliance`.

`authenticate` is the one place a side's authenticity is decided. It recomputes
`integrity.proof.digest` over the whole snapshot (which binds every other field, the shadow
proof included) and checks `integrity.proof.hmac` and `shadow.proof.hmac` with the signing
secret, using the same signing functions as `verify`. It does not re-run verify's compliance
checks (board consistency, labels, the registry copies, the portal): those are what the diff
reports as changes, and running them costs about 11 s on a 500,000-row out/ folder. Without a
secret nothing is authentic: the diff refuses the side unless the caller asked for an
unauthenticated comparison.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from compliance_bake.errors import InputError
from compliance_bake.inputs import schemas
from compliance_bake.report import layout
from compliance_bake.signing import proofs
from compliance_bake.signing.canon import same_mac
from compliance_bake.signing.integrity import hmac_present
from compliance_bake.signing.secret import Secret

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


def authenticate(snapshot: dict[str, Any], secret: Secret | None) -> Authenticity:
    """Is this snapshot the one the holder of `secret` baked? Fails closed."""
    if secret is None:
        return Authenticity(False, "not checked: no report signing secret configured")
    proof = snapshot["integrity"]["proof"]
    if proof["digest"] != proofs.integrity_digest(snapshot):
        return Authenticity(False, "integrity.proof.digest does not match the content (edited)")
    for where, block in (("integrity.proof", proof), ("shadow.proof", snapshot["shadow"]["proof"])):
        if not hmac_present(block) or not same_mac(
            block["hmac"], proofs.proof_hmac(block, secret.value)
        ):
            return Authenticity(
                False, f"{where}.hmac does not match (tampered, or baked with another secret)"
            )
    return Authenticity(True, f"HMAC-SHA3-256 with the report signing secret from {secret.source}")


def _read(spec: str, label: str) -> tuple[str, bytes]:
    if spec.startswith(URL_PREFIXES):
        raise InputError(
            f"{label} {spec}: URL sides are not available in this build",
            "download the snapshot (its /api/compliance) and pass the file",
        )
    path = Path(spec)
    if path.is_dir():
        path = path / layout.API_FILE
    try:
        return str(path), path.read_bytes()
    except OSError as exc:
        raise InputError(
            f"{label} {path}: cannot read: {exc.strerror}",
            "pass a baked out/ folder or a snapshot file (out/api/compliance.json)",
        ) from None


def parse_snapshot(raw: bytes, label: str, source: str) -> dict[str, Any]:
    """JSON in, an object out; the schema is `check_side`'s (it runs beside the rest)."""
    try:
        snapshot = orjson.loads(raw)
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


def check_side(
    snapshot: dict[str, Any], label: str, source: str, secret: Secret | None
) -> Authenticity:
    """Schema-validate (InputError if it is not a snapshot), then authenticate."""
    problem = schemas.first_violation(schemas.SNAPSHOT, snapshot)
    if problem is not None:
        raise InputError(
            f"{label} {source}: not a snapshot: {problem.path}: {problem.message}",
            "pass a snapshot baked by compliance-bake (out/api/compliance.json)",
        )
    return authenticate(snapshot, secret)


def refuse_unless(side: Side, allow_unauthenticated: bool) -> Side:
    """The side, or exit 2 if it is not authentic and the caller did not allow that."""
    if not side.authenticity.authentic and not allow_unauthenticated:
        raise InputError(
            f"{side.label} {side.source} is not authentic: {side.authenticity.checked}", _FIX_AUTH
        )
    return side


def read_side(spec: str, label: str) -> tuple[str, dict[str, Any], int]:
    """Read and parse one side: (its source, its snapshot, its size in bytes)."""
    source, raw = _read(spec, label)
    return source, parse_snapshot(raw, label, source), len(raw)
