"""The bake, end to end: inputs checked, snapshot built, every file validated, then written.

Order matters for the promise that bad input writes nothing: the clock, the secret, the
fixtures and (with `--deep-audit`) the plays file are checked and audited first; the snapshot
is built (a typed `Snapshot`, and its JSON, made once), validated against its schema and
rendered in memory; only then does `publish` touch `out/`. With an Ed25519 signing key, the
attestation is signed over the rendered bytes and published with them; without one, an earlier
bake's attestation is removed in the same publish (it would no longer match).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from compliance_bake.clock import iso_millis, resolve_now
from compliance_bake.errors import (
    EXIT_CHECK_FAILED,
    EXIT_INTERNAL,
    EXIT_NOTHING_CHECKED,
    EXIT_OK,
    BakeError,
    InputError,
)
from compliance_bake.inputs import schemas
from compliance_bake.inputs.fixtures import load_service_policy
from compliance_bake.inputs.models import Fixtures
from compliance_bake.inputs.registry_source import read_registry, recorded_source
from compliance_bake.log.append import OUT_FILES, LogTarget, log_snapshot, prepare_log
from compliance_bake.progress import Phases, ProgressSink, no_phases
from compliance_bake.report import layout
from compliance_bake.report.disagreements import RowKind, failing
from compliance_bake.report.models import DeepAudit, JsonObject, Proof, Snapshot
from compliance_bake.report.policy import PolicyRecord, run_policy
from compliance_bake.report.portal import SAMPLE_LIMIT, bake_facts
from compliance_bake.report.portal_previous import (
    PreviousComparison,
    PreviousRecord,
    require_attestation,
)
from compliance_bake.report.publish import publish
from compliance_bake.report.row_kinds import snapshot_violation, state_totals
from compliance_bake.report.snapshot import BakeSettings, build_snapshot
from compliance_bake.signing.attestation import ATTESTATION_FILE, render_attestation
from compliance_bake.signing.proofs import reseal_integrity, seal_policy
from compliance_bake.signing.secret import require_secret
from compliance_bake.signing.signing_key import resolve_signing_key
from compliance_bake.targets.engine import Engine
from compliance_bake.targets.inprocess import InProcessTarget
from compliance_bake.targets.interface import Target
from compliance_bake.waivers.apply import FIELD, Applied, applied_to, record_json
from compliance_bake.waivers.read import WaiverFile, read_waivers

if TYPE_CHECKING:
    from compliance_bake.audit.engines.interface import EngineOptions, PlaysOptions
    from compliance_bake.audit.result import ZipWindowResult
    from compliance_bake.policy.model import PolicyRegistry
    from compliance_bake.signing.secret import Secret
    from compliance_bake.signing.signing_key import SigningKey


class ReportInvalid(BakeError):
    """The report failed its own schema: a bug in the baker, never the user's input."""

    exit_code = EXIT_INTERNAL


@dataclass(frozen=True, slots=True)
class Logged:
    """Where `--log` appended the snapshot: the log folder, the entry's index, the new size."""

    directory: Path
    index: int

    @property
    def size(self) -> int:
        return self.index + 1

    def to_json(self) -> JsonObject:
        return {"dir": str(self.directory), "index": self.index, "size": self.size}


@dataclass(frozen=True, slots=True)
class BakeResult:
    snapshot: Snapshot
    written: list[Path]
    out_dir: Path
    attestation_key_id: str | None = None
    # With --deep-audit: violations by reason (every reason, zeros included), for the summaries.
    violations_by_reason: dict[str, int] | None = None
    # With --previous: the record of the comparison that the attestation's predicate holds.
    previous: PreviousRecord | None = None
    # With --log: where the entry went.
    log: Logged | None = None
    # With --deep-audit: the audit itself, whose violating plays the failure reports name.
    deep_audit: ZipWindowResult | None = None
    # With --deep-audit: whether an empty window (no play in it) is accepted as a pass.
    allow_empty_window: bool = False
    # The policy's questions and their disagreements (report/policy.py).
    policy: PolicyRecord | None = None
    # With --waivers: each waiver with what it matched, and the failing items left.
    waivers: Applied | None = None

    @property
    def ok(self) -> bool:
        """Every integrity check holds, no shadow row disagrees (report/disagreements.py) and no
        policy question fails (report/policy.py); with --waivers, no failing item is left that
        an unexpired waiver does not waive (waivers/apply.py: integrity is never waived)."""
        if self.waivers is not None:
            return self.snapshot.integrity.holds and not self.waivers.unwaived
        found = failing(self.snapshot.shadow.disagreements)
        policy_fails = self.policy is not None and bool(self.policy.failing())
        return self.snapshot.integrity.holds and not found and not policy_fails

    @property
    def exit_code(self) -> int:
        """The run's exit code, decided once, here, before any output is written: every report,
        `--json` and the process exit read it. A deep audit that checked no play is exit 5 by
        the audit's own decision (audit/report.exit_code), as for `audit deep`."""
        if not self.ok:
            return EXIT_CHECK_FAILED
        if self.deep_audit is None:
            return EXIT_OK
        from compliance_bake.audit.report import exit_code

        return exit_code(self.deep_audit, self.allow_empty_window)

    @property
    def nothing_audited(self) -> str | None:
        """The message when the deep audit checked no play and that is not allowed, else None."""
        if self.deep_audit is None or self.exit_code != EXIT_NOTHING_CHECKED:
            return None
        from compliance_bake.audit.report import empty_window_message

        return empty_window_message(self.deep_audit)

    def summary(self) -> JsonObject:
        """What `bake snapshot --json` prints (and the JSON report's details)."""
        snap = self.snapshot
        board, shadow = snap.board, snap.shadow
        return {
            "ok": self.exit_code == EXIT_OK,
            "exitCode": self.exit_code,
            "generatedAt": snap.generated_at,
            "out": str(self.out_dir),
            "files": [str(p) for p in self.written],
            "enhancements": {
                "passed": board.passed,
                "total": board.total,
                "failed": [row.feature for row in board.rows if not row.match],
            },
            "shadow": {
                "rows": len(shadow.rows),
                **shadow.summary.to_json(),
                "sources": dict(shadow.sources or {}),
                "disagreements": dict(shadow.disagreements or {}),
            },
            "integrity": [check.to_json() for check in snap.integrity.checks],
            "attestation": (
                None
                if self.attestation_key_id is None
                else {"file": ATTESTATION_FILE, "keyId": self.attestation_key_id}
            ),
            "previous": None if self.previous is None else previous_summary(self.previous),
            "log": None if self.log is None else self.log.to_json(),
            **(
                {}
                if self.waivers is None
                else {"waivers": self.waivers.summary(self.exit_code == EXIT_OK)}
            ),
        }


def previous_summary(record: PreviousRecord) -> JsonObject:
    """What `--previous` compared against and the changes per class (the decisions themselves
    are on the portal page and in the attestation; `compliance-bake diff` lists them all)."""
    return {
        "source": record.source,
        "generatedAt": record.generated_at,
        "authenticated": record.authenticated,
        "checked": record.checked,
        "counts": dict(record.counts),
        "decisionsTotal": record.decisions_total,
    }


def validate_documents(
    document: JsonObject, kinds: Counter[RowKind], partners: Iterable[str], policy: JsonObject
) -> None:
    """Validate what will be written, before anything is.

    The registry files hold the snapshot's own `enhancements` and `shadow` objects, and their
    schemas are the snapshot schema's `$defs` by reference (tests/inputs/test_schemas.py holds
    them to that), so validating the snapshot validates all three documents; its shadow rows
    are asked of their kinds and partners (row_kinds.snapshot_violation, as `verify` asks
    them). The policy record follows, against its own schema.
    """
    for file, what, problem in (
        (layout.API_FILE, "report", snapshot_violation(document, kinds, partners)),
        (layout.POLICY_FILE, "record", schemas.first_violation(schemas.POLICY, policy)),
    ):
        if problem is not None:
            raise ReportInvalid(
                f"{file}: the {what} fails its schema at {problem.path}: {problem.message}",
                "this is a bug in compliance-bake; nothing was written",
            )


class _Audited(NamedTuple):
    """With --deep-audit: the deepAudit block, its violations by reason, and the audit."""

    block: DeepAudit
    by_reason: dict[str, int]
    result: ZipWindowResult


def _deep_audit(
    plays: Path | str | None,
    loaded: _Loaded,
    fixtures_dir: Path | str,
    engine: EngineOptions | None,
    plays_options: PlaysOptions | None = None,
) -> _Audited | None:
    """With --deep-audit, the ZIP window over the plays, on the bake's clock and licences."""
    if plays is None:
        return None
    from compliance_bake.audit.report import audit_command, deep_audit_block
    from compliance_bake.audit.zip_window import DEFAULT_DAYS, run_zip_window

    moment, registry = loaded.moment, loaded.fixtures.registry
    audit = run_zip_window(
        plays, registry, moment, DEFAULT_DAYS, engine=engine, plays_options=plays_options
    )
    command = audit_command(
        str(plays), DEFAULT_DAYS, iso_millis(moment), fixtures_dir, options=plays_options
    )
    by_reason = {reason.value: count for reason, count in audit.by_reason.items()}
    return _Audited(deep_audit_block(audit, command), by_reason, audit)


def _waive(
    snapshot: Snapshot,
    document: JsonObject,
    policy: JsonObject,
    file: WaiverFile,
    secret: str,
) -> tuple[Snapshot, Applied]:
    """The waivers applied to the snapshot's rows and the policy's questions, recorded in the
    snapshot's `waivers` field, which the integrity proof is made again to cover."""
    applied = applied_to(file.waivers, document, policy)
    recorded = record_json(file, applied)
    document[FIELD] = recorded
    runtime = snapshot.shadow.proof.bun_version
    sealed = reseal_integrity(document, runtime, snapshot.generated_at, secret)
    integrity = replace(snapshot.integrity, proof=Proof.from_json(sealed))
    document["integrity"] = integrity.to_json()
    return replace(snapshot, integrity=integrity, waivers=recorded), applied


@dataclass(frozen=True, slots=True)
class _Loaded:
    """What the load phase checked before any question is asked, so bad input writes nothing."""

    moment: datetime
    secret: Secret
    signing_key: SigningKey | None
    origin: str | None  # with --log: the origin to append under
    fixtures: Fixtures
    engine_policy: PolicyRegistry  # what the in-process engine answers from
    waivers: WaiverFile | None


def _load(
    fixtures_dir: Path | str,
    now: str | None,
    secret_file: Path | None,
    signing_key_file: Path | None,
    previous: PreviousComparison | None,
    log: LogTarget | None,
    waivers: Path | None,
    service_fixtures_dir: Path | None,
    target: Target | None,
    phases: Phases,
) -> _Loaded:
    """The clock, the secret, the signing key, `--previous`, the log, the registry, the waivers
    and the service's own licences, read and checked in this order (the first bad one refuses)."""
    if service_fixtures_dir is not None and target is not None:  # before anything is read
        raise InputError(
            "--service-fixtures sets the in-process engine's licences, and --target's service "
            "answers from its own database",
            "drop --target to rehearse the drift in process, or drop --service-fixtures",
        )
    phases("load")
    moment = resolve_now(now)
    secret = require_secret(secret_file)
    signing_key = resolve_signing_key(signing_key_file)
    if previous is not None:
        require_attestation(signing_key is not None)
        previous.load()
    origin = None if log is None else prepare_log(log, signing_key)
    fixtures = read_registry(fixtures_dir, () if target is None else target.wager_types)
    waiver_file = None
    if waivers is not None:
        states = [state.code for state in fixtures.registry.states]
        waiver_file = read_waivers(waivers, moment, states)
    engine_policy = fixtures.policy
    if service_fixtures_dir is not None:
        engine_policy = load_service_policy(service_fixtures_dir, fixtures.policy)
    return _Loaded(moment, secret, signing_key, origin, fixtures, engine_policy, waiver_file)


class _Asked(NamedTuple):
    """The matrix phase's answers: the sealed snapshot, its JSON and rows' kinds, the policy's
    questions and their sealed record, and with --waivers what they waived."""

    snapshot: Snapshot
    document: JsonObject
    kinds: Counter[RowKind]
    policy: PolicyRecord
    policy_document: JsonObject
    applied: Applied | None


def _ask(
    loaded: _Loaded,
    target: Target | None,
    console_depth: int,
    audited: _Audited | None,
    progress: ProgressSink | None,
    phases: Phases,
) -> _Asked:
    """The board, the shadow matrix and the policy's questions asked of `target` (closed after;
    without one, the in-process engine), sealed, and with --waivers the waivers applied."""
    block = None if audited is None else audited.block
    settings = BakeSettings(now=loaded.moment, console_depth=console_depth, deep_audit=block)
    when = int(loaded.moment.timestamp())
    target = target or InProcessTarget(Engine(loaded.engine_policy, when))
    phases("matrix")
    stamp = iso_millis(loaded.moment)
    secret = loaded.secret
    try:
        snapshot, document, kinds = build_snapshot(
            loaded.fixtures, target, secret, settings, progress, phases
        )
        policy = run_policy(
            target,
            loaded.fixtures.policy,
            when,
            recorded_source(loaded.fixtures.source),
            stamp,
            progress,
        )
    finally:
        target.close()
    policy_document = policy.to_json(stamp, target.base)
    seal_policy(policy_document, snapshot.shadow.proof.bun_version, stamp, secret.value)
    applied = None
    if loaded.waivers is not None:
        snapshot, applied = _waive(
            snapshot, document, policy_document, loaded.waivers, secret.value
        )
    return _Asked(snapshot, document, kinds, policy, policy_document, applied)


def _write(
    out_dir: Path,
    loaded: _Loaded,
    asked: _Asked,
    audited: _Audited | None,
    previous: PreviousComparison | None,
    log: LogTarget | None,
) -> tuple[list[Path], PreviousRecord | None, Logged | None]:
    """Render every file in memory, sign the attestation over them when there is a key, and
    publish them (with --log, the entry appended once out/ is staged): the files written, the
    sealed `--previous` record and where the log entry went."""
    secret, signing_key = loaded.secret.value, loaded.signing_key
    record = None if previous is None else previous.record(asked.snapshot).sealed(secret)
    key_id = None if signing_key is None else signing_key.key_id
    sample: list[JsonObject] = []  # the first violating plays, as the page carries them
    if audited is not None:
        audit = audited.result
        sample = [play.as_json(audit.line_name) for play in audit.violations[:SAMPLE_LIMIT]]
    files = layout.render_files(
        asked.snapshot,
        record,
        document=asked.document,
        facts=bake_facts(key_id, None if audited is None else audited.by_reason, sample),
        totals=state_totals(asked.kinds),
        policy=asked.policy_document,
    )
    if signing_key is None:
        return publish(out_dir, files, stale=[ATTESTATION_FILE, *OUT_FILES]), record, None
    # Last in the dict, so renamed into place after the files it names.
    record_json = None if record is None else record.to_json()
    files[ATTESTATION_FILE] = render_attestation(files, asked.document, signing_key, record_json)
    if log is None or loaded.origin is None:
        # An earlier bake's proof is not this snapshot's: it goes.
        return publish(out_dir, files, stale=OUT_FILES), record, None
    # The entry appended once out/ is staged, its proof published with it in one swap.
    appended, written = log_snapshot(
        log, loaded.origin, asked.document, files, signing_key, out_dir
    )
    return written, record, Logged(log.directory, appended.index)


def run_bake(
    *,
    fixtures_dir: Path | str,
    out_dir: Path,
    now: str | None,
    secret_file: Path | None,
    console_depth: int,
    progress: ProgressSink | None = None,
    target: Target | None = None,
    deep_audit: Path | str | None = None,
    signing_key_file: Path | None = None,
    phases: Phases = no_phases,
    engine: EngineOptions | None = None,
    previous: PreviousComparison | None = None,
    log: LogTarget | None = None,
    service_fixtures_dir: Path | None = None,
    allow_empty_window: bool = False,
    plays_options: PlaysOptions | None = None,
    waivers: Path | None = None,
) -> BakeResult:
    """Phases, in order: load (clock, secret, fixtures, the deep audit), matrix (the board and
    the shadow matrix), sign, validate, write (render and publish).

    Without a target, the in-process engine answers from `service_fixtures_dir`'s licences when
    given (the service's own database, which may have drifted), else from the fixtures'; the
    shadow and the board's expectations always read the fixtures (the regulator's registry)."""
    loaded = _load(
        fixtures_dir,
        now,
        secret_file,
        signing_key_file,
        previous,
        log,
        waivers,
        service_fixtures_dir,
        target,
        phases,
    )
    audited = _deep_audit(deep_audit, loaded, fixtures_dir, engine, plays_options)
    asked = _ask(loaded, target, console_depth, audited, progress, phases)
    phases("validate")
    partners = (partner.node_id for partner in loaded.fixtures.registry.partners)
    validate_documents(asked.document, asked.kinds, partners, asked.policy_document)
    phases("write")
    written, record, logged = _write(out_dir, loaded, asked, audited, previous, log)
    return BakeResult(
        asked.snapshot,
        written,
        out_dir,
        attestation_key_id=None if loaded.signing_key is None else loaded.signing_key.key_id,
        violations_by_reason=None if audited is None else audited.by_reason,
        previous=record,
        log=logged,
        deep_audit=None if audited is None else audited.result,
        allow_empty_window=allow_empty_window,
        policy=asked.policy,
        waivers=asked.applied,
    )
