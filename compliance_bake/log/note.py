"""C2SP signed notes, checkpoints and cosignatures, with Ed25519.

A signed note is UTF-8 text ending in a newline, a blank line, then one line per signature:
`— <key name> <base64(4-byte key id || signature)>` (U+2014, then a space). An Ed25519 note
signature (algorithm byte 0x01) signs the text; its key id is
SHA-256(name || "\\n" || 0x01 || 32-byte public key)[:4]. A checkpoint (C2SP tlog-checkpoint) is
a note whose text is the origin line, the tree size in decimal, and the base64 root hash.

A cosignature (C2SP tlog-cosignature, `cosignature/v1`, algorithm byte 0x04) signs
"cosignature/v1\\ntime <T>\\n" followed by the checkpoint's text, and carries the 8-byte
big-endian timestamp T between its key id and its signature.

Key ids are hints: a verifier computes the id its own key would have under the line's name and
ignores every line that does not match, so unknown signatures (another witness's) are harmless.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
import struct
from dataclasses import dataclass

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

ALG_ED25519 = 0x01
ALG_COSIGNATURE_V1 = 0x04
DASH = "\u2014"
MAX_NOTE_BYTES = 1 << 16
_SIGNATURE_LINE = re.compile(f"{DASH} (\\S+) ([A-Za-z0-9+/=]+)")
_ORIGIN = re.compile(r"[\x21-\x7e]+")  # printable ASCII without spaces: a key name too
_SIZE = re.compile(r"0|[1-9][0-9]{0,19}")


class NoteError(ValueError):
    """The bytes are not a well-formed signed note or checkpoint."""


def raw_public(public: Ed25519PublicKey) -> bytes:
    return public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def key_id(name: str, alg: int, public: Ed25519PublicKey) -> bytes:
    return hashlib.sha256(name.encode() + b"\n" + bytes([alg]) + raw_public(public)).digest()[:4]


def valid_name(name: str) -> bool:
    return bool(_ORIGIN.fullmatch(name)) and "+" not in name


@dataclass(frozen=True, slots=True)
class Signature:
    name: str
    key_id: bytes
    data: bytes  # what follows the key id: the signature (and a cosignature's timestamp first)

    def line(self) -> str:
        return f"{DASH} {self.name} {base64.b64encode(self.key_id + self.data).decode()}\n"


@dataclass(frozen=True, slots=True)
class Note:
    text: str  # ends with a newline
    signatures: tuple[Signature, ...]

    def render(self) -> bytes:
        return (self.text + "\n" + "".join(s.line() for s in self.signatures)).encode()

    def with_signature(self, signature: Signature) -> Note:
        kept = tuple(s for s in self.signatures if s.line() != signature.line())
        return Note(self.text, (*kept, signature))


def parse_note(data: bytes) -> Note:
    if len(data) > MAX_NOTE_BYTES:
        raise NoteError(f"over {MAX_NOTE_BYTES} bytes")
    try:
        whole = data.decode("utf-8")
    except UnicodeDecodeError:
        raise NoteError("not UTF-8") from None
    if not whole.endswith("\n") or any(c < " " and c != "\n" for c in whole):
        raise NoteError("lines must end with a newline, and no other control character")
    text, sep, block = whole.rpartition("\n\n")
    if not sep or not text:
        raise NoteError("no blank line between the text and the signatures")
    signatures: list[Signature] = []
    for line in block[:-1].split("\n"):
        match = _SIGNATURE_LINE.fullmatch(line)
        if match is None:
            raise NoteError(f"not a signature line: {line[:60]!r}")
        try:
            raw = base64.b64decode(match.group(2), validate=True)
        except binascii.Error:
            raise NoteError(f"signature of {match.group(1)} is not base64") from None
        if len(raw) < 5:
            raise NoteError(f"signature of {match.group(1)} is too short")
        signatures.append(Signature(match.group(1), raw[:4], raw[4:]))
    return Note(text + "\n", tuple(signatures))


def sign_note(text: str, name: str, private: Ed25519PrivateKey) -> Signature:
    kid = key_id(name, ALG_ED25519, private.public_key())
    return Signature(name, kid, private.sign(text.encode()))


def verify_note(note: Note, name: str, public: Ed25519PublicKey) -> bool:
    """Some signature line of `name` verifies with `public` over the note's text."""
    kid = key_id(name, ALG_ED25519, public)
    for sig in note.signatures:
        if sig.name == name and sig.key_id == kid and len(sig.data) == 64:
            try:
                public.verify(sig.data, note.text.encode())
                return True
            except InvalidSignature:
                continue
    return False


@dataclass(frozen=True, slots=True)
class Checkpoint:
    origin: str
    size: int
    root: bytes

    def text(self) -> str:
        return f"{self.origin}\n{self.size}\n{base64.b64encode(self.root).decode()}\n"

    def describe(self) -> str:
        return f"checkpoint {self.origin} size {self.size} root {self.root.hex()[:16]}..."


def parse_checkpoint(text: str) -> Checkpoint:
    lines = text.split("\n")[:-1]
    if len(lines) < 3:
        raise NoteError("a checkpoint has an origin, a size and a root hash line")
    origin, size, root = lines[0], lines[1], lines[2]
    if not valid_name(origin):
        raise NoteError(f"origin {origin[:60]!r} is not printable ASCII without spaces")
    if not _SIZE.fullmatch(size):
        raise NoteError(f"tree size {size[:30]!r} is not a decimal without leading zeros")
    try:
        digest = base64.b64decode(root, validate=True)
    except binascii.Error:
        raise NoteError("root hash is not base64") from None
    if len(digest) != 32:
        raise NoteError(f"root hash is {len(digest)} bytes, not 32")
    return Checkpoint(origin, int(size), digest)


def cosigned_message(timestamp: int, text: str) -> bytes:
    return f"cosignature/v1\ntime {timestamp}\n".encode() + text.encode()


def cosign(text: str, name: str, private: Ed25519PrivateKey, timestamp: int) -> Signature:
    kid = key_id(name, ALG_COSIGNATURE_V1, private.public_key())
    signature = private.sign(cosigned_message(timestamp, text))
    return Signature(name, kid, struct.pack(">Q", timestamp) + signature)


def cosigners(note: Note, publics: list[Ed25519PublicKey]) -> set[bytes]:
    """The raw public keys among `publics` with a valid cosignature/v1 on the note."""
    found: set[bytes] = set()
    for sig in note.signatures:
        if len(sig.data) != 72:
            continue
        (timestamp,) = struct.unpack(">Q", sig.data[:8])
        for public in publics:
            if sig.key_id != key_id(sig.name, ALG_COSIGNATURE_V1, public):
                continue
            try:
                public.verify(sig.data[8:], cosigned_message(timestamp, note.text))
            except InvalidSignature:
                continue
            found.add(raw_public(public))
    return found
