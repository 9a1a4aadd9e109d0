"""Signed notes, checkpoints and cosignatures (C2SP signed-note, tlog-checkpoint,
tlog-cosignature): key ids by the texts' formulas, the cosignature example of the C2SP text,
and what a verifier must refuse."""

from __future__ import annotations

import base64
import hashlib
import struct

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from compliance_bake.log import note

ORIGIN = "example.com/behind-the-sofa"
# The C2SP tlog-cosignature text's example: a checkpoint with the log's signature and one
# cosignature by witness.example.com/w1 (signed at time 1679315147, its signed-message example).
SPEC_COSIGNED = (
    "example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n\n"
    "\u2014 example.com/behind-the-sofa Az3grlgtzPICa5OS8npVmf1Myq/5IZniMp+ZJurmRDeOoRDe4URYN7u5"
    "/Zhcyv2q1gGzGku9nTo+zyWE+xeMcTOAYQ8=\n"
    "\u2014 witness.example.com/w1 jWbPPwAAAABkGFDLEZMHwSRaJNiIDoe9DYn/zXcrtPHeolMI5OWXEhZCB9dlrDJs"
    "X3b2oyin1nPZqhf5nNo0xUe+mbIUBkBIfZ+qnA==\n"
)


def test_the_c2sp_cosigned_checkpoint_example_parses() -> None:
    signed = note.parse_note(SPEC_COSIGNED.encode())
    checkpoint = note.parse_checkpoint(signed.text)
    assert checkpoint.origin == ORIGIN and checkpoint.size == 20852163
    assert checkpoint.root == base64.b64decode("CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=")
    log_sig, cosig = signed.signatures
    assert log_sig.name == ORIGIN and len(log_sig.data) == 64
    assert cosig.name == "witness.example.com/w1" and len(cosig.data) == 72
    assert struct.unpack(">Q", cosig.data[:8]) == (1679315147,)
    assert signed.render() == SPEC_COSIGNED.encode()


def test_key_ids_follow_the_signed_note_and_cosignature_formulas() -> None:
    key = Ed25519PrivateKey.generate()
    raw = key.public_key().public_bytes_raw()
    assert (
        note.key_id(ORIGIN, 0x01, key.public_key())
        == hashlib.sha256(ORIGIN.encode() + b"\n\x01" + raw).digest()[:4]
    )
    assert note.key_id("w", 0x04, key.public_key()) == hashlib.sha256(b"w\n\x04" + raw).digest()[:4]


def test_a_checkpoint_signs_its_text_and_nothing_else_verifies() -> None:
    key, other = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    text = note.Checkpoint(ORIGIN, 5, bytes(32)).text()
    assert text == f"{ORIGIN}\n5\n{base64.b64encode(bytes(32)).decode()}\n"
    signed = note.Note(text, (note.sign_note(text, ORIGIN, key),))
    again = note.parse_note(signed.render())
    assert note.verify_note(again, ORIGIN, key.public_key())
    key.public_key().verify(again.signatures[0].data, text.encode())  # Ed25519 over the text
    assert not note.verify_note(again, ORIGIN, other.public_key())
    assert not note.verify_note(again, "another.example/log", key.public_key())
    forged = note.Note(text.replace("\n5\n", "\n6\n"), again.signatures)
    assert not note.verify_note(forged, ORIGIN, key.public_key())


def test_a_cosignature_signs_the_versioned_message_with_its_time() -> None:
    log_key, witness = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    text = note.Checkpoint(ORIGIN, 7, bytes(range(32))).text()
    signed = note.Note(text, (note.sign_note(text, ORIGIN, log_key),))
    cosig = note.cosign(text, "witness.example/w1", witness, 1679315147)
    cosigned = note.parse_note(signed.with_signature(cosig).render())
    assert note.cosigners(cosigned, [witness.public_key()]) == {
        witness.public_key().public_bytes_raw()
    }
    message = b"cosignature/v1\ntime 1679315147\n" + text.encode()
    witness.public_key().verify(cosig.data[8:], message)
    assert note.cosigners(cosigned, [log_key.public_key()]) == set()
    assert note.verify_note(cosigned, ORIGIN, log_key.public_key())  # the log's still holds
    later = note.Signature(cosig.name, cosig.key_id, struct.pack(">Q", 1679315148) + cosig.data[8:])
    assert note.cosigners(signed.with_signature(later), [witness.public_key()]) == set()


@pytest.mark.parametrize(
    "data",
    [
        b"example.com/log\n1\nAAAA\n",  # no signature block
        b"example.com/log\n1\n" + base64.b64encode(bytes(32)) + b"\n\nnot a signature\n",
        b"example.com/log\r\n1\n\n\xe2\x80\x94 a AAAAAAA=\n",
        b"\xff\xfe\n\n\xe2\x80\x94 a AAAAAAA=\n",
        b"text\n\n\xe2\x80\x94 a AAA=\n",  # shorter than a key id and one byte
    ],
)
def test_malformed_notes_are_refused(data: bytes) -> None:
    with pytest.raises(note.NoteError):
        note.parse_note(data)


@pytest.mark.parametrize(
    "text",
    [
        "example.com/log\n01\n" + base64.b64encode(bytes(32)).decode() + "\n",
        "example.com/log\n1\n" + base64.b64encode(bytes(31)).decode() + "\n",
        "has space\n1\n" + base64.b64encode(bytes(32)).decode() + "\n",
        "example.com/log\n1\n",
    ],
)
def test_malformed_checkpoints_are_refused(text: str) -> None:
    with pytest.raises(note.NoteError):
        note.parse_checkpoint(text)
