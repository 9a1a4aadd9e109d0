"""`bake snapshot --previous OLD`: the previous snapshot read, authenticated and compared.

OLD is what a diff side may be (an out/ folder, a snapshot file, an http(s) URL of a published
/api/compliance), read and authenticated exactly as `diff` reads and authenticates a side
(sides.py: the same key material, the same fetch rules). One that is not authentic is refused
(exit 2) unless the caller allowed it (`--previous-unauthenticated`); the record then says so,
and so does the portal. The comparison is `diff`'s own (compare.py); what the portal shows is
the record built here (its shape: report/portal_previous.py), sealed and signed by the bake.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from compliance_bake.diff.compare import compare
from compliance_bake.diff.model import ChangeClass
from compliance_bake.diff.sides import URL_PREFIXES, Authenticity, Keys, check_side, read_side
from compliance_bake.errors import BakeError, InputError
from compliance_bake.report.portal_previous import RECORD_LIMIT
from compliance_bake.signing.secret import Secret

LABEL = "--previous"
_FIX = (
    "bake with the secret the previous snapshot was baked with, or pass --previous-public-key "
    "PEM for an out/ folder's attestation, or add --previous-unauthenticated (the portal then "
    "says it was not authenticated)"
)


def shown_source(spec: str) -> str:
    """OLD as the record and the portal show it: a URL without its user name, password, query
    or fragment (any of them may carry a credential); a path as given."""
    if not spec.startswith(URL_PREFIXES):
        return spec
    parts = urlsplit(spec)
    try:
        port = parts.port
    except ValueError:
        port = None
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    netloc = host if port is None else f"{host}:{port}"
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


@dataclass(slots=True)
class PreviousSnapshot:
    """The previous snapshot of `bake --previous`: `load` it (before the bake writes
    anything), then `record` its comparison with the new snapshot."""

    spec: str
    secret: Secret | None = None
    public_keys: Sequence[bytes] = ()
    allow_unauthenticated: bool = False
    source: str = ""
    snapshot: dict[str, Any] = field(default_factory=dict)
    authenticity: Authenticity = Authenticity(False, "not loaded")

    def load(self) -> None:
        keys = Keys(self.secret, tuple(self.public_keys))
        self.source = shown_source(self.spec)
        try:
            side, self.snapshot = read_side(self.spec, LABEL)  # InputError: 2; TargetError: 3
        except BakeError as error:  # said with OLD as shown: no credential of its URL
            raise type(error)(error.message.replace(self.spec, self.source), error.hint) from None
        self.authenticity = check_side(self.snapshot, side, keys)
        if not self.authenticity.authentic and not self.allow_unauthenticated:
            raise InputError(
                f"{LABEL} {self.source} is not authentic: {self.authenticity.checked}", _FIX
            )

    def record(self, snapshot: dict[str, Any]) -> dict[str, Any]:
        if not self.snapshot:
            raise RuntimeError("PreviousSnapshot.record before load")
        changes = compare(self.snapshot, snapshot)
        counts = dict.fromkeys((c.value for c in ChangeClass), 0)
        decisions = []
        for change in changes:
            counts[change.cls.value] += 1
            if change.cls is ChangeClass.DECISION:
                decisions.append(change)
        decisions.sort(key=lambda c: (c.concerns["state"], c.concerns["partner"]))
        return {
            "source": self.source,
            "generatedAt": self.snapshot["generatedAt"],
            "integrityDigest": self.snapshot["integrity"]["proof"]["digest"],
            "authenticated": self.authenticity.authentic,
            "checked": self.authenticity.checked,
            "snapshot": snapshot["integrity"]["proof"]["digest"],
            "counts": counts,
            "decisions": [
                {k: v for k, v in c.as_json().items() if k != "class"}
                for c in decisions[:RECORD_LIMIT]
            ],
            "decisionsTotal": len(decisions),
        }
