"""A witness: what a regulator runs on a schedule against an operator's log.

Each run reads the log's checkpoint and checks, in order: its signature with the log's key; that
the tiles of the new entries are the hashes of those entries and that the root is the tiles';
that it extends the checkpoint the witness saw last (kept in the state file): not smaller (a
rollback or a truncation), not a different tree of the same size (a fork), and a consistency
proof computed from the log's tiles that verifies against both roots (nothing rewritten).
Only then does it cosign (C2SP tlog-cosignature, cosignature/v1 with the time) and keep the
cosigned checkpoint as its new state. A failed run leaves the state as it was, so the next run
still compares with the last checkpoint that held.

The state file is JSON: {"version": 1, "origin": ..., "checkpoint": <the cosigned note>}.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from compliance_bake.errors import InputError
from compliance_bake.findings import INFO, Finding, Findings
from compliance_bake.inputs.files import read_if_present
from compliance_bake.inputs.jsonio import StrictJSONError, dumps_pretty, loads_strict
from compliance_bake.log import check, note
from compliance_bake.log.append import Writer
from compliance_bake.log.tiles import Source
from compliance_bake.report.models import JsonObject
from compliance_bake.signing.signing_key import SigningKey

_FIX_STATE = "pass the state file an earlier `witness` run wrote, or a new path to start over"


@dataclass(slots=True)
class WitnessRun(Findings):
    """The checkpoint seen last and the log's current one; the cosigned checkpoint when the
    run holds, else what failed (`failures`)."""

    previous: note.Checkpoint | None = None
    current: note.Checkpoint | None = None
    cosigned: bytes | None = None

    @property
    def ok(self) -> bool:
        return self.cosigned is not None and not self.failures

    def summary(self, location: str) -> JsonObject:
        """The details of `witness`'s reports."""
        return {
            "ok": self.ok,
            "log": location,
            "previous": self.previous.describe() if self.previous else None,
            "current": self.current.describe() if self.current else None,
            "problems": [f.line for f in self.failures],
        }


def default_name(key: SigningKey) -> str:
    return f"compliance-bake-witness/{key.key_id[:16]}"


def load_state(path: Path, log_key: Ed25519PublicKey) -> note.Checkpoint | None:
    raw = read_if_present(path, max_bytes=note.MAX_NOTE_BYTES * 2, what="witness state")
    if raw is None:
        return None
    try:
        doc = loads_strict(raw)
    except StrictJSONError as exc:
        raise InputError(f"{path}: not JSON ({exc})", _FIX_STATE) from None
    if not (
        isinstance(doc, dict) and doc.get("version") == 1 and isinstance(doc.get("checkpoint"), str)
    ):
        raise InputError(f"{path}: not a witness state file", _FIX_STATE)
    signed = check.read_signed(doc["checkpoint"].encode(), str(path), [log_key])
    if isinstance(signed, Finding):
        raise InputError(
            f"{signed.line} (the state file holds a checkpoint of another log?)", _FIX_STATE
        )
    checkpoint: note.Checkpoint = signed.checkpoint
    return checkpoint


def run_witness(
    source: Source,
    log_key: Ed25519PublicKey,
    witness_key: SigningKey,
    name: str,
    state: Path,
    timestamp: int,
) -> WitnessRun:
    run = WitnessRun(previous=load_state(state, log_key))
    # The new entries' tiles first, so that an edited tile is named as such rather than as the
    # consistency proof it breaks.
    start = 0 if run.previous is None else run.previous.size
    recomputed = "the new entries' tiles recomputed, and the root"
    signed, _ = check.checked_tiles(run, source, [log_key], "the log's key", recomputed, start)
    if signed is None:
        return run
    run.current = current = signed.checkpoint
    if not run.failures and run.previous is not None:
        broken = check.consistency_problem(source, run.previous, current)
        run.findings.append(
            broken or Finding("", INFO, f"extends {run.previous.describe()} (consistency proof)")
        )
    if run.failures:
        return run
    cosigned = signed.note.with_signature(
        note.cosign(signed.note.text, name, witness_key.private, timestamp)
    )
    run.cosigned = cosigned.render()
    doc = {"version": 1, "origin": current.origin, "checkpoint": run.cosigned.decode()}
    try:
        Writer(state.parent).write(state.name, dumps_pretty(doc))
    except OSError as exc:
        raise InputError(
            f"cannot write the witness state {state}: {exc.strerror}",
            "pass --state FILE in a writable folder",
        ) from None
    return run
