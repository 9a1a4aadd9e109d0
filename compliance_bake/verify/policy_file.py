"""`registry/compliance-policy.json` checked offline: read, schema, byte layout, its digest and
HMAC, and every question re-decided from the registry rows the file holds.

The re-decision is the bake's own function (`policy.decide.decide`) over the rows rebuilt by
the row reader of every source (`policy.recorded.registry_from_json`), at the record's
`generatedAt`: a file whose `expected` does not follow from its rows fails (*compliant*: no), as
does a question's recorded disagreement list that is not what its answers make. Each failing
disagreement the file records (a rule not enforced, blocked within the policy, real and shadow
differ) is a recorded failure named by its rule, as the bake named it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from compliance_bake.findings import DIGEST, FAIL, HMAC, RECORDED, RULE, Refusal
from compliance_bake.inputs import schemas
from compliance_bake.inputs.jsonio import dumps_pretty
from compliance_bake.policy.decide import decide
from compliance_bake.policy.model import PolicyValueError, Prediction
from compliance_bake.policy.recorded import (
    prediction_from_json,
    prediction_json,
    question_from_json,
    registry_from_json,
)
from compliance_bake.report import layout
from compliance_bake.report.policy import KINDS, SEVERITY, classify, question_words
from compliance_bake.signing import proofs
from compliance_bake.signing.integrity import proof_hmac_holds
from compliance_bake.signing.secret import Secret
from compliance_bake.verify.document import parse_snapshot_bytes
from compliance_bake.verify.files import layout_finding, read_folder_file, schema_finding
from compliance_bake.verify.findings import VerifyReport
from compliance_bake.verify.source import schema_outcome

NAME = layout.POLICY_FILE
# Failing questions named one by one in the findings; the rest are counted.
_NAMED = 10


def check_policy_file(
    out_dir: Path,
    secret: Secret | None,
    report: VerifyReport,
    waived: Callable[[dict[str, Any]], frozenset[int]] | None = None,
) -> tuple[bytes, dict[str, Any] | None]:
    """Every check of the policy file; its bytes (b"" when unreadable), for the attestation,
    and its document when it meets its schema (what the portal page is rendered with).
    `waived`: the questions the snapshot's waivers waive, of the record (verify/waivers.py):
    their failing kinds are not recorded failures."""
    raw = read_folder_file(out_dir, NAME, report)
    if raw is None:
        return b"", None
    parsed = parse_snapshot_bytes(raw)
    if isinstance(parsed, Refusal):
        report.add(NAME, False, parsed.message)
        return raw, None
    doc: Any = parsed[0]
    layout_finding(NAME, dumps_pretty(doc) == raw, report)
    if not schema_finding(NAME, schema_outcome(schemas.POLICY, doc), report):
        return raw, None
    _proof(doc, secret, report)
    _redecide(doc, report, frozenset() if waived is None else waived(doc))
    return raw, doc


def trusted_policy(out_dir: Path, secret: Secret | None) -> dict[str, Any] | None:
    """The folder's policy file when it reads, meets its schema and its digest (and, given the
    secret, its HMAC) holds; None otherwise: what `diff` compares (verify names the failures)."""
    scratch = VerifyReport(str(out_dir), "folder", secret is not None)
    _, doc = check_policy_file(out_dir, secret, scratch)
    if doc is None or any(not f.ok and f.kind in (DIGEST, HMAC) for f in scratch.findings):
        return None
    return doc


def _proof(doc: dict[str, Any], secret: Secret | None, report: VerifyReport) -> None:
    proof = doc["proof"]
    digest = proofs.policy_digest(doc)
    report.add(
        NAME,
        proof["digest"] == digest,
        "proof.digest is the record's sha3-256"
        if proof["digest"] == digest
        else f"proof.digest {proof['digest']} is not the record's sha3-256 {digest}",
        DIGEST,
    )
    if secret is None:
        return
    holds = proof_hmac_holds(proof, secret.value)
    report.add(
        NAME,
        holds,
        "proof.hmac holds with REPORT_SIGNING_SECRET"
        if holds
        else "proof.hmac does not hold with REPORT_SIGNING_SECRET",
        HMAC,
    )


def _redecide(
    doc: dict[str, Any], report: VerifyReport, waived: frozenset[int] = frozenset()
) -> None:
    try:
        registry = registry_from_json(doc["registry"])
    except PolicyValueError as exc:
        place = "" if exc.row is None else f"[{exc.row}]"
        report.add(
            NAME,
            False,
            f"registry.limits{place}.{exc.field}: {exc.problem}",
            RULE,
            "policy-registry",
        )
        return
    now = int(datetime.fromisoformat(doc["generatedAt"]).timestamp())
    wrong: list[str] = []
    mislabelled: list[str] = []
    failing: Counter[str] = Counter()
    named: list[str] = []
    for index, item in enumerate(doc["questions"]):
        question = question_from_json(item["state"], item["partner"], item["question"])
        recorded = prediction_from_json(item["expected"])
        predicted = decide(registry, question, now)
        where = f"questions[{index}] ({item['state']} {item['partner']} {item['kind']})"
        if predicted != recorded:
            wrong.append(f"{where}: expected {_said(recorded)}, the rows give {_said(predicted)}")
        real, shadow = item["real"], item["shadow"]
        kinds = classify(
            predicted,
            real["allowed"],
            real["reason"],
            None if shadow is None else shadow["allowed"],
        )
        if list(kinds) != item["disagreements"]:
            mislabelled.append(
                f"{where}: records {item['disagreements']}, the answers make {list(kinds)}"
            )
        for kind in kinds:
            if SEVERITY[kind] == FAIL and index not in waived:
                failing[kind] += 1
                if len(named) < _NAMED:
                    named.append(f"{KINDS[kind]}: {question_words(item)} ({where})")
    report.add(
        NAME,
        not wrong,
        "every question's expected decision follows from the recorded rows"
        if not wrong
        else "expected decisions that do not follow from the recorded rows: "
        + "; ".join(wrong[:_NAMED]),
        RULE,
        "policy-expected",
    )
    report.add(
        NAME,
        not mislabelled,
        "every question's disagreements are what its answers make"
        if not mislabelled
        else "disagreements not what the answers make: " + "; ".join(mislabelled[:_NAMED]),
        RULE,
        "policy-disagreements",
    )
    for line in named:
        report.add(NAME, False, f"recorded disagreement {line}", RECORDED)
    for kind, count in failing.items():
        report.add(NAME, False, f"recorded disagreement: {count} {KINDS[kind]}", RECORDED)
    if not doc["asked"]:
        report.notes.append(f"{NAME}: {doc['summary']['label']}")
    report.add(NAME, True, "policy questions re-decided", RECORDED)


def _said(prediction: Prediction) -> str:
    shown = prediction_json(prediction)
    return f"{'allowed' if shown['allowed'] else 'blocked'} by {shown['rule']}"
