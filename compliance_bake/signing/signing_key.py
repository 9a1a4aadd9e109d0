"""The Ed25519 key pair of the public attestation: minting, finding, loading, key ids.

The private key is a PKCS#8 PEM file that only its owner may read (mode 0600, like the report
signing secret); the public key is a SubjectPublicKeyInfo PEM file beside it, the private path's
`.pem` replaced by `.pub.pem`. A key id is the lowercase hex SHA-256 of the public key's DER
(`openssl pkey -pubin -in KEY.pub.pem -outform DER | sha256sum`).

Order for a bake: `--signing-key PATH`, the file named by COMPLIANCE_SIGNING_KEY_FILE, then the
local file that `signing-key mint` creates when it exists; none of them: no attestation.
Messages name files, never key material.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from compliance_bake.errors import InputError
from compliance_bake.inputs.atomic_write import write_whole
from compliance_bake.inputs.files import CREDENTIAL_MAX_BYTES, read_regular_file
from compliance_bake.inputs.private_file import (
    configured_file,
    read_private_text,
    write_private_bytes,
)

ENV_FILE = "COMPLIANCE_SIGNING_KEY_FILE"
ENV_PUBLIC_FILE = "COMPLIANCE_PUBLIC_KEY_FILE"
LOCAL_FILE = Path(".compliance-bake") / "signing-key.pem"
_FIX_MISSING = f"run `compliance-bake signing-key mint`, or set {ENV_FILE} to the key file"
_FIX_NOT_A_KEY = "point it at the private key `compliance-bake signing-key mint` wrote"
_FIX_PUBLIC = "point it at the .pub.pem file `signing-key mint` wrote"


class SigningKeyError(InputError):
    """The attestation key is missing, unreadable, exposed or not an Ed25519 key."""


@dataclass(frozen=True, slots=True)
class SigningKey:
    private: Ed25519PrivateKey = field(repr=False)
    source: str  # where it came from, safe to print

    @property
    def key_id(self) -> str:
        return key_id(self.private.public_key())

    def sign(self, message: bytes) -> bytes:
        return self.private.sign(message)

    def __str__(self) -> str:
        return f"<Ed25519 signing key {self.key_id} from {self.source}>"


def key_id(public: Ed25519PublicKey) -> str:
    """Lowercase hex SHA-256 of the public key's SubjectPublicKeyInfo DER."""
    der = public.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return hashlib.sha256(der).hexdigest()


def public_key_path(private_path: Path) -> Path:
    """`signing-key.pem` -> `signing-key.pub.pem`; a name without `.pem` gets `.pub.pem` added."""
    name = private_path.name
    stem = name[: -len(".pem")] if name.endswith(".pem") else name
    return private_path.with_name(f"{stem}.pub.pem")


def parse_public_key(pem: bytes) -> Ed25519PublicKey:
    """An Ed25519 public key from SubjectPublicKeyInfo PEM; ValueError when it is not one."""
    try:
        public = serialization.load_pem_public_key(pem)
    except (ValueError, TypeError, UnsupportedAlgorithm):
        raise ValueError("not a PEM public key (SubjectPublicKeyInfo)") from None
    if not isinstance(public, Ed25519PublicKey):
        raise ValueError(f"a {type(public).__name__.removeprefix('_')} key, not Ed25519")
    return public


def read_public_key(path: Path, source: str) -> bytes:
    """The PEM bytes of an Ed25519 public key file, checked; SigningKeyError naming the file."""
    try:
        # A regular file or refused: a FIFO or a device never blocks the reader (inputs/files.py).
        pem = read_regular_file(
            path,
            max_bytes=CREDENTIAL_MAX_BYTES,
            what="public key",
            error=SigningKeyError,
            missing=SigningKeyError(
                f"cannot read public key {path} (No such file or directory)", _FIX_PUBLIC
            ),
        )
    except SigningKeyError as exc:
        raise SigningKeyError(f"{source}: {exc.message}", exc.hint) from None
    try:
        parse_public_key(pem)
    except ValueError as exc:
        raise SigningKeyError(f"{source}: {path} is {exc}", _FIX_PUBLIC) from None
    return pem


def public_keys_from(
    paths: Sequence[Path], environ: Mapping[str, str] | None = None, cwd: Path | None = None
) -> list[bytes]:
    """The trusted public keys: each `--public-key PEM`, else the file(s) named by
    COMPLIANCE_PUBLIC_KEY_FILE (several separated by `os.pathsep`, for rotation), else none."""
    if paths:
        return [read_public_key(path, "--public-key") for path in paths]
    env = os.environ if environ is None else environ
    here = cwd or Path.cwd()
    named = [part for part in env.get(ENV_PUBLIC_FILE, "").split(os.pathsep) if part]
    return [read_public_key(here / part, f"${ENV_PUBLIC_FILE}") for part in named]


def load_signing_key(path: Path, source: str) -> SigningKey:
    text = read_private_text(path, source, "signing key file", SigningKeyError, _FIX_MISSING)
    try:
        private = serialization.load_pem_private_key(text.encode("utf-8"), password=None)
    except TypeError:  # encrypted: cryptography wants a password we do not take
        raise SigningKeyError(
            f"{source}: signing key {path} is encrypted",
            "mint an unencrypted key with `compliance-bake signing-key mint` and keep it mode 0600",
        ) from None
    except (ValueError, UnsupportedAlgorithm):
        raise SigningKeyError(
            f"{source}: {path} is not a PEM private key", _FIX_NOT_A_KEY
        ) from None
    if not isinstance(private, Ed25519PrivateKey):
        kind = type(private).__name__.removeprefix("_")
        raise SigningKeyError(f"{source}: {path} is a {kind}, not an Ed25519 key", _FIX_NOT_A_KEY)
    return SigningKey(private, f"{source} ({path})")


def resolve_signing_key(
    key_file: Path | None, environ: Mapping[str, str] | None = None, cwd: Path | None = None
) -> SigningKey | None:
    """The attestation key by the documented order; None when none is configured."""
    env = os.environ if environ is None else environ
    local = (LOCAL_FILE, "the local signing key")
    found = configured_file(key_file, "--signing-key", env, ENV_FILE, local, cwd)
    return None if found is None else load_signing_key(*found)


def mint_signing_key(path: Path, *, force: bool = False) -> tuple[Path, str]:
    """Write a fresh key pair (private 0600, public 0644 beside it); (public path, key id).

    Refuses to replace an existing private or public key file unless forced.
    """
    public_path = public_key_path(path)
    if not force:
        for existing in (path, public_path):
            if existing.exists() or existing.is_symlink():
                raise SigningKeyError(
                    f"{existing} already exists",
                    "pass --force to replace the key pair (snapshots it signed then verify "
                    "only with the old public key), or choose another --key-file",
                )
    private = Ed25519PrivateKey.generate()
    pem = private.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    public = private.public_key()
    try:
        write_private_bytes(path, pem)
        write_whole(
            public_path,
            public.public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            ),
        )
    except OSError as exc:
        raise SigningKeyError(
            f"cannot write {exc.filename or path}: {exc.strerror}",
            "choose a --key-file in a writable folder",
        ) from None
    return public_path, key_id(public)
