"""What `verify` found, and the two verdicts it draws from it.

A finding belongs to one of two verdicts:
- *authentic* (kinds FILE, DIGEST, HMAC, KEY): the bytes are the bytes that were signed, and a key
  says who signed them (HMAC with REPORT_SIGNING_SECRET, or an Ed25519 key id);
- *compliant* (kinds RULE, RECORDED): every rule of the specification that follows from the
  content holds, and every check the snapshot records holds.
"""

from __future__ import annotations

from dataclasses import dataclass, field

FILE, DIGEST, HMAC, KEY, RULE, RECORDED = "file", "digest", "hmac", "key", "rule", "recorded"
AUTHENTIC_KINDS = (FILE, DIGEST, HMAC, KEY)
COMPLIANT_KINDS = (RULE, RECORDED)


@dataclass(frozen=True, slots=True)
class Finding:
    file: str
    ok: bool
    what: str
    kind: str = FILE
    rule: str | None = None  # the rule id, for kind RULE


@dataclass(slots=True)
class VerifyReport:
    source: str  # the folder, file or URL, as given
    source_kind: str  # "folder", "file" or "url"
    hmac_checked: bool
    digests_only: bool = False
    allow_recorded_failures: bool = False
    signers: list[str] = field(default_factory=list)  # who signed it, and how
    applied: list[str] = field(default_factory=list)
    not_applied: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    @property
    def out_dir(self) -> str:
        return self.source

    def add(
        self, file: str, ok: bool, what: str, kind: str = FILE, rule: str | None = None
    ) -> bool:
        self.findings.append(Finding(file, ok, what, kind, rule))
        return ok

    @property
    def failures(self) -> list[Finding]:
        return [f for f in self.findings if not f.ok]

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
    def ok(self) -> bool:
        """Exit 0: authentic (or, with --digests-only, digests consistent) and compliant (or
        only recorded failures, when they are explicitly accepted)."""
        trusted = (
            self.digests_consistent and not self._failed(HMAC, KEY)
            if self.digests_only and not self.signers
            else self.authentic
        )
        accepted = self.compliant or (self.allow_recorded_failures and not self.rule_failures)
        return trusted and accepted

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
            if not self.signers:
                reason = "no key checked it"
            elif self._failed(HMAC, KEY):
                reason = "the signature does not check with the given key"
            else:
                reason = "the bytes differ from what was signed (digests or files)"
            authentic = f"authentic: NO, {reason}"
        if self.compliant:
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
