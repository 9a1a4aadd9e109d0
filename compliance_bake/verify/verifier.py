"""Re-check a snapshot offline: an `out/` folder, a single snapshot file, or a published URL.

Two verdicts (findings.py): *authentic* (digests, HMACs with REPORT_SIGNING_SECRET, an Ed25519
attestation with a public key; for a folder also the byte layout, the registry copies, the portal
page and that no other file is there) and *compliant* (every rule of rules.py, every check the
snapshot records). Without any key material `verify_source` refuses to run unless asked for
digests only: a verifier never says "verified" about something it could not check.

Digests, HMACs and rules are computed on the parsed JSON, so any whitespace and key order
verifies; the byte-layout, registry-copy and portal checks need the folder a bake wrote.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from compliance_bake.errors import InputError
from compliance_bake.inputs import schemas
from compliance_bake.inputs.files import read_regular_file
from compliance_bake.memory import gc_paused
from compliance_bake.progress import Phases, no_phases
from compliance_bake.report import layout
from compliance_bake.signing.secret import Secret
from compliance_bake.targets.fetch import DEFAULT_TIMEOUT, SNAPSHOT_MAX_BYTES, fetch_document
from compliance_bake.verify import beside, files
from compliance_bake.verify.attestation import check_attestation
from compliance_bake.verify.documents import parse_document, schema_valid
from compliance_bake.verify.findings import KEY, VerifyReport
from compliance_bake.verify.previous import previous_record
from compliance_bake.verify.sealed import start_digests
from compliance_bake.verify.snapshot_checks import verify_snapshot

NO_KEY_HINT = (
    "give a key: set REPORT_SIGNING_SECRET (or --secret-file / REPORT_SIGNING_SECRET_FILE), or "
    "--public-key PEM for the Ed25519 attestation; or pass --digests-only to check digests and "
    "rules without authenticating"
)
FOLDER_ONLY = ["byte layout", "registry copies", "portal page", "no unexpected files"]
ANY_SOURCE = ["schema", "digests", "HMACs", "rules of the specification", "recorded checks"]


@dataclass(frozen=True, slots=True)
class KeyMaterial:
    secret: Secret | None = None
    public_keys: tuple[bytes, ...] = ()  # PEM SubjectPublicKeyInfo, for the attestation

    @property
    def empty(self) -> bool:
        return self.secret is None and not self.public_keys


@dataclass(frozen=True, slots=True)
class VerifyOptions:
    digests_only: bool = False
    allow_recorded_failures: bool = False
    timeout: float = DEFAULT_TIMEOUT  # URLs only
    max_bytes: int = SNAPSHOT_MAX_BYTES  # URLs only
    phases: Phases = no_phases  # called with read, digests, rules as each starts


def is_url(source: str) -> bool:
    return source.startswith(("http://", "https://"))


def verify_source(
    source: str, keys: KeyMaterial, options: VerifyOptions | None = None
) -> VerifyReport:
    opts = options or VerifyOptions()
    opts.phases("read")
    if keys.empty and not opts.digests_only:
        raise InputError("no key material: nothing can say who signed this snapshot", NO_KEY_HINT)
    kind = "url" if is_url(source) else "folder" if Path(source).is_dir() else "file"
    report = VerifyReport(
        source,
        kind,
        hmac_checked=keys.secret is not None,
        digests_only=opts.digests_only,
        allow_recorded_failures=opts.allow_recorded_failures,
    )
    if kind == "folder":
        with gc_paused():  # what is parsed and built here lives until verify returns
            _verify_folder(Path(source), keys, report, opts.phases)
        return report
    if keys.public_keys and keys.secret is None:
        raise InputError(
            f"{source}: the Ed25519 attestation covers an out/ folder, not a single document",
            "verify the folder with --public-key, or this document with REPORT_SIGNING_SECRET",
        )
    if kind == "url":
        raw = fetch_document(source, timeout=opts.timeout, max_bytes=opts.max_bytes)
    else:
        try:
            raw = read_regular_file(source, max_bytes=opts.max_bytes, what="snapshot")
        except FileNotFoundError:
            raise InputError(
                f"{source}: no such file or folder",
                "pass an out/ folder, a snapshot file or an http(s):// URL",
            ) from None
    report.applied, report.not_applied = _applied(keys), list(FOLDER_ONLY)
    doc = parse_document(source, raw, report)
    if doc is not None:
        schema_valid(source, schemas.SNAPSHOT, doc, report)
        verify_snapshot(source, doc, keys.secret, report, [(source, raw)], opts.phases)
    return report


def _applied(keys: KeyMaterial) -> list[str]:
    if keys.secret is not None:
        return list(ANY_SOURCE)
    return [("HMAC format only (no secret)" if c == "HMACs" else c) for c in ANY_SOURCE]


def verify_out(out_dir: Path, secret: Secret | None) -> VerifyReport:
    """The folder with the HMAC secret alone (or digests only without it): the old entry point."""
    if not out_dir.is_dir():
        raise InputError(
            f"{out_dir}: no such folder",
            "pass the out/ folder of a bake: compliance-bake verify OUT",
        )
    return verify_source(
        str(out_dir), KeyMaterial(secret), VerifyOptions(digests_only=secret is None)
    )


def _verify_folder(
    out_dir: Path, keys: KeyMaterial, report: VerifyReport, phases: Phases = no_phases
) -> None:
    report.applied = [*_applied(keys), *FOLDER_ONLY]
    files.unexpected_files(out_dir, report)
    reads, reader = files.read_files(out_dir, beside.READ_FILES)
    ahead = beside.start(out_dir, reads, reader)  # a large snapshot: its layout in a child
    if ahead is not None:
        ahead.check(report, keys.secret, phases)  # while the child checks the layout
    folder = files.load_folder(out_dir, report, reads, ahead.known() if ahead else None)
    docs, raws = folder.docs, folder.raws
    files.registry_copies(docs, report)
    attested = _attestation(out_dir, keys.public_keys, report) if keys.public_keys else None
    snap = docs[layout.API_FILE]
    if not isinstance(snap, dict):
        report.add(layout.API_FILE, False, "snapshot unreadable: digests, HMACs, rules not checked")
        return
    # hashed beside the portal page and the other files
    digests = ahead.digests if ahead and snap is ahead.value else start_digests(snap)
    record = previous_record(out_dir, snap, keys.secret, attested, report)  # bake --previous
    totals = ahead.totals(snap) if ahead else None  # counted on the columns the rules read
    portal = files.portal_page(out_dir, snap, report, record, reads[layout.PORTAL_FILE], totals)
    raws.append((layout.PORTAL_FILE, portal))
    present = [x for x in (files.ATTESTATION_FILE, files.AUDIT_FILE) if (out_dir / x).exists()]
    raws.extend((x, files.read_folder_file(out_dir, x, report, reads[x]) or b"") for x in present)
    renderings = folder.renderings
    rendering = layout.API_FILE if layout.API_FILE in renderings else None
    blocks = renderings - {layout.API_FILE}
    if ahead is not None and ahead.settles((snap, raws, rendering, blocks), report):
        return
    verify_snapshot(
        layout.API_FILE,
        snap,
        keys.secret,
        report,
        raws,
        phases if ahead is None else no_phases,  # with a tail, its phases were shown
        rendering=rendering,
        block_renderings=blocks,
        digests=digests,
    )


def _attestation(out_dir: Path, public_keys: Sequence[bytes], report: VerifyReport) -> bool:
    result = check_attestation(out_dir, public_keys)
    for file, what in result.failures:
        report.add(file, False, f"attestation: {what}", KEY)
    report.add(files.ATTESTATION_FILE, result.ok, "Ed25519 attestation", KEY)
    signer = f"Ed25519 key {result.key_id}" if result.key_id else "Ed25519 (no given key verified)"
    report.signers.append(signer)
    report.applied.append("Ed25519 attestation")
    return result.ok
