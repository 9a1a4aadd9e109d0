"""What `verify` found, and the two verdicts it draws from it.

The findings are compliance_bake/findings.py's, the shape every command reports, made where
each check runs (the files, the rules, the attestation, the previous-snapshot record, the log's
proof). A finding belongs to one of two verdicts:
- *authentic* (kinds FILE, DIGEST, HMAC, KEY, EXTRA): the bytes are the bytes that were signed,
  out/ holds nothing else, and a key says who signed them (HMAC with REPORT_SIGNING_SECRET, or an
  Ed25519 key id);
- *compliant* (kinds RULE, RECORDED): every rule of the specification that follows from the
  content holds, and every check the snapshot records holds.

Besides the verdicts, what is present and was not checked (an attestation without a public key)
is named, so that no pass, and never the word "verified", covers it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from compliance_bake.findings import (
    DIGEST,
    EXTRA,
    FILE,
    HMAC,
    KEY,
    RECORDED,
    RULE,
    Finding,
    Findings,
)
from compliance_bake.report.models import JsonObject

CHECKED, UNCHECKED = "checked", "present, not checked"
UNCHECKED_LINE = "attestation: present, not checked: give --public-key"
AUTHENTIC_KINDS = (FILE, DIGEST, HMAC, KEY, EXTRA)
EXTRAS_NAMED = 3  # unexpected files the authentic line names; the failures name every one
COMPLIANT_KINDS = (RULE, RECORDED)
QUOTED = 120  # characters of a value a finding quotes (escape.json_line), so it stays one line


@dataclass(slots=True)
class VerifyReport(Findings):
    source: str  # the folder, file or URL, as given
    source_kind: str  # "folder", "file" or "url"
    hmac_checked: bool
    digests_only: bool = False
    allow_recorded_failures: bool = False
    signers: list[str] = field(default_factory=list)  # who signed it, and how
    applied: list[str] = field(default_factory=list)
    not_applied: list[str] = field(default_factory=list)
    # the folder's Ed25519 attestation: UNCHECKED when present and parsed but no --public-key
    # was given, CHECKED when a key checked it, "" when there is none (or not a folder)
    attestation: str = ""
    # `compliant with 1 waiver (until DATE)` when the snapshot's waivers waive failing items
    # (verify/waivers.py re-derives them); None without
    waived: str | None = None

    @property
    def out_dir(self) -> str:
        return self.source

    def _failed(self, *kinds: str) -> list[Finding]:
        return [f for f in self.failures if f.kind in kinds]

    @property
    def digests_consistent(self) -> bool:
        return not self._failed(FILE, DIGEST)

    @property
    def authentic(self) -> bool:
        """The bytes are as signed and at least one key checked the signature."""
        return bool(self.signers) and not self._failed(*AUTHENTIC_KINDS)

    @property
    def recorded_failures(self) -> list[Finding]:
        return self._failed(RECORDED)

    @property
    def rule_failures(self) -> list[Finding]:
        return self._failed(RULE)

    @property
    def compliant(self) -> bool:
        return not self._failed(*COMPLIANT_KINDS)

    @property
    def trusted(self) -> bool:
        """Authentic (or, with --digests-only and no key, digests consistent)."""
        if self.digests_only and not self.signers:
            return self.digests_consistent and not self._failed(HMAC, KEY, EXTRA)
        return self.authentic

    @property
    def accepted(self) -> bool:
        """Compliant, or only recorded failures when they are explicitly accepted."""
        return self.compliant or (self.allow_recorded_failures and not self.rule_failures)

    @property
    def ok(self) -> bool:
        """Exit 0: trusted and accepted."""
        return self.trusted and self.accepted

    @property
    def unchecked(self) -> list[str]:
        """What is there and was not checked, one line each: a verifier names it rather than
        let a pass cover it."""
        return [UNCHECKED_LINE] if self.attestation == UNCHECKED else []

    def verdicts(self) -> dict[str, str]:
        """One line each for `authentic` and `compliant`, the words the CLI prints."""
        if self.signers and self.authentic:
            authentic = "authentic: yes, " + "; ".join(self.signers)
        elif not self.signers and self.digests_only:
            authentic = (
                "authentic: digests consistent, NOT authenticated (--digests-only: no key given)"
                if self.digests_consistent
                else "authentic: NO, digests inconsistent (and NOT authenticated: no key given)"
            )
        else:
            authentic = f"authentic: NO, {self._not_authentic()}"
        if self.compliant and self.waived is not None:
            compliant = (
                f"{self.waived}: every rule holds, and every recorded check but the items the "
                "recorded waivers waive (notes: waived)"
            )
        elif self.compliant:
            compliant = "compliant: yes, every recorded check and every rule holds"
        else:
            parts = []
            if self.rule_failures:
                parts.append(f"{len(self.rule_failures)} rule(s) broken")
            if self.recorded_failures:
                accepted = " (accepted: --allow-recorded-failures)"
                parts.append(
                    f"{len(self.recorded_failures)} recorded check(s) failed"
                    + (accepted if self.allow_recorded_failures else "")
                )
            compliant = "compliant: NO, " + ", ".join(parts)
        return {"authentic": authentic, "compliant": compliant}

    def _not_authentic(self) -> str:
        """Why not, naming what is actually wrong: a key that checked nothing, a signature, an
        HMAC under the secret given, bytes that differ, or only files out/ should not hold
        (then the signed bytes are intact, and the line says so)."""
        extra = sorted({f.file for f in self._failed(EXTRA)})
        named = ", ".join(extra[:EXTRAS_NAMED]) + (", ..." if len(extra) > EXTRAS_NAMED else "")
        files = "file" if len(extra) == 1 else "files"
        unexpected = f"out/ holds {len(extra)} {files} the tool does not write ({named})"
        if not self.signers:
            reason = "no key checked it"
        elif self._failed(KEY):
            reason = "a signature does not check (the failures below say which)"
        elif self._failed(HMAC) and self.digests_consistent and self.hmac_checked:
            reason = (
                "an HMAC does not check with the report signing secret given (another secret "
                "signed it, or a proof was altered: the failures below say which)"
            )
        elif self._failed(FILE, DIGEST, HMAC):
            reason = "the bytes differ from what was signed (digests or files)"
        else:
            return f"{unexpected}; the signed bytes are intact"
        return f"{reason}; and {unexpected}" if extra else reason

    def summary(self) -> JsonObject:
        """What `verify --json` prints and the JSON report's details, built in the core as the
        bake's and the audit's summaries are."""
        verdicts = self.verdicts()
        return {
            "ok": self.ok,
            "source": self.source,
            "sourceKind": self.source_kind,
            "out": self.source,
            "authentic": {
                "ok": self.authentic,
                "digestsConsistent": self.digests_consistent,
                "signers": self.signers,
                "verdict": verdicts["authentic"],
            },
            "compliant": {
                "ok": self.compliant,
                "ruleFailures": [f.rule for f in self.rule_failures],
                "recordedFailures": [f.what for f in self.recorded_failures],
                "recordedFailuresAccepted": self.allow_recorded_failures,
                "verdict": verdicts["compliant"],
                **({} if self.waived is None else {"waived": self.waived}),
            },
            "attestation": {
                "present": bool(self.attestation),
                "checked": self.attestation == "checked",
                "verdict": self.unchecked[0] if self.unchecked else None,
            },
            "notChecked": self.unchecked,
            "hmacChecked": self.hmac_checked,
            "digestsOnly": self.digests_only,
            "applied": self.applied,
            "notApplied": self.not_applied,
            "notes": self.notes,
            "failures": [
                {"file": f.file, "kind": f.kind, "rule": f.rule, "what": f.what}
                for f in self.failures
            ],
            "checks": len(self.findings),
        }
