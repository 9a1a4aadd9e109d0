"""The record a portal's "since the previous snapshot" section is rendered from, for `verify`.

A bake with `--previous` puts that record in the signed attestation's predicate (`previous`;
report/portal_previous.py documents its fields), and the portal page shows it. `verify`
re-renders the page from the snapshot and this record and compares bytes (files.portal_page),
so the section must come from a record that a key vouches for:

- with trusted public keys, the attestation's Ed25519 signature covers the predicate, record
  included (verify/attestation.py: its finding fails when the signature or a file does not hold);
- with the report signing secret, the record's own `hmac` must hold;
- the record must name this snapshot (`snapshot` = its `integrity.proof.digest`);
- with no key at all (`--digests-only`), the record is used to render the page but said to be
  unauthenticated, as everything else is in that mode.

No record (no attestation, or a predicate without `previous`): the page must be the plain
rendering, so a section added to the page by hand fails. A record that cannot be read fails.
"""

from __future__ import annotations

import base64
import binascii
from pathlib import Path
from typing import Any

from compliance_bake.inputs.jsonio import StrictJSONError, loads_strict
from compliance_bake.report.portal_previous import record_hmac_holds
from compliance_bake.signing.attestation import ATTESTATION_FILE
from compliance_bake.signing.secret import Secret
from compliance_bake.verify.attestation import MAX_ENVELOPE_BYTES
from compliance_bake.verify.findings import HMAC, KEY, VerifyReport

WHERE = "attestation predicate.previous"


class _Unreadable(Exception):
    pass


def _predicate(out_dir: Path) -> Any:
    """The attestation's predicate, None without an attestation; _Unreadable when malformed."""
    path = out_dir / ATTESTATION_FILE
    if path.is_symlink() or not path.is_file():
        return None
    try:
        if path.stat().st_size > MAX_ENVELOPE_BYTES:
            raise _Unreadable("too large")
        envelope = loads_strict(path.read_bytes())
        statement = loads_strict(base64.b64decode(envelope["payload"], validate=True))
        return statement["predicate"]
    except (OSError, StrictJSONError, binascii.Error, KeyError, TypeError, ValueError) as exc:
        raise _Unreadable(type(exc).__name__) from None


def previous_record(
    out_dir: Path,
    snap: dict[str, Any],
    secret: Secret | None,
    attested: bool | None,
    report: VerifyReport,
) -> dict[str, Any] | None:
    """The record to render the portal with (None: the plain page), after findings that say
    whether a key vouches for it. `attested`: None when no public key was given, else whether
    the attestation verified with one."""
    try:
        predicate = _predicate(out_dir)
    except _Unreadable as exc:
        report.add(ATTESTATION_FILE, False, f"{WHERE}: cannot read the attestation ({exc})")
        return None
    if not isinstance(predicate, dict) or "previous" not in predicate:
        return None
    record = predicate["previous"]
    if not isinstance(record, dict):
        report.add(ATTESTATION_FILE, False, f"{WHERE}: not an object")
        return None
    try:
        own = snap["integrity"]["proof"]["digest"]
    except (KeyError, TypeError):
        own = None
    report.add(
        ATTESTATION_FILE,
        record.get("snapshot") == own,
        f"{WHERE} names this snapshot"
        if record.get("snapshot") == own
        else f"{WHERE} names another snapshot (copied from another bake)",
        KEY,
    )
    if secret is not None:
        try:
            ok = record_hmac_holds(record, secret.value)
        except (TypeError, ValueError, RecursionError):  # not canonicalisable: not what was sealed
            ok = False
        what = "hmac" + ("" if ok else " does not match (tampered, or another secret)")
        report.add(ATTESTATION_FILE, ok, f"{WHERE}.{what}", HMAC)
    if attested is not None:
        what = "signed by the attestation" if attested else "the attestation does not verify"
        report.add(ATTESTATION_FILE, attested, f"{WHERE}: {what}", KEY)
    if secret is None and attested is None:
        report.notes.append(
            f"the portal's previous-snapshot section comes from {WHERE}, "
            "NOT authenticated (no key given)"
        )
    return record
