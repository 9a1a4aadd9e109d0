"""Reading what `verify` is given, and the checks that only an `out/` folder allows.

A document that cannot be read or parsed (including the strict parser's limits: depth, integer
size) is a failure naming the file, never a crash. The folder checks: every file is one the tool
writes, the JSON files are in the baked byte layout, the registry copies equal the snapshot's
blocks, and the portal page is the rendering of the snapshot.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import TemplateError

from compliance_bake.errors import InputError
from compliance_bake.findings import EXTRA, RULE, Refusal
from compliance_bake.inputs import schemas
from compliance_bake.inputs.files import read_regular_file
from compliance_bake.inputs.jsonio import dumps_pretty
from compliance_bake.log.append import OUT_FILES
from compliance_bake.report import layout
from compliance_bake.report.deepequal import json_equals
from compliance_bake.report.models import Snapshot
from compliance_bake.report.portal import read_facts, render_portal
from compliance_bake.report.row_kinds import Totals
from compliance_bake.signing.attestation import (
    ATTESTATION_FILE,
    ReadAttestation,
    read_attestation,
)
from compliance_bake.targets.fetch import SNAPSHOT_MAX_BYTES
from compliance_bake.verify.document import parse_snapshot_bytes
from compliance_bake.verify.findings import VerifyReport
from compliance_bake.verify.source import (
    SchemaOutcome,
    SnapshotReading,
    plain_violation,
    schema_outcome,
)

# Written by the bake (and the attestation, when a signing key is given) ...
BAKED_FILES = (*layout.JSON_FILES, layout.PORTAL_FILE)
# ... or by `audit deep` into the same out/ (allowed, but no signature of the snapshot covers it).
# ... or by `bake --log`: the log's inclusion proof and checkpoint (they verify on their own).
EXPECTED_FILES = frozenset(
    (*BAKED_FILES, layout.POLICY_FILE, ATTESTATION_FILE, layout.AUDIT_FILE, *OUT_FILES)
)
RawFile = tuple[str, bytes]  # a file's name in out/ and the bytes read


# What `unexpected_files` checks, as the report names it among what was applied.
UNEXPECTED_FILES = "no unexpected files"


def foreign_files(out_dir: Path) -> list[str]:
    """Every entry of out/ that the tool does not write, sorted: a stale temporary file of a
    killed bake, a file someone dropped in, anything a static server would publish. `verify`
    fails on each; `bake snapshot` keeps them (report/publish.py) and warns of each."""
    return sorted(
        name
        for name, path in layout.out_entries(out_dir)
        if name not in EXPECTED_FILES or path.is_symlink() or not path.is_file()
    )


def unexpected_files(out_dir: Path, report: VerifyReport) -> None:
    """Every entry of out/ that the tool does not write (`foreign_files`) is a failure naming it."""
    for name in foreign_files(out_dir):
        report.add(
            name, False, "not a file the tool writes: remove it before publishing out/", EXTRA
        )
    report.add(".", True, "every file of out/ is one the tool writes")
    if (out_dir / layout.AUDIT_FILE).is_file():
        report.notes.append(
            f"{layout.AUDIT_FILE} (written by `audit deep`) is allowed in out/, "
            "but no signature of the snapshot covers it"
        )


def _read(out_dir: Path, name: str) -> bytes:
    return read_regular_file(name, max_bytes=SNAPSHOT_MAX_BYTES, what=name, inside=out_dir)


def read_folder_file(out_dir: Path, name: str, report: VerifyReport) -> bytes | None:
    """A regular file of out/ (a FIFO planted there must not hang verify), or a finding."""
    try:
        return _read(out_dir, name)
    except FileNotFoundError:
        report.add(name, False, "missing")
    except NotADirectoryError:  # a file stands where one of its folders should be
        report.add(name, False, "missing: a file of out/ stands where its folder should be")
    except InputError as exc:
        report.add(name, False, f"cannot read: {exc.message}")
    return None


def schema_finding(name: str, problem: SchemaOutcome, report: VerifyReport) -> bool:
    """A schema is a rule of meaning: its findings count for *compliant*."""
    if isinstance(problem, Refusal):
        return report.add(name, False, f"schema: cannot validate ({problem.message})", RULE)
    if problem is not None:
        what = f"does not match the schema: {plain_violation(problem)}"
        return report.add(name, False, what, RULE, "schema")
    return report.add(name, True, "schema valid", RULE, "schema")


@dataclass(frozen=True, slots=True)
class Folder:
    docs: dict[str, Any]  # each JSON file's document (None: unreadable, or a copy off schema)
    raws: list[RawFile]
    renderings: frozenset[str]  # files whose bytes are `dumps_pretty` of the snapshot or a block


def layout_finding(name: str, same: bool, report: VerifyReport) -> None:
    """Whether a JSON file's bytes are the bake's rendering of its document."""
    report.add(
        name,
        same,
        "bytes are in the baked layout"
        if same
        else "bytes differ from the baked layout (the file was edited after the bake)",
    )


def load_folder(out_dir: Path, report: VerifyReport, reading: SnapshotReading | None) -> Folder:
    """Every JSON file of out/, checked: the snapshot as verify/source.py read it (`reading`;
    None: missing or unreadable, already a finding), then each registry copy, offered the
    snapshot's block to compare its bytes with."""
    docs: dict[str, Any] = {layout.API_FILE: None}
    raws: list[RawFile] = [(layout.API_FILE, b"" if reading is None else reading.raw)]
    renderings: set[str] = set()
    snapshot_valid = False
    if reading is not None:
        if reading.parse_problem is not None:
            report.add(layout.API_FILE, False, reading.parse_problem)
        else:
            snapshot_valid = schema_finding(layout.API_FILE, reading.schema, report)
            layout_finding(layout.API_FILE, reading.in_layout, report)
            docs[layout.API_FILE] = reading.document  # on to the rules even off its schema
            if reading.in_layout:
                renderings.add(layout.API_FILE)
    snap = docs[layout.API_FILE]
    for name, block_name in layout.REGISTRY_BLOCKS.items():
        block = snap.get(block_name) if isinstance(snap, dict) else None
        covered = snapshot_valid and _schema_holds_copy(name)
        docs[name], raw, rendering = load_registry_copy(out_dir, name, report, block, covered)
        raws.append((name, raw))
        if rendering is not None and rendering is block:
            renderings.add(name)
    return Folder(docs, raws, frozenset(renderings))


def load_registry_copy(
    out_dir: Path, name: str, report: VerifyReport, block: Any, covered: bool
) -> tuple[Any | None, bytes, Any]:
    """Read, parse, validate one registry copy and check its byte layout; give its document
    (None: unreadable or off its schema), its bytes, and the value the bytes are the rendering
    of (None: not one).

    `block` is what the copy should hold, the snapshot's block. When the file's bytes are exactly
    the block's rendering, the file holds that very value (the strict parser would read it back,
    equal): the block itself stands for it, unparsed. `covered`: the snapshot passed a schema
    that requires of the block what the copy's schema requires, so that value is valid.
    """
    raw = read_folder_file(out_dir, name, report)
    if raw is None:
        return None, b"", None
    if block is not None and _rendering(block) == raw:
        doc, same = block, True
    else:
        parsed = parse_snapshot_bytes(raw)
        if isinstance(parsed, Refusal):
            report.add(name, False, parsed.message)
            return None, raw, None
        doc, same = parsed
        covered = False
    if covered:
        valid = report.add(name, True, "schema valid", RULE, "schema")
    else:
        valid = schema_finding(name, schema_outcome(layout.JSON_FILES[name], doc), report)
    layout_finding(name, same, report)
    return (doc if valid else None), raw, doc if same else None


def _rendering(value: Any) -> bytes | None:
    try:
        return dumps_pretty(value)
    except TypeError:  # orjson renders no deeper than 254 levels
        return None


@cache
def _schema_holds_copy(copy_name: str) -> bool:
    """Whether a snapshot valid under its schema has a block valid under the copy's schema: the
    copy's schema is only a reference to the snapshot schema's definition of the block, and the
    snapshot schema holds the block to that same definition."""
    block = layout.REGISTRY_BLOCKS[copy_name]
    copy_schema = schemas.schema(layout.JSON_FILES[copy_name])
    snapshot_schema = schemas.schema(layout.JSON_FILES[layout.API_FILE])
    definition = f"#/$defs/{block}"
    return (
        set(copy_schema) <= {"$schema", "$id", "title", "description", "$ref"}
        and copy_schema.get("$ref") == layout.JSON_FILES[layout.API_FILE] + definition
        and snapshot_schema.get("properties", {}).get(block) == {"$ref": definition}
    )


def registry_copies(docs: dict[str, Any], report: VerifyReport) -> None:
    snap = docs.get(layout.API_FILE)
    for copy_name, block in layout.REGISTRY_BLOCKS.items():
        copy = docs.get(copy_name)
        if copy is not None and isinstance(snap, dict):
            original = snap.get(block)
            report.add(
                copy_name,
                same := copy is original or json_equals(copy, original),
                f"registry copy {'equals' if same else 'differs from'} the snapshot's {block}",
            )


def portal_page(
    out_dir: Path,
    snap: Snapshot | dict[str, Any],
    report: VerifyReport,
    previous: Any = None,
    totals: Totals | None = None,
    policy: dict[str, Any] | None = None,
) -> bytes:
    """The page is the rendering of the snapshot (and, after `bake --previous`, of the record
    report/portal_previous.py found and checked: the "since the previous snapshot" section),
    with the facts the page states (report/portal.py: the signer, the audit's detail); the
    signer it names is the attestation's. `totals`: the per-state counts verify made on the
    rules' columns (None: the portal counts them)."""
    raw = read_folder_file(out_dir, layout.PORTAL_FILE, report)
    if raw is None:
        return b""
    facts = read_facts(raw)
    try:
        same = raw == render_portal(snap, previous, totals, facts, policy)
    except (KeyError, TypeError, ValueError, AttributeError, RecursionError, TemplateError):
        same = False  # an edited snapshot the page cannot even render from
    what = "the snapshot" + ("" if previous is None else " and its previous-snapshot record")
    report.add(
        layout.PORTAL_FILE,
        same,
        f"portal page renders {what}"
        if same
        else f"portal page differs from the rendering of {what} (edited after the bake)",
    )
    named, signers = None if facts is None else facts.key_id, _attestation_signers(out_dir)
    if (named not in signers) if signers else named is not None:
        report.add(
            layout.PORTAL_FILE,
            False,
            f"portal page names the signer {named or '(none)'}, the attestation's signers are "
            f"{', '.join(sorted(signers)) or '(none: no attestation)'}",
        )
    return raw


def _attestation_signers(out_dir: Path) -> set[str]:
    """The key ids the attestation's signatures name (unchecked here: the attestation check
    proves them); during a key rotation there are several, and the page names the baking one."""
    read = read_attestation(out_dir)
    if not isinstance(read, ReadAttestation):
        return set()
    return {s.keyid for s in read.signatures if isinstance(s.keyid, str)}
