"""`bake snapshot --previous OLD`: the previous snapshot read, authenticated and compared.

OLD is what a diff side may be (an out/ folder, a snapshot file, an http(s) URL of a published
/api/compliance), read by verify/source.py as `diff` reads a side, so both trust alike. One that
is not authentic is refused (exit 2) unless the caller allowed it (`--previous-unauthenticated`);
the record then says so, and so does the portal. The comparison is `diff`'s own (compare.py);
what the portal shows is the record built here (its shape: report/portal_previous.py), sealed
and signed by the bake.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from compliance_bake.diff.compare import compare
from compliance_bake.diff.model import ChangeClass
from compliance_bake.diff.sides import Keys, load_side
from compliance_bake.report.models import Snapshot
from compliance_bake.report.portal_previous import RECORD_LIMIT, PreviousRecord
from compliance_bake.signing.secret import Secret
from compliance_bake.targets.fetch import shown_url
from compliance_bake.targets.routes import DEFAULT_TIMEOUT
from compliance_bake.verify.source import Authenticity, refuse_unless_authentic

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
    timeout: float = DEFAULT_TIMEOUT
    source: str = ""
    snapshot: Snapshot | None = None
    authenticity: Authenticity = Authenticity(False, "not loaded")

    def load(self) -> None:
        self.source = shown_url(self.spec)
        keys = Keys(self.secret, tuple(self.public_keys))
        side = load_side(self.spec, LABEL, keys, self.timeout)
        self.snapshot, self.authenticity = side.snapshot, side.authenticity
        refuse_unless_authentic(
            LABEL, self.source, self.authenticity, self.allow_unauthenticated, _FIX
        )

    def record(self, snapshot: Snapshot) -> PreviousRecord:
        """The record of the comparison with `snapshot`, not sealed yet."""
        if self.snapshot is None:
            raise RuntimeError("PreviousSnapshot.record before load")
        changes = compare(self.snapshot, snapshot)
        counts = dict.fromkeys((c.value for c in ChangeClass), 0)
        decisions = []
        for change in changes:
            counts[change.cls.value] += 1
            if change.cls is ChangeClass.DECISION:
                decisions.append(change)
        decisions.sort(key=lambda c: (c.concerns["state"], c.concerns["partner"]))
        return PreviousRecord(
            source=self.source,
            generated_at=self.snapshot.generated_at,
            integrity_digest=self.snapshot.integrity.proof.digest,
            authenticated=self.authenticity.authentic,
            checked=self.authenticity.checked,
            snapshot=snapshot.integrity.proof.digest,
            counts=counts,
            decisions=tuple(c.as_json(with_class=False) for c in decisions[:RECORD_LIMIT]),
            decisions_total=len(decisions),
        )
