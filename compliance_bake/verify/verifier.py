"""Re-check a snapshot offline: an `out/` folder, a single snapshot file, or a published URL.

Two verdicts (findings.py): *authentic* (digests, HMACs with REPORT_SIGNING_SECRET, an Ed25519
attestation with a public key; for a folder also the byte layout, the registry copies, the portal
page, that no other file is there, and the transparency log's proof in `out/log/`, with the log
itself and its witnesses when asked: log/proof.py) and *compliant* (every rule of rules/,
every check the snapshot records). Without any key material `verify_source` refuses to run
unless asked for digests only: a verifier never says "verified" about something it could not
check.

Digests, HMACs and rules are computed on the parsed JSON, so any whitespace and key order
verifies; the byte-layout, registry-copy and portal checks need the folder a bake wrote.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compliance_bake.errors import InputError, TargetError
from compliance_bake.findings import EXTRA, KEY, Finding
from compliance_bake.log.proof import check_folder
from compliance_bake.progress import Phases, no_phases
from compliance_bake.report import layout
from compliance_bake.report.portal_previous import checked_record
from compliance_bake.report.row_kinds import state_totals
from compliance_bake.signing.attestation import ATTESTATION_FILE
from compliance_bake.signing.secret import Secret
from compliance_bake.targets.fetch import SNAPSHOT_MAX_BYTES, is_url, shown_url
from compliance_bake.targets.routes import DEFAULT_TIMEOUT
from compliance_bake.verify import files
from compliance_bake.verify.attestation import (
    AttestationResult,
    check_attestation,
    parse_problems,
)
from compliance_bake.verify.columns import shadow_columns
from compliance_bake.verify.findings import CHECKED, UNCHECKED, VerifyReport
from compliance_bake.verify.policy_file import check_policy_file
from compliance_bake.verify.published import published, published_copy
from compliance_bake.verify.snapshot_checks import verify_snapshot
from compliance_bake.verify.source import (
    NOT_SNAPSHOT_HINT,
    KeyMaterial,
    MissingSnapshot,
    SnapshotReading,
    read_snapshot,
)
from compliance_bake.verify.waivers import check_waivers, waived_questions

__all__ = ["KeyMaterial", "VerifyOptions", "VerifyReport", "verify_out", "verify_source"]

NO_KEY_HINT = (
    "give a key: set REPORT_SIGNING_SECRET (or --secret-file / REPORT_SIGNING_SECRET_FILE), or "
    "--public-key PEM for the Ed25519 attestation; or pass --digests-only to check digests and "
    "rules without authenticating"
)
URL_NOT_SNAPSHOT_HINT = (
    "check that the URL is that of a published snapshot (out/api/compliance.json, or serve's "
    "/api/compliance)"
)
FOLDER_ONLY = [
    "byte layout",
    "registry copies",
    "policy questions re-decided",
    "portal page",
    files.UNEXPECTED_FILES,
]
ANY_SOURCE = ["schema", "digests", "HMACs", "rules of the specification", "recorded checks"]


@dataclass(frozen=True, slots=True)
class VerifyOptions:
    digests_only: bool = False
    allow_recorded_failures: bool = False
    timeout: float = DEFAULT_TIMEOUT  # URLs (the snapshot's, the log's)
    max_bytes: int = SNAPSHOT_MAX_BYTES  # URLs only
    phases: Phases = no_phases  # called with read, digests, rules as each starts
    log_location: str | None = None  # the log itself (DIR or URL), for its latest checkpoint
    witness_keys: tuple[bytes, ...] = ()  # the witnesses' public keys (PEM)
    witness_threshold: int | None = None  # how many must have cosigned; None: all of them


def verify_source(
    source: str, keys: KeyMaterial, options: VerifyOptions | None = None
) -> VerifyReport:
    """The report on `source` (a folder, a file or a URL), with the log's proof last."""
    opts = options or VerifyOptions()
    if is_url(source) and keys.public_keys:
        return _verify_published(source, keys, opts)
    report = _verify(source, keys, opts)
    _log_proof(Path(source), keys, opts, report)
    return report


def _verify_published(source: str, keys: KeyMaterial, opts: VerifyOptions) -> VerifyReport:
    """A URL with a public key: the attestation covers a folder, so the publication is fetched
    into a temporary one (published.py) and verified as a folder, then reported as the URL."""
    with_log = bool(opts.log_location or opts.witness_keys)
    with published_copy(
        source, keys.public_keys, timeout=opts.timeout, max_bytes=opts.max_bytes, with_log=with_log
    ) as folder:
        try:
            report = verify_source(str(folder), keys, opts)
        except NotASnapshot as exc:  # the URL answered it: a fetched source's malformed answer
            raise _answered_no_snapshot(source, exc.why) from None
    published(report, source, with_log)
    return report


def _log_proof(folder: Path, keys: KeyMaterial, opts: VerifyOptions, report: VerifyReport) -> None:
    """OUT/log/, the log and its witnesses (log/proof.py), as findings of the authentic verdict:
    for a folder, and for any other source the log options name (which log/proof.py refuses:
    the log's proof is in an out/ folder)."""
    if report.source_kind != "folder" and not (opts.log_location or opts.witness_keys):
        return
    found = check_folder(
        folder,
        keys.public_keys,
        opts.log_location,
        opts.witness_keys,
        opts.witness_threshold,
        opts.timeout,
    )
    report.extend(found)
    if found.findings:
        report.applied.append(", ".join(found.summary) or "transparency log")


def _verify(source: str, keys: KeyMaterial, opts: VerifyOptions) -> VerifyReport:
    if Path(source).is_dir() and not is_url(source):
        refuse_unless_baked(Path(source))
    if keys.empty and not opts.digests_only:
        raise InputError("no key material: nothing can say who signed this snapshot", NO_KEY_HINT)
    kind = "url" if is_url(source) else "folder" if Path(source).is_dir() else "file"
    report = VerifyReport(
        shown_url(source),
        kind,
        hmac_checked=keys.secret is not None,
        digests_only=opts.digests_only,
        allow_recorded_failures=opts.allow_recorded_failures,
    )
    if kind == "folder":
        _verify_folder(source, keys, report, opts)
        return report
    if keys.public_keys and keys.secret is None:
        raise InputError(
            f"{report.source}: the Ed25519 attestation covers an out/ folder, not a single "
            "document",
            "verify the out/ folder, or the URL of its published api/compliance.json, with "
            "--public-key; or this document with REPORT_SIGNING_SECRET",
        )
    reading = read_snapshot(
        source, keys, timeout=opts.timeout, max_bytes=opts.max_bytes, phases=opts.phases
    )
    why = reading.no_snapshot
    if why is not None:
        raise _answered_no_snapshot(source, why) if kind == "url" else NotASnapshot(source, why)
    report.applied, report.not_applied = _applied(keys), list(FOLDER_ONLY)
    name = report.source
    if reading.parse_problem is not None:
        report.add(name, False, reading.parse_problem)
        return report
    files.schema_finding(name, reading.schema, report)
    applied = check_waivers(name, reading.document, None, report, folder=False)
    verify_snapshot(
        name, reading, keys.secret, report, [(name, reading.raw)], opts.phases, waived=applied
    )
    return report


BAKED_FILES = (
    layout.API_FILE,
    layout.BOARD_FILE,
    layout.SHADOW_FILE,
    layout.PORTAL_FILE,
    ATTESTATION_FILE,
)
BESIDE_SNAPSHOT = tuple(name for name in BAKED_FILES if name != layout.API_FILE)


def _holds_any(folder: Path, names: tuple[str, ...]) -> bool:
    return any(os.path.lexists(folder / name) for name in names)


class NotASnapshot(InputError):
    """A local file, or a folder holding nothing else a bake writes, whose snapshot is not one
    at all (`SnapshotReading.no_snapshot`): bad input, with no verdict (exit 2)."""

    def __init__(self, shown: str, why: str) -> None:
        super().__init__(f"{shown}: not a snapshot: {why}", NOT_SNAPSHOT_HINT)
        self.why = why


def _answered_no_snapshot(url: str, why: str) -> TargetError:
    """A URL whose answer is not a snapshot at all: a fetched source that answered malformed
    data (exit 3), with no verdict."""
    return TargetError(
        f"{shown_url(url)}: the answer is not a snapshot: {why}", URL_NOT_SNAPSHOT_HINT
    )


def refuse_unless_baked(folder: Path) -> None:
    """InputError (exit 2) for a folder that holds no snapshot and no other file a bake writes:
    there is nothing to give a verdict on, so no verdict is given. A folder that holds a bake's
    other files but lost its snapshot is verified, and fails, by what is missing."""
    if not _holds_any(folder, BAKED_FILES):
        raise InputError(
            f"{folder}: holds no snapshot ({layout.API_FILE} is missing, and so is every other "
            "file a bake writes)",
            "pass the --out folder of a bake, a snapshot file or the URL of a published "
            "/api/compliance",
        )


def _applied(keys: KeyMaterial) -> list[str]:
    if keys.secret is not None:
        return list(ANY_SOURCE)
    return [("HMAC format only (no secret)" if c == "HMACs" else c) for c in ANY_SOURCE]


def verify_out(out_dir: Path, secret: Secret | None) -> VerifyReport:
    """The folder with the HMAC secret alone (or digests only without it)."""
    if not out_dir.is_dir():
        raise InputError(
            f"{out_dir}: no such folder",
            "pass the out/ folder of a bake: compliance-bake verify OUT",
        )
    return verify_source(
        str(out_dir), KeyMaterial(secret), VerifyOptions(digests_only=secret is None)
    )


def _read_folder_snapshot(
    source: str, keys: KeyMaterial, report: VerifyReport, opts: VerifyOptions
) -> SnapshotReading | None:
    """The folder's snapshot, read as every command reads one (verify/source.py); a file that is
    missing or cannot be read is a finding (the folder's other checks still run)."""
    try:
        return read_snapshot(source, keys, max_bytes=opts.max_bytes, phases=opts.phases)
    except MissingSnapshot:
        report.add(layout.API_FILE, False, "missing")
    except InputError as exc:
        report.add(layout.API_FILE, False, f"cannot read: {exc.message}")
    return None


def _verify_folder(
    source: str, keys: KeyMaterial, report: VerifyReport, opts: VerifyOptions
) -> None:
    out_dir = Path(source)
    report.applied = [*_applied(keys), *FOLDER_ONLY]
    files.unexpected_files(out_dir, report)
    reading = _read_folder_snapshot(source, keys, report, opts)
    why = None if reading is None else reading.no_snapshot
    if why is not None and not _holds_any(out_dir, BESIDE_SNAPSHOT):  # nothing else to judge
        raise NotASnapshot(str(out_dir / layout.API_FILE), why)
    folder = files.load_folder(out_dir, report, reading)
    docs, raws = folder.docs, folder.raws
    files.registry_copies(docs, report)
    attested = None
    if keys.public_keys:
        authentication = None if reading is None else reading.authentication
        attestation = None if authentication is None else authentication.attestation
        if attestation is None:  # no snapshot to authenticate: the files are checked still
            attestation = check_attestation(out_dir, keys.public_keys)
        attested = _attestation(attestation, report)
    else:
        _unchecked_attestation(out_dir, report)
    snap = docs[layout.API_FILE]
    if reading is None or not isinstance(snap, dict):
        report.add(layout.API_FILE, False, "snapshot unreadable: digests, HMACs, rules not checked")
        return
    record = _previous_record(out_dir, reading, keys, attested, report)  # bake --previous
    typed = reading.typed()  # built once: its rows are the rules' columns, the portal its page
    rows = None if typed is None else typed.shadow.rows
    columns = shadow_columns(snap, rows, reading.kinds if rows is reading.rows else None)
    totals = None if columns is None else state_totals(columns.kinds)
    policy_raw, policy = check_policy_file(
        out_dir, keys.secret, report, lambda doc: waived_questions(snap, doc)
    )
    applied = check_waivers(layout.API_FILE, snap, policy, report, folder=True)
    page = snap if typed is None else typed
    portal = files.portal_page(out_dir, page, report, record, totals, policy)
    raws.append((layout.PORTAL_FILE, portal))
    raws.append((layout.POLICY_FILE, policy_raw))
    present = [x for x in (ATTESTATION_FILE, layout.AUDIT_FILE) if (out_dir / x).exists()]
    raws.extend((x, files.read_folder_file(out_dir, x, report) or b"") for x in present)
    renderings = folder.renderings
    verify_snapshot(
        layout.API_FILE,
        reading,
        keys.secret,
        report,
        raws,
        opts.phases,
        rendering=layout.API_FILE if layout.API_FILE in renderings else None,
        block_renderings=renderings - {layout.API_FILE},
        columns=columns,
        waived=applied,
    )


def _attestation_failures(failures: list[Finding], report: VerifyReport) -> None:
    """The attestation check's failures, each said to be the attestation's (of kind KEY, or
    EXTRA for a file it does not name)."""
    for failure in failures:
        kind = EXTRA if failure.kind == EXTRA else KEY
        report.add(failure.file, False, f"attestation: {failure.what}", kind)


def _unchecked_attestation(out_dir: Path, report: VerifyReport) -> None:
    """Without a public key the attestation's signature cannot be checked: it is named as not
    checked, and one that cannot even be parsed fails."""
    problems = parse_problems(out_dir)
    _attestation_failures(problems, report)
    if not problems and (out_dir / ATTESTATION_FILE).exists():
        report.attestation = UNCHECKED


def _attestation(result: AttestationResult, report: VerifyReport) -> bool:
    report.attestation = CHECKED
    _attestation_failures(result.failures, report)
    if result.ok or not result.failures:  # a failure is named once, by what failed
        report.add(ATTESTATION_FILE, result.ok, "Ed25519 attestation", KEY)
    signer = f"Ed25519 key {result.key_id}" if result.key_id else "Ed25519 (no given key verified)"
    report.signers.append(signer)
    report.applied.append("Ed25519 attestation")
    return result.ok


def _previous_record(
    out_dir: Path,
    reading: SnapshotReading,
    keys: KeyMaterial,
    attested: bool | None,
    report: VerifyReport,
) -> dict[str, Any] | None:
    """The `bake --previous` record the portal is rendered with, after its findings."""
    snap: Any = reading.document
    try:
        own = snap["integrity"]["proof"]["digest"]
    except (KeyError, TypeError):
        own = None
    secret = None if keys.secret is None else keys.secret.value
    checked = checked_record(out_dir, own, secret, attested)
    report.extend(checked)
    return checked.record
