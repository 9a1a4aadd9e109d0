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

from compliance_bake.diff.compare import compare
from compliance_bake.diff.model import ChangeClass
from compliance_bake.diff.sides import Authenticity, Keys, check_side, read_side
from compliance_bake.errors import InputError
from compliance_bake.report.portal_previous import RECORD_LIMIT
from compliance_bake.signing.secret import Secret

LABEL = "--previous"
_FIX = (
    "bake with the secret the previous snapshot was baked with, or pass --previous-public-key "
    "PEM for an out/ folder's attestation, or add --previous-unauthenticated (the portal then "
    "says it was not authenticated)"
)


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
        side, self.snapshot = read_side(self.spec, LABEL)  # InputError: 2; TargetError: 3
        self.authenticity = check_side(self.snapshot, side, keys)
        self.source = self.spec
        if not self.authenticity.authentic and not self.allow_unauthenticated:
            raise InputError(
                f"{LABEL} {self.spec} is not authentic: {self.authenticity.checked}", _FIX
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
