"""A side of the diff: where it comes from, its snapshot, and whether it is authentic.

A side is what `verify` reads (an `out/` folder, a snapshot file, an http(s) URL of a published
`/api/compliance`), read by verify/source.py as `verify` reads it: the same fetch rules, the
same strict parse, schema and authentication. A side that is not a snapshot is refused (exit 2);
so is one that is not authentic unless the caller asked for an unauthenticated comparison. The diff
does not re-run verify's compliance checks (board consistency, labels, registry copies, the
portal): those are what it reports as changes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compliance_bake.errors import BakeError
from compliance_bake.report.models import Snapshot
from compliance_bake.targets.routes import DEFAULT_TIMEOUT
from compliance_bake.verify.source import (
    Authenticity,
    KeyMaterial,
    read_snapshot,
    refuse_unless_authentic,
)

FIX_AUTH = (
    "pass the secret it was baked with (--secret-file, REPORT_SIGNING_SECRET or "
    "REPORT_SIGNING_SECRET_FILE), or add --unauthenticated to compare anyway"
)
Keys = KeyMaterial


@dataclass(frozen=True, slots=True)
class Side:
    label: str  # OLD or NEW
    source: str  # the snapshot file read, or the URL as shown
    snapshot: Snapshot
    authenticity: Authenticity
    policy: dict[str, Any] | None = None  # the folder's policy file, when it holds


def load_side(spec: str, label: str, keys: Keys, timeout: float = DEFAULT_TIMEOUT) -> Side:
    """The side read as `verify` reads a snapshot; InputError (exit 2) if it is not a snapshot,
    TargetError (exit 3) if its URL cannot be fetched within `timeout`, each naming `label`."""
    try:
        reading = read_snapshot(spec, keys, timeout=timeout)
    except BakeError as error:  # InputError: exit 2; TargetError: exit 3
        raise type(error)(f"{label} {error.message}", error.hint) from None
    snapshot = reading.snapshot(label)
    return Side(label, reading.path, snapshot, reading.authenticity, _policy(spec, keys))


def _policy(spec: str, keys: Keys) -> dict[str, Any] | None:
    """A folder side's policy file (verify/policy_file.trusted_policy), else None."""
    from compliance_bake.verify.policy_file import trusted_policy

    folder = Path(spec)
    if "://" in spec or not folder.is_dir():
        return None
    return trusted_policy(folder, keys.secret)


def refuse_unless(side: Side, allow_unauthenticated: bool) -> Side:
    """The side, or exit 2 if it is not authentic and the caller did not allow that."""
    refuse_unless_authentic(
        side.label, side.source, side.authenticity, allow_unauthenticated, FIX_AUTH
    )
    return side
